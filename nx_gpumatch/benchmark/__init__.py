"""Benchmarks that print ratios against the anchor of each problem (README, Benchmarks).

Run ``python -m nx_gpumatch.benchmark <problem> [options]``; each problem is a
module here with a ``main(argv)``. Timings are medians of repeated runs, and every
ratio compares runs made in the same process on the same machine.
"""

import statistics
import time

PROBLEMS = ("matching", "b_matching", "stable_marriage", "exact_matching", "louvain")


def median_time(fn, repeat=5, warmup=1):
    """Median wall time of fn() over ``repeat`` runs (after ``warmup`` untimed ones),
    and the last result."""
    out = None
    for _ in range(warmup):
        out = fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def networkit_graph(g):
    """A weighted undirected NetworKit graph with the same edges as Graph g."""
    import networkit as nk
    import numpy as np

    return nk.GraphFromCoo(
        (g.edge_weight, (g.edge_src.astype(np.uint64), g.edge_dst.astype(np.uint64))),
        n=g.num_nodes,
        weighted=True,
        directed=False,
    )
