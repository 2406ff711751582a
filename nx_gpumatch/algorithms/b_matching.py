"""½-approximate weighted b-matching front end (networkx has no b-matching)."""

import numbers

import numpy as np

from nx_gpumatch._constants import B_MAX
from nx_gpumatch._validation import check_threads
from nx_gpumatch.algorithms._compact import compact_graph
from nx_gpumatch.algorithms._convert import Input, convert, edges_result, result_pairs
from nx_gpumatch.algorithms._engines import engine_for
from nx_gpumatch.config import get_config

ALGORITHMS = ("b_suitor", "local_dominant", "greedy")
# b values are clipped to the degree, so anything past int32 means "no limit".

__all__ = ["b_matching", "is_b_matching"]


def _b_value(x, node):
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise ValueError(
            f"b({node!r}) must be a non-negative integer, got {x!r} ({type(x).__name__})"
        )
    if x < 0:
        raise ValueError(f"b({node!r}) must be a non-negative integer, got {x!r}")
    return min(int(x), B_MAX)


def b_values(graph, kind, G, b):
    """int64 array of b(v) in vertex-id order, from an int, a dict node -> int, a
    node attribute name (networkx input) or a sequence in vertex order."""
    n = graph.num_nodes
    if isinstance(b, numbers.Integral) and not isinstance(b, bool):
        return np.full(n, _b_value(b, "every node"), np.int64)
    if isinstance(b, str):
        if kind != "networkx":
            raise ValueError(
                f"b={b!r} names a node attribute, which needs a networkx graph as input"
            )
        out = np.empty(n, np.int64)
        nodes = G.nodes
        for i, v in enumerate(graph.labels()):
            d = nodes[v]
            if b not in d:
                raise ValueError(f"node {v!r} has no attribute {b!r} (b names a node attribute)")
            out[i] = _b_value(d[b], v)
        return out
    if hasattr(b, "keys") and hasattr(b, "__getitem__"):
        labels = graph.labels()
        out = np.empty(n, np.int64)
        for i, v in enumerate(labels):
            try:
                x = b[v]
            except KeyError:
                raise ValueError(f"b has no entry for node {v!r}") from None
            out[i] = _b_value(x, v)
        if len(b) != n:
            known = set(labels)
            extra = next(k for k in b.keys() if k not in known)
            raise ValueError(f"b names node {extra!r}, which is not in the graph")
        return out
    if isinstance(b, (np.ndarray, list, tuple)):
        arr = np.asarray(b)
        if arr.shape != (n,):
            raise ValueError(
                f"b as a sequence needs one value per vertex ({n}), got shape {arr.shape}"
            )
        if arr.dtype.kind not in "iu":
            for i, x in enumerate(arr.tolist()):
                _b_value(x, graph.label(i))
        if arr.dtype.kind == "u":
            arr = np.minimum(arr, B_MAX)  # (uint64 past int64 would wrap negative)
        arr = arr.astype(np.int64)
        if n and arr.min() < 0:
            i = int(np.argmin(arr))
            raise ValueError(
                f"b({graph.label(i)!r}) must be a non-negative integer, got {int(arr[i])}"
            )
        return np.minimum(arr, B_MAX)
    raise ValueError(
        f"b must be an int, a dict node -> int or a node attribute name, got {type(b).__name__}"
    )


def b_matching_edges(graph, b, algorithm="b_suitor", *, device=None, threads=None):
    """Matched edge ids (ascending) of a b-matching of a :class:`Graph`; ``b`` is an
    array of b(v) in vertex order."""
    _check_options(algorithm, device, threads)
    small, c = compact_graph(graph, order_only=True)  # every algorithm follows the edge order
    if c is not None:  # the edge ids are the same
        return b_matching_edges(
            small, np.asarray(b)[c.kept], algorithm, device=device, threads=threads
        )
    # The GPU engine runs b-Suitor only (_check_options refused device="gpu" for the others).
    if algorithm == "b_suitor":
        name, engine = engine_for("b_matching", device, graph.num_edges)
        if name == "gpu":
            return engine.run(graph, np.asarray(b), algorithm)
    from nx_gpumatch import cpu
    from nx_gpumatch.cpu import b_matching as cpu_engine

    with cpu.run("b_matching", graph.num_edges, threads):
        return cpu_engine.run(graph, np.asarray(b), algorithm)


