"""Exact maximum-weight matching in general graphs: Edmonds' weighted blossom
algorithm in its primal-dual form (duals y on vertices, z on blossoms; Galil's
1986 survey), with the search organised for large sparse graphs.

How the search is organised
---------------------------
* Every free vertex whose dual is positive is the root of its own alternating
  tree; all trees grow at once and share one dual change delta, as in the
  O(n^3) method. Trees persist across augmentations: an augmentation (or a root
  whose dual reaches zero) dissolves only the trees involved.
* Duals are lazy. With D the sum of all deltas so far, a vertex dual is
  ``y = Y[v] + A[name(v)] + s*D`` and a top-level blossom dual is
  ``z = Z[B] - 2*s*D``, s = -1 for S, +1 for T, 0 for unlabeled. All vertices of
  a top-level blossom share one name (a vertex id); relabeling a blossom is
  O(1). A new blossom takes over the name of its largest child, so only the
  vertices of the other children are renamed (and Y rebased).
* Events (a dual reaching zero, an edge becoming tight, a T-blossom dual
  reaching zero) come from one 4-ary heap with lazy deletion: a popped entry's
  time is recomputed from the state; early entries are pushed again and stale
  ones dropped. Each S-S edge gets its own entry; for an unlabeled vertex only
  its best edge to an S vertex is kept in the heap (B2), and the vertex is
  rescanned when that entry goes stale. Every change that can make an event
  earlier pushes it, so no event is missed.
* Warm start: y_v = half the heaviest incident weight; then vertices, heaviest
  first, lower their dual as far as feasibility allows and match along a tight
  edge to a free neighbour (a greedy matching on tight edges). Free vertices
  left with a positive dual become the roots; those with zero dual are final.
* ``maxcardinality``: every number is a pair (hi, lo) compared lexicographically
  and each edge weighs (1, w): the result is the maximum-weight matching for
  weights C + w with C "infinitely" large, i.e. the heaviest among the largest
  matchings. Without it hi stays 0.
* Weights are scaled by 4 and all root duals start even, so for integer weights
  every dual and event time stays an integer: float64 arithmetic is then exact
  (for weights up to about 2**48).

Blossoms are ids n..2n-1. Their children form a circular doubly linked list
(NEXT/PREV) starting at the child holding the base (BCHILD); EA/EB are the
endpoints of the edge from a child to the next one. The vertices of a blossom
are one contiguous run VFIRST..VLAST of the ``vnext`` chain, so forming and
expanding never copy vertex lists.
"""

import numpy as np
from numba import types

from nx_gpumatch.cpu import njit

# Argument types of small helpers called with constants and with int32 or int64
# ids: one explicit signature each, instead of one compiled copy per literal
# value and integer width. Helpers are built with no_cpython_wrapper: they are
# only called from jitted code, so no Python entry point is compiled for them.
i8, f8 = types.int64, types.float64
I1, I2, F2 = types.int32[::1], types.int32[:, ::1], types.float64[:, ::1]

# columns of the int32 node table (rows are vertex ids 0..n-1 and blossom ids n..2n-1)
(
    PARENT,
    NEXT,
    PREV,
    EA,
    EB,
    LABEL,
    TROOT,
    LFROM,
    LTO,
    BASE,
    BCHILD,
    ARGMIN,
    TNEXT,
    TPREV,
    VFIRST,
    VLAST,
    OWNER,
    BNAME,
    BSIZE,
) = range(19)
NROWS = 19
# Duals and slacks add a few weights (times 4): larger weights are scaled down
# by a power of two first, which leaves every comparison as it was.
SCALE_ABOVE_EXP = 1000
# columns of the float table (rows 0..n-1, one 64-byte line each): Y (vertex key), A (offset of the
# vertex-set name), B2 (a free vertex's earliest pushed S-edge time), hi and lo parts; NLAB (label of
# the top-level blossom owning the name) and VNM (the vertex's name), mirrored here so that scanning
# an edge touches one line per endpoint
YH, YL, AH, AL, B2H, B2L, NLAB, VNM = range(8)
NFCOLS = 8
# blossom rows (ids >= n) hold only the blossom dual, in the first two columns
ZH, ZL = 0, 1
# labels
FREE, SLAB, TLAB = 0, 1, 2
# heap entry kinds (low two bits of the payload); ties pop in this order
EV_DUAL, EV_EDGE, EV_BLOSSOM = 0, 1, 2
# heap meta slots
HSIZE, HCAP, HOVER = 0, 1, 2


