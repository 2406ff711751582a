"""Inputs from the RAPIDS stack: cuDF DataFrames, ``cugraph.Graph`` and
nx-cugraph graphs.

Objects are recognised by their module name, so nothing here imports cuDF,
cuGraph or CuPy until such an object is actually passed in. A host
:class:`~nx_gpumatch.Graph` is always built (it numbers the vertices, labels the
results and feeds the CPU engine); for nx-cugraph graphs the GPU engine
additionally builds its device CSR straight from the graph's device arrays, so
nothing is uploaded again.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from nx_gpumatch.gpu.graph import DeviceGraph
from nx_gpumatch.graph import Graph

__all__ = ["from_cudf", "from_cugraph", "from_nx_cugraph"]

DEVICE_FACTORY = "device_graph_factory"


def _host(a):
    get = getattr(a, "get", None)
    return get() if callable(get) and not isinstance(a, np.ndarray) else np.asarray(a)


def from_cudf(df, source="source", target="target", weight="weight"):
    """Graph from a cuDF edge list, numbered exactly as the same pandas frame."""
    return Graph.from_pandas(df.to_pandas(), source=source, target=target, weight=weight)


def from_cugraph(G, weight="weight"):
    """Graph from an undirected ``cugraph.Graph`` (its edge list, original vertex ids)."""
    if G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for directed type")
    df = G.view_edge_list()
    cols = list(df.columns)

    def name(attr, fallback):
        c = getattr(G, attr, None)
        if isinstance(c, (list, tuple)):
            if len(c) != 1:
                raise ValueError("cugraph graphs with multi-column vertex ids are not supported")
            c = c[0]
        return c if c in cols else fallback

    src = name("source_columns", cols[0])
    dst = name("destination_columns", cols[1])
    wcol = None
    if weight is not None and G.is_weighted():
        wcol = name("weight_column", None)
        if wcol is None:
            rest = [c for c in cols if c not in (src, dst)]
            wcol = rest[0] if rest else None
    g = from_cudf(df, source=src, target=dst, weight=wcol)
    g.weight_attr = weight
    return g


def _cuda_graph(G):
    """The device-side graph of an nx-cugraph object, or None if it only lives
    on the host (then it is an ordinary networkx graph)."""
    if hasattr(G, "src_indices"):
        return G
    get = getattr(G, "_get_cudagraph", None)
    return get(edge_data=True) if callable(get) else None


def from_nx_cugraph(G, weight="weight", default=1.0, parallel=None):
    """Graph from an nx-cugraph graph held on the device, or None when it has
    no device copy (convert it as a networkx graph then). A MultiGraph needs
    ``parallel="sum"``, as in :meth:`Graph.from_networkx`."""
    cg = _cuda_graph(G)
    if cg is None:
        return None
    if cg.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for directed type")
    multi = cg.is_multigraph()
    if multi and parallel != "sum":
        raise nx.NetworkXNotImplemented("not implemented for multigraph type")
    n = len(cg)
    src, dst = cg.src_indices, cg.dst_indices
    w = None
    if weight is not None and weight in cg.edge_values:
        w = cg.edge_values[weight]
        mask = cg.edge_masks.get(weight) if getattr(cg, "edge_masks", None) else None
        if mask is not None:
            w = w.copy()
            w[~mask] = default
    elif weight is not None and default != 1:
        w = default
    labels = getattr(cg, "id_to_key", None)
    nodes = None if labels is None else list(labels)
    w_host = (
        None if w is None else (np.full(src.shape[0], float(w)) if np.isscalar(w) else _host(w))
    )
    if multi:
        g = _one_way_summed(n, _host(src), _host(dst), w_host, nodes)
        g.weight_attr = weight
        return g  # the device CSR is built from g: the arrays hold each edge twice
    g = Graph.from_arrays(_host(src), _host(dst), w_host, num_nodes=n, nodes=nodes)
    g.weight_attr = weight

    def device(backend):
        ww = w
        if np.isscalar(ww):
            ww = np.full(src.shape[0], float(ww))
        return DeviceGraph.from_coo(backend, n, src, dst, ww)

    g.cached(DEVICE_FACTORY, lambda: device)
    return g


def _one_way_summed(n, src, dst, w, nodes):
    """Graph of an undirected nx-cugraph MultiGraph's arcs: each edge is stored
    both ways (a self-loop once), so one way is kept before parallel edges
    are summed."""
    one_way = src <= dst
    if w is not None:
        w = w[one_way]
    return Graph.from_arrays(
        src[one_way], dst[one_way], w, num_nodes=n, nodes=nodes, duplicates="sum"
    )