def _check_options(algorithm, device, threads):
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
    check_threads(threads)
    wanted = get_config().device if device is None else device
    if wanted == "gpu" and algorithm != "b_suitor":
        raise ValueError(f"the GPU engine runs algorithm='b_suitor' only, not {algorithm!r}")


def b_matching_result(graph, kind, edges, weight="weight", source="source", target="target"):
    """The b-matching in the caller's types (without a DataFrame's own rows: a new
    frame of labels; :func:`b_matching` keeps the caller's rows)."""
    return edges_result(Input(graph, kind, source=source, target=target, weight=weight), edges)


def b_matching(
    G,
    b,
    weight="weight",
    *,
    algorithm="b_suitor",
    device=None,
    threads=None,
    source="source",
    target="target",
):
    """½-approximate maximum-weight b-matching: at most b(v) edges at each vertex v.

    All algorithms return the same b-matching: the greedy one under the package's
    edge order (heavier first, ties by the smaller (min id, max id) pair), which
    weighs at least half the optimum. Only positive-weight edges are used.

    Parameters
    ----------
    G : networkx.Graph, pandas/cuDF DataFrame edge list, nx_gpumatch.Graph,
        scipy sparse matrix or Matrix Market path
    b : int, dict node -> int, node attribute name (networkx input), or a
        sequence in vertex order. b(v) = 0 and b(v) > degree are allowed.
    weight : str or None
        Edge attribute / column holding the weights (missing weights are 1).
    algorithm : "b_suitor", "local_dominant" or "greedy"
        Parallel b-Suitor (delayed, partially sorted; Khan et al. 2016), round-parallel
        locally dominant edges, or the sorted sequential reference.
    device : "auto", "cpu", "gpu" or None (the config's)
        The GPU engine runs b_suitor; with "auto" the others run on the CPU.
    threads : int or None
        Numba threads (None: the config's).

    Returns
    -------
    set of (u, v) label pairs for a networkx graph; for a DataFrame, the rows of
    the matched edges (the caller's columns, orientation and dtypes; the same
    library); otherwise (src, dst) int32 arrays of vertex ids, src < dst, sorted.
    """
    _check_options(algorithm, device, threads)
    inp = convert(G, weight=weight, source=source, target=target)
    bv = b_values(inp.graph, inp.kind, G, b)
    edges = b_matching_edges(inp.graph, bv, algorithm, device=device, threads=threads)
    return edges_result(inp, edges)


def is_b_matching(G, result, b, *, weight="weight", source="source", target="target"):
    """True if ``result`` (in any of b_matching's result types) is a b-matching of G:
    edges of G, none repeated, at most b(v) at each vertex v. A wrong result
    (unknown nodes included) gives False; a bad ``b`` raises ValueError."""
    inp = convert(G, weight=None, source=source, target=target)
    graph = inp.graph
    bv = b_values(graph, inp.kind, G, b)
    try:
        u, v = result_pairs(inp, result)
    except ValueError:
        return False
    e = graph.find_edges(u, v)
    if np.any(e < 0) or np.unique(e).shape[0] != e.shape[0]:
        return False
    count = np.bincount(np.concatenate([u, v]), minlength=graph.num_nodes)
    return bool(np.all(count <= bv))


def b_matching_weight(G, result, weight="weight", source="source", target="target"):
    """Total weight of the edges of a b-matching given in any of b_matching's
    result types; ValueError naming a pair that is not an edge, an unknown node
    or an edge given twice."""
    inp = convert(G, weight=weight, source=source, target=target)
    u, v = result_pairs(inp, result)
    graph = inp.graph
    e = graph.edge_ids(u, v)
    again = np.ones(e.shape[0], bool)
    again[np.unique(e, return_index=True)[1]] = False  # first occurrences
    again = np.flatnonzero(again)
    if again.size:
        i = int(again[0])
        raise ValueError(
            f"edge ({graph.label(int(u[i]))!r}, {graph.label(int(v[i]))!r}) appears more than once"
        )
    return float(inp.graph.edge_weight[e].sum())
