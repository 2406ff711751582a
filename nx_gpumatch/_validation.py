"""Checks of the arguments of the package's functions, in one place and with
one set of messages: numbers and counts, choices, devices, thread counts,
seeds, and the weights of a networkx graph.

A networkx graph's edges are walked once per call (:func:`scan_edges`): the
walk reads the node ids and weights into arrays, notes the first edge of each
kind of weight the package cannot hold as networkx does, and the conversion to
a :class:`~nx_gpumatch.Graph` and the dispatch checks (``can_run``) both use it.
"""

from __future__ import annotations

import decimal
import numbers
import random

import networkx as nx
import numpy as np

# Integers up to 2**53 convert to float64 exactly; beyond, two different weights
# may become one and the edge order would silently change.
MAX_EXACT_INT = 2**53

DEVICES = ("auto", "cpu", "gpu")

__all__ = [
    "DEVICES",
    "MAX_EXACT_INT",
    "EdgeScan",
    "check_bool",
    "check_choice",
    "check_device",
    "check_finite",
    "check_max_level",
    "check_nonnegative_weights",
    "check_positive_int",
    "check_threads",
    "scan_edges",
    "seed_key",
]


# ------------------------------------------------------------ parameters
def _is_real(x):
    return not isinstance(x, bool) and isinstance(x, int | float | np.integer | np.floating)


def check_finite(value, name, *, positive=False):
    """``value`` if it is a finite real number (and > 0 where ``positive``);
    else ValueError."""
    if not _is_real(value) or not np.isfinite(value) or (positive and value <= 0):
        kind = "a positive finite number" if positive else "a finite number"
        raise ValueError(f"{name} must be {kind}, got {value!r}")
    return value


def check_positive_int(value, name):
    """``value`` if it is None or an int >= 1 (a numpy integer too); else ValueError."""
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1
    ):
        raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
    return value


def check_max_level(max_level):
    """networkx's rule and message for ``max_level``."""
    if max_level is not None and (
        isinstance(max_level, bool) or not isinstance(max_level, int | np.integer) or max_level <= 0
    ):
        raise ValueError("max_level argument must be a positive integer or None")
    return max_level


