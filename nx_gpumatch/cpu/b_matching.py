"""½-approximate weighted b-matching on the CPU: b-Suitor, locally dominant, greedy.

A b-matching takes at most ``cap[v]`` edges at each vertex v. All three kernels
compare edges by ``arc_rank`` (0 = best, NO_RANK = never usable), a total order
without ties, so each returns exactly the greedy b-matching under the package's
edge order, whatever the thread count (Khan et al. 2016, Theorem 1).

``cap`` is b clipped to each vertex's number of usable edges (``capacities``).
Results are the ids of the matched edges, ascending.

Rows are handled as packed keys ``rank << 32 | neighbour``: comparing keys
compares ranks, since a row never holds the same edge twice.
"""

import numpy as np
from numba import prange
from numba.core.cpu import ParallelOptions

from nx_gpumatch._constants import NO_RANK
from nx_gpumatch.cpu import kernel, njit
from nx_gpumatch.cpu.atomics import atomic_add, atomic_load, atomic_store, cas, prefetch

LOW = np.int64(0xFFFFFFFF)
# Helpers called only from jitted code are built with no_cpython_wrapper: no
# Python entry point to compile for them.
# Only explicit prange loops run in parallel: an array expression turned into a
# parallel loop would wake all threads for trivial work, which dominates on
# small graphs and on a busy machine.
# (An options object, not a dict: Numba empties a dict it is given.)
PRANGE_ONLY = ParallelOptions(
    {
        "prange": True,
        "numpy": False,
        "reduction": False,
        "setitem": False,
        "stencil": False,
        "fusion": False,
        "comprehension": False,
        "inplace_binop": False,
    }
)
# Partial sorting (Khan et al. 2016, §III): a row is ordered BATCH·cap(u) keys at a time
# (at least MIN_BATCH), since a vertex rarely looks far down its list. Tails of
# at most SHORT keys are ordered by selection instead of partitioning.
BATCH = 2
MIN_BATCH = 8
SHORT = 48
# Records of the next AHEAD candidates are prefetched while u proposes, and the
# vertex DEPTH places further down the queue is prepared (row sorted, records
# prefetched) meanwhile: a proposal is a chain of dependent misses, so overlapping
# the chains of several vertices is what makes it fast. Queues are cut in blocks
# of BLOCK vertices, each run by one thread.
AHEAD = 4
DEPTH = 2
BLOCK = 512
# Queues and loops over fewer vertices run on one thread: waking the others costs
# more (the distributed engine's rounds use the same threshold). Not the build
# threshold nx_gpumatch.cpu.PARALLEL_MIN.
QUEUE_PARALLEL_MIN = 20000


# ----------------------------------------------------------------- shared
def usable_degree(n, indptr, arc_rank):
    """Number of usable (positive-weight) edges at each vertex (numpy: nothing to
    compile on first use)."""
    usable = np.zeros(np.asarray(arc_rank).shape[0] + 1, np.int64)
    np.cumsum(np.asarray(arc_rank) != NO_RANK, out=usable[1:])
    return np.diff(usable[np.asarray(indptr)[: n + 1]])


def capacities(b, deg):
    """min(b(v), usable degree of v) as int32: no vertex can use more."""
    return np.minimum(b, deg).astype(np.int32)


@njit(cache=True, inline="always")
def _fill_row(u, indptr, indices, arc_rank, key):
    """Copy u's usable arcs as packed keys to the front of its CSR slot; returns the end."""
    w = indptr[u]
    for p in range(indptr[u], indptr[u + 1]):
        r = arc_rank[p]
        if r != NO_RANK:
            key[w] = (np.int64(r) << 32) | np.int64(indices[p])
            w += 1
    return w


@njit(cache=True, inline="always")
def _sort_range(key, a, e):
    if e - a <= 16:
        for i in range(a + 1, e):
            x = key[i]
            j = i - 1
            while j >= a and key[j] > x:
                key[j + 1] = key[j]
                j -= 1
            key[j + 1] = x
    else:
        key[a:e].sort()


