"""Counter-based random numbers for Numba kernels: a value depends only on
(seed, a, b), never on which thread draws it, so results do not depend on the
thread count. kernels/*.cu use the same functions on the GPU."""

import numpy as np

from nx_gpumatch.cpu import njit


@njit(cache=True, inline="always")
def mix64(x):
    """splitmix64 finalizer: a fast, well-mixed 64-bit hash."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, inline="always")
def counter_hash(seed, a, b):
    """Random 64-bit value for (seed, a, b)."""
    return mix64(mix64(seed ^ np.uint64(a)) + np.uint64(b) * np.uint64(0x9E3779B97F4A7C15))
