"""Leiden community detection on the CPU.

The method of Traag, Waltman and van Eck 2019 ("From Louvain to Leiden:
guaranteeing well-connected communities"). A level is

1. local moving: the Louvain engine's sweeps (:func:`nx_gpumatch.cpu.louvain.optimise`)
   from the previous level's partition P (singletons on the first level,
   which begins, as Louvain's levels do, with a sweep one vertex at a time);
   a vertex goes to a neighbour's community only, never to an empty one as
   in the paper, so a community of P can fall apart; where refinement then
   merges nothing, the level goes on from P cut into connected parts
   (:func:`nx_gpumatch.levels.leiden`). CPM runs then let every vertex
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
resolution for the same kernels (:mod:`nx_gpumatch.objective`); the CPM
test of well-connectedness is E(v, C-v) >= gamma n_v (n_C - n_v). The loop over passes and
levels is :func:`nx_gpumatch.levels.leiden`, shared with the GPU engine:
:class:`LeidenEngine` runs its levels here.

The random choice of the refinement hashes (key, vertex, refinement count),
and a community's refinement touches only its own members, so communities
are refined in parallel, each walking its members in the vertex order: the
result is the serial walk's. Results depend on the seed, never on the
number of threads.
"""

import numpy as np
from numba import prange

from nx_gpumatch import levels, objective
from nx_gpumatch.cpu import louvain as cl
from nx_gpumatch.cpu import njit
from nx_gpumatch.cpu.random import counter_hash, mix64

# Randomness of the refinement's choice (the paper's theta).
THETA = 0.01

# Passes: each pass after the first runs the method again on the input graph
# from the partition the one before ended with (igraph's n_iterations; the
# paper's iterated Leiden). They stop once a pass gains at most PASS_TOL or
# PASS_REL_TOL of the modularity reached. Measured gains of passes 2, 3, 4, 5:
# random graph (300k vertices, 2.4M edges) 7.3%, 1.1%, 0.33%; planted
# partition (200k vertices, 400 communities) 5.5%, 1.9%, 0.8%, 0.47%; each
# pass costs about as much as the first. Two passes are 0.7% below
# NetworKit's ParallelLeiden on the planted graph (1M vertices), three are
# above igraph and ParallelLeiden on both graphs, more cost a pass each for
# under 1%: so by default three passes on such graphs.
MAX_PASSES = 32
PASS_TOL = 1e-5
PASS_REL_TOL = 2.5e-2

# CPM runs (see nx_gpumatch.objective) refine each community in an order
# drawn anew for every refinement (refinement_order) and run passes until one
# gains nothing: with the vertex order every pass refined alike and the passes
# stopped at a worse optimum. Measured, CPM value against leidenalg's
# CPMVertexPartition run until stable, mean of seeds 0-4, 1000 vertices
# (random graph, 5000 edges; weighted planted partition), gamma 0.02 / 0.1:
# random -1.17% / -0.46% -> +0.22% / -0.17%, planted -0.21% / -1.23% ->
# -0.16% / -0.44%. With a 0.2% relative stop instead of none: -0.56% on
# the planted graph at 0.1.
CPM_PASS_REL_TOL = 0.0

# CPM runs let a vertex leave its community to be alone after local moving,
# on every level (see leave): as a community grows under CPM, a vertex on
# its rim can cost more (gamma times the others' size) than its edges into
# it bring, and only an empty community takes it; on aggregated levels this
# splits a community into its refined parts. Measured, CPM value against
# leidenalg's CPMVertexPartition run until stable, seeds 0-2, 2000 vertices,
# weighted planted partition at gamma 0.1: -0.80% / +0.63% / -0.62% ->
# -0.12% / +0.80% / -0.03%.
CPM_LEAVE = True

# Local moving of levels swept in batches stops once a sweep gains at most
# this share of the level's gain so far. Louvain's 1e-4 would sweep dense
# levels' tails, which the next pass sweeps again anyway. Measured, mean of
# seeds 0-2, one thread, 1e-4 -> 1e-2: random graph (300k vertices, 2.4M
# edges) CPU time -10%, Q 0.27746 -> 0.27760; sparse planted partition
# (300k, 600 communities) -16%, Q 0.65045 -> 0.65040; weighted planted
# partition (100k, 40 communities) same time, Q 0.5116 -> 0.5195. At 3e-2
# and 1e-1 Q falls on the first two.
SWEEP_REL_TOL = 1e-2


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
    bounds = cl._balanced_chunks(cost, max(1, min(nlanes, n)))
    lane_of = np.empty(n, np.int32)
    for i in range(bounds.shape[0] - 1):
        for c in range(bounds[i], bounds[i + 1]):
            lane_of[c] = i
    lane = np.empty(n, np.int32)
    for v in range(n):
        lane[v] = lane_of[comm[v]]
    return lane, bounds.shape[0] - 1, maxdeg


