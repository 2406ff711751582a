"""b-matching: b-Suitor, locally dominant and greedy all equal an independent
sorted greedy; the greedy weight is at least half the brute-force optimum."""

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import nx_gpumatch
from nx_gpumatch import Graph, b_matching, is_b_matching
from nx_gpumatch.algorithms.b_matching import ALGORITHMS, b_matching_weight
from nx_gpumatch.generators import random_geometric, random_graph, rmat
from tests.support.reference import greedy_b_matching

# ------------------------------------------------------------ references


reference_greedy = greedy_b_matching


def brute_force_optimum(n, edges, b):
    """Largest total weight of a b-matching, by trying every edge subset (few edges)."""
    best = 0.0
    m = len(edges)
    for mask in range(1 << m):
        load = [0] * n
        total = 0.0
        ok = True
        for i in range(m):
            if mask >> i & 1:
                u, v, w = edges[i]
                load[u] += 1
                load[v] += 1
                if load[u] > b[u] or load[v] > b[v]:
                    ok = False
                    break
                total += w
        if ok and total > best:
            best = total
    return best


def pairs(graph, result):
    s, d = result
    return set(zip(s.tolist(), d.tolist()))


# ------------------------------------------------------------ strategies


@st.composite
def graphs_with_b(draw, max_n=14, max_m=40, weights=(1, 2, 3, 5)):
    n = draw(st.integers(1, max_n))
    m = draw(st.integers(0, max_m))
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    # Few distinct weights force many ties; zero and negative weights are never used.
    w = draw(st.lists(st.sampled_from(weights), min_size=m, max_size=m))
    b = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    g = Graph.from_arrays(
        np.array(src, np.int64), np.array(dst, np.int64), np.array(w, float), num_nodes=n
    )
    return g, b


# ------------------------------------------------------- exact equalities


# Hypothesis tests take the thread count as an argument (fixtures are not reset
# between generated examples).


@pytest.mark.parametrize("threads", [1, 2])
@settings(max_examples=120, deadline=None)
@given(gb=graphs_with_b(weights=(1, 2, 3, 5, 0, -1)))
def test_all_algorithms_equal_greedy(threads, gb):
    g, b = gb
    want = reference_greedy(
        g.num_nodes, g.edge_src.tolist(), g.edge_dst.tolist(), g.edge_weight.tolist(), b
    )
    for alg in ALGORITHMS:
        res = b_matching(g, b, algorithm=alg, threads=threads)
        assert pairs(g, res) == want, alg
        assert is_b_matching(g, res, b)


@pytest.mark.parametrize("threads", [1, 2])
@settings(max_examples=40, deadline=None)
@given(gb=graphs_with_b(max_n=30, max_m=120, weights=(1, 1, 1, 2)))
def test_equal_greedy_heavy_ties_large_b(threads, gb):
    g, b = gb
    b = [x * 3 for x in b]  # often past the degree
    want = reference_greedy(
        g.num_nodes, g.edge_src.tolist(), g.edge_dst.tolist(), g.edge_weight.tolist(), b
    )
    for alg in ALGORITHMS:
        assert pairs(g, b_matching(g, b, algorithm=alg, threads=threads)) == want, alg


@settings(max_examples=60, deadline=None)
@given(graphs_with_b(max_n=8, max_m=12, weights=(1, 2, 3, 4, 7, 10)))
def test_half_approximation(gb):
    g, b = gb
    edges = list(zip(g.edge_src.tolist(), g.edge_dst.tolist(), g.edge_weight.tolist()))
    opt = brute_force_optimum(g.num_nodes, edges, b)
    got = b_matching_weight(g, b_matching(g, b, algorithm="greedy"))
    assert got >= opt / 2 - 1e-9
    assert got <= opt + 1e-9


@pytest.mark.parametrize("alg", ALGORITHMS)
def test_b_one_is_the_matching(nthreads, alg):
    g = random_graph(3000, 12000, seed=3, weights="integer")  # many ties
    mate = nx_gpumatch.max_weight_matching(g, algorithm="suitor")
    want = {(u, int(mate[u])) for u in range(g.num_nodes) if mate[u] > u}
    assert pairs(g, b_matching(g, 1, algorithm=alg)) == want


