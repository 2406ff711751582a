"""Numba kernels of the distributed b-Suitor: one rank's compute phase and its
handling of incoming messages.

They run the package's shared-memory b-Suitor machinery (vertex records with a
lock, a bound and a heap of suitors; delayed, partially sorted rows) from
``nx_gpumatch.cpu.b_matching`` on the local graph (owned vertices plus ghosts),
and turn every step that crosses to another rank into a message in an outbox:

- PROP (u -> ghost p): u offers to p; p's owner decides.
- REJ (p -> ghost u): the offer did not beat p's bound (u saw a stale bound).
- ANL (p -> ghost u): u was displaced from S(p).

REJ and ANL carry p's current bound, which the receiver keeps in the record
of ghost p (header only: the bound, no heap). A ghost's bound is never below
the owner's, because bounds only decrease, so skipping a ghost whose bound an
offer does not beat is always right.
"""

import numpy as np
from numba import prange

from nx_gpumatch.cpu import njit
from nx_gpumatch.cpu.atomics import atomic_add, atomic_load, cas
from nx_gpumatch.cpu.b_matching import (
    AHEAD,
    BLOCK,
    COUNT,
    DEPTH,
    LOW,
    NO_RANK,
    PRANGE_ONLY,
    QUEUED,
    _base,
    _batch,
    _displace,
    _extend_sorted,
    _make_suitor,
    _prepare,
    prefetch,
)
from nx_gpumatch.cpu.matching import beats

PROP, REJ, ANL = 0, 1, 2
UNLIMITED = np.int64(1) << 40


@njit(cache=True, inline="always")
def _emit(ob, out_n, kind, to, frm, thr):
    i = atomic_add(out_n, 0, 1)
    if i < ob.shape[0]:
        ob[i, 0] = kind
        ob[i, 1] = to
        ob[i, 2] = frm
        ob[i, 3] = thr


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
    hptr,
    owned,
    nextq,
    qtail,
    limit,
    batch,
    min_batch,
    ob,
    out_n,
):
    """u makes up to ``limit`` proposals this superstep, best first: to owned
    vertices directly (as the shared-memory b-Suitor), to ghosts by message."""
    p = cur[u]
    s = sorted_end[u]
    e = rend[u]
    start = indptr[u]
    first = max(np.int64(batch) * cap[u], np.int64(min_batch))
    todo = _claim(u, need, limit)
    made = 0
    exhausted = False
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
                for j in range(p, min(p + AHEAD, s)):
                    prefetch(rec, _base(key[j] & LOW, 0, hptr))
            elif p + AHEAD < s:
                prefetch(rec, _base(key[p + AHEAD] & LOW, 0, hptr))
            kk = key[p]
            p += 1
            rr = kk >> 32
            vv = kk & LOW
            b = _base(vv, 0, hptr)
            hd = atomic_load(rec, b)
            if rr < (hd >> 32):
                v = vv
                r = rr
                hb = b
                seen = hd
                break
        if v < 0:
            exhausted = True
            break
        if owned[v]:
            y = _make_suitor(u, r, rec, hb, seen)
            if y == -2:
                continue
            if y >= 0:
                if owned[y]:
                    _displace(y, need, nextq, qtail)
                else:
                    _emit(ob, out_n, ANL, y, v, atomic_load(rec, hb) >> 32)
        else:
            _emit(ob, out_n, PROP, v, u, 0)
        todo -= 1
        made += 1
        if todo == 0 and made < limit:
            todo = _claim(u, need, limit - made)
    cur[u] = p
    sorted_end[u] = s
    if not exhausted and (atomic_load(need, u) & COUNT) > 0:
        _requeue(u, need, nextq, qtail)  # b' left debts for a later superstep


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
    hptr,
    owned,
    nextq,
    qtail,
    bsub,
    batch,
    min_batch,
    ob,
    out_n,
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
            0,
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
                0,
                hptr,
                batch,
                min_batch,
            )
        u = np.int64(q[j])
        _propose(
            u,
            indptr,
            key,
            rend,
            sorted_end,
            cur,
            cap,
            need,
            rec,
            hptr,
            owned,
            nextq,
            qtail,
            bsub[u],
            batch,
            min_batch,
            ob,
            out_n,
        )


@njit(cache=True, parallel=PRANGE_ONLY)
def compute_phase(
    q,
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
    hptr,
    owned,
    nextq,
    qtail,
    bsub,
    batch,
    min_batch,
    ob,
    out_n,
    pmin,
):
    """Proposals of the vertices in q (one chunk of this iteration's queue);
    blocks of the queue run in parallel when it holds at least pmin vertices."""
    nq = q.shape[0]
    for i in range(nq):
        need[q[i]] &= COUNT
    if nq >= pmin:
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
                hptr,
                owned,
                nextq,
                qtail,
                bsub,
                batch,
                min_batch,
                ob,
                out_n,
            )
    else:
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
            hptr,
            owned,
            nextq,
            qtail,
            bsub,
            batch,
            min_batch,
            ob,
            out_n,
        )