@njit(cache=True, parallel=True)
def _refine_lanes(
    nlanes,
    lane,
    order,
    indptr,
    indices,
    w,
    k,
    comm,
    a,
    res_over_m2,
    theta,
    key,
    salt,
    maxdeg,
    ref,
    ra,
    rsize,
    ext,
    pos,
):
    # A community's refinement reads and writes only entries of its own
    # members (sub-communities are named after members), so communities run
    # in parallel on shared arrays. Each lane walks all vertices in the
    # vertex order and refines those of its communities: every community is
    # walked in that order, and rows are read front to back, not community by
    # community (which jumped across the whole graph for each one).
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
        lane,
        order,
        indptr,
        indices,
        w,
        k,
        comm,
        a,
        res_over_m2,
        theta,
        key,
        salt,
        maxdeg,
        ref,
        ra,
        rsize,
        ext,
        pos,
    )
    return ref


_refine_1 = cl._serial_twin(
    _refine,
    "_refine_1",
    _intra_weights=cl._serial_twin(_intra_weights, "_intra_weights_1"),
    _refine_lanes=cl._serial_twin(_refine_lanes, "_refine_lanes_1"),
)


@njit(cache=True)
def _leave(indptr, indices, w, k, comm, order, res_over_m2):
    n = indptr.shape[0] - 1
    out = comm.astype(np.int32)
    a = np.zeros(n, np.float64)
    used = np.zeros(n, np.bool_)
    for v in range(n):
        a[out[v]] += k[v]
        used[out[v]] = True
    free = 0
    left = 0
    for t in range(n):
        v = order[t]
        c = out[v]
        rest = a[c] - k[v]
        if rest <= 0.0:
            continue  # alone already (node weights are positive)
        e = 0.0
        for p in range(indptr[v], indptr[v + 1]):
            j = indices[p]
            if j != v and out[j] == c:
                e += w[p]
        cost = res_over_m2 * k[v] * rest
        # v gains cost - e by leaving; the margin keeps rounding from moving
        # a vertex whose two sides are equal
        if cost - e <= 1e-12 * (cost + e):
            continue
        while free < n and used[free]:
            free += 1
        if free == n:
            break  # cannot happen: v shares c, so some id is unused
        used[free] = True
        out[v] = free
        a[c] = rest
        a[free] = k[v]
        left += 1
    return out, left


def leave(indptr, indices, w, k, comm, order, res_over_m2):
    """(comm with every vertex that gains by leaving its community alone,
    the number of those): each vertex v in ``order`` leaves community C when
    E(v, C - v) < (R / m2) k_v (a_C - k_v), a gain; an emptied id below n
    names its new community. One vertex at a time, so the result is the
    serial walk's. The paper's local moving offers every vertex an empty
    community; the batched sweeps offer only neighbours' communities, so
    CPM runs (see CPM_LEAVE) take this step after local moving."""
    return _leave(indptr, indices, w, k, comm, order, np.float64(res_over_m2))


def refinement_order(key, salt, n):
    """The vertex order of refinement ``salt`` of a CPM run (see
    CPM_PASS_REL_TOL): a permutation of n drawn from (key, salt), the same
    on every engine."""
    return np.random.default_rng([int(key), int(salt)]).permutation(n).astype(np.int32)


