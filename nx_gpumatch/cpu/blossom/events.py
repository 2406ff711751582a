"""The exact matching's events: one 4-ary heap of (time, kind, payload)
records with lazy deletion, the event times of edges, duals and blossoms, and
the scans that push them (see the package's doc)."""

import numpy as np

from nx_gpumatch.cpu import njit
from nx_gpumatch.cpu.blossom.tables import (
    AH,
    AL,
    ARGMIN,
    B2H,
    B2L,
    BNAME,
    EV_BLOSSOM,
    EV_DUAL,
    EV_EDGE,
    F2,
    HCAP,
    HOVER,
    HSIZE,
    LABEL,
    NLAB,
    OWNER,
    PARENT,
    SLAB,
    TLAB,
    VFIRST,
    VLAST,
    VNM,
    YH,
    YL,
    ZH,
    ZL,
    before,
    i8,
)


# A 4-ary min-heap of records (time hi, time lo, kind, payload) in one float64
# array, so a node's children share two cache lines. Payloads are integers
# below 2**53, exact as floats.
@njit(cache=True, inline="always")
def _copy_row(H, dst, src):
    """Heap record ``src`` into slot ``dst``."""
    H[dst, 0] = H[src, 0]
    H[dst, 1] = H[src, 1]
    H[dst, 2] = H[src, 2]
    H[dst, 3] = H[src, 3]


@njit(cache=True, no_cpython_wrapper=True)
def hpush(H, meta, kh, kl, p):
    i = meta[HSIZE]
    if i >= meta[HCAP]:
        meta[HOVER] = 1  # dropped; the caller rebuilds the heap from the state
        return
    meta[HSIZE] = i + 1
    kind = np.float64(p & 3)
    while i > 0:
        par = (i - 1) >> 2
        if before(kh, kl, kind, H[par, 0], H[par, 1], H[par, 2]):
            _copy_row(H, i, par)
            i = par
        else:
            break
    H[i, 0] = kh
    H[i, 1] = kl
    H[i, 2] = kind
    H[i, 3] = np.float64(p)


@njit((F2, i8, i8), cache=True, no_cpython_wrapper=True)
def sift_down(H, size, i):
    kh = H[i, 0]
    kl = H[i, 1]
    kind = H[i, 2]
    p = H[i, 3]
    while True:
        c = 4 * i + 1
        if c >= size:
            break
        end = min(c + 4, size)
        best = c
        for d in range(c + 1, end):
            if before(H[d, 0], H[d, 1], H[d, 2], H[best, 0], H[best, 1], H[best, 2]):
                best = d
        if before(H[best, 0], H[best, 1], H[best, 2], kh, kl, kind):
            _copy_row(H, i, best)
            i = best
        else:
            break
    H[i, 0] = kh
    H[i, 1] = kl
    H[i, 2] = kind
    H[i, 3] = p


@njit(cache=True, inline="always")
def hpop(H, meta):
    kh = H[0, 0]
    kl = H[0, 1]
    p = np.int64(H[0, 3])
    last = meta[HSIZE] - 1
    meta[HSIZE] = last
    if last > 0:
        _copy_row(H, 0, last)
        sift_down(H, last, 0)
    return kh, kl, p


@njit(cache=True, no_cpython_wrapper=True)
def edge_time(e, esrc, edst, wl, c, fd):
    """(kind, hi, lo): kind 2 = S-free edge (tight at D = N), 3 = S-S edge between
    different blossoms (tight at D = N/2), 0 = no event. N = P(a) + P(b) - w."""
    a = esrc[e]
    b = edst[e]
    na = np.int64(fd[a, VNM])
    nb = np.int64(fd[b, VNM])
    if na == nb:
        return 0, 0.0, 0.0
    la = np.int64(fd[na, NLAB])
    lb = np.int64(fd[nb, NLAB])
    if la == TLAB or lb == TLAB or (la != SLAB and lb != SLAB):
        return 0, 0.0, 0.0
    nh = (fd[a, YH] + fd[na, AH]) + (fd[b, YH] + fd[nb, AH]) - c
    nl = (fd[a, YL] + fd[na, AL]) + (fd[b, YL] + fd[nb, AL]) - wl[e]
    if la == SLAB and lb == SLAB:
        return 3, nh * 0.5, nl * 0.5
    return 2, nh, nl


@njit(cache=True, inline="always")
def push_dual(b, nd, fd, H, meta):
    x = nd[b, ARGMIN]
    nb = nd[b, BNAME]
    hpush(H, meta, fd[x, YH] + fd[nb, AH], fd[x, YL] + fd[nb, AL], (np.int64(b) << 2) | EV_DUAL)


@njit(cache=True, inline="always")
def push_blossom(b, fd, H, meta):
    hpush(H, meta, fd[b, ZH] * 0.5, fd[b, ZL] * 0.5, (np.int64(b) << 2) | EV_BLOSSOM)


