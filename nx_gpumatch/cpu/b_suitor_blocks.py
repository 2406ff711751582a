"""The b-Suitor block pipeline: the internal API that the shared-memory
b-Suitor (:func:`nx_gpumatch.cpu.b_matching.b_suitor`) and the distributed one
(:mod:`nx_gpumatch.distributed._kernels`) both run on.

Rows are handled as packed keys ``rank << 32 | neighbour`` (0 = best rank,
NO_RANK = never usable): comparing keys compares ranks, since a row never
holds the same edge twice. A row is laid out on its vertex's first visit and
sorted a batch at a time, as far as its vertex looks (Khan et al. 2016, §III).

A round's queue is cut into blocks of BLOCK vertices, each run by one thread
as a pipeline: :func:`start_block` prepares the first DEPTH vertices; then for
each position :func:`step_block` prepares the vertex DEPTH places further on
and hands back the one whose turn it is, which proposes (:func:`propose`
here; the distributed engine's own proposal sends offers to ghosts as
messages). A proposal is a chain of dependent cache misses, so overlapping the
chains of several vertices is what makes it fast. Proposals scan a row with
:func:`next_offer` and compete for a vertex's record with
:func:`make_suitor`; a displaced suitor is queued for the next round with
:func:`displace`.

All the arrays a round reads and writes travel in one :class:`SuitorState`.
A ``prange`` loop must not write through a bundle's fields in its own body
(Numba's parallel loops lose such writes, inlined helpers included): it takes
the array into a local first, or calls a function that is not inlined.
"""

from collections import namedtuple

import numpy as np

from nx_gpumatch._constants import NO_RANK
from nx_gpumatch.cpu import njit
from nx_gpumatch.cpu.atomics import atomic_add, atomic_load, atomic_store, cas, prefetch

LOW = np.int64(0xFFFFFFFF)
# Partial sorting (Khan et al. 2016, §III): a row is ordered BATCH·cap(u) keys at a time
# (at least MIN_BATCH), since a vertex rarely looks far down its list. Tails of
# at most SHORT keys are ordered by selection instead of partitioning.
BATCH = 2
MIN_BATCH = 8
SHORT = 48
# Records of the next AHEAD candidates are prefetched while u proposes, and the
# vertex DEPTH places further down the queue is prepared (row sorted, records
# prefetched) meanwhile. Queues are cut in blocks of BLOCK vertices, each run by
# one thread.
AHEAD = 4
DEPTH = 2
BLOCK = 512

SuitorState = namedtuple(
    "SuitorState",
    [
        "indptr",  # CSR of the graph (local graph on a rank): row pointers,
        "indices",  # neighbours,
        "arc_rank",  # and each arc's edge rank
        "key",  # rows as packed keys, in the CSR slots (laid out on first visit)
        "rend",  # end of each row's usable keys
        "sorted_end",  # end of each row's sorted front (-1: not laid out yet)
        "cur",  # each row's next candidate
        "cap",  # capacities
        "need",  # proposals each vertex still owes, plus QUEUED
        "rec",  # vertex records (see record_at)
        "stride",  # record size when fixed, else 0 (then hptr holds offsets)
        "hptr",  # record offsets (stride 0)
        "nextq",  # next round's queue
        "qtail",  # its length, in a one-element array
        "batch",  # a row is sorted batch·cap keys at a time,
        "min_batch",  # at least min_batch
    ],
)
SuitorState.__doc__ = (
    """The arrays (and sizes) of a b-Suitor run, as one argument of its kernels."""
)


def suitor_state(
    indptr, indices, arc_rank, cap, need, rec, stride, hptr, nextq, qtail, batch, min_batch
):
    """A :class:`SuitorState` with fresh rows (none laid out yet) for a graph
    of ``cap.shape[0]`` vertices; the other fields as given."""
    n = cap.shape[0]
    return SuitorState(
        indptr=indptr,
        indices=indices,
        arc_rank=arc_rank,
        key=np.empty(indices.shape[0], np.int64),
        rend=np.empty(n, np.int64),
        sorted_end=np.full(n, -1, np.int64),
        cur=np.empty(n, np.int64),
        cap=cap,
        need=need,
        rec=rec,
        stride=stride,
        hptr=hptr,
        nextq=nextq,
        qtail=qtail,
        batch=batch,
        min_batch=min_batch,
    )


@njit(cache=True, inline="always")
def fill_row(u, indptr, indices, arc_rank, key):
    """Copy u's usable arcs as packed keys to the front of its CSR slot; returns the end."""
    w = indptr[u]
    for p in range(indptr[u], indptr[u + 1]):
        r = arc_rank[p]
        if r != NO_RANK:
            key[w] = (np.int64(r) << 32) | np.int64(indices[p])
            w += 1
    return w


