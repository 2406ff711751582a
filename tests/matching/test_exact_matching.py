"""Exact maximum-weight matching (blossom kernel) against networkx and brute force.

Totals must equal networkx's exactly for integer weights and to 1e-9 (relative)
for floats; with ``maxcardinality=True`` the cardinality must match too.
About 2,400 random graphs are checked: 1,200 seeded ones (n <= 60, every
weight kind, sparse to dense, with and without maxcardinality), 800 from
hypothesis (n <= 9, against an exhaustive search) and a few larger ones.
"""

import math
import random

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nx_gpumatch
from nx_gpumatch.cpu import blossom
from nx_gpumatch.generators import random_graph
from nx_gpumatch.graph import Graph

WEIGHT_KINDS = ("int", "negative", "float", "ties", "big", "unit", "negfloat")


# ----------------------------------------------------------------- helpers
def _weight(rng, kind):
    if kind == "int":
        return rng.randint(1, 20)
    if kind == "negative":
        return rng.randint(-10, 10)
    if kind == "float":
        return rng.random()
    if kind == "ties":
        return rng.choice((1, 2, 3))
    if kind == "big":
        return rng.randint(1, 10**12)
    if kind == "negfloat":
        return rng.uniform(-1.0, 1.0)
    return 1


def _seeded_graph(rng):
    n = rng.randint(1, 60)
    p = rng.choice((0.03, 0.08, 0.15, 0.3, 0.6, 1.0))
    G = nx.gnp_random_graph(n, p, seed=rng.getrandbits(32))
    kind = rng.choice(WEIGHT_KINDS)
    for u, v in G.edges():
        G[u][v]["weight"] = _weight(rng, kind)
    return G, kind


def _total(G, M, weight="weight"):
    return sum(G[u][v].get(weight, 1) if weight is not None else 1 for u, v in M)


def _assert_matching(G, M):
    seen = set()
    for u, v in M:
        assert G.has_edge(u, v), (u, v)
        assert u != v
        assert u not in seen and v not in seen
        seen.update((u, v))


def _assert_same_as_networkx(G, maxcardinality, weight="weight"):
    ours = nx_gpumatch.max_weight_matching(G, weight=weight, maxcardinality=maxcardinality)
    _assert_matching(G, ours)
    ref = nx.max_weight_matching(
        G, maxcardinality=maxcardinality, weight=weight, backend="networkx"
    )
    a, b = _total(G, ours, weight), _total(G, ref, weight)
    if isinstance(a, int) and isinstance(b, int):
        assert a == b, (a, b)
    else:
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (a, b)
    if maxcardinality:
        assert len(ours) == len(ref)
    return ours


def _brute_force(n, edges, maxcardinality):
    """Best (cardinality, weight) (or weight) over all matchings, by a DP on
    the set of still-available vertices."""
    adj = [dict() for _ in range(n)]
    for u, v, w in edges:
        adj[u][v] = w
        adj[v][u] = w
    memo = {}

    def best(mask):
        if mask == 0:
            return (0, 0)
        if mask in memo:
            return memo[mask]
        i = (mask & -mask).bit_length() - 1
        rest = mask & ~(1 << i)
        res = best(rest)
        for j, w in adj[i].items():
            if rest >> j & 1:
                c, s = best(rest & ~(1 << j))
                cand = (c + 1, s + w)
                if maxcardinality:
                    res = max(res, cand)
                elif cand[1] > res[1]:
                    res = cand
        memo[mask] = res
        return res

    return best((1 << n) - 1)


# ------------------------------------------------- random graphs, seeded
@pytest.mark.parametrize("chunk", range(8))
def test_seeded_random_graphs_match_networkx(chunk):
    rng = random.Random(1000 + chunk)
    for _ in range(150):
        G, _kind = _seeded_graph(rng)
        _assert_same_as_networkx(G, False)
        _assert_same_as_networkx(G, True)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind", ["uniform", "integer"])
def test_larger_graphs_match_networkx(seed, kind):
    g = random_graph(150, 600, seed=seed, weights=kind)
    G = g.to_networkx()
    if kind == "integer":
        for u, v, d in G.edges(data=True):
            d["weight"] = int(d["weight"])
    _assert_same_as_networkx(G, False)
    _assert_same_as_networkx(G, seed == 0)


