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

from nx_gpumatch.cpu import kernel, njit
from nx_gpumatch.cpu.b_suitor_blocks import (
    BATCH,
    BLOCK,
    COUNT,
    LOW,
    MIN_BATCH,
    NO_RANK,
    fill_row,
    record_at,
    run_block,
    sort_range,
    suitor_state,
)

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
@kernel(parallel=PRANGE_ONLY)
def _round(q, nq, st):
    """One round of proposals by the nq vertices of q, in blocks of the queue
    (see :mod:`nx_gpumatch.cpu.b_suitor_blocks`)."""
    need = st.need  # (an in-place update of st.need[...] in a prange loop is lost)
    for i in prange(nq):
        need[q[np.int64(i)]] &= COUNT
    nb = (nq + BLOCK - 1) // BLOCK
    for ib in prange(nb):
        lo = np.int64(ib) * BLOCK
        run_block(q, lo, min(lo + BLOCK, nq), st)


def record_layout(cap):
    """(stride, hptr, size) of the records of vertices with capacities cap (see
    :func:`~nx_gpumatch.cpu.b_suitor_blocks.record_at`): fixed-size records
    when they take at most twice the memory of packed ones, since then finding
    a candidate's record costs no read of an offset table (a cache miss per
    candidate on large graphs)."""
    n = cap.shape[0]
    maxcap = int(cap.max()) if n else 0
    total = 2 * n + int(cap.sum(dtype=np.int64))
    if (maxcap + 2) * n <= 2 * total:
        return maxcap + 2, np.zeros(1, np.int64), (maxcap + 2) * n
    hptr = np.zeros(n + 1, np.int64)
    np.cumsum(cap.astype(np.int64) + 2, out=hptr[1:])
    return 0, hptr, total


def _suitor_init(cap, rec, stride, hptr):
    """Every record unlocked and empty: bound NO_RANK (0 for cap 0), then cap."""
    n = cap.shape[0]
    base = np.arange(n, dtype=np.int64) * stride if stride > 0 else hptr[:n]
    rec[base] = np.where(cap > 0, np.int64(NO_RANK) << 32, np.int64(0))
    rec[base + 1] = cap


@njit(cache=True, no_cpython_wrapper=True)
def _count_upper(v, rec, stride, hptr, cnt):
    b = record_at(v, stride, hptr)
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
    b = record_at(v, stride, hptr)
    t = a
    for j in range(b + 2, b + 2 + ((rec[b] >> 1) & 0x7FFFFFFF)):
        u = rec[j] & LOW
        if u > v:
            out[t] = u
            t += 1
    sort_range(out, a, w)
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
    st = suitor_rounds(n, indptr, indices, arc_rank, cap, batch, min_batch)
    edges, entries = _suitor_edges(n, st.rec, st.stride, st.hptr, indptr, indices, arc_edge)
    if entries != 2 * edges.shape[0]:
        raise RuntimeError("b-Suitor ended with a suitor relation that is not mutual")
    return edges


def suitor_rounds(n, indptr, indices, arc_rank, cap, batch=BATCH, min_batch=MIN_BATCH):
    """The rounds of :func:`b_suitor`: its final state (``suitor_state``), each
    vertex's suitors in its record (``rec``, ``stride``, ``hptr``)."""
    cap = np.ascontiguousarray(cap, np.int32)
    stride, hptr, size = record_layout(cap)
    rec = np.empty(size, np.int64)
    _suitor_init(cap, rec, stride, hptr)
    need = cap.astype(np.int64)
    q = np.zeros(n, np.int32)
    active = np.flatnonzero(cap > 0)
    nq = active.shape[0]
    q[:nq] = active
    nextq = np.empty(n, np.int32)
    qtail = np.zeros(1, np.int64)
    st = suitor_state(
        indptr, indices, arc_rank, cap, need, rec, stride, hptr, nextq, qtail, batch, min_batch
    )
    while nq > 0:
        qtail[0] = 0
        # Rounds stay here rather than in one compiled loop: the kernels come out
        # measurably faster that way.
        _round.run(nq, q, nq, st._replace(nextq=nextq), floor=QUEUE_PARALLEL_MIN)
        q, nextq = nextq, q
        nq = int(qtail[0])
        q[
            :nq
        ].sort()  # displaced vertices arrive in random order; sorted, their state is read in passes
    return st


# ------------------------------------------------------- locally dominant
@njit(cache=True, no_cpython_wrapper=True)
def _sorted_row(u, indptr, indices, arc_rank, key, rend):
    e = fill_row(u, indptr, indices, arc_rank, key)
    sort_range(key, indptr[u], e)
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


def run(graph, b, algorithm="b_suitor"):
    """Matched edge ids (ascending) of the b-matching of ``graph`` (an
    :class:`nx_gpumatch.Graph`); ``b`` gives b(v) per vertex. The entry the GPU
    engine's ``run`` also offers; ``algorithm`` is "b_suitor", "local_dominant"
    or "greedy". The caller sets the thread count (``nx_gpumatch.cpu.run``)."""
    n = graph.num_nodes
    deg = graph.cached(
        "b_matching_usable_degree", lambda: usable_degree(n, graph.indptr, graph.arc_rank())
    )
    cap = capacities(np.asarray(b), deg)
    if algorithm == "b_suitor":
        return b_suitor(n, graph.indptr, graph.indices, graph.arc_rank(), graph.arc_edge, cap)
    if algorithm == "local_dominant":
        return local_dominant(
            n, graph.indptr, graph.indices, graph.arc_rank(), graph.edge_order(), cap
        )
    if algorithm == "greedy":
        usable = graph.num_usable()
        return greedy(n, graph.edge_src, graph.edge_dst, graph.edge_order(), usable, cap)
    raise ValueError(f"the CPU engine has no b-matching algorithm {algorithm!r}")