@njit(cache=True, inline="always")
def sort_range(key, a, e):
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
def extend_sorted(key, a, e, k):
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
        sort_range(key, a, e)
        return e
    _select(key, a, e, a + k)
    sort_range(key, a, a + k)
    return a + k


# Each vertex v owns a record in ``rec`` at record_at(v): a header word
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
def record_at(v, stride, hptr):
    """Offset of v's record: fixed-size records (stride > 0) or an offset table."""
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
def make_suitor(u, r, rec, base, seen):
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
def displace(y, need, nextq, qtail):
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
def prepare(u, st):
    """Lay out u's row on its first visit, make sure its next candidates are
    sorted, and start loading their records."""
    if st.sorted_end[u] < 0:
        st.rend[u] = fill_row(u, st.indptr, st.indices, st.arc_rank, st.key)
        st.sorted_end[u] = st.indptr[u]
        st.cur[u] = st.indptr[u]
    p = st.cur[u]
    s = st.sorted_end[u]
    if p == s and s < st.rend[u]:
        s = extend_sorted(
            st.key,
            s,
            st.rend[u],
            _batch(first_batch(u, st), st.indptr[u], s),
        )
        st.sorted_end[u] = s
    for j in range(p, min(p + AHEAD, s)):
        prefetch(st.rec, record_at(st.key[j] & LOW, st.stride, st.hptr))


@njit(cache=True, inline="always")
def first_batch(u, st):
    """Size of u's first sorted batch: batch·cap[u], at least min_batch."""
    return max(np.int64(st.batch) * st.cap[u], np.int64(st.min_batch))


@njit(cache=True, inline="always")
def next_offer(p, s, e, first, start, st):
    """Scan u's row from its candidate p (sorted up to s, usable up to e; the
    row starts at ``start``, ``first`` is :func:`first_batch`) for the next
    neighbour whose bound the offer beats. Returns (neighbour or -1 when the
    row is used up, rank, its record's offset, the header seen, p, s)."""
    key = st.key
    rec = st.rec
    while True:
        if p == s:
            if s == e:
                break
            s = extend_sorted(key, s, e, _batch(first, start, s))
            # Start loading the next few candidates' records now: the CAS
            # in make_suitor would otherwise expose each miss in turn.
            for j in range(p, min(p + AHEAD, s)):
                prefetch(rec, record_at(key[j] & LOW, st.stride, st.hptr))
        elif p + AHEAD < s:
            prefetch(rec, record_at(key[p + AHEAD] & LOW, st.stride, st.hptr))
        kk = key[p]
        p += 1
        rr = kk >> 32
        vv = kk & LOW
        b = record_at(vv, st.stride, st.hptr)
        hd = atomic_load(rec, b)
        # u never returns to a neighbour it passed: that one's bound only
        # gets better, and an annulled offer stays beaten.
        if rr < (hd >> 32):
            return vv, rr, b, hd, p, s
    return np.int64(-1), np.int64(0), np.int64(0), np.int64(0), p, s


@njit(cache=True, no_cpython_wrapper=True)
def propose(u, st):
    """Let u (prepared) propose until it has cap[u] outstanding proposals or no
    eligible neighbour is left. Only one thread works on u at a time."""
    p = st.cur[u]
    s = st.sorted_end[u]
    e = st.rend[u]
    start = st.indptr[u]
    first = first_batch(u, st)
    todo = _take_debts(u, st.need)
    while todo > 0:
        v, r, hb, seen, p, s = next_offer(p, s, e, first, start, st)
        if v < 0:
            break
        y = make_suitor(u, r, st.rec, hb, seen)
        if y == -2:
            continue
        todo -= 1
        if y >= 0:
            displace(y, st.need, st.nextq, st.qtail)  # delayed: y tries again next round
        if todo == 0:
            todo = _take_debts(u, st.need)
    st.cur[u] = p
    st.sorted_end[u] = s


@njit(cache=True, inline="always")
def start_block(q, lo, hi, st):
    """Prepare the first DEPTH vertices of the block q[lo:hi]."""
    for j in range(lo, min(lo + DEPTH, hi)):
        prepare(np.int64(q[j]), st)


@njit(cache=True, inline="always")
def step_block(q, j, hi, st):
    """Prepare the vertex DEPTH places after position j of the block ending at
    hi; returns q[j], whose turn it is to propose."""
    if j + DEPTH < hi:
        prepare(np.int64(q[j + DEPTH]), st)
    return np.int64(q[j])


@njit(cache=True, inline="always")
def run_block(q, lo, hi, st):
    """The shared-memory proposals of the block q[lo:hi]."""
    start_block(q, lo, hi, st)
    for j in range(lo, hi):
        propose(step_block(q, j, hi, st), st)