@njit(cache=True, no_cpython_wrapper=True)
def _select(key, a, e, t):
    """Reorder key[a:e] so that key[a:t] holds its t - a smallest keys (distinct keys)."""
    lo = a
    hi = e - 1
    while hi > lo:
        mid = (lo + hi) >> 1
        x, y, z = key[lo], key[mid], key[hi]
        if x > y:
            x, y = y, x
        if y > z:
            y = z
            if x > y:
                y = x
        pivot = y  # median of three
        i = lo
        j = hi
        while i <= j:
            while key[i] < pivot:
                i += 1
            while key[j] > pivot:
                j -= 1
            if i <= j:
                tmp = key[i]
                key[i] = key[j]
                key[j] = tmp
                i += 1
                j -= 1
        # now key[lo..j] <= pivot <= key[i..hi]
        if t - 1 <= j:
            hi = j
        elif t - 1 >= i:
            lo = i
        else:
            return


@njit(cache=True, no_cpython_wrapper=True)
def _extend_sorted(key, a, e, k):
    """Bring the next k keys of the row tail key[a:e] to its front, sorted;
    returns the new end of the sorted part."""
    if e - a <= SHORT:
        # k passes of a minimum search: cheaper than partitioning a short tail.
        t = min(a + k, e)
        for i in range(a, t):
            best = key[i]
            bj = i
            for j in range(i + 1, e):
                x = key[j]
                if x < best:
                    best = x
                    bj = j
            key[bj] = key[i]
            key[i] = best
        return t
    if e - a <= k + (k >> 1):
        _sort_range(key, a, e)
        return e
    _select(key, a, e, a + k)
    _sort_range(key, a, a + k)
    return a + k


# ----------------------------------------------------------------- greedy
@njit(cache=True)
def greedy(n, edge_src, edge_dst, order, num_usable, cap):
    """Scan edges best-first; take an edge while both ends have room (the reference)."""
    left = cap.astype(np.int64)
    take = np.zeros(edge_src.shape[0], np.bool_)
    for i in range(num_usable):
        e = order[i]
        u = edge_src[e]
        v = edge_dst[e]
        if left[u] > 0 and left[v] > 0:
            take[e] = True
            left[u] -= 1
            left[v] -= 1
    return np.flatnonzero(take)


# ---------------------------------------------------------------- b-Suitor
# Each vertex v owns a record in ``rec`` at base(v): a header word
# thresh << 32 | size << 1 | lock, then cap[v], then the max-heap S(v) of its
# suitors' keys (worst on top). thresh is the rank an offer must beat: NO_RANK
# while S(v) has room, the worst suitor's rank once full, 0 for cap 0; it only
# decreases, so a stale read can only cause a failed attempt. Keeping lock, bound
# and heap in one record makes a proposal touch one or two cache lines.
# need[u]: proposals u still has to make, plus QUEUED while u waits in the next
# round's queue.
QUEUED = np.int64(1) << 40
COUNT = QUEUED - 1
UNLOCK = ~np.int64(1)


@njit(cache=True, inline="always")
def _base(v, stride, hptr):
    return v * stride if stride > 0 else hptr[v]


@njit(cache=True, inline="always")
def _heap_push(heap, base, size, x):
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        px = heap[base + parent]
        if px >= x:
            break
        heap[base + i] = px
        i = parent
    heap[base + i] = x


@njit(cache=True, inline="always")
def _heap_replace_top(heap, base, size, x):
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        cx = heap[base + c]
        if c + 1 < size and heap[base + c + 1] > cx:
            c += 1
            cx = heap[base + c]
        if cx <= x:
            break
        heap[base + i] = cx
        i = c
    heap[base + i] = x


@njit(cache=True, inline="always")
def _make_suitor(u, r, rec, base, seen):
    """Make u a suitor of the vertex whose record is at base, offering rank r.
    Returns -2 if the offer does not beat its bound, -1 if taken without
    displacing anyone, else the displaced suitor."""
    expected = seen & UNLOCK
    while True:
        if (expected >> 32) <= r:
            return np.int64(-2)
        got = cas(rec, base, expected, expected | 1)
        if got == expected:
            break
        expected = got & UNLOCK  # use what the CAS saw, never a re-read
    size = (expected >> 1) & 0x7FFFFFFF
    cap = rec[base + 1]
    h = base + 2
    x = (np.int64(r) << 32) | u
    if size < cap:
        _heap_push(rec, h, size, x)
        size += 1
        out = np.int64(-1)
    else:
        out = rec[h] & LOW
        _heap_replace_top(rec, h, size, x)
    t = (rec[h] >> 32) if size == cap else np.int64(NO_RANK)
    atomic_store(rec, base, (t << 32) | (size << 1))  # publishes the heap, unlocks
    return out


