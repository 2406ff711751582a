"""networkx fidelity of the matching functions: DataFrames and networkx's
decorators, and no cache notes from the backend's own conversions."""

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


# The note is silenced for this backend under a strict filter too: with
# warnings as errors, a repeated dispatched call would raise.
def test_repeated_dispatched_calls_under_error_filter(cache_notes_on):
    G = nx.path_graph(8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in _dispatched_calls(G):  # fill networkx's cache
            call()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for call in _dispatched_calls(G):
            call()
