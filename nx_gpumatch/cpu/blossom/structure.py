"""The exact matching's blossom structure: labels and trees, augmentation
along alternating paths, and forming, expanding and dissolving blossoms (see
the package's doc)."""

from nx_gpumatch.cpu import njit
from nx_gpumatch.cpu.blossom.events import push_blossom, push_dual, scan_blossom
from nx_gpumatch.cpu.blossom.tables import (
    AH,
    AL,
    ARGMIN,
    BASE,
    BCHILD,
    BNAME,
    BSIZE,
    EA,
    EB,
    F2,
    FREE,
    I1,
    I2,
    LABEL,
    LFROM,
    LTO,
    NEXT,
    NLAB,
    OWNER,
    PARENT,
    PREV,
    SLAB,
    TLAB,
    TNEXT,
    TPREV,
    TROOT,
    VFIRST,
    VLAST,
    VNM,
    YH,
    YL,
    ZH,
    ZL,
    f8,
    i8,
    sign,
)


@njit(cache=True, inline="always")
def setlab(b, lab, nd, fd):
    nd[b, LABEL] = lab
    fd[nd[b, BNAME], NLAB] = lab


@njit((i8, i8, I2, F2, f8, f8), cache=True, no_cpython_wrapper=True)
def relabel(b, lab, nd, fd, dh, dl):
    """Give top-level b a new label keeping its duals continuous at time D."""
    ds = sign(nd[b, LABEL]) - sign(lab)
    if ds != 0.0:
        nb = nd[b, BNAME]
        fd[nb, AH] += ds * dh
        fd[nb, AL] += ds * dl
        if b >= nd.shape[0] // 2:
            fd[b, ZH] -= 2.0 * ds * dh
            fd[b, ZL] -= 2.0 * ds * dl
    setlab(b, lab, nd, fd)


@njit(cache=True, inline="always")
def tree_add(b, r, nd, head):
    nd[b, TROOT] = r
    nd[b, TPREV] = -1
    h = head[r]
    nd[b, TNEXT] = h
    if h != -1:
        nd[h, TPREV] = b
    head[r] = b


@njit(cache=True, inline="always")
def tree_remove(b, nd, head):
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
def augment_side(s, j, n, nd, mate, vname, stk, chain):
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


@njit(cache=True, no_cpython_wrapper=True, _nrt=False)
def dissolve(r, st, dh, dl):
    """Unlabel every blossom of the tree rooted at r; vertices leaving T may now
    have events with S vertices of other trees."""
    vnext, g, c, nd, fd, head, buf, H, meta = (
        st.vnext,
        st.g,
        st.c,
        st.nd,
        st.fd,
        st.head,
        st.buf,
        st.H,
        st.meta,
    )
    nt = 0
    b = head[r]
    while b != -1:
        nb = nd[b, TNEXT]
        if nd[b, LABEL] == TLAB:
            buf[nt] = b
            nt += 1
        relabel(b, FREE, nd, fd, dh, dl)
        nd[b, TROOT] = -1
        nd[b, TNEXT] = -1
        nd[b, TPREV] = -1
        b = nb
    head[r] = -1
    for i in range(nt):
        scan_blossom(buf[i], buf[i], vnext, g, c, nd, fd, H, meta)


@njit((i8, I2, I1, I1), cache=True, no_cpython_wrapper=True, _nrt=False)
def _s_parent(b, nd, mate, vname):
    t = mate[nd[b, BASE]]
    if t == -1:
        return -1
    return nd[vname[nd[nd[vname[t], OWNER], LFROM]], OWNER]


@njit((i8, i8, I1, I2, I1, I1), cache=True, no_cpython_wrapper=True, _nrt=False)
def _path_up(x, lca, path, nd, mate, vname):
    """The top-level blossoms from S-blossom x up its tree to lca (excluded),
    S and T in turn, into path; returns their number."""
    n = 0
    while x != lca:
        path[n] = x
        t = nd[vname[mate[nd[x, BASE]]], OWNER]
        path[n + 1] = t
        n += 2
        x = nd[vname[nd[t, LFROM]], OWNER]
    return n


@njit(cache=True, no_cpython_wrapper=True, _nrt=False)
def _cycle(u, v, st, stamp):
    """The cycle of top-level blossoms that the tight S-S edge (u, v) closes in
    its tree, in st.cyc from the common ancestor (cyc[0]) down v's side and up
    u's, with the edges that link each child to the next; returns its length."""
    nd, vname, mate, mark, pv, pu, cyc = st.nd, st.vname, st.mate, st.mark, st.pv, st.pu, st.cyc
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
    lv = _path_up(bv, lca, pv, nd, mate, vname)
    lu = _path_up(bu, lca, pu, nd, mate, vname)
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
    return k


@njit(cache=True, no_cpython_wrapper=True, _nrt=False)
def form_blossom(u, v, st, nfree, stamp, dh, dl):
    """New S-blossom from the tight S-S edge (u, v) inside one tree; returns
    (its id, the number of T-children it took, listed in st.buf, nfree)."""
    n, vnext, nd, fd, vname, head, freeids, cyc, buf = (
        st.n,
        st.vnext,
        st.nd,
        st.fd,
        st.vname,
        st.head,
        st.freeids,
        st.cyc,
        st.buf,
    )
    k = _cycle(u, v, st, stamp)
    lca = cyc[0]
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
    shv = sign(nd[heavy, LABEL])
    fd[hn, AH] += (shv + 1.0) * dh
    fd[hn, AL] += (shv + 1.0) * dl
    ahn = fd[hn, AH]
    aln = fd[hn, AL]
    nt = 0
    for i in range(k):
        ch = cyc[i]
        lab = nd[ch, LABEL]
        s = sign(lab)
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
        tree_remove(ch, nd, head)
        setlab(ch, FREE, nd, fd)
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
    setlab(B, SLAB, nd, fd)
    fd[B, ZH] = -2.0 * dh  # z = 0 now and grows with D
    fd[B, ZL] = -2.0 * dl
    return B, nt, nfree


@njit(cache=True, no_cpython_wrapper=True, _nrt=False)
def expand(B, st, dh, dl):
    """Expand the T-blossom B whose dual reached zero: the even path from the
    entry child to the base child stays in the tree (T, S, ..., T), the other
    children become free."""
    n, vnext, g, c, nd, fd, vname, head, H, meta = (
        st.n,
        st.vnext,
        st.g,
        st.c,
        st.nd,
        st.fd,
        st.vname,
        st.head,
        st.H,
        st.meta,
    )
    r = nd[B, TROOT]
    te = nd[B, LTO]
    se = nd[B, LFROM]
    tree_remove(B, nd, head)
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
        setlab(x, FREE, nd, fd)
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
            setlab(cur, TLAB, nd, fd)
            tree_add(cur, r, nd, head)
            if cur >= n:
                push_blossom(cur, fd, H, meta)
        else:
            fd[nd[cur, BNAME], AH] = abh + 2.0 * dh
            fd[nd[cur, BNAME], AL] = abl + 2.0 * dl
            if cur >= n:
                fd[cur, ZH] -= 2.0 * dh
                fd[cur, ZL] -= 2.0 * dl
            setlab(cur, SLAB, nd, fd)
            tree_add(cur, r, nd, head)
            push_dual(cur, nd, fd, H, meta)
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
            scan_blossom(x, x, vnext, g, c, nd, fd, H, meta)
        x = nd[x, NEXT]
        if x == b0:
            break
    nd[B, LABEL] = FREE
    nd[B, PARENT] = -1
    nd[B, TROOT] = -1
