"""Numba helpers that build the CSR arrays of :class:`nx_gpumatch.Graph`."""

import numpy as np
from numba import njit


@njit(cache=True)
def build_csr(n, src, dst):
    """Symmetric CSR from unique undirected edges with src < dst, sorted by (src, dst).

    Returns (indptr, indices, arc_edge). Each row's columns come out sorted: for row r,
    the arcs of edges (lo, r) (columns lo < r, in edge order) are placed before those
    of edges (r, hi) (columns hi > r, in edge order), a stable counting sort.
    """
    m = src.shape[0]
    deg = np.zeros(n + 1, np.int64)
    for e in range(m):
        deg[src[e] + 1] += 1
        deg[dst[e] + 1] += 1
    indptr = np.empty(n + 1, np.int64)
    indptr[0] = 0
    for v in range(n):
        indptr[v + 1] = indptr[v] + deg[v + 1]
    fill = indptr[:-1].copy()
    indices = np.empty(2 * m, np.int32)
    arc_edge = np.empty(2 * m, np.int32)
    for e in range(m):  # reverse arcs first: columns below the row
        v = dst[e]
        p = fill[v]
        indices[p] = src[e]
        arc_edge[p] = e
        fill[v] = p + 1
    for e in range(m):
        u = src[e]
        p = fill[u]
        indices[p] = dst[e]
        arc_edge[p] = e
        fill[u] = p + 1
    return indptr, indices, arc_edge


@njit(cache=True)
def inverse_permutation(order, none_from, none_value):
    """rank[order[i]] = i, except ranks >= none_from become none_value."""
    m = order.shape[0]
    rank = np.empty(m, np.int32)
    for i in range(m):
        rank[order[i]] = i if i < none_from else none_value
    return rank


@njit(cache=True)
def gather_int32(values, idx):
    out = np.empty(idx.shape[0], np.int32)
    for i in range(idx.shape[0]):
        out[i] = values[idx[i]]
    return out