@njit(cache=True, inline="always")
def _displace(y, need, nextq, qtail):
    """y lost a proposal: it owes one more, and waits for the next round."""
    old = need[y]
    while True:
        got = cas(need, y, old, (old + 1) | QUEUED)
        if got == old:
            break
        old = got
    if (old & QUEUED) == 0:
        nextq[atomic_add(qtail, 0, 1)] = y


@njit(cache=True, inline="always")
def _take_debts(u, need):
    """Claim the proposals u owes (its QUEUED bit stays)."""
    old = atomic_load(need, u)
    while (old & COUNT) > 0:
        got = cas(need, u, old, old & QUEUED)
        if got == old:
            return np.int64(old & COUNT)
        old = got
    return np.int64(0)


@njit(cache=True, inline="always")
def _batch(first, start, s):
    """Size of the next sorted batch of a row starting at ``start``, sorted up to
    s: ``first`` (BATCH·cap, at least MIN_BATCH) at first, then as many as are
    sorted already, so a vertex that must look far down a long row costs
    O(deg log deg), not O(deg) per batch."""
    return max(first, s - start)


@njit(cache=True, no_cpython_wrapper=True)
def _prepare(
    u,
    indptr,
    indices,
    arc_rank,
    key,
    rend,
    sorted_end,
    cur,
    cap,
    rec,
    stride,
    hptr,
    batch,
    min_batch,
):
    """Lay out u's row on its first visit, make sure its next candidates are
    sorted, and start loading their records."""
    if sorted_end[u] < 0:
        rend[u] = _fill_row(u, indptr, indices, arc_rank, key)
        sorted_end[u] = indptr[u]
        cur[u] = indptr[u]
    p = cur[u]
    s = sorted_end[u]
    if p == s and s < rend[u]:
        s = _extend_sorted(
            key,
            s,
            rend[u],
            _batch(max(np.int64(batch) * cap[u], np.int64(min_batch)), indptr[u], s),
        )
        sorted_end[u] = s
    for j in range(p, min(p + AHEAD, s)):
        prefetch(rec, _base(key[j] & LOW, stride, hptr))


@njit(cache=True, no_cpython_wrapper=True)
def _propose(
    u,
    indptr,
    key,
    rend,
    sorted_end,
    cur,
    cap,
    need,
    rec,
    stride,
    hptr,
    nextq,
    qtail,
    batch,
    min_batch,
):
    """Let u (prepared) propose until it has cap[u] outstanding proposals or no
    eligible neighbour is left. Only one thread works on u at a time."""
    p = cur[u]
    s = sorted_end[u]
    e = rend[u]
    start = indptr[u]
    first = max(np.int64(batch) * cap[u], np.int64(min_batch))
    todo = _take_debts(u, need)
    while todo > 0:
        v = np.int64(-1)
        r = np.int64(0)
        hb = np.int64(0)
        seen = np.int64(0)
        while True:
            if p == s:
                if s == e:
                    break
                s = _extend_sorted(key, s, e, _batch(first, start, s))
                # Start loading the next few candidates' records now: the CAS
                # below would otherwise expose each miss in turn.
                for j in range(p, min(p + AHEAD, s)):
                    prefetch(rec, _base(key[j] & LOW, stride, hptr))
            elif p + AHEAD < s:
                prefetch(rec, _base(key[p + AHEAD] & LOW, stride, hptr))
            kk = key[p]
            p += 1
            rr = kk >> 32
            vv = kk & LOW
            b = _base(vv, stride, hptr)
            hd = atomic_load(rec, b)
            # u never returns to a neighbour it passed: that one's bound only
            # gets better, and an annulled offer stays beaten.
            if rr < (hd >> 32):
                v = vv
                r = rr
                hb = b
                seen = hd
                break
        if v < 0:
            break
        y = _make_suitor(u, r, rec, hb, seen)
        if y == -2:
            continue
        todo -= 1
        if y >= 0:
            _displace(y, need, nextq, qtail)  # delayed: y tries again next round
        if todo == 0:
            todo = _take_debts(u, need)
    cur[u] = p
    sorted_end[u] = s


