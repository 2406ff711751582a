"""Constants that more than one engine (``cpu/``, ``gpu/``, ``distributed/``) or
layer uses, defined once here and imported by all: plain numbers and NumPy
scalars, so importing this module costs nothing and belongs to no engine."""

import numpy as np

# Rank of an edge that no approximate algorithm may use (weight <= 0), and of a
# missing partner in stable marriage: the largest value of the 31-bit rank field
# of the packed Suitor words, so such an edge never beats an empty slot.
# kernels/common.cuh defines the same value for the CUDA kernels.
NO_RANK = 0x7FFFFFFF

# Bipartite matching (the CPU kernels and, as -D defines, kernels/bipartite.cu).
UNSEEN = np.int32(0x7FFFFFFF)  # BFS level of a column not reached
ENDPOINT = np.int32(-2)  # rmatch of a free row claimed as the end of a path

# Red-blue matching: the chance of colouring a vertex blue, which maximizes the
# expected matches per round (Fagginger Auer & Bisseling 2012).
P_BLUE = 0.53406

# The largest b(v) of a b-matching: capacities are int32 on every engine.
B_MAX = 2**31 - 1
