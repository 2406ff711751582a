"""Distributed Louvain community detection on MPI, after Vite (Ghosh et al.,
"Distributed Louvain Algorithm for Graph Community Detection", IPDPS 2018).

Each level's graph is held in a 1D vertex partition with ghosts (level 0:
:func:`~nx_gpumatch.distributed.partition_edges`, self-loops kept; coarse
levels: blocks of the dense community ids). A level is:

* Local moving, in sweeps, each cut into MOVE_ROUNDS rounds drawn by hash
  each sweep, as Vite lets ranks move at once: two neighbours on two ranks
  may move in one round, each against the other's state at the round's
  start. In a round each rank moves its
  vertices of the round one at a time, degree bucket by degree bucket as the
  shared-memory engine does (on a copy of the level relabelled in that
  order, ``_levels.sweep_view``, so rows are read front to back), with its
  move kernel (``cpu.louvain.moves``),
  against its own moves so far and, for ghosts and community totals, the
  state at the round's start. After the round the changed community ids of
  boundary vertices go to the ranks where they are ghosts (one batch per
  neighbour rank) and the community totals (degrees and sizes, indexed by
  community id) are summed over the ranks. A round that lowers modularity
  (ranks feeding one community on stale totals, neighbours swapping) is
  taken back. After the first sweep a vertex is looked at again only once
  its neighbours' moves may have changed its choice, as in the
  shared-memory batched sweeps: a mover charges each neighbour a bound on
  how much it lowers that neighbour's margin (how much more its choice
  gained than the next best) and wakes it once the charges exceed it; a
  ghost whose community changed wakes its owned neighbours. Each rank's
  inner weight follows the round: the change each move brings (which the
  move kernel computes to choose it; an arc to a ghost taken once), then
  the arcs into the ghosts that changed; no pass over the arcs of every
  vertex that changed (a tenth of the time at two ranks). Sweeps end once one
  gains at most the sweep tolerance, or on levels of SEQUENTIAL_ARCS arcs
  or more at most SWEEP_REL_TOL of the level's gain (the shared-memory
  engine's rule for its batched levels); on smaller levels a sweep that
  ends the level must have looked at every vertex, as the shared-memory
  sequential sweeps confirm theirs. A rank alone (one rank: no ghosts, no
  community shared with another rank) runs the shared-memory engine's local
  moving instead (``cpu.louvain.engine``: its batched, threaded sweeps on
  large levels and its sweep rule), in the order above, on the vertices
  with an edge or a self-loop (the others never move: each becomes a
  community of its own at the end, as the shared-memory front ends do).
* Aggregation: the non-empty communities get dense ids in id order; each
  rank merges its own arcs per pair of communities (a sparse accumulator
  per community, inner arcs and self-loops into the self-loop), packs the
  pairs as 16-byte rows grouped by the owner of their tail's community
  (blocks of the dense ids), and the owners merge what they receive
  (counting sort by tail, then the same accumulator), never holding more
  than a few arrays of the rows they send or get (the kernels are in
  ``_levels``, with the level's graph). With one rank the
  shared-memory engine's aggregation of the level it moved is the coarse
  graph.

Community totals are summed as dense arrays over the level's vertices (one
reduction of 2n numbers per round): simple and exact to reproduce, but each
rank holds O(n) of them; an owner-of-community reduction (Vite's) would
scale further.

Levels follow networkx's semantics (as ``nx_gpumatch.louvain_communities``):
the first level is always kept, later ones only if they moved something,
and the method stops once a level gains at most ``threshold``.

Every decision depends only on the input, ``seed`` and the number of ranks:
the sweep order and ties follow a priority per vertex (its id, or a hash of
the seed, level and id), sums are taken in fixed orders, and messages are
applied in rank order; so two runs give the same labels.
"""

import collections
import contextlib
import time

import numpy as np

