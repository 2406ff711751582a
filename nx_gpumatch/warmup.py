"""Compile every Numba kernel family ahead of the first real call.

Kernels are compiled on first use and cached on disk (Numba's cache, in the
user's folder of :mod:`nx_gpumatch.cpu._cache` or in ``NUMBA_CACHE_DIR``). A fresh machine, container image or CI
runner therefore pays the compile time once, on its first call of each family.
``nx_gpumatch.warmup()`` (or ``nx-gpumatch warmup``) pays it up front: it calls
each public function on a tiny input (the builds small calls use) and, with more
than one thread, on a graph just past every threshold for threads (the parallel
builds and batched sweeps large calls use), which compiles and caches the
kernels (and argument types) real calls use.

Families of other modules are looked up by name, so a family whose function
does not exist in this version is skipped, not an error.
"""

import argparse
import sys
import time

import networkx as nx
import numpy as np

from nx_gpumatch._validation import check_bool

__all__ = ["warmup", "FAMILIES", "estimate"]


def _graph(large=False):
    """A tiny weighted networkx graph (the input type most calls use), or a
    package Graph large enough for every family's threaded builds: 40k vertices
    and 240k arcs (kernels sized by either take their parallel build from 32k
    elements on; Louvain's batched sweeps start at 100k arcs)."""
    if large:
        from nx_gpumatch.generators import random_graph

        return random_graph(40_000, 120_000, seed=1)

    G = nx.gnm_random_graph(40, 120, seed=1)
    rng = np.random.default_rng(1)
    for (u, v), w in zip(G.edges(), rng.random(G.number_of_edges()).tolist()):
        G[u][v]["weight"] = w
    return G


def _call(name, *args, **kwargs):
    import nx_gpumatch as gm

    fn = getattr(gm, name, None)
    if fn is None:
        return False
    fn(*args, **kwargs)
    return True


def _matching(algorithm):
    def run(large):
        kw = {"seed": 1} if algorithm == "red_blue" else {}  # only red_blue is randomized
        G = _graph(large)
        if not _call("max_weight_matching", G, algorithm=algorithm, device="cpu", **kw):
            return False
        if algorithm in ("greedy", "local_max") and not large:
            # one weight for every edge (unweighted graphs) takes a sweep of its own
            _call("max_weight_matching", G, algorithm=algorithm, weight=None, device="cpu")
        return True

    return run


def _maximal(large):
    return _call("maximal_matching", _graph(large), device="cpu")


def _exact(large):
    if large:
        return True  # the blossom method has no threaded build
    G = _graph()
    return _call("max_weight_matching", G, device="cpu") and _call(
        "min_weight_matching", G, device="cpu"
    )


def _b_matching(large):
    return _call("b_matching", _graph(large), 2, device="cpu")


def _stable_marriage(large):
    rng = np.random.default_rng(1)
    n = 8
    men = {f"m{i}": [f"w{j}" for j in rng.permutation(n)] for i in range(n)}
    women = {f"w{i}": [f"m{j}" for j in rng.permutation(n)] for i in range(n)}
    # large: the parallel engine (from 2**20 entries on), asked for by name
    return _call("stable_marriage", men, women, device="cpu", parallel=large)


def _louvain(large):
    return _call("louvain_communities", _graph(large), seed=1, device="cpu")


def _leiden(large):
    return _call("leiden_communities", _graph(large), seed=1, device="cpu")


def _distributed(large):
    """The distributed engine, where mpi4py is installed: on one rank in this
    process and then (small inputs, the kernels that only run where ranks
    exchange messages) on two under mpiexec, where one is found; inside an MPI
    job of several ranks, on its ranks instead."""
    try:
        from mpi4py import MPI
    except ImportError:
        return False
    from nx_gpumatch.distributed import warm

    world = MPI.COMM_WORLD
    if world.size > 1:
        warm.run(world, large)
        return True
    warm.run(MPI.COMM_SELF, large)
    if not large:
        warm.on_two_ranks()
    return True


def _bipartite_input(large):
    """A random sparse matrix, built in memory proportional to its entries (scipy's
    ``sp.random`` with an integer seed draws from all rows x columns positions:
    12.8 GB for the large one)."""
    from nx_gpumatch.generators_bipartite import random_bipartite

    if large:  # 80k entries: past the thresholds for threads
        return random_bipartite(40_000, 40_000, 80_000, seed=1)
    return random_bipartite(30, 40, 120, seed=1)


def _bipartite(large):
    return _call("maximum_bipartite_matching", _bipartite_input(large), device="cpu")


# Family name -> function that compiles it (returns False when the package has
# no such function). Order: cheapest first, so a progress bar moves early.
FAMILIES = {
    "suitor": _matching("suitor"),
    "maximal_matching": _maximal,
    "greedy": _matching("greedy"),
    "local_max": _matching("local_max"),
    "red_blue": _matching("red_blue"),
    "exact": _exact,
    "b_matching": _b_matching,
    "stable_marriage": _stable_marriage,
    "louvain": _louvain,
    "leiden": _leiden,
    "bipartite": _bipartite,
    "distributed": _distributed,
}


