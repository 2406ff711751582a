"""Parallel Louvain community detection on the CPU.

The method is Blondel, Guillaume, Lambiotte, Lefebvre 2008; the level layout
(degree buckets, commit batches) follows the GPU Louvain of Naim, Manne,
Halappanavar, Tumeo 2017. One level = modularity optimisation + aggregation:

* Optimisation sweeps the vertices degree bucket by degree bucket (the GPU's
  thread groups). A bucket is cut into commit batches: the moves of a batch's
  vertices are computed in parallel against the same state, then committed
  in order before the next batch is computed. Batches hold about as many arcs
  as the level has vertices (more if a bucket would need over MAX_BATCHES),
  so a vertex has about one neighbour moving blindly with it; levels with few
  arcs go one vertex at a time, as the sequential method does. Batches are redrawn every
  sweep so that vertices undoing each other's moves do not meet again. A
  batched level's first sweep still goes one vertex at a time (LEAD_SWEEPS):
  clusters form there, and blind simultaneous moves freeze small mixed ones.
* A vertex joins the neighbouring community of largest gain (its weights
  summed per community in a sparse accumulator, or in a dense one on long
  rows of small levels: DENSE_MIN_DEGREE); ties go to the
  lowest priority (position in the vertex order, which a seed may shuffle). A
  singleton may join a singleton of the same batch only if that one has the
  lower priority, so two singletons never swap. After the first sweep only
  vertices with a neighbour that moved are looked at again. A sweep costs
  the arcs of those vertices plus a few passes over the schedule, and once
  few vertices are due it visits only them (SPARSE_DIV), drawing their
  batches itself: levels that creep for hundreds of sweeps (clusters slowly
  coalescing on weighted community structure, boundaries shifting on a
  grid) pay for their moves, not for their sweeps.
* Margins (batched sweeps): a vertex looked at keeps its margin, how much
  more its choice gains than the best other one (an empty community counts,
  gaining 0). A move of a neighbour u from X to Y, arc weight w, with
  r = resolution * k_u * k_v / (2m), lowers v's margin by at most 2(w - r)
  if v is in X, 2(r - w) if in Y, |w - r| otherwise; each mover charges its
  neighbours that bound, and a neighbour is looked at again only once its
  charges exceed its margin. Moves of non-neighbours (community degrees) are
  left out, as they are when a vertex waits for a neighbour to move. On the
  third level of the random 300k-vertex benchmark graph (19.5k vertices,
  4.2M arcs) it leaves 40% of the arcs unread.
* Sweeps end when one gains at most the sweep tolerance (SWEEP_TOL, or the
  coarse one on large levels), moves nothing, or after MAX_SWEEPS; a sweep
  that lowers modularity is undone. Levels swept one vertex at a time end
  only after a sweep over all vertices (a local optimum); levels swept in
  batches also end once a sweep gains at most SWEEP_REL_TOL of the level's
  gain, without that confirming sweep. The caller's ``threshold`` is
  networkx's: it only decides whether another level follows. Modularity is
  kept up to date move by move (inner weight and squared community degrees),
  not recomputed.
* Aggregation numbers the non-empty communities by a prefix sum and merges
  each community's arcs in a sparse accumulator; on sparse levels the rows
  are first copied, in order, next to their community's other rows
  (GATHER_MAX_DEGREE).

Every float sum is taken in an order fixed by the graph and the vertex order,
never by thread timing, so results do not depend on the number of threads.

The loop over levels is :func:`nx_gpumatch.community.levels.louvain`, shared with the
GPU engine: :class:`LouvainEngine` runs its levels here, and
:class:`SweepRule` lays out each level's sweeps on both engines.

The gain of moving v (weighted degree k_v, self-loop counted twice) from its
community A to B, times m, is (networkx's formula)

    e_vB - e_v(A-v) - resolution * k_v * (a_B - (a_A - k_v)) / (2m)

where a_C is the summed degree of community C and e_vC the weight of v's
edges into C. Modularity is networkx's, self-loops included. Leiden's
Constant Potts Model runs the same kernels with node weights for the degrees
(``node_weights`` of :class:`LouvainEngine`, see :mod:`nx_gpumatch.community.quality`).
"""

