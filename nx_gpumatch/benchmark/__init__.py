"""Benchmarks that print ratios against the anchors of each problem (see the README).

Run ``python -m nx_gpumatch.benchmark <problem> [options]``; each problem is a
module here with a ``main(argv)``. Timings are medians of repeated runs, and every
ratio compares runs made in the same process on the same machine.
"""

import importlib.util
import statistics
import time

import numpy as np

PROBLEMS = (
    "matching",
    "b_matching",
    "stable_marriage",
    "exact_matching",
    "louvain",
    "bipartite",
    "distributed",
    "distributed_louvain",
    "cold_start",
    "scaling",
    "cpm",
    "realgraphs",
    "busy_core",
)
# Anchor packages (the 'bench' extra) each benchmark imports, checked before it
# measures anything: a missing one would otherwise end the run midway.
NEEDS = {
    "matching": ("networkit",),
    "b_matching": ("networkit",),
    "stable_marriage": ("matching",),
    "louvain": ("networkit", "igraph"),
    "bipartite": ("igraph",),
    "scaling": ("networkit", "matplotlib"),
}
BENCH_EXTRA = 'pip install "nx-gpumatch[bench]" (from a checkout: pip install ".[bench]")'


def missing(problem):
    """The anchor packages of ``problem`` that cannot be imported."""

    def absent(name):
        try:
            return importlib.util.find_spec(name) is None
        except (ImportError, ValueError):
            return True

    return [name for name in NEEDS.get(problem, ()) if absent(name)]


def load(problem):
    """Import the benchmark module of ``problem`` (ImportError naming the extra
    when an anchor package is missing). Every benchmark but
    ``cold_start`` times compiled kernels only: small inputs would otherwise run
    interpreted while their family is not compiled (see ``nx_gpumatch.cpu.run``)."""
    import importlib

    lacking = missing(problem)
    if lacking:
        raise ImportError(
            f"benchmark {problem} needs {', '.join(lacking)} (the 'bench' extra): {BENCH_EXTRA}"
        )
    if problem != "cold_start":
        from nx_gpumatch.config import get_config

        get_config().interpret_small = False
    return importlib.import_module(f"nx_gpumatch.benchmark.{problem}")


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


def paired_ratios(fn, anchor, repeat=5, warmup=1):
    """Time fn() / time anchor() over ``repeat`` pairs run back to back, the
    order alternating, so that a load spike on a shared machine hits both sides
    of a pair: (median ratio, all ratios)."""
    for _ in range(warmup):
        fn()
        anchor()
    ratios = []
    for i in range(repeat):
        pair = {}
        for name, f in (("fn", fn), ("anchor", anchor))[:: 1 if i % 2 == 0 else -1]:
            t = time.perf_counter()
            f()
            pair[name] = time.perf_counter() - t
        ratios.append(pair["fn"] / pair["anchor"])
    return statistics.median(ratios), ratios


def networkit_graph(g):
    """A weighted undirected NetworKit graph with the same edges as Graph g."""
    import networkit as nk

    return nk.GraphFromCoo(
        (g.edge_weight, (g.edge_src.astype(np.uint64), g.edge_dst.astype(np.uint64))),
        n=g.num_nodes,
        weighted=True,
        directed=False,
    )


def choice_list(ap, option, text, allowed):
    """The names of a comma-separated option, each one of ``allowed``; a usage
    error (exit 2) through the parser ``ap`` otherwise."""
    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in names if x not in allowed]
    if bad or not names:
        ap.error(
            f"{option}: unknown {', '.join(bad) or 'empty list'}; choose among {', '.join(allowed)}"
        )
    return names
