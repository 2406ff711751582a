"""The state bundles the Louvain kernels take instead of long argument lists:
namedtuples of arrays (and of scalars), which Numba passes in nopython mode
as it passes the arrays themselves, and caches."""

import collections

# A level: CSR rows, self-loops, vertex weights (degrees or node weights),
# vertex order and its inverse (priorities), and the degree buckets.
Level = collections.namedtuple("Level", "indptr indices w loop k order prio bptr verts")

# The partition being moved and a sweep's bookkeeping, changed in place:
# community, community weights and sizes, each vertex's commit batch, whether
# it is due a look, whether a wake test is pending, its margin (slack) and the
# charges against it, its chosen community and the inner weight change of
# its move.
MoveState = collections.namedtuple(
    "MoveState", "comm a size batch active pending slack charge newc change"
)

# Per-thread scratch rows of the sparse accumulators.
Scratch = collections.namedtuple("Scratch", "pos buf_c buf_j buf_w")

# The sparse sweep's worklists (due now, due next, a buffer), its batch lists
# (heads and links), queued flags, its batch layout (see _sparse_layout) and
# the log of its moves (for an undo).
SparseState = collections.namedtuple(
    "SparseState", "cur nxt tmp head link queued vpos nbb base logc loga"
)

# What ends and shapes a level's sweeps (see optimise).
SweepSettings = collections.namedtuple(
    "SweepSettings",
    "m2 resolution threshold batch_arcs max_batches nchunks par_min_arcs max_sweeps "
    "rel_tol confirm lead margins sparse_div chase",
)
