"""Louvain on the GPU: host side of kernels/louvain.cu (Naim et al. 2017).

Written against ``array_module``/``get_module`` only, so the same code runs on
a CUDA device (``backend="cupy"``) and on the CPU in emulation
(``backend="emulate"``). The rules and the sweep schedule (degree buckets,
commit batches, vertex order) are the CPU engine's: the schedule itself is
computed on the host by the same functions, and on weights whose sums are
exact (integers) the partition equals the CPU engine's. With float weights
the device adds community degrees and merged edge weights with atomics in
thread order, so sums may differ in their last bits from run to run and from
the CPU engine; a near-tie may then go the other way. What holds on floats:
the same rules, a partition of all vertices, and the reported modularity
being that of the returned partition.

Per level: modularity optimisation (per batch a computeMove launch sized to
the bucket's degrees and a commit launch; per sweep one launch recomputing
inner weights) and aggregation (mergeCommunity launches per community-degree
bucket, prefix sums on the device for the new row offsets). Levels with fewer
than ``cpu_below_arcs`` arcs go to the CPU engine, which sweeps them one
vertex at a time anyway.
"""

from __future__ import annotations

import math

import numpy as np

from nx_gpumatch.cpu import louvain as cl
from nx_gpumatch.gpu._launch import array_module, get_module, to_host

__all__ = ["louvain_levels"]

BLOCK = 128
MAX_GRID = 4096
# Degree bucket -> (lanes per vertex, shared table slots): a prime above 1.5
# times the bucket's largest degree (4, 8, 16, 32, 84).
GROUP_KERNELS = {0: (4, 7), 1: (8, 13), 2: (16, 29), 3: (32, 53), 4: (32, 127)}
BLOCK_SLOTS = 479  # bucket (84, 319]: a block per vertex, shared table
# Aggregation: community degree (summed member degrees) <= 127 or <= 479:
# shared tables of 191 / 719 slots; larger: per-community global tables.
MERGE_BUCKETS = ((127, 191), (479, 719))


def _merge_buckets():
    lo = -1
    for hi, slots in MERGE_BUCKETS:
        yield lo, hi, slots
        lo = hi
    yield lo, np.iinfo(np.int64).max, 0


def _grid(count):
    return (max(1, min(MAX_GRID, math.ceil(count / BLOCK))),)


def _pow2_tables(deg):
    """Global table sizes: powers of two of at least 1.5 * degree; returns the
    int64 offsets (len + 1)."""
    need = np.maximum(np.ceil(1.5 * np.asarray(deg, np.float64)), 2.0)
    size = np.left_shift(1, np.ceil(np.log2(need)).astype(np.int64))
    off = np.zeros(size.shape[0] + 1, np.int64)
    np.cumsum(size, out=off[1:])
    return off


