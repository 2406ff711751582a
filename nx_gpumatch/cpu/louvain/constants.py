"""The CPU engine's own tuning constants (the shared ones are in
:mod:`nx_gpumatch.community.schedule`)."""

# Rows this long sum per community in a dense array (no "seen before?" branch).
DENSE_MIN_DEGREE = 64
DENSE_MAX_VERTICES = 1 << 16  # 512 KiB of float64: the array stays in cache

# Smaller commit batches run on one thread (more on a machine slow to wake
# its threads, at SECONDS_PER_ARC); results are the same either way.
PARALLEL_MIN_ARCS = 20_000
SECONDS_PER_ARC = 2e-9
# First use (see nx_gpumatch.cpu.may_rent): a run on one thread takes up to
# about this per arc of its input (0.65-0.8 us on 1M vertices, 8M edges), and
# runs without threads until such runs took PARALLEL_RENT seconds: the
# parallel builds compile for about 40 s on 2 cores, and two threads save
# about 40% of a run.
SERIAL_SECONDS_PER_ARC = 1e-6
PARALLEL_RENT = 60.0

# Sparse levels (mean degree up to this) gather rows by community before merging.
GATHER_MAX_DEGREE = 32

# Graphs with this many arcs aggregate into buffers kept for the run (fresh
# pages on every level cost page faults).
KEEP_BUFFERS_ARCS = 0

# Vertices (or communities) per unit of parallel work: a unit asks for its
# thread's scratch rows once.
_CHUNKS_PER_THREAD = 8
