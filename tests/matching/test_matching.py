"""½-approximate matching: Suitor = local max = greedy exactly; red-blue maximal."""

import random
import subprocess
import sys

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nx_gpumatch as gm
from nx_gpumatch import Graph, generators
from nx_gpumatch.cpu import matching as cm
from tests.support.reference import greedy_mate

EXACT_EQUAL = ("suitor", "local_max", "greedy")


reference_greedy = greedy_mate


def graphs_strategy():
    weight = st.one_of(
        st.sampled_from([1.0, 2.0, 3.0, 0.5, 0.0, -1.0]),  # many ties, some unusable
        st.floats(-2, 10, allow_nan=False, allow_infinity=False),
    )
    return st.integers(1, 40).flatmap(
        lambda n: st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), weight), max_size=4 * n
        ).map(
            lambda es: Graph.from_arrays(
                np.array([e[0] for e in es], np.int64),
                np.array([e[1] for e in es], np.int64),
                [e[2] for e in es],
                num_nodes=n,
            )
        )
    )


@settings(max_examples=200, deadline=None)
@given(graphs_strategy())
def test_all_equal_reference_greedy(g):
    ref = reference_greedy(g)
    for algo in EXACT_EQUAL:
        for t in (1, 2):
            mate = gm.max_weight_matching(g, algorithm=algo, threads=t)
            assert mate.tolist() == ref, (algo, t)


@pytest.mark.parametrize(
    "make",
    [
        lambda: generators.random_graph(20_000, 100_000, seed=1),
        lambda: generators.random_graph(20_000, 100_000, seed=2, weights="integer"),
        lambda: generators.rmat(14, 6, "g500", seed=3),
        lambda: generators.rmat(13, 8, "ssca", seed=4, weights="integer"),
        lambda: generators.random_geometric(20_000, seed=5),
        lambda: generators.delaunay(20_000, seed=6),
    ],
    ids=["random", "random-int", "rmat-g500", "rmat-ssca-int", "rgg", "delaunay"],
)
def test_generated_graphs_equal_greedy(make, nthreads):
    g = make()
    ref = cm.greedy(
        g.num_nodes, g.edge_src, g.edge_dst, g.edge_order(), int((g.edge_weight > 0).sum())
    )
    assert np.array_equal(gm.max_weight_matching(g, algorithm="suitor"), ref)
    assert np.array_equal(gm.max_weight_matching(g, algorithm="local_max"), ref)
    assert gm.is_matching(g, ref)
    # Greedy is maximal on the positive-weight edges.
    pos = Graph(
        g.num_nodes,
        g.edge_src[g.edge_weight > 0],
        g.edge_dst[g.edge_weight > 0],
        g.edge_weight[g.edge_weight > 0],
    )
    assert gm.is_matching(pos, ref, maximal=True)


def test_suitor_repeated_runs_identical():
    g = generators.rmat(12, 16, "g500", seed=9, weights="integer")
    first = gm.max_weight_matching(g, algorithm="suitor", threads=2)
    for _ in range(10):
        assert np.array_equal(gm.max_weight_matching(g, algorithm="suitor", threads=2), first)


@settings(max_examples=100, deadline=None)
@given(graphs_strategy())
def test_suitor_parallel_build_small_graphs(g):
    # The parallel build on small graphs: one-vertex blocks, both threads proposing
    # at once, displaced vertices queued.
    from nx_gpumatch import cpu

    with cpu.threads(2), cpu.parallel_min(0):
        assert gm.max_weight_matching(g, algorithm="suitor").tolist() == reference_greedy(g)


@pytest.mark.parametrize("seed", [0, 1])
def test_suitor_weights_equal_in_coarse_key(seed, nthreads):
    # Weights that differ only below the top 32 bits of their pattern (and exact
    # ties) are ordered by the exact lookup, never by the coarse key alone.
    rng = np.random.default_rng(seed)
    g0 = generators.random_graph(3000, 24_000, seed=seed)
    w = 1.0 + rng.integers(0, 5, g0.num_edges) * 2.0**-40
    g = Graph.from_arrays(g0.edge_src, g0.edge_dst, w, num_nodes=g0.num_nodes)
    assert np.array_equal(gm.max_weight_matching(g, algorithm="suitor"), reference_greedy(g))


@settings(max_examples=100, deadline=None)
@given(graphs_strategy(), st.integers(0, 2**64 - 1), st.sampled_from(["weighted", "random"]))
def test_red_blue_maximal_and_reproducible(g, seed, select):
    mates = [
        gm.max_weight_matching(g, algorithm="red_blue", seed=seed, select=select, threads=t)
        for t in (1, 2)
    ]
    assert np.array_equal(mates[0], mates[1])
    keep = g.edge_weight > 0
    pos = Graph(g.num_nodes, g.edge_src[keep], g.edge_dst[keep], g.edge_weight[keep])
    assert gm.is_matching(pos, mates[0], maximal=True)


