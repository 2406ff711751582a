"""networkx dispatch interface of the ``gpumatch`` backend.

networkx converts graph arguments with :meth:`BackendInterface.convert_from_nx`
(caching the :class:`Graph` in ``G.__networkx_cache__``), then calls the method
of the same name here. ``_nx_gpumatch.FUNCTIONS`` names each dispatched function
and the ``algorithms/<problem>.py`` module whose ``DISPATCH`` dict implements
it; they become methods below.
In networkx's test mode results pass through :meth:`convert_to_nx`; they are
plain Python objects already.

networkx's note on each reuse of a cached conversion is left on: after a direct
edit of edge data (``G.edges[u, v]["weight"] = x``), which networkx's cache
cannot see, a call answers from the old conversion, and the note is what tells
the user (checking every edge on each call would cost what the cache saves).
"""

import decimal
import importlib

from _nx_gpumatch import FUNCTIONS
from nx_gpumatch.graph import MAX_EXACT_INT, Graph

# Modules under nx_gpumatch.algorithms that dispatch networkx functions.
_PROBLEMS = tuple(dict.fromkeys(info["module"] for info in FUNCTIONS.values()))


class BackendInterface:
    @staticmethod
    def convert_from_nx(
        G,
        edge_attrs=None,
        node_attrs=None,
        preserve_edge_attrs=False,
        preserve_node_attrs=False,
        preserve_graph_attrs=False,
        name=None,
        graph_name=None,
    ):
        weight, default = None, 1
        if isinstance(edge_attrs, dict) and len(edge_attrs) == 1:
            ((weight, default),) = edge_attrs.items()
            default = 1 if default is None else default
        elif preserve_edge_attrs:
            weight = "weight"
        return Graph.from_networkx(G, weight=weight, default=default, parallel=_PARALLEL.get(name))

    @staticmethod
    def convert_to_nx(obj, *, name=None):
        if isinstance(obj, Graph):
            return obj.to_networkx()
        return obj

    @staticmethod
    def can_run(name, args, kwargs):
        """True, or a sentence saying why networkx should run this call itself.

        Weights the backend cannot hold exactly in float64 (Decimal, Fraction,
        integers beyond 2**53, booleans, non-numbers) are refused for every function; a
        module may refuse more with its own ``can_run(name, args, kwargs)``. Where
        networkx has no implementation to hand a refused call to (the module's
        ``without_fallback(name)`` is true), the refusal raises ValueError instead.
        Where the call names ``backend="gpumatch"`` (networkx then runs no other
        code and would raise a bare NotImplementedError), the refusal raises
        NotImplementedError with the reason; weights that are not numbers raise
        TypeError, as networkx's own code does."""
        G, takes_weight, weight = _weight_argument(name, args, kwargs)
        if not takes_weight:
            reason = None
        elif isinstance(G, Graph):
            _check_weight_name(name, G, weight)
            reason = None
        else:
            reason = _weight_reason(G, weight)
        if reason is not None:
            not_number = isinstance(reason, tuple)
            reason = reason[1] if not_number else reason
            if not_number and _backend_named() == "gpumatch":
                raise TypeError(f"{name}: {reason}")  # what networkx itself raises for them
            if name in _NO_FALLBACK and _NO_FALLBACK[name](name):
                # networkx would only say "not implemented by 'gpumatch'"
                raise ValueError(f"gpumatch cannot run {name} on this input: {reason}")
            return _refuse(name, reason)
        check = _CAN_RUN.get(name)
        verdict = True if check is None else check(name, args, kwargs)
        return _refuse(name, verdict) if isinstance(verdict, str) else verdict

    @staticmethod
    def should_run(name, args, kwargs):
        return True

    @staticmethod
    def on_start_tests(items):
        """Mark networkx tests that cannot pass here, each with its written reason."""
        import pytest

        for problem in _PROBLEMS:
            mod = importlib.import_module(f"nx_gpumatch.algorithms.{problem}")
            table = getattr(mod, "NX_TESTS_XFAIL", None)
            if table is None:
                continue
            filename, label, reasons = table
            for item in items:
                path = str(getattr(item, "path", getattr(item, "fspath", "")))
                reason = reasons.get(getattr(item, "originalname", item.name))
                if reason is not None and path.endswith(filename):
                    mark = pytest.mark.xfail(reason=f"gpumatch {label}: {reason}", strict=False)
                    item.add_marker(mark)


def _backend_named():
    """The ``backend=`` keyword of the networkx call now asking :meth:`can_run`
    (None when networkx picks the backend itself). networkx passes can_run the
    arguments without it, so it is read from networkx's dispatching frame
    (``_dispatchable.__call__`` in networkx 3.4-3.5,
    ``_call_if_any_backends_installed`` from 3.6 on; both keep the caller's
    ``backend``); None where not found."""
    import sys

    frame = sys._getframe(1)
    for _ in range(12):
        if frame is None:
            break
        if (
            frame.f_code.co_name in ("_call_if_any_backends_installed", "__call__")
            and frame.f_globals.get("__name__") == "networkx.utils.backends"
            and "backend" in frame.f_locals
        ):
            return frame.f_locals.get("backend")
        frame = frame.f_back
    return None