@njit(cache=True, inline="always")
def _run_block(
    q,
    lo,
    hi,
    indptr,
    indices,
    arc_rank,
    key,
    rend,
    sorted_end,
    cur,
    cap,
    need,
    rec,
    stride,
    hptr,
    nextq,
    qtail,
    batch,
    min_batch,
):
    for j in range(lo, min(lo + DEPTH, hi)):
        _prepare(
            np.int64(q[j]),
            indptr,
            indices,
            arc_rank,
            key,
            rend,
            sorted_end,
            cur,
            cap,
            rec,
            stride,
            hptr,
            batch,
            min_batch,
        )
    for j in range(lo, hi):
        if j + DEPTH < hi:
            _prepare(
                np.int64(q[j + DEPTH]),
                indptr,
                indices,
                arc_rank,
                key,
                rend,
                sorted_end,
                cur,
                cap,
                rec,
                stride,
                hptr,
                batch,
                min_batch,
            )
        _propose(
            np.int64(q[j]),
            indptr,
            key,
            rend,
            sorted_end,
            cur,
            cap,
            need,
            rec,
            stride,
            hptr,
            nextq,
            qtail,
            batch,
            min_batch,
        )


@njit(cache=True, parallel=PRANGE_ONLY)
def _round_parallel(
    q,
    nq,
    indptr,
    indices,
    arc_rank,
    key,
    rend,
    sorted_end,
    cur,
    cap,
    need,
    rec,
    stride,
    hptr,
    nextq,
    qtail,
    batch,
    min_batch,
):
    for i in prange(nq):
        need[q[np.int64(i)]] &= COUNT
    nb = (nq + BLOCK - 1) // BLOCK
    for ib in prange(nb):
        lo = np.int64(ib) * BLOCK
        _run_block(
            q,
            lo,
            min(lo + BLOCK, nq),
            indptr,
            indices,
            arc_rank,
            key,
            rend,
            sorted_end,
            cur,
            cap,
            need,
            rec,
            stride,
            hptr,
            nextq,
            qtail,
            batch,
            min_batch,
        )


@njit(cache=True)
def _round_serial(
    q,
    nq,
    indptr,
    indices,
    arc_rank,
    key,
    rend,
    sorted_end,
    cur,
    cap,
    need,
    rec,
    stride,
    hptr,
    nextq,
    qtail,
    batch,
    min_batch,
):
    for i in range(nq):
        need[q[i]] &= COUNT
    _run_block(
        q,
        np.int64(0),
        np.int64(nq),
        indptr,
        indices,
        arc_rank,
        key,
        rend,
        sorted_end,
        cur,
        cap,
        need,
        rec,
        stride,
        hptr,
        nextq,
        qtail,
        batch,
        min_batch,
    )


def _suitor_init(cap, rec, stride, hptr):
    """Every record unlocked and empty: bound NO_RANK (0 for cap 0), then cap."""
    n = cap.shape[0]
    base = np.arange(n, dtype=np.int64) * stride if stride > 0 else hptr[:n]
    rec[base] = np.where(cap > 0, np.int64(NO_RANK) << 32, np.int64(0))
    rec[base + 1] = cap


@njit(cache=True, no_cpython_wrapper=True)
def _count_upper(v, rec, stride, hptr, cnt):
    b = _base(v, stride, hptr)
    size = (rec[b] >> 1) & 0x7FFFFFFF
    c = 0
    for j in range(b + 2, b + 2 + size):
        if (rec[j] & LOW) > v:
            c += 1
    cnt[v + 1] = c
    return size


@njit(cache=True, no_cpython_wrapper=True)
def _write_upper(v, rec, stride, hptr, indptr, indices, arc_edge, off, out):
    a = off[v]
    w = off[v + 1]
    if a == w:
        return
    b = _base(v, stride, hptr)
    t = a
    for j in range(b + 2, b + 2 + ((rec[b] >> 1) & 0x7FFFFFFF)):
        u = rec[j] & LOW
        if u > v:
            out[t] = u
            t += 1
    _sort_range(out, a, w)
    # Partners ascending, row ascending: one merge walk turns them into edge ids.
    t = a
    for p in range(indptr[v], indptr[v + 1]):
        if t == w:
            break
        if indices[p] == out[t]:
            out[t] = arc_edge[p]
            t += 1


