"""The CPU engine of the level loops and its generator over the levels."""

import time

import numpy as np
from numba import prange

from nx_gpumatch import cpu
from nx_gpumatch.community import levels
from nx_gpumatch.community.engine import CommunityEngine, HostLevel
from nx_gpumatch.community.quality import singleton_modularity
from nx_gpumatch.community.schedule import (
    LEAD_SWEEPS,
    MOVE_BUCKETS,
    carry_order,
    community_options,
    degree_buckets,
    vertex_order,
)
from nx_gpumatch.cpu import njit, num_threads, renting
from nx_gpumatch.cpu.louvain.aggregation import aggregate, aggregate_1, own_buffers, renumber
from nx_gpumatch.cpu.louvain.constants import (
    _CHUNKS_PER_THREAD,
    KEEP_BUFFERS_ARCS,
    PARALLEL_MIN_ARCS,
    PARALLEL_RENT,
    SECONDS_PER_ARC,
    SERIAL_SECONDS_PER_ARC,
)
from nx_gpumatch.cpu.louvain.moves import weighted_degrees
from nx_gpumatch.cpu.louvain.state import Level, Scratch, SweepSettings
from nx_gpumatch.cpu.louvain.sweeps import (
    dense_size,
    move_scratch,
    optimise,
    optimise_1,
    optimise_seq,
)


# ------------------------------------------------------------- the driver
@njit(cache=True, parallel=True)
def _touch(x):
    for i in prange(x.shape[0]):
        x[i] += 1


def parallel_min_arcs_now(floor=PARALLEL_MIN_ARCS):
    """Smallest batch worth the threads now: ``floor``, or more when starting
    a parallel loop is slow (median of a few empty ones)."""
    if num_threads() < 2:
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
    threads = num_threads()
    if pos.shape[0] < threads:
        pos = np.full((threads, pos.shape[1]), -1, np.int32)
    return pos, (_CHUNKS_PER_THREAD * threads if threads > 1 else 1)


class LouvainEngine(CommunityEngine):
    """The CPU engine of the level loops (:mod:`nx_gpumatch.community.levels`): the
    input graph, the current level (host CSR, degrees, vertex order) and the
    kernels above.

    ``rule`` is the run's :class:`SweepRule`; ``order`` as in
    :func:`louvain_levels`, ``lead_sweeps`` and ``parallel_min_arcs`` as in
    :class:`~nx_gpumatch.community.schedule.CommunityOptions`; ``m2`` (None: the
    graph's own) continues a run begun on another graph (a level handed over
    by the GPU engine). ``node_weights`` (None: the weighted degrees) weigh
    the vertices in the gains instead, summed on aggregation: CPM's vertex
    sizes (see :mod:`nx_gpumatch.community.quality`). ``arc_buffers``: the
    (scratch, output) buffer pairs of :func:`aggregate`, for a caller that
    builds an engine per level and keeps its buffers (None: made at the
    first aggregation, as large as the input's arcs).
    """

    xp = np
    family = "louvain"  # whose first-use rent its serial runs pay (see cpu.serial_first)

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
        arc_buffers=None,
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
        self.threaded = num_threads() > 1 and indices.shape[0] >= min(
            rule.sequential_arcs, par_floor
        )
        self._optimise = optimise if self.threaded else optimise_1
        # first use: the serial builds while the parallel ones are not at hand
        expect = indices.shape[0] * SERIAL_SECONDS_PER_ARC
        self._may_rent = self.threaded and cpu.may_rent(self.family, expect, PARALLEL_RENT)
        # sequential_arcs=0: no sweep one vertex at a time (the GPU engine's layout)
        self._lead = int(lead_sweeps) if rule.sequential_arcs > 0 else 0
        self._chase = int(rule.chase) if rule.sequential_arcs > 0 and self._lead == 0 else 0
        self._aggregate = aggregate if self.threaded else aggregate_1
        self._parallel_min_arcs = parallel_min_arcs
        self._measured = None  # the thread floor, measured at most once a run
        self._pos = np.full((0, n), -1, np.int32)
        self._nchunks = 1
        # aggregation's buffers, made by the first aggregation unless given
        self._arc_bufs = arc_buffers

    def start(self):
        self.indptr, self.indices, self.w, self.loop, self.k, self.order, self.prio = self._input
        self._buckets = None  # the level's degree buckets, drawn by its first move

    def _level_buckets(self):
        """(bptr, verts) of the current level (see degree_buckets): drawn
        once per level, however often Leiden moves it."""
        if self._buckets is None:
            self._buckets = degree_buckets(self.indptr, MOVE_BUCKETS, self.order)
        return self._buckets

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
        if init is None:
            init = np.arange(nv, dtype=np.int32)
        lv = Level(
            self.indptr,
            self.indices,
            self.w,
            self.loop,
            self.k,
            self.order,
            self.prio,
            *self._level_buckets(),
        )
        rule = SweepSettings(
            self.m2,
            self.resolution,
            thr,
            max_arcs,
            nbatch,
            self._nchunks,
            PARALLEL_MIN_ARCS if self._parallel_min_arcs is None else int(self._parallel_min_arcs),
            int(self.rule.max_sweeps),
            rel_tol,
            confirm,
            self._lead,
            self.rule.margins,
            int(self.rule.sparse_div),
            self._chase,
        )
        scratch = Scratch(self._pos, buf_c, buf_j, buf_w)
        if max_arcs <= 1:
            return optimise_seq(lv, scratch, rule, init)
        args = (lv, scratch, rule, init)
        if self._rents(optimise, args):
            with renting(self.family):
                return optimise_1(*args)
        if self._parallel_min_arcs is None:
            if self._measured is None:  # once a run: it costs a few thread wakes
                self._measured = parallel_min_arcs_now()
            rule = rule._replace(par_min_arcs=self._measured)
        return self._optimise(lv, scratch, rule, init)

    def _rents(self, build, args):
        """Whether this run takes the serial twin of the parallel ``build``
        for ``args`` (see :func:`nx_gpumatch.cpu.may_rent`)."""
        return self._may_rent and not cpu.at_hand(build, args)

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
        args = (comm, *numbering, self.indptr, self.indices, self.w, self.loop, pos, nchunks)
        args += (*tmp, *out)
        if self._rents(aggregate, args):
            with renting(self.family):
                level = aggregate_1(*args)
        else:
            level = self._aggregate(*args)
        self.indptr, self.indices, self.w, self.loop, self.k = level
        if self.node_weighted:
            self.k = np.bincount(numbering[0][comm], weights=k, minlength=numbering[1])
        self.order, self.prio = carry_order(self.order, numbering[0], numbering[1])
        self._buckets = None


