"""The cases of the bad-input probe (tests/api/test_probe.py) and the child process
that runs them.

A case calls one entry point (a public function of ``nx_gpumatch``, a
networkx function dispatched to the backend, or the CLI) on one malformed
input or parameter. It passes when the call either returns a result that the
package's own validators accept, or raises a clear exception of an expected
type; a case marked ``must_raise`` passes only by raising. An internal error
(IndexError, AttributeError, ZeroDivisionError, a Numba error...), a crash or a
hang fails it.

Run as a script (``python probe_cases.py FIRST``), it runs the cases from
index FIRST on and prints one JSON line per case, so that the parent can
restart it after a crash or a hang and blame exactly one case.
"""

import contextlib
import decimal
import io
import json
import os
import sys
import tempfile
import traceback

import numpy as np

# ----------------------------------------------------------------- inputs
# Inputs are built fresh for each case (networkx caches conversions on a graph).
WEIGHTLESS = {"self_loop", "directed", "multigraph", "huge_ids", "empty", "one_node", "labels"}


def _path(changes=None):
    """The path 0-1-2-3 weighing 1, 2, 3, with ``changes`` {(u, v): weight}."""
    import networkx as nx

    G = nx.path_graph(4)
    for (u, v), w in zip(G.edges, (1.0, 2.0, 3.0)):
        G[u][v]["weight"] = w
    for (u, v), w in (changes or {}).items():
        G[u][v]["weight"] = w
    return G


def _nx_inputs():
    import networkx as nx

    def directed():
        return nx.DiGraph([(0, 1), (1, 2)])

    def multigraph():
        M = nx.MultiGraph()
        M.add_edge(0, 1, weight=2.0)
        M.add_edge(0, 1, weight=3.0)
        M.add_edge(1, 2, weight=1.0)
        return M

    def self_loop():
        G = _path()
        G.add_edge(1, 1, weight=5.0)
        return G

    def huge_ids():
        return nx.Graph([(2**70, -(2**70)), (-(2**70), 10**30)])

    def labels():
        return nx.Graph([("a", (1, 2)), ((1, 2), 3.5), (3.5, frozenset({1}))])

    def missing_weight():
        G = _path()
        del G[1][2]["weight"]
        return G

    def isolated():
        G = nx.Graph()
        G.add_nodes_from(range(6))
        G.add_edge(2, 4, weight=1.5)
        return G

    def one_node():
        G = nx.Graph()
        G.add_node("x")
        return G

    return {
        "valid": _path,
        "nan_weight": lambda: _path({(0, 1): float("nan")}),
        "inf_weight": lambda: _path({(0, 1): float("inf")}),
        "neginf_weight": lambda: _path({(1, 2): float("-inf")}),
        "longdouble_nan": lambda: _path({(0, 1): np.longdouble("nan")}),
        "negative_weight": lambda: _path({(0, 1): -4.0}),
        "string_weight": lambda: _path({(0, 1): "3"}),
        "complex_weight": lambda: _path({(0, 1): 1 + 2j}),
        "bool_weight": lambda: _path({(0, 1): True}),
        "none_weight": lambda: _path({(0, 1): None}),
        "object_weight": lambda: _path({(0, 1): object()}),
        "decimal_inexact": lambda: _path({(0, 1): decimal.Decimal("0.1")}),
        "int_beyond_2_53": lambda: _path({(0, 1): 2**60 + 1}),
        "np_int_beyond_2_53": lambda: _path({(0, 1): np.int64(2**60 + 1)}),
        "np_uint64_huge": lambda: _path({(0, 1): np.uint64(2**63 + 5)}),
        "np_float32_nan": lambda: _path({(0, 1): np.float32("nan")}),
        "missing_weight": missing_weight,
        "isolated": isolated,
        "self_loop": self_loop,
        "directed": directed,
        "multigraph": multigraph,
        "huge_ids": huge_ids,
        "labels": labels,
        "empty": nx.Graph,
        "one_node": one_node,
    }


# Weights these inputs carry cannot be computed with: a function that reads
# weights must refuse them (never answer from a rounded or dropped value).
BAD_WEIGHTS = {
    "nan_weight",
    "inf_weight",
    "neginf_weight",
    "longdouble_nan",
    "string_weight",
    "complex_weight",
    "bool_weight",
    "none_weight",
    "object_weight",
    "decimal_inexact",
    "int_beyond_2_53",
    "np_int_beyond_2_53",
    "np_uint64_huge",
    "np_float32_nan",
}


# Weights the README calls an error however the backend is reached.
NON_FINITE = {"nan_weight", "inf_weight", "neginf_weight", "longdouble_nan", "np_float32_nan"}