@kernel(parallel=PRANGE_ONLY)
def _suitor_count(n, rec, stride, hptr, cnt):
    """cnt[v + 1] = suitors of v with a larger id; returns the number of suitors."""
    entries = 0
    if n >= QUEUE_PARALLEL_MIN:
        for i in prange(n):
            entries += _count_upper(np.int64(i), rec, stride, hptr, cnt)
    else:
        for i in range(n):
            entries += _count_upper(np.int64(i), rec, stride, hptr, cnt)
    return entries


@kernel(parallel=PRANGE_ONLY)
def _suitor_write(n, rec, stride, hptr, indptr, indices, arc_edge, off, out):
    if n >= QUEUE_PARALLEL_MIN:
        for i in prange(n):
            _write_upper(np.int64(i), rec, stride, hptr, indptr, indices, arc_edge, off, out)
    else:
        for i in range(n):
            _write_upper(np.int64(i), rec, stride, hptr, indptr, indices, arc_edge, off, out)


def _suitor_edges(n, rec, stride, hptr, indptr, indices, arc_edge):
    """Matched edge ids, ascending, and the number of suitor entries. At the end
    every suitor relation is mutual (Khan et al. 2016, §III), so each edge is read from its
    smaller end. A vertex's edges to higher ids have contiguous ids ordered by
    that id, so sorting each vertex's few entries sorts the whole list."""
    cnt = np.zeros(n + 1, np.int64)
    entries = _suitor_count(n, rec, stride, hptr, cnt)
    off = np.cumsum(cnt)
    out = np.empty(off[n], np.int64)
    _suitor_write(n, rec, stride, hptr, indptr, indices, arc_edge, off, out)
    return out, entries


def b_suitor(n, indptr, indices, arc_rank, arc_edge, cap, batch=BATCH, min_batch=MIN_BATCH):
    """Parallel b-Suitor, delayed and partially sorted (Khan et al. 2016, §III): vertices propose
    best-first; a displaced suitor waits for the next round. Equals greedy."""
    cap = np.ascontiguousarray(cap, np.int32)
    maxcap = int(cap.max()) if n else 0
    total = 2 * n + int(cap.sum(dtype=np.int64))
    if (maxcap + 2) * n <= 2 * total:
        stride = maxcap + 2  # fixed-size records: no offset table to read
        hptr = np.zeros(1, np.int64)
        size = stride * n
    else:
        stride = 0
        hptr = np.zeros(n + 1, np.int64)
        np.cumsum(cap.astype(np.int64) + 2, out=hptr[1:])
        size = total
    rec = np.empty(size, np.int64)
    _suitor_init(cap, rec, stride, hptr)
    key = np.empty(indices.shape[0], np.int64)
    rend = np.empty(n, np.int64)
    sorted_end = np.full(n, -1, np.int64)
    cur = np.empty(n, np.int64)
    need = cap.astype(np.int64)
    q = np.zeros(n, np.int32)
    active = np.flatnonzero(cap > 0)
    nq = active.shape[0]
    q[:nq] = active
    nextq = np.empty(n, np.int32)
    qtail = np.zeros(1, np.int64)
    while nq > 0:
        qtail[0] = 0
        # Rounds stay here rather than in one compiled loop: the kernels come out
        # measurably faster that way.
        run = _round_parallel if nq >= QUEUE_PARALLEL_MIN else _round_serial
        run(
            q,
            nq,
            indptr,
            indices,
            arc_rank,
            key,
            rend,
            sorted_end,
            cur,
            cap,
            need,
            rec,
            stride,
            hptr,
            nextq,
            qtail,
            batch,
            min_batch,
        )
        q, nextq = nextq, q
        nq = int(qtail[0])
        q[
            :nq
        ].sort()  # displaced vertices arrive in random order; sorted, their state is read in passes
    edges, entries = _suitor_edges(n, rec, stride, hptr, indptr, indices, arc_edge)
    if entries != 2 * edges.shape[0]:
        raise RuntimeError("b-Suitor ended with a suitor relation that is not mutual")
    return edges


# ------------------------------------------------------- locally dominant
@njit(cache=True, no_cpython_wrapper=True)
def _sorted_row(u, indptr, indices, arc_rank, key, rend):
    e = _fill_row(u, indptr, indices, arc_rank, key)
    _sort_range(key, indptr[u], e)
    rend[u] = e


