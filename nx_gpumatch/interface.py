"""networkx dispatch interface of the ``gpumatch`` backend.

networkx converts graph arguments with :meth:`BackendInterface.convert_from_nx`
(caching the :class:`Graph` in ``G.__networkx_cache__``), then calls the method
of the same name here. Each dispatched function is registered next to its
definition under ``nx_gpumatch.algorithms`` (:func:`networkx_algorithm`), with
its ``can_run``, fallback and parallel-edge rules; they become methods below.
In networkx's test mode results pass through :meth:`convert_to_nx`; they are
plain Python objects already.

networkx's note on each reuse of a cached conversion is left on: after a direct
edit of edge data (``G.edges[u, v]["weight"] = x``), which networkx's cache
cannot see, a call answers from the old conversion, and the note is what tells
the user (checking every edge on each call would cost what the cache saves).
"""

import sys

import networkx as nx

from nx_gpumatch import _validation
from nx_gpumatch.algorithms._registry import NX_TESTS_XFAIL, dispatched
from nx_gpumatch.graph import Graph

_REGISTRY = dispatched()


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
        entry = _REGISTRY.get(name)
        scan = _validation.pending_scan(G, weight, default)
        parallel = None if entry is None else entry.parallel_edges
        return Graph.from_networkx(G, weight=weight, default=default, parallel=parallel, scan=scan)

    @staticmethod
    def convert_to_nx(obj, *, name=None):
        if isinstance(obj, Graph):
            return obj.to_networkx()
        return obj

    @staticmethod
    def can_run(name, args, kwargs):
        """True, or a sentence saying why networkx should run this call itself.

        The call's arguments are bound to the function's own signature once,
        here, and handed to its registered ``can_run`` by name. Weights the
        backend cannot hold exactly in float64 (Decimal, Fraction, integers
        beyond 2**53, booleans, non-numbers) are refused for every function
        first, from one walk of G's edges that the conversion then reuses.
        Where networkx has no implementation to hand a refused call to (the
        registration's ``fallback``), the refusal raises ValueError instead.
        Where the call names ``backend="gpumatch"`` (networkx then runs no other
        code and would raise a bare NotImplementedError), the refusal raises
        NotImplementedError with the reason; weights that are not numbers raise
        TypeError, as networkx's own code does."""
        entry = _REGISTRY[name]
        _validation.forget_pending()
        try:
            bound = entry.signature.bind(*args, **kwargs)
        except TypeError:
            return True  # the call itself raises the TypeError, naming the function
        bound.apply_defaults()
        arguments = bound.arguments
        G = next(iter(arguments.values()))
        weight = arguments.get("weight")
        reason = None
        if "weight" in arguments and weight is not None:
            if isinstance(G, Graph):
                _check_weight_name(name, G, weight)
            elif _is_networkx_graph(G):
                reason = _weight_reason(_validation.edge_summary(G, weight))
        if reason is not None:
            not_number = isinstance(reason, tuple)
            reason = reason[1] if not_number else reason
            if not_number and _backend_named() == "gpumatch":
                raise TypeError(f"{name}: {reason}")  # what networkx itself raises for them
            return _refuse_or_raise(entry, reason)
        verdict = True if entry.can_run is None else entry.can_run(*bound.args, **bound.kwargs)
        return _refuse_or_raise(entry, verdict) if isinstance(verdict, str) else verdict

    @staticmethod
    def should_run(name, args, kwargs):
        return True

    @staticmethod
    def on_start_tests(items):
        """Mark networkx tests that cannot pass here, each with its written reason."""
        import pytest

        for filename, label, reasons in NX_TESTS_XFAIL:
            for item in items:
                path = str(getattr(item, "path", getattr(item, "fspath", "")))
                reason = reasons.get(getattr(item, "originalname", item.name))
                if reason is not None and path.endswith(filename):
                    mark = pytest.mark.xfail(reason=f"gpumatch {label}: {reason}", strict=False)
                    item.add_marker(mark)


def _is_networkx_graph(G):
    return isinstance(G, nx.Graph)


def _refuse_or_raise(entry, reason):
    """The refusal of a call: ValueError where networkx has no implementation
    to hand it to (it would only say "not implemented by 'gpumatch'"), else
    :func:`_refuse`."""
    if not entry.has_fallback():
        raise ValueError(f"gpumatch cannot run {entry.name} on this input: {reason}")
    return _refuse(entry.name, reason)


def _backend_named():
    """The ``backend=`` keyword of the networkx call now asking :meth:`can_run`
    (None when networkx picks the backend itself). networkx passes can_run the
    arguments without it, so it is read from networkx's dispatching frame
    (``_dispatchable.__call__`` in networkx 3.4-3.5,
    ``_call_if_any_backends_installed`` from 3.6 on; both keep the caller's
    ``backend``); None where not found."""
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


def _weight_reason(summary):
    """Why G's weights (its :class:`~nx_gpumatch._validation.EdgeSummary`)
    cannot be converted exactly, or None; ("type", text) for weights that are
    not numbers (the caller raises TypeError or lets networkx raise it).

    NaN and infinite weights raise ValueError here, on every call: raised in
    the conversion, networkx would remember the failure and answer the next
    call on the same graph differently (its own result or NotImplementedError)."""
    if summary.dispatch is None:
        return None
    kind, _edge, text = summary.dispatch
    if kind == "error":
        raise ValueError(text)
    return ("type", text) if kind == "type" else text


for _name, _entry in _REGISTRY.items():
    _func = _entry.func
    # Errors about arguments (TypeError) name the function; make it networkx's name.
    _func.__name__ = _func.__qualname__ = _name
    setattr(BackendInterface, _name, staticmethod(_func))
del _name, _entry, _func