def check_choice(value, name, choices):
    """``value`` if it is one of ``choices``; else ValueError naming them."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def check_device(device):
    """``device`` if it is one of 'auto', 'cpu', 'gpu'; else ValueError."""
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}")
    return device


def check_threads(threads):
    """None (the config's, else all cores) or a positive int; anything else,
    0 included, is a ValueError here as in the config."""
    if threads is not None and (
        isinstance(threads, bool) or not isinstance(threads, numbers.Integral) or threads < 1
    ):
        raise ValueError(f"threads must be a positive int or None (all cores), got {threads!r}")
    return None if threads is None else int(threads)


def check_bool(value, name, *, none=False):
    """``value`` as a bool when it is True or False (a numpy bool too), or None
    where ``none`` allows it; anything else (a string such as 'yes' or 'no'
    included, which Python would take as True) is a ValueError."""
    if value is None and none:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    allowed = "True, False or None" if none else "True or False"
    raise ValueError(f"{name} must be {allowed}, got {value!r}")


# ------------------------------------------------------------------ seeds
def seed_key(seed, *, default=None):
    """The 64-bit key every randomized function draws from ``seed``.

    None gives ``default`` (a function that needs a key passes a fresh random
    one; Louvain's None means the graph's own order). An int means
    ``random.Random(seed)``, which is what networkx's dispatcher passes for an
    int, so a package call and a dispatched call with the same seed agree.
    networkx's wrappers of numpy generators are drawn from as the generator
    itself."""
    if seed is None:
        return default
    inner = getattr(seed, "_rng", None)
    if type(seed).__module__.startswith("networkx") and isinstance(
        inner, np.random.Generator | np.random.RandomState
    ):
        seed = inner
    if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
        seed = random.Random(int(seed))
    if isinstance(seed, random.Random):
        return seed.getrandbits(64)
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63))
    if isinstance(seed, np.random.RandomState):
        return int(seed.randint(0, 2**62))
    raise ValueError(
        f"seed must be None, an int, a random.Random or a numpy random generator, got {seed!r}"
    )


# ---------------------------------------------------------------- weights
def check_nonnegative_weights(graph, what="Louvain"):
    """ValueError naming the first edge or self-loop of a Graph with a negative weight."""
    if graph.num_edges and float(graph.edge_weight.min()) < 0:
        e = int(np.argmin(graph.edge_weight))
        u, v = graph.label(int(graph.edge_src[e])), graph.label(int(graph.edge_dst[e]))
        raise ValueError(
            f"{what} needs non-negative edge weights; edge ({u!r}, {v!r}) has weight "
            f"{graph.edge_weight[e]!r}"
        )
    if graph.num_nodes and float(graph.loop_weight.min()) < 0:
        v = int(np.argmin(graph.loop_weight))
        raise ValueError(
            f"{what} needs non-negative edge weights; the self-loop at {graph.label(v)!r} has "
            f"weight {graph.loop_weight[v]!r}"
        )


def number(x, what):
    """float(x) for a real number that float64 holds exactly, else ValueError."""
    if type(x) is float:
        return x
    if isinstance(x, bool) or not isinstance(x, numbers.Real | decimal.Decimal):
        raise ValueError(f"{what} values must be real numbers, got {x!r} ({type(x).__name__})")
    f = float(x)
    # As a Python int, x compares exactly; numpy would compare its integers in float64.
    if np.isfinite(f) and f != (int(x) if isinstance(x, numbers.Integral) else x):
        raise ValueError(
            f"{what} value {x!r} ({type(x).__name__}) has no exact float64 value; rounding it "
            "could change which edge is heavier (integer weights must lie within +-2**53)"
        )
    return f


class EdgeScan:
    """One walk over the edges of a networkx graph: node list,
    ``src``/``dst`` ids, float64 weights (None for ``weight=None``), and what
    the walk found about the weights:

    * ``error``: the ValueError the package's own conversion raises (a weight
      that is not a real number or has no exact float64 value), or None;
    * ``dispatch``: why networkx should run a dispatched call itself, as
      (kind, edge, text): kind "error" (NaN or infinite: raised),
      "type" (not a number: networkx raises TypeError), "reason" (a number
      networkx keeps exactly that float64 would round); None where fine;
    * ``negative``: the first edge (u, v, w) of negative weight, or None.
    """

    __slots__ = ("nodes", "src", "dst", "w", "error", "dispatch", "negative")

    def verdict(self):
        """(kind, text) of ``dispatch`` or None, the part a cache keeps."""
        return None if self.dispatch is None else (self.dispatch[0], self.dispatch[2])


def scan_edges(G, weight="weight", default=1):
    """Walk G's edges once (see :class:`EdgeScan`)."""
    scan = EdgeScan()
    scan.nodes = nodes = list(G)
    index = {v: i for i, v in enumerate(nodes)}
    m = G.number_of_edges()
    src = np.empty(m, np.int64)
    dst = np.empty(m, np.int64)
    scan.error = scan.dispatch = scan.negative = None
    if weight is None:
        for k, (u, v) in enumerate(G.edges()):
            src[k] = index[u]
            dst[k] = index[v]
        scan.src, scan.dst, scan.w = src, dst, None
        return scan
    w = np.empty(m, np.float64)
    odd = []  # (k, u, v, d) of weights off the fast path
    for k, (u, v, d) in enumerate(G.edges(data=weight, default=default)):
        src[k] = index[u]
        dst[k] = index[v]
        if type(d) is float or (type(d) is int and -MAX_EXACT_INT <= d <= MAX_EXACT_INT):
            w[k] = d
        else:
            w[k] = np.nan
            odd.append((k, u, v, d))
    scan.src, scan.dst, scan.w = src, dst, w
    what = f"edge attribute {weight!r}"
    first = None  # (k, kind, text) of the first dispatch problem
    for k, u, v, d in odd:
        if scan.error is None:
            try:
                w[k] = number(d, what)
            except ValueError as exc:
                scan.error = exc
        elif isinstance(d, numbers.Real | decimal.Decimal) and not isinstance(d, bool):
            try:
                w[k] = float(d)
            except (TypeError, ValueError, OverflowError):
                pass
        if first is None:
            problem = _dispatch_problem(u, v, d)
            if problem is not None:
                first = (k, *problem)
    # Python floats (the fast path) that are NaN or infinite: an error before
    # any later problem, as the walk meets them in edge order.
    fast = np.ones(m, bool)
    fast[[k for k, *_ in odd]] = False
    bad = np.flatnonzero(fast & ~np.isfinite(w))
    if bad.size and (first is None or bad[0] < first[0]):
        k = int(bad[0])
        first = (k, "error", _not_finite(nodes[src[k]], nodes[dst[k]], float(w[k])))
    if first is not None:
        k = first[0]
        scan.dispatch = (first[1], (nodes[src[k]], nodes[dst[k]]), first[2])
    neg = np.flatnonzero(w < 0)
    if neg.size:
        k = int(neg[0])
        u, v = nodes[src[k]], nodes[dst[k]]
        scan.negative = (u, v, _original(G, u, v, weight, default, float(w[k])))
    return scan