def _other_inputs():
    import pandas as pd
    import scipy.sparse as sp

    def csr():
        return sp.csr_array(np.array([[0, 1, 0], [1, 0, 2], [0, 2, 0]], float))

    def spoiled(spoil):
        def build():
            A = csr()
            spoil(A)
            return A

        return build

    def nan_data():
        A = csr()
        A.data[0] = np.nan
        return A

    def gm_graph(n=4, src=(0, 1, 2), dst=(1, 2, 3)):
        import nx_gpumatch as gm

        return lambda: gm.Graph.from_arrays(list(src), list(dst), num_nodes=n)

    return {
        "gm_graph": gm_graph(),
        "gm_graph_empty": gm_graph(0, (), ()),
        "gm_graph_isolated": gm_graph(9, (3,), (7,)),
        "df_valid": lambda: pd.DataFrame(
            {"source": [0, 1, 2], "target": [1, 2, 3], "weight": [1.0, 2, 3]}
        ),
        "df_loops_and_repeats": lambda: pd.DataFrame(
            {"source": [0, 1, 1, 2], "target": [0, 2, 2, 1], "weight": [1.0, 2, 5, 3]}
        ),
        "df_mixed_ids": lambda: pd.DataFrame(
            {"source": [0, "a", 2.5], "target": ["a", 2.5, (1,)], "weight": [1.0, 2, 3]}
        ),
        "df_empty": lambda: pd.DataFrame({"source": [], "target": [], "weight": []}),
        "sp_valid": csr,
        "sp_empty": lambda: sp.csr_array((0, 0)),
        "sp_explicit_zero": lambda: sp.csr_array(
            (np.array([0.0, 0.0]), np.array([1, 0]), np.array([0, 1, 2])), shape=(2, 2)
        ),
        "sp_int64_min": lambda: sp.csr_array(
            (np.array([-(2**63), -(2**63)]), np.array([1, 0]), np.array([0, 1, 2])), shape=(2, 2)
        ),
        "sp_bool": lambda: sp.csr_array(np.array([[False, True], [True, False]])),
        "sp_complex": lambda: sp.csr_array(np.array([[0, 1j], [1j, 0]])),
        "sp_nonsquare": lambda: sp.csr_array(np.ones((2, 3))),
        "sp_nan": nan_data,
        "sp_indptr_beyond": spoiled(lambda A: A.indptr.__setitem__(-1, 50)),
        "sp_indptr_negative": spoiled(lambda A: A.indptr.__setitem__(1, -3)),
        "sp_index_out": spoiled(lambda A: A.indices.__setitem__(0, 7)),
        "sp_3d": lambda: np.zeros((2, 2, 2)),
        "df_nan_id": lambda: pd.DataFrame(
            {"source": [0, None], "target": [1, 2], "weight": [1, 2]}
        ),
        "df_str_weight": lambda: pd.DataFrame(
            {"source": [0, 1], "target": [1, 2], "weight": ["a", 2]}
        ),
        "df_no_columns": lambda: pd.DataFrame({"a": [0], "b": [1]}),
        "none": lambda: None,
        "list": lambda: [1, 2, 3],
        "int": lambda: 5,
        "missing_path": lambda: "/nonexistent/graph.mtx",
        "garbage_mtx": lambda: _file("garbage.mtx", b"\x00\xff" * 2048),
        "huge_mtx": lambda: _file(
            "huge.mtx",
            b"%%MatrixMarket matrix coordinate real general\n1000000000 1000000000 1\n1 2 3\n",
        ),
    }


_TMP = []


def _tmp():
    """The folder of the probe's files: the runner's (it removes it, even after
    a crash), else one made on first use and removed at exit."""
    if not _TMP and os.environ.get("NX_GPUMATCH_PROBE_TMP"):
        _TMP.append(os.environ["NX_GPUMATCH_PROBE_TMP"])
    if not _TMP:
        import atexit
        import shutil

        _TMP.append(tempfile.mkdtemp(prefix="nx_gpumatch_probe_"))
        atexit.register(shutil.rmtree, _TMP[0], True)
    return _TMP[0]


