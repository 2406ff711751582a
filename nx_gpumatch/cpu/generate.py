"""Numba kernels of the graph generators that cannot be vectorised with numpy."""

import numpy as np

from nx_gpumatch.cpu import njit
from nx_gpumatch.cpu.random import counter_hash


@njit(cache=True)
def barabasi_albert_edges(n, m, seed):
    """(src, dst) of a preferential-attachment graph: a clique on vertices
    0..m, then each vertex v > m joined to m distinct earlier vertices, each
    drawn with probability proportional to its degree before v arrives. Draw
    ``k`` of vertex v is ``counter_hash(seed, v, k)``, so the graph depends on
    (n, m, seed) only. Every degree is at least m; no self-loops, no repeats."""
    clique = m * (m + 1) // 2
    total = clique + (n - m - 1) * m
    src = np.empty(total, np.int64)
    dst = np.empty(total, np.int64)
    # Each edge puts both endpoints here: a uniform pick is a degree-weighted one.
    ends = np.empty(2 * total, np.int64)
    e = 0
    for u in range(m + 1):
        for v in range(u + 1, m + 1):
            src[e] = u
            dst[e] = v
            ends[2 * e] = u
            ends[2 * e + 1] = v
            e += 1
    chosen = np.empty(m, np.int64)
    useed = np.uint64(seed)
    for v in range(m + 1, n):
        filled = 2 * e  # v's own edges join only after all m are drawn
        draw = 0
        i = 0
        while i < m:
            h = counter_hash(useed, v, draw)
            draw += 1
            t = ends[(h >> np.uint64(11)) % np.uint64(filled)]
            repeat = False
            for j in range(i):
                if chosen[j] == t:
                    repeat = True
                    break
            if not repeat:
                chosen[i] = t
                i += 1
        for i in range(m):
            src[e] = v
            dst[e] = chosen[i]
            ends[2 * e] = v
            ends[2 * e + 1] = chosen[i]
            e += 1
    return src, dst
