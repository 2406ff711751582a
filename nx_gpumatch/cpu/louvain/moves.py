"""The move kernels: each vertex's best move against the state of its
batch, the scan of the moves made (inner weight changes, wakes), commits
and undos, and the sweep one vertex at a time."""

import numpy as np
from numba import get_thread_id, prange

from nx_gpumatch.cpu import njit, serial_builds
from nx_gpumatch.cpu.louvain.constants import DENSE_MIN_DEGREE
from nx_gpumatch.cpu.louvain.state import Scratch


# ----------------------------------------------------------- optimisation
@njit(cache=True)
def weighted_degrees(indptr, w, loop):
    n = indptr.shape[0] - 1
    k = np.empty(n, np.float64)
    for v in range(n):
        s = 0.0
        for p in range(indptr[v], indptr[v + 1]):
            s += w[p]
        k[v] = s + 2.0 * loop[v]
    return k


@njit(cache=True, inline="always")
def _best_move(v, bv, lv, st, row, res_over_m2, batched):
    """(community v should join, its own when nothing gains; the change of the
    total inner weight, arcs both ways, if v alone moves there; the margin of
    that choice, see _units), against the level ``lv`` and the partition of
    ``st`` (see :mod:`~nx_gpumatch.cpu.louvain.state`), with the calling
    thread's accumulator ``row``, a :class:`Scratch` of rows (pos, buf_c,
    buf_j, buf_w).

    Neighbour weights are summed per community in a sparse accumulator
    (pos[c] = slot of community c, -1 when absent; reset before returning),
    or, for rows of at least DENSE_MIN_DEGREE arcs when ``buf_w`` has a
    dense tail (see :func:`move_scratch`), in that tail, entry c of it for
    community c. Either way the slots list the communities in order of first
    appearance, with their weights summed in arc order: the same bits. Each
    slot also keeps the first neighbour seen in that community: for a
    singleton community its only member, which tells whether it moves in the
    same batch as v (``bv``, v's batch; -1 when v moves alone).

    ``batched`` False, a constant at the call sites of sweeps one vertex at a
    time, compiles those without the dense accumulator and without the first
    neighbours, which they never read: their rows meet few communities, and
    they run 15-20% faster so (level 1 of the random 300k benchmark graph), no
    slower on dense levels.
    """
    indptr, indices, w, k, prio = lv.indptr, lv.indices, lv.w, lv.k, lv.prio
    comm, a, size, batch = st.comm, st.a, st.size, st.batch
    pos, buf_c, buf_j, buf_w = row
    own = comm[v]
    cnt = 0
    lo = indptr[v]
    hi = indptr[v + 1]
    tail = buf_c.shape[0]  # where the dense accumulator begins in buf_w
    dense = batched and hi - lo >= DENSE_MIN_DEGREE and buf_w.shape[0] > tail
    if dense:
        # Branch-free, one pass over the row: a slot is written for every
        # arc, kept only when the arc is its community's first (the tail
        # entry is still zero: weights are positive here). The candidate
        # loop below reads and clears the tail entries.
        for p in range(lo, hi):
            j = indices[p]
            c = comm[j]
            x = buf_w[tail + c]
            buf_c[cnt] = c
            buf_j[cnt] = j
            cnt += x == 0.0
            buf_w[tail + c] = x + w[p]
    else:
        for p in range(lo, hi):
            j = indices[p]
            c = comm[j]
            q = pos[c]
            if q < 0:
                pos[c] = cnt
                buf_c[cnt] = c
                if batched:
                    buf_j[cnt] = j
                buf_w[cnt] = w[p]
                cnt += 1
            else:
                buf_w[q] += w[p]
    kv = k[v]
    scale = res_over_m2 * kv
    e_own = 0.0
    # One pass finds the best other community (the lowest priority among
    # equal scores) and the second best score, allowed or not.
    top1 = -np.inf
    top2 = -np.inf
    best = np.int32(-1)
    best_w = 0.0
    single = bv >= 0 and size[own] == 1  # (a vertex moving alone never swaps)
    for q in range(cnt):
        c = buf_c[q]
        if dense:
            x = buf_w[tail + c]
            buf_w[tail + c] = 0.0
            if single:
                buf_w[q] = x  # for the second look below
        else:
            x = buf_w[q]
            pos[c] = -1
        if c == own:
            e_own = x
            continue
        sc = x - a[c] * scale
        if sc >= top2:  # rare past the row's first candidates
            if sc > top1 or (sc == top1 and prio[c] < prio[best]):
                top2 = top1
                top1 = sc
                best = c
                best_w = x
            else:
                top2 = sc
    best_s = top1
    # Two singletons moving at once must not swap: only the one with the
    # higher priority may join the other. Where that bars the best community,
    # the best allowed one is looked for in a second pass.
    po = prio[own]
    if single and best >= 0 and size[best] == 1 and prio[best] > po:
        best = np.int32(-1)
        best_s = 0.0
        for q in range(cnt):
            c = buf_c[q]
            if c == own:
                continue
            x = buf_w[q]
            sc = x - a[c] * scale
            if best >= 0 and (sc < best_s or (sc == best_s and prio[c] > prio[best])):
                continue  # cannot beat the best allowed candidate so far
            if batch[buf_j[q]] == bv and size[c] == 1 and prio[c] > po:
                continue
            best = c
            best_s = sc
            best_w = x
    stay = e_own - (a[own] - kv) * scale
    if best >= 0 and best_s > stay:
        other = top2 if best_s == top1 else top1
        return best, 2.0 * (best_w - e_own), best_s - max(stay, other, 0.0)
    return own, 0.0, stay - max(top1, 0.0)


