"""Louvain: networkx's meaning of ``threshold``, fallback to networkx for inputs
the backend cannot cluster as networkx would, and edge cases."""

import decimal
import fractions

import networkx as nx
import numpy as np
import pytest

import nx_gpumatch as gm
from nx_gpumatch import Graph, generators
from nx_gpumatch.algorithms.community import louvain as front
from nx_gpumatch.interface import BackendInterface
from tests.support.reference import summed_graph


# --------------------------------------------------------------- threshold
def test_threshold_is_the_gain_of_a_whole_level():
    """A large threshold ends the method after the level that gains too little;
    it does not cut the sweeps of a level short (networkx's meaning)."""
    g, _ = generators.planted_partition(1000, 20, 8, 3, seed=5, weights="exponential")
    G = g.to_networkx()
    for thr in (0.05, 0.2):
        ours = [gm.louvain_communities(G, threshold=thr, seed=s) for s in range(3)]
        ref = [
            nx.community.louvain_communities(G, threshold=thr, seed=s, backend="networkx")
            for s in range(3)
        ]
        q_ours = np.mean([nx.community.modularity(G, p) for p in ours])
        q_ref = np.mean([nx.community.modularity(G, p) for p in ref])
        assert q_ours >= 0.97 * q_ref, (thr, q_ours, q_ref)
        # as many levels' worth of merging as networkx: community counts alike
        n_ours, n_ref = np.mean([len(p) for p in ours]), np.mean([len(p) for p in ref])
        assert n_ours <= 2 * n_ref + 5, (thr, n_ours, n_ref)
    for thr in (1e-7, 0.05, 0.2):
        lv = list(front.levels(g, threshold=thr, seed=1))
        gains = np.diff([0.0] + [info["modularity"] for _, info in lv])
        gains[0] -= nx.community.modularity(G, [{v} for v in G])
        # every level but the last gained more than the threshold, the last at most
        assert all(x > thr for x in gains[:-1]), (thr, gains)


# ---------------------------------------------------------------- fallback
def _weighted(conv):
    G = nx.karate_club_graph()
    for _, _, d in G.edges(data=True):
        d["weight"] = conv(d["weight"])
    return G


_REFUSED = {
    "negative": (lambda w: -w, "negative"),
    "one-negative": (None, "negative"),
    "decimal": (decimal.Decimal, "Decimal"),
    "fraction": (fractions.Fraction, "Fraction"),
    "bool": (lambda w: w > 3, "bool"),
    "huge-int": (lambda w: w + 2**60, "precision"),
    "numpy-negative": (lambda w: np.float32(-w), "negative"),
}


@pytest.mark.parametrize("case", sorted(_REFUSED))
def test_unsupported_weights_fall_back_to_networkx(case):
    conv, why = _REFUSED[case]
    if conv is None:
        G = nx.karate_club_graph()
        G.add_edge(3, 3, weight=-0.5)  # a negative self-loop is refused too
    else:
        G = _weighted(conv)
    for name in ("louvain_communities", "louvain_partitions"):
        reason = BackendInterface.can_run(name, (G,), {})
        assert isinstance(reason, str) and why in reason, reason
    assert BackendInterface.can_run("louvain_communities", (G,), {"weight": None}) is True
    with pytest.raises(NotImplementedError):
        nx.community.louvain_communities(G, seed=1, backend="gpumatch")
    try:
        expected = nx.community.louvain_communities(G, seed=1, backend="networkx")
    except Exception as exc:  # networkx's own arithmetic may fail (Decimal with floats)
        expected = type(exc)
    old = nx.config.backend_priority
    nx.config.backend_priority = ["gpumatch"]
    try:
        try:
            got = nx.community.louvain_communities(G, seed=1)
        except Exception as exc:
            got = type(exc)
    finally:
        nx.config.backend_priority = old
    assert got == expected


def test_exact_parameters_fall_back():
    G = nx.karate_club_graph()
    reason = BackendInterface.can_run(
        "louvain_communities", (G,), {"resolution": fractions.Fraction(1, 2)}
    )
    assert isinstance(reason, str) and "resolution" in reason
    reason = BackendInterface.can_run(
        "louvain_partitions", (G, "weight", 1, decimal.Decimal("0.1")), {}
    )
    assert isinstance(reason, str) and "threshold" in reason
    assert BackendInterface.can_run("louvain_communities", (G, "weight", 0.5), {}) is True


def test_supported_weights_run_here():
    G = _weighted(lambda w: np.float64(w) / 3)
    assert BackendInterface.can_run("louvain_communities", (G,), {}) is True
    G = _weighted(int)
    assert BackendInterface.can_run("louvain_communities", (G,), {}) is True
    G[0][1]["weight"] = float("nan")  # bad input: a clear error, not a fallback
    assert BackendInterface.can_run("louvain_communities", (G,), {}) is True
    with pytest.raises(ValueError, match="finite"):
        gm.louvain_communities(G)


