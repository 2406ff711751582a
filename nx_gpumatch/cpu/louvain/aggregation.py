"""Aggregation: the graph of a level's communities, arcs merged per
community pair."""

import numpy as np
from numba import get_thread_id, prange

from nx_gpumatch.cpu import njit, serial_builds
from nx_gpumatch.cpu.louvain.batches import _balanced_chunks
from nx_gpumatch.cpu.louvain.constants import GATHER_MAX_DEGREE


# ------------------------------------------------------------- aggregation
@njit(cache=True)
def renumber(comm):
    """Consecutive ids for the non-empty communities (in community-id order).

    Returns (newid, K, ptr, members): community c becomes vertex newid[c];
    new vertex x holds members[ptr[x]:ptr[x+1]] in increasing id order.
    """
    n = comm.shape[0]
    cnt = np.zeros(n, np.int64)
    for v in range(n):
        cnt[comm[v]] += 1
    newid = np.full(n, -1, np.int32)
    K = 0
    for c in range(n):
        if cnt[c] > 0:
            newid[c] = K
            K += 1
    ptr = np.zeros(K + 1, np.int64)
    for c in range(n):
        if cnt[c] > 0:
            ptr[newid[c] + 1] = cnt[c]
    for x in range(K):
        ptr[x + 1] += ptr[x]
    fill = ptr[:-1].copy()
    members = np.empty(n, np.int32)
    for v in range(n):
        x = newid[comm[v]]
        members[fill[x]] = v
        fill[x] += 1
    return newid, K, ptr, members


@njit(cache=True, inline="always")
def _add_arc(d, wd, P, tmp_c, tmp_w, base, cnt):
    """Adds weight wd towards new vertex d to the row being merged at
    tmp[base:] (P: slot of each new vertex in it, -1 when absent); returns
    the row's new length."""
    q = P[d]
    if q < 0:
        P[d] = cnt
        tmp_c[base + cnt] = d
        tmp_w[base + cnt] = wd
        return cnt + 1
    tmp_w[base + q] += wd
    return cnt


@njit(cache=True, inline="always")
def _end_row(x, cnt, lp, intra, P, tmp_c, base, count, loop_new):
    """Closes merged row x: clears its slots in P, records its length and
    its self-loop (old self-loops ``lp``; each inner edge was seen from both
    ends in ``intra``)."""
    for q in range(cnt):
        P[tmp_c[base + q]] = -1
    count[x] = cnt
    loop_new[x] = lp + 0.5 * intra


@njit(cache=True, parallel=True)
def _merge(
    chunks, ptr, members, cx, indptr, indices, w, loop, ub_ptr, pos, tmp_c, tmp_w, count, loop_new
):
    # Reads each member's row where it lies: levels with long rows.
    for ch in prange(chunks.shape[0] - 1):
        P = pos[get_thread_id()]
        for x in range(chunks[ch], chunks[ch + 1]):
            base = ub_ptr[x]
            cnt = 0
            intra = 0.0
            lp = 0.0
            for t in range(ptr[x], ptr[x + 1]):
                v = members[t]
                lp += loop[v]
                for p in range(indptr[v], indptr[v + 1]):
                    d = cx[indices[p]]
                    if d == x:
                        intra += w[p]
                    else:
                        cnt = _add_arc(d, w[p], P, tmp_c, tmp_w, base, cnt)
            _end_row(x, cnt, lp, intra, P, tmp_c, base, count, loop_new)


@njit(cache=True, parallel=True)
def _gather(chunks, indptr, indices, w, cx, voff, tmp_c, tmp_w):
    # Copies each row, its ends renamed, to its community's stretch of tmp
    # (voff[v]: where v's row goes): rows are read in order, one after another.
    for ch in prange(chunks.shape[0] - 1):
        for v in range(chunks[ch], chunks[ch + 1]):
            d = voff[v] - indptr[v]
            for p in range(indptr[v], indptr[v + 1]):
                tmp_c[d + p] = cx[indices[p]]
                tmp_w[d + p] = w[p]


@njit(cache=True, parallel=True)
def _merge_gathered(chunks, ptr, members, loop, ub_ptr, pos, tmp_c, tmp_w, count, loop_new):
    # _merge on rows _gather put in place; the merged row is written over the
    # stretch it is read from (it is never longer than what has been read).
    for ch in prange(chunks.shape[0] - 1):
        P = pos[get_thread_id()]
        for x in range(chunks[ch], chunks[ch + 1]):
            base = ub_ptr[x]
            cnt = 0
            intra = 0.0
            lp = 0.0
            for t in range(ptr[x], ptr[x + 1]):
                lp += loop[members[t]]
            for s in range(base, ub_ptr[x + 1]):
                d = tmp_c[s]
                if d == x:
                    intra += tmp_w[s]
                else:
                    cnt = _add_arc(d, tmp_w[s], P, tmp_c, tmp_w, base, cnt)
            _end_row(x, cnt, lp, intra, P, tmp_c, base, count, loop_new)