@njit(cache=True, inline="always")
def _sign(label):
    if label == SLAB:
        return -1.0
    if label == TLAB:
        return 1.0
    return 0.0


@njit(cache=True, inline="always")
def _before(ah, al, ak, bh, bl, bk):
    if ah != bh:
        return ah < bh
    if al != bl:
        return al < bl
    return ak < bk


# ------------------------------------------------------------------ heap
# A 4-ary min-heap of records (time hi, time lo, kind, payload) in one float64
# array, so a node's children share two cache lines. Payloads are integers
# below 2**53, exact as floats.
@njit(cache=True, no_cpython_wrapper=True)
def _hpush(H, meta, kh, kl, p):
    i = meta[HSIZE]
    if i >= meta[HCAP]:
        meta[HOVER] = 1  # dropped; the caller rebuilds the heap from the state
        return
    meta[HSIZE] = i + 1
    kind = np.float64(p & 3)
    while i > 0:
        par = (i - 1) >> 2
        if _before(kh, kl, kind, H[par, 0], H[par, 1], H[par, 2]):
            H[i, 0] = H[par, 0]
            H[i, 1] = H[par, 1]
            H[i, 2] = H[par, 2]
            H[i, 3] = H[par, 3]
            i = par
        else:
            break
    H[i, 0] = kh
    H[i, 1] = kl
    H[i, 2] = kind
    H[i, 3] = np.float64(p)


@njit((F2, i8, i8), cache=True, no_cpython_wrapper=True)
def _sift_down(H, size, i):
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
            if _before(H[d, 0], H[d, 1], H[d, 2], H[best, 0], H[best, 1], H[best, 2]):
                best = d
        if _before(H[best, 0], H[best, 1], H[best, 2], kh, kl, kind):
            H[i, 0] = H[best, 0]
            H[i, 1] = H[best, 1]
            H[i, 2] = H[best, 2]
            H[i, 3] = H[best, 3]
            i = best
        else:
            break
    H[i, 0] = kh
    H[i, 1] = kl
    H[i, 2] = kind
    H[i, 3] = p


@njit(cache=True, inline="always")
def _hpop(H, meta):
    kh = H[0, 0]
    kl = H[0, 1]
    p = np.int64(H[0, 3])
    last = meta[HSIZE] - 1
    meta[HSIZE] = last
    if last > 0:
        H[0, 0] = H[last, 0]
        H[0, 1] = H[last, 1]
        H[0, 2] = H[last, 2]
        H[0, 3] = H[last, 3]
        _sift_down(H, last, 0)
    return kh, kl, p


# ------------------------------------------------------------ event times
@njit(cache=True, no_cpython_wrapper=True)
def _edge_time(e, esrc, edst, wl, c, fd):
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
def _push_dual(b, nd, fd, H, meta):
    x = nd[b, ARGMIN]
    nb = nd[b, BNAME]
    _hpush(H, meta, fd[x, YH] + fd[nb, AH], fd[x, YL] + fd[nb, AL], (np.int64(b) << 2) | EV_DUAL)


@njit(cache=True, inline="always")
def _push_blossom(b, fd, H, meta):
    _hpush(H, meta, fd[b, ZH] * 0.5, fd[b, ZL] * 0.5, (np.int64(b) << 2) | EV_BLOSSOM)


@njit(cache=True, no_cpython_wrapper=True)
def _scan_blossom(b, tb, vnext, g, c, nd, fd, H, meta):
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
                # heap push (written out: see _hpush)
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
                        H[i, 0] = H[par, 0]
                        H[i, 1] = H[par, 1]
                        H[i, 2] = H[par, 2]
                        H[i, 3] = H[par, 3]
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
                _hpush(H, meta, bh, bl, (np.int64(be) << 2) | EV_EDGE)
        if x == last:
            break
        x = vnext[x]


@njit(cache=True, no_cpython_wrapper=True)
def _rebuild(n, m, esrc, edst, wl, c, nd, fd, vname, H, meta, best):
    """All current events from scratch (after an overflow, and at the start);
    ``best`` is scratch space of n entries."""
    size = 0
    for v in range(n):
        fd[v, B2H] = np.inf
        fd[v, B2L] = np.inf
        best[v] = -1
    for e in range(m):
        kind, th, tl = _edge_time(e, esrc, edst, wl, c, fd)
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
        _sift_down(H, size, i)


