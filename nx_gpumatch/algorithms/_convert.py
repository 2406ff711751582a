"""Turning the caller's input into a :class:`Graph` and results back into the
caller's types (networkx graph → Python objects, DataFrame → DataFrame of the
same library, Graph/scipy/Matrix Market → numpy arrays)."""

import numpy as np

from nx_gpumatch.graph import Graph


def input_kind(obj):
    import networkx as nx

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


def to_graph(obj, weight="weight", source="source", target="target"):
    """(Graph, kind) for any supported input."""
    import networkx as nx

    kind = input_kind(obj)
    if kind == "graph":
        return obj, kind
    mod = type(obj).__module__
    if mod.startswith(("nx_cugraph", "cugraph")):
        from nx_gpumatch.gpu import interop

        if mod.startswith("cugraph"):
            return interop.from_cugraph(obj, weight=weight), kind
        g = interop.from_nx_cugraph(obj, weight=weight)
        if g is not None:  # else it lives on the host: an ordinary networkx graph
            return g, kind
    if kind == "networkx":
        if obj.is_directed():
            raise nx.NetworkXNotImplemented("not implemented for directed type")
        if obj.is_multigraph():
            raise nx.NetworkXNotImplemented("not implemented for multigraph type")
        return Graph.from_networkx(obj, weight=weight), kind
    if kind == "pandas":
        return Graph.from_pandas(obj, source=source, target=target, weight=weight), kind
    if kind == "cudf":
        return Graph.from_pandas(obj.to_pandas(), source=source, target=target, weight=weight), kind
    return Graph.from_any(obj, weight=weight), kind


def matched_pairs(mate):
    """(u, v) arrays of matched pairs with u < v."""
    mate = np.asarray(mate)
    u = np.flatnonzero(mate > np.arange(mate.shape[0]))
    return u, mate[u]


def edge_weights(graph, u, v):
    """Weights of existing edges (u[i], v[i]), u < v: a binary search in the
    edge list, which is sorted by (src, dst)."""
    n = np.int64(graph.num_nodes)
    keys = graph.edge_src.astype(np.int64) * n + graph.edge_dst
    return graph.edge_weight[np.searchsorted(keys, u.astype(np.int64) * n + v)]


def label_array(graph):
    """Labels as an array that ``take`` can index (keeps the input's dtype)."""
    if graph.nodes is None:
        return None
    arr = graph._cache.get("label_array")
    if arr is None:
        import pandas as pd

        arr = pd.Index(graph.nodes, tupleize_cols=False)
        graph._cache["label_array"] = arr
    return arr


def matching_result(graph, kind, mate, weight="weight", source="source", target="target"):
    """The matching in the caller's types."""
    if kind in ("graph", "array"):
        return mate
    u, v = matched_pairs(mate)
    if kind == "networkx":
        labels = graph.labels()
        return {(labels[a], labels[b]) for a, b in zip(u.tolist(), v.tolist())}
    import pandas as pd

    labels = label_array(graph)
    cols = {
        source: u if labels is None else labels.take(u),
        target: v if labels is None else labels.take(v),
    }
    if weight is not None:
        cols[weight] = edge_weights(graph, u, v)
    df = pd.DataFrame(
        {k: np.asarray(c) if labels is None else pd.Series(c) for k, c in cols.items()}
    )
    if kind == "cudf":
        import cudf

        return cudf.from_pandas(df)
    return df
