"""The emulation's CuPy-strict array module (nx_gpumatch.gpu._strict): it
matches the installed CuPy's API, refuses what CuPy refuses, and the host code
of the GPU engine runs on it where NumPy alone forgave CuPy's differences
(an empty bincount in Louvain/Leiden aggregation and b-matching capacities)."""

import ast
import inspect
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from nx_gpumatch import Graph
from nx_gpumatch.cpu import leiden as cle
from nx_gpumatch.cpu import louvain as cl
from nx_gpumatch.gpu import _launch, _strict
from nx_gpumatch.gpu import b_matching as gb
from nx_gpumatch.gpu import leiden as gle
from nx_gpumatch.gpu import louvain as gl

GPU_DIR = Path(_strict.__file__).parent


def _params(fn):
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.KEYWORD_ONLY and "*" not in out:
            out.append("*")
        out.append(p.name)
    return out


def test_strict_module_is_a_subset_of_cupy():
    """Every name exists in CuPy, and every function's parameters are CuPy's
    (positional ones in CuPy's order; CuPy may have more)."""
    cupy = pytest.importorskip("cupy")
    for name, ours in _strict.CUPY_PARAMS.items():
        theirs = _params(getattr(cupy, name))
        npos = ours.index("*") if "*" in ours else len(ours)
        assert list(ours[:npos]) == theirs[:npos], (name, ours, theirs)
        rest = iter(theirs[npos:])
        assert all(p in rest for p in ours[npos:]), (name, ours, theirs)
    for name in _strict.UFUNCS + _strict.TYPES:
        assert hasattr(cupy, name), name


def test_host_code_uses_only_what_the_strict_module_has():
    """Every ``xp.<name>`` in the GPU host modules, also on paths no test runs."""
    allowed = set(_strict.__all__) | {"__name__", "cuda", "get_default_memory_pool"}
    used = set()
    for path in GPU_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "xp"
            ):
                used.add((path.name, node.attr))
    assert used and not {u for u in used if u[1] not in allowed}


def test_strict_refuses_what_cupy_refuses():
    assert _launch.array_module("emulate") is _strict
    empty = np.zeros(0, np.int32)
    with pytest.raises(ValueError, match="empty"):
        _strict.bincount(empty, minlength=3)
    with pytest.raises(TypeError):
        _strict.bincount(np.array([0.5]))
    with pytest.raises(ValueError, match="stable"):
        _strict.argsort(np.arange(3), kind="quicksort")
    with pytest.raises(TypeError, match="like"):
        _strict.zeros(3, like=empty)  # NumPy's, not CuPy's
    with pytest.raises(AttributeError, match="busday_count"):
        _strict.busday_count  # noqa: B018  (NumPy has it, CuPy does not)
    np.testing.assert_array_equal(_strict.bincount(np.array([1, 1, 3])), [0, 2, 0, 1])
    keys = np.array([2, 1, 2, 1, 0] * 50)
    np.testing.assert_array_equal(_strict.argsort(keys), np.argsort(keys, kind="stable"))


def test_bincount_helper_takes_empty_input():
    empty = np.zeros(0, np.int32)
    got = _launch.bincount(_strict, empty, 3)
    assert got.tolist() == [0, 0, 0] and got.dtype == np.int64
    got = _launch.bincount(_strict, empty, 2, weights=np.zeros(0))
    assert got.tolist() == [0.0, 0.0] and got.dtype == np.float64
    x = np.array([0, 2, 2], np.int32)
    assert _launch.bincount(_strict, x, 4).tolist() == [1, 0, 2, 0]
    assert _launch.bincount(_strict, x, 1, weights=np.array([1.0, 2.0, 3.0])).tolist() == [1, 0, 5]


def test_b_matching_without_a_positive_weight():
    """Capacities count positive-weight edges only: none at all is an empty
    bincount."""
    g = Graph.from_arrays(np.array([0, 1, 2]), np.array([1, 2, 3]), np.array([-1.0, 0.0, -2.0]))
    got = gb.run(g, np.full(4, 2, np.int64), backend="emulate")
    assert got.tolist() == []


def _levels(engine, g, **kw):
    return [
        (lab.tolist(), info)
        for lab, info in engine(g.indptr, g.indices, g.weights, g.loop_weight, **kw)
    ]


def test_aggregation_of_communities_without_arcs_between():
    """Disjoint cliques: every community is a whole component, so the
    aggregated graph has no arc between communities (an empty bincount), in
    Louvain and Leiden alike; Louvain equals the CPU engine."""
    g = Graph.from_networkx(nx.caveman_graph(12, 5))
    kw = dict(order=np.arange(g.num_nodes), sequential_arcs=0, margins=False)
    want = _levels(cl.louvain_levels, g, **kw)
    got = _levels(gl.louvain_levels, g, backend="emulate", cpu_below_arcs=0, **kw)
    assert got == want
    assert len(set(got[-1][0])) == 12
    got = _levels(gle.leiden_levels, g, backend="emulate", key=1, **kw)
    assert got == _levels(cle.leiden_levels, g, key=1, **kw)
    assert len(set(got[-1][0])) == 12