# ------------------------------------------------------------- structure
@njit(cache=True, inline="always")
def _setlab(b, lab, nd, fd):
    nd[b, LABEL] = lab
    fd[nd[b, BNAME], NLAB] = lab


@njit((i8, i8, I2, F2, f8, f8), cache=True, no_cpython_wrapper=True)
def _relabel(b, lab, nd, fd, dh, dl):
    """Give top-level b a new label keeping its duals continuous at time D."""
    ds = _sign(nd[b, LABEL]) - _sign(lab)
    if ds != 0.0:
        nb = nd[b, BNAME]
        fd[nb, AH] += ds * dh
        fd[nb, AL] += ds * dl
        if b >= nd.shape[0] // 2:
            fd[b, ZH] -= 2.0 * ds * dh
            fd[b, ZL] -= 2.0 * ds * dl
    _setlab(b, lab, nd, fd)


@njit(cache=True, inline="always")
def _tree_add(b, r, nd, head):
    nd[b, TROOT] = r
    nd[b, TPREV] = -1
    h = head[r]
    nd[b, TNEXT] = h
    if h != -1:
        nd[h, TPREV] = b
    head[r] = b


@njit(cache=True, inline="always")
def _tree_remove(b, nd, head):
    p = nd[b, TPREV]
    q = nd[b, TNEXT]
    if p != -1:
        nd[p, TNEXT] = q
    else:
        head[nd[b, TROOT]] = q
    if q != -1:
        nd[q, TPREV] = p
    nd[b, TNEXT] = -1
    nd[b, TPREV] = -1
    nd[b, TROOT] = -1


@njit(cache=True, no_cpython_wrapper=True)
def _rotate(b, ch, v, n, nd, mate, stk, sp):
    """Make child ch (holding vertex v) the base child of b: flip the even
    alternating path from ch to the old base child. Sub-blossoms at the ends of
    newly matched edges are queued on stk to get their new base."""
    b0 = nd[b, BCHILD]
    j = 0
    x = b0
    while x != ch:
        x = nd[x, NEXT]
        j += 1
    if j > 0:
        forward = (j & 1) == 1  # odd position: the even path runs forward
        x = nd[ch, NEXT] if forward else nd[nd[ch, PREV], PREV]
        while True:
            p = nd[x, EA]
            q = nd[x, EB]
            mate[p] = q
            mate[q] = p
            y = nd[x, NEXT]
            if x >= n:
                stk[2 * sp] = x
                stk[2 * sp + 1] = p
                sp += 1
            if y >= n:
                stk[2 * sp] = y
                stk[2 * sp + 1] = q
                sp += 1
            if forward:
                if y == b0:
                    break
                x = nd[y, NEXT]
            else:
                if x == b0:
                    break
                x = nd[nd[x, PREV], PREV]
        nd[b, BCHILD] = ch
    nd[b, BASE] = v
    return sp


@njit((i8, i8, i8, I2, I1, I1, I1), cache=True, no_cpython_wrapper=True)
def _augment_blossom(b, v, n, nd, mate, stk, chain):
    """Make vertex v the base of blossom b, level by level down the nesting
    chain from b to v (recursively for sub-blossoms met on the flipped paths)."""
    stk[0] = b
    stk[1] = v
    sp = 1
    while sp > 0:
        sp -= 1
        b = stk[2 * sp]
        v = stk[2 * sp + 1]
        depth = 0
        ch = v
        while ch != b:
            chain[depth] = ch
            depth += 1
            ch = nd[ch, PARENT]
        for lvl in range(depth - 1, -1, -1):
            ch = chain[lvl]
            sp = _rotate(b, ch, v, n, nd, mate, stk, sp)
            b = ch


@njit((i8, i8, i8, I2, I1, I1, I1, I1), cache=True, no_cpython_wrapper=True)
def _augment_side(s, j, n, nd, mate, vname, stk, chain):
    """Match S-vertex s to j (-1: leave it free) and flip the alternating path
    from s's blossom up to its tree's root (or to a free unlabeled base)."""
    while True:
        bs = nd[vname[s], OWNER]
        t = mate[nd[bs, BASE]]
        if bs >= n:
            _augment_blossom(bs, s, n, nd, mate, stk, chain)
        mate[s] = j
        if t == -1:
            break
        bt = nd[vname[t], OWNER]
        ts = nd[bt, LTO]
        ss = nd[bt, LFROM]
        if bt >= n:
            _augment_blossom(bt, ts, n, nd, mate, stk, chain)
        mate[ts] = ss
        s = ss
        j = ts


