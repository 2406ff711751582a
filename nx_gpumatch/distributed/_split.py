"""Linear-time steps of the redistribution (:mod:`.partition`): the rows each
owner gets, packed in place by a counting pass; global ids to local ids;
sorted unique pairs by counting sort; ghosts and boundary vertices grouped
by rank from one scan of the rows.

Comparison sorts of the received edges (an argsort or lexsort of 64-bit keys)
were most of the cost of building a rank's share; local ids are small, dense
integers, so two stable counting passes order the pairs in O(m + n) and keep
the arrival order of equal pairs, which is the order "last wins" needs.
"""

import numpy as np

from nx_gpumatch.cpu import njit, run

__all__ = ["local_ids", "unique_pairs", "rows_by_owner", "pairs", "unpack_rows", "ghost_groups"]

# A map over all n global ids (n bytes, then 4n) beats searching the ghosts in
# a sorted list while n stays within this many times the ends to map.
DENSE_MAP = 4


def rows_by_owner(src, dst, weight, size, block, own):
    """This rank's edges as rows to send, grouped by destination rank in input
    order: ``(rows, counts)``, rows (k, 2) int64 holding ``lo << 32 | hi`` (lo
    < hi, 32-bit ids) and the weight's bits. Each edge goes to the owners of
    both ends, once if one rank owns both; self-loops are left out. Owners:
    ``v // block`` when block > 0, else ``own[v]``. Two passes (count, then
    place) over the edges: no sort, no copies of the rows."""
    wbits = np.ascontiguousarray(weight, np.float64).view(np.int64)
    with run("graph", src.shape[0]):
        return _rows_by_owner(src, dst, wbits, size, block, own)


@njit(cache=True)
def _owner(v, block, own):
    return v // block if block > 0 else own[v]


@njit(cache=True)
def _rows_by_owner(src, dst, wbits, size, block, own):
    start = np.zeros(size + 1, np.int64)
    for i in range(src.shape[0]):
        a = min(src[i], dst[i])
        b = max(src[i], dst[i])
        if a != b:
            ra = _owner(a, block, own)
            rb = _owner(b, block, own)
            start[ra + 1] += 1
            if rb != ra:
                start[rb + 1] += 1
    for r in range(size):
        start[r + 1] += start[r]
    fill = start[:-1].copy()
    rows = np.empty((start[size], 2), np.int64)
    for i in range(src.shape[0]):
        a = min(src[i], dst[i])
        b = max(src[i], dst[i])
        if a != b:
            key = (np.int64(a) << 32) | np.int64(b)
            ra = _owner(a, block, own)
            rb = _owner(b, block, own)
            rows[fill[ra], 0] = key
            rows[fill[ra], 1] = wbits[i]
            fill[ra] += 1
            if rb != ra:
                rows[fill[rb], 0] = key
                rows[fill[rb], 1] = wbits[i]
                fill[rb] += 1
    return rows, start[1:] - start[:-1]


def pairs(src, dst, weight):
    """(lo, hi, weight) of the edges, lo < hi as int32 ids, self-loops left out."""
    with run("graph", src.shape[0]):
        return _canonical(src, dst, np.ascontiguousarray(weight, np.float64))


def unpack_rows(rows):
    """(lo, hi, weight) of rows as :func:`rows_by_owner` packs them."""
    with run("graph", rows.shape[0]):
        return _unpack_rows(rows)


@njit(cache=True)
def _unpack_rows(rows):
    k = rows.shape[0]
    lo = np.empty(k, np.int32)
    hi = np.empty(k, np.int32)
    w = np.empty(k, np.int64)
    for i in range(k):
        lo[i] = rows[i, 0] >> 32
        hi[i] = rows[i, 0] & 0xFFFFFFFF
        w[i] = rows[i, 1]
    return lo, hi, w.view(np.float64)


@njit(cache=True)
def _canonical(src, dst, weight):
    k = 0
    for i in range(src.shape[0]):
        k += src[i] != dst[i]
    lo = np.empty(k, np.int32)
    hi = np.empty(k, np.int32)
    w = np.empty(k, np.float64)
    j = 0
    for i in range(src.shape[0]):
        if src[i] != dst[i]:
            lo[j] = min(src[i], dst[i])
            hi[j] = max(src[i], dst[i])
            w[j] = weight[i]
            j += 1
    return lo, hi, w


def local_ids(n, owned_gids, lo, hi):
    """(gids, lo_local, hi_local): the sorted union of the owned ids and every
    end of a received edge, and each end's position in it (int32). Local ids
    number the vertices in global-id order, so pairs keep their order."""
    from nx_gpumatch.distributed.partition import LocalIds, _union

    if n <= DENSE_MAP * (lo.shape[0] + hi.shape[0] + owned_gids.shape[0]) + (1 << 16):
        with run("graph", lo.shape[0]):
            return (*_dense_local_ids(n, owned_gids, lo, hi), None)
    gids = _union(owned_gids, lo, hi)
    local = LocalIds(gids, owned_gids)
    return gids, local(lo).astype(np.int32), local(hi).astype(np.int32), local


@njit(cache=True)
def _dense_local_ids(n, owned_gids, lo, hi):
    mark = np.zeros(n, np.bool_)  # a byte per id: the random writes stay in cache longer
    for v in owned_gids:
        mark[v] = True
    for i in range(lo.shape[0]):
        mark[lo[i]] = True
        mark[hi[i]] = True
    k = 0
    for v in range(n):
        k += mark[v]
    gids = np.empty(k, np.int64)
    lid = np.empty(n, np.int32)
    k = 0
    for v in range(n):
        lid[v] = k
        if mark[v]:
            gids[k] = v
            k += 1
    la = np.empty(lo.shape[0], np.int32)
    lb = np.empty(hi.shape[0], np.int32)
    for i in range(lo.shape[0]):
        la[i] = lid[lo[i]]
        lb[i] = lid[hi[i]]
    return gids, la, lb


