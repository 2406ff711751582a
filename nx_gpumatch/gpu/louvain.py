"""Louvain on the GPU: host side of kernels/louvain.cu (Naim et al. 2017).

Written against ``array_module``/``get_module`` only, so the same code runs on
a CUDA device (``backend="cupy"``) and on the CPU in emulation
(``backend="emulate"``). The rules and the sweep schedule (degree buckets,
commit batches, vertex order) are the CPU engine's; the schedule is drawn on
the device each sweep (the same hash as :func:`nx_gpumatch.cpu.louvain.sweep_schedule`,
only the few batch boundaries come back to the host).

Per level: modularity optimisation (per batch a computeMove launch sized to
the bucket's degrees, a commit launch; per sweep one launch recomputing inner
weights) and aggregation (arcs sorted by (community of tail, community of
head) with the array library's stable sort, each run summed by
``segment_sums``). Row kernels give each row 1, 8, 32 or a block of threads
by its length (ROW_WIDTHS), so a hub never serialises a launch. The hash
tables of the highest-degree bucket live in global memory and are taken a
chunk of the batch at a time, chunks sized from the free device memory
(``table_bytes`` forces a size), so their memory stays bounded however large
the graph. Levels with fewer than ``cpu_below_arcs`` arcs go to the CPU
engine, which sweeps them one vertex at a time anyway. The loop over levels
is shared with the CPU engine (:func:`nx_gpumatch.community.levels.louvain`):
:class:`LouvainEngine` runs its levels here.

Determinism. On weights whose sums are exact (integers) the partition and the
modularity are the same run after run, and equal the CPU engine's run with
the same sweeps: the CPU engine begins levels of at least SEQUENTIAL_ARCS
arcs with sweeps one vertex at a time (LEAD_SWEEPS; Leiden's CHASE check),
which have no GPU counterpart, so there the partitions differ unless the CPU
engine runs with ``sequential_arcs=0`` (as the emulation tests run both).
With float weights:

* every sum except one is taken in an order fixed by the graph (inner
  weights, degrees, merged edge weights, community degrees at the start of a
  level: lane-strided partial sums and a fixed butterfly, or a stable sort
  then a segment sum), so those are the same bits on every run, though not
  always the CPU engine's bits (the CPU sums in row order);
* the exception is the community degrees updated while moves commit and the
  neighbour weights of computeMove's hash tables: atomic additions whose order
  follows thread timing. Their last bits may differ from run to run, and a
  near-tie between two moves may then go the other way.

So on float weights two runs with the same seed may return different (equally
good) partitions; what always holds is the same rules, a partition of all
vertices, and the reported modularity being that of the returned partition (up to rounding).
Integer (or otherwise exactly summable) weights give reproducible results.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from nx_gpumatch.community import levels
from nx_gpumatch.community import schedule as sch
from nx_gpumatch.community.engine import CommunityEngine, HostLevel
from nx_gpumatch.community.quality import singleton_modularity
from nx_gpumatch.gpu._launch import (
    MAX_GRID,
    array_module,
    bincount,
    get_module,
    on_device,
    row_classes,
    to_host,
)

__all__ = [
    "louvain_levels",
    "LouvainEngine",
    "optimise",
    "Objective",
    "Sweeps",
    "aggregate",
    "renumber",
    "degrees",
    "Schedule",
    "table_budget",
    "table_chunks",
    "segment_reduce",
    "group_sums",
]

BLOCK = 128
DEFINES = {"BLOCK": BLOCK}
# Degree bucket -> (lanes per vertex, shared table slots): a prime above 1.5
# times the bucket's largest degree (4, 8, 16, 32, 84).
GROUP_KERNELS = {0: (4, 7), 1: (8, 13), 2: (16, 29), 3: (32, 53), 4: (32, 127)}
BLOCK_SLOTS = 479  # bucket (84, 319]: a block per vertex, shared table
GLOBAL_BUCKET = len(GROUP_KERNELS) + 1  # degree > 319: a block, global table
# Threads of a row kernel per row: rows of up to 8 arcs get one thread, up to
# 64 eight, up to 512 a warp, longer ones a block.
ROW_WIDTHS = ((8, 1), (64, 8), (512, 32), (None, BLOCK))
# Commit threads per row in each move bucket (its largest degree's ROW_WIDTHS).
COMMIT_WIDTH = {0: 1, 1: 1, 2: 8, 3: 8, 4: 32, 5: 32, 6: BLOCK}
# Aggregation bytes per arc of a chunk: key, weight, sort permutation, sorted
# copies, the sort's scratch.
AGGREGATE_BYTES = 64
# Bytes of one global hash-table slot (key, weight, representative).
SLOT_BYTES = 16
# Share of the free device memory the scratch of one chunk may take.
TABLE_MEMORY_SHARE = 0.5
# Table budget in emulation (host memory), when none is given.
EMULATION_TABLE_BYTES = 1 << 28


def _grid(count, per=1):
    return (max(1, min(MAX_GRID, math.ceil(count / per))),)


def _pow2_tables(deg):
    """Global table sizes: powers of two of at least 1.5 * degree; returns the
    int64 offsets (len + 1)."""
    need = np.maximum(np.ceil(1.5 * np.asarray(deg, np.float64)), 2.0)
    size = np.left_shift(1, np.ceil(np.log2(need)).astype(np.int64))
    off = np.zeros(size.shape[0] + 1, np.int64)
    np.cumsum(size, out=off[1:])
    return off


def table_budget(xp, table_bytes=None):
    """Bytes the scratch of one chunk (the move phase's global hash tables,
    the aggregation's sorted arcs) may take: ``table_bytes`` if given, else
    TABLE_MEMORY_SHARE of the device's free memory (CuPy's pool's cached
    blocks count as free)."""
    if table_bytes is not None:
        table_bytes = int(table_bytes)
        if table_bytes < SLOT_BYTES:
            raise ValueError(f"table_bytes must be at least {SLOT_BYTES}, got {table_bytes}")
        return table_bytes
    if not on_device(xp):
        return EMULATION_TABLE_BYTES
    free, _ = xp.cuda.Device().mem_info
    free += xp.get_default_memory_pool().free_bytes()
    return max(SLOT_BYTES << 16, int(TABLE_MEMORY_SHARE * free))


def table_chunks(off, budget_slots):
    """Cut a batch whose tables have offsets ``off`` (host, len count + 1)
    into runs whose tables take at most ``budget_slots`` slots (a vertex
    whose own table is larger runs alone). Returns the boundaries."""
    bounds = [0]
    count = off.shape[0] - 1
    while bounds[-1] < count:
        i = bounds[-1]
        j = int(np.searchsorted(off, off[i] + budget_slots, side="right")) - 1
        bounds.append(max(j, i + 1))
    return bounds


# ------------------------------------------------------------- row kernels
def width_classes(xp, lengths, ids=None):
    """Rows grouped by the threads ROW_WIDTHS gives them: [(width, rows)], rows
    an int32 device array (``ids[...]`` when ids is given, else positions)."""
    return row_classes(xp, lengths, ROW_WIDTHS, ids)


def launch_rows(kernel, classes, args):
    """kernel(count, rows, *args, width) for each width class."""
    for width, rows in classes:
        count = int(rows.shape[0])
        per = BLOCK // width
        kernel(_grid(count, per), (BLOCK,), (np.int32(count), rows, *args, np.int32(width)))


def segment_reduce(xp, mod, keys, vals):
    """Sums of ``vals`` per distinct key, each in input order (stable sort,
    then one segment_sums launch per width class): (sorted distinct keys,
    sums, sorted keys, sort permutation). The same bits on every run."""
    if keys.shape[0] == 0:
        return keys[:0], xp.zeros(0, xp.float64)
    perm = xp.argsort(keys, kind="stable")
    skeys = keys[perm]
    svals = xp.ascontiguousarray(vals[perm], dtype=xp.float64)
    new = xp.ones(skeys.shape[0], dtype=bool)
    new[1:] = skeys[1:] != skeys[:-1]
    starts = xp.flatnonzero(new)
    ptr = xp.empty(starts.shape[0] + 1, xp.int64)
    ptr[:-1] = starts
    ptr[-1] = skeys.shape[0]
    sums = xp.empty(starts.shape[0], xp.float64)
    launch_rows(
        mod.get_function("segment_sums"), width_classes(xp, ptr[1:] - ptr[:-1]), (ptr, svals, sums)
    )
    return skeys[starts], sums


def group_sums(xp, mod, groups, vals, ngroups):
    """out[c] = sum of vals[v] over groups[v] == c, in v order."""
    ukeys, sums = segment_reduce(xp, mod, xp.asarray(groups, xp.int64), vals)
    out = xp.zeros(ngroups, xp.float64)
    out[ukeys] = sums
    return out


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
        self._classes = None

    @property
    def arcs(self):
        return int(self.indices.shape[0])

    def bundle(self, res_over_m2):
        """The level as kernels/common.cuh's LevelGraph (a kernel argument)."""
        return dict(
            indptr=self.indptr,
            indices=self.indices,
            w=self.w,
            k=self.k,
            res_over_m2=np.float64(res_over_m2),
        )

    def classes(self):
        """All vertices by row width (see ROW_WIDTHS)."""
        if self._classes is None:
            xp = self.xp
            self._classes = width_classes(xp, xp.asarray(np.diff(self.indptr_host)))
        return self._classes


