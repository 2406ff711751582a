"""Hubs on the GPU kernels, in emulation: the row of a star's centre with
100,000 leaves, and a community of 50,000 vertices, are split over a block or
a warp rather than left to one thread, and the results stay the CPU engine's.

The star's launches run on at most 16 blocks (MAX_GRID patched): the kernels
are grid-stride loops, so the result is the same, and the emulation, which
runs every thread of a block as an OS thread, takes seconds instead of a
minute."""

import numpy as np
import pytest

from nx_gpumatch._validation import seed_key
from nx_gpumatch.algorithms.matching import mate_array
from nx_gpumatch.cpu import leiden as cle
from nx_gpumatch.cpu import louvain as cl
from nx_gpumatch.gpu import _strict
from nx_gpumatch.gpu import leiden as gle
from nx_gpumatch.gpu import louvain as gl
from nx_gpumatch.gpu import matching as gm
from nx_gpumatch.gpu._emulate import options
from nx_gpumatch.gpu._launch import get_module, to_host
from nx_gpumatch.gpu.graph import device_graph
from nx_gpumatch.graph import Graph

LEAVES = 100_000


@pytest.fixture(scope="module")
def star():
    rng = np.random.default_rng(0)
    w = 1.0 + rng.permutation(LEAVES) / LEAVES
    return Graph.from_arrays(np.zeros(LEAVES, np.int64), np.arange(1, LEAVES + 1), w)


def _contested_hubs(seed=3):
    """Three hubs of 530 to 1,000 arcs whose leaves also court each other and
    vertices of 17 to 200 arcs, so rows of every width lose live arcs round
    after round (the block's and the warp's compaction)."""
    rng = np.random.default_rng(seed)
    n = 1200
    src, dst = [], []
    for hub, deg in ((0, 1000), (1, 700), (2, 530)):
        src.append(np.full(deg, hub))
        dst.append(rng.choice(np.arange(3, n), deg, replace=False))
    for mid, deg in zip(range(3, 20), rng.integers(17, 200, 17)):
        src.append(np.full(deg, mid))
        dst.append(rng.choice(np.arange(20, n), deg, replace=False))
    src.append(rng.integers(20, n, 3 * n))
    dst.append(rng.integers(20, n, 3 * n))
    src, dst = np.concatenate(src), np.concatenate(dst)
    keep = src != dst
    w = rng.integers(1, 50, keep.sum()).astype(float)
    return Graph.from_arrays(src[keep], dst[keep], w, num_nodes=n)


CASES = [
    ("local_max", {}),
    ("red_blue", {"seed": 11, "select": "weighted"}),
    ("red_blue", {"seed": 12, "select": "random"}),
]


def _engine(kw):
    """The engine's options for the front end's ``kw``: the key the front end
    draws from its seed."""
    return dict(kw, seed=seed_key(kw["seed"])) if "seed" in kw else kw


def _cpu(g, alg, kw):
    return mate_array(g, "greedy" if alg == "local_max" else alg, device="cpu", **kw)


@pytest.mark.parametrize("alg,kw", CASES)
def test_star_with_100k_leaves_equals_cpu(star, alg, kw, monkeypatch):
    monkeypatch.setattr(gm, "MAX_GRID", 16)
    stats = {}
    got = gm.run(star, alg, backend="emulate", stats=stats, **_engine(kw))
    np.testing.assert_array_equal(got, _cpu(star, alg, kw))
    assert got[0] > 0 and got[got[0]] == 0  # the hub is matched
    if alg == "local_max":
        # the hub's row went to ld_candidates_wide in round 0 and, the hub
        # matched, to ld_push_wide
        assert stats["wide_rows"] == 2


@pytest.mark.parametrize("alg,kw", CASES)
def test_contested_hubs_equal_cpu(alg, kw, monkeypatch):
    """On two blocks per launch, so each block and warp also walks several
    rows in turn."""
    monkeypatch.setattr(gm, "MAX_GRID", 2)
    g = _contested_hubs()
    with options(slots=3, timeout=60):
        got = gm.run(g, alg, backend="emulate", **_engine(kw))
    np.testing.assert_array_equal(got, _cpu(g, alg, kw))


def test_rows_are_routed_by_length(star):
    """The hub's row goes to a block in both families, rows of 17 to 512 arcs
    to a warp, short ones to a thread each."""
    g = _contested_hubs()
    deg = np.diff(g.indptr)
    classes = {w: rows for w, _, rows in gm.red_blue_classes(device_graph(g, "emulate"))}
    assert sorted(classes) == [1, 32, gm.BLOCK]
    np.testing.assert_array_equal(classes[gm.BLOCK], [0, 1, 2])
    np.testing.assert_array_equal(classes[32], np.flatnonzero((deg > 16) & (deg <= 512)))
    assert deg[classes[1]].max() <= 16
    # a star: the centre alone on a block
    classes = gm.red_blue_classes(device_graph(star, "emulate"))
    assert [(w, c) for w, c, _ in classes] == [(1, LEAVES), (gm.BLOCK, 1)]
    assert classes[1][2].tolist() == [0]
    stats = {}
    gm.run(g, "local_max", backend="emulate", stats=stats)
    # the three hubs' rows, in round 0 and at most twice a round after
    assert 3 <= stats["wide_rows"] <= 3 + 6 * stats["rounds"]