from nx_gpumatch._validation import check_finite, check_max_level
from nx_gpumatch.community.levels import spread_singletons
from nx_gpumatch.community.schedule import (
    LEAD_SWEEPS,
    MAX_SWEEPS,
    MOVE_BUCKETS,
    SEQUENTIAL_ARCS,
    SWEEP_REL_TOL,
    SWEEP_TOL,
    community_options,
    degree_buckets,
)
from nx_gpumatch.cpu import njit
from nx_gpumatch.cpu.csr import inverse_permutation, permute_rows
from nx_gpumatch.cpu.louvain.aggregation import own_buffers, renumber
from nx_gpumatch.cpu.louvain.engine import LouvainEngine
from nx_gpumatch.cpu.louvain.moves import _best_move, _commit, _units
from nx_gpumatch.cpu.louvain.moves import _inner_change as _charge
from nx_gpumatch.cpu.louvain.state import Level, MoveState, Scratch
from nx_gpumatch.distributed._comm import (
    Neighbours,
    abort_on_error,
    allgather,
    allreduce,
    allreduce_sum,
    alltoallv,
    alltoallv_grouped,
    check,
    get_comm,
    same,
)
from nx_gpumatch.distributed._levels import (
    _community_rows,
    _Level,
    _merge_coarse,
    _pack_coarse,
    compact_ids,
    intra_weights,
    sweep_view,
    without_isolated,
)
from nx_gpumatch.distributed.b_matching import as_partition
from nx_gpumatch.distributed.communities import (
    CommunityStats,
    DistributedCommunities,
    squares,
)
from nx_gpumatch.distributed.partition import block_size, small_call

__all__ = ["louvain_communities"]

GHOST = np.int32(1)  # the commit batch of ghosts, and of every owned vertex's move

# A level relabelled for the shared-memory engine (see _Run._relabelled).
Relabelled = collections.namedtuple("Relabelled", "indptr indices w loop k order new rank")

# Wake a neighbour of a mover only once the move's charges exceed its margin
# (False: every neighbour of a mover is looked at again).
MARGINS = True

# Rounds per sweep of local moving with several ranks. Neighbours on two ranks
# may move in one round, each against the other's state at the round's start
# (a singleton never joins a ghost singleton of higher priority, and a round
# that lowers modularity is taken back). A round per colour of the rank graph
# (no two neighbours together) took P rounds per sweep wherever every rank
# neighbours every other: one rank moving its boundary while the others wait
# (the 100k/800k Leiden at four ranks: 15.7 s, 10.6 s with two rounds).
MOVE_ROUNDS = 2


# ---------------------------------------------------------------- kernel
@njit(cache=True)
def _sweep(verts, lv, st, scratch, res_over_m2, units, n_own):
    """One sweep over the owned vertices ``verts`` (the sweep view's ids, in
    order; owned vertices are ids below ``n_own``, ghosts the others) that
    are due a look (``st.active``, cleared as they are looked at): each joins
    its best community and the move is committed before the next is
    computed. A vertex looked at keeps its margin (``st.slack``, in
    ``units`` per unit of weight); a move charges the mover's neighbours a
    bound on how much it lowers theirs and wakes those whose charges exceed
    their margin (the shared-memory batched sweeps' rule; ``units`` 0: every
    neighbour wakes). Owned vertices are batch 0 and ghosts batch GHOST;
    moving as GHOST, a singleton never joins a ghost singleton of higher
    priority (the kernel's rule for vertices moving blindly together: a
    ghost may move in the same round). Returns (moves, the change of this
    rank's inner weight with the ghosts where they were): a move's change
    counts its arcs both ways, but an arc to a ghost lies in one owned row
    here, so it is taken once."""
    row = Scratch(scratch.pos[0], scratch.buf_c[0], scratch.buf_j[0], scratch.buf_w[0])
    no_logc = np.empty(0, np.int32)
    no_loga = np.empty(0, np.float64)
    indptr, indices, w, active = lv.indptr, lv.indices, lv.w, st.active
    slack, charge, pending = st.slack, st.charge[0], st.pending
    moved = 0
    inner = 0.0
    for t in range(verts.shape[0]):
        v = verts[t]
        if active[v] == 0:
            continue
        active[v] = 0
        c, d, margin = _best_move(v, GHOST, lv, st, row, res_over_m2, True)
        slack[v] = _units(margin, units)
        charge[v] = 0
        st.newc[v] = c
        o = st.comm[v]
        if c != o:
            rk = res_over_m2 * lv.k[v]
            _charge(
                v,
                st.newc,
                st.comm,
                st.batch,
                indptr,
                indices,
                w,
                active,
                pending,
                lv.k,
                charge,
                rk,
                units,
            )
            for p in range(indptr[v], indptr[v + 1]):
                j = indices[p]
                if j >= n_own:
                    cj = st.comm[j]
                    d -= w[p] * (np.float64(cj == c) - np.float64(cj == o))
                if pending[j]:
                    pending[j] = 0
                    if active[j] == 0 and charge[j] > slack[j]:
                        active[j] = 1
        st.change[v] = d
        done, _, dinner = _commit(
            verts, t, t + 1, st.newc, st.comm, st.a, st.size, lv.k, st.change, no_logc, no_loga, 0
        )
        moved += done
        inner += dinner
    return moved, inner


