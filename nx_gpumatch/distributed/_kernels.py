"""Numba kernels of the distributed b-Suitor: one rank's compute phase and its
handling of incoming messages.

They run the package's shared-memory b-Suitor block pipeline (vertex records
with a lock, a bound and a heap of suitors; delayed, partially sorted rows:
:mod:`nx_gpumatch.cpu.b_suitor_blocks`) on the local graph (owned vertices plus
ghosts), and turn every step that crosses to another rank into a message in an
outbox:

- PROP (u -> ghost p): u offers to p; p's owner decides.
- REJ (p -> ghost u): the offer did not beat p's bound (u saw a stale bound).
- ANL (p -> ghost u): u was displaced from S(p).

REJ and ANL carry p's current bound, which the receiver keeps in the record
of ghost p (header only: the bound, no heap). A ghost's bound is never below
the owner's, because bounds only decrease, so skipping a ghost whose bound an
offer does not beat is always right.
"""

from collections import namedtuple

import numpy as np
from numba import prange

from nx_gpumatch.cpu import njit
from nx_gpumatch.cpu.atomics import atomic_add, atomic_load, cas
from nx_gpumatch.cpu.b_matching import PRANGE_ONLY
from nx_gpumatch.cpu.b_suitor_blocks import (
    BLOCK,
    COUNT,
    LOW,
    NO_RANK,
    QUEUED,
    displace,
    first_batch,
    make_suitor,
    next_offer,
    prepare,
    record_at,
    start_block,
    step_block,
)
from nx_gpumatch.cpu.matching import beats

PROP, REJ, ANL = 0, 1, 2
UNLIMITED = np.int64(1) << 40
# The prange loops below call functions that are not inlined: Numba's parallel
# loops lose writes made through a bundle's fields in their own body.

# What a rank's proposals need besides the b-Suitor state: which local vertices
# it owns, each one's proposal limit per superstep, and the outbox (rows kind,
# to, from, bound; out_n[0] rows written).
Outbox = namedtuple("Outbox", ["owned", "bsub", "ob", "out_n"])
# One neighbour's batch of messages (local ids in to and frm; for REJ/ANL the
# bound edge (s_gid, p_gid) of weight s_w, in global ids).
Messages = namedtuple("Messages", ["kind", "to", "frm", "s_gid", "s_w", "p_gid"])
# What turns an owner's bound edge into a ghost's bound: each ghost's arc
# ranks sorted (ghost_ranks), edges by rank, edge weights and local ends, and
# the local vertices' global ids.
GhostBounds = namedtuple("GhostBounds", ["granks", "order", "ew", "esrc", "edst", "gids"])


@njit(cache=True, inline="always")
def _emit(out, kind, to, frm, thr):
    i = atomic_add(out.out_n, 0, 1)
    if i < out.ob.shape[0]:
        out.ob[i, 0] = kind
        out.ob[i, 1] = to
        out.ob[i, 2] = frm
        out.ob[i, 3] = thr


@njit(cache=True, inline="always")
def _displaced(y, p, hb, st, out):
    """y lost its place among the suitors of owned p (record at hb): it
    proposes again here, or its owner hears of it with p's bound."""
    if out.owned[y]:
        displace(y, st.need, st.nextq, st.qtail)
    else:
        _emit(out, ANL, y, p, atomic_load(st.rec, hb) >> 32)


@njit(cache=True, inline="always")
def _claim(u, need, limit):
    """Claim up to ``limit`` of the proposals u owes (its QUEUED bit stays)."""
    old = atomic_load(need, u)
    while True:
        c = old & COUNT
        if c == 0:
            return np.int64(0)
        t = min(c, limit)
        got = cas(need, u, old, old - t)
        if got == old:
            return np.int64(t)
        old = got


@njit(cache=True, inline="always")
def _requeue(u, need, nextq, qtail):
    old = atomic_load(need, u)
    while (old & QUEUED) == 0:
        got = cas(need, u, old, old | QUEUED)
        if got == old:
            nextq[atomic_add(qtail, 0, 1)] = u
            return
        old = got


