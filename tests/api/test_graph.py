"""The CSR graph layer: constructors, validation, the edge order."""

import io

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nx_gpumatch import Graph, louvain_communities, max_weight_matching
from nx_gpumatch.cpu.csr import edge_order


def _edges(g):
    labels = g.labels()
    return {
        frozenset((labels[u], labels[v])): w
        for u, v, w in zip(g.edge_src.tolist(), g.edge_dst.tolist(), g.edge_weight.tolist())
    }


def _check_csr(g):
    n = g.num_nodes
    assert g.indptr.shape == (n + 1,) and g.indptr[-1] == 2 * g.num_edges
    for v in range(n):
        row = g.indices[g.indptr[v] : g.indptr[v + 1]]
        assert np.all(np.diff(row) > 0), "columns sorted and unique"
        for p in range(g.indptr[v], g.indptr[v + 1]):
            e = g.arc_edge[p]
            assert {int(g.edge_src[e]), int(g.edge_dst[e])} == {v, int(g.indices[p])}
    assert np.all(g.edge_src < g.edge_dst)


def test_from_networkx_labels_weights_default():
    G = nx.Graph()
    G.add_edge("a", "b", weight=2.5)
    G.add_edge("b", "c")  # missing weight -> networkx's default 1
    G.add_edge("c", "c", weight=7)  # self-loop
    G.add_node("z")
    g = Graph.from_networkx(G)
    assert g.labels() == ["a", "b", "c", "z"]
    assert _edges(g) == {frozenset("ab"): 2.5, frozenset("bc"): 1.0}
    assert g.loop_weight.tolist() == [0, 0, 7, 0]
    _check_csr(g)
    H = g.to_networkx()
    assert set(H.nodes) == {"a", "b", "c", "z"} and H["a"]["b"]["weight"] == 2.5


@pytest.mark.parametrize(
    "bad, msg",
    [
        (float("nan"), "finite"),
        (float("inf"), "finite"),
        ("3", "real numbers"),
        (None, "real numbers"),
    ],
)
def test_bad_weights_raise(bad, msg):
    G = nx.Graph()
    G.add_edge(0, 1, weight=1.0)
    G.add_edge(1, 2, weight=bad)
    with pytest.raises(ValueError, match=msg):
        Graph.from_networkx(G)


def test_directed_and_multigraph_raise():
    with pytest.raises(nx.NetworkXNotImplemented, match="directed"):
        Graph.from_networkx(nx.DiGraph([(0, 1)]))
    with pytest.raises(nx.NetworkXNotImplemented, match="multigraph"):
        Graph.from_networkx(nx.MultiGraph([(0, 1)]))


def test_from_arrays_duplicates_keep_last_like_networkx():
    src = [0, 1, 2, 1, 3]
    dst = [1, 0, 2, 2, 3]
    w = [1.0, 5.0, 9.0, 2.0, 4.0]
    g = Graph.from_arrays(src, dst, w, num_nodes=5)
    G = nx.Graph()
    G.add_nodes_from(range(5))
    G.add_weighted_edges_from(zip(src, dst, w))
    assert _edges(g) == {frozenset((u, v)): d["weight"] for u, v, d in G.edges(data=True) if u != v}
    assert g.loop_weight.tolist() == [0, 0, 9, 4, 0]
    gmax = Graph.from_arrays([0, 1], [1, 0], [3.0, 1.0], duplicates="max")
    assert gmax.edge_weight.tolist() == [3.0]


def test_from_arrays_validation():
    with pytest.raises(ValueError, match="lie in"):
        Graph.from_arrays([0, 5], [1, 2], num_nodes=3)
    with pytest.raises(ValueError, match="integer"):
        Graph.from_arrays([0.5], [1.0])
    with pytest.raises(ValueError, match="equal length"):
        Graph.from_arrays([0, 1], [1])


