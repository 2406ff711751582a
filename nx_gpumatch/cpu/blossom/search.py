"""The exact matching's search and driver: the warm start, the event loop,
and the setup of its tables (see the package's doc)."""

import numpy as np

from nx_gpumatch.cpu import njit
from nx_gpumatch.cpu.blossom.events import (
    edge_time,
    hpop,
    hpush,
    push_blossom,
    push_dual,
    rebuild,
    scan_blossom,
)
from nx_gpumatch.cpu.blossom.structure import (
    augment_side,
    dissolve,
    expand,
    form_blossom,
    relabel,
    setlab,
    tree_add,
)
from nx_gpumatch.cpu.blossom.tables import (
    AH,
    AL,
    ARGMIN,
    B2H,
    B2L,
    BASE,
    BNAME,
    BSIZE,
    EV_BLOSSOM,
    EV_DUAL,
    EV_EDGE,
    FREE,
    HCAP,
    HOVER,
    HSIZE,
    LABEL,
    LFROM,
    LTO,
    NFCOLS,
    NLAB,
    NROWS,
    OWNER,
    PARENT,
    SCALE_ABOVE_EXP,
    SLAB,
    TLAB,
    TROOT,
    VFIRST,
    VLAST,
    VNM,
    YH,
    YL,
    ZH,
    ZL,
    Search,
)


@njit(cache=True, no_cpython_wrapper=True, _nrt=False)
def _warm_start(st, maxcard, order):
    """Feasible duals and a matching of tight edges: from y_v = max incident w / 2
    (set by the caller), each vertex (largest y first: ``order``, sorted outside so
    that no sort is compiled here) drops to its least feasible dual and, if
    that makes an edge to a free neighbour tight, is matched along it."""
    n, wl, fd, mate = st.n, st.wl, st.fd, st.mate
    indptr, indices, arc_edge, _ = st.g
    for i in range(n):
        v = order[i]
        if mate[v] != -1 or indptr[v + 1] == indptr[v]:
            continue
        best = -np.inf if maxcard else 0.0
        for k in range(indptr[v], indptr[v + 1]):
            val = wl[arc_edge[k]] - fd[indices[k], YL]
            if val > best:
                best = val
        fd[v, YL] = best
        pick = -1
        pw = 0.0
        for k in range(indptr[v], indptr[v + 1]):
            u = indices[k]
            we = wl[arc_edge[k]]
            if mate[u] == -1 and we - fd[u, YL] == best and (maxcard or we > 0.0):
                if pick == -1 or we > pw:
                    pick = u
                    pw = we
        if pick != -1:
            mate[v] = pick
            mate[pick] = v


@njit(cache=True, inline="always")
def _current(kh, kl, p, st):
    """Whether the heap entry (kh, kl, p) just popped is an event due now:
    (due, edge kind as :func:`edge_time` gives it, time hi, lo, found late).
    An edge entry that is stale or early is dropped; the free endpoints'
    best edges stay in the heap (pushed again, or the endpoint rescanned)."""
    esrc, edst, wl, c, nd, fd, vname = st.esrc, st.edst, st.wl, st.c, st.nd, st.fd, st.vname
    kind = p & 3
    ident = p >> 2
    ek = 0
    late = 0
    if kind == EV_EDGE:
        ek, th, tl = edge_time(ident, esrc, edst, wl, c, fd)
        if ek == 0 or th > kh or (th == kh and tl > kl):
            # stale or early: keep every free endpoint's best edge in the heap
            if ek == 3:
                hpush(st.H, st.meta, th, tl, p)
            for side in range(2):
                x = esrc[ident] if side == 0 else edst[ident]
                tx = nd[vname[x], OWNER]
                if nd[tx, LABEL] != FREE:
                    continue
                if fd[x, B2H] < kh or (fd[x, B2H] == kh and fd[x, B2L] <= kl):
                    scan_blossom(x, tx, st.vnext, st.g, c, nd, fd, st.H, st.meta)
                elif ek == 2 and (th < fd[x, B2H] or (th == fd[x, B2H] and tl < fd[x, B2L])):
                    fd[x, B2H] = th
                    fd[x, B2L] = tl
                    hpush(st.H, st.meta, th, tl, p)
            return False, ek, th, tl, late
        if th != kh or tl != kl:
            late = 1  # only from rounding: every event is pushed no later than it happens
    elif kind == EV_DUAL:
        b = ident
        if nd[b, PARENT] != -1 or nd[b, LABEL] != SLAB:
            return False, ek, 0.0, 0.0, late
        x = nd[b, ARGMIN]
        th = fd[x, YH] + fd[nd[b, BNAME], AH]
        tl = fd[x, YL] + fd[nd[b, BNAME], AL]
        if th != kh or tl != kl:
            return False, ek, th, tl, late
    else:
        b = ident
        if nd[b, PARENT] != -1 or nd[b, LABEL] != TLAB:
            return False, ek, 0.0, 0.0, late
        th = fd[b, ZH] * 0.5
        tl = fd[b, ZL] * 0.5
        if th != kh or tl != kl:
            return False, ek, th, tl, late
    return True, ek, th, tl, late


