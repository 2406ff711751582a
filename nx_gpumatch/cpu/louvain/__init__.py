"""Parallel Louvain community detection on the CPU.

Files: ``batches`` (the commit batches of a sweep), ``moves`` (the move
kernels), ``sparse`` (sweeps over few vertices), ``sweeps`` (a level's local
moving), ``aggregation``, ``engine`` (the engine of the level loops),
``state`` (the bundles the kernels take), ``constants`` (this engine's tuning constants; the shared ones are in
:mod:`nx_gpumatch.community.schedule`).

The method is Blondel, Guillaume, Lambiotte, Lefebvre 2008; the level layout
(degree buckets, commit batches) follows the GPU Louvain of Naim, Manne,
Halappanavar, Tumeo 2017. One level = modularity optimisation + aggregation:

* Optimisation sweeps the vertices degree bucket by degree bucket (the GPU's
  thread groups). A bucket is cut into commit batches: the moves of a batch's
  vertices are computed in parallel against the same state, then committed
  in order before the next batch is computed. Batches hold about as many arcs
  as the level has vertices (more if a bucket would need over MAX_BATCHES),
  so a vertex has about one neighbour moving blindly with it; levels with few
  arcs go one vertex at a time, as the sequential method does. Batches are redrawn every
  sweep so that vertices undoing each other's moves do not meet again. A
  batched level's first sweep still goes one vertex at a time (LEAD_SWEEPS):
  clusters form there, and blind simultaneous moves freeze small mixed ones.
* A vertex joins the neighbouring community of largest gain (its weights
  summed per community in a sparse accumulator, or in a dense one on long
  rows of small levels: DENSE_MIN_DEGREE); ties go to the
  lowest priority (position in the vertex order, which a seed may shuffle). A
  singleton may join a singleton of the same batch only if that one has the
  lower priority, so two singletons never swap. After the first sweep only
  vertices with a neighbour that moved are looked at again. A sweep costs
  the arcs of those vertices plus a few passes over the schedule, and once
  few vertices are due it visits only them (SPARSE_DIV), drawing their
  batches itself: levels that creep for hundreds of sweeps (clusters slowly
  coalescing on weighted community structure, boundaries shifting on a
  grid) pay for their moves, not for their sweeps.
* Margins (batched sweeps): a vertex looked at keeps its margin, how much
  more its choice gains than the best other one (an empty community counts,
  gaining 0). A move of a neighbour u from X to Y, arc weight w, with
  r = resolution * k_u * k_v / (2m), lowers v's margin by at most 2(w - r)
  if v is in X, 2(r - w) if in Y, |w - r| otherwise; each mover charges its
  neighbours that bound, and a neighbour is looked at again only once its
  charges exceed its margin. Moves of non-neighbours (community degrees) are
  left out, as they are when a vertex waits for a neighbour to move. On the
  third level of the random 300k-vertex benchmark graph (19.5k vertices,
  4.2M arcs) it leaves 40% of the arcs unread.
* Sweeps end when one gains at most the sweep tolerance (SWEEP_TOL, or the
  coarse one on large levels), moves nothing, or after MAX_SWEEPS; a sweep
  that lowers modularity is undone. Levels swept one vertex at a time end
  only after a sweep over all vertices (a local optimum); levels swept in
  batches also end once a sweep gains at most SWEEP_REL_TOL of the level's
  gain, without that confirming sweep. The caller's ``threshold`` is
  networkx's: it only decides whether another level follows. Modularity is
  kept up to date move by move (inner weight and squared community degrees),
  not recomputed.
* Aggregation numbers the non-empty communities by a prefix sum and merges
  each community's arcs in a sparse accumulator; on sparse levels the rows
  are first copied, in order, next to their community's other rows
  (GATHER_MAX_DEGREE).

Every float sum is taken in an order fixed by the graph and the vertex order,
never by thread timing, so results do not depend on the number of threads.

The loop over levels is :func:`nx_gpumatch.community.levels.louvain`, shared with the
GPU engine: :class:`LouvainEngine` runs its levels here, and
:class:`SweepRule` lays out each level's sweeps on both engines.

The gain of moving v (weighted degree k_v, self-loop counted twice) from its
community A to B, times m, is (networkx's formula)

    e_vB - e_v(A-v) - resolution * k_v * (a_B - (a_A - k_v)) / (2m)

where a_C is the summed degree of community C and e_vC the weight of v's
edges into C. Modularity is networkx's, self-loops included. Leiden's
Constant Potts Model runs the same kernels with node weights for the degrees
(``node_weights`` of :class:`LouvainEngine`, see :mod:`nx_gpumatch.community.quality`).
"""

from nx_gpumatch.community.schedule import (
    BATCH_FRACTION,
    LEAD_SWEEPS,
    MAX_BATCHES,
    MAX_SWEEPS,
    MOVE_BUCKETS,
    RUN,
    SEQUENTIAL_ARCS,
    SWEEP_REL_TOL,
    SweepRule,
    degree_buckets,
    vertex_order,
)
from nx_gpumatch.cpu.louvain.aggregation import (
    aggregate,
    aggregate_1,
    own_buffers,
    renumber,
)
from nx_gpumatch.cpu.louvain.batches import sweep_schedule
from nx_gpumatch.cpu.louvain.constants import PARALLEL_MIN_ARCS
from nx_gpumatch.cpu.louvain.engine import LouvainEngine, louvain_levels
from nx_gpumatch.cpu.louvain.moves import weighted_degrees
from nx_gpumatch.cpu.louvain.state import Level, MoveState, Scratch, SparseState, SweepSettings
from nx_gpumatch.cpu.louvain.sweeps import (
    dense_size,
    move_scratch,
    optimise,
    optimise_1,
    optimise_seq,
)

__all__ = [
    "BATCH_FRACTION",
    "LEAD_SWEEPS",
    "MAX_BATCHES",
    "MAX_SWEEPS",
    "MOVE_BUCKETS",
    "PARALLEL_MIN_ARCS",
    "RUN",
    "SEQUENTIAL_ARCS",
    "SWEEP_REL_TOL",
    "Level",
    "LouvainEngine",
    "MoveState",
    "Scratch",
    "SparseState",
    "SweepSettings",
    "SweepRule",
    "aggregate",
    "aggregate_1",
    "degree_buckets",
    "dense_size",
    "louvain_levels",
    "move_scratch",
    "optimise",
    "optimise_1",
    "optimise_seq",
    "own_buffers",
    "renumber",
    "sweep_schedule",
    "vertex_order",
    "weighted_degrees",
]