import types

import numba
import numpy as np
from numba import get_thread_id, prange

from nx_gpumatch.community import levels
from nx_gpumatch.community.engine import CommunityEngine, HostLevel
from nx_gpumatch.community.quality import singleton_modularity
from nx_gpumatch.community.schedule import (
    BATCH_FRACTION,
    MAX_BATCHES,
    MAX_SWEEPS,
    MOVE_BUCKETS,
    RUN,
    SEQUENTIAL_ARCS,
    SWEEP_REL_TOL,
    SweepRule,
    carry_order,
    degree_buckets,
    vertex_order,
)
from nx_gpumatch.cpu import njit
from nx_gpumatch.cpu.random import mix64

# The measurements behind these values are in docs/benchmarks.md.
# Rows this long sum per community in a dense array (no "seen before?" branch).
DENSE_MIN_DEGREE = 64
DENSE_MAX_VERTICES = 1 << 16  # 512 KiB of float64: the array stays in cache

# Batched levels begin with sweeps one vertex at a time, so clusters can grow.
LEAD_SWEEPS = 1

# Smaller commit batches run on one thread (more on a machine slow to wake
# its threads, at SECONDS_PER_ARC); results are the same either way.
PARALLEL_MIN_ARCS = 20_000
SECONDS_PER_ARC = 2e-9

# Sparse levels (mean degree up to this) gather rows by community before merging.
GATHER_MAX_DEGREE = 32

# Graphs with this many arcs aggregate into buffers kept for the run (fresh
# pages on every level cost page faults).
KEEP_BUFFERS_ARCS = 0

# Vertices (or communities) per unit of parallel work: a unit asks for its
# thread's scratch rows once.
_CHUNKS_PER_THREAD = 8


@njit(cache=True, inline="always")
def _sweep_salt(sweep):
    return mix64(np.uint64(sweep) * np.uint64(0x9E3779B97F4A7C15))


