"""The networkx contract: registration, signatures, fallbacks, input and result
types, and clear errors for bad input."""

import inspect
import os
import subprocess
import sys
import warnings
from decimal import Decimal
from fractions import Fraction

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from networkx.utils.backends import _registered_algorithms

import nx_gpumatch as gm
from _nx_gpumatch import FUNCTIONS, get_info
from nx_gpumatch import Graph
from nx_gpumatch.algorithms import _registry
from nx_gpumatch.algorithms._registry import dispatched
from nx_gpumatch.interface import BackendInterface


def _run_python(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


# ------------------------------------------------------------- registration
def test_import_networkx_does_not_import_the_package():
    out = _run_python(
        "import sys, networkx as nx\n"
        "assert 'gpumatch' in nx.config.backends\n"
        "print(sorted(m for m in sys.modules if m.startswith('nx_gpumatch')))\n"
    )
    assert out.stdout.strip() == "[]"


def test_functions_are_the_registered_ones():
    registry = dispatched()
    assert set(registry) == set(FUNCTIONS)
    assert set(get_info()["functions"]) == set(FUNCTIONS)
    for name, entry in registry.items():
        assert getattr(BackendInterface, name) is entry.func, name
        if name not in NEWER_THAN_3_4:
            assert name in _registered_algorithms, f"networkx has no dispatched {name}"


def test_info_file_is_generated_from_the_registrations():
    """_nx_gpumatch/_info.py is what ``python -m nx_gpumatch.algorithms --write``
    writes from the registrations; an edit of one without the other fails here."""
    with open(_registry.info_path(), encoding="utf-8") as f:
        assert f.read() == _registry.info_text(), (
            "_nx_gpumatch/_info.py differs from the registrations: run "
            "python -m nx_gpumatch.algorithms --write"
        )


def test_info_check_command_reports_drift(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "_info.py"
    stale.write_text("FUNCTIONS = {}\n", encoding="utf-8")
    monkeypatch.setattr(_registry, "info_path", lambda: str(stale))
    assert _registry.main([]) == 1
    assert "--write" in capsys.readouterr().out
    assert _registry.main(["--write"]) == 0
    assert stale.read_text(encoding="utf-8") == _registry.info_text()
    assert _registry.main([]) == 0


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_dispatched_modules_mirror_networkx(name):
    """Each dispatched function lives at networkx's path of it, under
    nx_gpumatch (networkx.algorithms.community.louvain ->
    nx_gpumatch.algorithms.community.louvain)."""
    if name not in _registered_algorithms:
        pytest.skip(f"this networkx ({nx.__version__}) does not declare {name}")
    theirs = _registered_algorithms[name].orig_func.__module__
    assert theirs.startswith("networkx.algorithms.")
    assert dispatched()[name].module == "nx_gpumatch" + theirs[len("networkx") :]


def test_can_run_must_take_the_functions_parameters():
    def func(G, weight="weight", *, device=None):
        pass

    def can_run(G, *, device=None):
        return True

    with pytest.raises(TypeError, match="can_run of not_a_function"):
        _registry.networkx_algorithm("not_a_function", docs="", can_run=can_run)(func)
    assert "not_a_function" not in _registry.REGISTRY


# Dispatched names that networkx declares only from 3.5 on.
NEWER_THAN_3_4 = {"leiden_communities", "leiden_partitions"}


# ------------------------------------------------------------ signatures
def _nx_parameters(name):
    if name not in _registered_algorithms:
        pytest.skip(f"this networkx ({nx.__version__}) does not declare {name}")
    if name in NEWER_THAN_3_4:
        from nx_gpumatch.algorithms.community.leiden import networkx_implements_leiden

        if networkx_implements_leiden():
            pytest.skip(f"networkx {nx.__version__} runs {name} itself (the backend defers)")
    return list(inspect.signature(_registered_algorithms[name].orig_func).parameters.values())


def _check_signature(name, func):
    """networkx's parameters first, same names, kinds and defaults, in the same
    order; anything else keyword-only after them (as in nx-cugraph's API test)."""
    theirs = _nx_parameters(name)
    ours = list(inspect.signature(func).parameters.values())
    assert len(ours) >= len(theirs), (name, ours, theirs)
    for a, b in zip(ours, theirs):
        assert (a.name, a.kind, a.default) == (b.name, b.kind, b.default), (name, a, b)
    for extra in ours[len(theirs) :]:
        assert extra.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD), (
            f"{name}: extra parameter {extra.name!r} must be keyword-only"
        )


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_dispatched_signatures_match_networkx(name):
    _check_signature(name, getattr(BackendInterface, name))
    assert getattr(BackendInterface, name).__name__ == name  # errors name networkx's function


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_package_functions_named_like_networkx_match_its_signature(name):
    func = getattr(gm, name, None)
    if func is None:
        pytest.skip(f"nx_gpumatch has no public {name}")
    _check_signature(name, func)


def test_positional_arguments_in_networkx_order():
    G = nx.Graph([(0, 1, {"w": 1}), (1, 2, {"w": 5}), (2, 3, {"w": 1})])
    assert gm.max_weight_matching(G, True, "w") == {(0, 1), (2, 3)}
    assert {frozenset(e) for e in gm.max_weight_matching(G, False, "w")} == {frozenset((1, 2))}
    assert {frozenset(e) for e in gm.min_weight_matching(G, "w")} == {
        frozenset((0, 1)),
        frozenset((2, 3)),
    }
    with pytest.raises(TypeError, match=r"^max_weight_matching\(\)"):
        nx.max_weight_matching(G, backend="gpumatch", no_such_option=1)


# --------------------------------------------------------------- fallback
@pytest.mark.parametrize(
    "weights",
    [
        [Decimal("1.5"), Decimal("2.5"), Decimal("1.5")],
        [Fraction(1, 3), Fraction(2, 3), Fraction(1, 3)],
        [2**60 + 1, 2**61, 2**60 + 1],
        [True, True, False],
    ],
    ids=["decimal", "fraction", "int-beyond-2**53", "bool"],
)
def test_weights_the_backend_cannot_hold_fall_back_to_networkx(weights):
    G = nx.Graph()
    for (u, v), w in zip([(0, 1), (1, 2), (2, 3)], weights):
        G.add_edge(u, v, weight=w)
    reason = BackendInterface.can_run("max_weight_matching", (G,), {})
    assert isinstance(reason, str) and reason, reason
    assert isinstance(BackendInterface.can_run("min_weight_matching", (G, "weight"), {}), str)
    assert BackendInterface.can_run("max_weight_matching", (G,), {"weight": None}) is True
    expect = nx.max_weight_matching(G, backend="networkx")
    with nx.config(backend_priority=["gpumatch"]):
        assert nx.max_weight_matching(G) == expect
        assert nx.min_weight_matching(G) == nx.min_weight_matching(G, backend="networkx")
    # the package itself takes exact values and refuses to round the others
    if all(float(w) == w for w in weights) and not isinstance(weights[0], bool):
        assert gm.max_weight_matching(G, algorithm="greedy") == {(1, 2)}
    else:
        with pytest.raises(ValueError, match="exact float64|real numbers"):
            gm.max_weight_matching(G, algorithm="greedy")


@pytest.mark.parametrize(
    "weight, why",
    [(Decimal("1.5"), "Decimal"), (Fraction(1, 3), "Fraction"), (2**60 + 1, "2\\*\\*53")],
)
def test_named_backend_says_why_it_refuses(weight, why):
    # networkx raised a bare NotImplementedError; the reason was in its debug log
    G = nx.Graph()
    for u, k in ((0, 1), (1, 3), (2, 1)):
        G.add_edge(u, u + 1, weight=weight * k)
    with pytest.raises(
        NotImplementedError, match=f"not implemented by 'gpumatch'.*because: .*{why}"
    ):
        nx.max_weight_matching(G, backend="gpumatch")
    # networkx picking the backend itself still runs its own code
    with nx.config(backend_priority=["gpumatch"]):
        assert nx.max_weight_matching(G) == nx.max_weight_matching(G, backend="networkx")


def test_string_weights_raise_type_error_as_networkx():
    G = nx.Graph([(0, 1, {"weight": "heavy"}), (1, 2, {"weight": 1.0})])
    with pytest.raises(TypeError):
        nx.max_weight_matching(G, backend="networkx")
    with pytest.raises(TypeError, match="weight 'heavy' of type str; weights must be numbers"):
        nx.max_weight_matching(G, backend="gpumatch")
    with pytest.raises(TypeError, match="weights must be numbers"):
        nx.community.louvain_communities(G, backend="gpumatch")
    with nx.config(backend_priority=["gpumatch"]), pytest.raises(TypeError):
        nx.max_weight_matching(G)  # networkx's own TypeError
    reason = BackendInterface.can_run("max_weight_matching", (G,), {})
    assert "float64" not in str(reason)


def test_plain_weights_run_on_the_backend():
    G = nx.path_graph(4)
    assert BackendInterface.can_run("max_weight_matching", (G,), {}) is True
    G.add_edge(3, 4, weight=2**53)
    assert BackendInterface.can_run("max_weight_matching", (G,), {}) is True
    G.add_edge(4, 5, weight=float("nan"))  # bad input: a clear error, not networkx's guess
    with pytest.raises(ValueError, match="finite"):
        BackendInterface.can_run("max_weight_matching", (G,), {})
    assert BackendInterface.can_run("max_weight_matching", (G, False, None), {}) is True
    with pytest.raises(ValueError, match="finite"):
        nx.max_weight_matching(G, backend="gpumatch")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -np.inf])