# ---------------------------------------------------------------- schedule
def _mix64(xp, x):
    """splitmix64's finalizer on a uint64 array (nx_gpumatch.cpu.random.mix64)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


class Schedule:
    """The sweep schedule of one level, drawn on the device: the same vertex
    order, batches and batch numbers as :func:`nx_gpumatch.cpu.louvain.sweep_schedule`.
    Per level the buckets' vertices and arc prefix sums go to the device once;
    per sweep only the batch boundaries (a few per bucket) come back."""

    def __init__(self, xp, indptr_host, order):
        self.xp = xp
        bptr, verts = sch.degree_buckets(indptr_host, sch.MOVE_BUCKETS, order)
        deg = np.diff(indptr_host)
        self.n = indptr_host.shape[0] - 1
        self.bptr = bptr
        self.verts = xp.asarray(verts)
        vdeg = xp.asarray(deg[verts])
        self.arcs = []  # per bucket: total arcs (host), arcs before each vertex (device)
        for b in range(bptr.shape[0] - 1):
            lo, hi = int(bptr[b]), int(bptr[b + 1])
            d = vdeg[lo:hi]
            pre = xp.zeros(hi - lo, xp.int64)
            if hi - lo > 1:
                xp.cumsum(d[:-1], out=pre[1:])
            self.arcs.append((int(deg[verts[lo:hi]].sum()), pre))

    def sweep(self, max_arcs, max_batches, sweep):
        """(sverts, batches, batch): the vertices in processing order (device),
        [(lo, hi, bucket)] per batch (host), each vertex's batch number (device,
        -1 for isolated vertices)."""
        xp = self.xp
        sverts = xp.empty_like(self.verts)
        batch = xp.full(self.n, -1, xp.int32)
        batches = []
        salt = _mix64(np, np.array([sweep], np.uint64) * np.uint64(0x9E3779B97F4A7C15))[0]
        nbat = 0
        for b in range(self.bptr.shape[0] - 1):
            lo, hi = int(self.bptr[b]), int(self.bptr[b + 1])
            S = hi - lo
            if S == 0:
                continue
            A, pre = self.arcs[b]
            vb = self.verts[lo:hi]
            cap = max_arcs if max_batches <= 0 else max(max_arcs, -(-A // max_batches))
            if sweep == 0 or cap <= 1:
                j = pre // cap
                new = xp.ones(S, dtype=bool)
                new[1:] = j[1:] != j[:-1]
                num = xp.cumsum(new, dtype=xp.int32) - 1
                sverts[lo:hi] = vb
                batch[vb] = nbat + num
                starts = to_host(xp.flatnonzero(new)).tolist() + [S]
            else:
                nbb = min(max(1, -(-A // cap)), S)
                off = np.uint64(salt % np.uint64(sch.RUN))
                t = xp.arange(S, dtype=xp.uint64)
                run = (t + off) // np.uint64(sch.RUN)
                r = (_mix64(xp, run ^ salt) % np.uint64(nbb)).astype(xp.int32)
                perm = xp.argsort(r, kind="stable")
                sverts[lo:hi] = vb[perm]
                batch[vb] = nbat + r
                cnt = to_host(bincount(xp, r, nbb))
                starts = [0] + np.cumsum(cnt).tolist()
            for s0, s1 in zip(starts[:-1], starts[1:]):
                batches.append((lo + int(s0), lo + int(s1), b))
            nbat += len(starts) - 1
        return sverts, batches, batch


class LouvainEngine(CommunityEngine):
    """The GPU engine of the level loops (:mod:`nx_gpumatch.community.levels`): the
    input graph and the current level on the device (a :class:`_Level`; the
    vertex order stays on the host) and the kernels of kernels/louvain.cu.
    ``rule`` is the run's :class:`nx_gpumatch.community.schedule.SweepRule`; levels
    with fewer than ``cpu_below_arcs`` arcs go on in the CPU engine (see
    :func:`nx_gpumatch.community.levels._engine_for_level`).
    ``node_weights`` as in the CPU engine (CPM's vertex sizes)."""

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
        cpu_below_arcs=0,
        table_bytes=None,
        backend="cupy",
        node_weights=None,
    ):
        xp = self.xp = array_module(backend)
        self.mod = get_module("louvain", backend)
        g = _Level(
            xp,
            xp.asarray(np.ascontiguousarray(indptr, np.int64)),
            xp.asarray(indices, dtype=xp.int32),
            xp.asarray(np.ascontiguousarray(w, np.float64)),
            xp.asarray(np.ascontiguousarray(loop, np.float64)),
            None,
        )
        g.k = degrees(xp, self.mod, g)
        self.m2 = float(xp.sum(g.k))
        # CPM (see nx_gpumatch.community.quality): vertices weigh their node weights,
        # summed on aggregation, instead of their degrees
        self.node_weighted = node_weights is not None
        if self.node_weighted:
            g.k = xp.asarray(np.ascontiguousarray(node_weights, np.float64))
        self.rule = rule
        self.resolution = float(resolution)
        self.host_below_arcs = cpu_below_arcs
        self.table_bytes = table_bytes
        self._input = (g, *sch.vertex_order(order, g.n))
        self.start()

    def start(self):
        self.g, self.order, self.prio = self._input

    @property
    def n(self):
        return self.g.n

    @property
    def arcs(self):
        return self.g.arcs

    def host(self, x):
        return to_host(x)

    def host_level(self):
        g = self.g
        return HostLevel(
            g.indptr_host,
            to_host(g.indices),
            to_host(g.w),
            to_host(g.loop),
            to_host(g.k),
            self.order,
        )

    def singleton_modularity(self):
        g = self.g
        return singleton_modularity(to_host(g.loop), to_host(g.k), self.m2, self.resolution)

    def move(self, init):
        """:func:`optimise` of the current level from the partition ``init``
        (None: singletons). Returns (device comm, q, moves, sweeps)."""
        g = self.g
        thr, max_arcs, nbatch, rel_tol, confirm = self.rule.level(np.diff(g.indptr_host), g.arcs)
        sweeps = Sweeps(thr, max_arcs, nbatch, int(self.rule.max_sweeps), rel_tol, confirm)
        return optimise(
            self.xp,
            self.mod,
            g,
            (self.order, self.prio),
            Objective(self.m2, self.resolution),
            sweeps,
            init=init,
            table_bytes=self.table_bytes,
        )

    def renumber(self, comm):
        return renumber(self.xp, comm)

    def aggregate(self, comm, numbering):
        newid, K = numbering
        k = self.g.k
        self.g = aggregate(self.xp, self.mod, self.g, comm, newid, K, self.table_bytes)
        if self.node_weighted:
            self.g.k = group_sums(self.xp, self.mod, newid[comm], k, K)
        self.order, self.prio = sch.carry_order(self.order, to_host(newid), K)


