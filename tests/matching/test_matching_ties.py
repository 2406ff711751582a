"""Tie-heavy weights (unit, small integers), where the edge order falls to the
vertex ids: the shortcuts the weights allow (weight_mode), the frontier rounds
of local max (a chain of ties matches one edge per round), the radix edge
order and the id map of the compaction. Every result equals the sorted greedy."""

import time

import numpy as np
import pytest

import nx_gpumatch as gm
from nx_gpumatch import generators as G
from nx_gpumatch.algorithms._compact import Compaction
from nx_gpumatch.cpu import csr
from nx_gpumatch.cpu import matching as M
from nx_gpumatch.graph import Graph
from tests.support.reference import greedy_mate


def _graph(src, dst, w, n):
    return Graph.from_arrays(np.asarray(src), np.asarray(dst), np.asarray(w, float), num_nodes=n)


def path(n, w=1.0):
    return _graph(np.arange(n - 1), np.arange(1, n), np.full(n - 1, w), n)


def ring_lattice(n, k):
    """Each vertex joined to its k nearest on each side: unit weights make
    chains of locally dominant edges as long as the ring."""
    src = np.repeat(np.arange(n), k)
    dst = (src + np.tile(np.arange(1, k + 1), n)) % n
    return _graph(src, dst, np.ones(n * k), n)


def star(leaves):
    return _graph(np.zeros(leaves, int), np.arange(1, leaves + 1), np.ones(leaves), leaves + 1)


def grid(side):
    idx = np.arange(side * side).reshape(side, side)
    src = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    dst = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    return _graph(src, dst, np.ones(src.shape[0]), side * side)


SHAPES = {
    "path": lambda: path(3001),
    "ring_lattice": lambda: ring_lattice(2000, 3),
    "star": lambda: star(2000),
    "grid": lambda: grid(50),
    "chung_lu": lambda: G.chung_lu(3000, 6, 2.3, seed=4, weights="unit"),
    "chung_lu_small_int": lambda: G.chung_lu(3000, 6, 2.3, seed=4, weights="small_int"),
    "watts_strogatz_small_int": lambda: G.watts_strogatz(3000, 6, 0.1, seed=5, weights="small_int"),
}


@pytest.mark.parametrize(
    "w, mode",
    [
        (np.ones(10), M.CONSTANT),
        (np.full(10, 2.5), M.CONSTANT),
        (np.arange(1.0, 11.0), M.EXACT_KEYS),
        (np.array([1.0, 0.0, -3.0, 7.0]), M.EXACT_KEYS),  # non-positive: never used
        (np.array([1.0, 1.0, -0.1]), M.EXACT_KEYS),  # not all one value
        (np.zeros(5), M.EXACT_KEYS),  # one value, but not positive
        (np.array([1.0, 1.0 + 2**-40]), M.GENERAL),  # differ below the top 32 bits
        (np.array([0.1, 0.1]), M.CONSTANT),
        (np.array([0.1, 0.2]), M.GENERAL),
        (np.array([-0.1, 1.0]), M.EXACT_KEYS),  # the inexact weight is not usable
        (np.empty(0), M.EXACT_KEYS),
    ],
)
def test_weight_mode(w, mode):
    assert M.weight_mode(w) == mode


@pytest.mark.parametrize("shape", SHAPES)
def test_every_suitor_mode_equals_the_sorted_greedy(shape, nthreads):
    g = SHAPES[shape]()
    ref = greedy_mate(g)
    mode = M.weight_mode(g.edge_weight)
    modes = [M.GENERAL, mode] if mode != M.CONSTANT else [M.GENERAL, M.EXACT_KEYS]
    for m in modes:
        mate = M.suitor(g.num_nodes, g.indptr, g.indices, g.weights, m)
        assert mate.tolist() == ref, m
    for algo in ("suitor", "local_max", "greedy"):
        assert gm.max_weight_matching(g, algorithm=algo).tolist() == ref, algo


@pytest.mark.parametrize("rounds", ["pull", "push", "either"])
@pytest.mark.parametrize("frontier", [0, 16, 1 << 30])
@pytest.mark.parametrize("shape", SHAPES)
def test_local_max_rounds_and_serial_finish(shape, frontier, rounds, nthreads, monkeypatch):
    """Every round on threads (frontier 0), a mix (16), or all after the first
    one on one thread (1 << 30); rounds that pull, push or choose: the same
    greedy matching."""
    g = SHAPES[shape]()
    monkeypatch.setattr(M, "SERIAL_FRONTIER", frontier)
    if rounds != "either":
        lengths = M._row_lengths
        cost = {"pull": lambda f, p: 1 << 62, "push": lambda f, p: -1}[rounds]
        monkeypatch.setattr(M, "_row_lengths", lambda f, p: (lengths(f, p), cost(f, p))[1])
    sptr, snbr = M.sorted_adjacency(
        g.num_nodes, g.edge_src, g.edge_dst, g.edge_order(), g.num_usable()
    )
    assert M.local_max_rounds(g.num_nodes, sptr, snbr).tolist() == greedy_mate(g)