@kernel(parallel=PRANGE_ONLY)
def sorted_rows(n, indptr, indices, arc_rank):
    """Each row's usable arcs as packed keys, best first, in place of the CSR
    slots; returns (key, row end)."""
    key = np.empty(indices.shape[0], np.int64)
    rend = np.empty(n, np.int64)
    if n >= QUEUE_PARALLEL_MIN:
        for i in prange(n):
            _sorted_row(np.int64(i), indptr, indices, arc_rank, key, rend)
    else:
        for i in range(n):
            _sorted_row(np.int64(i), indptr, indices, arc_rank, key, rend)
    return key, rend


@njit(cache=True, no_cpython_wrapper=True)
def _window(u, key, head, rend, left, cnt, wlast):
    """Gather u's left[u] best live entries into the window key[head[u]:p), dropping
    dead entries (matched edges, full neighbours) on the way."""
    c = left[u]
    h = head[u]
    e = rend[u]
    p = h
    found = 0
    while p < e and found < c:
        kk = key[p]
        if kk >= 0 and left[kk & LOW] > 0:
            found += 1
        p += 1
    # Compact towards p so that the window stays contiguous with the row tail.
    q = p - 1
    for j in range(p - 1, h - 1, -1):
        kk = key[j]
        if kk >= 0 and left[kk & LOW] > 0:
            key[q] = kk
            q -= 1
    head[u] = q + 1
    cnt[u] = found
    # An edge live at both ends is in the other end's window iff it ranks no
    # worse than the window's last entry, or the window holds all live entries.
    wlast[u] = np.int32(key[p - 1] >> 32) if found == c and found > 0 else NO_RANK


@njit(cache=True, no_cpython_wrapper=True)
def _mutual(u, key, head, cnt, wlast, take, order):
    got = 0
    for j in range(head[u], head[u] + cnt[u]):
        kk = key[j]
        r = np.int32(kk >> 32)
        v = kk & LOW
        if r <= wlast[v]:
            got += 1
            if u < v:
                take[order[r]] = True
            key[j] = -1  # this row is only touched by u in this phase
    return got


@kernel(parallel=PRANGE_ONLY)
def _ld_rounds(key, rend, head, left, active, cnt, wlast, dec, take, order):
    """Rounds until no vertex has room and a live edge; marks take[e]. Returns
    the number of rounds."""
    k = active.shape[0]
    rounds = 0
    while k > 0:
        rounds += 1
        # Phase 1: windows. Reads left[] of others, which changes only in phase 3.
        # Phase 2: an edge in both ends' windows is locally dominant; both ends see
        # it the same way, and only the smaller end records it.
        if k >= QUEUE_PARALLEL_MIN:
            for i in prange(k):
                _window(np.int64(active[i]), key, head, rend, left, cnt, wlast)
            for i in prange(k):
                u = np.int64(active[i])
                dec[u] = _mutual(u, key, head, cnt, wlast, take, order)
        else:
            for i in range(k):
                _window(np.int64(active[i]), key, head, rend, left, cnt, wlast)
            for i in range(k):
                u = np.int64(active[i])
                dec[u] = _mutual(u, key, head, cnt, wlast, take, order)
        # Phase 3: charge the matches; vertices that are full or out of edges leave.
        j = 0
        for i in range(k):
            u = active[i]
            left[u] -= dec[u]
            if left[u] > 0 and cnt[u] > 0:
                active[j] = u
                j += 1
        k = j
    return rounds


def local_dominant(n, indptr, indices, arc_rank, order, cap):
    """Round-parallel locally dominant b-matching: each round matches every edge that
    is among the best left(u) live edges of u and the best left(v) of v. Equals greedy."""
    key, rend = sorted_rows(n, indptr, indices, arc_rank)
    # Allocations stay out of the parallel kernel (see PRANGE_ONLY).
    left = np.asarray(cap).astype(np.int64)
    head = indptr[:-1].copy()
    active = np.flatnonzero(left > 0)
    take = np.zeros(indices.shape[0] // 2, np.bool_)
    _ld_rounds(
        key,
        rend,
        head,
        left,
        active,
        np.zeros(n, np.int64),
        np.zeros(n, np.int32),
        np.zeros(n, np.int64),
        take,
        order,
    )
    return np.flatnonzero(take)