def _big_graphs():
    yield "random", random_graph(20_000, 100_000, seed=7)
    yield "random-int", random_graph(20_000, 100_000, seed=8, weights="integer")
    yield "rmat", rmat(14, 7, seed=9)  # skewed degrees: long rows, partial sorts
    yield "geometric", random_geometric(21000, seed=10)


@pytest.mark.parametrize(
    "name,g", list(_big_graphs()), ids=lambda x: x if isinstance(x, str) else ""
)
def test_large_graphs(nthreads, name, g):
    assert 60_000 <= g.num_edges <= 140_000
    deg = np.diff(g.indptr)
    rng = np.random.default_rng(0)
    cases = {
        "b3": np.full(g.num_nodes, 3),
        "mixed": rng.integers(0, 6, g.num_nodes),
        "min10deg": np.minimum(10, deg),
        # One huge b makes records variable-sized.
        "one-huge": np.where(np.arange(g.num_nodes) == int(np.argmax(deg)), 10**9, 2),
    }
    for label, b in cases.items():
        want = reference_greedy(
            g.num_nodes, g.edge_src.tolist(), g.edge_dst.tolist(), g.edge_weight.tolist(), b
        )
        for alg in ALGORITHMS:
            got = b_matching(g, b, algorithm=alg)
            assert pairs(g, got) == want, (label, alg)
        assert is_b_matching(g, got, b)


def test_hub_rows_longer_than_a_batch(nthreads):
    # A star plus a ring: the hub's row is sorted in many partial batches.
    n = 3000
    hub = np.zeros(n - 1, np.int64)
    leaves = np.arange(1, n)
    ring_s = np.arange(1, n)
    ring_d = np.r_[np.arange(2, n), 1]
    rng = np.random.default_rng(4)
    src = np.r_[hub, ring_s]
    dst = np.r_[leaves, ring_d]
    g = Graph.from_arrays(src, dst, rng.random(src.size), num_nodes=n)
    for bh in (1, 7, 400, 2999):
        b = np.r_[bh, np.full(n - 1, 2)]
        want = reference_greedy(
            n, g.edge_src.tolist(), g.edge_dst.tolist(), g.edge_weight.tolist(), b
        )
        for alg in ALGORITHMS:
            assert pairs(g, b_matching(g, b, algorithm=alg)) == want, (bh, alg)


# ------------------------------------------------------- inputs / outputs


def _weighted_nx():
    G = nx.Graph()
    G.add_weighted_edges_from(
        [("a", "b", 4), ("b", "c", 3), ("c", "d", 5), ("a", "d", 1), ("a", "c", 2), ("d", "e", 6)]
    )
    G.add_node("z")
    return G


def test_networkx_in_set_out():
    G = _weighted_nx()
    got = b_matching(G, 1)
    assert _norm(got) == {frozenset("de"), frozenset("ab")}
    assert all(type(u) is str for e in got for u in e)
    got2 = b_matching(G, 2)
    assert _norm(got2) == {frozenset(p) for p in ("de", "cd", "ab", "bc")}
    assert is_b_matching(G, got2, 2)
    assert not is_b_matching(G, got2, 1)
    assert b_matching_weight(G, got2) == 18


def _norm(s):
    return {frozenset(e) for e in s}


def test_b_from_dict_and_attribute():
    G = _weighted_nx()
    b = {"a": 2, "b": 0, "c": 1, "d": 3, "e": 1, "z": 4}
    nx.set_node_attributes(G, b, "cap")
    want = _norm(b_matching(G, b))
    assert want == _norm(b_matching(G, "cap"))
    assert all("b" not in e for e in want)
    index = {v: i for i, v in enumerate(G)}
    g = Graph.from_networkx(G)
    ref = reference_greedy(
        g.num_nodes,
        g.edge_src.tolist(),
        g.edge_dst.tolist(),
        g.edge_weight.tolist(),
        [b[v] for v in G],
    )
    assert {frozenset((index[u], index[v])) for u, v in want} == {frozenset(e) for e in ref}