def unique_pairs(n_major, major, n_minor, minor, weight, keep="last"):
    """Unique (major, minor) pairs sorted by major then minor, with one weight
    each: the last one in array order (``keep="last"``) or the largest
    (``"max"``). Ids lie in [0, n_major) and [0, n_minor)."""
    major = np.ascontiguousarray(major, np.int32)
    minor = np.ascontiguousarray(minor, np.int32)
    weight = np.ascontiguousarray(weight, np.float64)
    with run("graph", major.shape[0]):
        return _unique_pairs(n_major, major, minor, weight, keep == "max")


@njit(cache=True)
def _unique_pairs(n_major, major, minor, weight, keep_max):
    m = major.shape[0]
    # One stable counting pass by major carrying minor and weight along (no
    # permutation to follow back: one random read less per pair), then each
    # row sorted by minor in place (rows are short and sorted in cache;
    # stable, so equal pairs keep their array order), then equal neighbours
    # merged.
    start = np.zeros(n_major + 1, np.int64)
    for i in range(m):
        start[major[i] + 1] += 1
    for v in range(n_major):
        start[v + 1] += start[v]
    fill = start[:-1].copy()
    key = np.empty(m, np.int32)
    wt = np.empty(m, np.float64)
    for i in range(m):
        p = fill[major[i]]
        key[p] = minor[i]
        wt[p] = weight[i]
        fill[major[i]] = p + 1
    a = np.empty(m, np.int32)
    k = 0
    for r in range(n_major):
        s = start[r]
        e = start[r + 1]
        if e - s > 64:
            o = np.argsort(key[s:e], kind="mergesort")
            wt[s:e] = wt[s:e][o]
            key[s:e] = key[s:e][o]
        else:
            for j in range(s + 1, e):  # insertion sort
                kj = key[j]
                wj = wt[j]
                q = j - 1
                while q >= s and key[q] > kj:
                    key[q + 1] = key[q]
                    wt[q + 1] = wt[q]
                    q -= 1
                key[q + 1] = kj
                wt[q + 1] = wj
        # Merged in place: k <= j, so the write never passes the read.
        for j in range(s, e):
            if k and a[k - 1] == r and key[k - 1] == key[j]:
                if not keep_max or wt[j] > wt[k - 1]:
                    wt[k - 1] = wt[j]  # equal pairs come in array order
                continue
            a[k] = r
            key[k] = key[j]
            wt[k] = wt[j]
            k += 1
    if k == m:  # no repeated pair: nothing to trim
        return a, key, wt
    return a[:k].copy(), key[:k].copy(), wt[:k].copy()


def ghost_groups(size, indptr, indices, owned, owner):
    """What a rank exchanges with each neighbour rank, from its CSR graph on
    local ids: ``(ghosts_of, boundary, cut_arcs)``, ``ghosts_of`` {rank:
    the ghosts it owns}, ``boundary`` {rank: owned vertices with a ghost
    there} (local ids ascending, the same ranks as keys) and the number of
    arcs from owned vertices to ghosts. One pass over the ghosts and one over
    the owned rows (each twice: count, then fill): no sort."""
    owned = np.ascontiguousarray(owned, np.bool_)
    owner = np.ascontiguousarray(owner, np.int32)
    with run("graph", indices.shape[0]):
        gptr, gout, bptr, bout, cut = _ghost_groups(size, indptr, indices, owned, owner)
    ghosts_of, boundary = {}, {}
    for r in range(size):
        if gptr[r + 1] > gptr[r]:
            ghosts_of[r] = gout[gptr[r] : gptr[r + 1]].astype(np.int64)
            boundary[r] = bout[bptr[r] : bptr[r + 1]].astype(np.int64)
    return ghosts_of, boundary, int(cut)


@njit(cache=True)
def _ghost_groups(size, indptr, indices, owned, owner):
    nl = owned.shape[0]
    gptr = np.zeros(size + 1, np.int64)
    bptr = np.zeros(size + 1, np.int64)
    last = np.full(size, -1, np.int64)  # the last owned vertex counted per rank
    cut = 0
    for v in range(nl):
        if not owned[v]:
            gptr[owner[v] + 1] += 1
            continue
        for q in range(indptr[v], indptr[v + 1]):
            x = indices[q]
            if not owned[x]:
                cut += 1
                r = owner[x]
                if last[r] != v:
                    last[r] = v
                    bptr[r + 1] += 1
    for r in range(size):
        gptr[r + 1] += gptr[r]
        bptr[r + 1] += bptr[r]
    gout = np.empty(gptr[size], np.int32)
    bout = np.empty(bptr[size], np.int32)
    gfill = gptr[:-1].copy()
    bfill = bptr[:-1].copy()
    last[:] = -1
    for v in range(nl):
        if not owned[v]:
            r = owner[v]
            gout[gfill[r]] = v
            gfill[r] += 1
            continue
        for q in range(indptr[v], indptr[v + 1]):
            x = indices[q]
            if not owned[x]:
                r = owner[x]
                if last[r] != v:
                    last[r] = v
                    bout[bfill[r]] = v
                    bfill[r] += 1
    return gptr, gout, bptr, bout, cut
