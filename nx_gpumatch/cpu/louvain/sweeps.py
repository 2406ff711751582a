"""Local moving of one level: the optimisers that run a level's sweeps
until the sweep rule ends them."""

import numpy as np

from nx_gpumatch.cpu import njit, serial_builds
from nx_gpumatch.cpu.louvain.batches import sweep_schedule
from nx_gpumatch.cpu.louvain.constants import DENSE_MAX_VERTICES, DENSE_MIN_DEGREE
from nx_gpumatch.cpu.louvain.moves import (
    _commit,
    _compute_moves,
    _compute_moves_seq,
    _copy,
    _scan_moves,
    _scan_moves_seq,
    _sum_sq,
    _sweep_one_by_one,
    _undo,
)
from nx_gpumatch.cpu.louvain.sparse import _active_chunks, _sparse_layout, _sparse_sweep, _wake
from nx_gpumatch.cpu.louvain.state import MoveState, SparseState


def move_scratch(threads, n, maxdeg, dense=0):
    """Per-thread accumulators for a level with n vertices and degrees up to
    maxdeg: (pos, buf_c, buf_j, buf_w). ``dense`` > 0: buf_w has that many
    more entries, zeros, for the dense accumulator (see :func:`dense_size`)."""
    d = max(maxdeg, 1)
    return (
        np.full((threads, n), -1, np.int32),
        np.empty((threads, d), np.int32),
        np.empty((threads, d), np.int32),
        np.zeros((threads, d + dense), np.float64),
    )


def dense_size(n, maxdeg, positive):
    """Entries of the dense accumulator of a level with n vertices and degrees
    up to maxdeg (see DENSE_MIN_DEGREE): n, or 0 where it would not be used or
    could not tell a first arc (some arc weighs 0: ``positive`` False)."""
    return n if positive and maxdeg >= DENSE_MIN_DEGREE and n <= DENSE_MAX_VERTICES else 0


@njit(cache=True)
def _level_state(indptr, indices, w, loop, k, init):
    """(comm, a, size, inner) of the partition ``init``: community of each
    vertex, community degrees and sizes, total inner weight (arcs both ways)."""
    n = indptr.shape[0] - 1
    comm = np.empty(n, np.int32)
    a = np.zeros(n, np.float64)
    size = np.zeros(n, np.int32)
    singletons = True
    for v in range(n):
        c = init[v]
        comm[v] = c
        a[c] += k[v]
        size[c] += 1
        singletons = singletons and c == v
    inner = 0.0
    for v in range(n):
        inner += 2.0 * loop[v]
    if singletons:  # no arc is inner (arcs join distinct vertices): skip the random reads
        return comm, a, size, inner
    for v in range(n):
        for p in range(indptr[v], indptr[v + 1]):
            if comm[indices[p]] == comm[v]:
                inner += w[p]
    return comm, a, size, inner


# What a level does after a sweep (see _after_sweep).
_GO_ON, _STOP, _SWEEP_ALL, _UNDO = 0, 1, 2, 3


@njit(cache=True, inline="always")
def _after_sweep(moved, q, q_new, q_start, threshold, rel_tol, full, confirm):
    """The sweep-ending rule of both optimisers: _UNDO when the sweep lowered
    modularity; when it moved nothing or gained at most max(threshold,
    rel_tol * the level's gain), _STOP, or with ``confirm`` after a sweep that
    skipped vertices, _SWEEP_ALL (those vertices' gains changed through
    community degrees: only a sweep over all of them may end the level);
    else _GO_ON."""
    if moved > 0:
        if q_new < q:
            return _UNDO
        if q_new - q > max(threshold, rel_tol * (q_new - q_start)):
            return _GO_ON
    return _STOP if full or not confirm else _SWEEP_ALL


@njit(cache=True)
def _copy_state(comm, a, size, comm2, a2, size2):
    _copy(comm, comm2)
    _copy(a, a2)
    _copy(size, size2)