class _Level:
    """One level's graph on the device."""

    def __init__(self, xp, indptr, indices, w, loop, k):
        self.xp = xp
        self.indptr = indptr
        self.indices = indices
        self.w = w
        self.loop = loop
        self.k = k
        self.n = int(indptr.shape[0] - 1)
        self.indptr_host = to_host(indptr)

    @property
    def arcs(self):
        return int(self.indices.shape[0])


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
    batch_fraction=cl.BATCH_FRACTION,
    max_batches=cl.MAX_BATCHES,
    sequential_arcs=cl.SEQUENTIAL_ARCS,
    cpu_below_arcs=cl.SEQUENTIAL_ARCS,
    max_sweeps=cl.MAX_SWEEPS,
    backend="cupy",
    **_cpu_only,
):
    """The GPU engine's version of :func:`nx_gpumatch.cpu.louvain.louvain_levels`
    (same arguments, same yields: host int32 labels and an info dict)."""
    xp = array_module(backend)
    mod = get_module("louvain", backend)
    indptr = np.ascontiguousarray(indptr, np.int64)
    w = np.ascontiguousarray(w, np.float64)
    loop = np.ascontiguousarray(loop, np.float64)
    n = indptr.shape[0] - 1
    k = cl.weighted_degrees(indptr, w, loop)
    m2 = float(k.sum())
    if m2 <= 0.0:
        yield (
            np.arange(n, dtype=np.int32),
            {
                "vertices": n,
                "edges": int(indices.shape[0] // 2),
                "modularity": 0.0,
                "moves": 0,
                "sweeps": 0,
            },
        )
        return
    if order is None:
        order = np.arange(n, dtype=np.int32)
        prio = order
    else:
        order = np.ascontiguousarray(order, dtype=np.int32)
        prio = np.empty(n, np.int32)
        prio[order] = np.arange(n, dtype=np.int32)
    q = cl.singleton_modularity(loop, k, m2, float(resolution))
    g = _Level(
        xp,
        xp.asarray(indptr),
        xp.asarray(indices, dtype=xp.int32),
        xp.asarray(w),
        xp.asarray(loop),
        xp.asarray(k),
    )
    labels = xp.arange(n, dtype=xp.int32)
    level = 0
    while True:
        if g.arcs < cpu_below_arcs:
            host_labels = to_host(labels)
            rest = cl.louvain_levels(
                g.indptr_host,
                to_host(g.indices),
                to_host(g.w),
                to_host(g.loop),
                resolution=resolution,
                threshold=threshold,
                coarse_threshold=coarse_threshold,
                fine_below=fine_below,
                order=order,
                batch_fraction=batch_fraction,
                max_batches=max_batches,
                sequential_arcs=sequential_arcs,
                max_sweeps=max_sweeps,
                m2=m2,
                q0=q,
                first_level=level,
            )
            for sub, info in rest:
                yield sub[host_labels], info
            return
        thr = cl.sweep_tolerance(g.n, threshold, coarse_threshold, fine_below)
        deg = np.diff(g.indptr_host)
        max_arcs, nbatch = cl.batch_limits(
            int(np.count_nonzero(deg)), g.arcs, batch_fraction, max_batches, sequential_arcs
        )
        comm, q_new, moves, sweeps = _optimise(
            xp, mod, g, order, prio, m2, float(resolution), float(thr), max_arcs, nbatch, max_sweeps
        )
        if level > 0 and moves == 0:
            return
        newid, K = _renumber(xp, comm)
        labels = newid[comm[labels]]
        yield (
            to_host(labels),
            {
                "vertices": g.n,
                "edges": g.arcs // 2,
                "modularity": q_new,
                "moves": moves,
                "sweeps": sweeps,
            },
        )
        if q_new - q <= threshold:
            return
        q = q_new
        g = _aggregate(xp, mod, g, comm, newid, K)
        order, prio = cl.carry_order(order, to_host(newid), K)
        level += 1


# ----------------------------------------------------------- optimisation
def _optimise(xp, mod, g, order, prio, m2, resolution, threshold, max_arcs, nbatch, max_sweeps):
    """One level's sweeps (the CPU engine's ``optimise``); returns
    (device comm, modularity, moves, sweeps)."""
    n = g.n
    group = mod.get_function("compute_moves_group")
    block = mod.get_function("compute_moves_block")
    commit = mod.get_function("commit_moves")
    intra_k = mod.get_function("intra_weights")
    comm = xp.arange(n, dtype=xp.int32)
    a = g.k.copy()
    size = xp.ones(n, xp.int32)
    newc = comm.copy()
    active = xp.ones(n, xp.uint8)
    dirty = xp.ones(n, xp.uint8)
    intra = xp.empty(n, xp.float64)
    moved_d = xp.zeros(1, xp.int32)
    prio_d = xp.asarray(prio)
    nn = np.int32(n)
    intra_k(_grid(n), (BLOCK,), (nn, g.indptr, g.indices, g.w, g.loop, comm, dirty, intra))
    res_over_m2 = np.float64(resolution / m2)
    sq = float(xp.sum(a * a))
    q = float(xp.sum(intra)) / m2 - resolution * sq / (m2 * m2)
    bptr, verts = cl.degree_buckets(g.indptr_host, cl.MOVE_BUCKETS, order)
    deg = np.diff(g.indptr_host)
    dummy_i64 = xp.zeros(1, xp.int64)
    dummy_i32 = xp.zeros(1, xp.int32)
    dummy_f64 = xp.zeros(1, xp.float64)
    total = 0
    sweeps = 0
    all_active = True
    while sweeps < max_sweeps:
        sverts_h, bounds, batch_h = cl.sweep_schedule(
            bptr, verts, g.indptr_host, max_arcs, nbatch, sweeps
        )
        sweeps += 1
        full, all_active = all_active, False  # the CPU engine's end-of-level rule
        sverts = xp.asarray(sverts_h)
        batch = xp.asarray(batch_h)
        keep = (comm.copy(), a.copy(), size.copy(), intra.copy())
        moved_d.fill(0)
        for j in range(bounds.shape[0] - 1):
            lo, hi = int(bounds[j]), int(bounds[j + 1])
            if hi == lo:
                continue
            count = np.int32(hi - lo)
            b = int(np.searchsorted(bptr, lo, side="right") - 1)
            vs = sverts[lo:hi]
            common = (
                count,
                vs,
                g.indptr,
                g.indices,
                g.w,
                g.k,
                comm,
                a,
                size,
                prio_d,
                batch,
                active,
                res_over_m2,
            )
            if b in GROUP_KERNELS:
                width, slots = GROUP_KERNELS[b]
                per_block = BLOCK // width
                group(
                    (math.ceil(int(count) / per_block),),
                    (BLOCK,),
                    common + (np.int32(width), np.int32(slots), newc),
                    shared_mem=per_block * slots * 16,
                )
            elif b == len(GROUP_KERNELS):
                block(
                    (int(count),),
                    (BLOCK,),
                    common
                    + (
                        np.int32(BLOCK_SLOTS),
                        np.int32(0),
                        dummy_i64,
                        dummy_i32,
                        dummy_f64,
                        dummy_i32,
                        newc,
                    ),
                    shared_mem=BLOCK_SLOTS * 16,
                )
            else:
                off_h = _pow2_tables(deg[sverts_h[lo:hi]])
                tkey = xp.empty(int(off_h[-1]), xp.int32)
                tval = xp.empty(int(off_h[-1]), xp.float64)
                trep = xp.empty(int(off_h[-1]), xp.int32)
                block(
                    (min(int(count), MAX_GRID),),
                    (BLOCK,),
                    common + (np.int32(0), np.int32(1), xp.asarray(off_h), tkey, tval, trep, newc),
                )
            commit(
                _grid(int(count)),
                (BLOCK,),
                (count, vs, newc, comm, g.k, a, size, g.indptr, g.indices, active, dirty, moved_d),
            )
        moved = int(to_host(moved_d)[0])
        if moved == 0:
            if full:
                break
            active.fill(1)
            all_active = True
            continue
        intra_k(_grid(n), (BLOCK,), (nn, g.indptr, g.indices, g.w, g.loop, comm, dirty, intra))
        sq = float(xp.sum(a * a))
        q_new = float(xp.sum(intra)) / m2 - resolution * sq / (m2 * m2)
        if q_new < q:
            comm, a, size, intra = keep
            if max_arcs <= 1:
                break
            max_arcs, nbatch = 1, 0  # as on the CPU: go on one vertex at a time
            active.fill(1)
            all_active = True
            continue
        total += moved
        gain = q_new - q
        q = q_new
        if gain <= threshold:
            if full:
                break
            active.fill(1)
            all_active = True
    return comm, q, total, sweeps


# ------------------------------------------------------------- aggregation
def _renumber(xp, comm):
    """Consecutive ids of the non-empty communities, in community-id order
    (prefix sum over the non-empty flags): (newid, K)."""
    n = comm.shape[0]
    nonempty = xp.bincount(comm, minlength=n) > 0
    newid = (xp.cumsum(nonempty) - 1).astype(xp.int32)
    newid[~nonempty] = -1
    return newid, int(nonempty.sum())


def _aggregate(xp, mod, g, comm, newid, K):
    """The graph of the communities (mergeCommunity), as a new _Level."""
    merge = mod.get_function("merge_communities")
    compact = mod.get_function("compact_rows")
    n = g.n
    cx = newid[comm].astype(xp.int64)
    # members grouped by new vertex, in increasing id within each (as on the CPU)
    members = xp.argsort(cx * n + xp.arange(n, dtype=xp.int64)).astype(xp.int32)
    ptr = xp.zeros(K + 1, xp.int64)
    xp.cumsum(xp.bincount(cx, minlength=K), out=ptr[1:])
    deg = (g.indptr[1:] - g.indptr[:-1]).astype(xp.float64)
    comdeg = xp.rint(xp.bincount(cx, weights=deg, minlength=K)).astype(xp.int64)
    out_off = xp.zeros(K + 1, xp.int64)
    xp.cumsum(comdeg, out=out_off[1:])
    total = int(to_host(out_off[-1:])[0])
    out_idx = xp.empty(max(total, 1), xp.int32)
    out_w = xp.empty(max(total, 1), xp.float64)
    ocount = xp.zeros(K, xp.int64)
    loop2 = xp.zeros(K, xp.float64)
    dummy_i64 = xp.zeros(1, xp.int64)
    dummy_i32 = xp.zeros(1, xp.int32)
    dummy_f64 = xp.zeros(1, xp.float64)
    comdeg_h = to_host(comdeg)
    for lo, hi, slots in _merge_buckets():
        comms_h = np.flatnonzero((comdeg_h > lo) & (comdeg_h <= hi)).astype(np.int32)
        if comms_h.shape[0] == 0:
            continue
        count = np.int32(comms_h.shape[0])
        args = (
            count,
            xp.asarray(comms_h),
            ptr,
            members,
            newid,
            comm,
            g.indptr,
            g.indices,
            g.w,
            g.loop,
        )
        tail = (out_off, out_idx, out_w, ocount, loop2)
        grid = (min(int(count), MAX_GRID),)
        if slots:
            merge(
                grid,
                (BLOCK,),
                args + (np.int32(slots), np.int32(0), dummy_i64, dummy_i32, dummy_f64) + tail,
                shared_mem=slots * 12,
            )
        else:
            off_h = _pow2_tables(comdeg_h[comms_h])
            tkey = xp.empty(int(off_h[-1]), xp.int32)
            tval = xp.empty(int(off_h[-1]), xp.float64)
            merge(
                grid,
                (BLOCK,),
                args + (np.int32(0), np.int32(1), xp.asarray(off_h), tkey, tval) + tail,
            )
    indptr2 = xp.zeros(K + 1, xp.int64)
    xp.cumsum(ocount, out=indptr2[1:])
    arcs2 = int(to_host(indptr2[-1:])[0])
    indices2 = xp.empty(arcs2, xp.int32)
    w2 = xp.empty(arcs2, xp.float64)
    k2 = xp.empty(K, xp.float64)
    compact(
        _grid(K),
        (BLOCK,),
        (np.int32(K), out_off, ocount, out_idx, out_w, indptr2, loop2, indices2, w2, k2),
    )
    return _Level(xp, indptr2, indices2, w2, loop2, k2)