@njit(cache=True)
def _ghost_change(w, g, old, new, ghosts, active, wake):
    """The change of this rank's inner weight (arcs of owned rows inside a
    community) when the ``ghosts`` (local ids) change community from
    ``old`` to ``new``, the owned vertices already in ``new``: the arcs into
    them (``g``: the :class:`GhostArcs`). Their owned neighbours are made
    due: ``active[wake[x]]`` for local vertex x (the sweeps' ids, see
    ``sweep_view``)."""
    d = 0.0
    for i in range(ghosts.shape[0]):
        v = ghosts[i]
        for q in range(g.ptr[v], g.ptr[v + 1]):
            p = g.arc[q]
            x = g.tail[q]
            active[wake[x]] = 1
            d += w[p] * (np.float64(new[x] == new[v]) - np.float64(new[x] == old[v]))
    return d


def _keys(seed, level, gids):
    """The priority key of each vertex id at a level: the id itself without a
    seed, else a hash of (seed, level, id), the same on every rank."""
    if seed is None:
        return np.asarray(gids, np.int64)
    return _mix(seed, level, gids)


def _mix(seed, salt, gids):
    """splitmix64 of each id, salted by (seed, salt): non-negative int64."""
    salt = np.uint64((int(seed) * 0x9E3779B1 + int(salt) * 0x85EBCA77 + 1) & (2**64 - 1))
    z = np.asarray(gids, np.int64).astype(np.uint64) ^ salt
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(1)).astype(np.int64)


def _rank_colours(comm, neighbours):
    """(this rank's colour, number of colours): a greedy colouring of the
    ranks, in rank order, in which neighbour ranks differ."""
    adj = allgather(comm, list(neighbours), "the neighbour ranks")
    colours = []
    for r, near in enumerate(adj):
        taken = {colours[x] for x in near if x < r}
        colours.append(min(set(range(len(taken) + 1)) - taken))
    return colours[comm.rank], max(colours) + 1


def _ranked(keys, ids):
    """Positions in the order of (key, id): an int32 priority per entry."""
    o = np.lexsort((ids, keys))
    prio = np.empty(o.shape[0], np.int32)
    prio[o] = np.arange(o.shape[0], dtype=np.int32)
    return prio