def test_weight_none_and_missing_weight():
    G = nx.path_graph(6)
    G.edges[2, 3]["weight"] = 5
    assert _norm(b_matching(G, 1)) == _norm({(2, 3), (0, 1), (4, 5)})
    # weight=None: all 1, ties by the smaller pair
    assert _norm(b_matching(G, 1, weight=None)) == _norm({(0, 1), (2, 3), (4, 5)})
    # The same for every input kind, a Graph or a matrix included (they hold weights too).
    g = Graph.from_networkx(G)
    A = nx.to_scipy_sparse_array(G)
    for H in (g, A):
        s, d = b_matching(H, 1, weight=None)
        assert (s.tolist(), d.tolist()) == ([0, 2, 4], [1, 3, 5])
        assert b_matching_weight(H, (s, d), weight=None) == 3.0
    assert b_matching_weight(g, (np.array([2]), np.array([3]))) == 5.0


def test_weight_of_an_edge_given_twice_raises():
    G = nx.path_graph(4)
    assert b_matching_weight(G, {(0, 1), (2, 3)}) == 2.0
    with pytest.raises(ValueError, match=r"edge \(3, 2\) appears more than once"):
        b_matching_weight(G, [(0, 1), (2, 3), (3, 2)])


def test_pandas_in_dataframe_out():
    df = pd.DataFrame(
        {"s": ["x", "y", "z", "x"], "t": ["y", "z", "w", "w"], "wt": [3.0, 2.0, 5.0, 1.0]}
    )
    out = b_matching(df, 1, weight="wt", source="s", target="t")
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == ["s", "t", "wt"]
    assert {frozenset(p) for p in zip(out["s"], out["t"])} == {frozenset("zw"), frozenset("xy")}
    assert out["wt"].sum() == 8.0
    assert is_b_matching(df, out, 1, weight="wt", source="s", target="t")
    out2 = b_matching(df, {"x": 2, "y": 2, "z": 2, "w": 2}, weight="wt", source="s", target="t")
    assert len(out2) == 4


def test_graph_and_scipy_in_arrays_out():
    g = random_graph(200, 800, seed=1)
    s, d = b_matching(g, 2)
    assert s.dtype == np.int32 and d.dtype == np.int32
    assert np.all(s < d)
    keys = s.astype(np.int64) * g.num_nodes + d
    assert np.all(np.diff(keys) > 0)
    A = sp.coo_array((g.edge_weight, (g.edge_src, g.edge_dst)), shape=(200, 200))
    s2, d2 = b_matching(A, 2)
    assert np.array_equal(s, s2) and np.array_equal(d, d2)
    assert is_b_matching(g, (s, d), 2)
    assert not is_b_matching(g, (s, d), 1)
    assert not is_b_matching(g, (np.r_[s, s[:1]], np.r_[d, d[:1]]), 10)  # repeated edge
    assert not is_b_matching(g, (np.array([0]), np.array([0])), 1)  # self-loop


def test_is_b_matching_rejects_non_edges():
    G = _weighted_nx()
    assert not is_b_matching(G, {("a", "e")}, 3)
    assert not is_b_matching(G, {("a", "nobody")}, 3)
    assert is_b_matching(G, set(), 0)


def test_b_zero_and_no_positive_edges():
    g = random_graph(100, 300, seed=2)
    s, _ = b_matching(g, 0)
    assert s.size == 0
    h = Graph.from_arrays(np.array([0, 1]), np.array([1, 2]), np.array([0.0, -2.0]))
    for alg in ALGORITHMS:
        assert b_matching(h, 5, algorithm=alg)[0].size == 0
    empty = Graph.from_arrays(np.array([], np.int64), np.array([], np.int64), num_nodes=0)
    assert b_matching(empty, 3)[0].size == 0


# ------------------------------------------------------------- bad input