# ------------------------------------------------------------ hypothesis
@st.composite
def small_graphs(draw):
    n = draw(st.integers(0, 9))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    chosen = (
        draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs))) if pairs else []
    )
    kind = draw(st.sampled_from(WEIGHT_KINDS))
    if kind in ("float", "negfloat"):
        lo = 0.0 if kind == "float" else -1.0
        ws = st.floats(lo, 1.0, allow_nan=False, allow_infinity=False)
    elif kind == "ties":
        ws = st.sampled_from((1, 2, 3))
    elif kind == "negative":
        ws = st.integers(-10, 10)
    elif kind == "big":
        ws = st.integers(1, 10**12)
    elif kind == "unit":
        ws = st.just(1)
    else:
        ws = st.integers(1, 20)
    edges = [(u, v, draw(ws)) for u, v in chosen]
    return n, edges


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_graphs(), st.booleans())
def test_hypothesis_against_brute_force(data, maxcardinality):
    n, edges = data
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from(edges)
    M = nx_gpumatch.max_weight_matching(G, maxcardinality=maxcardinality)
    _assert_matching(G, M)
    card, total = _brute_force(n, edges, maxcardinality)
    got = _total(G, M)
    assert (
        math.isclose(got, total, rel_tol=1e-9, abs_tol=1e-12)
        if isinstance(total, float)
        else got == total
    )
    if maxcardinality:
        assert len(M) == card


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_graphs(), st.booleans())
def test_hypothesis_against_networkx(data, maxcardinality):
    n, edges = data
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from(edges)
    _assert_same_as_networkx(G, maxcardinality)


# ------------------------------------------------------ structured cases
@pytest.mark.parametrize("n", [3, 5, 9, 15])
def test_complete_graphs_equal_weights(n):
    # every odd subset is a candidate blossom
    G = nx.complete_graph(n)
    for maxc in (False, True):
        M = _assert_same_as_networkx(G, maxc, weight=None)
        assert len(M) == n // 2


def test_odd_cycles_and_petersen():
    for G in (nx.cycle_graph(7), nx.petersen_graph(), nx.circular_ladder_graph(5)):
        for maxc in (False, True):
            _assert_same_as_networkx(G, maxc, weight=None)


def test_random_cubic_maxcardinality():
    # unit weights with maxcardinality: the answer is a maximum matching
    for seed in range(5):
        G = nx.random_regular_graph(3, 40, seed=seed)
        M = _assert_same_as_networkx(G, True, weight=None)
        assert len(M) == len(
            nx.max_weight_matching(G, maxcardinality=True, weight=None, backend="networkx")
        )


def test_cold_and_warm_start_agree():
    rng = random.Random(5)
    for _ in range(60):
        G, _kind = _seeded_graph(rng)
        g = Graph.from_networkx(G)
        args = (g.num_nodes, g.indptr, g.indices, g.arc_edge, g.edge_src, g.edge_dst, g.edge_weight)
        for maxc in (False, True):
            a = blossom.max_weight_matching(*args, maxcardinality=maxc, warm=True)
            b = blossom.max_weight_matching(*args, maxcardinality=maxc, warm=False)
            wa = g.edge_weight[_edge_ids(g, a)].sum()
            wb = g.edge_weight[_edge_ids(g, b)].sum()
            assert math.isclose(wa, wb, rel_tol=1e-9, abs_tol=1e-12)
            assert (a >= 0).sum() == (b >= 0).sum() or not maxc


def _edge_ids(g, mate):
    u = np.flatnonzero(mate > np.arange(mate.shape[0]))
    keys = g.edge_src.astype(np.int64) * g.num_nodes + g.edge_dst
    return np.searchsorted(keys, u * g.num_nodes + mate[u])


def test_integer_weights_are_exact():
    # weights near 2**40 differ by 1: float rounding would lose the difference
    G = nx.Graph()
    base = 2**40
    G.add_weighted_edges_from(
        [(0, 1, base + 1), (1, 2, base + 3), (2, 3, base + 1), (0, 3, base), (3, 4, 7)]
    )
    ref = nx.max_weight_matching(G, backend="networkx")
    ours = nx_gpumatch.max_weight_matching(G)
    assert _total(G, ours) == _total(G, ref)


def test_isolated_and_disconnected():
    G = nx.Graph()
    G.add_nodes_from(range(10))
    G.add_weighted_edges_from([(0, 1, 3), (1, 2, 4), (5, 6, 1), (7, 8, -2)])
    for maxc in (False, True):
        M = _assert_same_as_networkx(G, maxc)
        assert ((7, 8) in M or (8, 7) in M) == maxc
    assert nx_gpumatch.max_weight_matching(nx.empty_graph(5)) == set()
    assert nx_gpumatch.max_weight_matching(nx.Graph()) == set()


def test_thread_count_does_not_matter(nthreads):
    g = random_graph(300, 1500, seed=3)
    a = nx_gpumatch.max_weight_matching(g, threads=nthreads)
    b = nx_gpumatch.max_weight_matching(g, threads=1)
    assert np.array_equal(a, b)


