"""Numba helpers that build the CSR arrays of :class:`nx_gpumatch.Graph`."""

import numpy as np
from numba import prange

from nx_gpumatch.cpu import kernel, njit, run


def build_csr(n, src, dst, weight):
    """Symmetric CSR from unique undirected edges with src < dst, sorted by (src, dst).

    Returns (indptr, indices, arc_edge, arc_weight). Each row's columns come out sorted: for row r,
    the arcs of edges (lo, r) (columns lo < r, in edge order) are placed before those
    of edges (r, hi) (columns hi > r, in edge order), a stable counting sort.
    """
    # The row pointers by numpy: the kernel's loops then run over the edges
    # only, even interpreted (a small graph's first build) with many vertices.
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    indptr[1:] += np.cumsum(np.bincount(dst, minlength=n))
    with run("graph", src.shape[0]):
        return (indptr, *_fill_csr(indptr, indptr[:-1].copy(), src, dst, weight))


@njit(cache=True)
def _fill_csr(indptr, fill, src, dst, weight):
    m = src.shape[0]
    indices = np.empty(2 * m, np.int32)
    arc_edge = np.empty(2 * m, np.int32)
    arc_weight = np.empty(2 * m, np.float64)
    for e in range(m):  # reverse arcs first: columns below the row
        v = dst[e]
        p = fill[v]
        indices[p] = src[e]
        arc_edge[p] = e
        arc_weight[p] = weight[e]
        fill[v] = p + 1
    for e in range(m):
        u = src[e]
        p = fill[u]
        indices[p] = dst[e]
        arc_edge[p] = e
        arc_weight[p] = weight[e]
        fill[u] = p + 1
    return indices, arc_edge, arc_weight


@kernel
def inverse_permutation(order, none_from, none_value):
    """rank[order[i]] = i, except ranks >= none_from become none_value."""
    m = order.shape[0]
    rank = np.empty(m, np.int32)
    for i in prange(m):
        rank[order[i]] = i if i < none_from else none_value
    return rank


@kernel
def permute_rows(indptr, indices, w, rank, ptr):
    """(indices, w) of the CSR graph relabelled so that vertex v becomes
    vertex rank[v] (a permutation): row v is copied to offset ptr[rank[v]],
    its neighbours renamed, its arcs in their order. The old rows are read
    front to back and each lands in one block: 30% faster than reading them
    in the new order (4M arcs, one thread)."""
    out_i = np.empty(ptr[-1], np.int32)
    out_w = np.empty(ptr[-1], np.float64)
    for v in prange(indptr.shape[0] - 1):
        s = indptr[v]
        d = ptr[rank[v]]
        for p in range(indptr[v + 1] - s):
            out_i[d + p] = rank[indices[s + p]]
            out_w[d + p] = w[s + p]
    return out_i, out_w


@njit(cache=True)
def by_first_appearance(labels):
    """labels (ids 0..K-1) renamed so that ids appear in increasing order
    along the array."""
    n = labels.shape[0]
    newid = np.full(n, -1, np.int32)
    out = np.empty(n, np.int32)
    k = 0
    for v in range(n):
        c = labels[v]
        if newid[c] < 0:
            newid[c] = k
            k += 1
        out[v] = newid[c]
    return out


@kernel
def gather_int32(values, idx):
    out = np.empty(idx.shape[0], np.int32)
    for i in prange(idx.shape[0]):
        out[i] = values[idx[i]]
    return out


def edge_order(weight):
    """Edge ids best-first: weight descending, ties by edge id (= (src, dst) order).

    Exact for any float64 weights. Each edge gets a 32-bit key, the top half of
    its weight's order-preserving bit pattern, complemented for descending
    order; a stable radix sort of the keys orders the edges by coarse weight,
    then id, and edges whose weights agree in the top 32 bits but differ below
    are then put right by :func:`_fix_groups`. The radix sort skips every digit
    that all keys share, so unit weights cost one pass over the keys and small
    integers two sorting passes: the inputs where ties are the rule.
    """
    m = weight.shape[0]
    if m == 0:
        return np.empty(0, np.int64)
    w = np.ascontiguousarray(weight, np.float64) + 0.0  # -0.0 becomes 0.0
    with run("graph", m):
        order, keys = _radix_order(_coarse_keys(w))
        ok = _fix_groups(keys, order, w)
    if not ok:
        order = np.argsort(-w, kind="stable")
    return order


