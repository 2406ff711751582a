"""Stable marriage benchmark: the ``matching`` package on a complete random
instance, and Naim et al.'s easy and hard instances with proposals per second.

    python -m nx_gpumatch.benchmark stable_marriage [--matching-n 2000]
        [--easy-n 5000000] [--hard-n 20000] [--threads T] [--repeat R]

Every time is the median of R runs in this process (the ``matching`` package
runs once: it takes minutes at n = 2000). Proposals are what Naim et al. count:
for each man, the entries of his list up to and including his wife (all of it
if he stays single); proposals/s divides that by the solve time, which excludes
building the instance and the packed mutual lists (timed separately).
"""

import argparse
import sys
import threading
import time

import numpy as np

import nx_gpumatch as gm
from nx_gpumatch.algorithms import stable_marriage as sm
from nx_gpumatch.benchmark import median_time

ENGINES = (
    ("mcvitie_wilson", "parallel"),
    ("gale_shapley", "parallel"),
    ("mcvitie_wilson", "sequential"),
    ("gale_shapley", "sequential"),
)


def solve_counting(prefs, algorithm="mcvitie_wilson", engine="parallel", threads=None):
    """(mate array, proposals) of one CPU or GPU engine ("sequential", "parallel",
    "gpu") on prepared preferences (:func:`nx_gpumatch.prepare_preferences`).
    Proposals: for each man, his list up to and including his wife (all of it if
    he stays single), the count Naim et al. report."""
    return sm.solve(prefs, algorithm=algorithm, engine=engine, threads=threads)


def complete_instance(n, seed):
    """Dict-form complete instance with string names (the ``matching`` package's input)."""
    rng = np.random.default_rng(seed)
    men = {f"m{i}": [f"w{j}" for j in rng.permutation(n).tolist()] for i in range(n)}
    women = {f"w{i}": [f"m{j}" for j in rng.permutation(n).tolist()] for i in range(n)}
    return men, women


def run_matching_package(men, women):
    """The ``matching`` package's suitor-optimal answer and its time. It copies
    the game recursively, so it runs in a thread with a large stack and a
    raised recursion limit."""
    from matching.games import StableMarriage

    out = {}

    def target():
        t = time.perf_counter()
        game = StableMarriage.create_from_dictionaries(men, women)
        result = game.solve(optimal="suitor")
        out["time"] = time.perf_counter() - t
        out["result"] = {s.name: r.name for s, r in result.items()}

    old_limit = sys.getrecursionlimit()
    old_stack = threading.stack_size(1024 * 1024 * 1024)
    sys.setrecursionlimit(1_000_000)
    try:
        th = threading.Thread(target=target)
        th.start()
        th.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    return out["result"], out["time"]


def bench_matching_package(n, repeat, threads):
    print(f"\ncomplete random instance n={n:,} (every list complete), vs the `matching` package")
    men, women = complete_instance(n, seed=0)
    t_dict, ours = median_time(lambda: gm.stable_marriage(men, women, threads=threads), repeat)
    arrays = _to_arrays(men, women)
    t_arr, mate = median_time(lambda: gm.stable_marriage(*arrays, threads=threads), repeat)
    prefs = sm.prepare_preferences(*arrays, threads=threads)
    t_solve, _ = median_time(lambda: sm.solve(prefs, threads=threads), repeat)
    import matching

    print(f"  running matching {matching.__version__} (takes minutes) ...", flush=True)
    theirs, t_pkg = run_matching_package(men, women)
    same = theirs == ours and all(ours[f"m{i}"] == f"w{w}" for i, w in enumerate(mate.tolist()))
    print(f"  matching package (create + solve)        {t_pkg:10.3f} s")
    print(
        f"  nx_gpumatch, dict input (names)          {t_dict:10.4f} s   {t_pkg / t_dict:10,.0f}x faster"
    )
    print(
        f"  nx_gpumatch, array input (CSR ids)       {t_arr:10.4f} s   {t_pkg / t_arr:10,.0f}x faster"
    )
    print(
        f"  nx_gpumatch, solve on prepared lists     {t_solve:10.4f} s   {t_pkg / t_solve:10,.0f}x faster"
    )
    print(f"  same matching as the package: {same}")
    return same


def _to_arrays(men, women):
    mi = {m: i for i, m in enumerate(men)}
    wi = {w: j for j, w in enumerate(women)}

    def side(prefs, index):
        ptr = np.zeros(len(prefs) + 1, np.int64)
        ptr[1:] = np.cumsum([len(v) for v in prefs.values()])
        ch = np.fromiter((index[x] for v in prefs.values() for x in v), np.int32, int(ptr[-1]))
        return ptr, ch

    return side(men, wi), side(women, mi)