def louvain_levels(indptr, indices, w, loop, options=None, *, order=None, **changes):
    """The GPU engine's version of :func:`nx_gpumatch.cpu.louvain.louvain_levels`
    (same arguments, same yields: host int32 labels and an info dict; of the
    :class:`~nx_gpumatch.community.schedule.CommunityOptions`, ``cpu_below_arcs``,
    ``table_bytes`` and ``backend`` are this engine's, and the CPU engine's own
    are ignored)."""
    opts = sch.community_options(options, **changes)
    engine = LouvainEngine(
        indptr,
        indices,
        w,
        loop,
        opts.sweep_rule(margins=False),  # the device kernels wake every neighbour of a mover
        resolution=opts.resolution,
        order=order,
        cpu_below_arcs=opts.cpu_below_arcs,
        table_bytes=opts.table_bytes,
        backend=opts.backend,
    )
    yield from levels.louvain(engine, opts.threshold)


def degrees(xp, mod, g):
    """Weighted degrees (row sums plus twice the self-loop) of a level."""
    k = xp.empty(g.n, xp.float64)
    launch_rows(mod.get_function("row_sums"), g.classes(), (g.indptr, g.w, g.loop, k))
    return k


# ----------------------------------------------------------- optimisation
class Objective(NamedTuple):
    """What a level's moves maximise: ``m2`` (2m, twice the total weight)
    and ``resolution``."""

    m2: float
    resolution: float


