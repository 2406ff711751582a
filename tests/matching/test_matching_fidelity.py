"""networkx fidelity of the matching functions: DataFrames and networkx's
decorators, and networkx's note whenever it reuses a conversion."""

import warnings

import networkx as nx
import pandas as pd
import pytest

import nx_gpumatch as gm

DF = pd.DataFrame({"source": [0, 1, 2, 3, 4], "target": [1, 2, 3, 4, 5]})


def _pairs(result):
    if isinstance(result, pd.DataFrame):
        result = result.to_numpy().tolist()
    return {frozenset(map(int, e)) for e in result}


def test_package_maximal_matching_takes_the_default_columns():
    out = gm.maximal_matching(DF)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["source", "target"]
    G = nx.from_pandas_edgelist(DF)
    assert nx.is_maximal_matching(G, {tuple(map(int, e)) for e in out.to_numpy().tolist()})
    # greedy in (min id, max id) order on a path: every other edge from the start
    assert _pairs(out) == {frozenset((0, 1)), frozenset((2, 3)), frozenset((4, 5))}


def test_networkx_entry_point_cannot_take_a_dataframe():
    # networkx applies not_implemented_for("directed") outside its dispatcher, so
    # G.is_directed() runs on the DataFrame before any backend hook; the README
    # says to call gm.maximal_matching or pass a gm.Graph instead. If networkx
    # ever dispatches first, this fails and the README note can go.
    with pytest.raises(AttributeError, match="is_directed"):
        nx.maximal_matching(DF, backend="gpumatch")


def test_networkx_entry_point_takes_the_backend_graph():
    g = gm.Graph.from_pandas(DF)
    got = nx.maximal_matching(g)  # a backend graph dispatches by itself
    assert _pairs(got) == _pairs(gm.maximal_matching(DF))
    assert _pairs(nx.max_weight_matching(g)) == _pairs(got)


@pytest.fixture
def cache_notes_on():
    """Undo the test suite's global opt-out, so networkx would print its note."""
    ignored = nx.config.warnings_to_ignore
    had = "cache" in ignored
    ignored.discard("cache")
    yield
    if had:
        ignored.add("cache")


def _dispatched_calls(G):
    return [
        lambda: nx.maximal_matching(G, backend="gpumatch"),
        lambda: nx.max_weight_matching(G, backend="gpumatch", algorithm="suitor"),
        lambda: nx.max_weight_matching(G, backend="gpumatch"),
        lambda: nx.min_weight_matching(G, backend="gpumatch"),
    ]


def test_repeated_dispatched_calls_under_error_filter(cache_notes_on):
    # networkx's note on a reused conversion stays on (it is what warns of a
    # stale answer after a direct edit); opting out of it runs a strict filter
    G = nx.path_graph(8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in _dispatched_calls(G):  # fill networkx's cache
            call()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for call in _dispatched_calls(G):
            with pytest.raises(UserWarning, match="cached graph is being used"):
                call()
        nx.config.warnings_to_ignore.add("cache")
        for call in _dispatched_calls(G):
            call()


@pytest.mark.parametrize("value", [100.0, float("nan")])
def test_direct_edge_edit_is_never_answered_silently(cache_notes_on, value):
    # a direct edit is invisible to networkx's cache: the next call would answer
    # from the old conversion, so it must at least say so
    G = nx.path_graph(4)
    nx.set_edge_attributes(G, 1.0, "weight")
    calls = [
        lambda: nx.max_weight_matching(G, backend="gpumatch"),
        lambda: nx.community.louvain_communities(G, backend="gpumatch", seed=1),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the second call reuses the first's conversion
        for call in calls:
            call()
    G.edges[1, 2]["weight"] = value
    for call in calls:
        with pytest.warns(UserWarning, match="must not have been manually mutated"):
            call()
    G.__networkx_cache__.clear()  # the documented way to make the edit seen
    if value != value:
        with pytest.raises(ValueError, match="finite"):
            calls[0]()
    else:
        assert {frozenset(e) for e in calls[0]()} == {frozenset((1, 2))}