# The kernels below test ``active`` before calling the inlined _best_move: its
# inlined arguments cost about 60 ns of reference counting per call, which
# made a sweep with few active vertices cost as much as a full one.
@njit(cache=True, parallel=True)
def _compute_moves(verts, chunks, lv, st, scratch, res_over_m2, units):
    """Each active vertex's best move (``newc``) and margin, against the
    state of its batch: vertices of ``verts`` in the work units ``chunks``
    (bounds in verts). Its serial build, :data:`_compute_moves_seq`, walks
    the units in order on the calling thread."""
    comm, batch, active = st.comm, st.batch, st.active
    newc, slack, charge = st.newc, st.slack, st.charge
    for ch in prange(chunks.shape[0] - 1):
        tid = get_thread_id()
        row = Scratch(scratch.pos[tid], scratch.buf_c[tid], scratch.buf_j[tid], scratch.buf_w[tid])
        for t in range(chunks[ch], chunks[ch + 1]):
            v = verts[t]
            if active[v] == 0:
                newc[v] = comm[v]
                continue
            active[v] = 0
            c, _, margin = _best_move(v, batch[v], lv, st, row, res_over_m2, True)
            newc[v] = c
            slack[v] = _units(margin, units)
            for r in range(charge.shape[0]):
                charge[r, v] = 0


# Margins and charges are kept in integer units (a fixed fraction of m2, the
# same for a whole run): each thread charges its own row of ``charge`` and a
# vertex wakes once the sum of its rows exceeds its margin, a sum that does
# not depend on which thread charged what.
_UNITS_CAP = np.int64(1) << np.int64(40)
_CHARGE_CAP = np.int64(1) << np.int64(52)  # per row: T rows sum below 2**63


@njit(cache=True, inline="always")
def _units(margin, units):
    """A margin in units, rounded down (capped; 0 when margins are off)."""
    x = margin * units
    if not x > 0.0:
        return np.int64(0)
    if x >= _UNITS_CAP:
        return _UNITS_CAP
    return np.int64(x)


@njit(cache=True)
def _inner_change(v, newc, comm, batch, indptr, indices, w, active, pending, k, ch, rk, units):
    """Change of the total inner weight (arcs counted both ways) that v's move
    brings, given the moves of v's batch. An arc to a vertex moving in the
    same batch is counted here once and once from the other end.

    Each neighbour j is charged (in its thread's row ``ch``) an upper bound,
    rounded up, on how much v's move can lower its margin (``rk`` =
    resolution * k_v / m2); with ``units`` 0 every neighbour wakes. A neighbour
    woken or charged is flagged ``pending`` (its wake test is due)."""
    c = newc[v]
    o = comm[v]
    bv = batch[v]
    d = 0.0
    for p in range(indptr[v], indptr[v + 1]):
        j = indices[p]
        oj = comm[j]
        nj = oj
        mult = 2.0
        if batch[j] == bv and newc[j] != oj:
            nj = newc[j]
            mult = 1.0
        wp = w[p]
        if nj == c:
            d += mult * wp
        if oj == o:
            d -= mult * wp
        if active[j]:
            continue
        if units == 0.0 or nj != oj:
            active[j] = 1
            pending[j] = 1
            continue
        r = rk * k[j]
        if oj == o:  # v left j's community
            drop = 2.0 * (wp - r)
        elif oj == c:  # v joined it
            drop = 2.0 * (r - wp)
        else:
            drop = abs(wp - r)
        if not drop > 0.0:
            continue
        x = drop * units
        if x >= _UNITS_CAP:
            active[j] = 1
            pending[j] = 1
            continue
        t = ch[j] + np.int64(x) + 1
        ch[j] = t if t < _CHARGE_CAP else _CHARGE_CAP
        pending[j] = 1
    return d