def test_non_finite_weights_raise_on_every_call(bad):
    # raised in the conversion, networkx would cache the failure: its next call
    # on the graph then ran networkx's own code or raised NotImplementedError
    G = nx.Graph([(0, 1, {"weight": bad}), (1, 2, {"weight": 1.0})])
    calls = [
        lambda: nx.max_weight_matching(G, backend="gpumatch"),
        lambda: nx.max_weight_matching(G, maxcardinality=True, backend="gpumatch"),
        lambda: nx.min_weight_matching(G, backend="gpumatch"),
        lambda: nx.community.louvain_communities(G, seed=1, backend="gpumatch"),
    ]
    for call in calls + calls:
        with pytest.raises(ValueError, match="finite"):
            call()
    with nx.config(backend_priority=["gpumatch"]):
        for _ in range(2):
            with pytest.raises(ValueError, match="finite"):
                nx.max_weight_matching(G)
    # weights not asked for are not looked at
    assert len(nx.max_weight_matching(G, weight=None, backend="gpumatch")) == 1


def test_weight_none_ignores_a_cached_weighted_conversion():
    # networkx hands a function called with weight=None any conversion it
    # cached, weights included; matching must count every edge as 1 then
    G = nx.path_graph(4)
    G[1][2]["weight"] = 3
    G[0][1]["weight"] = -1
    want = nx.max_weight_matching(G, weight=None)
    assert len(want) == 2
    for algorithm in (None, "suitor"):
        kw = {} if algorithm is None else {"algorithm": algorithm}
        nx.max_weight_matching(G, backend="gpumatch", **kw)  # caches the weighted graph
        got = nx.max_weight_matching(G, weight=None, backend="gpumatch", **kw)
        assert len(got) == 2 and nx.is_matching(G, got)
    nx.min_weight_matching(G, backend="gpumatch")
    got = nx.min_weight_matching(G, weight=None, backend="gpumatch")
    assert len(got) == 2 and nx.is_matching(G, got)