@njit(cache=True, no_cpython_wrapper=True, _nrt=False)
def _tight_edge(e, ek, st, dh, dl, ntrees, nfree, stamp):
    """Edge e between an S vertex and a free one (ek 2) or two S vertices (ek 3)
    became tight: grow the tree, augment, or form a blossom. Returns (open
    trees, nfree, stamp)."""
    n, nd, fd, vname, mate, head, buf = st.n, st.nd, st.fd, st.vname, st.mate, st.head, st.buf
    stk, chain = st.stk, st.chain
    a = st.esrc[e]
    bb = st.edst[e]
    if nd[nd[vname[a], OWNER], LABEL] == SLAB:
        u = a
        v = bb
    else:
        u = bb
        v = a
    bu = nd[vname[u], OWNER]
    bv = nd[vname[v], OWNER]
    if ek == 2:
        if mate[nd[bv, BASE]] == -1:
            r = nd[bu, TROOT]
            augment_side(u, v, n, nd, mate, vname, stk, chain)
            augment_side(v, u, n, nd, mate, vname, stk, chain)
            dissolve(r, st, dh, dl)
            ntrees -= 1
            # v's best edge was used
            scan_blossom(v, bv, st.vnext, st.g, st.c, nd, fd, st.H, st.meta)
        else:
            r = nd[bu, TROOT]
            relabel(bv, TLAB, nd, fd, dh, dl)
            nd[bv, LFROM] = u
            nd[bv, LTO] = v
            tree_add(bv, r, nd, head)
            if bv >= n:
                push_blossom(bv, fd, st.H, st.meta)
            bm = nd[vname[mate[nd[bv, BASE]]], OWNER]
            relabel(bm, SLAB, nd, fd, dh, dl)
            tree_add(bm, r, nd, head)
            push_dual(bm, nd, fd, st.H, st.meta)
            scan_blossom(bm, bm, st.vnext, st.g, st.c, nd, fd, st.H, st.meta)
    else:
        r1 = nd[bu, TROOT]
        r2 = nd[bv, TROOT]
        if r1 == r2:
            stamp += 1
            B, nt, nfree = form_blossom(u, v, st, nfree, stamp, dh, dl)
            tree_add(B, r1, nd, head)
            push_dual(B, nd, fd, st.H, st.meta)
            for i in range(nt):
                scan_blossom(buf[i], B, st.vnext, st.g, st.c, nd, fd, st.H, st.meta)
        else:
            augment_side(u, v, n, nd, mate, vname, stk, chain)
            augment_side(v, u, n, nd, mate, vname, stk, chain)
            dissolve(r1, st, dh, dl)
            dissolve(r2, st, dh, dl)
            ntrees -= 2
    return ntrees, nfree, stamp


# Without reference counting: _solve and its helpers allocate nothing (every
# array comes from _run), and counting references to the bundle's arrays at
# each event made the search 10-20% slower.
@njit(cache=True, _nrt=False)
def _solve(st, maxcard, warm, order):
    """The search. Every array of ``st`` is allocated and initialised by
    :func:`_run` (numpy there, so that no allocation routine is compiled here).
    Returns (roots, events, late, open trees)."""
    n, nd, fd, mate, head, meta = st.n, st.nd, st.fd, st.mate, st.head, st.meta
    nfree = n
    if warm:
        _warm_start(st, maxcard, order)
    ntrees = np.int64(0)  # not a literal: _tight_edge is compiled for int64 once
    for v in range(n):
        if mate[v] == -1 and (fd[v, YH] > 0.0 or (fd[v, YH] == 0.0 and fd[v, YL] > 0.0)):
            setlab(v, SLAB, nd, fd)
            tree_add(v, v, nd, head)
            ntrees += 1
    roots = ntrees
    rebuild(st)
    stamp = np.int64(0)
    dh = 0.0
    dl = 0.0
    events = 0
    late = 0
    while ntrees > 0 and meta[HSIZE] > 0:
        kh, kl, p = hpop(st.H, meta)
        due, ek, th, tl, was_late = _current(kh, kl, p, st)
        if not due:
            continue
        late += was_late
        kind = p & 3
        ident = p >> 2
        if th > dh or (th == dh and tl > dl):
            dh = th
            dl = tl
        events += 1
        if kind == EV_DUAL:
            x = nd[ident, ARGMIN]
            r = nd[ident, TROOT]
            augment_side(x, -1, n, nd, mate, st.vname, st.stk, st.chain)
            dissolve(r, st, dh, dl)
            ntrees -= 1
        elif kind == EV_BLOSSOM:
            expand(ident, st, dh, dl)
            st.freeids[nfree] = ident
            nfree += 1
        else:
            ntrees, nfree, stamp = _tight_edge(ident, ek, st, dh, dl, ntrees, nfree, stamp)
        if meta[HOVER] != 0:
            rebuild(st)
    return roots, events, late, ntrees


