"""Distributed Leiden community detection on MPI: the method of Traag,
Waltman and van Eck ("From Louvain to Leiden: guaranteeing well-connected
communities", Scientific Reports 2019) on the distributed Louvain's levels
(:mod:`.louvain`: 1D vertex partition with ghosts, local moving in colour
rounds, aggregation by the owners of the coarse vertices).

A level is

1. local moving from the level's starting partition P0 (singletons on the
   first level of the first pass), as the distributed Louvain moves; on
   levels of at least ``schedule.SEQUENTIAL_ARCS`` arcs until a sweep gains
   at most 1% of the level's gain so far (the shared-memory Leiden's rule for
   its batched levels, ``schedule.LEIDEN_SWEEP_REL_TOL``: later passes sweep
   the tail again); CPM runs
   then let every vertex that gains by it leave its community to be alone
   and move again, until none does (the shared-memory engines' step, see
   ``schedule.CPM_LEAVE``);
2. refinement: each community C of the result P is split into singletons,
   and, in the colour rounds of local moving, each singleton v that is well
   connected to C (E(v, C - v) >= (R / m2) k_v (a_C - k_v)) joins a well
   connected sub-community of C among its neighbours' with non-negative
   gain, drawn with probability proportional to exp(gain / theta), staying
   alone included (vertices in the level's order; for CPM in an order drawn
   anew for each refinement, as the shared engines walk them): the
   shared-memory refinement kernel
   (``cpu.leiden._refine_lanes``) runs each round inside each rank on the
   round's vertices, against the sub-communities' totals summed over the
   ranks at the round's start and its own joins since. Only singletons move
   and each joins a sub-community through an edge to one of its members, so
   every sub-community stays connected, also across ranks: refinement keeps
   to rounds of one colour of the rank graph, so two neighbours on two ranks
   never move in one round (local moving lets them; refinement must not, or
   vertices of two ranks could join a singleton whose member leaves). For the
   same reason the ranks' changes to the totals add up: a round's totals are
   the last round's plus the sum of what each rank's kernel changed, with no
   pass over the arcs;
3. aggregation on the refined partition; each new vertex starts the next
   level in the community of P that holds it.

A rank alone (one rank) runs the shared-memory Leiden's steps on its graph:
local moving and aggregation as the distributed Louvain's rank alone, and
the refinement kernel as it is, a lane of communities per thread.

Between levels the loop is the shared-memory one
(:func:`nx_gpumatch.community.levels.leiden`): a pass ends once local moving
leaves every vertex of a level alone, a level whose refinement merges
nothing goes on from P cut into connected parts (:func:`connected_parts`,
min-label propagation over the ranks), and passes rerun the method from the
partition found while they gain. So every community of the result is
connected (:meth:`DistributedCommunities.connected` checks it).

The objective is a choice of vertex weights and resolution for the same
kernels (:mod:`nx_gpumatch.community.quality`): weighted degrees for
modularity, node weights (1 per input vertex, summed into coarse vertices)
and R = gamma * m2 for CPM. Every decision depends only on the input, the
seed and the number of ranks, so two runs give the same labels.
"""

import contextlib
import time

import numpy as np

from nx_gpumatch._validation import check_positive_int
from nx_gpumatch.community import quality
from nx_gpumatch.community.levels import MAX_LEVELS, spread_singletons
from nx_gpumatch.community.schedule import (
    LEAD_SWEEPS,
    LEIDEN_SWEEP_REL_TOL,
    MAX_PASSES,
    PASS_TOL,
    SWEEP_TOL,
    THETA,
    checked_theta,
    community_options,
    pass_rel_tol_of,
)
from nx_gpumatch.cpu import num_threads, serial_builds
from nx_gpumatch.cpu.leiden import (
    RefineDraw,
    RefineInput,
    Refinement,
    _refine,
    _refine_1,
    _refine_lanes,
    leave_walk,
)
from nx_gpumatch.cpu.louvain.constants import PARALLEL_MIN_ARCS
from nx_gpumatch.distributed._comm import (
    Neighbours,
    abort_on_error,
    allgather,
    allreduce,
    allreduce_max,
    allreduce_sum,
    check,
    get_comm,
    same,
)
from nx_gpumatch.distributed._levels import _Level, compact_ids, intra_weights, without_isolated
from nx_gpumatch.distributed.communities import CommunityStats, DistributedCommunities
from nx_gpumatch.distributed.louvain import (
    _check_params,
    _mix,
    _Run,
    weighted_partition,
)
from nx_gpumatch.distributed.partition import small_call