def _file(name, data):
    path = os.path.join(_tmp(), name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def inputs():
    return {**_nx_inputs(), **_other_inputs()}


# ------------------------------------------------------------- validators
def _nodes_of(G):
    import networkx as nx

    return set(G) if isinstance(G, nx.Graph) else None


def v_matching(G, r, maximal=False):
    import nx_gpumatch as gm

    assert gm.is_matching(G, r, maximal=maximal), f"not a {'maximal ' * maximal}matching: {r!r}"


def v_b_matching(G, r):
    import nx_gpumatch as gm

    assert gm.is_b_matching(G, r, 1), f"not a b-matching: {r!r}"


def v_partition(G, r):
    import networkx as nx

    r = list(r)
    if isinstance(G, nx.Graph):
        assert nx.community.is_partition(G, r), f"not a partition: {r!r}"


def v_partitions(G, r):
    for p in r:
        v_partition(G, p)


def v_bool(G, r):
    assert isinstance(r, bool | np.bool_), f"not a bool: {r!r}"


def v_number(G, r):
    assert np.isfinite(float(r)), f"not a finite number: {r!r}"


def v_bipartite(G, r):
    import networkx as nx

    if isinstance(G, nx.Graph):
        assert all(r[v] == u for u, v in r.items()), f"not a mate dict: {r!r}"
        # (networkx's own answer for a directed graph names its arcs both ways)
        pairs = r.items()
        assert all(G.has_edge(u, v) or G.has_edge(v, u) for u, v in pairs), f"not edges: {r!r}"


def v_cover(G, r):
    import networkx as nx

    if isinstance(G, nx.Graph):
        assert all(u in r or v in r for u, v, *_ in G.edges), f"not a cover: {r!r}"


def v_any(G, r):
    return None


# ------------------------------------------------------------- entry points
def _gm():
    import nx_gpumatch as gm

    return gm


# name -> (call(G), validator, reads weights)
GRAPH_ENTRIES = {
    "Graph.from_any": (lambda G: _gm().Graph.from_any(G), v_any, True),
    "max_weight_matching": (lambda G: _gm().max_weight_matching(G), v_matching, True),
    "max_weight_matching[suitor]": (
        lambda G: _gm().max_weight_matching(G, algorithm="suitor"),
        v_matching,
        True,
    ),
    "max_weight_matching[red_blue]": (
        lambda G: _gm().max_weight_matching(G, algorithm="red_blue", seed=1),
        v_matching,
        True,
    ),
    "min_weight_matching": (lambda G: _gm().min_weight_matching(G), v_matching, True),
    "maximal_matching": (
        lambda G: _gm().maximal_matching(G),
        lambda G, r: v_matching(G, r, maximal=True),
        False,
    ),
    "is_matching": (lambda G: _gm().is_matching(G, set()), v_bool, False),
    "matching_weight": (lambda G: _gm().matching_weight(G, set()), v_number, True),
    "b_matching": (lambda G: _gm().b_matching(G, 1), v_b_matching, True),
    "is_b_matching": (lambda G: _gm().is_b_matching(G, set(), 1), v_bool, False),
    "b_matching_weight": (lambda G: _gm().b_matching_weight(G, set()), v_number, True),
    "smi_from_graph": (lambda G: _gm().smi_from_graph(G), v_any, True),
    "greedy_matching_smi": (lambda G: _gm().greedy_matching_smi(G), v_matching, True),
    "maximum_bipartite_matching": (
        lambda G: _gm().maximum_bipartite_matching(G),
        v_bipartite,
        False,
    ),
    "bipartite_vertex_cover": (lambda G: _gm().bipartite_vertex_cover(G), v_cover, False),
    "louvain_communities": (lambda G: _gm().louvain_communities(G, seed=1), v_partition, True),
    "louvain_partitions": (lambda G: list(_gm().louvain_partitions(G, seed=1)), v_partitions, True),
    "leiden_communities": (lambda G: _gm().leiden_communities(G, seed=1), v_partition, True),
    "leiden_partitions": (lambda G: list(_gm().leiden_partitions(G, seed=1)), v_partitions, True),
}


def _nx(name):
    import networkx as nx

    obj = nx
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _nx_matching(G, r, maximal=False):
    import networkx as nx

    ok = nx.is_maximal_matching(G, r) if maximal else nx.is_matching(G, r)
    assert ok, f"networkx does not call it a {'maximal ' * maximal}matching: {r!r}"


# networkx functions dispatched to the backend: name -> (call(G, backend), validator, weights)
DISPATCH_ENTRIES = {
    "nx.max_weight_matching": (
        lambda G, b: _nx("max_weight_matching")(G, backend=b),
        _nx_matching,
        True,
    ),
    "nx.min_weight_matching": (
        lambda G, b: _nx("min_weight_matching")(G, backend=b),
        _nx_matching,
        True,
    ),
    "nx.maximal_matching": (
        lambda G, b: _nx("maximal_matching")(G, backend=b),
        lambda G, r: _nx_matching(G, r, maximal=True),
        False,
    ),
    "nx.community.louvain_communities": (
        lambda G, b: _nx("community.louvain_communities")(G, seed=1, backend=b),
        v_partition,
        True,
    ),
    "nx.community.louvain_partitions": (
        lambda G, b: list(_nx("community.louvain_partitions")(G, seed=1, backend=b)),
        v_partitions,
        True,
    ),
    "nx.community.leiden_communities": (
        lambda G, b: _nx("community.leiden_communities")(G, seed=1, backend=b),
        v_partition,
        True,
    ),
    "nx.community.leiden_partitions": (
        lambda G, b: list(_nx("community.leiden_partitions")(G, seed=1, backend=b)),
        v_partitions,
        True,
    ),
    "nx.bipartite.hopcroft_karp_matching": (
        lambda G, b: _nx("bipartite.hopcroft_karp_matching")(G, backend=b),
        v_bipartite,
        False,
    ),
    "nx.bipartite.eppstein_matching": (
        lambda G, b: _nx("bipartite.eppstein_matching")(G, backend=b),
        v_bipartite,
        False,
    ),
    "nx.bipartite.to_vertex_cover": (
        lambda G, b: _nx("bipartite.to_vertex_cover")(
            G, _nx("bipartite.hopcroft_karp_matching")(G), backend=b
        ),
        v_cover,
        False,
    ),
}


def _in_networkx(entry):
    try:
        _nx(entry.removeprefix("nx."))
    except AttributeError:
        return False
    return True


# networkx before 3.5 declares no Leiden to dispatch
DISPATCH_ENTRIES = {k: v for k, v in DISPATCH_ENTRIES.items() if _in_networkx(k)}


def _prefs():
    return {0: [0, 1], 1: [1, 0]}, {0: [1, 0], 1: [0, 1]}


def _sm(**kw):
    men, women = kw.pop("men", None), kw.pop("women", None)
    m0, w0 = _prefs()
    return _gm().stable_marriage(m0 if men is None else men, w0 if women is None else women, **kw)


def _graph_params():
    """(entry, case, call) whose parameters are bad: each must raise."""
    gm = _gm()
    G = _path
    bad_common = {
        "device=tpu": {"device": "tpu"},
        "device=1": {"device": 1},
        "threads=0": {"threads": 0},
        "threads=-1": {"threads": -1},
        "threads=1.5": {"threads": 1.5},
        "threads=str": {"threads": "2"},
        "threads=True": {"threads": True},
    }
    cases = []
    takes_engine = {
        "max_weight_matching": gm.max_weight_matching,
        "min_weight_matching": gm.min_weight_matching,
        "maximal_matching": gm.maximal_matching,
        "b_matching": lambda g, **kw: gm.b_matching(g, 1, **kw),
        "greedy_matching_smi": gm.greedy_matching_smi,
        "maximum_bipartite_matching": gm.maximum_bipartite_matching,
        "louvain_communities": gm.louvain_communities,
        "leiden_communities": gm.leiden_communities,
        "stable_marriage": lambda g, **kw: _sm(**kw),
    }
    for entry, func in takes_engine.items():
        for case, kw in bad_common.items():
            cases.append((entry, case, lambda func=func, kw=kw: func(G(), **kw)))
    own = {
        "max_weight_matching": {
            "algorithm=nope": lambda: gm.max_weight_matching(G(), algorithm="nope"),
            "algorithm=1": lambda: gm.max_weight_matching(G(), algorithm=1),
            "maxcardinality=yes": lambda: gm.max_weight_matching(G(), maxcardinality="yes"),
            "select=bad": lambda: gm.max_weight_matching(G(), algorithm="red_blue", select="x"),
            "seed=str": lambda: gm.max_weight_matching(G(), algorithm="red_blue", seed="x"),
            "weight=unhashable": lambda: gm.max_weight_matching(G(), weight=["w"]),
            "suitor+maxcardinality": lambda: gm.max_weight_matching(
                G(), algorithm="suitor", maxcardinality=True
            ),
        },
        "b_matching": {
            "b=-1": lambda: gm.b_matching(G(), -1),
            "b=nan": lambda: gm.b_matching(G(), float("nan")),
            "b=str": lambda: gm.b_matching(G(), "x"),
            "b=1.5": lambda: gm.b_matching(G(), 1.5),
            "b=None": lambda: gm.b_matching(G(), None),
            "b=True": lambda: gm.b_matching(G(), True),
            "b=short": lambda: gm.b_matching(G(), [1, 1]),
            "b=dict-unknown": lambda: gm.b_matching(G(), {0: 1, 99: 1}),
            "b=array-float": lambda: gm.b_matching(G(), np.array([1.0, 1.5, 1.0, 1.0])),
            "b=array-negative": lambda: gm.b_matching(G(), np.array([1, -1, 1, 1])),
            "algorithm=nope": lambda: gm.b_matching(G(), 1, algorithm="nope"),
        },
        "is_b_matching": {
            "b=-1": lambda: gm.is_b_matching(G(), set(), -1),
            "b=str": lambda: gm.is_b_matching(G(), set(), "x"),
        },
        "matching_weight": {
            "unknown-node": lambda: gm.matching_weight(G(), {(0, 99)}),
            "not-an-edge": lambda: gm.matching_weight(G(), {(0, 3)}),
            "not-pairs": lambda: gm.matching_weight(G(), {1, 2}),
        },
        "is_matching": {
            "maximal=yes": lambda: gm.is_matching(G(), set(), maximal="yes"),
        },
        "louvain_communities": {
            "resolution=inf": lambda: gm.louvain_communities(G(), resolution=float("inf")),
            "resolution=nan": lambda: gm.louvain_communities(G(), resolution=float("nan")),
            "resolution=str": lambda: gm.louvain_communities(G(), resolution="a"),
            "threshold=inf": lambda: gm.louvain_communities(G(), threshold=float("inf")),
            "threshold=nan": lambda: gm.louvain_communities(G(), threshold=float("nan")),
            "max_level=0": lambda: gm.louvain_communities(G(), max_level=0),
            "max_level=str": lambda: gm.louvain_communities(G(), max_level="a"),
            "seed=str": lambda: gm.louvain_communities(G(), seed="x"),
            "progress=no": lambda: gm.louvain_communities(G(), progress="no"),
        },
        "leiden_communities": {
            "resolution=str": lambda: gm.leiden_communities(G(), resolution="1"),
            "theta=0": lambda: gm.leiden_communities(G(), theta=0),
            "theta=nan": lambda: gm.leiden_communities(G(), theta=float("nan")),
            "passes=0": lambda: gm.leiden_communities(G(), passes=0),
            "passes=1.5": lambda: gm.leiden_communities(G(), passes=1.5),
            "max_level=-1": lambda: gm.leiden_communities(G(), max_level=-1),
            "progress=no": lambda: gm.leiden_communities(G(), progress="no"),
        },
        "maximum_bipartite_matching": {
            "perm_type=diag": lambda: gm.maximum_bipartite_matching(_sp(), perm_type="diag"),
            "algorithm=nope": lambda: gm.maximum_bipartite_matching(_sp(), algorithm="nope"),
            "init=nope": lambda: gm.maximum_bipartite_matching(_sp(), init="nope"),
            "layout=nope": lambda: gm.maximum_bipartite_matching(_sp(), layout="nope"),
            "return_cover=no": lambda: gm.maximum_bipartite_matching(_sp(), return_cover="no"),
            "top_nodes=int": lambda: gm.maximum_bipartite_matching(G(), top_nodes=5),
            "top_nodes=unknown": lambda: gm.maximum_bipartite_matching(G(), top_nodes=[0, 2, 9]),
            "top_nodes=same-side": lambda: gm.maximum_bipartite_matching(G(), top_nodes=[0, 1]),
            "top_nodes+matrix": lambda: gm.maximum_bipartite_matching(_sp(), top_nodes=[0]),
        },
        "stable_marriage": {
            "algorithm=nope": lambda: _sm(algorithm="nope"),
            "parallel=yes": lambda: _sm(parallel="yes"),
            "men=int": lambda: _sm(men=5),
            "men=unknown-woman": lambda: _sm(men={0: [5], 1: [1]}),
            "men=ranked-twice": lambda: _sm(men={0: [0, 0], 1: [1]}),
            "women=None": lambda: gm.stable_marriage(_prefs()[0]),
            "arrays=bad-indptr": lambda: gm.stable_marriage(
                (np.array([0, 5]), np.array([0])), (np.array([0, 1]), np.array([0]))
            ),
            "arrays=float": lambda: gm.stable_marriage(np.ones((2, 2)) * 0.5, np.ones((2, 2))),
            "arrays=negative": lambda: gm.stable_marriage(
                np.array([[-1, 0], [0, 1]]), np.array([[0, 1], [1, 0]])
            ),
        },
        "is_stable": {
            "matching=unknown": lambda: gm.is_stable({0: 9}, *_prefs()),
            "matching=int": lambda: gm.is_stable(5, *_prefs()),
        },
        "blocking_pair": {
            "matching=unknown": lambda: gm.blocking_pair({0: 9}, *_prefs()),
            "matching=int": lambda: gm.blocking_pair(5, *_prefs()),
        },
        "prepare_preferences": {
            "men=str": lambda: gm.prepare_preferences("abc", {}),
            "threads=0": lambda: gm.prepare_preferences(*_prefs(), threads=0),
        },
        "stable_marriage_instance": {
            "kind=nope": lambda: gm.stable_marriage_instance("nope", 4),
            "n=-1": lambda: gm.stable_marriage_instance("easy", -1),
            "n=1.5": lambda: gm.stable_marriage_instance("easy", 1.5),
            "n=str": lambda: gm.stable_marriage_instance("easy", "a"),
            "seed=str": lambda: gm.stable_marriage_instance("easy", 4, seed="x"),
        },
        "warmup": {
            "families=nope": lambda: gm.warmup(["nope"], progress=False),
            "families=int": lambda: gm.warmup(5, progress=False),
            "progress=no": lambda: gm.warmup([], progress="no"),
        },
        "Graph.from_arrays": {
            "float-ids": lambda: gm.Graph.from_arrays([0.5], [1]),
            "negative-ids": lambda: gm.Graph.from_arrays([-1], [1]),
            "uint64-beyond-int64": lambda: gm.Graph.from_arrays(
                np.array([2**63 + 5], np.uint64), np.array([0], np.uint64)
            ),
            "lengths-differ": lambda: gm.Graph.from_arrays([0, 1], [1]),
            "weights-nan": lambda: gm.Graph.from_arrays([0], [1], [float("nan")]),
            "weights-short": lambda: gm.Graph.from_arrays([0, 1], [1, 2], [1.0]),
            "num_nodes=-1": lambda: gm.Graph.from_arrays([0], [1], num_nodes=-1),
            "num_nodes=str": lambda: gm.Graph.from_arrays([0], [1], num_nodes="a"),
            "num_nodes=2**31": lambda: gm.Graph.from_arrays([0], [1], num_nodes=2**31),
            "num_nodes-too-small": lambda: gm.Graph.from_arrays([0], [5], num_nodes=2),
            "duplicates=bad": lambda: gm.Graph.from_arrays([0], [1], duplicates="bad"),
            "nodes-repeat": lambda: gm.Graph.from_arrays([0], [1], nodes=["a", "a"]),
            "2-D": lambda: gm.Graph.from_arrays([[0]], [[1]]),
        },
        "Graph.from_scipy": {
            "absolute=no": lambda: gm.Graph.from_scipy(_sp(), absolute="no"),
            "not-sparse": lambda: gm.Graph.from_scipy(np.eye(2)),
            "non-square": lambda: gm.Graph.from_scipy(_inputs_cache("sp_nonsquare")),
        },
        "Graph.from_pandas": {
            "not-a-frame": lambda: gm.Graph.from_pandas([1, 2]),
            "missing-column": lambda: gm.Graph.from_pandas(_inputs_cache("df_no_columns")),
            "nan-id": lambda: gm.Graph.from_pandas(_inputs_cache("df_nan_id")),
            "string-weight": lambda: gm.Graph.from_pandas(_inputs_cache("df_str_weight")),
        },
        "Graph.from_mtx": {
            "garbage": lambda: gm.Graph.from_mtx(_inputs_cache("garbage_mtx")),
            "huge-declared": lambda: gm.Graph.from_mtx(_inputs_cache("huge_mtx")),
            "missing": lambda: gm.Graph.from_mtx("/nonexistent/x.mtx"),
            "truncated": lambda: gm.Graph.from_mtx(
                _file("cut.mtx", b"%%MatrixMarket matrix coordinate real general\n3 3 5\n1 2 1\n")
            ),
            "id-out-of-range": lambda: gm.Graph.from_mtx(
                _file("oor.mtx", b"%%MatrixMarket matrix coordinate real general\n3 3 1\n9 2 1\n")
            ),
            "nan-value": lambda: gm.Graph.from_mtx(
                _file("nan.mtx", b"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 nan\n")
            ),
            "bad-gzip": lambda: gm.Graph.from_mtx(_file("bad.mtx.gz", b"\x1f\x8b\x08junk")),
            "gzip-cut-midway": lambda: gm.Graph.from_mtx(_file("cut.mtx.gz", _cut_gzip())),
        },
    }
    for entry, named in own.items():
        for case, call in named.items():
            cases.append((entry, case, call))
    return cases


def _sp():
    import scipy.sparse as sp

    return sp.csr_array(np.eye(2))


def _inputs_cache(name):
    return inputs()[name]()


def _dispatch_params():
    """Bad parameters to the dispatched networkx functions: networkx's own
    errors, or the backend's, but an error."""
    import networkx as nx

    b = "gpumatch"
    return [
        ("nx.max_weight_matching", "weight=unhashable", lambda: nx.max_weight_matching(_path(), weight=["w"], backend=b)),
        ("nx.community.louvain_communities", "resolution=str", lambda: nx.community.louvain_communities(_path(), resolution="1", backend=b)),
        ("nx.community.louvain_communities", "threshold=nan", lambda: nx.community.louvain_communities(_path(), threshold=float("nan"), backend=b)),
        ("nx.community.louvain_communities", "max_level=0", lambda: nx.community.louvain_communities(_path(), max_level=0, backend=b)),
        ("nx.community.leiden_communities", "resolution=nan", lambda: nx.community.leiden_communities(_path(), resolution=float("nan"), seed=1, backend=b)),
        ("nx.bipartite.hopcroft_karp_matching", "top_nodes=unknown", lambda: nx.bipartite.hopcroft_karp_matching(_path(), top_nodes=[0, 2, 9], backend=b)),
        ("nx.bipartite.maximum_matching", "top_nodes=unknown", lambda: nx.bipartite.maximum_matching(_path(), top_nodes=[0, 2, 9], backend=b)),
        ("nx.bipartite.hopcroft_karp_matching", "top_nodes=same-side", lambda: nx.bipartite.hopcroft_karp_matching(_path(), top_nodes=[0, 1], backend=b)),
    ]  # fmt: skip


# CLI: (case, argv); each must end with exit 2 and one "error:" line.
def _cli_cases():
    bad_csv = _file("bad.csv", b"source,target,weight\n0,1,nan\n1,2,3\n")
    no_col = _file("nocol.csv", b"a,b\n0,1\n")
    # an empty edge list is an empty graph (reported as 0 edges); bytes that are
    # no known format must be refused
    binary = _file("binary.csv", bytes(range(256)) * 4)
    gz = _file("bomb.mtx.gz", _gzip_bomb())
    return [
        ("match-missing-input", ["match", "-i", "/nonexistent/g.mtx", "--no-progress"]),
        ("match-garbage-mtx", ["match", "-i", _inputs_cache("garbage_mtx"), "--no-progress"]),
        ("match-huge-mtx", ["match", "-i", _inputs_cache("huge_mtx"), "--no-progress"]),
        ("match-gzip-bomb", ["match", "-i", gz, "--no-progress"]),
        ("match-nan-csv", ["match", "-i", bad_csv, "--no-progress"]),
        ("match-csv-no-column", ["match", "-i", no_col, "--no-progress"]),
        ("match-binary-csv", ["match", "-i", binary, "--no-progress"]),
        ("match-input-is-folder", ["match", "-i", _tmp(), "--no-progress"]),
        ("match-threads-0", ["match", "--threads", "0", "--no-progress"]),
        ("match-device-tpu", ["match", "--device", "tpu", "--no-progress"]),
        ("match-n-negative", ["match", "-n", "-5", "--no-progress"]),
        ("match-algorithm-nope", ["match", "--algorithm", "nope", "--no-progress"]),
        ("louvain-resolution-nan", ["louvain", "-n", "10", "-m", "20", "--resolution", "nan", "--no-progress"]),
        ("louvain-max-level-0", ["louvain", "-n", "10", "-m", "20", "--max-level", "0", "--no-progress"]),
        ("b-matching-b-negative", ["b-matching", "-n", "10", "-m", "20", "-b", "-1", "--no-progress"]),
        ("bipartite-n-2**31", ["bipartite", "-n", str(2**31)]),
        ("bipartite-huge-mtx", ["bipartite", "-i", _inputs_cache("huge_mtx")]),
        ("stable-marriage-kind-nope", ["stable-marriage", "--kind", "nope"]),
        ("unknown-option", ["match", "--frobnicate"]),
    ]  # fmt: skip


def _cut_gzip():
    import gzip

    lines = b"".join(b"%d %d 1\n" % (i % 90 + 1, i * 7 % 90 + 1) for i in range(300))
    data = gzip.compress(b"%%MatrixMarket matrix coordinate real general\n90 90 300\n" + lines)
    return data[: len(data) // 2]


def _gzip_bomb():
    import gzip

    body = io.BytesIO()
    with gzip.GzipFile(fileobj=body, mode="wb") as f:
        f.write(b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 ")
        for _ in range(32):
            f.write(b" " * (1 << 20))
        f.write(b"1\n2 3 1\n")
    return body.getvalue()


# ----------------------------------------------------------------- the cases
def _selftest_cases():
    """A case that passes, one that kills the process, one that hangs, one
    that passes: what the runner must survive."""

    def ok():
        raise ValueError("refused")

    def hang():
        import time

        time.sleep(3600)

    return [
        ("selftest", "ok-before", "param", ok),
        ("selftest", "crash", "param", os.abort),
        ("selftest", "hang", "param", hang),
        ("selftest", "ok-after", "param", ok),
    ]


def cases():
    """[(entry, case, kind, payload)]: kind "graph" (payload: entry call,
    validator, input name, must_raise), "dispatch", "priority", "param",
    "dispatch-param" or "cli"."""
    if os.environ.get("NX_GPUMATCH_PROBE_SELFTEST"):
        return _selftest_cases()
    out = []
    ins = inputs()
    for entry, (call, check, weights) in GRAPH_ENTRIES.items():
        for name in ins:
            must = weights and name in BAD_WEIGHTS
            out.append((entry, name, "graph", (call, check, name, must)))
    nx_names = list(_nx_inputs())
    for entry, (call, check, weights) in DISPATCH_ENTRIES.items():
        for name in nx_names:
            # Named, the backend must answer or refuse; by priority it may hand
            # the call to networkx, except for weights it calls errors.
            must = weights and name in BAD_WEIGHTS
            out.append((entry, name, "dispatch", (call, check, name, must)))
            must = weights and name in NON_FINITE
            out.append((entry + " (priority)", name, "priority", (call, check, name, must)))
    for entry, case, call in _graph_params():
        out.append((entry, case, "param", call))
    for entry, case, call in _dispatch_params():
        if _in_networkx(entry):
            out.append((entry, case, "dispatch-param", call))
    for case, argv in _cli_cases():
        out.append(("cli " + argv[0], case, "cli", argv))
    return out


# Exceptions that state a problem with the input. Everything else (IndexError,
# AttributeError, ZeroDivisionError, AssertionError, RecursionError, Numba's
# errors...) is the package failing on input it did not check.
def _expected(exc, kind):
    import networkx as nx

    if type(exc).__module__.split(".")[0] in ("numba", "llvmlite"):
        return False
    if isinstance(exc, RecursionError | IndexError | AttributeError | ArithmeticError):
        return False
    if kind.startswith(("dispatch", "priority")) and isinstance(exc, NotImplementedError):
        return True  # networkx: "not implemented by 'gpumatch'" for a refused input
    ok = (ValueError, TypeError, KeyError, nx.NetworkXException, MemoryError, OSError)
    if not isinstance(exc, ok):
        return False
    return isinstance(exc, KeyError) or bool(str(exc).strip())


def run_case(case):
    """{"status": "ok" | "fail", "detail": ...} for one case."""
    entry, name, kind, payload = case
    if kind == "cli":
        return _run_cli(payload)
    try:
        if kind in ("graph", "dispatch", "priority"):
            call, check, input_name, must_raise = payload
            G = inputs()[input_name]()
            if kind == "graph":
                result = call(G)
            elif kind == "dispatch":
                result = call(G, "gpumatch")
            else:
                import networkx as nx

                with nx.config(backend_priority=["gpumatch"]):
                    result = call(G, None)
        else:
            must_raise = True
            result = payload()
    except BaseException as exc:  # noqa: BLE001 - classifying is the point
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        if _expected(exc, kind):
            return {"status": "ok", "detail": f"{type(exc).__name__}: {str(exc)[:200]}"}
        tb = traceback.format_exception(exc)[-4:]
        return {
            "status": "fail",
            "detail": f"internal error {type(exc).__name__}: {''.join(tb)[-1500:]}",
        }
    if must_raise:
        return {"status": "fail", "detail": f"accepted silently, returned {result!r:.300}"}
    try:
        check(G, result)
    except Exception as exc:  # noqa: BLE001
        return {"status": "fail", "detail": f"invalid result: {exc}"[:800]}
    return {"status": "ok", "detail": "valid result"}


def _run_cli(argv):
    from nx_gpumatch.cli import main

    err, out = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            rc = main(list(argv))
    except BaseException as exc:  # noqa: BLE001
        return {"status": "fail", "detail": f"raised {type(exc).__name__}: {exc}"[:800]}
    lines = err.getvalue().strip().splitlines()
    last = lines[-1].split("\r")[-1].strip() if lines else ""
    if rc != 2 or not last.startswith("error: "):
        return {"status": "fail", "detail": f"exit {rc}, stderr ends {last!r:.300}"}
    return {"status": "ok", "detail": last[:200]}


def main(first):
    import warnings

    warnings.simplefilter("ignore")
    import nx_gpumatch.cpu as cpu

    # Tiny inputs run interpreted however many cases there are (no compiles).
    cpu.INTERPRET_BUDGET = float("inf")
    all_cases = cases()
    print(json.dumps({"total": len(all_cases)}), flush=True)
    for i in range(first, len(all_cases)):
        print(json.dumps({"start": i}), flush=True)
        res = run_case(all_cases[i])
        print(json.dumps(dict(res, index=i)), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]))