def test_from_pandas_order_of_first_appearance():
    df = pd.DataFrame({"s": ["x", "y", "x"], "t": ["y", "z", "w"], "cost": [1.0, 2.0, 3.0]})
    g = Graph.from_pandas(df, source="s", target="t", weight="cost")
    ref = nx.from_pandas_edgelist(df, "s", "t", "cost")
    assert g.labels() == list(ref.nodes)
    assert _edges(g) == {frozenset((u, v)): d["cost"] for u, v, d in ref.edges(data=True)}
    # no weight column: every edge weighs 1, as networkx does for a missing attribute
    assert Graph.from_pandas(df, source="s", target="t").edge_weight.tolist() == [1.0] * 3
    with pytest.raises(ValueError, match="column 'source'"):
        Graph.from_pandas(df)


def test_from_scipy_and_mtx_use_abs_and_ignore_diagonal(tmp_path):
    A = sp.coo_array(np.array([[5.0, -2.0, 0.0], [-2.0, 1.0, 3.0], [0.0, 3.0, 0.0]]))
    g = Graph.from_scipy(A)
    assert _edges(g) == {frozenset((0, 1)): -2.0, frozenset((1, 2)): 3.0}
    path = tmp_path / "a.mtx"
    scipy.io.mmwrite(str(path), A, symmetry="symmetric")
    gm = Graph.from_mtx(path)
    assert _edges(gm) == {frozenset((0, 1)): 2.0, frozenset((1, 2)): 3.0}
    with pytest.raises(ValueError, match="square"):
        Graph.from_scipy(sp.coo_array(np.ones((2, 3))))


def test_empty_graph():
    g = Graph.from_arrays(np.array([], np.int64), np.array([], np.int64), num_nodes=4)
    assert g.num_nodes == 4 and g.num_edges == 0 and g.indptr.tolist() == [0] * 5
    assert g.edge_rank().shape == (0,)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 12),
            st.integers(0, 12),
            st.sampled_from([0.0, -0.0, 1.0, 1.5, 2.0, -1.0, 1e-300, 7.25]),
        ),
        max_size=60,
    )
)
def test_csr_and_edge_order_against_reference(edges):
    src = [e[0] for e in edges]
    dst = [e[1] for e in edges]
    w = [e[2] for e in edges]
    g = Graph.from_arrays(np.array(src, np.int64), np.array(dst, np.int64), w, num_nodes=13)
    _check_csr(g)
    # The edge order: heavier first, ties by (min id, max id).
    ref = sorted(
        range(g.num_edges), key=lambda e: (-g.edge_weight[e], g.edge_src[e], g.edge_dst[e])
    )
    assert g.edge_order().tolist() == ref
    rank = g.edge_rank()
    for e in range(g.num_edges):
        if g.edge_weight[e] > 0:
            assert ref[rank[e]] == e
        else:
            assert rank[e] == 0x7FFFFFFF


def test_edge_order_large_groups_and_extremes():
    rng = np.random.default_rng(3)
    for w in (
        rng.integers(0, 4, 5000).astype(float),  # huge tie groups
        1 + rng.integers(0, 100, 5000) * 1e-13,  # differ only in low mantissa bits
        np.array([3e300, -3e300, 5e-324, -5e-324, 0.0, -0.0, 1.0]),
    ):
        ref = np.lexsort((np.arange(len(w)), -(w + 0.0)))
        assert edge_order(w).tolist() == ref.tolist()


def test_mtx_text_roundtrip():
    text = "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 -4.0\n2 3 1.5\n3 3 9\n"
    try:
        A = scipy.io.mmread(io.StringIO(text), spmatrix=False)
    except TypeError:  # scipy before the keyword
        A = scipy.io.mmread(io.StringIO(text))
    g = Graph.from_scipy(A, absolute=True)
    assert _edges(g) == {frozenset((0, 1)): 4.0, frozenset((1, 2)): 1.5}


def test_derived_data_is_owned_by_the_graph():
    g = Graph.from_arrays([0, 1, 2], [1, 2, 3], [1.0, 3.0, 2.0])
    calls = []
    first = g.cached("x", lambda: calls.append(1) or np.arange(3))
    assert g.cached("x", lambda: calls.append(1) or None) is first and calls == [1]
    rank = g.edge_rank()
    assert rank.tolist() == [2, 0, 1] and g.edge_rank() is rank
    g.clear_cache()
    assert g.edge_rank() is not rank and g.edge_rank().tolist() == [2, 0, 1]
    h = g.with_weights(np.array([3.0, 1.0, 2.0]))  # other weights: a fresh ranking
    assert h.edge_rank().tolist() == [0, 2, 1] and g.edge_rank().tolist() == [2, 0, 1]
    assert g.find_edges([1, 3, 0], [0, 2, 2]).tolist() == [0, 2, -1]
    with pytest.raises(ValueError, match=r"\(0, 2\) is not an edge"):
        g.edge_ids([0], [2])