@njit(cache=True, parallel=True)
def _compact(K, ub_ptr, count, tmp_c, tmp_w, indptr2, indices2, w2, loop2, k2):
    for x in prange(K):
        src = ub_ptr[x]
        dst = indptr2[x]
        s = 0.0
        for q in range(count[x]):
            indices2[dst + q] = tmp_c[src + q]
            wq = tmp_w[src + q]
            w2[dst + q] = wq
            s += wq
        k2[x] = s + 2.0 * loop2[x]


@njit(cache=True)
def aggregate(
    comm, newid, K, ptr, members, indptr, indices, w, loop, pos, nchunks, tmp_c, tmp_w, out_i, out_w
):
    """The graph whose vertices are the communities of comm (numbered by
    :func:`renumber`).

    Returns (indptr2, indices2, w2, loop2, k2): parallel edges summed, inner
    edges and old self-loops summed into each new vertex's self-loop. Each
    community's arcs are summed in the order of its members (by id), then
    along each row, whichever way they are read (see GATHER_MAX_DEGREE).

    ``tmp_c``, ``tmp_w`` (scratch, sharing no memory with the rest) and
    ``out_i``, ``out_w`` (which receive indices2 and w2, returned as their
    leading parts) are buffers of at least the level's arcs, or too short:
    then they are allocated here. ``out_i``, ``out_w`` may hold ``indices``,
    ``w`` themselves: those are read in full before _compact writes. Buffers
    kept from level to level spare fresh pages (see KEEP_BUFFERS_ARCS).
    """
    n = comm.shape[0]
    ub_ptr = np.zeros(K + 1, np.int64)
    voff = np.empty(n, np.int64)
    for x in range(K):
        s = ub_ptr[x]
        for t in range(ptr[x], ptr[x + 1]):
            v = members[t]
            voff[v] = s
            s += indptr[v + 1] - indptr[v]
        ub_ptr[x + 1] = s
    cost = ub_ptr + np.arange(K + 1)
    chunks = _balanced_chunks(cost, min(nchunks, max(K, 1)))
    arcs = ub_ptr[K]
    tmp_c = tmp_c[:arcs] if tmp_c.shape[0] >= arcs else np.empty(arcs, np.int32)
    tmp_w = tmp_w[:arcs] if tmp_w.shape[0] >= arcs else np.empty(arcs, np.float64)
    count = np.empty(K, np.int64)
    loop2 = np.empty(K, np.float64)
    cx = np.empty(n, np.int32)
    for v in range(n):
        cx[v] = newid[comm[v]]
    if indices.shape[0] <= GATHER_MAX_DEGREE * n:
        vchunks = _balanced_chunks(indptr + np.arange(n + 1), min(nchunks, max(n, 1)))
        _gather(vchunks, indptr, indices, w, cx, voff, tmp_c, tmp_w)
        _merge_gathered(chunks, ptr, members, loop, ub_ptr, pos, tmp_c, tmp_w, count, loop2)
    else:
        _merge(
            chunks,
            ptr,
            members,
            cx,
            indptr,
            indices,
            w,
            loop,
            ub_ptr,
            pos,
            tmp_c,
            tmp_w,
            count,
            loop2,
        )
    indptr2 = np.zeros(K + 1, np.int64)
    for x in range(K):
        indptr2[x + 1] = indptr2[x] + count[x]
    m = indptr2[K]
    indices2 = out_i[:m] if out_i.shape[0] >= m else np.empty(m, np.int32)
    w2 = out_w[:m] if out_w.shape[0] >= m else np.empty(m, np.float64)
    k2 = np.empty(K, np.float64)
    _compact(K, ub_ptr, count, tmp_c, tmp_w, indptr2, indices2, w2, loop2, k2)
    return indptr2, indices2, w2, loop2, k2


def own_buffers():
    """Buffer arguments of :func:`aggregate` with which it allocates its own."""
    return np.empty(0, np.int32), np.empty(0), np.empty(0, np.int32), np.empty(0)


# Build without threads (see sweeps.optimise_1).
aggregate_1, *_ = serial_builds(aggregate, _merge, _gather, _merge_gathered, _compact)
