"""The sweep schedule of a level and the tuning constants every engine shares.

A level's vertices are swept degree bucket by degree bucket (MOVE_BUCKETS,
the GPU algorithm's thread groups), each bucket cut into commit batches;
:class:`SweepRule` says how the batches are sized and when a level's sweeps
end, on either engine. Leiden adds its passes and refinement settings. The
measurements behind the values are in docs/benchmarks.md.

Integer work only (bucket lists, vertex orders), so numpy here gives the
bits the engines' kernels would.
"""

import dataclasses

import numpy as np

# Upper degree bounds of the move buckets (the last one is > 319): the GPU's
# thread groups of 4, 8, 16, 32 threads, a warp, a block with a shared-memory
# hash table, a block with a global one.
MOVE_BUCKETS = np.array([4, 8, 16, 32, 84, 319], np.int64)

# Sweeps end once one gains at most this (only trims a tail of tiny moves).
SWEEP_TOL = 1e-7

# ... or at most this share of the level's gain so far (the next level moves
# whole communities; see optimise's ``confirm``).
SWEEP_REL_TOL = 1e-4

# Safety cap on a level's sweeps; high, since noisy levels creep for dozens.
MAX_SWEEPS = 1000

# A commit batch holds about BATCH_FRACTION * (movable vertices) arcs: about
# that many neighbours of a vertex move blindly with it.
BATCH_FRACTION = 1.0

# After the first sweep, batches are drawn for runs of this many consecutive
# vertices of a bucket (whole runs keep memory accesses local).
RUN = 16

# At most this many commit batches per bucket and sweep (each is a meeting of
# the threads).
MAX_BATCHES = 4

# Levels with fewer arcs are swept one vertex at a time, as the sequential
# method does (best quality, and one thread would run them anyway).
SEQUENTIAL_ARCS = 100_000

# A batched sweep due to look at vertices with at most 1/SPARSE_DIV as many
# arcs as the level has vertices visits only those (0: never).
SPARSE_DIV = 16

# The CPU engine begins batched levels with sweeps one vertex at a time, so
# clusters can grow (the GPU engine has no such sweeps).
LEAD_SWEEPS = 1

# Levels without lead sweeps undo a first batched sweep that leaves over
# 1/CHASE of its movers alone, and lead with a sweep one vertex at a time.
CHASE = 2

# ---------------------------------------------------------------- Leiden
# Randomness of the refinement's choice (the paper's theta).
THETA = 0.01

# Passes rerun the method from the partition reached until one gains at most
# max(PASS_TOL, PASS_REL_TOL * the modularity reached).
MAX_PASSES = 32
PASS_TOL = 1e-5
PASS_REL_TOL = 2.5e-2

# CPM runs draw each refinement's vertex order anew and pass until a pass
# gains nothing.
CPM_PASS_REL_TOL = 0.0

# CPM runs let a vertex that gains by it leave its community to be alone
# after local moving (see levels._settle).
CPM_LEAVE = True

# Leiden's batched local moving stops once a sweep gains at most this share
# of the level's gain (later passes sweep the tail again anyway).
LEIDEN_SWEEP_REL_TOL = 1e-2


def sweep_tolerance(nv, threshold, coarse_threshold, fine_below):
    """Gain at which the sweeps of a level with nv vertices stop: SWEEP_TOL
    (or less when the caller's threshold is smaller), the coarse tolerance on
    levels of at least ``fine_below`` vertices. Not the caller's threshold
    itself: in networkx that is the gain a whole level needs for another one
    to follow, and ending sweeps there stops levels far from their optimum."""
    if nv >= fine_below:
        return coarse_threshold
    return min(threshold, SWEEP_TOL)


def batch_limits(n_active, arcs, batch_fraction, max_batches, sequential_arcs=SEQUENTIAL_ARCS):
    """(max_arcs, max_batches) of the commit batches at a level with n_active
    movable vertices and ``arcs`` arcs: one vertex at a time on levels small
    enough to be swept on one thread anyway."""
    if arcs < sequential_arcs:
        return 1, 0
    return max(1, int(batch_fraction * n_active)), max_batches