@njit(cache=True, no_cpython_wrapper=True)
def scan_blossom(b, tb, vnext, g, c, nd, fd, H, meta):
    """Push the events of the edges at the vertices of blossom b, which lies in
    top-level blossom tb, after tb's label changed (the innermost loop of the
    search, written out in full).

    tb is S: every S-S edge gets an entry; an edge to a free vertex y gets one
    only if it beats y's earliest pushed time B2[y] (y's best edge is then in
    the heap; when that entry turns out stale, y is rescanned).
    tb is free: each vertex pushes its single best edge to an S vertex.
    """
    indptr, indices, arc_edge, awl = g
    lb = nd[tb, LABEL]
    nb = nd[tb, BNAME]
    abh = fd[nb, AH]
    abl = fd[nb, AL]
    x = nd[b, VFIRST]
    last = nd[b, VLAST]
    while True:
        pxh = fd[x, YH] + abh
        pxl = fd[x, YL] + abl
        if lb == SLAB:
            fd[x, B2H] = np.inf  # ready for when x is free again
            fd[x, B2L] = np.inf
            for k in range(indptr[x], indptr[x + 1]):
                y = indices[k]
                ny = np.int64(fd[y, VNM])
                if ny == nb:
                    continue
                ly = np.int64(fd[ny, NLAB])
                if ly == TLAB:
                    continue
                th = pxh + (fd[y, YH] + fd[ny, AH]) - c
                tl = pxl + (fd[y, YL] + fd[ny, AL]) - awl[k]
                if ly == SLAB:
                    th *= 0.5
                    tl *= 0.5
                else:
                    if th > fd[y, B2H] or (th == fd[y, B2H] and tl >= fd[y, B2L]):
                        continue
                    fd[y, B2H] = th
                    fd[y, B2L] = tl
                # heap push (written out: see hpush)
                i = meta[HSIZE]
                if i >= meta[HCAP]:
                    meta[HOVER] = 1
                    continue
                meta[HSIZE] = i + 1
                while i > 0:
                    par = (i - 1) >> 2
                    if th < H[par, 0] or (
                        th == H[par, 0]
                        and (tl < H[par, 1] or (tl == H[par, 1] and H[par, 2] > 1.0))
                    ):
                        _copy_row(H, i, par)
                        i = par
                    else:
                        break
                H[i, 0] = th
                H[i, 1] = tl
                H[i, 2] = 1.0  # EV_EDGE
                H[i, 3] = np.float64((np.int64(arc_edge[k]) << 2) | EV_EDGE)
        else:
            bh = np.inf
            bl = np.inf
            be = -1
            for k in range(indptr[x], indptr[x + 1]):
                y = indices[k]
                ny = np.int64(fd[y, VNM])
                if ny == nb or fd[ny, NLAB] != SLAB:
                    continue
                th = pxh + (fd[y, YH] + fd[ny, AH]) - c
                tl = pxl + (fd[y, YL] + fd[ny, AL]) - awl[k]
                if th < bh or (th == bh and tl < bl):
                    bh = th
                    bl = tl
                    be = arc_edge[k]
            fd[x, B2H] = bh
            fd[x, B2L] = bl
            if be != -1:
                hpush(H, meta, bh, bl, (np.int64(be) << 2) | EV_EDGE)
        if x == last:
            break
        x = vnext[x]


@njit(cache=True, no_cpython_wrapper=True, _nrt=False)
def rebuild(st):
    """All current events from scratch (after an overflow, and at the start)."""
    n, esrc, edst, wl, c, nd, fd, vname = (
        st.n,
        st.esrc,
        st.edst,
        st.wl,
        st.c,
        st.nd,
        st.fd,
        st.vname,
    )
    H, meta, best = st.H, st.meta, st.best
    m = esrc.shape[0]
    size = 0
    for v in range(n):
        fd[v, B2H] = np.inf
        fd[v, B2L] = np.inf
        best[v] = -1
    for e in range(m):
        kind, th, tl = edge_time(e, esrc, edst, wl, c, fd)
        if kind == 3:
            H[size, 0] = th
            H[size, 1] = tl
            H[size, 2] = EV_EDGE
            H[size, 3] = (np.int64(e) << 2) | EV_EDGE
            size += 1
        elif kind == 2:
            y = edst[e] if nd[nd[vname[esrc[e]], OWNER], LABEL] == SLAB else esrc[e]
            if th < fd[y, B2H] or (th == fd[y, B2H] and tl < fd[y, B2L]):
                fd[y, B2H] = th
                fd[y, B2L] = tl
                best[y] = e
    for v in range(n):
        if best[v] != -1:
            H[size, 0] = fd[v, B2H]
            H[size, 1] = fd[v, B2L]
            H[size, 2] = EV_EDGE
            H[size, 3] = (best[v] << 2) | EV_EDGE
            size += 1
    for b in range(2 * n):
        if nd[b, PARENT] != -1:
            continue
        lab = nd[b, LABEL]
        if lab == SLAB:
            x = nd[b, ARGMIN]
            nb = nd[b, BNAME]
            H[size, 0] = fd[x, YH] + fd[nb, AH]
            H[size, 1] = fd[x, YL] + fd[nb, AL]
            H[size, 2] = EV_DUAL
            H[size, 3] = (np.int64(b) << 2) | EV_DUAL
            size += 1
        elif lab == TLAB and b >= n:
            H[size, 0] = fd[b, ZH] * 0.5
            H[size, 1] = fd[b, ZL] * 0.5
            H[size, 2] = EV_BLOSSOM
            H[size, 3] = (np.int64(b) << 2) | EV_BLOSSOM
            size += 1
    meta[HSIZE] = size
    meta[HOVER] = 0
    for i in range((size - 2) // 4, -1, -1):
        sift_down(H, size, i)