# ---------------------------------------------------- inputs and outputs
def test_graph_and_dataframe_inputs():
    g = random_graph(80, 300, seed=2, weights="integer")
    G = g.to_networkx()
    ref = _total(G, nx.max_weight_matching(G, backend="networkx"))
    mate = nx_gpumatch.max_weight_matching(g, algorithm="blossom")
    assert isinstance(mate, np.ndarray) and mate.dtype == np.int64
    assert g.edge_weight[_edge_ids(g, mate)].sum() == ref
    df = pd.DataFrame({"source": g.edge_src, "target": g.edge_dst, "weight": g.edge_weight})
    out = nx_gpumatch.max_weight_matching(df)
    assert isinstance(out, pd.DataFrame)
    assert out["weight"].sum() == ref
    assert len(set(out["source"]) | set(out["target"])) == 2 * len(out)


def test_dispatch_through_networkx():
    rng = random.Random(9)
    for _ in range(20):
        G, _kind = _seeded_graph(rng)
        for maxc in (False, True):
            ours = nx.max_weight_matching(G, maxcardinality=maxc, backend="gpumatch")
            assert all(type(x) is int for e in ours for x in e)
            ref = nx.max_weight_matching(G, maxcardinality=maxc, backend="networkx")
            assert math.isclose(_total(G, ours), _total(G, ref), rel_tol=1e-9, abs_tol=1e-12)
            if maxc:
                assert len(ours) == len(ref)
        ours = nx.min_weight_matching(G, backend="gpumatch")
        ref = nx.min_weight_matching(G, backend="networkx")
        _assert_matching(G, ours)
        assert len(ours) == len(ref)
        assert math.isclose(_total(G, ours), _total(G, ref), rel_tol=1e-9, abs_tol=1e-12)
    G = nx.path_graph(4)
    assert len(nx.max_weight_matching(G, backend="gpumatch", algorithm="blossom")) == 2


def test_min_weight_matching_negative_and_float():
    G = nx.Graph()
    G.add_weighted_edges_from(
        [(1, 2, -1.5), (1, 3, 2.25), (2, 3, 0.5), (3, 4, -3.0), (2, 4, 1.0), (4, 5, 0.0)]
    )
    ours = nx.min_weight_matching(G, backend="gpumatch")
    ref = nx.min_weight_matching(G, backend="networkx")
    assert len(ours) == len(ref)
    assert math.isclose(_total(G, ours), _total(G, ref))


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize("cls", [nx.DiGraph, nx.MultiGraph, nx.MultiDiGraph])
def test_directed_and_multigraph_rejected(cls):
    G = cls([(0, 1), (1, 2)])
    with pytest.raises(nx.NetworkXNotImplemented):
        nx_gpumatch.max_weight_matching(G)
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.max_weight_matching(G, backend="gpumatch")
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.min_weight_matching(G, backend="gpumatch")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_weights_rejected(bad):
    G = nx.Graph()
    G.add_weighted_edges_from([(0, 1, 1.0), (1, 2, bad)])
    with pytest.raises(ValueError, match="finite"):
        nx_gpumatch.max_weight_matching(G)
    with pytest.raises(ValueError, match="finite"):
        nx.max_weight_matching(G, backend="gpumatch")
    with pytest.raises(ValueError, match="finite"):
        blossom.max_weight_matching(
            3,
            np.array([0, 1, 3, 4]),
            np.array([1, 0, 2, 1]),
            np.array([0, 0, 1, 1]),
            np.array([0, 1]),
            np.array([1, 2]),
            np.array([1.0, bad]),
        )


@pytest.mark.parametrize("maxcardinality", [False, True])
def test_huge_finite_weights(maxcardinality):
    """Weights near float64's largest: duals and slacks would overflow (a
    wrong matching, or an internal error); they are scaled by a power of two,
    which changes no comparison, so the result is networkx's on the same
    graph at unit scale."""
    K0 = nx.karate_club_graph()
    K = K0.copy()
    for _, _, d in K.edges(data=True):
        d["weight"] *= 2.0**1010  # up to about 7e305
    want = nx.max_weight_matching(K0, maxcardinality=maxcardinality)
    for got in (
        nx_gpumatch.max_weight_matching(K, maxcardinality=maxcardinality),
        nx.max_weight_matching(K, maxcardinality=maxcardinality, backend="gpumatch"),
    ):
        assert len(got) == len(want)
        assert sum(K0[u][v]["weight"] for u, v in got) == sum(K0[u][v]["weight"] for u, v in want)
    G = nx.gnm_random_graph(6, 12, seed=1)
    nx.set_edge_attributes(G, 1.7e308, "weight")
    assert len(nx_gpumatch.max_weight_matching(G)) == 3
    got = nx_gpumatch.min_weight_matching(K)
    assert sum(K0[u][v]["weight"] for u, v in got) == sum(
        K0[u][v]["weight"] for u, v in nx.min_weight_matching(K0)
    )
    # scaled down, the smallest weight would round: an error, not a guess
    G = nx.path_graph(4)
    nx.set_edge_attributes(G, {(0, 1): 1e305, (1, 2): 1.5e305, (2, 3): 5e-324}, "weight")
    with pytest.raises(ValueError, match="too wide a range"):
        nx_gpumatch.max_weight_matching(G)