# Wall seconds each family took to compile on an empty cache with 2 threads on a
# shared 2-core machine (nx-gpumatch warmup; its peak memory there: 0.73 GB).
# With one thread the parallel builds are skipped: about half.
COLD_SECONDS = {
    "suitor": 4,
    "maximal_matching": 1,
    "greedy": 2,
    "local_max": 2,
    "red_blue": 5,
    "exact": 10,
    "b_matching": 9,
    "stable_marriage": 12,
    "louvain": 100,
    "leiden": 6,
    "bipartite": 15,
    "distributed": 60,
}


def estimate(families=None, threads=None):
    """Seconds warmup of ``families`` (default: all) takes on an empty cache, from
    :data:`COLD_SECONDS`; a cached family loads in well under a second."""
    from nx_gpumatch import cpu

    names = list(FAMILIES) if families is None else list(families)
    threads = cpu.num_threads() if threads is None else threads
    total = sum(COLD_SECONDS.get(f, 10) for f in names)
    return total if threads > 1 else total / 2


def announce(families=None):
    """The line warmup prints before it starts: what it does and how long it takes."""
    n = len(FAMILIES) if families is None else len(families)
    sec = estimate(families)
    when = f"{sec / 60:.0f} min" if sec >= 90 else f"{sec:.0f} s"
    return (
        f"warmup: compiling {n} kernel famil{'y' if n == 1 else 'ies'}; about {when} on an "
        "empty cache (2 cores), seconds where they are cached"
    )


def warmup(families=None, *, progress=True):
    """Compile (and cache on disk) the CPU kernels of the given families (default:
    all), by calling each public function on a tiny input and, with threads, on
    one past the thresholds for threads (see the module notes).

    Use it once when building a container image, on a CI runner before timing
    anything, or after upgrading: later processes then load the cached kernels
    (under a second) instead of compiling (seconds per family). With ``progress``
    it first prints (on stderr) how long it takes (:func:`announce`). Returns a dict
    family -> seconds taken (families this version does not have are left out).
    """
    progress = check_bool(progress, "progress")
    from tqdm import tqdm

    from nx_gpumatch import cpu

    names = list(FAMILIES) if families is None else list(families)
    unknown = [f for f in names if f not in FAMILIES]
    if unknown:
        raise ValueError(f"unknown families {unknown}; choose from {list(FAMILIES)}")
    if progress:
        print(announce(names), file=sys.stderr, flush=True)
    times = {}
    bar = tqdm(names, desc="compiling", unit="family", disable=not progress)
    for name in bar:
        bar.set_postfix_str(name)
        t = time.perf_counter()
        with cpu.interpreted(False):  # compile, even where small calls run interpreted
            ok = FAMILIES[name](False)
            many = cpu.num_threads()
            if ok and many > 1:
                # The threaded builds, and the large calls' serial ones: both
                # counts named, since a count left open follows the load of
                # the moment (a busy machine would compile one of them only).
                for k in (many, 1):
                    with cpu.threads(k):
                        FAMILIES[name](True)
        if ok:
            times[name] = time.perf_counter() - t
    bar.close()
    return times


def report(families=None, *, progress=True):
    """:func:`warmup`, printing what ``nx-gpumatch warmup`` prints: the
    announcement (above the progress bar, or on stdout without one), then the
    seconds per family and in total. Returns warmup's dict."""
    if not progress:
        print(announce(families), flush=True)
    times = warmup(families, progress=progress)
    for name, sec in times.items():
        print(f"{name:18s} {sec:7.2f} s")
    print(f"{'total':18s} {sum(times.values()):7.2f} s")
    return times


def add_arguments(parser):
    """The warm-up's arguments (families, ``--no-progress``) on an argparse
    parser: ``python -m nx_gpumatch.warmup`` and ``nx-gpumatch warmup`` share them."""
    parser.add_argument(
        "families",
        nargs="*",
        metavar="FAMILY",
        help=f"families to compile (default: all): {', '.join(FAMILIES)}",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def unknown_family(families):
    """The message for the first name in ``families`` that is not a family, or None."""
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        return f"unknown family {unknown[0]!r}; choose from {', '.join(FAMILIES)}"
    return None


def main(argv=None):
    """``python -m nx_gpumatch.warmup [FAMILY ...] [--no-progress]``: the same
    as ``nx-gpumatch warmup``, without the command line's other commands."""
    p = argparse.ArgumentParser(
        prog="python -m nx_gpumatch.warmup", description="Compile and cache the CPU kernels."
    )
    add_arguments(p)
    args = p.parse_args(argv)
    why = unknown_family(args.families)
    if why:
        p.error(why)
    report(args.families or None, progress=not args.no_progress)
    return 0


if __name__ == "__main__":
    sys.exit(main())
