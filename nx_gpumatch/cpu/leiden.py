"""Leiden community detection on the CPU.

The method of Traag, Waltman and van Eck 2019 ("From Louvain to Leiden:
guaranteeing well-connected communities"). A level is

1. local moving: the Louvain engine's sweeps (:func:`nx_gpumatch.cpu.louvain.optimise`)
   from the previous level's partition P (singletons on the first level,
   which begins, as Louvain's levels do, with a sweep one vertex at a time);
   a vertex goes to a neighbour's community only, never to an empty one as
   in the paper, so a community of P can fall apart; where refinement then
   merges nothing, the level goes on from P cut into connected parts
   (:func:`nx_gpumatch.community.levels.leiden`). CPM runs then let every vertex
   that gains by it leave its community to be alone, and sweep again, until
   none does (:func:`leave`, see CPM_LEAVE);
2. refinement: each community C of P is split again into singletons, and
   its well-connected vertices (E(v, C-v) >= gamma k_v (K_C - k_v) / 2m) join,
   one by one in the vertex order, a well-connected sub-community of C
   chosen at random among those with non-negative gain (probability
   proportional to exp(gain / theta), staying alone included, drawn by an
   exponential race so that the draw does not depend on the order in which
   the candidates are found); only singletons move, so every sub-community
   stays connected;
3. aggregation on the refined partition (the Louvain engine's
   :func:`~nx_gpumatch.cpu.louvain.aggregate`); each new vertex starts the
   next level in the community of P that holds it.

A pass stops once local moving leaves every vertex of a level alone: the
communities are then refined sub-communities, each connected. Further passes
rerun the method from the partition found (see MAX_PASSES); each ends the
same way, so the final communities are connected too. Gains are in
edge-weight units (modularity gain times m, or the CPM gain itself), as in
igraph and networkx, so theta = 0.01 makes the choice nearly greedy on unit
weights. The objective, modularity or CPM, is a choice of vertex weights and
resolution for the same kernels (:mod:`nx_gpumatch.community.quality`); the CPM
test of well-connectedness is E(v, C-v) >= gamma n_v (n_C - n_v). The loop over passes and
levels is :func:`nx_gpumatch.community.levels.leiden`, shared with the GPU engine:
:class:`LeidenEngine` runs its levels here.

The random choice of the refinement hashes (key, vertex, refinement count),
and a community's refinement touches only its own members, so communities
are refined in parallel, each walking its members in the vertex order: the
result is the serial walk's. Results depend on the seed, never on the
number of threads.
"""

import collections

import numpy as np
from numba import prange

from nx_gpumatch.community import levels, quality
from nx_gpumatch.community.schedule import (
    CPM_LEAVE,
    LEAD_SWEEPS,
    checked_theta,
    community_options,
    refinement_order,
)
from nx_gpumatch.cpu import louvain as cl
from nx_gpumatch.cpu import njit, renting, serial_builds
from nx_gpumatch.cpu.louvain.batches import _balanced_chunks
from nx_gpumatch.cpu.random import counter_hash, mix64

# What the refinement reads: a level's rows and vertex weights, the partition
# being refined and its community degrees, the vertex order and each vertex's
# lane (see _lanes).
RefineInput = collections.namedtuple("RefineInput", "indptr indices w k comm a order lane")

# The refined partition, changed in place: each vertex's sub-community (named
# after a member), their degrees and sizes, each one's weight to the rest of
# its community, and the sparse accumulator's slots (-1: none).
Refinement = collections.namedtuple("Refinement", "ref ra rsize ext pos")

# The refinement's choices: resolution / m2, the randomness theta, the run's
# key and the refinement count.
RefineDraw = collections.namedtuple("RefineDraw", "res_over_m2 theta key salt")


@njit(cache=True, parallel=True)
def _intra_weights(indptr, indices, w, comm, ext):
    for v in prange(indptr.shape[0] - 1):
        c = comm[v]
        s = 0.0
        for p in range(indptr[v], indptr[v + 1]):
            if comm[indices[p]] == c:
                s += w[p]
        ext[v] = s