__all__ = ["leiden_communities"]

(_refine_round,) = serial_builds(_refine_lanes)  # one rank, one thread: no thread team

# The refinement's key when no seed is given.
_DEFAULT_KEY = 0x5EED_1E1D


class _LeidenRun(_Run):
    """One call's state, with the Leiden steps."""

    def __init__(self, comm, resolution, seed, stats, metric, theta):
        super().__init__(comm, resolution, 0.0, seed, stats)
        self.tol = SWEEP_TOL  # as the shared-memory Leiden's sweeps
        self.rel_tol = LEIDEN_SWEEP_REL_TOL
        self.metric = metric
        self.gamma = float(resolution)
        self.theta = checked_theta(theta)
        key = (_DEFAULT_KEY if seed is None else int(seed)) + comm.rank * 0x9E3779B97F4A7C15
        # the refinement kernel hashes local ids: a key per rank draws apart
        self.key = np.uint64(key & (2**64 - 1))

    def sweep_rule(self):
        return community_options().sweep_rule(leiden=True)

    def lead_sweeps(self, init):
        # as the shared-memory Leiden: from singletons only
        return LEAD_SWEEPS if init is None else 0

    def set_weight(self, m2):
        self.m2 = m2
        self.resolution = quality.engine_resolution(self.metric, self.gamma, m2)

    def exchange_all(self, lvl, values):
        """``values`` (per local vertex) with the ghosts' entries from their
        owners."""
        old = np.full(values.shape[0], -1, np.int64)
        new = np.asarray(values, np.int64).copy()
        self.exchange(lvl, Neighbours(self.comm, lvl.neighbours), old, new)
        return new

    def count(self, flags, what):
        return allreduce_sum(self.comm, int(flags), what)

    # ------------------------------------------------------------ refinement
    def singleton_totals(self, lvl, in_comm):
        """(weight, size, weight to the rest of the community) of each vertex
        alone (arrays by id over the ranks); ``in_comm``: each vertex's arc
        weight into its community."""
        own, n = lvl.owned_ids, lvl.n
        local = np.zeros(3 * n, np.float64)
        ids = lvl.gids[own]
        local[ids] = lvl.k[own]
        local[n + ids] = 1.0
        local[2 * n + ids] = in_comm[own]
        got = allreduce(self.comm, local, "sum", "the sub-community totals")
        return got[:n], got[n : 2 * n].astype(np.int64), got[2 * n :]

    def round_totals(self, Ur, totals, rs):
        """``totals`` (weight, size, weight to the rest of the community by
        id) after a refinement round: each rank's kernel updated ``rs`` (the
        totals of the ids ``Ur``) for its own moves, and the changes add up
        over the ranks because two neighbours on two ranks never move in
        one round. A vertex that left its singleton empties it; the kernel
        zeroes only its size."""
        ra, rsize, ext = totals
        n = ra.shape[0]
        d_ra, d_ext = rs.ra - ra[Ur], rs.ext - ext[Ur]
        emptied = (rs.rsize == 0) & (rsize[Ur] > 0)
        d_ra[emptied] = -ra[Ur[emptied]]
        d_ext[emptied] = -ext[Ur[emptied]]
        local = np.zeros(3 * n, np.float64)
        local[Ur] = d_ra
        local[n + Ur] = rs.rsize - rsize[Ur]
        local[2 * n + Ur] = d_ext
        got = allreduce(self.comm, local, "sum", "the sub-community totals")
        return ra + got[:n], rsize + got[n : 2 * n].astype(np.int64), ext + got[2 * n :]

    def refine(self, lvl, level, comm_g, a, salt):
        """The refinement of ``comm_g`` (community weights ``a``): (sub-community
        id per local vertex, named after a member; their weights; sizes)."""
        t = time.perf_counter()
        nl, own = lvl.gids.shape[0], lvl.owned_ids
        Uc, cl = compact_ids(comm_g, lvl.n)
        a_loc = np.ascontiguousarray(a[Uc])
        lane = np.zeros(nl, np.int32)
        maxdeg = max(1, int(np.diff(lvl.indptr).max()) if nl else 1)
        if self.metric == "cpm":  # a new order for each refinement, as the shared engines
            own = lvl.owned_ids
            verts = own[np.argsort(_mix(self.seed or 0, (1 << 40) + salt, lvl.gids[own]))]
        else:
            verts = self.sweep_order(lvl, level)
        verts = verts.astype(np.int32)
        self.stats.refinements += 1
        if self.comm.size == 1:
            return self.refine_alone(lvl, comm_g, a, verts, salt, t)
        parts = self.rounds(lvl, verts, coloured=True)(level, (1 << 19) + salt)
        nb = Neighbours(self.comm, lvl.neighbours)
        ref_g = lvl.gids.astype(np.int64)
        in_comm = intra_weights(lvl, comm_g)
        ra, rsize, ext = self.singleton_totals(lvl, in_comm)
        t = self._time("refine", t)
        for r, part in enumerate(parts):
            Ur, ref = compact_ids(ref_g, lvl.n)
            rs = Refinement(
                ref,
                ra[Ur].copy(),
                rsize[Ur].astype(np.int32),
                ext[Ur].copy(),
                np.full(Ur.shape[0], -1, np.int32),
            )
            _refine_round(
                1,
                maxdeg,
                RefineInput(lvl.indptr, lvl.indices, lvl.w, lvl.k, cl, a_loc, part, lane),
                rs,
                RefineDraw(
                    self.resolution / self.m2,
                    self.theta,
                    self.key,
                    np.int64(salt * len(parts) + r),
                ),
            )
            new = ref_g.copy()
            new[own] = Ur[ref[own]]
            t = self._time("refine", t)
            self.exchange(lvl, nb, ref_g, new)
            ref_g = new
            ra, rsize, ext = self.round_totals(Ur, (ra, rsize, ext), rs)
            self.stats.rounds += 1
            t = self._time("communicate", t)
        return ref_g, ra, rsize

    def refine_alone(self, lvl, comm_g, a, verts, salt, t):
        """:meth:`refine` on a rank with no other (local ids are the level's
        ids): the shared-memory refinement kernel on the whole level, a lane
        per thread on large levels (its result does not depend on them), the
        vertices walked in the order ``verts``."""
        n = lvl.gids.shape[0]
        threaded = num_threads() > 1 and lvl.arcs >= PARALLEL_MIN_ARCS
        ref = (_refine if threaded else _refine_1)(
            lvl.indptr,
            lvl.indices,
            lvl.w,
            lvl.k,
            comm_g.astype(np.int32),
            np.ascontiguousarray(a, np.float64),
            verts,
            self.resolution / self.m2,
            self.theta,
            self.key,
            np.int64(salt),
            num_threads() if threaded else 1,
        )
        ref_g = ref.astype(np.int64)
        self.stats.rounds += 1
        self._time("refine", t)
        return ref_g, np.bincount(ref_g, lvl.k, minlength=n), np.bincount(ref_g, minlength=n)

    # ------------------------------------------------------------ CPM leave
    def leave(self, lvl, level, comm_g, a, size):
        """``comm_g`` with every owned vertex that gains by it alone (each
        rank walks its vertices against the totals of ``comm_g`` and its own
        leaves; the vertices that left take, in rank order, the smallest ids
        no community has): (the partition, the number of vertices that left)."""
        t = time.perf_counter()
        Uc, cl = compact_ids(comm_g, lvl.n)
        left = leave_walk(
            lvl.indptr,
            lvl.indices,
            lvl.w,
            lvl.k,
            cl,
            np.ascontiguousarray(a[Uc]),
            self.sweep_order(lvl, level).astype(np.int32),
            self.resolution / self.m2,
        )
        t = self._time("move", t)
        counts = allgather(self.comm, int(left.shape[0]), "the vertices leaving")
        free = np.flatnonzero(size == 0)
        start = sum(counts[: self.comm.rank])
        # Ranks may leave one community together on stale totals, emptying
        # it; the free ids then run short, and the last leaves stay.
        take = max(0, min(left.shape[0], free.shape[0] - start))
        new = comm_g.copy()
        new[left[:take]] = free[start : start + take]
        self.exchange(lvl, Neighbours(self.comm, lvl.neighbours), comm_g, new)
        self._time("communicate", t)
        return new, min(sum(counts), free.shape[0])

    def settle(self, lvl, level, moved):
        """Local moving's result with the vertices that gain by it alone
        moved out and local moving again, until none leaves; a round that
        ends lower than it began (ranks leaving one community on stale
        totals) is not kept."""
        comm_g, a, size, q0, q, moves, sweeps = moved
        for _ in range(MAX_LEVELS):
            alone, left = self.leave(lvl, level, comm_g, a, size)
            if not left:
                break
            nxt = self.move(lvl, level, alone, before=False)
            if nxt[4] <= q:
                break
            comm_g, a, size, _, q, more, extra = nxt
            moves += left + more
            sweeps += extra
        return comm_g, a, size, q0, q, moves, sweeps

    # ------------------------------------------------------------ levels
    def parts(self, lvl, comm_g):
        """(``comm_g`` with every community cut into the connected parts of
        the subgraph it induces, each named after its smallest vertex id;
        the number of parts)."""
        return connected_parts(self, lvl, comm_g)

    def labels_of(self, lvl, at, values):
        """values (per local vertex) of the level vertices ``at`` of this
        rank's input vertices."""
        t = time.perf_counter()
        out = values[lvl.owned_ids] if lvl.block is None else self.lookup(lvl, at, values)
        self._time("labels", t)
        return out

    def one_pass(self, lvl0, init, salt, first):
        """One run of the method from the partition ``init`` of the input
        graph (per local vertex of level 0; None: singletons); yields
        (labels, info) per level kept; returns (labels, objective, next salt).
        See :func:`nx_gpumatch.community.levels._leiden_pass`, which this
        follows step for step."""
        cpm = self.metric == "cpm"
        lvl, level = lvl0, 0
        at = None  # each owned input vertex's vertex at this level (level 0: itself)
        last, q_last, cut = None, None, False
        for _ in range(MAX_LEVELS):
            nv = lvl.n
            moved = self.move(lvl, level, init, before=False)
            if cpm:
                moved = self.settle(lvl, level, moved)
            comm_g, a, size, _, q, moves, sweeps = moved
            used = size > 0
            kp = int(used.sum())
            pid = np.cumsum(used) - 1
            if kp == nv:
                ref_g, ra, rsize = comm_g, a, size
            else:
                ref_g, ra, rsize = self.refine(lvl, level, comm_g, a, salt)
                salt += 1
            K = int((rsize > 0).sum())
            if q_last is None or moves or cut:
                last, q_last = self.labels_of(lvl, at, pid[comm_g]), float(q)
                if moves or first or cut:
                    yield (
                        last,
                        {
                            "vertices": nv,
                            "modularity": q_last,
                            "moves": moves,
                            "sweeps": sweeps,
                            "refined": K,
                        },
                    )
                first = False
            cut = False
            if kp == nv:
                break
            if K == nv:
                # Refinement merged nothing: go on from P cut into connected
                # parts, or aggregate on P when its communities are connected.
                pieces, count = self.parts(lvl, comm_g)
                if count > kp:
                    init, cut = pieces, True
                    continue
                ref_g, ra, rsize = comm_g, a, size
            rused = rsize > 0
            rid = np.cumsum(rused) - 1
            K = int(rused.sum())
            own = lvl.owned_ids
            start = np.full(K, -1, np.int64)
            start[rid[ref_g[own]]] = pid[comm_g[own]]
            start = allreduce(self.comm, start, "max", "the next level's partition")
            at = self.labels_of(lvl, at, rid[ref_g])
            lvl = self.coarse(lvl, rid[ref_g], K, ra[rused] if cpm else None)
            level += 1
            init = start[lvl.gids]
        return last, q_last, salt