def _run(n, indptr, indices, arc_edge, edge_src, edge_dst, edge_weight, maxcardinality, warm):
    w = np.ascontiguousarray(edge_weight, np.float64)
    if w.size and not np.isfinite(w).all():
        raise ValueError("edge weights must be finite (no NaN or infinity)")
    top = float(np.abs(w).max()) if w.size else 0.0
    if top > 2.0**SCALE_ABOVE_EXP:
        shift = SCALE_ABOVE_EXP - np.frexp(top)[1]
        scaled = np.ldexp(w, shift)
        if not np.array_equal(np.ldexp(scaled, -shift), w):
            raise ValueError(
                f"edge weights span too wide a range for exact float64 arithmetic: up to {top!r} "
                f"and as small as {float(np.abs(w[w != 0]).min())!r}"
            )
        w = scaled
    n = int(n)
    maxcard = bool(maxcardinality)
    indptr = np.ascontiguousarray(indptr, np.int64)
    arc_edge = np.ascontiguousarray(arc_edge, np.int32)
    esrc = np.ascontiguousarray(edge_src, np.int32)
    m = esrc.shape[0]
    nn = 2 * n
    rows = max(nn, 1)  # 2n node-table rows (vertices, then blossom ids), at least one
    wl = w * 4.0
    awl = wl[arc_edge]  # weight of each arc, in CSR order
    # Starting duals: half the heaviest incident weight (at least 0 without
    # maxcardinality), 0 at isolated vertices.
    starts = indptr[:-1]
    has = indptr[1:] > starts
    hv = np.zeros(n)
    if awl.size:
        hv[has] = np.maximum.reduceat(awl, starts[has]) * 0.5
    if not maxcard:
        hv = np.where(hv > 0.0, hv, 0.0)
    order = np.argsort(-hv, kind="stable")
    if not warm:  # every dual equal, so that integer parity holds
        hv[has] = max(0.0, float(hv[has].max())) if has.any() else 0.0
    ids = np.arange(nn, dtype=np.int32)
    nd = np.full((rows, NROWS), -1, np.int32)
    nd[:nn, LABEL] = FREE
    for col in (BASE, ARGMIN, VFIRST, VLAST, OWNER, BNAME):
        nd[:nn, col] = ids
    nd[:nn, BSIZE] = 1
    fd = np.zeros((rows, NFCOLS))
    fd[:n, VNM] = ids[:n]
    fd[:n, NLAB] = FREE
    fd[:n, YL] = hv
    fd[:n, YH] = np.where(has, 2.0, 0.0) if maxcard else 0.0
    # int32 rows: vname, vnext, mate, head, free blossom ids, then scratch
    # (pv, pu, cyc, buf, chain, and the augmentation stack of 2 * rows + 2)
    w32 = np.full((11, 2 * rows + 2), -1, np.int32)
    w32[0, :n] = ids[:n]
    w32[4, :n] = ids[nn - 1 : n - 1 : -1]
    w64 = np.zeros((3, max(rows, 3)), np.int64)  # mark stamps, rebuild scratch, heap meta
    hcap = 2 * (m + nn) + 64
    w64[2, HCAP] = hcap
    H = np.empty((hcap, 4))
    st = Search(
        np.int64(n),
        (indptr, np.ascontiguousarray(indices, np.int32), arc_edge, awl),
        esrc,
        np.ascontiguousarray(edge_dst, np.int32),
        wl,
        4.0 if maxcard else 0.0,
        nd,
        fd,
        *w32,  # vname, vnext, mate, head, freeids, pv, pu, cyc, buf, chain, stk
        *w64,  # mark, best, meta
        H,
    )
    roots, events, late, left = _solve(st, maxcard, bool(warm), order)
    if left:
        raise RuntimeError(
            "blossom search stopped with open alternating trees"
        )  # a bug, never expected
    return w32[2, :n].astype(np.int64), int(roots), int(events), int(late)


def max_weight_matching(
    n, indptr, indices, arc_edge, edge_src, edge_dst, edge_weight, maxcardinality=False, warm=True
):
    """Exact maximum-weight matching of the graph given as symmetric CSR
    (``indptr``, ``indices``, ``arc_edge``) plus its edge list; returns the int64
    mate array (-1 = unmatched).

    ``maxcardinality=True``: the heaviest among the maximum-cardinality
    matchings. Weights may be negative (without ``maxcardinality`` such edges
    are never used). Integer weights below about 2**48 in magnitude give exact
    results. ``warm=False`` starts from the empty matching (for testing).
    """
    return _run(
        n, indptr, indices, arc_edge, edge_src, edge_dst, edge_weight, maxcardinality, warm
    )[0]


def stats(
    n, indptr, indices, arc_edge, edge_src, edge_dst, edge_weight, maxcardinality=False, warm=True
):
    """(mate, roots left by the warm start, events processed, events found late
    through rounding) for benchmarks and tests; late is 0 for integer weights."""
    return _run(n, indptr, indices, arc_edge, edge_src, edge_dst, edge_weight, maxcardinality, warm)