class _Run:
    """One call's state: communicator, parameters, statistics."""

    def __init__(self, comm, resolution, threshold, seed, stats):
        self.comm = comm
        self.resolution = float(resolution)
        self.threshold = float(threshold)
        self.tol = min(self.threshold, SWEEP_TOL)  # as the shared-memory sweeps
        # a sweep's least gain, as a share of the level's so far, on levels of
        # at least SEQUENTIAL_ARCS arcs (the shared-memory engine's batched levels)
        self.rel_tol = SWEEP_REL_TOL
        self.seed = seed
        self.stats = stats
        self.m2 = 0.0
        # one rank: (level, the shared-memory engine that moved it), see move_alone
        self._alone = None
        self._relabel = None  # (level, its Relabelled), see _relabelled
        self._agg_tmp = None
        self._prio = None  # see move
        self._view = None  # (level, its number, its sweep_view), see move
        self._order = None  # (level, its number, sweep_order's result)

    def sweep_order(self, lvl, level):
        """The owned vertices (local ids) in the order of (key, id) at
        ``level``: the sweeps' order. Kept for the level, whose refinement
        and leave walk (Leiden) go in the same order: a sort of the level's
        vertices each, where a level keeps most of the graph's vertices
        (power-law graphs: isolated and hanging vertices stay singletons)."""
        if self._order is None or self._order[:2] != (lvl, level):
            own = lvl.owned_ids
            keys = _keys(self.seed, level, lvl.gids[own])
            self._order = (lvl, level, own[np.argsort(keys, kind="stable")])
        return self._order[2]

    def _time(self, phase, t):
        now = time.perf_counter()
        self.stats.times[phase] = self.stats.times.get(phase, 0.0) + now - t
        return now

    def totals(self, lvl, comm_g, extra):
        """(a, size, summed extra): community degrees and sizes over all
        ranks (arrays indexed by community id) and the sums of ``extra``
        (floats), in one reduction."""
        own = lvl.owned_ids
        n = lvl.n
        local = np.empty(2 * n + len(extra), np.float64)
        local[:n] = np.bincount(comm_g[own], lvl.k[own], minlength=n)
        local[n : 2 * n] = np.bincount(comm_g[own], minlength=n)
        local[2 * n :] = extra
        out = allreduce(self.comm, local, "sum", "the community totals")
        return out[:n], out[n : 2 * n].astype(np.int64), out[2 * n :]

    def inner(self, lvl, comm_g):
        """This rank's inner weight: arcs of owned rows inside a community
        plus twice the owned self-loops."""
        intra = intra_weights(lvl, comm_g)
        return float(intra.sum()) + 2.0 * float(lvl.loop[lvl.owned_ids].sum())

    def quality(self, inner, a):
        return inner / self.m2 - self.resolution * squares(a) / (self.m2 * self.m2)

    def exchange(self, lvl, nb, old, new):
        """Send the boundary vertices whose community changed to the ranks
        where they are ghosts; apply what comes back to ``new``."""
        out = {}
        for r in lvl.neighbours:
            bnd = lvl.boundary[r]
            sel = bnd[old[bnd] != new[bnd]]
            out[r] = np.stack([lvl.gids[sel], new[sel]], 1).ravel().astype(np.int64)
            self.stats.ghost_updates += int(sel.shape[0])
            self.stats.bytes += 16 * int(sel.shape[0])
        got = nb.exchange(out)
        for r in sorted(got):  # rank order: the same result however they arrived
            m = got[r].reshape(-1, 2)
            new[np.searchsorted(lvl.gids, m[:, 0])] = m[:, 1]

    def _round(self, lvl, nb, verts, state, level, t, active, extra=()):
        """Move the owned vertices ``verts`` (the sweep view's ids, in order)
        that are due (``active``, by those ids, updated) against ``state``:
        (partition, community totals a and size, this rank's inner weight)
        with a community id per local vertex; then tell the neighbour ranks
        and sum the totals: (the new state, modularity and number of moves
        over all ranks, and the sums of ``extra``)."""
        comm_g, a, size, inner = state
        nl = lvl.gids.shape[0]
        view = self._view[2]
        U, cl = compact_ids(comm_g, lvl.n)
        cl = cl[view.perm]
        prio = self._prio[U]
        none = np.zeros(0, np.int32)
        ms = MoveState(
            cl,
            a[U].copy(),
            size[U].astype(np.int32),
            self._batch,
            active,
            *self._margins,
            cl.copy(),
            np.zeros(nl, np.float64),
        )
        lv = Level(view.indptr, view.indices, view.w, view.loop, view.k, none, prio, none, none)
        pos = np.full((1, U.shape[0]), -1, np.int32)
        scratch = Scratch(pos, *self._bufs)
        res = self.resolution / self.m2
        moved, d = _sweep(verts, lv, ms, scratch, res, self._units, view.n_own)
        new = comm_g.copy()
        new[view.perm[: view.n_own]] = U[ms.comm[: view.n_own]]
        t = self._time("move", t)
        self.exchange(lvl, nb, comm_g, new)
        ghosts = lvl.ghost_ids[new[lvl.ghost_ids] != comm_g[lvl.ghost_ids]]
        d += _ghost_change(lvl.w, lvl.ghost_arcs, comm_g, new, ghosts, active, view.rank)
        inner2 = inner + d
        a2, size2, sums = self.totals(lvl, new, [inner2, moved, *extra])
        self._time("communicate", t)
        q2 = self.quality(sums[0], a2)
        return (new, a2, size2, inner2), q2, int(sums[1]), sums[2:]

    def move(self, lvl, level, init=None, before=True):
        """Local moving on a level from the partition ``init`` (a community id
        below n per local vertex, ghosts included; None: singletons):
        (community id of each local vertex, community weights and sizes,
        modularity before and after, moves, sweeps). ``before`` False: the
        modularity before is not needed (None on a rank alone, where it
        would cost a pass over the arcs).

        After a sweep only the vertices with a neighbour that moved are due
        a look (as in the shared-memory sweeps); on levels below
        SEQUENTIAL_ARCS arcs a sweep that ends the level must have looked at
        every vertex (community totals moved under the others), so one that
        skipped some is followed by one over all."""
        if self.comm.size == 1:
            return self.move_alone(lvl, level, init, before)
        st = self.stats
        t = time.perf_counter()
        nl = lvl.gids.shape[0]
        own = lvl.owned_ids
        comm_g = lvl.gids.astype(np.int64) if init is None else np.asarray(init, np.int64)
        # Each community id's place in the order of (key, id), once per level:
        # the move kernel only compares these, so any round's communities
        # take theirs from it (sorting each round's communities took a tenth of
        # the sweeps' time at two ranks).
        ids = np.arange(lvl.n, dtype=np.int64)
        self._prio = (
            ids.astype(np.int32)
            if self.seed is None
            else _ranked(_keys(self.seed, level, ids), ids)
        )
        # Degree bucket by degree bucket, as the shared-memory sweeps go
        # (owned rows are whole: their degrees are the global ones).
        verts = degree_buckets(lvl.indptr, MOVE_BUCKETS, self.sweep_order(lvl, level))[1]
        # The sweeps run on the level relabelled in their order: ``active``,
        # the margins, batches and rounds below are by the view's ids.
        if self._view is None or self._view[:2] != (lvl, level):
            self._view = (lvl, level, sweep_view(lvl, verts))
        view = self._view[2]
        self._batch = np.zeros(nl, np.int32)
        self._batch[view.n_own :] = GHOST
        maxdeg = max(1, int(np.diff(lvl.indptr).max()) if nl else 1)
        self._bufs = (
            np.empty((1, maxdeg), np.int32),
            np.empty((1, maxdeg), np.int32),
            np.zeros((1, maxdeg), np.float64),  # no dense tail: the sparse accumulator
        )
        # each vertex's margin and the charges against it, in units of
        # m2 / 2**40 (as the shared-memory sweeps), and its wake test flag
        self._margins = (
            np.zeros(nl, np.uint8),
            np.zeros(nl, np.int64),
            np.zeros((1, nl), np.int64),
        )
        self._units = 2.0**40 / self.m2 if MARGINS else 0.0
        nb = Neighbours(self.comm, lvl.neighbours)
        t = self._time("setup", t)
        inner = self.inner(lvl, comm_g)
        a, size, (inner_all,) = self.totals(lvl, comm_g, [inner])
        state = (comm_g, a, size, inner)
        q = q_start = self.quality(inner_all, a)
        t = self._time("communicate", t)
        moves = sweeps = 0
        rounds = self.rounds(lvl, verts)
        rel_tol = 0.0
        if self.rel_tol:  # on batched levels only, as the shared-memory engine
            arcs = allreduce_sum(self.comm, lvl.arcs, "the arcs")
            rel_tol = self.rel_tol if arcs >= SEQUENTIAL_ARCS else 0.0
        confirm = rel_tol == 0.0
        active = np.ones(nl, np.uint8)
        for sweep in range(MAX_SWEEPS):
            q_sweep = q
            moved_sweep = 0
            # vertices not due on any rank: a sweep over all of them has none
            skipped = float(own.shape[0] - np.count_nonzero(active[: view.n_own]))
            for i, part in enumerate(rounds(level, sweep)):
                part = view.rank[part]
                before = active.copy()
                extra = (skipped,) if i == 0 else ()
                new, q2, moved, sums = self._round(lvl, nb, part, state, level, t, active, extra)
                if i == 0:
                    skipped = sums[0]
                t = time.perf_counter()
                st.rounds += 1
                # A round that lowers modularity (ranks moving at once, feeding
                # one community on stale totals) is not kept.
                if moved and q2 >= q:
                    state, q = new, q2
                    moved_sweep += moved
                elif moved:
                    active[:] = before
            st.sweeps += 1
            moves += moved_sweep
            sweeps += moved_sweep > 0
            if moved_sweep and q - q_sweep > max(self.tol, rel_tol * (q - q_start)):
                continue
            if skipped == 0 or not confirm:
                break
            active[: view.n_own] = 1
        comm_g, a, size, _ = state
        return comm_g, a, size, q_start, q, moves, sweeps

    def move_alone(self, lvl, level, init, before):
        """:meth:`move` on a rank with no other (the level is the whole graph,
        local ids its vertex ids): the shared-memory engine's local moving
        (batched, threaded sweeps on large levels), in the order of the
        distributed sweeps."""
        st = self.stats
        t = time.perf_counter()
        n = lvl.gids.shape[0]
        if init is None:  # singletons: no arc is inner
            start = np.arange(n, dtype=np.int64)
            q_start = self.quality(2.0 * float(lvl.loop.sum()), lvl.k)
        else:
            start = np.asarray(init, np.int64)
            q_start = None
            if before:
                a0 = np.bincount(start, lvl.k, minlength=n)
                q_start = self.quality(self.inner(lvl, start), a0)
        g = self._relabelled(lvl, level)
        engine = LouvainEngine(
            g.indptr,
            g.indices,
            g.w,
            g.loop,
            self.sweep_rule(),
            resolution=self.resolution,
            order=g.order,
            m2=self.m2,
            lead_sweeps=self.lead_sweeps(init),
            node_weights=g.k,
            arc_buffers=self._arc_buffers(lvl.arcs),
        )
        t = self._time("setup", t)
        init32 = (start if g.rank is None else g.rank[start][g.new]).astype(np.int32)
        comm, q, moves, sweeps = engine.move(init32)
        # its aggregation builds the next level (see coarse)
        self._alone = (lvl, engine, g.new)
        comm_g = (comm if g.rank is None else g.new[comm][g.rank]).astype(np.int64)
        a = np.bincount(comm_g, lvl.k, minlength=n)
        size = np.bincount(comm_g, minlength=n)
        st.sweeps += sweeps
        st.rounds += sweeps
        self._time("move", t)
        return comm_g, a, size, q_start, q, moves, int(moves > 0) * sweeps

    def _relabelled(self, lvl, level):
        """The level for :meth:`move_alone`: on levels of SEQUENTIAL_ARCS arcs
        or more, with a seed (else the order is by id already), relabelled so
        that the i-th vertex of the sweep order becomes
        vertex i, as the shared-memory front ends do (sweeps then read rows
        front to back; ties fall as under the order, so the moves are the
        same): (indptr, indices, w, loop, k, order for the engine (None: by
        id), new (old id of each new vertex), rank (its inverse)); new and
        rank None where it keeps its ids. Kept for the level (Leiden moves
        it again)."""
        if self._relabel is not None and self._relabel[0] is lvl:
            return self._relabel[1]
        # one rank: every local vertex is owned, local ids are 0..n-1
        order = self.sweep_order(lvl, level).astype(np.int32)
        if lvl.arcs < SEQUENTIAL_ARCS or self.seed is None:  # no seed: the order is by id
            g = Relabelled(lvl.indptr, lvl.indices, lvl.w, lvl.loop, lvl.k, order, None, None)
        else:
            n = order.shape[0]
            rank = inverse_permutation(order, n, 0)
            ptr = np.zeros(n + 1, np.int64)
            np.cumsum(np.diff(lvl.indptr)[order], out=ptr[1:])
            indices, w = permute_rows(lvl.indptr, lvl.indices, lvl.w, rank, ptr)
            g = Relabelled(ptr, indices, w, lvl.loop[order], lvl.k[order], None, order, rank)
        self._relabel = (lvl, g)
        return g

    def _arc_buffers(self, arcs):
        """The aggregation's buffers for a level of ``arcs`` arcs: scratch kept
        for the run (the first level's size: fresh pages at every level cost
        as much as the merge), a new output each time (it becomes the next
        level's arrays)."""
        if self._agg_tmp is None or self._agg_tmp[0].shape[0] < arcs:
            self._agg_tmp = (np.empty(arcs, np.int32), np.empty(arcs, np.float64))
        return [self._agg_tmp, own_buffers()[2:]]

    def sweep_rule(self):
        """The shared-memory Louvain's sweep rule (:meth:`move_alone`)."""
        return community_options(threshold=self.threshold).sweep_rule()

    def lead_sweeps(self, init):
        """Sweeps one vertex at a time that begin a batched level from the
        partition ``init`` (:meth:`move_alone`)."""
        return LEAD_SWEEPS

    def rounds(self, lvl, verts, coloured=False):
        """A function of (level, sweep) giving the owned vertices ``verts``
        (in order) cut into the rounds of that sweep: MOVE_ROUNDS rounds
        drawn anew each sweep (one where no rank has a neighbour rank).
        ``coloured``: the ranks are coloured so that neighbour ranks differ,
        there is a round per colour, and boundary vertices go in their rank's
        colour round, so two neighbours on two ranks never move together
        (the others in a round drawn anew each sweep, so that every round
        has work on every rank)."""
        colour, count = _rank_colours(self.comm, lvl.neighbours)
        cut = np.zeros(lvl.gids.shape[0], bool)
        for r in lvl.neighbours:
            cut[lvl.boundary[r]] = True
        cut = cut[verts]
        ids = lvl.gids[verts]

        def parts(level, sweep):
            if count == 1:
                return [verts]
            k = count if coloured else MOVE_ROUNDS
            cls = _mix(self.seed or 0, (level << 20) + sweep + 1, ids) % k
            if coloured:
                cls[cut] = colour
            return [verts[cls == r] for r in range(k)]

        return parts

    def coarse(self, lvl, cid, K, k=None):
        """The next level: the graph of the communities (dense ids ``cid``
        per local vertex, K of them), in blocks over the ranks. ``k``: the
        new vertices' weights (an array of K on every rank; None: their
        weighted degrees)."""
        t = time.perf_counter()
        comm, P, me = self.comm, self.comm.size, self.comm.rank
        c = block_size(K, P)
        self._view = None  # the level's sweeps are done: free its copy of the rows
        # Each rank first merges its own arcs per pair of communities (one
        # pair per community pair it sees: less to send than its arcs).
        alone = self._alone
        if P == 1 and alone is not None and alone[0] is lvl:
            # the shared-memory engine's (threaded) aggregation of its level
            engine, new = alone[1], alone[2]
            cid32 = (cid if new is None else cid[new]).astype(np.int32)
            engine.aggregate(cid32, renumber(cid32))
            rptr, heads, aw, rloop = engine.indptr, engine.indices, engine.w, engine.loop
            self._alone = self._relabel = None
        else:
            # int32 ids: the kernel's random reads of them take a fifth less time
            cid32 = cid.astype(np.int32, copy=False)
            rptr, heads, aw, rloop = _community_rows(
                lvl.indptr, lvl.indices, lvl.w, lvl.loop, lvl.owned_ids, cid32, K
            )
        lo, hi = min(K, me * c), min(K, (me + 1) * c)
        if P > 1:
            rows, counts = _pack_coarse(rptr, heads, aw, rloop, c, P)
            del heads, aw  # the rows hold them
            t = self._time("aggregate", t)
            got = alltoallv_grouped(comm, rows, counts, 2)
            self.stats.aggregation_rows += int(rows.shape[0])
            self.stats.bytes += 16 * int(rows.shape[0])
            del rows
            t = self._time("communicate", t)
            rptr, heads, aw, rloop = _merge_coarse(got, lo, hi, K)
            del got
        # Local ids: the owned block and every head, in id order (a mark per
        # coarse vertex; a binary search per arc cost half the aggregation).
        if P == 1:  # every community is a vertex here: local ids are the ids
            gids, below, heads_local = np.arange(K, dtype=np.int64), 0, heads
        else:
            mark = np.zeros(K, bool)
            mark[heads] = True
            mark[lo:hi] = True
            gids = np.flatnonzero(mark)
            below = int(np.count_nonzero(mark[:lo]))
            pos = np.cumsum(mark, dtype=np.int32)
            pos -= 1
            heads_local = pos[heads]
            del mark, pos
        nl = gids.shape[0]
        # ghost rows are empty: the owned rows' pointers, padded on both sides
        indptr = np.concatenate(
            [np.zeros(below, np.int64), rptr, np.full(nl - below - (hi - lo), rptr[-1])]
        )
        loop = np.zeros(nl, np.float64)
        loop[below : below + hi - lo] = rloop
        nxt = _Level(
            K,
            gids,
            np.arange(below, below + hi - lo, dtype=np.int32),
            gids // c,
            indptr,
            heads_local,
            aw,
            loop,
            block=c,
            k=None if k is None else k[gids],
        )
        self._time("aggregate", t)
        return nxt

    def lookup(self, lvl, keys, values):
        """values[local id of key] for level vertex ids ``keys``, asked of
        their owners (the level's blocks)."""
        comm = self.comm
        if comm.size == 1:  # every vertex is here, under its own id
            return np.asarray(values)[np.asarray(keys).reshape(-1)].astype(np.int64)
        uk, inv = compact_ids(keys, lvl.n)
        rows = np.empty((uk.shape[0], 2), np.int64)
        rows[:, 0] = uk
        rows[:, 1] = comm.rank
        got = alltoallv(comm, rows, uk // lvl.block, 2)
        ans = np.empty_like(got)
        ans[:, 0] = got[:, 0]
        ans[:, 1] = values[np.searchsorted(lvl.gids, got[:, 0])]
        back = alltoallv(comm, ans, got[:, 1], 2)
        self.stats.label_queries += int(uk.shape[0])
        self.stats.bytes += 16 * int(uk.shape[0] + got.shape[0])
        o = np.argsort(back[:, 0], kind="stable")
        vals = back[o, 1][np.searchsorted(back[o, 0], uk)]
        return vals[inv.reshape(-1)]


def _run(run, p, max_level):
    """The levels; returns (owned ids, labels, modularity of the labels)."""
    t = time.perf_counter()
    lvl = _Level.from_partition(p)
    vertices = lvl.gids[lvl.owned_ids].astype(np.int64)
    k_sum = np.array([float(lvl.degrees[lvl.owned_ids].sum())])
    run.m2 = float(allreduce(run.comm, k_sum, "sum", "the total weight")[0])
    kept = None
    if run.comm.size == 1:  # alone: isolated vertices left out (see without_isolated)
        lvl, kept = without_isolated(lvl)
    run._time("setup", t)
    if run.m2 <= 0.0:  # no edges (or only zero weights): every vertex alone
        return vertices, vertices.copy(), 0.0
    labels, q_out = _run_levels(run, lvl, max_level)
    if kept is not None:
        labels = spread_singletons(labels, kept, p.num_nodes)
    return vertices, labels, q_out


def _run_levels(run, lvl, max_level):
    """The levels of :func:`_run` from level 0 ``lvl``: (the labels of its
    owned vertices, the modularity of the labels)."""
    st = run.stats
    at = None  # each owned vertex's vertex at the current level
    labels, q_out = None, None
    q = None
    level = 0
    while True:
        comm_g, _, size, q_start, q_new, moves, sweeps = run.move(lvl, level)
        if q is None:
            q = q_start  # singletons
        if level > 0 and moves == 0:
            break
        used = size > 0
        newid = np.cumsum(used) - 1
        K = int(used.sum())
        cid = newid[comm_g]
        t = time.perf_counter()
        at = cid[lvl.owned_ids] if level == 0 else run.lookup(lvl, at, cid)
        run._time("labels", t)
        labels, q_out = at, q_new
        st.levels += 1
        st.level_info.append(
            {"vertices": lvl.n, "modularity": float(q_new), "moves": moves, "sweeps": sweeps}
        )
        if max_level is not None and st.levels >= max_level:
            break
        if q_new - q <= run.threshold:
            break
        q = q_new
        lvl = run.coarse(lvl, cid, K)
        level += 1
    return labels, q_out


def _check_params(resolution, threshold, max_level, seed):
    check_finite(resolution, "resolution")
    check_finite(threshold, "threshold")
    check_max_level(max_level)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)):
        raise TypeError(f"seed must be an int or None (the same on every rank), got {seed!r}")