def bench_instance(kind, n, repeat, threads, seed, engines=ENGINES, device=None):
    from nx_gpumatch import cpu

    print(f"\n{kind} instance n={n:,} (seed {seed})")
    t = time.perf_counter()
    men, women = gm.stable_marriage_instance(kind, n, seed, threads=threads)
    t_gen = time.perf_counter() - t
    entries = int(men[0][-1])
    t = time.perf_counter()
    prefs = sm.prepare_preferences(men, women, threads=threads)
    t_prep = time.perf_counter() - t
    del men, women  # the packed lists are all the engines need
    with cpu.threads(threads) as nt:
        # Load every engine's kernels on a tiny instance first, so that timed
        # runs (no warm-up: sequential runs take seconds) are the solve alone.
        tiny = sm.prepare_preferences(*gm.stable_marriage_instance(kind, 50, seed))
        for algorithm, engine in engines:
            sm.solve(tiny, algorithm=algorithm, engine=engine)
    print(
        f"  generated {entries:,} list entries per side in {t_gen:.2f} s; packed mutual lists in {t_prep:.2f} s"
    )
    print(f"  {'engine':34s} {'time (s)':>10s} {'proposals':>14s} {'proposals/s':>14s}")
    ref = None
    for algorithm, engine in engines:
        fn = lambda: sm.solve(prefs, algorithm=algorithm, engine=engine, threads=threads)  # noqa: E731, B023 (called at once)
        sec, (mate, props) = median_time(fn, repeat, warmup=0)
        label = f"{algorithm} {engine}" + (f" ({nt} threads)" if engine == "parallel" else "")
        print(f"  {label:34s} {sec:10.4f} {props:14,d} {props / sec:14,.0f}", flush=True)
        if ref is None:
            ref = mate
        elif not np.array_equal(ref, mate):
            print("  ERROR: engines disagree")
            return False
    if device == "gpu":
        sec, (mate, props) = median_time(lambda: sm.solve(prefs, engine="gpu"), repeat, warmup=1)
        print(f"  {'mcvitie_wilson gpu':34s} {sec:10.4f} {props:14,d} {props / sec:14,.0f}")
        if not np.array_equal(ref, mate):
            print("  ERROR: GPU engine disagrees")
            return False
    t = time.perf_counter()
    stable = gm.is_stable(ref, prefs)
    t_check = time.perf_counter() - t
    matched = int((ref >= 0).sum())
    print(
        f"  matched {matched:,} of {n:,} men ({100 * matched / max(n, 1):.2f}%); stable: {stable} (checked in {t_check:.2f} s)"
    )
    return stable


def main(argv):
    ap = argparse.ArgumentParser(prog="python -m nx_gpumatch.benchmark stable_marriage")
    ap.add_argument(
        "--matching-n",
        type=int,
        default=2000,
        help="size of the complete instance for the `matching` package (0: skip)",
    )
    ap.add_argument("--easy-n", type=int, default=5_000_000, help="easy instance size (0: skip)")
    ap.add_argument("--hard-n", type=int, default=20_000, help="hard instance size (0: skip)")
    ap.add_argument("--threads", type=int, default=None, help="Numba threads (default: all cores)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sequential", action="store_true", help="also time the sequential engines")
    ap.add_argument("--gpu", action="store_true", help="also time the GPU engine")
    args = ap.parse_args(argv)

    import numba

    from nx_gpumatch import cpu

    with cpu.threads(args.threads) as nt:
        print(
            f"stable marriage benchmark: {nt} Numba threads of {numba.config.NUMBA_NUM_THREADS}, median of {args.repeat} runs"
        )
    engines = ENGINES if args.sequential else ENGINES[:2]
    ok = True
    if args.matching_n:
        ok &= bench_matching_package(args.matching_n, args.repeat, args.threads)
    if args.easy_n:
        ok &= bench_instance(
            "easy",
            args.easy_n,
            args.repeat,
            args.threads,
            args.seed,
            engines,
            "gpu" if args.gpu else None,
        )
    if args.hard_n:
        ok &= bench_instance(
            "hard",
            args.hard_n,
            args.repeat,
            args.threads,
            args.seed,
            engines,
            "gpu" if args.gpu else None,
        )
    return 0 if ok else 1