@njit(cache=True)
def optimise_seq(lv, scratch, rule, init):
    """:func:`optimise` for levels swept one vertex at a time (``batch_arcs``
    <= 1; the batch settings, ``lead``, ``margins``, ``sparse_div`` and
    ``chase`` are ignored): the same moves, sums and results
    without the batch machinery, so that small graphs compile only this."""
    n = lv.indptr.shape[0] - 1
    m2, resolution, threshold = rule.m2, rule.resolution, rule.threshold
    comm, a, size, inner = _level_state(lv.indptr, lv.indices, lv.w, lv.loop, lv.k, init)
    batch = np.arange(n).astype(np.int32)  # each vertex its own batch
    st = _move_state(comm, a, size, batch, np.ones(n, np.uint8), 0, 0)
    active = st.active
    sq = _sum_sq(a)
    res_over_m2 = resolution / m2
    q = inner / m2 - resolution * sq / (m2 * m2)
    q_start = q
    keep_comm = np.empty_like(comm)
    keep_a = np.empty_like(a)
    keep_size = np.empty_like(size)
    total = 0
    sweeps = 0
    all_active = True
    while sweeps < rule.max_sweeps:
        sweeps += 1
        full = all_active
        all_active = False
        _copy_state(comm, a, size, keep_comm, keep_a, keep_size)
        keep_sq = sq
        keep_inner = inner
        moved, dsq, dinner = _sweep_one_by_one(lv.verts, lv, st, scratch, res_over_m2, True)
        sq += dsq
        inner += dinner
        q_new = inner / m2 - resolution * sq / (m2 * m2)
        act = _after_sweep(moved, q, q_new, q_start, threshold, rule.rel_tol, full, rule.confirm)
        if act == _UNDO:
            _copy_state(keep_comm, keep_a, keep_size, comm, a, size)
            sq = keep_sq
            inner = keep_inner
            break  # one vertex at a time lost modularity: only rounding can
        if moved > 0:
            total += moved
            q = q_new
        if act == _STOP:
            break
        if act == _SWEEP_ALL:
            active[:] = 1
            all_active = True
    return comm, q, total, sweeps


@njit(cache=True)
def _move_state(comm, a, size, batch, active, n, charges):
    """A :class:`MoveState` of the partition (comm, a, size); its wake
    bookkeeping sized for n vertices (0: none, for sweeps one vertex at a
    time), with ``charges`` rows of charges."""
    return MoveState(
        comm,
        a,
        size,
        batch,
        active,
        np.zeros(n, np.uint8),  # pending: charged or woken, wake test not yet done
        np.zeros(n, np.int64),  # slack
        np.zeros((charges, n), np.int64),  # charge
        comm.copy() if n else np.empty(0, np.int32),  # newc
        np.empty(n, np.float64),  # change
    )


@njit(cache=True)
def _with_batch(st, batch):
    """``st`` with the commit batches of a new sweep schedule."""
    return MoveState(
        st.comm,
        st.a,
        st.size,
        batch,
        st.active,
        st.pending,
        st.slack,
        st.charge,
        st.newc,
        st.change,
    )


@njit(cache=True)
def _sparse_state(lv, n, batch_arcs, max_batches):
    """The :class:`SparseState` of a level (see :func:`_sparse_sweep`);
    ``n`` 0: an empty one, made when first needed."""
    N = lv.verts.shape[0] if n else 0
    if n:
        vpos, nbb, base = _sparse_layout(lv.bptr, lv.verts, lv.indptr, n, batch_arcs, max_batches)
    else:
        vpos, nbb, base = np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.int64)
    return SparseState(
        np.empty(N, np.int32),  # cur
        np.empty(N, np.int32),  # nxt
        np.empty(N, np.int32),  # tmp
        np.empty(nbb.sum(), np.int32),  # head
        np.empty(n, np.int32),  # link
        np.zeros(n, np.uint8),  # queued
        vpos,
        nbb,
        base,
        np.empty(3 * N, np.int32),  # logc
        np.empty(2 * N, np.float64),  # loga
    )


@njit(cache=True)
def _swapped(sp):
    """``sp`` with its worklists cur and nxt swapped."""
    return SparseState(
        sp.nxt,
        sp.cur,
        sp.tmp,
        sp.head,
        sp.link,
        sp.queued,
        sp.vpos,
        sp.nbb,
        sp.base,
        sp.logc,
        sp.loga,
    )


