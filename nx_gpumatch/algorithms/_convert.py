"""Turning the caller's input into a :class:`Graph` and results back into the
caller's types (networkx graph → Python objects, DataFrame → DataFrame of the
same library, Graph/scipy/Matrix Market → numpy arrays).

All input checks of the matching-type functions live here, so every function
gives the same errors for the same bad input.
"""

import networkx as nx
import numpy as np

from nx_gpumatch.graph import Graph


def input_kind(obj):
    if isinstance(obj, Graph):
        return "graph"
    mod = type(obj).__module__
    # RAPIDS graphs: nx-cugraph ones answer like networkx, cugraph ones with a cuDF frame
    if mod.startswith("nx_cugraph"):
        return "networkx"
    if mod.startswith("cugraph"):
        return "cudf"
    if isinstance(obj, nx.Graph):
        return "networkx"
    if mod.startswith("pandas") and hasattr(obj, "columns"):
        return "pandas"
    if mod.startswith("cudf") and hasattr(obj, "columns"):
        return "cudf"
    return "array"


class Input:
    """A converted input: the graph, the kind of input, and for a DataFrame the
    frame (host copy) and the row that defined each edge, so results keep the
    caller's rows: column names, orientation and dtypes."""

    __slots__ = ("graph", "kind", "frame", "rows", "source", "target", "weight")

    def __init__(
        self, graph, kind, frame=None, rows=None, source="source", target="target", weight=None
    ):
        self.graph = graph
        self.kind = kind
        self.frame = frame
        self.rows = rows
        self.source = source
        self.target = target
        self.weight = weight


def convert(obj, weight="weight", source="source", target="target", parallel=None):
    """:class:`Input` for any supported input; ``parallel``: what to make of a
    MultiGraph's parallel edges (see :meth:`Graph.from_networkx`)."""
    if isinstance(obj, str) or hasattr(obj, "__fspath__"):
        from nx_gpumatch import files

        # An edge-list file is its rows: results come back as those rows, as for
        # a DataFrame; a Matrix Market file is a matrix (results are arrays).
        if files.file_format(obj) != "mtx":
            obj = files.read_edge_list(obj, source, target)
    kind = input_kind(obj)
    if kind == "graph":
        return Input(obj.unweighted() if weight is None else obj, kind)
    mod = type(obj).__module__
    if mod.startswith(("nx_cugraph", "cugraph")):
        from nx_gpumatch.gpu import interop

        if mod.startswith("cugraph"):
            return Input(interop.from_cugraph(obj, weight=weight), kind)
        g = interop.from_nx_cugraph(obj, weight=weight, parallel=parallel)
        if g is not None:  # else it lives on the host: an ordinary networkx graph
            return Input(g, kind)
    if kind == "networkx":
        if obj.is_directed():
            raise nx.NetworkXNotImplemented("not implemented for directed type")
        return Input(Graph.from_networkx(obj, weight=weight, parallel=parallel), kind)
    if kind in ("pandas", "cudf"):
        frame = obj.to_pandas() if kind == "cudf" else obj
        graph, rows = Graph._from_frame(frame, source, target, weight)
        w = weight if weight is not None and weight in frame.columns else None
        return Input(graph, kind, frame, rows, source, target, w)
    graph = Graph.from_any(obj, weight=weight)
    # A matrix holds its weights without a name: weight=None means unit
    # weights here as for every other input.
    return Input(graph.unweighted() if weight is None else graph, kind)


def to_graph(obj, weight="weight", source="source", target="target", parallel=None):
    """(Graph, kind) for any supported input."""
    inp = convert(obj, weight=weight, source=source, target=target, parallel=parallel)
    return inp.graph, inp.kind


def matched_pairs(mate):
    """(u, v) arrays of matched pairs with u < v."""
    mate = np.asarray(mate)
    u = np.flatnonzero(mate > np.arange(mate.shape[0]))
    return u, mate[u]


def edge_weights(graph, u, v):
    """Weights of the edges (u[i], v[i]); ValueError naming the first pair that is
    not an edge."""
    return graph.edge_weight[graph.edge_ids(u, v)]