class Sweeps(NamedTuple):
    """A level's sweep schedule and end rule (the CPU engine's, see
    :meth:`nx_gpumatch.community.schedule.SweepRule.level`): stop when a
    sweep gains at most ``threshold`` (or ``rel_tol`` of the level's gain;
    ``confirm``: only after a sweep over every vertex agrees), batches of at
    most ``max_arcs`` arcs and ``nbatch`` batches, ``max_sweeps`` sweeps."""

    threshold: float
    max_arcs: int
    nbatch: int
    max_sweeps: int
    rel_tol: float = 0.0
    confirm: bool = True


def optimise(xp, mod, g, order, objective, sweeps, init=None, table_bytes=None):
    """One level's sweeps (the CPU engine's ``optimise``) on level ``g`` in
    the vertex order ``order`` = (order, prio), from the partition ``init``
    (host or device community ids below n; None: singletons), maximising
    ``objective`` (an :class:`Objective`) on the schedule ``sweeps`` (a
    :class:`Sweeps`).
    Returns (device comm, modularity, moves, sweeps)."""
    order, prio = order
    m2, resolution = objective
    threshold, max_arcs, nbatch, max_sweeps, rel_tol, confirm = sweeps
    n = g.n
    group = mod.get_function("compute_moves_group")
    block = mod.get_function("compute_moves_block")
    commit = mod.get_function("commit_moves")
    intra_k = mod.get_function("intra_weights")
    if init is None:
        comm = xp.arange(n, dtype=xp.int32)
        a = g.k.copy()
        size = xp.ones(n, xp.int32)
    else:
        comm = xp.array(init, dtype=xp.int32)
        a = group_sums(xp, mod, comm, g.k, n)
        size = bincount(xp, comm, n).astype(xp.int32)
    newc = comm.copy()
    active = xp.ones(n, xp.uint8)
    dirty = xp.ones(n, xp.uint8)
    intra = xp.empty(n, xp.float64)
    moved_d = xp.zeros(1, xp.int32)
    prio_d = xp.asarray(prio)
    classes = g.classes()
    inner_args = (g.indptr, g.indices, g.w, g.loop, comm, dirty, intra)
    launch_rows(intra_k, classes, inner_args)
    level = g.bundle(resolution / m2)
    sq = float(xp.sum(a * a))
    q = float(xp.sum(intra)) / m2 - resolution * sq / (m2 * m2)
    sched = Schedule(xp, g.indptr_host, order)
    budget_slots = max(1, table_budget(xp, table_bytes) // SLOT_BYTES)
    deg_d = xp.asarray(np.diff(g.indptr_host))
    shared_tables = dict(off=None, key=None, val=None, rep=None)  # GlobalTables: none
    total = 0
    sweeps = 0
    all_active = True
    q_start = q
    while sweeps < max_sweeps:
        sverts, batches, batch = sched.sweep(max_arcs, nbatch, sweeps)
        sweeps += 1
        full, all_active = all_active, False  # the CPU engine's end-of-level rule
        keep = (comm.copy(), a.copy(), size.copy(), intra.copy())
        moved_d.fill(0)
        # kernels/louvain.cu's Partition
        part = dict(comm=comm, a=a, size=size, prio=prio_d, batch=batch, active=active)
        for lo, hi, b in batches:
            if hi == lo:
                continue
            count = np.int32(hi - lo)
            vs = sverts[lo:hi]
            state = (level, part)
            if b in GROUP_KERNELS:
                width, slots = GROUP_KERNELS[b]
                per_block = BLOCK // width
                group(
                    (math.ceil(int(count) / per_block),),
                    (BLOCK,),
                    (count, vs, *state, np.int32(width), np.int32(slots), newc),
                    shared_mem=per_block * slots * 16,
                )
            elif b != GLOBAL_BUCKET:
                block(
                    (int(count),),
                    (BLOCK,),
                    (count, vs, *state, np.int32(BLOCK_SLOTS), shared_tables, newc),
                    shared_mem=BLOCK_SLOTS * 16,
                )
            else:
                _moves_global_tables(xp, block, vs, deg_d, state, budget_slots, newc)
            commit(
                _grid(int(count), BLOCK // COMMIT_WIDTH[b]),
                (BLOCK,),
                (count, vs, newc, *state, dirty, moved_d, np.int32(COMMIT_WIDTH[b])),
            )
        moved = int(to_host(moved_d)[0])
        if moved == 0:
            if full or not confirm:
                break
            active.fill(1)
            all_active = True
            continue
        launch_rows(intra_k, classes, inner_args)
        sq = float(xp.sum(a * a))
        q_new = float(xp.sum(intra)) / m2 - resolution * sq / (m2 * m2)
        if q_new < q:
            comm[...], a[...], size[...], intra[...] = keep
            if max_arcs <= 1:
                break
            max_arcs, nbatch = 1, 0  # as on the CPU: go on one vertex at a time
            active.fill(1)
            all_active = True
            continue
        total += moved
        gain = q_new - q
        q = q_new
        if gain <= max(threshold, rel_tol * (q - q_start)):
            if full or not confirm:
                break
            active.fill(1)
            all_active = True
    return comm, q, total, sweeps


def _moves_global_tables(xp, block, vs, deg_d, state, budget_slots, newc):
    """computeMove for a batch of the highest-degree bucket, with hash tables
    in global memory, taken in chunks whose tables fit in ``budget_slots``
    slots. Every chunk reads the same state (the commit comes after the whole
    batch), so the chunking never changes a result."""
    off = _pow2_tables(to_host(deg_d[vs]))
    bounds = table_chunks(off, budget_slots)
    slots = max(int(off[j] - off[i]) for i, j in zip(bounds[:-1], bounds[1:]))
    tkey = xp.empty(slots, xp.int32)
    tval = xp.empty(slots, xp.float64)
    trep = xp.empty(slots, xp.int32)
    for i, j in zip(bounds[:-1], bounds[1:]):
        count = np.int32(j - i)
        tables = dict(off=xp.asarray(off[i : j + 1] - off[i]), key=tkey, val=tval, rep=trep)
        block(
            (min(int(count), MAX_GRID),),
            (BLOCK,),
            (count, vs[i:j], *state, np.int32(0), tables, newc),
        )


# ------------------------------------------------------------- aggregation
def renumber(xp, comm):
    """Consecutive ids of the non-empty communities, in community-id order
    (prefix sum over the non-empty flags): (newid, K)."""
    n = comm.shape[0]
    nonempty = bincount(xp, comm, n) > 0
    newid = (xp.cumsum(nonempty) - 1).astype(xp.int32)
    newid[~nonempty] = -1
    return newid, int(nonempty.sum())


def aggregate(xp, mod, g, comm, newid, K, table_bytes=None):
    """The graph of the communities, as a new _Level.

    The communities are taken in chunks of consecutive new ids whose arcs
    fit the memory budget (``table_bytes``, None: a share of the free device
    memory; AGGREGATE_BYTES per arc). Per chunk, the arcs of its members'
    rows are gathered with their key (new tail, new head) and sorted
    (stable), and each run of equal keys is summed: runs with equal ends are
    inner weight, half of which, with the members' self-loops (entered as
    arcs of twice their weight), is the new self-loop. Chunks come in id
    order and each is sorted, so the rows come out in CSR order, and the
    chunking never changes a sum."""
    cx = xp.ascontiguousarray(newid[comm])
    deg = g.indptr[1:] - g.indptr[:-1]
    # arcs (and loop entries) per new vertex, their prefix sums: the chunks
    has_loop = (g.loop != 0).astype(xp.int64)
    load = bincount(xp, cx, K, weights=(deg + has_loop).astype(xp.float64))
    pre = np.zeros(K + 1, np.int64)
    np.cumsum(np.rint(to_host(load)).astype(np.int64), out=pre[1:])
    budget = max(1, table_budget(xp, table_bytes) // AGGREGATE_BYTES)
    bounds = table_chunks(pre, budget)
    gather = mod.get_function("gather_arcs")
    parts = []
    for i, j in zip(bounds[:-1], bounds[1:]):
        rows = xp.flatnonzero((cx >= i) & (cx < j)).astype(xp.int32)
        rdeg = deg[rows]
        total = int(pre[j] - pre[i])
        out_off = xp.zeros(rows.shape[0], xp.int64)
        if rows.shape[0] > 1:
            xp.cumsum(rdeg[:-1], out=out_off[1:])
        lv = rows[g.loop[rows] != 0]
        arcs = total - int(lv.shape[0])
        keys = xp.empty(total, xp.int64)
        vals = xp.empty(total, xp.float64)
        for width, sel in width_classes(xp, rdeg):
            count = int(sel.shape[0])
            out = dict(
                cx=cx, K=np.int64(K), off=xp.ascontiguousarray(out_off[sel]), keys=keys, vals=vals
            )
            gather(
                _grid(count, BLOCK // width),
                (BLOCK,),
                (np.int32(count), xp.ascontiguousarray(rows[sel]), g.indptr, g.indices, g.w, out)
                + (np.int32(width),),
            )
        keys[arcs:] = cx[lv].astype(xp.int64) * (K + 1)
        vals[arcs:] = 2.0 * g.loop[lv]
        parts.append(segment_reduce(xp, mod, keys, vals))
    ukeys = xp.concatenate([p[0] for p in parts])
    sums = xp.concatenate([p[1] for p in parts])
    x = ukeys // K
    y = ukeys - x * K
    diag = x == y
    loop2 = xp.zeros(K, xp.float64)
    loop2[x[diag]] = 0.5 * sums[diag]
    off = ~diag
    indptr2 = xp.zeros(K + 1, xp.int64)
    # empty when every community is a union of components
    xp.cumsum(bincount(xp, x[off], K), out=indptr2[1:])
    indices2 = xp.ascontiguousarray(y[off].astype(xp.int32))
    w2 = xp.ascontiguousarray(sums[off])
    g2 = _Level(xp, indptr2, indices2, w2, loop2, None)
    g2.k = degrees(xp, mod, g2)
    return g2