def _refuse(name, reason):
    """The reason, for networkx to run the call itself; where the call named
    ``backend="gpumatch"`` networkx would raise a bare NotImplementedError and
    keep the reason in its debug log, so it is raised here with the reason."""
    if _backend_named() != "gpumatch":
        return reason
    raise NotImplementedError(
        f"'{name}' is not implemented by 'gpumatch' backend for these arguments, because: "
        f"{reason}. No other backend is tried when the call names backend='gpumatch'; "
        "leave it out (or list 'gpumatch' in nx.config.backend_priority) to let networkx "
        "run such calls itself."
    )


def _weight_argument(name, args, kwargs):
    """(G, whether networkx's function takes ``weight``, the call's weight)."""
    G = args[0] if args else kwargs.get("G")
    sig = _signature(name)
    if sig is None or "weight" not in sig:
        return G, False, None
    pos = list(sig).index("weight")
    return G, True, args[pos] if len(args) > pos else kwargs.get("weight", sig["weight"].default)


def _check_weight_name(name, G, weight):
    """A package Graph handed to networkx holds one attribute's weights: a call
    that names another cannot be answered as networkx would (it would read
    that attribute, 1 where missing)."""
    held = G.weight_attr
    if weight is not None and held is not None and weight != held:
        raise ValueError(
            f"{name}: this nx_gpumatch.Graph holds the weights of {held!r}, not {weight!r}; "
            f"call with weight={held!r} (or None for unit weights), or convert the graph "
            f"again with weight={weight!r}"
        )


def _weight_reason(G, weight):
    """Why the weights of networkx graph G's attribute ``weight`` cannot be
    converted exactly, or None.

    NaN and infinite weights raise ValueError here, on every call: raised in
    the conversion, networkx would remember the failure and answer the next
    call on the same graph differently (its own result or NotImplementedError)."""
    import networkx as nx

    if weight is None or not isinstance(G, nx.Graph):
        return None
    # The verdict is kept with networkx's conversions, and only where it keeps them.
    keep = getattr(nx.config, "cache_converted_graphs", True)
    cache = getattr(G, "__networkx_cache__", None) if keep else None
    key = ("gpumatch weight check", weight)
    if cache is not None and key in cache:
        return _reason_or_raise(cache[key])
    reason = None
    import numbers

    import numpy as np

    for u, v, w in G.edges(data=weight, default=1):
        t = type(w)
        # NaN and infinity are errors in any float type (long double, Decimal
        # too), not a reason to hand the call to networkx.
        if isinstance(w, float | np.floating | decimal.Decimal) and not _finite(w):
            reason = ("error", f"weight values must be finite; edge ({u!r}, {v!r}) has {w!r}")
            break
        if t is float or (isinstance(w, np.floating) and w.dtype.itemsize <= 8):
            continue  # float64 holds these exactly
        if (t is int or isinstance(w, np.integer)) and t is not bool:
            if abs(int(w)) > MAX_EXACT_INT:
                reason = f"integer weight {w} is beyond 2**53, where float64 rounds (precision)"
        elif isinstance(w, numbers.Number):
            reason = (
                f"weights of type {t.__name__} (e.g. {w!r}); gpumatch computes in float64, "
                "networkx keeps the exact values"
            )
        else:  # not a number: networkx's own arithmetic raises TypeError
            reason = (
                "type",
                f"edge ({u!r}, {v!r}) has weight {w!r} of type {t.__name__}; "
                "weights must be numbers",
            )
        if reason is not None:
            break
    if cache is not None:
        cache[key] = reason
    return _reason_or_raise(reason)


def _finite(w):
    import numpy as np

    return w.is_finite() if isinstance(w, decimal.Decimal) else bool(np.isfinite(w))


def _reason_or_raise(reason):
    """A reason; ("error", text) raises ValueError; ("type", text) is returned
    (the caller raises TypeError or lets networkx raise it)."""
    if isinstance(reason, tuple) and reason[0] == "error":
        raise ValueError(reason[1])
    return reason


def _signature(name):
    """networkx's own parameters of a dispatched function (None if unknown)."""
    import inspect

    from networkx.utils.backends import _registered_algorithms

    func = _registered_algorithms.get(name)
    func = getattr(func, "orig_func", func)
    return None if func is None else inspect.signature(func).parameters


_CAN_RUN = {}
_NO_FALLBACK = {}
# What a function makes of a MultiGraph's parallel edges (its module's
# PARALLEL_EDGES, passed to Graph.from_networkx); unnamed: it takes none.
_PARALLEL = {}
for _name, _info in FUNCTIONS.items():
    _mod = importlib.import_module(f"nx_gpumatch.algorithms.{_info['module']}")
    _func = _mod.DISPATCH[_name]
    # Errors about arguments (TypeError) name the function; make it networkx's name.
    _func.__name__ = _func.__qualname__ = _name
    setattr(BackendInterface, _name, staticmethod(_func))
    if hasattr(_mod, "can_run"):
        _CAN_RUN[_name] = _mod.can_run
    if hasattr(_mod, "without_fallback"):
        _NO_FALLBACK[_name] = _mod.without_fallback
    if hasattr(_mod, "PARALLEL_EDGES"):
        _PARALLEL[_name] = _mod.PARALLEL_EDGES
del _name, _info, _mod, _func