@njit(cache=True, inline="always")
def _race(h, r, lw):
    """log(-log U) - lw, U uniform in (0, 1) drawn from (h, r): the draw of
    candidate r with log-weight lw in the refinement's exponential race."""
    u = (np.float64(mix64(h ^ np.uint64(r)) >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)
    return np.log(-np.log(u)) - lw


@njit(cache=True)
def _lanes(indptr, comm, nlanes):
    """(lane of each vertex, lanes, largest degree): communities split into
    ``nlanes`` ranges of ids with about equal arcs (and members); a vertex
    goes to its community's lane."""
    n = comm.shape[0]
    cost = np.zeros(n + 1, np.int64)
    maxdeg = 0
    for v in range(n):
        d = indptr[v + 1] - indptr[v]
        cost[comm[v] + 1] += d + 1
        maxdeg = max(maxdeg, d)
    for c in range(n):
        cost[c + 1] += cost[c]
    bounds = _balanced_chunks(cost, max(1, min(nlanes, n)))
    lane_of = np.empty(n, np.int32)
    for i in range(bounds.shape[0] - 1):
        for c in range(bounds[i], bounds[i + 1]):
            lane_of[c] = i
    lane = np.empty(n, np.int32)
    for v in range(n):
        lane[v] = lane_of[comm[v]]
    return lane, bounds.shape[0] - 1, maxdeg


@njit(cache=True, parallel=True)
def _refine_lanes(nlanes, maxdeg, rin, rs, draw):
    """Refine the communities of ``nlanes`` lanes (``rin``: a
    :class:`RefineInput`) into ``rs`` (a :class:`Refinement`, changed in
    place) with the choices ``draw`` (a :class:`RefineDraw`); rows have at
    most ``maxdeg`` arcs."""
    # A community's refinement reads and writes only entries of its own
    # members (sub-communities are named after members), so communities run
    # in parallel on shared arrays. Each lane walks all vertices in the
    # vertex order and refines those of its communities: every community is
    # walked in that order, and rows are read front to back, not community by
    # community (which jumped across the whole graph for each one).
    indptr, indices, w, k, comm, a = rin.indptr, rin.indices, rin.w, rin.k, rin.comm, rin.a
    order, lane = rin.order, rin.lane
    ref, ra, rsize, ext, pos = rs.ref, rs.ra, rs.rsize, rs.ext, rs.pos
    res_over_m2, theta, key, salt = draw.res_over_m2, draw.theta, draw.key, draw.salt
    n = order.shape[0]
    for ln in prange(nlanes):
        buf_r = np.empty(maxdeg + 1, np.int32)
        buf_w = np.empty(maxdeg + 1, np.float64)
        buf_g = np.empty(maxdeg + 1, np.float64)
        for t in range(n):
            v = order[t]
            if lane[v] != ln:
                continue
            c = comm[v]
            ac = a[c]
            own = ref[v]
            if rsize[own] != 1:
                continue  # others joined v: it is no longer a singleton
            kv = k[v]
            ev = ext[own]
            if ev < res_over_m2 * kv * (ac - kv) or indptr[v + 1] == indptr[v]:
                continue  # v is not well connected to its community
            cnt = 0
            for p in range(indptr[v], indptr[v + 1]):
                j = indices[p]
                if comm[j] != c:
                    continue
                r = ref[j]
                q = pos[r]
                if q < 0:
                    pos[r] = cnt
                    buf_r[cnt] = r
                    buf_w[cnt] = w[p]
                    cnt += 1
                else:
                    buf_w[q] += w[p]
            # Candidates: well-connected sub-communities with gain >= 0;
            # staying alone (gain 0) is one of them.
            best = 0.0
            ncand = 0
            for q in range(cnt):
                r = buf_r[q]
                pos[r] = -1
                g = buf_w[q] - res_over_m2 * kv * ra[r]
                rr = ra[r]
                if g < 0.0 or ext[r] < res_over_m2 * rr * (ac - rr):
                    continue
                buf_r[ncand] = r
                buf_w[ncand] = buf_w[q]
                buf_g[ncand] = g
                ncand += 1
                best = max(best, g)
            if ncand == 0:
                continue
            # An exponential race: candidate x (weight exp(lw_x), staying
            # alone with lw = -best / theta) draws log(-log U_x) - lw_x and
            # the smallest draw wins, which picks x with probability
            # proportional to its weight whatever order the candidates
            # were found in (rows come in another order on the GPU).
            h = counter_hash(key, v, salt)
            pick = -1
            win = _race(h, own, -best / theta)
            for q in range(ncand):
                d = _race(h, buf_r[q], (buf_g[q] - best) / theta)
                if d < win or (d == win and buf_r[q] < (own if pick < 0 else buf_r[pick])):
                    win = d
                    pick = q
            if pick < 0:
                continue
            r = buf_r[pick]
            ext[r] += ev - 2.0 * buf_w[pick]
            ra[r] += kv
            rsize[r] += 1
            rsize[own] = 0
            ref[v] = r


def refine(indptr, indices, w, k, comm, a, order, res_over_m2, theta, key, salt, lanes=1):
    """The refined partition of ``comm`` (community degrees ``a``).

    Returns ``ref``: the sub-community of each vertex, named after one of its
    members (ids below n), each inside one community of ``comm``. Linear in
    the arcs (plus n per lane); communities are refined in parallel
    (``lanes`` ranges of about equal arcs, one per thread), each walking its
    members in ``order``, so the result does not depend on the threads. (A
    Python wrapper: the compiled function with a default argument crashed in
    numba 0.68.)
    """
    return _refine(indptr, indices, w, k, comm, a, order, res_over_m2, theta, key, salt, lanes)


@njit(cache=True)
def _refine(indptr, indices, w, k, comm, a, order, res_over_m2, theta, key, salt, nlanes):
    n = indptr.shape[0] - 1
    ref = np.arange(n).astype(np.int32)
    ra = k.copy()  # degree of each sub-community
    rsize = np.ones(n, np.int32)
    ext = np.empty(n, np.float64)  # weight from a sub-community to the rest of its community
    _intra_weights(indptr, indices, w, comm, ext)
    lane, nl, maxdeg = _lanes(indptr, comm, nlanes)
    pos = np.full(n, -1, np.int32)
    _refine_lanes(
        nl,
        maxdeg,
        RefineInput(indptr, indices, w, k, comm, a, order, lane),
        Refinement(ref, ra, rsize, ext, pos),
        RefineDraw(res_over_m2, theta, key, salt),
    )
    return ref


_refine_1, _, _ = serial_builds(_refine, _intra_weights, _refine_lanes)


@njit(cache=True)
def leave_walk(indptr, indices, w, k, comm, a, order, res_over_m2):
    """The vertices of ``order`` that gain by leaving their community to be
    alone, in the walk's order: each v in turn leaves community C (weight
    ``a``, updated as vertices leave) when E(v, C - v) < (R / m2) k_v (a_C -
    k_v). ``comm`` (ids below a's length) is changed in place: a vertex that
    left gets -1. Rows may reach vertices outside ``order`` (another rank's
    ghosts), which stay where ``comm`` puts them."""
    left = np.empty(order.shape[0], np.int32)
    nleft = 0
    for t in range(order.shape[0]):
        v = order[t]
        c = comm[v]
        rest = a[c] - k[v]
        if rest <= 0.0:
            continue  # alone already (node weights are positive)
        e = 0.0
        for p in range(indptr[v], indptr[v + 1]):
            j = indices[p]
            if j != v and comm[j] == c:
                e += w[p]
        cost = res_over_m2 * k[v] * rest
        # v gains cost - e by leaving; the margin keeps rounding from moving
        # a vertex whose two sides are equal
        if cost - e <= 1e-12 * (cost + e):
            continue
        comm[v] = -1
        a[c] = rest
        left[nleft] = v
        nleft += 1
    return left[:nleft]


@njit(cache=True)
def _leave(indptr, indices, w, k, comm, order, res_over_m2):
    n = indptr.shape[0] - 1
    out = comm.astype(np.int32)
    a = np.zeros(n, np.float64)
    used = np.zeros(n, np.bool_)
    for v in range(n):
        a[out[v]] += k[v]
        used[out[v]] = True
    left = leave_walk(indptr, indices, w, k, out, a, order, res_over_m2)
    # Each vertex that left takes the smallest id no community had: one
    # exists, as v shared its community (node weights are positive).
    free = 0
    for t in range(left.shape[0]):
        while free < n and used[free]:
            free += 1
        if free == n:
            return out, t  # cannot happen (see above); the rest stay
        used[free] = True
        out[left[t]] = free
    return out, left.shape[0]


def leave(indptr, indices, w, k, comm, order, res_over_m2):
    """(comm with every vertex that gains by leaving its community alone,
    the number of those): each vertex v in ``order`` leaves community C when
    E(v, C - v) < (R / m2) k_v (a_C - k_v), a gain; an emptied id below n
    names its new community. One vertex at a time, so the result is the
    serial walk's. The paper's local moving offers every vertex an empty
    community; the batched sweeps offer only neighbours' communities, so
    CPM runs (see CPM_LEAVE) take this step after local moving."""
    return _leave(indptr, indices, w, k, comm, order, np.float64(res_over_m2))


class LeidenEngine(cl.LouvainEngine):
    """The CPU engine of the Leiden loop (:func:`nx_gpumatch.community.levels.leiden`):
    the Louvain engine, with lead sweeps only where local moving starts from
    singletons (see :meth:`move`), plus :meth:`refine`. ``theta``, ``key``,
    ``lead_sweeps`` and ``metric`` as in :func:`leiden_levels`."""

    family = "leiden"

    def __init__(
        self,
        indptr,
        indices,
        w,
        loop,
        rule,
        *,
        resolution,
        order,
        theta,
        key,
        parallel_min_arcs,
        lead_sweeps=LEAD_SWEEPS,
        metric="modularity",
    ):
        self.theta = checked_theta(theta)
        super().__init__(
            indptr,
            indices,
            w,
            loop,
            rule,
            resolution=resolution,
            order=order,
            lead_sweeps=0,
            parallel_min_arcs=parallel_min_arcs,
            node_weights=quality.node_weights(metric, indptr.shape[0] - 1),
        )
        self.resolution = quality.engine_resolution(metric, resolution, self.m2)
        self.drawn_order = metric == "cpm"  # see CPM_PASS_REL_TOL
        self.leaves = metric == "cpm" and CPM_LEAVE
        self.key = np.uint64(int(key) & (2**64 - 1))
        self._refine = _refine if self.threaded else _refine_1
        self._first_lead = int(lead_sweeps) if rule.sequential_arcs > 0 else 0

    def move(self, init):
        """Local moving as the Louvain engine's. From singletons (``init``
        None: the first level of the first pass) it begins with the lead
        sweeps, which let clusters grow one vertex at a time, as on Louvain's
        levels; from a partition (later levels and passes) it goes straight to
        batched sweeps, whose first one is checked instead (see CHASE): a
        lead sweep there re-walks every vertex for few moves (measured in
        docs/benchmarks.md)."""
        self._lead = self._first_lead if init is None else 0
        return super().move(init)

    def refine(self, comm, salt):
        """:func:`refine` of the current level, on the threads of the last
        local moving."""
        a = np.bincount(comm, weights=self.k, minlength=self.n)
        order = refinement_order(self.key, salt, self.n) if self.drawn_order else self.order
        args = (
            self.indptr,
            self.indices,
            self.w,
            self.k,
            comm,
            a,
            order,
            self.resolution / self.m2,
            self.theta,
            self.key,
            np.int64(salt),
            self._pos.shape[0] if self.threaded else 1,  # a lane per thread
        )
        if self._rents(_refine, args):
            with renting(self.family):
                return _refine_1(*args)
        return self._refine(*args)


def leiden_levels(indptr, indices, w, loop, options=None, *, order=None, **changes):
    """Generator over the levels of the Leiden method.

    Same graph arrays and yields as :func:`nx_gpumatch.cpu.louvain.louvain_levels`
    (``labels`` is the partition P after the level's local moving; ``info``
    adds ``refined``, the number of refined sub-communities, and ``pass``).
    Levels that move nothing are not yielded (except the very first), so
    modularity rises from one yield to the next. ``options``: the run's
    :class:`~nx_gpumatch.community.schedule.CommunityOptions` (None: the
    defaults), with the settings ``changes`` names changed: ``key`` drives
    the refinement's random choices, ``max_passes``, ``pass_tol`` and
    ``pass_rel_tol`` end the passes (see MAX_PASSES), the sweep settings
    tune the local moving as in the Louvain engine, and ``lead_sweeps``
    sweeps one vertex at a time begin the first level (see
    :meth:`LeidenEngine.move`). ``order`` (a permutation) orders the vertices
    of both phases (of local moving only for CPM, see CPM_PASS_REL_TOL).
    ``metric``: the objective, "modularity" or "cpm" (every vertex of node
    weight 1; the ``modularity`` of ``info`` is then 2 * CPM / m2, see
    :mod:`nx_gpumatch.community.quality`).
    """
    opts = community_options(options, **changes)
    engine = LeidenEngine(
        indptr,
        indices,
        w,
        loop,
        opts.sweep_rule(leiden=True),
        resolution=opts.resolution,
        order=order,
        theta=opts.theta,
        key=opts.key,
        parallel_min_arcs=opts.parallel_min_arcs,
        lead_sweeps=opts.lead_sweeps,
        metric=opts.metric,
    )
    yield from levels.leiden(engine, *opts.pass_ends())
