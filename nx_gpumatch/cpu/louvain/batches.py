"""The commit batches of a sweep: its vertex order and batch boundaries,
drawn by hashing (run, sweep), and the split of work into balanced chunks."""

import numpy as np

from nx_gpumatch.community.schedule import (
    RUN,
)
from nx_gpumatch.cpu import njit
from nx_gpumatch.cpu.random import mix64


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