def test_integer_weights_beyond_2_53_never_rounded():
    # float64 makes these two weights equal; the edge order would then pick (0, 1)
    src, dst, w = [0, 1], [1, 2], np.array([2**60, 2**60 + 1], np.int64)
    with pytest.raises(ValueError, match="exact float64"):
        Graph.from_arrays(src, dst, w)
    df = pd.DataFrame({"source": src, "target": dst, "weight": w})
    with pytest.raises(ValueError, match="exact float64"):
        gm.max_weight_matching(df, algorithm="suitor")


def test_weight_check_follows_networkx_cache_setting():
    # with networkx's cache off, a weight changed in place must be seen again
    G = nx.path_graph(4)
    nx.set_edge_attributes(G, 2, "weight")
    with nx.config(cache_converted_graphs=False, backend_priority=["gpumatch"]):
        nx.max_weight_matching(G)
        G[1][2]["weight"] = Fraction(1, 3)  # networkx keeps it exact: its own answer
        assert nx.max_weight_matching(G) == nx.max_weight_matching(G, backend="networkx")


def test_package_graph_through_networkx():
    df = pd.DataFrame({"source": list("abc"), "target": list("bcd"), "weight": [1, 5, 1]})
    g = Graph.from_pandas(df)
    G = nx.from_pandas_edgelist(df, edge_attr="weight")
    assert nx.community.louvain_communities(g, seed=1) == gm.louvain_communities(G, seed=1)
    if hasattr(nx.community, "leiden_communities") and not _nx_has_own_leiden():
        assert nx.community.leiden_communities(g, seed=1) == gm.leiden_communities(G, seed=1)
    assert nx.max_weight_matching(g) == {("b", "c")}
    assert nx.max_weight_matching(g, weight=None) == {("a", "b"), ("c", "d")}
    # it holds one attribute's weights: another one cannot be read from it
    for call in (nx.max_weight_matching, nx.min_weight_matching):
        with pytest.raises(ValueError, match="holds the weights of 'weight', not 'other'"):
            call(g, weight="other")
    # without weights every edge weighs 1, whatever attribute a call names
    g = Graph.from_arrays([0, 1, 2], [1, 2, 3])
    assert nx.max_weight_matching(g, weight="other") == {(0, 1), (2, 3)}