def test_red_blue_seed_forms():
    g = generators.random_graph(2000, 8000, seed=0)
    a = gm.max_weight_matching(g, algorithm="red_blue", seed=42)
    b = gm.max_weight_matching(g, algorithm="red_blue", seed=random.Random(7))
    assert gm.is_matching(g, a, maximal=True) and gm.is_matching(g, b, maximal=True)
    assert np.array_equal(a, gm.max_weight_matching(g, algorithm="red_blue", seed=42))


@settings(max_examples=60, deadline=None)
@given(graphs_strategy())
def test_half_approximation(g):
    keep = g.edge_weight > 0
    G = nx.Graph()
    G.add_weighted_edges_from(
        zip(g.edge_src[keep].tolist(), g.edge_dst[keep].tolist(), g.edge_weight[keep].tolist())
    )
    opt = sum(G[u][v]["weight"] for u, v in nx.max_weight_matching(G))
    got = gm.matching_weight(g, gm.max_weight_matching(g, algorithm="suitor"))
    assert got >= 0.5 * opt - 1e-9


# ------------------------------------------------------------- networkx I/O
def _weighted_nx(n=60, m=200, seed=0):
    G = nx.gnm_random_graph(n, m, seed=seed)
    rng = random.Random(seed)
    for u, v in G.edges:
        G[u][v]["weight"] = rng.choice([1, 2, 3, 2.5])
    return nx.relabel_nodes(G, {i: f"v{i}" for i in G})


@pytest.mark.parametrize("algo", EXACT_EQUAL + ("red_blue",))
def test_dispatch_returns_python_label_pairs(algo):
    assert "gpumatch" in nx.utils.backends.backends
    G = _weighted_nx()
    M = nx.max_weight_matching(G, backend="gpumatch", algorithm=algo)
    assert isinstance(M, set)
    for u, v in M:
        assert type(u) is str and type(v) is str
    assert nx.is_matching(G, M)
    if algo != "red_blue":
        expect = gm.max_weight_matching(G, algorithm="greedy")
        assert {frozenset(e) for e in M} == {frozenset(e) for e in expect}
    else:
        assert nx.is_maximal_matching(G, M)


def test_dispatch_int_labels_are_python_ints():
    G = nx.path_graph(6)
    M = nx.max_weight_matching(G, backend="gpumatch", algorithm="suitor")
    assert all(type(x) is int for e in M for x in e)
    assert {frozenset(e) for e in M} == {frozenset((0, 1)), frozenset((2, 3)), frozenset((4, 5))}


def test_maximal_matching_ignores_weights():
    G = nx.path_graph(5)
    for u, v in G.edges:
        G[u][v]["weight"] = u + 1  # would make (1, 2) and (3, 4) the greedy pick
    nx.max_weight_matching(
        G, backend="gpumatch", algorithm="suitor"
    )  # caches a weighted conversion
    M = nx.maximal_matching(G, backend="gpumatch")
    assert {frozenset(e) for e in M} == {frozenset((0, 1)), frozenset((2, 3))}
    assert nx.is_maximal_matching(G, M)
    assert {frozenset(e) for e in gm.maximal_matching(G)} == {frozenset((0, 1)), frozenset((2, 3))}


def test_approximate_never_by_default():
    # Without algorithm= the answer is exact: here greedy takes (1, 2) and loses.
    G = nx.Graph([(0, 1, {"weight": 2}), (1, 2, {"weight": 3}), (2, 3, {"weight": 2})])
    M = nx.max_weight_matching(G, backend="gpumatch")
    assert sum(G[u][v]["weight"] for u, v in M) == 4
    greedy = nx.max_weight_matching(G, backend="gpumatch", algorithm="greedy")
    assert {frozenset(e) for e in greedy} == {frozenset((1, 2))}


def test_dataframe_in_dataframe_out():
    df = pd.DataFrame(
        {"a": ["p", "q", "r", "s"], "b": ["q", "r", "s", "p"], "w": [1.0, 5.0, 1.0, 2.0]}
    )
    out = gm.max_weight_matching(df, weight="w", algorithm="suitor", source="a", target="b")
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["a", "b", "w"]
    got = {(frozenset((r.a, r.b)), r.w) for r in out.itertuples()}
    assert got == {(frozenset("qr"), 5.0), (frozenset("ps"), 2.0)}
    assert gm.is_matching(df, out, weight="w", source="a", target="b")