@njit(cache=True, no_cpython_wrapper=True)
def _dissolve(r, vnext, g, c, nd, fd, head, buf, dh, dl, H, meta):
    """Unlabel every blossom of the tree rooted at r; vertices leaving T may now
    have events with S vertices of other trees."""
    nt = 0
    b = head[r]
    while b != -1:
        nb = nd[b, TNEXT]
        if nd[b, LABEL] == TLAB:
            buf[nt] = b
            nt += 1
        _relabel(b, FREE, nd, fd, dh, dl)
        nd[b, TROOT] = -1
        nd[b, TNEXT] = -1
        nd[b, TPREV] = -1
        b = nb
    head[r] = -1
    for i in range(nt):
        _scan_blossom(buf[i], buf[i], vnext, g, c, nd, fd, H, meta)


@njit(cache=True, inline="always")
def _s_parent(b, nd, mate, vname):
    t = mate[nd[b, BASE]]
    if t == -1:
        return -1
    return nd[vname[nd[nd[vname[t], OWNER], LFROM]], OWNER]


@njit(cache=True, no_cpython_wrapper=True)
def _form_blossom(
    u,
    v,
    n,
    vnext,
    nd,
    fd,
    vname,
    mate,
    head,
    freeids,
    nfree,
    mark,
    stamp,
    pv,
    pu,
    cyc,
    buf,
    dh,
    dl,
):
    """New S-blossom from the tight S-S edge (u, v) inside one tree."""
    bu = nd[vname[u], OWNER]
    bv = nd[vname[v], OWNER]
    a = bu
    b = bv
    lca = -1
    while lca == -1:
        if a != -1:
            if mark[a] == stamp:
                lca = a
                break
            mark[a] = stamp
            a = _s_parent(a, nd, mate, vname)
        if b != -1:
            if mark[b] == stamp:
                lca = b
                break
            mark[b] = stamp
            b = _s_parent(b, nd, mate, vname)
    lv = 0
    x = bv
    while x != lca:
        pv[lv] = x
        t = nd[vname[mate[nd[x, BASE]]], OWNER]
        pv[lv + 1] = t
        lv += 2
        x = nd[vname[nd[t, LFROM]], OWNER]
    lu = 0
    x = bu
    while x != lca:
        pu[lu] = x
        t = nd[vname[mate[nd[x, BASE]]], OWNER]
        pu[lu + 1] = t
        lu += 2
        x = nd[vname[nd[t, LFROM]], OWNER]
    k = 1 + lv + lu
    cyc[0] = lca
    for i in range(lv):
        cyc[1 + i] = pv[lv - 1 - i]
    for i in range(lu):
        cyc[1 + lv + i] = pu[i]
    # connecting edges (endpoint in cyc[i], endpoint in cyc[i+1]); read the tree
    # labels before they are overwritten
    for i in range(k):
        x = cyc[i]
        y = cyc[(i + 1) % k]
        if i < lv:  # down the v side: x is y's parent
            if nd[y, LABEL] == TLAB:
                p = nd[y, LFROM]
                q = nd[y, LTO]
            else:
                q = nd[y, BASE]
                p = mate[q]
        elif i == lv:
            p = v
            q = u
        else:  # up the u side: y is x's parent
            if nd[x, LABEL] == TLAB:
                p = nd[x, LTO]
                q = nd[x, LFROM]
            else:
                p = nd[x, BASE]
                q = mate[p]
        nd[x, EA] = p
        nd[x, EB] = q
        nd[x, NEXT] = y
        nd[y, PREV] = x
    nfree -= 1
    B = freeids[nfree]
    # The largest child lends its vertex-set name to B, so only the vertices of
    # the other children are renamed and rebased (each vertex moves into a set
    # at least twice as large when renamed).
    heavy = cyc[0]
    size = 0
    for i in range(k):
        ch = cyc[i]
        size += nd[ch, BSIZE]
        if nd[ch, BSIZE] > nd[heavy, BSIZE]:
            heavy = ch
    hn = nd[heavy, BNAME]
    # B is S: y = Y + A[hn] - D, continuous with the heavy child's frame
    shv = _sign(nd[heavy, LABEL])
    fd[hn, AH] += (shv + 1.0) * dh
    fd[hn, AL] += (shv + 1.0) * dl
    ahn = fd[hn, AH]
    aln = fd[hn, AL]
    nt = 0
    for i in range(k):
        ch = cyc[i]
        lab = nd[ch, LABEL]
        s = _sign(lab)
        if lab == TLAB:
            buf[nt] = ch
            nt += 1
        if ch != heavy:
            cn = nd[ch, BNAME]
            oh = fd[cn, AH] + (s + 1.0) * dh - ahn
            ol = fd[cn, AL] + (s + 1.0) * dl - aln
            x = nd[ch, VFIRST]
            last = nd[ch, VLAST]
            while True:
                fd[x, YH] += oh
                fd[x, YL] += ol
                vname[x] = hn
                fd[x, VNM] = hn
                if x == last:
                    break
                x = vnext[x]
        if ch >= n:  # its dual is fixed while it is a sub-blossom
            fd[ch, ZH] -= 2.0 * s * dh
            fd[ch, ZL] -= 2.0 * s * dl
        _tree_remove(ch, nd, head)
        _setlab(ch, FREE, nd, fd)
        nd[ch, PARENT] = B
        if i + 1 < k:
            vnext[nd[ch, VLAST]] = nd[cyc[i + 1], VFIRST]
    # every child's argmin is still its minimum (each child was shifted uniformly)
    bestx = nd[cyc[0], ARGMIN]
    for i in range(1, k):
        x = nd[cyc[i], ARGMIN]
        if fd[x, YH] < fd[bestx, YH] or (fd[x, YH] == fd[bestx, YH] and fd[x, YL] < fd[bestx, YL]):
            bestx = x
    nd[hn, OWNER] = B
    nd[B, BNAME] = hn
    nd[B, BSIZE] = size
    nd[B, PARENT] = -1
    nd[B, VFIRST] = nd[lca, VFIRST]
    nd[B, VLAST] = nd[cyc[k - 1], VLAST]
    nd[B, BCHILD] = lca
    nd[B, BASE] = nd[lca, BASE]
    nd[B, ARGMIN] = bestx
    _setlab(B, SLAB, nd, fd)
    fd[B, ZH] = -2.0 * dh  # z = 0 now and grows with D
    fd[B, ZL] = -2.0 * dl
    return B, nt, nfree