def _nx_has_own_leiden():
    from nx_gpumatch.algorithms.community.leiden import networkx_implements_leiden

    return networkx_implements_leiden()


# ------------------------------------------------------ DataFrames in and out
def test_dataframe_without_weight_column_weighs_one():
    df = pd.DataFrame({"a": [0, 1, 2], "b": [1, 2, 3]})
    out = gm.max_weight_matching(df, algorithm="suitor", source="a", target="b")
    assert list(out.columns) == ["a", "b"]
    assert {frozenset(r) for r in out.itertuples(index=False)} == {
        frozenset((0, 1)),
        frozenset((2, 3)),
    }
    assert gm.matching_weight(df, out, source="a", target="b") == 2.0


@pytest.mark.parametrize(
    "call",
    [
        lambda df, **kw: gm.max_weight_matching(df, **kw),
        lambda df, **kw: gm.max_weight_matching(df, algorithm="suitor", **kw),
        lambda df, **kw: gm.min_weight_matching(df, **kw),
        lambda df, **kw: gm.matching_weight(df, gm.maximal_matching(df), **kw),
        lambda df, **kw: gm.b_matching(df, 1, **kw),
        lambda df, **kw: gm.b_matching_weight(df, gm.b_matching(df, 1, weight=None), **kw),
        lambda df, **kw: gm.louvain_communities(df, seed=1, **kw),
        lambda df, **kw: gm.louvain_partitions(df, seed=1, **kw),
        lambda df, **kw: gm.leiden_partitions(df, seed=1, **kw),
        lambda df, **kw: gm.leiden_communities(df, seed=1, **kw),
        lambda df, **kw: gm.greedy_matching_smi(df, **kw),
        lambda df, **kw: gm.Graph.from_pandas(df, **kw),
    ],
)
def test_dataframe_named_weight_column_must_exist(call):
    # a misspelt weight column gave unit weights without a word
    df = pd.DataFrame({"source": [0, 1, 2], "target": [1, 2, 3], "w": [1.0, 5.0, 1.0]})
    with pytest.raises(ValueError, match="weight column 'cost' not in DataFrame"):
        r = call(df, weight="cost")
        if inspect.isgenerator(r):
            next(r)
    call(df, weight="w")  # an existing column, and no column at all under the default name
    call(df.drop(columns="w"), weight="weight")


def test_dataframe_results_keep_columns_orientation_and_dtypes():
    # edges written "backwards" (source > target) and an int weight column
    df = pd.DataFrame(
        {
            "to": np.array([10, 30, 30], np.int64),
            "frm": np.array([20, 20, 40], np.int64),
            "cost": np.array([3, 5, 3], np.int64),
            "other": ["x", "y", "z"],
        }
    )
    for out in (
        gm.max_weight_matching(df, weight="cost", algorithm="suitor", source="frm", target="to"),
        gm.max_weight_matching(df, weight="cost", source="frm", target="to"),
        gm.b_matching(df, 1, weight="cost", source="frm", target="to"),
    ):
        assert list(out.columns) == ["frm", "to", "cost"]
        assert out["frm"].dtype == np.int64 and out["to"].dtype == np.int64
        assert out["cost"].dtype == np.int64
        rows = set(map(tuple, out.to_numpy().tolist()))
        assert rows <= set(map(tuple, df[["frm", "to", "cost"]].to_numpy().tolist()))
    best = gm.max_weight_matching(df, weight="cost", source="frm", target="to")
    assert set(map(tuple, best.to_numpy().tolist())) == {(20, 10, 3), (40, 30, 3)}


def test_maximal_matching_takes_dataframes_like_the_others():
    df = pd.DataFrame({"u": ["a", "b", "c"], "v": ["b", "c", "d"]})
    out = gm.maximal_matching(df, source="u", target="v")
    assert list(out.columns) == ["u", "v"]
    assert gm.is_matching(df, out, maximal=True, source="u", target="v")
    G = nx.from_pandas_edgelist(df, "u", "v")
    assert nx.is_maximal_matching(G, set(map(tuple, out.to_numpy().tolist())))