@njit(cache=True, inline="always")
def _bucket_cap(A, max_arcs, max_batches):
    """Most arcs of one commit batch of a bucket with A arcs."""
    return max_arcs if max_batches <= 0 else max(max_arcs, (A + max_batches - 1) // max_batches)


@njit(cache=True, inline="always")
def _bucket_batches(A, S, cap):
    """Batches of a bucket of S vertices and A arcs on a sweep after the first."""
    return min(max(1, (A + cap - 1) // cap), S)


@njit(cache=True, inline="always")
def _run_batch(run, salt, nbb):
    """Batch (of nbb) of a bucket's run of positions on a sweep after the
    first: positions t with (t + salt % RUN) // RUN == run."""
    return np.int64(mix64(np.uint64(run) ^ salt) % np.uint64(nbb))


@njit(cache=True)
def sweep_schedule(bptr, verts, indptr, max_arcs, max_batches, sweep):
    """The order and commit batches of one sweep.

    A bucket (verts[bptr[b]:bptr[b+1]], A arcs in all) is cut into
    min(ceil(A / max_arcs), max_batches) batches (max_batches <= 0: no cap).
    On the first sweep they are runs of the bucket's order (the vertex at
    position t goes to batch floor(arcs before t / max_arcs)). On later sweeps
    the bucket is cut into runs of RUN positions, shifted by a per-sweep
    offset, and each run goes to a batch drawn by hashing (run, sweep); each
    batch keeps the bucket's order. Redrawing the batches keeps two vertices
    from meeting in one batch sweep after sweep, where simultaneous moves could
    undo each other forever; whole runs keep neighbouring rows together in
    memory. Returns (sverts, bounds, batch): the vertices in processing order,
    the batch boundaries in it, and each vertex's batch number (-1 for
    isolated ones). :func:`_sparse_sweep` draws the same batches.
    """
    nb = bptr.shape[0] - 1
    N = verts.shape[0]
    n = indptr.shape[0] - 1
    sverts = np.empty(N, np.int32)
    batch = np.full(n, -1, np.int32)
    bounds = np.empty(N + 1, np.int64)
    nbat = 0
    salt = _sweep_salt(sweep)
    for b in range(nb):
        lo = bptr[b]
        S = bptr[b + 1] - lo
        if S == 0:
            continue
        A = 0
        for t in range(S):
            v = verts[lo + t]
            A += indptr[v + 1] - indptr[v]
        cap = _bucket_cap(A, max_arcs, max_batches)
        if sweep == 0 or cap <= 1:  # cap 1: one vertex at a time, every sweep
            arcs = 0
            last = -1
            for t in range(S):
                v = verts[lo + t]
                sverts[lo + t] = v
                j = arcs // cap
                if j != last:
                    bounds[nbat] = lo + t
                    nbat += 1
                    last = j
                batch[v] = nbat - 1
                arcs += indptr[v + 1] - indptr[v]
            continue
        nbb = _bucket_batches(A, S, cap)
        count = np.zeros(nbb + 1, np.int64)
        off = np.int64(salt % np.uint64(RUN))
        run = np.int64(-1)
        r = np.int64(0)
        for t in range(S):
            v = verts[lo + t]
            if (t + off) // RUN != run:  # one hash a run
                run = (t + off) // RUN
                r = _run_batch(run, salt, nbb)
            batch[v] = nbat + r
            count[r + 1] += 1
        for r in range(nbb):
            count[r + 1] += count[r]
            bounds[nbat + r] = lo + count[r]
        for t in range(S):
            v = verts[lo + t]
            r = batch[v] - nbat
            sverts[lo + count[r]] = v
            count[r] += 1
        nbat += nbb
    bounds[nbat] = N
    return sverts, bounds[: nbat + 1].copy(), batch


@njit(cache=True)
def _balanced_chunks(cost_prefix, nchunks):
    """Split items 0..N-1 (cost_prefix has N+1 entries) into nchunks contiguous
    ranges of about equal total cost; returns the N+1-style boundary array."""
    N = cost_prefix.shape[0] - 1
    bounds = np.empty(nchunks + 1, np.int64)
    bounds[0] = 0
    total = cost_prefix[N] - cost_prefix[0]
    j = 0
    for c in range(1, nchunks):
        target = cost_prefix[0] + (total * c) // nchunks
        while j < N and cost_prefix[j] < target:
            j += 1
        bounds[c] = j
    bounds[nchunks] = N
    return bounds


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
def _best_move(
    v,
    indptr,
    indices,
    w,
    k,
    comm,
    a,
    size,
    prio,
    batch,
    bv,
    res_over_m2,
    pos,
    buf_c,
    buf_j,
    buf_w,
    batched,
):
    """(community v should join, its own when nothing gains; the change of the
    total inner weight, arcs both ways, if v alone moves there; the margin of
    that choice, see _units).

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
def _compute_moves(
    verts,
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
):
    for ch in prange(chunks.shape[0] - 1):
        tid = get_thread_id()
        P = pos[tid]
        C = buf_c[tid]
        J = buf_j[tid]
        W = buf_w[tid]
        for t in range(chunks[ch], chunks[ch + 1]):
            v = verts[t]
            if active[v] == 0:
                newc[v] = comm[v]
                continue
            active[v] = 0
            c, _, margin = _best_move(
                v,
                indptr,
                indices,
                w,
                k,
                comm,
                a,
                size,
                prio,
                batch,
                batch[v],
                res_over_m2,
                P,
                C,
                J,
                W,
                True,
            )
            newc[v] = c
            slack[v] = _units(margin, units)
            for r in range(charge.shape[0]):
                charge[r, v] = 0


@njit(cache=True)
def _compute_moves_serial(
    verts,
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
):
    P = pos[0]
    C = buf_c[0]
    J = buf_j[0]
    W = buf_w[0]
    for t in range(lo, hi):
        v = verts[t]
        if active[v] == 0:
            newc[v] = comm[v]
            continue
        active[v] = 0
        c, _, margin = _best_move(
            v,
            indptr,
            indices,
            w,
            k,
            comm,
            a,
            size,
            prio,
            batch,
            batch[v],
            res_over_m2,
            P,
            C,
            J,
            W,
            True,
        )
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
def _scan_moves(
    verts,
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
    rk,
    units,
):
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


@njit(cache=True)
def _scan_moves_serial(
    verts,
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
    rk,
    units,
):
    row = charge[0]
    for t in range(lo, hi):
        v = verts[t]
        if newc[v] != comm[v]:
            change[v] = _inner_change(
                v, newc, comm, batch, indptr, indices, w, active, pending, k, row, rk * k[v], units
            )


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
def _sweep_one_by_one(
    verts, indptr, indices, w, k, comm, a, size, prio, batch, active, res_over_m2, P, C, J, W, flag
):
    """A sweep that moves one vertex at a time (the sequential method): the same
    moves as batches of one vertex each, without their set-up. A move's inner
    weight change comes from the accumulator, so the row is read once more
    only to flag the neighbours, and only with ``flag`` (a last lead sweep
    need not: every vertex is looked at after it)."""
    moved = 0
    dsq = 0.0
    dinner = 0.0
    for t in range(verts.shape[0]):
        v = verts[t]
        if active[v] == 0:
            continue
        active[v] = 0
        c, d, _ = _best_move(
            v, indptr, indices, w, k, comm, a, size, prio, batch, -1, res_over_m2, P, C, J, W, False
        )
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


@njit(cache=True)
def _wake(verts, lo, hi, active, slack, charge, pending):
    """Wake the vertices of verts[lo:hi] whose charges exceed their margins;
    their wake tests are then done (``pending`` cleared). Only a vertex
    charged since its last test can have crossed its margin."""
    for t in range(lo, hi):
        v = verts[t]
        if pending[v] == 0:
            continue
        pending[v] = 0
        if active[v] == 0:
            s = np.int64(0)
            for r in range(charge.shape[0]):
                s += charge[r, v]
            if s > slack[v]:
                active[v] = 1


@njit(cache=True)
def _active_chunks(verts, lo, hi, indptr, active, nchunks):
    """Chunks of verts[lo:hi] balanced by the arcs of active vertices, and
    that arc count."""
    cnt = hi - lo
    pre = np.empty(cnt + 1, np.int64)
    pre[0] = 0
    arcs = 0
    for t in range(cnt):
        v = verts[lo + t]
        d = indptr[v + 1] - indptr[v] if active[v] else 0
        arcs += d
        pre[t + 1] = pre[t] + d + 1
    b = _balanced_chunks(pre, min(nchunks, max(cnt, 1)))
    for i in range(b.shape[0]):
        b[i] += lo
    return b, arcs


@njit(cache=True)
def _sparse_layout(bptr, verts, indptr, n, max_arcs, max_batches):
    """What :func:`_sparse_sweep` needs to draw a vertex's batch without the
    whole schedule: (vpos, nbb, base), the position of each vertex in
    ``verts`` (-1: isolated) and the number of batches of each bucket and the
    number of its first, as :func:`sweep_schedule` lays them out after the
    first sweep."""
    vpos = np.full(n, -1, np.int32)
    nb = bptr.shape[0] - 1
    nbb = np.zeros(nb, np.int64)
    base = np.zeros(nb, np.int64)
    nbat = 0
    for b in range(nb):
        S = bptr[b + 1] - bptr[b]
        A = 0
        for t in range(bptr[b], bptr[b + 1]):
            v = verts[t]
            vpos[v] = t
            A += indptr[v + 1] - indptr[v]
        base[b] = nbat
        if S > 0:
            nbb[b] = _bucket_batches(A, S, _bucket_cap(A, max_arcs, max_batches))
            nbat += nbb[b]
    return vpos, nbb, base


@njit(cache=True, inline="always")
def _batch_of(v, vpos, bptr, nbb, base, off, salt):
    t = np.int64(vpos[v])
    b = 0
    while t >= bptr[b + 1]:
        b += 1
    return np.int32(base[b] + _run_batch((t - bptr[b] + off) // RUN, salt, nbb[b]))


@njit(cache=True)
def _place(x, j0, vpos, bptr, nbb, base, off, salt, indptr, indices, batch, head, link):
    """Draw vertex x's batch; if it comes after batch j0, put x on that batch's
    list and draw its neighbours' batches too (x's look-up reads them) and
    return True, else False (x waits for the next sweep)."""
    bx = _batch_of(x, vpos, bptr, nbb, base, off, salt)
    batch[x] = bx
    if bx <= j0:
        return False
    link[x] = head[bx]
    head[bx] = x
    for p in range(indptr[x], indptr[x + 1]):
        y = indices[p]
        batch[y] = _batch_of(y, vpos, bptr, nbb, base, off, salt)
    return True


@njit(cache=True)
def _sparse_sweep(
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
    sweep,
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
):
    """A batched sweep that touches only the vertices due a look (active, or
    charged since their last wake test): cur[:ncur], all ``queued``. The
    batches, the order in them and so every move are those of the full sweep
    (:func:`sweep_schedule` number ``sweep``), which would spend most of its
    time passing over vertices with nothing to do: levels that creep for
    hundreds of sweeps, a few moves each, pay for their moves only. Runs on
    the calling thread.

    Vertices charged during the sweep join it if their batch is still to
    come, else nxt (queued). Returns (moves, the summed squared community
    degrees ``sq`` and the inner weight ``inner`` updated batch by batch as
    the full sweep does, entries of nxt); the moves are logged for
    :func:`_undo`.
    """
    salt = _sweep_salt(sweep)
    off = np.int64(salt % np.uint64(RUN))
    head[:] = -1
    for i in range(ncur):
        _place(cur[i], -1, vpos, bptr, nbb, base, off, salt, indptr, indices, batch, head, link)
    nn = 0
    moved = 0
    for j0 in range(head.shape[0]):
        cnt = 0
        x = head[j0]
        while x >= 0:
            tmp[cnt] = vpos[x]
            cnt += 1
            x = link[x]
        if cnt == 0:
            continue
        tmp[:cnt].sort()  # the batch's order: the bucket's
        for i in range(cnt):
            x = verts[tmp[i]]
            tmp[i] = x
            queued[x] = 0
        _wake(tmp, 0, cnt, active, slack, charge, pending)
        _compute_moves_serial(
            tmp,
            0,
            cnt,
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
        _scan_moves_serial(
            tmp,
            0,
            cnt,
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
        for i in range(cnt):
            v = tmp[i]
            if newc[v] == comm[v]:
                continue
            for p in range(indptr[v], indptr[v + 1]):
                x = indices[p]
                if pending[x] and queued[x] == 0:
                    queued[x] = 1
                    if not _place(
                        x, j0, vpos, bptr, nbb, base, off, salt, indptr, indices, batch, head, link
                    ):
                        nxt[nn] = x
                        nn += 1
        c, d1, d2 = _commit(tmp, 0, cnt, newc, comm, a, size, k, change, logc, loga, moved)
        moved += c
        sq += d1
        inner += d2
    return moved, sq, inner, nn


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
                _compute_moves_serial(
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
                _scan_moves_serial(
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


# ------------------------------------------------------------- the driver
@njit(cache=True, parallel=True)
def _touch(x):
    for i in prange(x.shape[0]):
        x[i] += 1


def parallel_min_arcs_now(floor=PARALLEL_MIN_ARCS):
    """Smallest batch worth the threads now: ``floor``, or more when starting
    a parallel loop is slow (median of a few empty ones)."""
    import time

    import numba

    if numba.get_num_threads() < 2:
        return floor
    x = np.zeros(64, np.int64)
    _touch(x)
    times = []
    for _ in range(7):
        t = time.perf_counter()
        _touch(x)
        times.append(time.perf_counter() - t)
    return max(floor, int(sorted(times)[3] / SECONDS_PER_ARC))


def _thread_rows(pos):
    """Scratch rows for every thread of the next parallel loops (numba's
    get_thread_id() stays below get_num_threads()), and the work units."""
    import numba

    threads = numba.get_num_threads()
    if pos.shape[0] < threads:
        pos = np.full((threads, pos.shape[1]), -1, np.int32)
    return pos, (_CHUNKS_PER_THREAD * threads if threads > 1 else 1)


class LouvainEngine(CommunityEngine):
    """The CPU engine of the level loops (:mod:`nx_gpumatch.community.levels`): the
    input graph, the current level (host CSR, degrees, vertex order) and the
    kernels above.

    ``rule`` is the run's :class:`SweepRule`; ``order``, ``lead_sweeps`` and
    ``parallel_min_arcs`` as in :func:`louvain_levels`; ``m2`` (None: the
    graph's own) continues a run begun on another graph (a level handed over
    by the GPU engine). ``node_weights`` (None: the weighted degrees) weigh
    the vertices in the gains instead, summed on aggregation: CPM's vertex
    sizes (see :mod:`nx_gpumatch.community.quality`).
    """

    xp = np

    def __init__(
        self,
        indptr,
        indices,
        w,
        loop,
        rule,
        *,
        resolution=1.0,
        order=None,
        m2=None,
        lead_sweeps=LEAD_SWEEPS,
        parallel_min_arcs=None,
        node_weights=None,
    ):
        n = indptr.shape[0] - 1
        k = weighted_degrees(indptr, w, loop)
        self.m2 = float(k.sum()) if m2 is None else m2
        # CPM (see nx_gpumatch.community.quality): the kernels weigh vertices by these
        # instead of their degrees, and aggregation sums them
        self.node_weighted = node_weights is not None
        if self.node_weighted:
            k = np.ascontiguousarray(node_weights, np.float64)
        # merged arcs sum the input's: positive if all of those are
        self._positive = bool(w.shape[0] == 0 or w.min() > 0.0)
        self.rule = rule
        self.resolution = float(resolution)
        self._input = (indptr, indices, w, loop, k, *vertex_order(order, n))
        self.start()
        # Graphs too small for threads run kernels compiled without them: a first
        # call then compiles no parallel kernel (most of a cold start).
        par_floor = PARALLEL_MIN_ARCS if parallel_min_arcs is None else parallel_min_arcs
        self.threaded = numba.get_num_threads() > 1 and indices.shape[0] >= min(
            rule.sequential_arcs, par_floor
        )
        self._optimise = optimise if self.threaded else optimise_1
        # sequential_arcs=0: no sweep one vertex at a time (the GPU engine's layout)
        self._lead = int(lead_sweeps) if rule.sequential_arcs > 0 else 0
        self._chase = int(rule.chase) if rule.sequential_arcs > 0 and self._lead == 0 else 0
        self._aggregate = aggregate if self.threaded else aggregate_1
        self._parallel_min_arcs = parallel_min_arcs
        self._measured = None  # the thread floor, measured at most once a run
        self._pos = np.full((0, n), -1, np.int32)
        self._nchunks = 1
        self._arc_bufs = None  # aggregation's buffers, made by the first aggregation

    def start(self):
        self.indptr, self.indices, self.w, self.loop, self.k, self.order, self.prio = self._input

    @property
    def n(self):
        return self.indptr.shape[0] - 1

    @property
    def arcs(self):
        return int(self.indices.shape[0])

    def host(self, x):
        return x

    def host_level(self):
        return HostLevel(self.indptr, self.indices, self.w, self.loop, self.k, self.order)

    def singleton_modularity(self):
        return singleton_modularity(self.loop, self.k, self.m2, self.resolution)

    def move(self, init):
        """Local moving from the partition ``init`` (None: singletons):
        :func:`optimise_seq`, or :func:`optimise` (after the lead sweeps) on
        levels swept in batches. Returns (comm, q, moves, sweeps)."""
        nv = self.n
        deg = np.diff(self.indptr)
        maxdeg = int(deg.max()) if nv else 0
        # the caller may have changed the thread count
        self._pos, self._nchunks = _thread_rows(self._pos)
        _, buf_c, buf_j, buf_w = move_scratch(
            self._pos.shape[0], 0, maxdeg, dense_size(nv, maxdeg, self._positive)
        )
        thr, max_arcs, nbatch, rel_tol, confirm = self.rule.level(deg, self.arcs)
        par_min = self._parallel_min_arcs
        if par_min is None:
            if max_arcs > 1 and self._measured is None:
                self._measured = parallel_min_arcs_now()  # once a run: it costs a few thread wakes
            par_min = self._measured if max_arcs > 1 else PARALLEL_MIN_ARCS
        if init is None:
            init = np.arange(nv, dtype=np.int32)
        return (optimise_seq if max_arcs <= 1 else self._optimise)(
            self.indptr,
            self.indices,
            self.w,
            self.loop,
            self.k,
            self.order,
            self.prio,
            self.m2,
            self.resolution,
            thr,
            *degree_buckets(self.indptr, MOVE_BUCKETS, self.order),
            max_arcs,
            nbatch,
            self._pos,
            buf_c,
            buf_j,
            buf_w,
            self._nchunks,
            int(par_min),
            int(self.rule.max_sweeps),
            init,
            rel_tol,
            confirm,
            self._lead,
            self.rule.margins,
            int(self.rule.sparse_div),
            self._chase,
        )

    def renumber(self, comm):
        return renumber(comm)

    def aggregate(self, comm, numbering):
        pos, nchunks = _thread_rows(self._pos)  # the caller may have changed the thread count
        self._pos = pos
        if self._arc_bufs is None:
            # scratch and the levels' buffer, each for the largest level the
            # run aggregates (its input); a level is written over the one
            # before (aggregate reads that one first)
            m = self.arcs
            if m >= KEEP_BUFFERS_ARCS:
                self._arc_bufs = [(np.empty(m, np.int32), np.empty(m)) for _ in range(2)]
            else:
                self._arc_bufs = [own_buffers()[:2]] * 2
        tmp, out = self._arc_bufs
        k = self.k
        self.indptr, self.indices, self.w, self.loop, self.k = self._aggregate(
            comm,
            *numbering,
            self.indptr,
            self.indices,
            self.w,
            self.loop,
            pos,
            nchunks,
            *tmp,
            *out,
        )
        if self.node_weighted:
            self.k = np.bincount(numbering[0][comm], weights=k, minlength=numbering[1])
        self.order, self.prio = carry_order(self.order, numbering[0], numbering[1])


def louvain_levels(
    indptr,
    indices,
    w,
    loop,
    *,
    resolution=1.0,
    threshold=1e-7,
    coarse_threshold=1e-7,
    fine_below=100_000,
    order=None,
    batch_fraction=BATCH_FRACTION,
    max_batches=MAX_BATCHES,
    sequential_arcs=SEQUENTIAL_ARCS,
    parallel_min_arcs=None,
    max_sweeps=MAX_SWEEPS,
    lead_sweeps=LEAD_SWEEPS,
    m2=None,
    q0=None,
    first_level=0,
    rel_tol=SWEEP_REL_TOL,
    confirm=False,
    margins=True,
):
    """Generator over the levels of the Louvain method (networkx's semantics).

    The graph: symmetric CSR ``indptr``/``indices`` with arc weights ``w``
    (non-negative) and self-loop weights ``loop``. Yields ``(labels, info)``
    per level: ``labels`` (int32, one per input vertex, values 0..K-1) is the
    partition after the level and ``info`` a dict (``vertices``, ``edges`` of
    the level's graph, ``modularity`` after it, ``moves``, ``sweeps``).

    A level's sweeps end once one gains at most :func:`sweep_tolerance`
    (``coarse_threshold`` on levels of at least ``fine_below`` vertices). The first level is
    always yielded, later ones only if they moved something; the method stops
    once a level gains at most ``threshold``. ``order`` (a permutation; default
    by id) orders each bucket and breaks ties. The next keywords tune the
    commit batches and the use of threads (see the module constants;
    ``parallel_min_arcs=None`` measures the machine once per run).

    ``margins=False`` looks at every neighbour of a mover again in batched
    sweeps (the GPU engine's rule) instead of waking it by its margin.
    ``rel_tol`` and ``confirm`` end the sweeps of levels swept in batches as in
    :func:`optimise` (``rel_tol=0, confirm=True``: only at a local optimum, the
    GPU engine's rule); levels swept one vertex at a time always end there.
    Levels swept in batches begin with ``lead_sweeps`` sweeps one vertex at a
    time (none when ``sequential_arcs`` is 0).

    ``m2``, ``q0`` and ``first_level`` continue a run begun elsewhere: the
    original graph's total degree, the modularity so far and the number of
    levels done.
    """
    rule = SweepRule(
        threshold=threshold,
        coarse_threshold=coarse_threshold,
        fine_below=fine_below,
        batch_fraction=batch_fraction,
        max_batches=max_batches,
        sequential_arcs=sequential_arcs,
        max_sweeps=max_sweeps,
        rel_tol=rel_tol,
        confirm=confirm,
        margins=margins,
    )
    engine = LouvainEngine(
        indptr,
        indices,
        w,
        loop,
        rule,
        resolution=resolution,
        order=order,
        m2=m2,
        lead_sweeps=lead_sweeps,
        parallel_min_arcs=parallel_min_arcs,
    )
    q = None if q0 is None else float(q0)
    yield from levels.louvain(engine, threshold, q=q, level=first_level)


# ------------------------------------------------------------ serial twins
def _serial_twin(f, name, **callees):
    """f's code compiled without threads (prange runs as range), calling the
    given twins in place of its parallel callees. Same code, same order of
    float operations, same results; small graphs then compile no parallel
    kernel."""
    py = f.py_func
    fn = types.FunctionType(py.__code__, dict(py.__globals__, **callees), name, py.__defaults__)
    fn.__qualname__ = name  # names the cache file
    return njit(cache=True)(fn)


_compute_moves_1 = _serial_twin(_compute_moves, "_compute_moves_1")
_scan_moves_1 = _serial_twin(_scan_moves, "_scan_moves_1")
optimise_1 = _serial_twin(
    optimise, "optimise_1", _compute_moves=_compute_moves_1, _scan_moves=_scan_moves_1
)
aggregate_1 = _serial_twin(
    aggregate,
    "aggregate_1",
    _merge=_serial_twin(_merge, "_merge_1"),
    _gather=_serial_twin(_gather, "_gather_1"),
    _merge_gathered=_serial_twin(_merge_gathered, "_merge_gathered_1"),
    _compact=_serial_twin(_compact, "_compact_1"),
)