def test_hub_whose_leaves_marry_elsewhere_equals_cpu():
    """Every leaf of a 1,500-arc hub prefers a pendant partner: round 0
    marries them all, and round 1 moves the hub's head past 1,500 matched
    neighbours, a block at a time (ld_candidates_wide)."""
    leaves = 1500
    idx = np.arange(1, leaves + 1)
    src = np.concatenate([np.zeros(leaves, np.int64), idx])
    dst = np.concatenate([idx, idx + leaves])
    w = np.concatenate([1.0 + idx / leaves, np.full(leaves, 10.0)])
    g = Graph.from_arrays(src, dst, w)
    stats = {}
    got = gm.run(g, "local_max", backend="emulate", stats=stats)
    np.testing.assert_array_equal(got, _cpu(g, "local_max", {}))
    assert got[0] == -1 and stats["rounds"] == 2
    assert stats["wide_rows"] == 2  # the hub's row in both rounds
    assert stats["work"] <= 2 * g.num_nodes + 3 * leaves


# ------------------------------------------------------------------ Leiden
GIANT = 50_000


def _giant_community(seed=7):
    """One community of GIANT vertices (a ring, plus a dense core of 300
    vertices with 20 arcs each), 300 cliques of 5 vertices, and one small
    community around a hub of 60 arcs. Integer weights. Returns (graph,
    communities)."""
    rng = np.random.default_rng(seed)
    ring = np.arange(GIANT)
    core = rng.choice(GIANT, 300, replace=False)
    src = [ring, np.repeat(core, 10)]
    dst = [(ring + 1) % GIANT, rng.choice(core, 3000)]
    comm = [np.zeros(GIANT, np.int32)]
    base = GIANT
    for c in range(300):
        a, b = np.triu_indices(5, 1)
        src.append(base + a)
        dst.append(base + b)
        comm.append(np.full(5, 1 + c, np.int32))
        base += 5
    src.append(np.full(60, base))
    dst.append(base + 1 + np.arange(60))
    src.append(base + 1 + np.arange(59))
    dst.append(base + 2 + np.arange(59))
    comm.append(np.full(61, 301, np.int32))
    src, dst = np.concatenate(src), np.concatenate(dst)
    w = rng.integers(1, 4, src.shape[0]).astype(float)
    w[:GIANT] = 1.0  # the ring's vertices: inner weight 2
    keep = src != dst
    g = Graph.from_arrays(src[keep], dst[keep], w[keep], num_nodes=base + 61)
    return g, np.concatenate(comm)


@pytest.fixture(scope="module")
def giant():
    return _giant_community()


def test_giant_community_is_refined_by_a_warp(giant):
    """The 50,000-vertex community and the hub's small one go to warps, the
    cliques to a thread each."""
    g, comm = giant
    cptr = np.zeros(303, np.int64)
    np.cumsum(np.bincount(comm, minlength=302), out=cptr[1:])
    classes = dict(gle.refine_classes(np, cptr, comm, np.diff(g.indptr)))
    np.testing.assert_array_equal(classes[32], [0, 301])
    np.testing.assert_array_equal(classes[1], np.arange(1, 301))


def test_giant_community_refinement_equals_cpu(giant):
    """CPM refinement (gamma 1e-4: ring vertices, with an inner weight of 2
    against 5 needed, stay alone without looking at their rows; the core's
    and the cliques' vertices merge) equals the CPU's."""
    g, comm = giant
    n = g.num_nodes
    k = np.ones(n)
    a = np.bincount(comm, weights=k, minlength=n)
    order = cle.refinement_order(21, 2, n)
    prio = cl.vertex_order(order, n)[1]
    want = cle.refine(
        g.indptr, g.indices, g.weights, k, comm, a, order, 1e-4, 0.01, np.uint64(21), np.int64(2)
    )
    lev = gl._Level(
        _strict, *map(_strict.asarray, (g.indptr, g.indices, g.weights, g.loop_weight, k))
    )
    kernels = (get_module("louvain", "emulate"), get_module("leiden", "emulate"))
    got = to_host(
        gle.refine(_strict, kernels, lev, *map(_strict.asarray, (comm, prio)), 1e-4, 0.01, 21, 2)
    )
    np.testing.assert_array_equal(got, want)
    giant_parts = np.unique(got[:GIANT]).shape[0]
    assert giant_parts < GIANT - 100  # the giant community's core merged
    assert np.unique(got).shape[0] < n - 1000  # and the cliques