@dataclasses.dataclass(frozen=True)
class SweepRule:
    """How a level's sweeps are laid out and when they end, on either engine:
    the settings of these names of :class:`CommunityOptions` (see its
    :meth:`~CommunityOptions.sweep_rule`).
    ``threshold`` here only caps the sweep tolerance (see
    :func:`sweep_tolerance`)."""

    threshold: float = 1e-7
    coarse_threshold: float = 1e-7
    fine_below: int = 100_000
    batch_fraction: float = BATCH_FRACTION
    max_batches: int = MAX_BATCHES
    sequential_arcs: int = SEQUENTIAL_ARCS
    max_sweeps: int = MAX_SWEEPS
    rel_tol: float = SWEEP_REL_TOL
    confirm: bool = False
    margins: bool = True  # False: every neighbour of a mover is looked at again
    sparse_div: int = SPARSE_DIV  # 0: every batched sweep passes over all vertices
    chase: int = CHASE  # 0: no check of the first batched sweep (levels without lead sweeps)

    def level(self, deg, arcs):
        """(threshold, batch_arcs, max_batches, rel_tol, confirm): the
        arguments of the engines' ``optimise`` that depend on the level, for a
        level with vertex degrees ``deg`` (host) and ``arcs`` arcs."""
        thr = sweep_tolerance(deg.shape[0], self.threshold, self.coarse_threshold, self.fine_below)
        max_arcs, nbatch = batch_limits(
            int(np.count_nonzero(deg)),
            int(arcs),
            self.batch_fraction,
            self.max_batches,
            self.sequential_arcs,
        )
        # levels swept one vertex at a time are cheap: they go to a local optimum
        rel_tol = float(self.rel_tol) if max_arcs > 1 else 0.0
        return float(thr), max_arcs, nbatch, rel_tol, bool(self.confirm) or max_arcs <= 1


@dataclasses.dataclass(frozen=True)
class CommunityOptions:
    """The settings of a Louvain or Leiden run, taken by every engine's
    ``louvain_levels`` and ``leiden_levels``: the front ends build one, and a
    new setting is added here only. An engine ignores the settings it has no
    use for (Leiden: ``threshold``; the GPU engine: ``margins``, ``chase``,
    ``lead_sweeps``, ``parallel_min_arcs``; the CPU engine: ``cpu_below_arcs``,
    ``table_bytes``, ``backend``).

    Both methods: ``resolution``; ``threshold`` (Louvain: the method stops
    once a level gains at most this, networkx's meaning; it also caps the
    sweep tolerance, see :func:`sweep_tolerance`), ``coarse_threshold`` and
    ``fine_below`` (the sweep tolerance of large levels), ``batch_fraction``,
    ``max_batches``, ``sequential_arcs``, ``max_sweeps``, ``rel_tol`` (None:
    SWEEP_REL_TOL for Louvain, LEIDEN_SWEEP_REL_TOL for Leiden), ``confirm``,
    ``margins``, ``chase``: the :class:`SweepRule` of the run (see
    :meth:`sweep_rule`). ``lead_sweeps``: sweeps one vertex at a time that
    begin a batched level (Leiden: the first level only); none when
    ``sequential_arcs`` is 0. ``parallel_min_arcs``: smaller commit batches
    run on one thread (None: measured once per run).

    Leiden: ``theta``, the refinement's randomness; ``key`` (a 64-bit int),
    its random choices; ``max_passes``, ``pass_tol`` and ``pass_rel_tol``
    (None: by the metric, see :func:`pass_rel_tol_of`) end the passes;
    ``metric``, "modularity" or "cpm" (see :mod:`nx_gpumatch.community.quality`).

    GPU engine: levels with fewer than ``cpu_below_arcs`` arcs go on in the
    CPU engine; ``table_bytes`` caps the scratch memory of one launch (None: a
    share of the free device memory); ``backend``, "cupy" or "emulate".
    """

    resolution: float = 1.0
    threshold: float = 1e-7
    coarse_threshold: float = 1e-7
    fine_below: int = 100_000
    batch_fraction: float = BATCH_FRACTION
    max_batches: int = MAX_BATCHES
    sequential_arcs: int = SEQUENTIAL_ARCS
    max_sweeps: int = MAX_SWEEPS
    rel_tol: float | None = None
    confirm: bool = False
    margins: bool = True
    chase: int = CHASE
    lead_sweeps: int = LEAD_SWEEPS
    parallel_min_arcs: int | None = None
    theta: float = THETA
    key: int = 0
    max_passes: int = MAX_PASSES
    pass_tol: float = PASS_TOL
    pass_rel_tol: float | None = None
    metric: str = "modularity"
    cpu_below_arcs: int = SEQUENTIAL_ARCS
    table_bytes: int | None = None
    backend: str = "cupy"

    def sweep_rule(self, leiden=False, margins=True):
        """The :class:`SweepRule` of a Louvain (or ``leiden``) run;
        ``margins`` False: the engine wakes every neighbour of a mover (the
        GPU engine), whatever ``self.margins`` says."""
        if self.rel_tol is not None:
            rel_tol = self.rel_tol
        else:
            rel_tol = LEIDEN_SWEEP_REL_TOL if leiden else SWEEP_REL_TOL
        return SweepRule(
            threshold=self.threshold,
            coarse_threshold=self.coarse_threshold,
            fine_below=self.fine_below,
            batch_fraction=self.batch_fraction,
            max_batches=self.max_batches,
            sequential_arcs=self.sequential_arcs,
            max_sweeps=self.max_sweeps,
            rel_tol=rel_tol,
            confirm=self.confirm,
            margins=self.margins and margins,
            chase=self.chase,
        )

    def pass_ends(self):
        """(max_passes, pass_tol, pass_rel_tol) that end Leiden's passes."""
        return self.max_passes, self.pass_tol, pass_rel_tol_of(self.metric, self.pass_rel_tol)