def test_graph_in_mate_out_and_validity_checker():
    g = generators.random_graph(500, 2000, seed=4)
    mate = gm.max_weight_matching(g, algorithm="suitor")
    assert mate.dtype == np.int64 and mate.shape == (500,)
    assert gm.is_matching(g, mate)
    bad = mate.copy()
    u = int(np.flatnonzero(bad >= 0)[0])
    bad[u] = -1  # partner still points at u
    assert not gm.is_matching(g, bad)
    G = g.to_networkx()
    assert not gm.is_matching(G, {(0, 1), (1, 2)})


def test_mate_dicts_are_matchings_as_in_networkx():
    B = nx.complete_bipartite_graph(3, 3)
    M = gm.maximum_bipartite_matching(B)  # a dict, both directions
    assert gm.is_matching(B, M) and nx.is_matching(B, M)
    assert gm.matching_weight(B, M) == 3.0
    assert gm.is_matching(B, {0: 3})
    assert not gm.is_matching(B, {0: 3, 3: 0, 1: 3})  # 3 twice
    assert not gm.is_matching(B, {0: 1})  # not an edge


def test_weight_none_means_unit_weights_for_every_input():
    G = nx.path_graph(4)
    nx.set_edge_attributes(G, {(0, 1): 1, (1, 2): 5, (2, 3): 1}, "weight")
    g = Graph.from_networkx(G)
    both = np.array([1, 0, 3, 2])
    for H in (g, nx.to_scipy_sparse_array(G)):
        assert gm.max_weight_matching(H).tolist() == [-1, 2, 1, -1]
        assert gm.max_weight_matching(H, weight=None).tolist() == both.tolist()
        assert gm.max_weight_matching(H, weight=None, algorithm="suitor").tolist() == [1, 0, 3, 2]
        assert gm.matching_weight(H, both, weight=None) == 2.0
    assert gm.matching_weight(g, np.array([-1, 2, 1, -1]), weight=None) == 1.0
    assert gm.matching_weight(g, np.array([-1, 2, 1, -1])) == 5.0


def test_errors():
    G = _weighted_nx()
    with pytest.raises(ValueError, match="algorithm"):
        gm.max_weight_matching(G, algorithm="nope")
    with pytest.raises(ValueError, match="maxcardinality"):
        gm.max_weight_matching(G, algorithm="suitor", maxcardinality=True)
    with pytest.raises(nx.NetworkXNotImplemented):
        gm.max_weight_matching(nx.DiGraph([(0, 1)]), algorithm="suitor")
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.max_weight_matching(nx.MultiGraph([(0, 1)]), backend="gpumatch", algorithm="suitor")
    H = nx.Graph([(0, 1, {"weight": float("nan")})])
    with pytest.raises(ValueError, match="finite"):
        gm.max_weight_matching(H, algorithm="suitor")


def test_config_context_and_device_errors():
    cfg = nx.config.backends.gpumatch
    with cfg(threads=1, device="cpu"):
        assert cfg.threads == 1 and cfg.device == "cpu"
        assert gm.max_weight_matching(nx.path_graph(4), algorithm="suitor")
    assert cfg.threads is None and cfg.device == "auto"
    with pytest.raises(ValueError):
        cfg.device = "tpu"
    with pytest.raises(ValueError):
        cfg.threads = 0
    # numpy scalars stand for the numbers they hold; bools do not
    with cfg(
        threads=np.int64(1), gpu_min_edges=np.uint32(5), louvain_coarse_threshold=np.float32(0)
    ):
        assert type(cfg.threads) is int and type(cfg.gpu_min_edges) is int
        assert cfg.louvain_coarse_threshold == 0.0
        assert gm.max_weight_matching(nx.path_graph(4), algorithm="suitor", threads=np.int8(1))
    for bad in (True, np.bool_(True), 1.0):
        with pytest.raises(ValueError):
            cfg.threads = bad
        with pytest.raises(ValueError):
            gm.max_weight_matching(nx.path_graph(4), algorithm="suitor", threads=bad)
    from nx_gpumatch import gpu

    if gpu.available():
        pytest.skip("a GPU is present: device='gpu' would run")
    with pytest.raises(RuntimeError, match="no GPU can be used"):
        gm.max_weight_matching(nx.path_graph(4), algorithm="suitor", device="gpu")
    # auto falls back to the CPU
    assert gm.max_weight_matching(nx.path_graph(4), algorithm="suitor", device="auto")


def test_import_does_not_load_cupy_or_kernels():
    code = "import sys, nx_gpumatch, networkx; assert 'cupy' not in sys.modules; assert 'nx_gpumatch.cpu.matching' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_ignored_seed_warning_points_at_the_callers_line():
    G = nx.path_graph(4)
    for call in (
        lambda: gm.max_weight_matching(G, algorithm="suitor", seed=1),
        lambda: nx.max_weight_matching(G, backend="gpumatch", algorithm="suitor", seed=1),
    ):
        with pytest.warns(UserWarning, match="red_blue") as rec:
            call()
        assert rec[0].filename == __file__