def test_from_scipy_sums_coo_duplicates_as_scipy_does():
    row, col, val = [0, 0, 1, 2], [1, 1, 2, 3], [1.0, 2.5, 1.0, 2.0]
    coo = sp.coo_array((val, (row, col)), shape=(4, 4))
    before = coo.data.copy()
    g, h = Graph.from_scipy(coo), Graph.from_scipy(coo.tocsr())
    np.testing.assert_array_equal(coo.data, before)  # the caller's matrix is left alone
    for x in (g, h):
        np.testing.assert_array_equal(x.edge_weight, [3.5, 1.0, 2.0])
    # a stored zero is an edge of weight 0, as in scipy.sparse.csgraph
    z = Graph.from_scipy(sp.csr_array(([0.0], ([0], [1])), shape=(2, 2)))
    assert z.num_edges == 1 and z.edge_weight[0] == 0.0


def test_from_mtx_keeps_the_largest_of_repeated_lines(tmp_path):
    path = tmp_path / "g.mtx"
    path.write_text(
        "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 2 -1.5\n1 2 2.0\n2 1 -0.5\n2 3 1\n"
    )
    g = Graph.from_mtx(path)
    np.testing.assert_array_equal(g.edge_weight, [2.0, 1.0])


B = 2**53


def _nx_weights(*ws):
    G = nx.Graph()
    for k, w in enumerate(ws):
        G.add_edge(k, k + 1, weight=w)
    return G


@pytest.mark.parametrize(
    "build",
    [
        lambda: max_weight_matching(
            pd.DataFrame({"source": [0, 1], "target": [1, 2], "weight": [B, B + 1]})
        ),
        lambda: max_weight_matching(_nx_weights(np.int64(2**60), np.int64(2**60 + 1))),
        lambda: Graph.from_networkx(_nx_weights(np.int64(-B - 1))),
        lambda: Graph.from_networkx(_nx_weights(np.uint64(2**64 - 1))),
        lambda: Graph.from_scipy(sp.coo_array((np.array([B, B + 1]), ([0, 1], [1, 2])), (3, 3))),
        lambda: Graph.from_arrays([0], [1], [-(B + 1)]),
        lambda: Graph.from_arrays([0, 1], [1, 2], np.array([2**60, B + 1], np.uint64)),
        lambda: Graph.from_scipy(sp.csr_array(np.array([[0, -B - 1], [0, 0]])), absolute=True),
    ],
    ids=["pandas", "nx-int64", "nx-negative", "nx-uint64", "scipy", "arrays", "uint64", "abs"],
)
def test_integers_just_beyond_2_53_raise(build):
    # float64 rounds 2**53 + 1 to 2**53: compared as floats, they pass
    with pytest.raises(ValueError, match="exact float64"):
        build()


def test_integers_up_to_2_53_and_exact_ones_are_kept():
    w = np.array([B, -B, -(2**63)], np.int64)  # -2**63 is a float64 too
    assert Graph.from_arrays([0, 1, 2], [1, 2, 3], w).edge_weight.tolist() == w.tolist()
    g = Graph.from_networkx(_nx_weights(np.int64(B), np.uint64(B), np.int64(-B)))
    assert g.edge_weight.tolist() == [B, B, -B]