def connected_parts(run, lvl, comm_g):
    """(comm_g with every community cut into the connected parts of the
    subgraph it induces, each part named after its smallest vertex id, per
    local vertex; the number of parts over all ranks). Parts are found inside
    each rank (scipy's components on the owned rows), then the smallest id
    of each is spread over the ranks through the ghosts until no label
    changes: one exchange per rank crossed."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    t = time.perf_counter()
    nl, own = lvl.gids.shape[0], lvl.owned_ids
    tail, head = lvl.tails(), lvl.indices
    inside = comm_g[tail] == comm_g[head]
    A = sp.csr_array(
        (np.ones(int(inside.sum()), np.int8), (tail[inside], head[inside])), shape=(nl, nl)
    )
    ncomp, comp = connected_components(A, directed=False)
    lab = lvl.gids.astype(np.int64)
    nb = Neighbours(run.comm, lvl.neighbours)
    while True:
        low = np.full(ncomp, np.iinfo(np.int64).max, np.int64)
        np.minimum.at(low, comp, lab)
        new = lab.copy()
        new[own] = low[comp[own]]
        changed = int(np.count_nonzero(new[own] != lab[own]))
        run.exchange(lvl, nb, lab, new)
        lab = new
        if run.count(changed, "the connected parts") == 0:
            break
    count = run.count(int(np.count_nonzero(lab[own] == lvl.gids[own])), "the connected parts")
    run._time("refine", t)
    return lab, count


def _leiden(run, p, max_level, max_passes, pass_rel_tol):
    """The passes; returns (owned ids, labels, the engine's objective q)."""
    t = time.perf_counter()
    cpm = run.metric == "cpm"
    lvl0 = _Level.from_partition(p, np.ones(p.gids.shape[0]) if cpm else None)
    vertices = lvl0.gids[lvl0.owned_ids].astype(np.int64)
    k_sum = np.array([float(lvl0.degrees[lvl0.owned_ids].sum())])
    run.set_weight(float(allreduce(run.comm, k_sum, "sum", "the total weight")[0]))
    run.n = p.num_nodes
    kept = None
    if run.comm.size == 1 and not cpm:  # (CPM counts every vertex in its sizes)
        lvl0, kept = without_isolated(lvl0)
    run._time("setup", t)
    if run.m2 <= 0.0:  # no edges (or only zero weights): every vertex alone
        return vertices, vertices.copy(), 0.0
    labels, q = _passes(run, lvl0, max_level, max_passes, pass_rel_tol)
    if kept is not None:
        labels = spread_singletons(labels, kept, p.num_nodes)
    return vertices, labels, q


def _passes(run, lvl0, max_level, max_passes, pass_rel_tol):
    """The passes of :func:`_leiden` from level 0 ``lvl0``: (the labels of
    its owned vertices, the engine's objective q)."""
    part = labels = q_out = q_part = None
    salt = 0
    for pss in range(max(1, int(max_passes))):
        step = run.one_pass(lvl0, part, salt, pss == 0)
        moves = sweeps = 0
        while True:
            try:
                lab, info = next(step)
            except StopIteration as stop:
                end, q_end, salt = stop.value
                break
            if pss == 0:
                labels, q_out = lab, info["modularity"]
                if _kept(run, info, max_level):
                    return labels, q_out
            else:
                moves += info["moves"]
                sweeps += info["sweeps"]
        if q_part is not None:
            if q_end <= q_part:
                break
            labels, q_out = end, q_end
            info = {"vertices": run.n, "modularity": q_end, "moves": moves}
            top = int(end.max()) if end.shape[0] else -1
            refined = allreduce_max(run.comm, top, "the count") + 1
            info.update({"sweeps": sweeps, "refined": refined})
            if _kept(run, info, max_level):
                break
            if q_end - q_part <= max(PASS_TOL, pass_rel_tol * abs(q_end)):
                break
        q_part = q_end
        part = run.exchange_all(lvl0, _on_level0(lvl0, end))
    return labels, q_out


def _on_level0(lvl0, labels):
    out = np.zeros(lvl0.gids.shape[0], np.int64)
    out[lvl0.owned_ids] = labels
    return out


def _kept(run, info, max_level):
    """Record a level kept (its ``modularity`` is the engine's q, see
    :mod:`nx_gpumatch.community.quality`; ``quality`` the objective's value);
    True once ``max_level`` levels are."""
    st = run.stats
    st.levels += 1
    info = dict(info)
    q = info.pop("modularity")
    if run.metric == "modularity":
        info["modularity"] = q
    info["quality"] = quality.quality(run.metric, q, run.m2, run.gamma, run.n)
    st.level_info.append(info)
    return max_level is not None and st.levels >= max_level


def leiden_communities(
    part,
    *,
    resolution=1,
    max_level=None,
    seed=None,
    theta=THETA,
    passes=None,
    metric="modularity",
    comm=None,
    num_nodes=None,
    owner=None,
    duplicates="last",
):
    """Communities by the Leiden method of a graph spread over the ranks.

    Collective. ``part`` is this rank's share of the edges, as for
    :func:`nx_gpumatch.distributed.louvain_communities` (weights non-negative,
    a missing weight counts 1). The parameters are those of
    ``nx_gpumatch.leiden_communities``: ``metric`` "modularity" or "cpm"
    (networkx's ``constant_potts_model`` with ``resolution`` as gamma and
    every input vertex of weight 1), ``theta`` the refinement's randomness in
    units of edge weight, ``passes`` at most this many passes (None: until
    one gains under 2.5% of the modularity; CPM: until one gains nothing),
    ``max_level`` at most this many levels, ``seed`` (an int, or None for the
    vertex-id order and a fixed key) orders the sweeps and drives the
    refinement's draws. Every parameter must be the same on every rank.

    Returns a :class:`DistributedCommunities` (its ``quality_found`` is the
    objective's value). Every community is connected; the same input, seed
    and number of ranks give the same labels.
    """
    comm = get_comm(comm)

    def checks():
        _check_params(resolution, 0.0, max_level, seed)
        checked_theta(theta)
        quality.check_metric(metric)
        check_positive_int(passes, "passes")

    check(comm, checks)
    same(
        comm,
        "resolution, max_level, seed, theta, passes, metric",
        (resolution, max_level, seed, theta, passes, metric),
    )
    stats = CommunityStats()
    p = weighted_partition(comm, part, stats, num_nodes, owner, duplicates)
    seed = None if seed is None else int(seed)
    run = _LeidenRun(comm, resolution, seed, stats, metric, theta)
    max_passes = MAX_PASSES if passes is None else int(passes)
    with small_call(p, "leiden") or contextlib.nullcontext():
        vertices, labels, q = abort_on_error(
            comm, _leiden, run, p, max_level, max_passes, pass_rel_tol_of(metric, None)
        )
    stats.finish(comm)
    n = p.num_nodes
    value = quality.quality(metric, q, run.m2, resolution, n)
    return DistributedCommunities(
        p, vertices, labels, q, run.gamma, stats, comm, metric=metric, quality_found=value
    )


def communities_connected(p, labels, comm):
    """True if every community of ``labels`` (per owned vertex of the
    Partition ``p``) is connected in the input graph (collective)."""
    run = _LeidenRun(comm, 1.0, None, CommunityStats(), "modularity", THETA)
    lvl = _Level.from_partition(p)
    lab = run.exchange_all(lvl, _on_level0(lvl, labels))
    _, parts = connected_parts(run, lvl, lab)
    top = int(labels.max()) if labels.size else -1
    top = allreduce_max(run.comm, top, "connected()")
    seen = np.zeros(top + 1, np.int64)
    seen[labels] = 1
    K = int(allreduce(run.comm, seen, "max", "connected()").sum())  # labels may have gaps
    return parts == K