@njit(cache=True, no_cpython_wrapper=True)
def _expand(B, n, vnext, g, c, nd, fd, vname, head, dh, dl, H, meta):
    """Expand the T-blossom B whose dual reached zero: the even path from the
    entry child to the base child stays in the tree (T, S, ..., T), the other
    children become free."""
    r = nd[B, TROOT]
    te = nd[B, LTO]
    se = nd[B, LFROM]
    _tree_remove(B, nd, head)
    b0 = nd[B, BCHILD]
    hn = nd[B, BNAME]
    # B is T: y = Y + A[hn] + D. Each child gets its own name back with an
    # offset that keeps Y unchanged; only non-heavy children's vertices are renamed.
    abh = fd[hn, AH]
    abl = fd[hn, AL]
    x = b0
    while True:
        nd[x, PARENT] = -1
        cn = nd[x, BNAME]
        nd[cn, OWNER] = x
        _setlab(x, FREE, nd, fd)
        fd[cn, AH] = abh + dh
        fd[cn, AL] = abl + dl
        if cn != hn:
            v = nd[x, VFIRST]
            last = nd[x, VLAST]
            while True:
                vname[v] = cn
                fd[v, VNM] = cn
                if v == last:
                    break
                v = vnext[v]
        x = nd[x, NEXT]
        if x == b0:
            break
    cj = nd[vname[te], OWNER]
    j = 0
    x = b0
    while x != cj:
        x = nd[x, NEXT]
        j += 1
    forward = (j & 1) == 1
    nd[cj, LFROM] = se
    nd[cj, LTO] = te
    cur = cj
    is_t = True
    while True:
        if is_t:
            fd[nd[cur, BNAME], AH] = abh
            fd[nd[cur, BNAME], AL] = abl
            if cur >= n:
                fd[cur, ZH] += 2.0 * dh
                fd[cur, ZL] += 2.0 * dl
            _setlab(cur, TLAB, nd, fd)
            _tree_add(cur, r, nd, head)
            if cur >= n:
                _push_blossom(cur, fd, H, meta)
        else:
            fd[nd[cur, BNAME], AH] = abh + 2.0 * dh
            fd[nd[cur, BNAME], AL] = abl + 2.0 * dl
            if cur >= n:
                fd[cur, ZH] -= 2.0 * dh
                fd[cur, ZL] -= 2.0 * dl
            _setlab(cur, SLAB, nd, fd)
            _tree_add(cur, r, nd, head)
            _push_dual(cur, nd, fd, H, meta)
        if cur == b0:
            break
        nxt = nd[cur, NEXT] if forward else nd[cur, PREV]
        if not is_t:  # unmatched edge cur - nxt: nxt is T, entered there
            if forward:
                nd[nxt, LFROM] = nd[cur, EA]
                nd[nxt, LTO] = nd[cur, EB]
            else:
                nd[nxt, LFROM] = nd[nxt, EB]
                nd[nxt, LTO] = nd[nxt, EA]
        cur = nxt
        is_t = not is_t
    x = b0
    while True:
        if nd[x, LABEL] != TLAB:
            _scan_blossom(x, x, vnext, g, c, nd, fd, H, meta)
        x = nd[x, NEXT]
        if x == b0:
            break
    nd[B, LABEL] = FREE
    nd[B, PARENT] = -1
    nd[B, TROOT] = -1