@njit(cache=True, inline="always")
def _propose(u, st, out, limit):
    """u makes up to ``limit`` proposals this superstep, best first: to owned
    vertices directly (as the shared-memory b-Suitor), to ghosts by message."""
    p = st.cur[u]
    s = st.sorted_end[u]
    e = st.rend[u]
    start = st.indptr[u]
    first = first_batch(u, st)
    todo = _claim(u, st.need, limit)
    made = 0
    exhausted = False
    while todo > 0:
        v, r, hb, seen, p, s = next_offer(p, s, e, first, start, st)
        if v < 0:
            exhausted = True
            break
        if out.owned[v]:
            y = make_suitor(u, r, st.rec, hb, seen)
            if y == -2:
                continue
            if y >= 0:
                _displaced(y, v, hb, st, out)
        else:
            _emit(out, PROP, v, u, 0)
        todo -= 1
        made += 1
        if todo == 0 and made < limit:
            todo = _claim(u, st.need, limit - made)
    st.cur[u] = p
    st.sorted_end[u] = s
    if not exhausted and (atomic_load(st.need, u) & COUNT) > 0:
        _requeue(u, st.need, st.nextq, st.qtail)  # b' left debts for a later superstep


@njit(cache=True, no_cpython_wrapper=True)
def _run_block(q, lo, hi, st, out):
    """The block pipeline of :mod:`nx_gpumatch.cpu.b_suitor_blocks` with this
    engine's proposals."""
    start_block(q, lo, hi, st)
    for j in range(lo, hi):
        u = step_block(q, j, hi, st)
        _propose(u, st, out, out.bsub[u])


@njit(cache=True, parallel=PRANGE_ONLY)
def compute_phase(q, st, out, pmin):
    """Proposals of the vertices in q (one chunk of this iteration's queue);
    blocks of the queue run in parallel when it holds at least pmin vertices."""
    nq = q.shape[0]
    need = st.need
    for i in range(nq):
        need[q[i]] &= COUNT
    if nq >= pmin:
        nb = (nq + BLOCK - 1) // BLOCK
        for ib in prange(nb):
            lo = np.int64(ib) * BLOCK
            _run_block(q, lo, min(lo + BLOCK, nq), st, out)
    else:
        _run_block(q, np.int64(0), np.int64(nq), st, out)


@njit(cache=True)
def heaviest_remaining(q, st):
    """Rank of each queued vertex's best remaining candidate (vertex ordering)."""
    out = np.empty(q.shape[0], np.int64)
    for i in range(q.shape[0]):
        u = np.int64(q[i])
        prepare(u, st)
        out[i] = (st.key[st.cur[u]] >> 32) if st.cur[u] < st.sorted_end[u] else NO_RANK
    return out