def test_local_max_on_a_long_chain_of_ties_is_linear():
    """A path of a million vertices whose weights tie but for its last edge
    (so the rounds run, not the sweep of constant weights) matches one edge
    per round of synchronous rounds (half a million rounds over all
    vertices); the frontier rounds read each row O(1) times. Within seconds,
    not hours."""
    n = 1_000_000
    w = np.ones(n - 1)
    w[-1] = 2.0
    g = _graph(np.arange(n - 1), np.arange(1, n), w, n)
    assert M.weight_mode(g.edge_weight) == M.EXACT_KEYS
    t = time.perf_counter()
    mate = gm.max_weight_matching(g, algorithm="local_max")
    took = time.perf_counter() - t
    assert np.array_equal(mate[: n - 1 : 2], np.arange(1, n, 2))
    assert took < 30, took


@pytest.mark.parametrize("shape", [s for s in SHAPES if "small_int" not in s])
def test_constant_weights_sweep_in_id_order(shape, nthreads):
    """One weight for every edge: Suitor, greedy and local max are one sweep
    over the rows as stored, with no edge ranking, no rounds and no
    proposals."""
    g = SHAPES[shape]()
    ref = greedy_mate(g)
    assert M.id_order_sweep(g.num_nodes, g.indptr, g.indices).tolist() == ref
    for w in (1.0, 0.25):
        h = g.with_weights(np.full(g.num_edges, w))
        for algo in ("suitor", "local_max", "greedy"):
            assert gm.max_weight_matching(h, algorithm=algo).tolist() == ref, algo
        assert "order" not in h._cache and "sorted_adjacency" not in h._cache


def test_few_isolated_vertices_are_not_compacted():
    """Renumbering costs a pass over the arcs, and the matchings ranked by the
    edge order spend O(1) on a vertex without edges: a graph with a few
    isolated vertices runs as it is, one with mostly isolated vertices is
    compacted; red-blue, which draws per vertex id, always is. Same results."""
    g = G.chung_lu(3000, 6, 2.3, seed=4, weights="uniform")
    isolated = int(np.count_nonzero(g.indptr[1:] == g.indptr[:-1]))
    assert 0 < isolated < g.indices.shape[0]
    ref = greedy_mate(g)
    for algo in ("suitor", "local_max", "greedy"):
        g.clear_cache()
        assert gm.max_weight_matching(g, algorithm=algo).tolist() == ref
        assert "compact" not in g._cache, algo
    gm.max_weight_matching(g, algorithm="red_blue", seed=1)
    assert "compact" in g._cache
    sparse = _graph([0, 5], [7, 10**6 - 1], [1.0, 2.0], 10**6)
    assert gm.max_weight_matching(sparse, algorithm="suitor")[[0, 7, 5]].tolist() == [
        7,
        0,
        10**6 - 1,
    ]
    assert "compact" in sparse._cache


@pytest.mark.parametrize(
    "w",
    [
        np.ones(200_000),
        np.random.default_rng(0).integers(1, 11, 200_000).astype(float),
        np.random.default_rng(1).integers(-3, 4, 200_000).astype(float),
        np.random.default_rng(2).random(200_000),
        1 + np.random.default_rng(3).integers(0, 3, 200_000) * 2.0**-40,  # groups to fix
        np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 5e-324, -5e-324, 1.0]),
        np.empty(0),
    ],
    ids=["unit", "small_int", "signed_int", "uniform", "fine_ties", "special", "empty"],
)
def test_radix_edge_order_is_the_stable_sort(w, nthreads):
    assert np.array_equal(csr.edge_order(w), np.argsort(-(w + 0.0), kind="stable"))


def test_compaction_maps_ids_like_a_search():
    kept = np.array([2, 3, 7, 11, 40], np.int64)
    ids = np.array([40, 2, 7, 7, 3, 11], np.int64)
    dense = Compaction(50, kept)  # small n: the map
    sparse = Compaction(10**7, kept)  # large n, few ids: the search
    want = np.searchsorted(kept, ids)
    assert dense.index(ids).tolist() == want.tolist() == sparse.index(ids).tolist()
    assert dense.index(ids).dtype == sparse.index(ids).dtype == np.int32


def test_maximal_matching_is_one_pass_over_the_rows(monkeypatch):
    """maximal_matching is greedy on one weight: the sweep, not Suitor's
    proposals (2-6x slower on 2 threads on unit-weight graphs)."""
    g = G.chung_lu(3000, 6, 2.3, seed=4, weights="uniform")
    ref = greedy_mate(g.unweighted())

    def no_suitor(*args, **kw):
        raise AssertionError("Suitor ran")

    monkeypatch.setattr(M, "suitor", no_suitor)
    assert gm.maximal_matching(g, device="cpu").tolist() == ref  # a Graph's: a mate array
    h = g.with_weights(np.full(g.num_edges, 3.0))
    assert gm.max_weight_matching(h, algorithm="suitor", device="cpu").tolist() == ref