# ----------------------------------------------------------------- driver
@njit(cache=True, no_cpython_wrapper=True)
def _warm_start(n, indptr, indices, arc_edge, wl, maxcard, fd, mate, order):
    """Feasible duals and a matching of tight edges: from y_v = max incident w / 2
    (set by the caller), each vertex (largest y first: ``order``, sorted outside so
    that no sort is compiled here) drops to its least feasible dual and, if
    that makes an edge to a free neighbour tight, is matched along it."""
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


@njit(cache=True)
def _solve(
    n, indptr, indices, arc_edge, esrc, edst, wl, awl, maxcard, warm, order, nd, fd, w32, w64, H
):
    """The search. Every array is allocated and initialised by :func:`_run` (numpy
    there, so that no allocation routine is compiled here); ``w32`` / ``w64`` are
    rows of int32 / int64 state and scratch. Returns (roots, events, late, open trees)."""
    m = esrc.shape[0]
    c = 4.0 if maxcard else 0.0
    vname = w32[0]
    vnext = w32[1]
    mate = w32[2]
    head = w32[3]
    freeids = w32[4]
    pv = w32[5]
    pu = w32[6]
    cyc = w32[7]
    buf = w32[8]
    chain = w32[9]
    stk = w32[10]
    mark = w64[0]
    best = w64[1]
    meta = w64[2]
    nfree = n
    g = (indptr, indices, arc_edge, awl)
    if warm:
        _warm_start(n, indptr, indices, arc_edge, wl, maxcard, fd, mate, order)
    ntrees = 0
    for v in range(n):
        if mate[v] == -1 and (fd[v, YH] > 0.0 or (fd[v, YH] == 0.0 and fd[v, YL] > 0.0)):
            _setlab(v, SLAB, nd, fd)
            _tree_add(v, v, nd, head)
            ntrees += 1
    roots = ntrees
    _rebuild(n, m, esrc, edst, wl, c, nd, fd, vname, H, meta, best)
    stamp = 0
    dh = 0.0
    dl = 0.0
    events = 0
    late = 0
    while ntrees > 0 and meta[HSIZE] > 0:
        kh, kl, p = _hpop(H, meta)
        kind = p & 3
        ident = p >> 2
        ek = 0
        if kind == EV_EDGE:
            ek, th, tl = _edge_time(ident, esrc, edst, wl, c, fd)
            if ek == 0 or th > kh or (th == kh and tl > kl):
                # stale or early: keep every free endpoint's best edge in the heap
                if ek == 3:
                    _hpush(H, meta, th, tl, p)
                for side in range(2):
                    x = esrc[ident] if side == 0 else edst[ident]
                    tx = nd[vname[x], OWNER]
                    if nd[tx, LABEL] != FREE:
                        continue
                    if fd[x, B2H] < kh or (fd[x, B2H] == kh and fd[x, B2L] <= kl):
                        _scan_blossom(x, tx, vnext, g, c, nd, fd, H, meta)
                    elif ek == 2 and (th < fd[x, B2H] or (th == fd[x, B2H] and tl < fd[x, B2L])):
                        fd[x, B2H] = th
                        fd[x, B2L] = tl
                        _hpush(H, meta, th, tl, p)
                continue
            if th != kh or tl != kl:
                late += 1  # only from rounding: every event is pushed no later than it happens
        elif kind == EV_DUAL:
            b = ident
            if nd[b, PARENT] != -1 or nd[b, LABEL] != SLAB:
                continue
            x = nd[b, ARGMIN]
            th = fd[x, YH] + fd[nd[b, BNAME], AH]
            tl = fd[x, YL] + fd[nd[b, BNAME], AL]
            if th != kh or tl != kl:
                continue
        else:
            b = ident
            if nd[b, PARENT] != -1 or nd[b, LABEL] != TLAB:
                continue
            th = fd[b, ZH] * 0.5
            tl = fd[b, ZL] * 0.5
            if th != kh or tl != kl:
                continue
        if th > dh or (th == dh and tl > dl):
            dh = th
            dl = tl
        events += 1
        if kind == EV_DUAL:
            b = ident
            x = nd[b, ARGMIN]
            r = nd[b, TROOT]
            _augment_side(x, -1, n, nd, mate, vname, stk, chain)
            _dissolve(r, vnext, g, c, nd, fd, head, buf, dh, dl, H, meta)
            ntrees -= 1
        elif kind == EV_BLOSSOM:
            _expand(ident, n, vnext, g, c, nd, fd, vname, head, dh, dl, H, meta)
            freeids[nfree] = ident
            nfree += 1
        else:
            a = esrc[ident]
            bb = edst[ident]
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
                    _augment_side(u, v, n, nd, mate, vname, stk, chain)
                    _augment_side(v, u, n, nd, mate, vname, stk, chain)
                    _dissolve(r, vnext, g, c, nd, fd, head, buf, dh, dl, H, meta)
                    ntrees -= 1
                    _scan_blossom(v, bv, vnext, g, c, nd, fd, H, meta)  # v's best edge was used
                else:
                    r = nd[bu, TROOT]
                    _relabel(bv, TLAB, nd, fd, dh, dl)
                    nd[bv, LFROM] = u
                    nd[bv, LTO] = v
                    _tree_add(bv, r, nd, head)
                    if bv >= n:
                        _push_blossom(bv, fd, H, meta)
                    bm = nd[vname[mate[nd[bv, BASE]]], OWNER]
                    _relabel(bm, SLAB, nd, fd, dh, dl)
                    _tree_add(bm, r, nd, head)
                    _push_dual(bm, nd, fd, H, meta)
                    _scan_blossom(bm, bm, vnext, g, c, nd, fd, H, meta)
            else:
                r1 = nd[bu, TROOT]
                r2 = nd[bv, TROOT]
                if r1 == r2:
                    stamp += 1
                    B, nt, nfree = _form_blossom(
                        u,
                        v,
                        n,
                        vnext,
                        nd,
                        fd,
                        vname,
                        mate,
                        head,
                        freeids,
                        nfree,
                        mark,
                        stamp,
                        pv,
                        pu,
                        cyc,
                        buf,
                        dh,
                        dl,
                    )
                    _tree_add(B, r1, nd, head)
                    _push_dual(B, nd, fd, H, meta)
                    for i in range(nt):
                        _scan_blossom(buf[i], B, vnext, g, c, nd, fd, H, meta)
                else:
                    _augment_side(u, v, n, nd, mate, vname, stk, chain)
                    _augment_side(v, u, n, nd, mate, vname, stk, chain)
                    _dissolve(r1, vnext, g, c, nd, fd, head, buf, dh, dl, H, meta)
                    _dissolve(r2, vnext, g, c, nd, fd, head, buf, dh, dl, H, meta)
                    ntrees -= 2
        if meta[HOVER] != 0:
            _rebuild(n, m, esrc, edst, wl, c, nd, fd, vname, H, meta, best)
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
    roots, events, late, left = _solve(
        np.int64(n),
        indptr,
        np.ascontiguousarray(indices, np.int32),
        arc_edge,
        esrc,
        np.ascontiguousarray(edge_dst, np.int32),
        wl,
        awl,
        maxcard,
        bool(warm),
        order,
        nd,
        fd,
        w32,
        w64,
        H,
    )
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