def _check_weights(p):
    if p.loops is None:
        raise ValueError(
            "Louvain needs the self-loops: build the Partition with "
            "partition_edges(..., loops=True)"
        )
    w = p.graph.weights
    if w.size and w.min() < 0:
        raise ValueError(f"weights must be non-negative, got {float(w.min())!r}")
    if p.loops.size and p.loops.min() < 0:
        raise ValueError(f"weights must be non-negative, got {float(p.loops.min())!r}")


def weighted_partition(comm, part, stats, num_nodes, owner, duplicates):
    """``part`` as a :class:`Partition` with the self-loops, its weights
    checked (collective); the time goes to ``stats`` as "partition"."""
    t0 = time.perf_counter()
    p = abort_on_error(
        comm,
        as_partition,
        part,
        comm,
        num_nodes=num_nodes,
        owner=owner,
        duplicates=duplicates,
        loops=True,
    )
    check(comm, _check_weights, p)
    stats.times["partition"] = time.perf_counter() - t0
    return p


def louvain_communities(
    part,
    *,
    resolution=1,
    threshold=1e-7,
    max_level=None,
    seed=None,
    comm=None,
    num_nodes=None,
    owner=None,
    duplicates="last",
):
    """Communities by the Louvain method of a graph spread over the ranks.

    Collective. ``part`` is this rank's share of the edges, as for
    :func:`nx_gpumatch.distributed.max_weight_matching` (see
    :func:`~nx_gpumatch.distributed.as_partition`; a :class:`Partition`
    must have been built with ``loops=True``). Weights must be non-negative
    (a missing weight counts 1). ``resolution``, ``threshold`` and
    ``max_level`` are networkx's (as ``nx_gpumatch.louvain_communities``);
    ``seed`` (an int, or None for the vertex-id order) orders the sweeps and
    breaks ties; every parameter must be the same on every rank.

    Returns a :class:`DistributedCommunities`: ``vertices`` (the global ids
    this rank owns) and ``labels`` (dense global community ids). The same
    input, seed and number of ranks give the same labels.
    """
    comm = get_comm(comm)
    check(comm, _check_params, resolution, threshold, max_level, seed)
    same(comm, "resolution, threshold, max_level, seed", (resolution, threshold, max_level, seed))
    stats = CommunityStats()
    p = weighted_partition(comm, part, stats, num_nodes, owner, duplicates)
    run = _Run(comm, resolution, threshold, None if seed is None else int(seed), stats)
    with small_call(p, "louvain") or contextlib.nullcontext():
        vertices, labels, q = abort_on_error(comm, _run, run, p, max_level)
    stats.finish(comm)
    return DistributedCommunities(p, vertices, labels, q, run.resolution, stats, comm)