# -------------------------------------------------------------- validation
def test_weight_of_a_non_edge_names_the_pair():
    G = nx.path_graph(4)
    with pytest.raises(ValueError, match=r"\(0, 2\) is not an edge"):
        gm.matching_weight(G, {(0, 2)})
    with pytest.raises(ValueError, match=r"\(0, 3\) is not an edge"):
        gm.b_matching_weight(G, {(0, 1), (0, 3)})
    g = Graph.from_networkx(G)
    with pytest.raises(ValueError, match=r"\(0, 2\) is not an edge"):
        gm.matching_weight(g, np.array([2, -1, 0, -1]))
    with pytest.raises(ValueError, match="not a node"):
        gm.matching_weight(G, {(0, 99)})
    assert not gm.is_matching(G, {(0, 2)})


def test_is_matching_rejects_ids_outside_the_graph():
    g = Graph.from_networkx(nx.path_graph(4))
    assert gm.is_matching(g, np.array([1, 0, 3, 2]))
    assert not gm.is_matching(g, np.array([1, 0, -5, -1]))
    assert not gm.is_matching(g, np.array([1, 0, 7, -1]))
    assert not gm.is_matching(g, np.array([1.0, 0.0, -1.0, -1.0]))
    assert not gm.is_matching(nx.path_graph(4), {(0, 1), (2, "x")})
    assert not gm.is_b_matching(g, (np.array([0]), np.array([-5])), 1)


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        ({"src": [0, 1], "dst": [1, 2], "nodes": ["a", "b", "a"]}, "unique"),
        ({"src": [0.0, np.nan], "dst": [1.0, 2.0]}, "NaN"),
        ({"src": [0, 2**40], "dst": [1, 2]}, "relabel"),
        ({"src": [0], "dst": [1], "num_nodes": -1}, "num_nodes"),
        ({"src": [0], "dst": [1], "num_nodes": 2**40}, "2\\*\\*31"),
    ],
    ids=["duplicate-labels", "nan-ids", "huge-ids", "negative-n", "huge-n"],
)
def test_array_input_errors_are_clear(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        Graph.from_arrays(**kwargs)


def test_dataframe_with_missing_ids_is_an_error():
    df = pd.DataFrame({"source": [0.0, np.nan], "target": [1.0, 2.0]})
    with pytest.raises(ValueError, match="missing vertex id"):
        gm.max_weight_matching(df, algorithm="suitor")


def test_options_that_would_not_act_are_errors():
    G = nx.path_graph(4)
    with pytest.warns(UserWarning, match="red_blue"):
        gm.max_weight_matching(G, algorithm="suitor", seed=1)
    with pytest.warns(UserWarning, match="red_blue"):
        gm.max_weight_matching(G, algorithm="greedy", select="random")
    with pytest.warns(UserWarning, match="red_blue"):
        gm.max_weight_matching(G, seed=1)  # exact
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gm.max_weight_matching(G, algorithm="red_blue", seed=1, select="random")
    with pytest.raises(ValueError, match="threads must be a positive int"):
        gm.max_weight_matching(G, algorithm="suitor", threads=0)
    with pytest.raises(ValueError, match="threads must be a positive int"):
        gm.b_matching(G, 1, threads=0)
    with pytest.raises(ValueError, match="threads must be a positive int"):
        nx.config.backends.gpumatch.threads = 0


def test_gpu_request_for_exact_matching_says_it_has_no_gpu_engine():
    G = nx.path_graph(4)
    for call in (
        lambda: gm.max_weight_matching(G, device="gpu"),
        lambda: gm.min_weight_matching(G, device="gpu"),
    ):
        with pytest.raises(ValueError, match="no GPU engine"):
            call()
    with nx.config.backends.gpumatch(device="gpu"):
        with pytest.raises(ValueError, match="no GPU engine"):
            gm.max_weight_matching(G)
        with pytest.raises(ValueError, match="no GPU engine"):
            nx.max_weight_matching(G, backend="gpumatch")


@pytest.mark.parametrize("value, on", [("0", False), ("false", False), ("No", False), ("1", True)])
def test_interpret_small_environment_switch(value, on):
    code = "import networkx as nx; print(nx.config.backends.gpumatch.interpret_small)"
    env = dict(os.environ, NX_GPUMATCH_INTERPRET_SMALL=value)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == str(on), out.stderr