@kernel
def _coarse_keys(w):
    bits = w.view(np.uint64)
    sign = np.uint64(1) << np.uint64(63)
    out = np.empty(w.shape[0], np.uint32)
    for i in prange(w.shape[0]):
        b = bits[i]
        ordered = ~b if b & sign else b | sign  # unsigned order == float order
        out[i] = np.uint32((~ordered) >> np.uint64(32))
    return out


@njit(cache=True)
def _radix_order(keys):
    """(order, keys[order]): the stable order of ``keys`` (uint32), by
    least-significant-digit radix sort on bytes; digits every key shares are
    skipped."""
    m = keys.shape[0]
    count = np.zeros((4, 256), np.int64)
    for i in range(m):
        k = keys[i]
        for d in range(4):
            count[d, (k >> np.uint32(8 * d)) & np.uint32(255)] += 1
    order = np.arange(m)
    ks = keys.copy()
    o2 = np.empty(m, np.int64)
    k2 = np.empty(m, np.uint32)
    start = np.empty(256, np.int64)
    for d in range(4):
        if count[d].max() == m:
            continue
        total = 0
        for b in range(256):
            start[b] = total
            total += count[d, b]
        shift = np.uint32(8 * d)
        for i in range(m):
            b = (ks[i] >> shift) & np.uint32(255)
            p = start[b]
            o2[p] = order[i]
            k2[p] = ks[i]
            start[b] = p + 1
        order, o2 = o2, order
        ks, k2 = k2, ks
    return order, ks


@kernel
def _fix_groups(keys, order, w):
    """Put each group of equal coarse keys (ids ascending in it) in weight
    order; False if a large group is out of order (left for the caller)."""
    m = keys.shape[0]
    ws = np.empty(m, np.float64)  # weights in sorted order: the fix-up reads them sequentially
    for i in prange(m):
        ws[i] = w[order[i]]
    # Chunks for the threads, each starting at a group start so no group is split.
    nchunk = 64
    starts = np.empty(nchunk + 1, np.int64)
    starts[0] = 0
    for c in range(1, nchunk + 1):
        b = max(starts[c - 1], min(m, c * ((m + nchunk - 1) // nchunk)))
        while 0 < b < m and keys[b] == keys[b - 1]:
            b += 1
        starts[c] = b
    bad = 0
    for c in prange(nchunk):
        bad += _fix_range(keys, order, ws, starts[c], starts[c + 1])
    return bad == 0


@njit(cache=True)
def _fix_range(keys, order, ws, i, end):
    """Sort the small groups of [i, end) by weight; returns 1 if a large group
    is out of order (left for the caller), else 0."""
    bad = 0
    while i < end:
        hi = keys[i]
        j = i + 1
        while j < keys.shape[0] and keys[j] == hi:
            j += 1
        sorted_ok = True
        for k in range(i + 1, j):
            if ws[k] > ws[k - 1]:
                sorted_ok = False
                break
        if not sorted_ok and j - i <= 32:
            # Ids are ascending here, so a stable sort on -w gives the order:
            # insertion sort, as groups are small for all but contrived weights.
            for k in range(i + 1, j):
                e = order[k]
                we = ws[k]
                q = k - 1
                while q >= i and ws[q] < we:
                    order[q + 1] = order[q]
                    ws[q + 1] = ws[q]
                    q -= 1
                order[q + 1] = e
                ws[q + 1] = we
        elif not sorted_ok:
            bad = 1
        i = j
    return bad