@njit(cache=True)
def heaviest_remaining(
    q, indptr, indices, arc_rank, key, rend, sorted_end, cur, cap, rec, hptr, batch, min_batch
):
    """Rank of each queued vertex's best remaining candidate (vertex ordering)."""
    out = np.empty(q.shape[0], np.int64)
    for i in range(q.shape[0]):
        u = np.int64(q[i])
        _prepare(
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
            0,
            hptr,
            batch,
            min_batch,
        )
        out[i] = (key[cur[u]] >> 32) if cur[u] < sorted_end[u] else NO_RANK
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
def ghost_bound(p, indptr, granks, order, ew, elo, ehi, w, s, pg):
    """The bound of ghost p in local ranks, from its owner's bound edge (s, p)
    of weight w (global ids): the best rank among p's local arcs whose edge
    does not beat that edge (NO_RANK if all do). Only this rank's offers to p
    are compared with it, and those are exactly p's local arcs."""
    lo = indptr[p]
    hi = indptr[p + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        r = granks[mid]
        if r == NO_RANK:
            hi = mid
            continue
        e = order[r]
        if beats(ew[e], elo[e], ehi[e], w, s, pg):
            lo = mid + 1
        else:
            hi = mid
    return granks[lo] if lo < indptr[p + 1] else np.int64(NO_RANK)


@njit(cache=True, inline="always")
def _handle_one(
    i,
    kind,
    to,
    frm,
    s_gid,
    s_w,
    p_gid,
    indptr,
    indices,
    arc_rank,
    granks,
    order,
    ew,
    elo,
    ehi,
    need,
    rec,
    hptr,
    owned,
    nextq,
    qtail,
    ob,
    out_n,
):
    if kind[i] == PROP:
        p = to[i]
        u = frm[i]
        hb = _base(p, 0, hptr)
        r = np.int64(arc_rank[_arc(indptr, indices, p, u)])
        y = _make_suitor(u, r, rec, hb, atomic_load(rec, hb)) if r != NO_RANK else np.int64(-2)
        if y == -2:
            _emit(ob, out_n, REJ, u, p, atomic_load(rec, hb) >> 32)
        elif y >= 0:
            if owned[y]:
                _displace(y, need, nextq, qtail)
            else:
                _emit(ob, out_n, ANL, y, p, atomic_load(rec, hb) >> 32)
    else:
        u = to[i]
        p = frm[i]
        if s_gid[i] == -1:
            bound = np.int64(0)  # p takes no offers at all
        elif s_gid[i] == -2:
            bound = np.int64(NO_RANK)
        else:
            bound = ghost_bound(p, indptr, granks, order, ew, elo, ehi, s_w[i], s_gid[i], p_gid[i])
        hb = _base(p, 0, hptr)
        old = atomic_load(rec, hb)
        while (old >> 32) > bound:
            got = cas(rec, hb, old, bound << 32)
            if got == old:
                break
            old = got
        _displace(u, need, nextq, qtail)


@njit(cache=True, parallel=PRANGE_ONLY)
def handle_messages(
    kind,
    to,
    frm,
    s_gid,
    s_w,
    p_gid,
    indptr,
    indices,
    arc_rank,
    granks,
    order,
    ew,
    elo,
    ehi,
    need,
    rec,
    hptr,
    owned,
    nextq,
    qtail,
    ob,
    out_n,
    pmin,
):
    """Algorithm 4 of Khan et al. 2016 for one neighbour's batch (local ids in
    ``to`` and ``frm``; for REJ/ANL the bound edge (s_gid, p_gid) of weight
    s_w), in parallel from pmin messages on."""
    k = kind.shape[0]
    if k >= pmin:
        for i in prange(k):
            _handle_one(
                np.int64(i),
                kind,
                to,
                frm,
                s_gid,
                s_w,
                p_gid,
                indptr,
                indices,
                arc_rank,
                granks,
                order,
                ew,
                elo,
                ehi,
                need,
                rec,
                hptr,
                owned,
                nextq,
                qtail,
                ob,
                out_n,
            )
    else:
        for i in range(k):
            _handle_one(
                np.int64(i),
                kind,
                to,
                frm,
                s_gid,
                s_w,
                p_gid,
                indptr,
                indices,
                arc_rank,
                granks,
                order,
                ew,
                elo,
                ehi,
                need,
                rec,
                hptr,
                owned,
                nextq,
                qtail,
                ob,
                out_n,
            )


@njit(cache=True)
def suitors_of(ov, rec, hptr):
    """Suitors of the owned vertices ov from their heaps: (indptr, local ids
    ascending per vertex, edge ranks)."""
    k = ov.shape[0]
    indptr = np.zeros(k + 1, np.int64)
    for i in range(k):
        indptr[i + 1] = indptr[i] + ((rec[hptr[ov[i]]] >> 1) & 0x7FFFFFFF)
    who = np.empty(indptr[k], np.int64)
    rank = np.empty(indptr[k], np.int64)
    for i in range(k):
        b = hptr[ov[i]] + 2
        a = indptr[i]
        for j in range(indptr[i + 1] - a):
            x = rec[b + j]
            # insertion by suitor id: heaps hold a handful of entries
            t = a + j
            while t > a and who[t - 1] > (x & LOW):
                who[t] = who[t - 1]
                rank[t] = rank[t - 1]
                t -= 1
            who[t] = x & LOW
            rank[t] = x >> 32
    return indptr, who, rank