@njit(cache=True, parallel=True)
def _scan_moves(verts, chunks, lv, st, rk, units):
    """The inner weight change of each chosen move, waking or charging the
    mover's neighbours (see _inner_change); work units as
    :func:`_compute_moves`'s, serial build :data:`_scan_moves_seq`."""
    indptr, indices, w, k = lv.indptr, lv.indices, lv.w, lv.k
    newc, comm, batch, active = st.newc, st.comm, st.batch, st.active
    pending, change, charge = st.pending, st.change, st.charge
    for ch in prange(chunks.shape[0] - 1):
        row = charge[get_thread_id()]
        for t in range(chunks[ch], chunks[ch + 1]):
            v = verts[t]
            if newc[v] != comm[v]:
                change[v] = _inner_change(
                    v,
                    newc,
                    comm,
                    batch,
                    indptr,
                    indices,
                    w,
                    active,
                    pending,
                    k,
                    row,
                    rk * k[v],
                    units,
                )


# One definition each, built twice: the serial builds run the units in order
# on the calling thread (thread id 0 outside a parallel loop: scratch and
# charge row 0), for batches too small for the threads and sparse sweeps.
_compute_moves_seq, _scan_moves_seq = serial_builds(_compute_moves, _scan_moves)


@njit(cache=True)
def _commit(verts, lo, hi, newc, comm, a, size, k, change, logc, loga, at):
    """Apply a batch's moves in walk order (so every float sum is the same for
    any thread count). Returns (moves, change of the summed squared community
    degrees, change of the total inner weight). Unless ``logc`` is empty, the
    i-th move is logged for :func:`_undo` as entry ``at + i``."""
    moved = 0
    logged = logc.shape[0] > 0
    dsq = 0.0
    dinner = 0.0
    for t in range(lo, hi):
        v = verts[t]
        c = newc[v]
        o = comm[v]
        if c != o:
            dinner += change[v]
            kv = k[v]
            ao = a[o]
            ac = a[c]
            if logged:
                e = at + moved
                logc[3 * e] = v
                logc[3 * e + 1] = o
                logc[3 * e + 2] = c
                loga[2 * e] = ao
                loga[2 * e + 1] = ac
            a[o] = ao - kv
            a[c] = ac + kv
            dsq += (a[o] * a[o] + a[c] * a[c]) - (ao * ao + ac * ac)
            size[o] -= 1
            size[c] += 1
            comm[v] = c
            moved += 1
    return moved, dsq, dinner


@njit(cache=True)
def _undo(moves, logc, loga, comm, newc, a, size):
    """Take back the first ``moves`` logged moves, last first: every value
    comes back bit for bit."""
    for e in range(moves - 1, -1, -1):
        v = logc[3 * e]
        o = logc[3 * e + 1]
        c = logc[3 * e + 2]
        comm[v] = o
        newc[v] = o
        a[o] = loga[2 * e]
        a[c] = loga[2 * e + 1]
        size[o] += 1
        size[c] -= 1


@njit(cache=True)
def _sweep_one_by_one(verts, lv, st, scratch, res_over_m2, flag):
    """A sweep that moves one vertex at a time (the sequential method): the same
    moves as batches of one vertex each, without their set-up. A move's inner
    weight change comes from the accumulator, so the row is read once more
    only to flag the neighbours, and only with ``flag`` (a last lead sweep
    need not: every vertex is looked at after it)."""
    indptr, indices, k = lv.indptr, lv.indices, lv.k
    comm, a, size, active = st.comm, st.a, st.size, st.active
    row = Scratch(scratch.pos[0], scratch.buf_c[0], scratch.buf_j[0], scratch.buf_w[0])
    moved = 0
    dsq = 0.0
    dinner = 0.0
    for t in range(verts.shape[0]):
        v = verts[t]
        if active[v] == 0:
            continue
        active[v] = 0
        c, d, _ = _best_move(v, -1, lv, st, row, res_over_m2, False)
        o = comm[v]
        if c == o:
            continue
        if flag:
            for p in range(indptr[v], indptr[v + 1]):
                active[indices[p]] = 1
        dinner += d
        kv = k[v]
        ao = a[o]
        ac = a[c]
        a[o] = ao - kv
        a[c] = ac + kv
        dsq += (a[o] * a[o] + a[c] * a[c]) - (ao * ao + ac * ac)
        size[o] -= 1
        size[c] += 1
        comm[v] = c
        moved += 1
    return moved, dsq, dinner


@njit(cache=True)
def _copy(src, dst):
    # a loop: numba's dst[:] = src compiles its error messages for seconds
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit(cache=True)
def _sum_sq(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s