def community_options(options=None, **changes):
    """``options`` (a :class:`CommunityOptions`; None: the defaults) with the
    settings ``changes`` names changed; an unknown name is a TypeError."""
    options = CommunityOptions() if options is None else options
    if not isinstance(options, CommunityOptions):
        raise TypeError(f"options must be a CommunityOptions, got {type(options).__name__}")
    return dataclasses.replace(options, **changes) if changes else options


def vertex_order(order, n):
    """(order, prio): the vertex order (default by id) and its inverse."""
    if order is None:
        order = np.arange(n, dtype=np.int32)
        return order, order
    order = np.ascontiguousarray(order, dtype=np.int32)
    prio = np.empty(n, np.int32)
    prio[order] = np.arange(n, dtype=np.int32)
    return order, prio


def degree_buckets(indptr, bounds, order):
    """Vertices with at least one neighbour grouped by degree bucket.

    Returns (ptr, verts): bucket b holds verts[ptr[b]:ptr[b+1]] (int32) in the
    order of ``order``; bucket b takes degrees in (bounds[b-1], bounds[b]],
    the last one everything above bounds[-1]. Isolated vertices are left
    out: they never move.
    """
    order = np.asarray(order)
    deg = np.diff(np.asarray(indptr, np.int64))[order]
    which = np.searchsorted(bounds, deg, side="left")  # bounds below the degree
    which[deg == 0] = -1
    parts = [order[which == b] for b in range(bounds.shape[0] + 1)]
    ptr = np.zeros(len(parts) + 1, np.int64)
    np.cumsum([p.shape[0] for p in parts], out=ptr[1:])
    return ptr, np.concatenate(parts).astype(np.int32, copy=False)


def carry_order(order, newid, K):
    """Vertex order of the next level: communities in the order of the vertices
    they are named after. Returns (order2, prio2), prio2 being order2's inverse."""
    ids = np.asarray(newid)[order]
    order2 = np.ascontiguousarray(ids[ids >= 0], dtype=np.int32)
    prio2 = np.empty(K, np.int32)
    prio2[order2] = np.arange(K, dtype=np.int32)
    return order2, prio2


def refinement_order(key, salt, n):
    """The vertex order of refinement ``salt`` of a CPM run (see
    CPM_PASS_REL_TOL): a permutation of n drawn from (key, salt), the same
    on every engine."""
    return np.random.default_rng([int(key), int(salt)]).permutation(n).astype(np.int32)


def pass_rel_tol_of(metric, pass_rel_tol):
    """The relative gain that ends Leiden's passes (None: by the metric, see
    CPM_PASS_REL_TOL)."""
    from nx_gpumatch.community.quality import check_metric

    if pass_rel_tol is not None:
        return float(pass_rel_tol)
    return CPM_PASS_REL_TOL if check_metric(metric) == "cpm" else PASS_REL_TOL


def checked_theta(theta):
    """``theta`` as a float, if positive; else ValueError."""
    theta = float(theta)
    if not theta > 0.0:
        raise ValueError(f"theta must be positive, got {theta!r}")
    return theta
