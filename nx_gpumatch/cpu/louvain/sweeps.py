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
def optimise_seq(
    indptr,
    indices,
    w,
    loop,
    k,
    order,
    prio,
    m2,
    resolution,
    threshold,
    bptr,
    verts,
    batch_arcs,
    max_batches,
    pos,
    buf_c,
    buf_j,
    buf_w,
    nchunks,
    par_min_arcs,
    max_sweeps,
    init,
    rel_tol,
    confirm,
    lead,
    margins,
    sparse_div,
    chase,
):
    """:func:`optimise` for levels swept one vertex at a time (``batch_arcs``
    <= 1; the batch keywords, ``lead``, ``margins``, ``sparse_div`` and
    ``chase`` are ignored): the same moves, sums and results
    without the batch machinery, so that small graphs compile only this."""
    n = indptr.shape[0] - 1
    comm, a, size, inner = _level_state(indptr, indices, w, loop, k, init)
    active = np.ones(n, np.uint8)
    sq = _sum_sq(a)
    res_over_m2 = resolution / m2
    q = inner / m2 - resolution * sq / (m2 * m2)
    q_start = q
    batch = np.arange(n).astype(np.int32)  # each vertex its own batch
    keep_comm = np.empty_like(comm)
    keep_a = np.empty_like(a)
    keep_size = np.empty_like(size)
    total = 0
    sweeps = 0
    all_active = True
    while sweeps < max_sweeps:
        sweeps += 1
        full = all_active
        all_active = False
        _copy_state(comm, a, size, keep_comm, keep_a, keep_size)
        keep_sq = sq
        keep_inner = inner
        moved, dsq, dinner = _sweep_one_by_one(
            verts,
            indptr,
            indices,
            w,
            k,
            comm,
            a,
            size,
            prio,
            batch,
            active,
            res_over_m2,
            pos[0],
            buf_c[0],
            buf_j[0],
            buf_w[0],
            True,
        )
        sq += dsq
        inner += dinner
        q_new = inner / m2 - resolution * sq / (m2 * m2)
        act = _after_sweep(moved, q, q_new, q_start, threshold, rel_tol, full, confirm)
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
def optimise(
    indptr,
    indices,
    w,
    loop,
    k,
    order,
    prio,
    m2,
    resolution,
    threshold,
    bptr,
    verts,
    batch_arcs,
    max_batches,
    pos,
    buf_c,
    buf_j,
    buf_w,
    nchunks,
    par_min_arcs,
    max_sweeps,
    init,
    rel_tol,
    confirm,
    lead,
    margins,
    sparse_div,
    chase,
):
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
    Returns (comm, modularity, moves, sweeps).
    """
    n = indptr.shape[0] - 1
    comm, a, size, inner = _level_state(indptr, indices, w, loop, k, init)
    newc = comm.copy()
    change = np.empty(n, np.float64)
    active = np.ones(n, np.uint8)
    sq = _sum_sq(a)
    res_over_m2 = resolution / m2
    q = inner / m2 - resolution * sq / (m2 * m2)
    q_start = q
    slack = np.zeros(n, np.int64)
    units = 2.0**40 / m2 if margins else 0.0
    charge = np.zeros((pos.shape[0] if margins else 1, n), np.int64)
    pending = np.zeros(n, np.uint8)  # charged or woken, wake test not yet done
    N = verts.shape[0]
    # _sparse_sweep's state, set up when first needed
    sparse = False
    ncur = 0
    cur = np.empty(0, np.int32)
    nxt = cur
    tmp = cur
    link = cur
    vpos = cur
    head = cur
    queued = np.empty(0, np.uint8)
    nbb = np.empty(0, np.int64)
    base = nbb
    logc = np.empty(0, np.int32)
    loga = np.empty(0, np.float64)
    no_logc = logc
    no_loga = loga
    sverts = verts
    bat = np.zeros(1, np.int64)
    batch = np.full(n, -1, np.int32)
    keep_comm = np.empty_like(comm)
    keep_a = np.empty_like(a)
    keep_size = np.empty_like(size)
    total = 0
    sweeps = 0
    all_active = True
    lead_left = lead
    chase_test = chase > 0 and lead == 0 and batch_arcs > 1
    sched = 0  # the schedule's sweep number (batched sweeps count from 0 after the lead)
    while sweeps < max_sweeps:
        if sparse:
            keep_sq = sq
            keep_inner = inner
            moved, sq, inner, nn = _sparse_sweep(
                cur,
                ncur,
                nxt,
                tmp,
                head,
                link,
                queued,
                verts,
                vpos,
                bptr,
                nbb,
                base,
                sched,
                indptr,
                indices,
                w,
                k,
                comm,
                a,
                size,
                prio,
                batch,
                active,
                pending,
                slack,
                charge,
                newc,
                change,
                res_over_m2,
                units,
                pos,
                buf_c,
                buf_j,
                buf_w,
                logc,
                loga,
                sq,
                inner,
            )
            sched += 1
            sweeps += 1
            cur, nxt = nxt, cur
            ncur = nn
            q_new = inner / m2 - resolution * sq / (m2 * m2)
            act = _after_sweep(moved, q, q_new, q_start, threshold, rel_tol, False, confirm)
            if act == _UNDO:
                _undo(moved, logc, loga, comm, newc, a, size)
                sq = keep_sq
                inner = keep_inner
            elif moved > 0:
                total += moved
                q = q_new
            if act == _STOP:
                break
            due_arcs = 0
            for i in range(ncur):
                due_arcs += indptr[cur[i] + 1] - indptr[cur[i]]
            if act != _GO_ON or due_arcs * sparse_div > N:
                sparse = False  # back to full sweeps
                for i in range(ncur):
                    queued[cur[i]] = 0
            if act == _UNDO:  # as below
                batch_arcs = 1
                max_batches = 0
                active[:] = 1
                all_active = True
            elif act == _SWEEP_ALL:
                active[:] = 1
                all_active = True
            continue
        leading = lead_left > 0
        sverts, bat, batch = sweep_schedule(
            bptr, verts, indptr, np.int64(batch_arcs), np.int64(max_batches), np.int64(sched)
        )
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
        moved = 0
        if batch_arcs <= 1 or leading:
            # One vertex at a time: no batch machinery, each move lands at once.
            moved, dsq, dinner = _sweep_one_by_one(
                sverts,
                indptr,
                indices,
                w,
                k,
                comm,
                a,
                size,
                prio,
                batch,
                active,
                res_over_m2,
                pos[0],
                buf_c[0],
                buf_j[0],
                buf_w[0],
                not leading or lead_left > 0,
            )
            sq += dsq
            inner += dinner
        for j in range(bat.shape[0] - 1 if batch_arcs > 1 and not leading else 0):
            lo = bat[j]
            hi = bat[j + 1]
            # Small batches run on the calling thread: waking the pool costs more.
            _wake(sverts, lo, hi, active, slack, charge, pending)  # no margins: no charges
            chunks, arcs = _active_chunks(sverts, lo, hi, indptr, active, nchunks)
            if nchunks > 1 and arcs >= par_min_arcs:
                _compute_moves(
                    sverts,
                    chunks,
                    indptr,
                    indices,
                    w,
                    k,
                    comm,
                    a,
                    size,
                    prio,
                    batch,
                    active,
                    res_over_m2,
                    pos,
                    buf_c,
                    buf_j,
                    buf_w,
                    newc,
                    slack,
                    charge,
                    units,
                )
            else:
                _compute_moves_seq(
                    sverts,
                    lo,
                    hi,
                    indptr,
                    indices,
                    w,
                    k,
                    comm,
                    a,
                    size,
                    prio,
                    batch,
                    active,
                    res_over_m2,
                    pos,
                    buf_c,
                    buf_j,
                    buf_w,
                    newc,
                    slack,
                    charge,
                    units,
                )
            if nchunks > 1 and arcs >= par_min_arcs:
                _scan_moves(
                    sverts,
                    chunks,
                    newc,
                    comm,
                    batch,
                    indptr,
                    indices,
                    w,
                    active,
                    pending,
                    change,
                    k,
                    charge,
                    res_over_m2,
                    units,
                )
            else:
                _scan_moves_seq(
                    sverts,
                    lo,
                    hi,
                    newc,
                    comm,
                    batch,
                    indptr,
                    indices,
                    w,
                    active,
                    pending,
                    change,
                    k,
                    charge,
                    res_over_m2,
                    units,
                )
            cnt, dsq, dinner = _commit(
                sverts, lo, hi, newc, comm, a, size, k, change, no_logc, no_loga, 0
            )
            sq += dsq
            inner += dinner
            moved += cnt
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
                # The batched sweeps start as a fresh level from the lead's
                # partition: community degrees summed anew (the same bits as
                # a new start), every vertex active.
                a[:] = 0.0
                for v in range(n):
                    a[comm[v]] += k[v]
                sq = _sum_sq(a)
                q = inner / m2 - resolution * sq / (m2 * m2)
                q_start = q
                active[:] = 1
                all_active = True
            continue
        if chase_test and batch_arcs > 1:
            chase_test = False
            alone = 0
            for t in range(N):
                v = verts[t]
                if comm[v] != keep_comm[v] and size[comm[v]] == 1:
                    alone += 1
            if alone * chase > moved:
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
        act = _after_sweep(moved, q, q_new, q_start, threshold, rel_tol, full, confirm)
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
        elif sparse_div > 0 and batch_arcs > 1:
            due_arcs = 0
            for t in range(N):
                v = verts[t]
                if active[v] | pending[v]:
                    due_arcs += indptr[v + 1] - indptr[v]
            if due_arcs * sparse_div <= N:
                if vpos.shape[0] == 0:
                    vpos, nbb, base = _sparse_layout(
                        bptr, verts, indptr, n, batch_arcs, max_batches
                    )
                    head = np.empty(nbb.sum(), np.int32)
                    cur = np.empty(N, np.int32)
                    nxt = np.empty(N, np.int32)
                    tmp = np.empty(N, np.int32)
                    link = np.empty(n, np.int32)
                    queued = np.zeros(n, np.uint8)
                    logc = np.empty(3 * N, np.int32)
                    loga = np.empty(2 * N, np.float64)
                ncur = 0
                for t in range(N):
                    v = verts[t]
                    if active[v] | pending[v]:
                        cur[ncur] = v
                        ncur += 1
                        queued[v] = 1
                sparse = True
    return comm, q, total, sweeps


# Builds without threads (prange runs as range): same code, same float
# operations, same results; small graphs then compile no parallel kernel.
optimise_1, _, _ = serial_builds(optimise, _compute_moves, _scan_moves)
