"""Sparse sweeps: a batched sweep due to look at few vertices visits only
those, drawing their batches itself (see SPARSE_DIV)."""

import numpy as np

from nx_gpumatch.community.schedule import (
    RUN,
)
from nx_gpumatch.cpu import njit
from nx_gpumatch.cpu.louvain.batches import (
    _balanced_chunks,
    _bucket_batches,
    _bucket_cap,
    _run_batch,
    _sweep_salt,
)
from nx_gpumatch.cpu.louvain.moves import _commit, _compute_moves_seq, _scan_moves_seq


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
def _sparse_sweep(sp, ncur, sweep, lv, st, scratch, res_over_m2, units, sq, inner):
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
    :func:`_undo`. ``sp``: the worklists, batch layout and log (cur, nxt and
    the rest), ``lv``, ``st``, ``scratch``: the level, its partition and
    bookkeeping, and the accumulators, as in :func:`optimise`.
    """
    cur, nxt, tmp, head, link, queued = sp.cur, sp.nxt, sp.tmp, sp.head, sp.link, sp.queued
    vpos, nbb, base, logc, loga = sp.vpos, sp.nbb, sp.base, sp.logc, sp.loga
    indptr, indices, k, bptr, verts = lv.indptr, lv.indices, lv.k, lv.bptr, lv.verts
    comm, a, size, batch, active = st.comm, st.a, st.size, st.batch, st.active
    pending, slack, charge, newc, change = st.pending, st.slack, st.charge, st.newc, st.change
    salt = _sweep_salt(sweep)
    off = np.int64(salt % np.uint64(RUN))
    head[:] = -1
    for i in range(ncur):
        _place(cur[i], -1, vpos, bptr, nbb, base, off, salt, indptr, indices, batch, head, link)
    nn = 0
    moved = 0
    unit = np.zeros(2, np.int64)  # a batch is one work unit: tmp[0:cnt]
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
        unit[1] = cnt
        _compute_moves_seq(tmp, unit, lv, st, scratch, res_over_m2, units)
        _scan_moves_seq(tmp, unit, lv, st, res_over_m2, units)
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