def test_from_mtx_ignores_the_diagonal_from_scipy_keeps_it(tmp_path):
    G = nx.Graph([(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (2, 3)])
    A = nx.to_scipy_sparse_array(G, nodelist=range(6)) + sp.diags_array([100.0] * 6)
    path = tmp_path / "d.mtx"
    scipy.io.mmwrite(str(path), A, symmetry="symmetric")
    g = Graph.from_mtx(path)
    assert not g.has_loop.any() and not g.loop_weight.any()
    assert _edges(g) == {frozenset(e): 1.0 for e in G.edges}
    labels = np.asarray(louvain_communities(g, seed=1))
    assert len(set(labels[:3].tolist())) == 1 and labels[0] != labels[3]
    assert Graph.from_scipy(A).loop_weight.tolist() == [100.0] * 6


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_absolute_value_of_the_smallest_integer(dtype):
    low = int(np.iinfo(dtype).min)
    g = Graph.from_scipy(sp.csr_array(np.array([[0, low], [low, 0]], dtype)), absolute=True)
    assert g.edge_weight.tolist() == [-low]


def test_one_dimensional_sparse_array_is_refused():
    A = sp.coo_array(np.array([1, 2]))
    with pytest.raises(ValueError, match="2-D square"):
        Graph.from_scipy(A)
    with pytest.raises(ValueError, match="2-D square"):
        Graph.from_any(A)


def test_from_pandas_refuses_what_is_not_an_edge_list():
    for bad in ({"source": [0], "target": [1]}, pd.Series([1, 2])):
        with pytest.raises(TypeError, match="expected a pandas DataFrame"):
            Graph.from_pandas(bad)
    df = pd.DataFrame([[0, 1, 2.0, 3.0]], columns=["source", "target", "weight", "weight"])
    with pytest.raises(ValueError, match="more than one column named 'weight'"):
        Graph.from_pandas(df)
    df.columns = ["source", "source", "target", "weight"]
    with pytest.raises(ValueError, match="more than one column named 'source'"):
        Graph.from_pandas(df)


def test_from_mtx_integer_beyond_int64_is_a_value_error(tmp_path):
    path = tmp_path / "big.mtx"
    path.write_text(
        "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 10000000000000000000\n"
    )
    with pytest.raises(ValueError, match="out of range"):
        Graph.from_mtx(path)


def test_from_mtx_reads_gz_in_any_case(tmp_path):
    import gzip

    A = sp.coo_array(([2.0, 3.0], ([1, 2], [0, 1])), shape=(3, 3))
    scipy.io.mmwrite(str(tmp_path / "a.mtx"), A)
    data = gzip.compress((tmp_path / "a.mtx").read_bytes())
    for name in ("b.mtx.gz", "C.MTX.GZ", "d.Mtx.Gz"):
        (tmp_path / name).write_bytes(data)
        g = Graph.from_mtx(tmp_path / name)
        assert g.num_edges == 2 and sorted(g.edge_weight.tolist()) == [2.0, 3.0]
        assert max_weight_matching(str(tmp_path / name)).tolist() == [-1, 2, 1]


@pytest.mark.parametrize("n, k", [(100, 25), (40, 10), (101, 25), (4, 1), (1000, 240)])
def test_planted_partition_every_community_has_four(n, k):
    from nx_gpumatch.generators import planted_partition

    g, comm = planted_partition(n, k, 3, 1, seed=1)
    sizes = np.bincount(comm, minlength=k)
    assert g.num_nodes == n and sizes.sum() == n and sizes.shape == (k,)
    assert sizes.min() >= 4


def test_generators_refuse_sizes_they_cannot_draw():
    from nx_gpumatch.generators import delaunay, random_graph

    with pytest.raises(ValueError, match="n >= 1 for m > 0"):
        random_graph(0, 5)
    with pytest.raises(ValueError, match="at least 3 points"):
        delaunay(2)
    assert random_graph(0, 0).num_nodes == 0 and delaunay(3).num_edges == 3


@pytest.mark.parametrize("tail", ["3 1 0.5 % note", "3 1 0.5 \t", "3 1 0.5"])
def test_from_mtx_last_line_without_newline(tmp_path, tail):
    # scipy's reader crashed the process on the first two (no final newline).
    import gzip

    text = f"%%MatrixMarket matrix coordinate real general\n3 3 2\n2 1 0.25\n{tail}"
    for name, data in (("a.mtx", text.encode()), ("a.mtx.gz", gzip.compress(text.encode()))):
        (tmp_path / name).write_bytes(data)
        g = Graph.from_mtx(tmp_path / name)
        assert sorted(g.edge_weight.tolist()) == [0.25, 0.5]
