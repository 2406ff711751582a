"""Plain-Python references written from the definitions, shared by the tests."""

import numpy as np


def greedy_b_matching(n, src, dst, w, b):
    """Sorted greedy b-matching under the package's edge order: heavier first, ties
    by the smaller (min id, max id) pair; positive weights only. Set of (u, v), u < v."""
    edges = sorted(
        ((float(x), min(u, v), max(u, v)) for u, v, x in zip(src, dst, w) if x > 0),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    left = list(b)
    out = set()
    for _, u, v in edges:
        if left[u] > 0 and left[v] > 0:
            out.add((u, v))
            left[u] -= 1
            left[v] -= 1
    return out


def greedy_mate(g):
    """The greedy matching (b = 1) of a Graph as a mate list (-1 = unmatched)."""
    mate = [-1] * g.num_nodes
    pairs = greedy_b_matching(
        g.num_nodes,
        g.edge_src.tolist(),
        g.edge_dst.tolist(),
        g.edge_weight.tolist(),
        [1] * g.num_nodes,
    )
    for u, v in pairs:
        mate[u], mate[v] = v, u
    return mate


def summed_graph(M, weight, attr="weight"):
    """The networkx Graph that networkx's Louvain clusters for MultiGraph M:
    each pair's parallel edges merged, the sum of their ``weight`` (missing: 1;
    ``weight=None``: their number) kept as ``attr``."""
    import networkx as nx

    H = nx.Graph()
    H.add_nodes_from(M)
    for u, v, x in M.edges(data=weight, default=1):
        x = 1 if weight is None else x
        if H.has_edge(u, v):
            H[u][v][attr] += x
        else:
            H.add_edge(u, v, **{attr: x})
    return H


def modularity(g, labels, resolution=1.0):
    """Modularity of ``labels`` on a Graph from the definition (self-loops
    included), with the package's weights; for partitions compared in tests."""
    labels = np.asarray(labels, np.int64)
    w = g.edge_weight
    m = float(w.sum() + g.loop_weight.sum())
    inner = float(w[labels[g.edge_src] == labels[g.edge_dst]].sum() + g.loop_weight.sum())
    deg = (
        np.bincount(g.edge_src, w, g.num_nodes)
        + np.bincount(g.edge_dst, w, g.num_nodes)
        + 2 * g.loop_weight
    )
    vol = np.bincount(labels, deg)
    return inner / m - resolution * float((vol * vol).sum()) / (4 * m * m)