@njit(cache=True, inline="always")
def _arc(indptr, indices, p, u):
    lo = indptr[p]
    hi = indptr[p + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if indices[mid] < u:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def ghost_ranks(indptr, arc_rank, owned):
    """Each ghost's arc ranks sorted ascending, in its CSR slots (owned rows
    are left unset): ghost bounds are then found by binary search."""
    out = np.empty(arc_rank.shape[0], np.int64)
    for v in range(owned.shape[0]):
        if not owned[v]:
            a = indptr[v]
            e = indptr[v + 1]
            for q in range(a, e):
                out[q] = arc_rank[q]
            out[a:e].sort()
    return out


@njit(cache=True, inline="always")
def ghost_bound(p, indptr, gb, w, s, pg):
    """The bound of ghost p in local ranks, from its owner's bound edge (s, p)
    of weight w (global ids): the best rank among p's local arcs whose edge
    does not beat that edge (NO_RANK if all do). Only this rank's offers to p
    are compared with it, and those are exactly p's local arcs."""
    lo = indptr[p]
    hi = indptr[p + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        r = gb.granks[mid]
        if r == NO_RANK:
            hi = mid
            continue
        e = gb.order[r]
        if beats(gb.ew[e], gb.gids[gb.esrc[e]], gb.gids[gb.edst[e]], w, s, pg):
            lo = mid + 1
        else:
            hi = mid
    return gb.granks[lo] if lo < indptr[p + 1] else np.int64(NO_RANK)


@njit(cache=True, no_cpython_wrapper=True)
def _handle_one(i, msg, st, gb, out):
    if msg.kind[i] == PROP:
        p = msg.to[i]
        u = msg.frm[i]
        hb = record_at(p, st.stride, st.hptr)
        r = np.int64(st.arc_rank[_arc(st.indptr, st.indices, p, u)])
        y = make_suitor(u, r, st.rec, hb, atomic_load(st.rec, hb)) if r != NO_RANK else np.int64(-2)
        if y == -2:
            _emit(out, REJ, u, p, atomic_load(st.rec, hb) >> 32)
        elif y >= 0:
            _displaced(y, p, hb, st, out)
    else:
        u = msg.to[i]
        p = msg.frm[i]
        if msg.s_gid[i] == -1:
            bound = np.int64(0)  # p takes no offers at all
        elif msg.s_gid[i] == -2:
            bound = np.int64(NO_RANK)
        else:
            bound = ghost_bound(p, st.indptr, gb, msg.s_w[i], msg.s_gid[i], msg.p_gid[i])
        hb = record_at(p, st.stride, st.hptr)
        old = atomic_load(st.rec, hb)
        while (old >> 32) > bound:
            got = cas(st.rec, hb, old, bound << 32)
            if got == old:
                break
            old = got
        displace(u, st.need, st.nextq, st.qtail)


@njit(cache=True, parallel=PRANGE_ONLY)
def handle_messages(msg, st, gb, out, pmin):
    """Algorithm 4 of Khan et al. 2016 for one neighbour's batch ``msg``, in
    parallel from pmin messages on."""
    k = msg.kind.shape[0]
    if k >= pmin:
        for i in prange(k):
            _handle_one(np.int64(i), msg, st, gb, out)
    else:
        for i in range(k):
            _handle_one(np.int64(i), msg, st, gb, out)


@njit(cache=True, no_cpython_wrapper=True)
def _suitors_of_one(i, ov, st, gids, ident, weights, indptr, who, weight):
    rec = st.rec
    u = np.int64(ov[i])
    b = record_at(u, st.stride, st.hptr) + 2
    a = indptr[i]
    for j in range(indptr[i + 1] - a):
        v = rec[b + j] & LOW
        # insertion by suitor id (heaps hold a handful of entries); local ids
        # order as global ones
        t = a + j
        while t > a and who[t - 1] > v:
            who[t] = who[t - 1]
            weight[t] = weight[t - 1]
            t -= 1
        who[t] = v
        weight[t] = weights[_arc(st.indptr, st.indices, u, v)]
    me = u if ident else gids[u]
    upper = 0
    for j in range(a, indptr[i + 1]):
        g = who[j] if ident else gids[who[j]]
        upper += g > me
        who[j] = g
    return upper


@njit(cache=True, parallel=PRANGE_ONLY)
def suitors_of(ov, st, gids, weights, pmin):
    """Suitors of the owned vertices ov from their heaps: (indptr, their
    global ids ascending per vertex, the edges' weights, how many suitors
    have a larger global id than their vertex), in parallel from pmin
    vertices on. Weights are read from the vertex's own row (``weights``:
    per arc) by binary search: a cache line or two per vertex, where the
    edge ranks would cost two random reads per suitor. Where every vertex is
    local (one rank), local ids are the global ids: the random read of each
    suitor's global id (most of the time here) is skipped."""
    ident = gids.shape[0] == 0 or gids[-1] == gids.shape[0] - 1  # ascending, unique
    rec = st.rec
    k = ov.shape[0]
    indptr = np.zeros(k + 1, np.int64)
    for i in range(k):
        indptr[i + 1] = indptr[i] + ((rec[record_at(ov[i], st.stride, st.hptr)] >> 1) & 0x7FFFFFFF)
    who = np.empty(indptr[k], np.int64)
    weight = np.empty(indptr[k], np.float64)
    upper = 0
    if k >= pmin:
        for i in prange(k):
            upper += _suitors_of_one(np.int64(i), ov, st, gids, ident, weights, indptr, who, weight)
    else:
        for i in range(k):
            upper += _suitors_of_one(np.int64(i), ov, st, gids, ident, weights, indptr, who, weight)
    return indptr, who, weight, upper