def connected_parts(indptr, indices, comm):
    """comm with every community cut into the connected parts of the
    subgraph it induces: int32 ids below n. Rarely needed (see
    :func:`nx_gpumatch.levels._leiden_pass`), so scipy's components do it."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    n = indptr.shape[0] - 1
    tail = np.repeat(np.arange(n, dtype=np.int32), np.diff(indptr))
    inside = comm[tail] == comm[indices]
    A = sp.csr_array(
        (np.ones(int(inside.sum()), np.int8), (tail[inside], indices[inside])), shape=(n, n)
    )
    return connected_components(A, directed=False)[1].astype(np.int32)


class LeidenEngine(cl.LouvainEngine):
    """The CPU engine of the Leiden loop (:func:`nx_gpumatch.levels.leiden`):
    the Louvain engine, with lead sweeps only where local moving starts from
    singletons (see :meth:`move`), plus :meth:`refine`. ``theta``, ``key``,
    ``lead_sweeps`` and ``metric`` as in :func:`leiden_levels`."""

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
        lead_sweeps=cl.LEAD_SWEEPS,
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
            node_weights=objective.node_weights(metric, indptr.shape[0] - 1),
        )
        self.resolution = objective.engine_resolution(metric, resolution, self.m2)
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
        lead sweep there re-walks every vertex for few moves. Measured against
        no lead sweep, paired runs, 300k vertices: random graph time 0.93x, Q
        0.27681 -> 0.27719; weighted planted partition 0.89x, Q 0.65063 ->
        0.65225."""
        self._lead = self._first_lead if init is None else 0
        return super().move(init)

    def split(self, comm):
        return connected_parts(self.indptr, self.indices, comm)

    def leave(self, comm):
        """:func:`leave` on the current level, in its vertex order."""
        return leave(
            self.indptr,
            self.indices,
            self.w,
            self.k,
            comm,
            self.order,
            self.resolution / self.m2,
        )

    def refine(self, comm, salt):
        """:func:`refine` of the current level, on the threads of the last
        local moving."""
        a = np.bincount(comm, weights=self.k, minlength=self.n)
        order = refinement_order(self.key, salt, self.n) if self.drawn_order else self.order
        return self._refine(
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


def leiden_levels(
    indptr,
    indices,
    w,
    loop,
    *,
    resolution=1.0,
    theta=THETA,
    key=0,
    coarse_threshold=1e-7,
    fine_below=100_000,
    order=None,
    max_sweeps=cl.MAX_SWEEPS,
    max_passes=MAX_PASSES,
    pass_tol=PASS_TOL,
    pass_rel_tol=None,
    sequential_arcs=cl.SEQUENTIAL_ARCS,
    parallel_min_arcs=None,
    sweep_rel_tol=None,
    margins=True,
    chase=cl.CHASE,
    lead_sweeps=cl.LEAD_SWEEPS,
    metric="modularity",
):
    """Generator over the levels of the Leiden method.

    Same graph arrays and yields as :func:`nx_gpumatch.cpu.louvain.louvain_levels`
    (``labels`` is the partition P after the level's local moving; ``info``
    adds ``refined``, the number of refined sub-communities, and ``pass``).
    Levels that move nothing are not yielded (except the very first), so
    modularity rises from one yield to the next. ``key`` (a 64-bit int)
    drives the refinement's random choices, ``order`` (a permutation) the
    vertex order of both phases (of local moving only for CPM, see
    CPM_PASS_REL_TOL); ``max_passes``, ``pass_tol`` and ``pass_rel_tol``
    (None: by the metric) end the passes (see MAX_PASSES). ``sequential_arcs``,
    ``parallel_min_arcs``, ``margins`` and ``chase`` tune the local moving as
    in the Louvain engine; ``lead_sweeps`` sweeps one vertex at a time begin
    the first level (see :meth:`LeidenEngine.move`). ``metric``: the
    objective, "modularity" or "cpm" (every vertex of node weight 1; the
    ``modularity`` of ``info`` is then 2 * CPM / m2, see
    :mod:`nx_gpumatch.objective`).
    """
    rule = cl.SweepRule(
        coarse_threshold=coarse_threshold,
        fine_below=fine_below,
        sequential_arcs=sequential_arcs,
        max_sweeps=max_sweeps,
        rel_tol=SWEEP_REL_TOL if sweep_rel_tol is None else sweep_rel_tol,
        margins=margins,
        chase=chase,
    )
    engine = LeidenEngine(
        indptr,
        indices,
        w,
        loop,
        rule,
        resolution=resolution,
        order=order,
        theta=theta,
        key=key,
        parallel_min_arcs=parallel_min_arcs,
        lead_sweeps=lead_sweeps,
        metric=metric,
    )
    yield from levels.leiden(engine, max_passes, pass_tol, pass_rel_tol_of(metric, pass_rel_tol))


def pass_rel_tol_of(metric, pass_rel_tol):
    """The relative gain that ends the passes (None: by the metric, see
    CPM_PASS_REL_TOL)."""
    if pass_rel_tol is not None:
        return float(pass_rel_tol)
    return CPM_PASS_REL_TOL if objective.check_metric(metric) == "cpm" else PASS_REL_TOL


def checked_theta(theta):
    theta = float(theta)
    if not theta > 0.0:
        raise ValueError(f"theta must be positive, got {theta!r}")
    return theta