def _original(G, u, v, weight, default, value):
    """The weight of edge (u, v) as G holds it (an int stays an int in messages)."""
    if G.is_multigraph():
        return value
    return G[u][v].get(weight, default)


def _not_finite(u, v, w):
    return f"weight values must be finite; edge ({u!r}, {v!r}) has {w!r}"


def _dispatch_problem(u, v, w):
    """(kind, text) for a weight off the fast path that the backend cannot
    take as networkx would, or None."""
    t = type(w)
    # NaN and infinity are errors in any float type (long double, Decimal too).
    if isinstance(w, float | np.floating | decimal.Decimal) and not _finite(w):
        return "error", _not_finite(u, v, w)
    if t is float or (isinstance(w, np.floating) and w.dtype.itemsize <= 8):
        return None  # float64 holds these exactly
    if (t is int or isinstance(w, np.integer)) and t is not bool:
        if abs(int(w)) > MAX_EXACT_INT:
            return "reason", f"integer weight {w} is beyond 2**53, where float64 rounds (precision)"
        return None
    if isinstance(w, numbers.Number):
        return "reason", (
            f"weights of type {t.__name__} (e.g. {w!r}); gpumatch computes in float64, "
            "networkx keeps the exact values"
        )
    return "type", (
        f"edge ({u!r}, {v!r}) has weight {w!r} of type {t.__name__}; weights must be numbers"
    )


def _finite(w):
    return w.is_finite() if isinstance(w, decimal.Decimal) else bool(np.isfinite(w))


class EdgeSummary:
    """What a dispatch check keeps of a walk (:class:`EdgeScan`), without its arrays."""

    __slots__ = ("dispatch", "negative")

    def __init__(self, scan):
        self.dispatch = scan.dispatch
        self.negative = scan.negative


# The walk of the call now being dispatched: (G, weight, default, scan), handed
# from the dispatch check to the conversion so that a call walks G's edges once.
_PENDING = [None]


def edge_summary(G, weight, default=1):
    """The :class:`EdgeSummary` of networkx graph G's ``weight`` (walking its
    edges once per call at most). It is kept with networkx's conversions of G,
    and only where networkx keeps them (they are dropped together when G
    changes through its methods); the walk itself waits for the conversion
    (:func:`pending_scan`)."""
    keep = getattr(nx.config, "cache_converted_graphs", True)
    cache = getattr(G, "__networkx_cache__", None) if keep else None
    key = ("gpumatch edge summary", weight, default)
    if cache is not None and key in cache:
        return cache[key]
    pending = _PENDING[0]
    if pending is not None and pending[0] is G and pending[1:3] == (weight, default):
        return EdgeSummary(pending[3])
    scan = scan_edges(G, weight, default)
    _PENDING[0] = (G, weight, default, scan)
    summary = EdgeSummary(scan)
    if cache is not None:
        cache[key] = summary
    return summary


def pending_scan(G, weight, default):
    """The walk :func:`edge_summary` made of G for this call, or None; it is
    handed over once, and only while G still has the nodes and edges walked."""
    pending, _PENDING[0] = _PENDING[0], None
    if pending is None or pending[0] is not G or pending[1:3] != (weight, default):
        return None
    scan = pending[3]
    if len(scan.nodes) != len(G) or scan.src.shape[0] != G.number_of_edges():
        return None
    return scan


def forget_pending():
    """Drop a walk no conversion took (networkx answered from its cache)."""
    _PENDING[0] = None