# -------------------------------------------------------------- edge cases
def _both(G, **kw):
    return (
        gm.louvain_communities(G, seed=3, **kw),
        nx.community.louvain_communities(G, seed=3, backend="networkx", **kw),
    )


def test_trivial_graphs_follow_networkx():
    G = nx.Graph()
    assert _both(G)[0] == _both(G)[1] == []
    assert list(gm.louvain_partitions(G)) == list(nx.community.louvain_partitions(G)) == [[]]
    G.add_node("a")
    ours, ref = _both(G)
    assert ours == ref == [{"a"}]
    G = nx.empty_graph(4)
    ours, ref = _both(G)
    assert sorted(map(sorted, ours)) == sorted(map(sorted, ref))
    G.add_edge(1, 1, weight=3)  # self-loops only: every node alone
    ours, ref = _both(G)
    assert sorted(map(sorted, ours)) == sorted(map(sorted, ref)) == [[0], [1], [2], [3]]
    # isolated vertices stay alone next to a clustered part
    G = nx.complete_graph(5)
    G.add_nodes_from([10, 11])
    ours, ref = _both(G)
    assert sorted(map(sorted, ours)) == sorted(map(sorted, ref))


def test_zero_and_huge_resolution():
    """Resolution 0: no penalty, so every connected component becomes one
    community; a huge resolution keeps every node alone (networkx alike)."""
    G = nx.disjoint_union_all([nx.path_graph(6), nx.cycle_graph(5), nx.star_graph(4)])
    G.add_node(99)
    ours, ref = _both(G, resolution=0)
    assert sorted(map(sorted, ours)) == sorted(map(sorted, ref))
    assert sorted(map(sorted, ours)) == sorted(map(sorted, nx.connected_components(G)))
    ours, ref = _both(G, resolution=1e9)
    assert sorted(map(sorted, ours)) == sorted(map(sorted, ref)) == [[v] for v in sorted(G)]


@pytest.mark.parametrize("shift", [-1000, -600, 500, 1000])
def test_weight_scale_does_not_change_partitions(shift):
    """Modularity does not depend on the weights' scale: weights times 2**shift
    (down to near the smallest normal float, up to near the largest, where
    squared community degrees overflow) give the partitions of the graph
    itself, for Louvain and for Leiden with theta (in weight units) scaled
    alike."""
    g, _ = generators.planted_partition(3000, 20, 8, 4, seed=1)
    h = Graph.from_arrays(
        g.edge_src, g.edge_dst, np.ldexp(g.edge_weight, shift), num_nodes=g.num_nodes
    )
    runs = [
        (gm.louvain_partitions, {}, {}),
        (gm.leiden_partitions, dict(theta=float(np.ldexp(0.01, shift))), dict(theta=0.01)),
    ]
    for run, kw_h, kw_g in runs:
        ours = list(run(h, seed=3, progress=False, **kw_h))
        ref = list(run(g, seed=3, progress=False, **kw_g))
        assert len(ours) == len(ref) > 1
        for a, b in zip(ours, ref):
            assert np.array_equal(a, b)


def test_large_edge_cases_are_quick():
    """Edgeless and self-loop-only graphs with many vertices need no sweeps."""
    import time

    g = Graph.from_arrays(np.arange(200_000), np.arange(200_000), num_nodes=200_000)
    t = time.perf_counter()
    labels = gm.louvain_communities(g, seed=1)
    assert time.perf_counter() - t < 5.0
    assert np.array_equal(np.sort(labels), np.arange(200_000))


def test_thread_count_independent_on_weighted_structure(nthreads):
    """Levels big enough for parallel batches: the same partition on 1 and 2
    threads for a given seed."""
    g, _ = generators.planted_partition(20_000, 40, 9, 7, seed=2)
    got = gm.louvain_communities(g, seed=4)
    ref = gm.louvain_communities(g, seed=4, threads=1)
    assert np.array_equal(got, ref)


@pytest.mark.parametrize("weight", ["weight", None])
def test_multigraph_sums_parallel_edges(weight):
    """A MultiGraph clusters as the Graph with its parallel edges' weights summed
    (networkx's Louvain does the same); edges without the attribute count 1."""
    rng = np.random.default_rng(3)
    M = nx.MultiGraph()
    M.add_nodes_from(range(60))
    for _ in range(400):
        u, v = (int(x) for x in rng.integers(0, 60, 2))
        M.add_edge(u, v, weight=float(rng.uniform(0.5, 2.0)))
    M.add_edge(0, 1)  # no weight attribute: counts 1
    H = summed_graph(M, weight, "w")
    for fn in (gm.louvain_communities, gm.leiden_communities):
        got = fn(M, weight=weight, seed=4)
        want = fn(H, weight="w", seed=4)
        assert got == want
    parts = list(gm.louvain_partitions(M, weight=weight, seed=4))
    assert parts[-1] == gm.louvain_communities(M, weight=weight, seed=4)