@njit(cache=True)
def _due_arcs(lv, st):
    """Arcs of the vertices due a look (active, or charged since their last
    wake test)."""
    verts, indptr, active, pending = lv.verts, lv.indptr, st.active, st.pending
    due_arcs = 0
    for t in range(verts.shape[0]):
        v = verts[t]
        if active[v] | pending[v]:
            due_arcs += indptr[v + 1] - indptr[v]
    return due_arcs


@njit(cache=True)
def _queue_due(lv, st, sp):
    """The vertices due a look listed in sp.cur and queued: returns their count."""
    verts, active, pending = lv.verts, st.active, st.pending
    ncur = 0
    for t in range(verts.shape[0]):
        v = verts[t]
        if active[v] | pending[v]:
            sp.cur[ncur] = v
            ncur += 1
            sp.queued[v] = 1
    return ncur


@njit(cache=True)
def _stays_sparse(lv, sp, ncur, sparse_div, act):
    """Does the next sweep stay sparse (the sweep went on and the vertices
    due, sp.cur[:ncur], have at most 1/``sparse_div`` as many arcs as the
    level has vertices)? If not, they are unqueued."""
    indptr = lv.indptr
    due_arcs = 0
    for i in range(ncur):
        due_arcs += indptr[sp.cur[i] + 1] - indptr[sp.cur[i]]
    if act == _GO_ON and due_arcs * sparse_div <= lv.verts.shape[0]:
        return True
    for i in range(ncur):
        sp.queued[sp.cur[i]] = 0
    return False


@njit(cache=True)
def _batched_sweep(sverts, bat, lv, st, scratch, rule, units, sq, inner):
    """The commit batches of one sweep (bounds ``bat`` in ``sverts``): each
    batch's moves computed against the same state, their inner weight
    changes, then committed in order. Returns (moves, sq, inner), the sums
    updated batch by batch."""
    nchunks, par_min_arcs = rule.nchunks, rule.par_min_arcs
    res_over_m2 = rule.resolution / rule.m2
    no_logc = np.empty(0, np.int32)
    no_loga = np.empty(0, np.float64)
    moved = 0
    for j in range(bat.shape[0] - 1):
        lo = bat[j]
        hi = bat[j + 1]
        # Small batches run on the calling thread: waking the pool costs more.
        _wake(sverts, lo, hi, st.active, st.slack, st.charge, st.pending)  # no margins: no charges
        chunks, arcs = _active_chunks(sverts, lo, hi, lv.indptr, st.active, nchunks)
        if nchunks > 1 and arcs >= par_min_arcs:
            _compute_moves(sverts, chunks, lv, st, scratch, res_over_m2, units)
            _scan_moves(sverts, chunks, lv, st, res_over_m2, units)
        else:
            _compute_moves_seq(sverts, chunks, lv, st, scratch, res_over_m2, units)
            _scan_moves_seq(sverts, chunks, lv, st, res_over_m2, units)
        cnt, dsq, dinner = _commit(
            sverts, lo, hi, st.newc, st.comm, st.a, st.size, lv.k, st.change, no_logc, no_loga, 0
        )
        sq += dsq
        inner += dinner
        moved += cnt
    return moved, sq, inner


@njit(cache=True)
def _left_alone(verts, comm, keep_comm, size):
    """Vertices of ``verts`` that moved and are alone in their community (a
    batched sweep's movers that chased a neighbour away, see CHASE)."""
    alone = 0
    for t in range(verts.shape[0]):
        v = verts[t]
        if comm[v] != keep_comm[v] and size[comm[v]] == 1:
            alone += 1
    return alone


@njit(cache=True)
def _fresh_start(st, k):
    """Community degrees summed anew (the same bits as a new start of the
    level from this partition), every vertex active: returns their summed
    squares."""
    a = st.a
    a[:] = 0.0
    for v in range(k.shape[0]):
        a[st.comm[v]] += k[v]
    st.active[:] = 1
    return _sum_sq(a)