def edges_result(inp, edges, with_weight=True):
    """Edges (ids into the graph's edge list) in the caller's types: a set of label
    pairs for networkx input, the defining rows for a DataFrame (the caller's
    columns, orientation and dtypes), else (src, dst) vertex-id arrays."""
    graph, kind = inp.graph, inp.kind
    edges = np.asarray(edges, np.int64)
    u = graph.edge_src[edges]
    v = graph.edge_dst[edges]
    if kind in ("graph", "array"):
        return u, v
    if kind == "networkx":
        labels = graph.labels()
        return {(labels[a], labels[b]) for a, b in zip(u.tolist(), v.tolist())}
    if inp.frame is not None:
        cols = [inp.source, inp.target]
        if with_weight and inp.weight is not None:
            cols.append(inp.weight)
        df = inp.frame.iloc[inp.rows[edges]][cols].reset_index(drop=True)
    else:  # a cuGraph graph: no frame of rows to keep
        import pandas as pd

        labels = graph.label_index()
        df = pd.DataFrame(
            {
                inp.source: u if labels is None else labels.take(u),
                inp.target: v if labels is None else labels.take(v),
            }
        )
        if with_weight:
            df[inp.weight or "weight"] = graph.edge_weight[edges]
    if kind == "cudf":
        import cudf

        return cudf.from_pandas(df)
    return df


def matching_result(graph, kind, mate, weight="weight", source="source", target="target", inp=None):
    """The matching (a mate array) in the caller's types."""
    if kind in ("graph", "array"):
        return mate
    if inp is None:
        inp = Input(graph, kind, source=source, target=target, weight=weight)
    u, v = matched_pairs(mate)
    if kind == "networkx":
        labels = graph.labels()
        return {(labels[a], labels[b]) for a, b in zip(u.tolist(), v.tolist())}
    return edges_result(inp, graph.edge_ids(u, v), with_weight=weight is not None)


def result_pairs(inp, result):
    """(u, v) int64 vertex ids of the pairs a result in the caller's types names
    (set of label pairs, DataFrame rows, or (src, dst) arrays); ValueError for an
    unknown node or a malformed result."""
    graph, kind = inp.graph, inp.kind
    if kind in ("graph", "array"):
        try:
            u, v = (np.asarray(a) for a in result)
        except (TypeError, ValueError):
            raise ValueError("result must be a pair of (src, dst) vertex-id arrays") from None
        if u.shape != v.shape or u.ndim != 1:
            raise ValueError("result must be a pair of equal-length 1-D vertex-id arrays")
        if u.size and (u.dtype.kind not in "iu" or v.dtype.kind not in "iu"):
            raise ValueError("result must hold integer vertex ids")
        u = u.astype(np.int64)
        v = v.astype(np.int64)
        n = graph.num_nodes
        bad = (u < 0) | (u >= n) | (v < 0) | (v >= n)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"({int(u[i])}, {int(v[i])}) names a vertex outside [0, {n})")
        return u, v
    if kind in ("pandas", "cudf"):
        if hasattr(result, "to_pandas"):
            result = result.to_pandas()
        for col in (inp.source, inp.target):
            if not hasattr(result, "columns") or col not in result.columns:
                raise ValueError(f"result has no column {col!r}")
        a = result[inp.source].tolist()
        b = result[inp.target].tolist()
    else:
        if isinstance(result, dict):  # a mate dict (u: v and v: u), as networkx takes
            pairs, seen = [], set()
            for p in result.items():
                if p[::-1] not in seen:
                    seen.add(p)
                    pairs.append(p)
        else:
            pairs = list(result)
        for p in pairs:
            if not isinstance(p, tuple | list) or len(p) != 2:
                raise ValueError(f"result must hold node pairs, got {p!r}")
        a = [p[0] for p in pairs]
        b = [p[1] for p in pairs]
    return graph.node_ids(a), graph.node_ids(b)


def mate_from_result(inp, result):
    """The mate array of a matching given in any result type; ValueError naming
    what is wrong (unknown node, vertex matched twice, a pair that is no edge)."""
    graph, kind = inp.graph, inp.kind
    n = graph.num_nodes
    if kind in ("graph", "array"):
        mate = np.asarray(result)
        if mate.shape != (n,) or (n and mate.dtype.kind not in "iu"):
            raise ValueError(
                f"a mate array needs {n} integer entries, got {mate.dtype} {mate.shape}"
            )
        mate = mate.astype(np.int64)
        bad = (mate < -1) | (mate >= n)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"mate[{i}] = {int(mate[i])} is neither -1 nor a vertex in [0, {n})")
        m = np.flatnonzero(mate >= 0)
        back = mate[mate[m]]
        if np.any(back != m):
            i = int(m[np.flatnonzero(back != m)[0]])
            raise ValueError(f"mate is not symmetric: mate[{i}] = {int(mate[i])} but not back")
        u, v = matched_pairs(mate)
        graph.edge_ids(u, v)
        return mate
    u, v = result_pairs(inp, result)
    mate = np.full(n, -1, np.int64)
    for a, b in zip(u.tolist(), v.tolist()):
        if a == b or mate[a] >= 0 or mate[b] >= 0:
            x = a if a == b or mate[a] >= 0 else b
            raise ValueError(f"node {graph.label(x)!r} is matched more than once")
        mate[a] = b
        mate[b] = a
    graph.edge_ids(u, v)
    return mate