@pytest.mark.parametrize("b", [-1, 2.5, 2.0, True, "3", None, [1, 2], np.float64(1.0)])
def test_bad_b_values(b):
    G = nx.path_graph(4)
    with pytest.raises(ValueError, match="b"):
        b_matching(G, b)


def test_bad_b_dicts_and_attributes():
    G = nx.path_graph(3)
    with pytest.raises(ValueError, match="no entry for node 2"):
        b_matching(G, {0: 1, 1: 1})
    with pytest.raises(ValueError, match="not in the graph"):
        b_matching(G, {0: 1, 1: 1, 2: 1, 7: 1})
    with pytest.raises(ValueError, match="non-negative"):
        b_matching(G, {0: 1, 1: -2, 2: 1})
    with pytest.raises(ValueError, match="non-negative integer"):
        b_matching(G, {0: 1, 1: 0.5, 2: 1})
    nx.set_node_attributes(G, {0: 1, 1: 2}, "cap")
    with pytest.raises(ValueError, match="node 2 has no attribute 'cap'"):
        b_matching(G, "cap")
    with pytest.raises(ValueError, match="networkx graph"):
        b_matching(random_graph(10, 20), "cap")
    with pytest.raises(ValueError, match="one value per vertex"):
        b_matching(random_graph(10, 20), [1, 2, 3])
    with pytest.raises(ValueError, match="non-negative"):
        is_b_matching(G, set(), -1)


def test_bad_graphs_and_options():
    with pytest.raises(nx.NetworkXNotImplemented, match="directed"):
        b_matching(nx.DiGraph([(0, 1)]), 1)
    with pytest.raises(nx.NetworkXNotImplemented, match="multigraph"):
        b_matching(nx.MultiGraph([(0, 1)]), 1)
    with pytest.raises(ValueError, match="algorithm"):
        b_matching(nx.path_graph(3), 1, algorithm="suitor")
    G = nx.path_graph(3)
    G.edges[0, 1]["weight"] = "heavy"
    with pytest.raises(ValueError, match="weight"):
        b_matching(G, 1)


def test_gpu_request_without_gpu_is_clear():
    from nx_gpumatch import gpu

    if gpu.available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="GPU"):
        b_matching(nx.path_graph(3), 1, device="gpu")


def test_brute_force_reference_is_sane():
    # Triangle with b = 2 everywhere: the optimum takes all three edges.
    edges = [(0, 1, 1.0), (1, 2, 2.0), (0, 2, 3.0)]
    assert brute_force_optimum(3, edges, [2, 2, 2]) == 6.0
    assert brute_force_optimum(3, edges, [1, 1, 1]) == 3.0
    # Greedy can be half: path a-b-c-d with middle edge heaviest by epsilon.
    path = [(0, 1, 1.0), (1, 2, 1.0 + 1e-9), (2, 3, 1.0)]
    assert brute_force_optimum(4, path, [1, 1, 1, 1]) == 2.0


# ------------------------------------------------------------------- CLI


def test_cli_subcommand(tmp_path, capsys):
    import argparse

    from nx_gpumatch.cli.b_matching import add_command

    parser = argparse.ArgumentParser()
    add_command(parser.add_subparsers(dest="command"))
    out = tmp_path / "bm.csv"
    args = parser.parse_args(
        [
            "b-matching",
            "-n",
            "500",
            "-m",
            "3000",
            "--b",
            "2",
            "--check",
            "--no-progress",
            "--device",
            "cpu",
            "-o",
            str(out),
        ]
    )
    assert args.func(args) == 0
    text = capsys.readouterr().out
    assert "valid: True" in text and "equal to greedy: True" in text
    df = pd.read_csv(out)
    g = random_graph(500, 3000, seed=0)
    assert set(zip(df["source"], df["target"])) == pairs(g, b_matching(g, 2))


def test_b_sequence_of_huge_unsigned_values_means_no_limit():
    G = nx.star_graph(3)
    b = np.array([2**64 - 1, 1, 1, 1], np.uint64)
    got = b_matching(G, b)
    assert is_b_matching(G, got, [3, 1, 1, 1]) and len(got) == 3