def louvain_levels(
    indptr,
    indices,
    w,
    loop,
    options=None,
    *,
    order=None,
    m2=None,
    q0=None,
    first_level=0,
    **changes,
):
    """Generator over the levels of the Louvain method (networkx's semantics).

    The graph: symmetric CSR ``indptr``/``indices`` with arc weights ``w``
    (non-negative) and self-loop weights ``loop``. Yields ``(labels, info)``
    per level: ``labels`` (int32, one per input vertex, values 0..K-1) is the
    partition after the level and ``info`` a dict (``vertices``, ``edges`` of
    the level's graph, ``modularity`` after it, ``moves``, ``sweeps``).

    ``options``: the run's
    :class:`~nx_gpumatch.community.schedule.CommunityOptions` (None: the
    defaults), with the settings ``changes`` names changed. A level's sweeps
    end once one gains at most :func:`sweep_tolerance`. The first level is
    always yielded, later ones only if they moved something; the method stops
    once a level gains at most ``threshold``. ``order`` (a permutation;
    default by id) orders each bucket and breaks ties.

    ``margins=False`` looks at every neighbour of a mover again in batched
    sweeps (the GPU engine's rule) instead of waking it by its margin.
    ``rel_tol`` and ``confirm`` end the sweeps of levels swept in batches as in
    :func:`optimise` (``rel_tol=0, confirm=True``: only at a local optimum, the
    GPU engine's rule); levels swept one vertex at a time always end there.

    ``m2``, ``q0`` and ``first_level`` continue a run begun elsewhere: the
    original graph's total degree, the modularity so far and the number of
    levels done.
    """
    opts = community_options(options, **changes)
    engine = LouvainEngine(
        indptr,
        indices,
        w,
        loop,
        opts.sweep_rule(),
        resolution=opts.resolution,
        order=order,
        m2=m2,
        lead_sweeps=opts.lead_sweeps,
        parallel_min_arcs=opts.parallel_min_arcs,
    )
    q = None if q0 is None else float(q0)
    yield from levels.louvain(engine, opts.threshold, q=q, level=first_level)