@njit(cache=True)
def optimise(lv, scratch, rule, init):
    """Modularity optimisation of one level from the partition ``init``
    (community ids below n; Louvain starts from singletons, Leiden from the
    previous level's communities).

    Each sweep visits the degree buckets in turn, every bucket cut into commit
    batches (see :func:`sweep_schedule`); a vertex is looked at again only
    after a neighbour has moved. Sweeps stop once one gains at most
    max(``threshold``, ``rel_tol`` * the level's gain so far) or moves nothing;
    with ``confirm`` only a sweep over all vertices may end the level (the
    others skip vertices whose gains changed only through community degrees).
    A sweep that lowers
    modularity (moves made together can) is undone and the level goes on one
    vertex at a time.

    The first ``lead`` sweeps go one vertex at a time in bucket order (see
    LEAD_SWEEPS) and end as :func:`optimise_seq`'s do without ``rel_tol`` and
    ``confirm``; if they moved something, the batched sweeps follow from
    their partition, all vertices active, their schedule numbered from 0 and
    ``rel_tol`` taken of the gain made after the lead. All sweeps count
    towards ``max_sweeps``. With ``margins`` batched sweeps wake a mover's
    neighbours by their margins (see the module notes), else all of them.
    A batched sweep due to look at vertices with at most 1/``sparse_div``
    as many arcs as the level has vertices runs as :func:`_sparse_sweep`
    (``sparse_div`` 0: never), with the same moves. Without lead sweeps, a
    first batched sweep that leaves over 1/``chase`` of its movers alone is
    undone and one lead sweep goes first (``chase`` 0: never; see CHASE).
    ``lv`` is the level (a :class:`~nx_gpumatch.cpu.louvain.state.Level`),
    ``scratch`` the threads' accumulators (a
    :class:`~nx_gpumatch.cpu.louvain.state.Scratch`, see :func:`move_scratch`),
    ``rule`` the settings named above and ``m2``, ``resolution``,
    ``nchunks`` (work units of a parallel step) and ``par_min_arcs`` (fewer
    arcs run on the calling thread), a
    :class:`~nx_gpumatch.cpu.louvain.state.SweepSettings`.
    Returns (comm, modularity, moves, sweeps).
    """
    n = lv.indptr.shape[0] - 1
    m2, resolution, threshold, rel_tol = rule.m2, rule.resolution, rule.threshold, rule.rel_tol
    comm, a, size, inner = _level_state(lv.indptr, lv.indices, lv.w, lv.loop, lv.k, init)
    charges = scratch.pos.shape[0] if rule.margins else 1
    st = _move_state(comm, a, size, np.full(n, -1, np.int32), np.ones(n, np.uint8), n, charges)
    active = st.active
    sq = _sum_sq(a)
    q = inner / m2 - resolution * sq / (m2 * m2)
    q_start = q
    units = 2.0**40 / m2 if rule.margins else 0.0
    sp = _sparse_state(lv, 0, 0, 0)  # made when first needed
    sparse = False
    ncur = 0
    keep_comm = np.empty_like(comm)
    keep_a = np.empty_like(a)
    keep_size = np.empty_like(size)
    total = 0
    sweeps = 0
    all_active = True
    batch_arcs, max_batches, lead_left, chase = (
        rule.batch_arcs,
        rule.max_batches,
        rule.lead,
        rule.chase,
    )
    chase_test = chase > 0 and lead_left == 0 and batch_arcs > 1
    sched = 0  # the schedule's sweep number (batched sweeps count from 0 after the lead)
    while sweeps < rule.max_sweeps:
        if sparse:
            keep_sq = sq
            keep_inner = inner
            moved, sq, inner, ncur = _sparse_sweep(
                sp, ncur, sched, lv, st, scratch, resolution / m2, units, sq, inner
            )
            sched += 1
            sweeps += 1
            sp = _swapped(sp)
            q_new = inner / m2 - resolution * sq / (m2 * m2)
            act = _after_sweep(moved, q, q_new, q_start, threshold, rel_tol, False, rule.confirm)
            if act == _UNDO:
                _undo(moved, sp.logc, sp.loga, comm, st.newc, a, size)
                sq = keep_sq
                inner = keep_inner
            elif moved > 0:
                total += moved
                q = q_new
            if act == _STOP:
                break
            sparse = _stays_sparse(lv, sp, ncur, rule.sparse_div, act)
            if act == _UNDO:  # as below
                batch_arcs = 1
                max_batches = 0
            if act == _UNDO or act == _SWEEP_ALL:
                active[:] = 1
                all_active = True
            continue
        leading = lead_left > 0
        sverts, bat, batch = sweep_schedule(
            lv.bptr,
            lv.verts,
            lv.indptr,
            np.int64(batch_arcs),
            np.int64(max_batches),
            np.int64(sched),
        )
        st = _with_batch(st, batch)
        if leading:
            lead_left -= 1
        else:
            sched += 1
        sweeps += 1
        full = all_active  # does this sweep look at every vertex?
        all_active = False
        _copy_state(comm, a, size, keep_comm, keep_a, keep_size)
        keep_sq = sq
        keep_inner = inner
        if batch_arcs <= 1 or leading:
            # One vertex at a time: no batch machinery, each move lands at once.
            flag = not leading or lead_left > 0
            moved, dsq, dinner = _sweep_one_by_one(sverts, lv, st, scratch, resolution / m2, flag)
            sq += dsq
            inner += dinner
        else:
            moved, sq, inner = _batched_sweep(sverts, bat, lv, st, scratch, rule, units, sq, inner)
        q_new = inner / m2 - resolution * sq / (m2 * m2)
        if leading:
            act = _after_sweep(moved, q, q_new, q_start, threshold, 0.0, full, False)
            if act == _UNDO:
                _copy_state(keep_comm, keep_a, keep_size, comm, a, size)
                sq = keep_sq
                inner = keep_inner
            elif moved > 0:
                total += moved
                q = q_new
            if act != _GO_ON:
                lead_left = 0
            if lead_left == 0:
                if total == 0:
                    break
                # The batched sweeps start as a fresh level from the lead's partition.
                sq = _fresh_start(st, lv.k)
                q = inner / m2 - resolution * sq / (m2 * m2)
                q_start = q
                all_active = True
            continue
        if chase_test and batch_arcs > 1:
            chase_test = False
            if _left_alone(lv.verts, comm, keep_comm, size) * chase > moved:
                # Movers chased neighbours that left: undo, and sweep one
                # vertex at a time first as levels with lead sweeps do.
                _copy_state(keep_comm, keep_a, keep_size, comm, a, size)
                sq = keep_sq
                inner = keep_inner
                lead_left = 1
                sched = 0
                active[:] = 1
                all_active = True
                continue
        act = _after_sweep(moved, q, q_new, q_start, threshold, rel_tol, full, rule.confirm)
        if act == _UNDO:
            _copy_state(keep_comm, keep_a, keep_size, comm, a, size)
            sq = keep_sq
            inner = keep_inner
            if batch_arcs <= 1:
                break  # one vertex at a time lost modularity: only rounding can
            # Moves made together undid each other: go on one vertex at a time,
            # which gains whenever it moves, rather than stopping short.
            batch_arcs = 1
            max_batches = 0
            active[:] = 1
            all_active = True
            continue
        if moved > 0:
            total += moved
            q = q_new
        if act == _STOP:
            break
        if act == _SWEEP_ALL:
            active[:] = 1
            all_active = True
        elif rule.sparse_div > 0 and batch_arcs > 1:
            if _due_arcs(lv, st) * rule.sparse_div <= lv.verts.shape[0]:
                if sp.vpos.shape[0] == 0:
                    sp = _sparse_state(lv, n, batch_arcs, max_batches)
                ncur = _queue_due(lv, st, sp)
                sparse = True
    return comm, q, total, sweeps


# Builds without threads (prange runs as range): same code, same float
# operations, same results; small graphs then compile no parallel kernel.
optimise_1, *_ = serial_builds(optimise, _batched_sweep, _compute_moves, _scan_moves)
