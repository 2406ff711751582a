"""Data derived from a Graph and its weights (edge ranking, rows sorted
best-first, usable degrees, total weight, unweighted view) is computed once and
reused by later calls on the same Graph, also through networkx's dispatch, and
stays within the memory the Graph's docstring states."""

import collections

import networkx as nx
import numpy as np
import pytest

import nx_gpumatch as gm
from nx_gpumatch.cpu import csr
from nx_gpumatch.graph import Graph


@pytest.fixture
def builds(monkeypatch):
    """Counts of each derived item built (by its key in the Graph's cache), and
    of edge rankings sorted (the costly part)."""
    counts = collections.Counter()
    cached = Graph.cached

    def counting(self, key, build):
        def counted():
            counts[key] += 1
            return build()

        return cached(self, key, counted)

    sort = csr.edge_order

    def counting_sort(weight):
        counts["sort"] += 1
        return sort(weight)

    monkeypatch.setattr(Graph, "cached", counting)
    monkeypatch.setattr(csr, "edge_order", counting_sort)
    return counts


def _graph():
    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 300, 1500), rng.integers(0, 300, 1500)
    return Graph.from_arrays(src, dst, rng.integers(0, 20, 1500))  # ties, unusable (0) edges


CALLS = {
    "suitor": lambda g: gm.max_weight_matching(g, algorithm="suitor", device="cpu"),
    "greedy": lambda g: gm.max_weight_matching(g, algorithm="greedy", device="cpu"),
    "local_max": lambda g: gm.max_weight_matching(g, algorithm="local_max", device="cpu"),
    "red_blue": lambda g: gm.max_weight_matching(g, algorithm="red_blue", device="cpu", seed=1),
    "maximal": lambda g: gm.maximal_matching(g, device="cpu"),
    "b_suitor": lambda g: gm.b_matching(g, 2, device="cpu"),
    "b_local_dominant": lambda g: gm.b_matching(g, 2, algorithm="local_dominant", device="cpu"),
    "b_greedy": lambda g: gm.b_matching(g, 3, algorithm="greedy", device="cpu"),
    "unweighted_greedy": lambda g: gm.max_weight_matching(
        g, weight=None, algorithm="greedy", device="cpu"
    ),
    "louvain": lambda g: gm.louvain_communities(g, seed=1, device="cpu"),
    "leiden": lambda g: gm.leiden_communities(g, seed=1, device="cpu"),
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_repeated_calls_build_nothing_again(case, builds):
    g = _graph()
    first = CALLS[case](g)
    after_first = dict(builds)
    for _ in range(2):
        again = CALLS[case](g)
        assert dict(builds) == after_first  # nothing derived was built again
    if isinstance(first, np.ndarray):
        assert np.array_equal(again, first)
    elif isinstance(first, tuple):
        assert all(np.array_equal(a, b) for a, b in zip(again, first))
    else:
        assert again == first
    assert builds["sort"] <= (2 if case.startswith("unweighted") else 1)


def test_the_families_share_one_ranking(builds):
    g = _graph()
    for case in ("greedy", "local_max", "red_blue", "b_suitor", "b_local_dominant", "b_greedy"):
        CALLS[case](g)
    assert builds["sort"] == 1 and builds["order"] == 1 and builds["arc_rank"] == 1
    g.clear_cache()  # forgets it: the next call ranks again
    CALLS["greedy"](g)
    assert builds["sort"] == 2


def test_other_weights_get_their_own_derived_data(builds):
    g = _graph()
    CALLS["greedy"](g)
    h = g.with_weights(20.0 - g.edge_weight)
    fresh = Graph.from_arrays(h.edge_src, h.edge_dst, h.edge_weight, num_nodes=h.num_nodes)
    want = CALLS["greedy"](fresh)
    assert np.array_equal(CALLS["greedy"](h), want)
    assert builds["sort"] == 3  # h ranks its own weights (as the fresh graph did)
    assert not np.array_equal(CALLS["greedy"](g), want)  # g keeps its own ranking
    assert builds["sort"] == 3


def _weighted_nx(seed=1):
    G = nx.gnm_random_graph(200, 700, seed=seed)
    for (u, v), w in zip(G.edges(), np.random.default_rng(seed).random(700).tolist()):
        G[u][v]["weight"] = w
    return G


def test_dispatched_calls_reuse_the_converted_graph_and_its_ranking(builds, monkeypatch):
    converted = []
    from_networkx = Graph.from_networkx.__func__

    def counting(cls, *args, **kwargs):
        converted.append(1)
        return from_networkx(cls, *args, **kwargs)

    monkeypatch.setattr(Graph, "from_networkx", classmethod(counting))
    G = _weighted_nx()
    with nx.config(cache_converted_graphs=True):
        first = nx.max_weight_matching(G, backend="gpumatch", algorithm="greedy")
        for _ in range(2):
            assert nx.max_weight_matching(G, backend="gpumatch", algorithm="greedy") == first
            nx.max_weight_matching(G, backend="gpumatch", algorithm="local_max")
        assert len(converted) == 1 and builds["sort"] == 1
        # a change through networkx's methods drops its cached conversion, and with
        # it the derived data: the heavy new edge is matched
        G.add_edge(0, 199, weight=10.0)  # the heaviest edge: greedy takes it
        M = nx.max_weight_matching(G, backend="gpumatch", algorithm="greedy")
        assert len(converted) == 2 and builds["sort"] == 2
        assert (0, 199) in M or (199, 0) in M


def test_derived_data_stays_within_the_stated_memory():
    """The Graph docstring's bound: derived data adds at most ~90 bytes per
    edge and ~40 per vertex (weights and unweighted view), against the
    graph's own ~52 and ~17."""
    g = _graph()
    for case in CALLS:
        CALLS[case](g)
    gm.matching_weight(g, CALLS["greedy"](g))  # the edge look-up keys

    def nbytes(x):
        if isinstance(x, np.ndarray):
            return x.nbytes
        if isinstance(x, tuple | list):
            return sum(nbytes(y) for y in x)
        return 0

    held = sum(nbytes(v) for v in g._cache.values())
    u = g.unweighted()
    assert u is not g
    held += sum(nbytes(v) for k, v in u._cache.items() if v is not g._cache.get(k))
    held += u.edge_weight.nbytes + u.weights.nbytes + u.loop_weight.nbytes
    assert held <= 90 * g.num_edges + 40 * g.num_nodes
