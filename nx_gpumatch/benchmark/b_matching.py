"""b-matching benchmark: the 1M-vertex, 8M-edge random graph against NetworKit.

    python -m nx_gpumatch.benchmark b_matching [--n N] [--m M] [--b 1,3,10] [--repeat R]

For each b, NetworKit's ``BSuitorMatcher`` (on a NetworKit graph built beforehand
from the same edges) and our b-Suitor run alternately, R times each, and each
time is the median of its R runs, so both see the same machine load. Our runs
reuse the edge ranking the Graph caches after its first use ("warm"); the
ranking is timed once, and a "cold" pair of runs (--cold-b) includes it.
"deg10" is Khan et al.'s b(v) = min(10, deg v), which gives the same b-matching
as b = 10 (b past the degree is no limit).
"""

import argparse
import statistics
import time

import numpy as np

from nx_gpumatch.algorithms.b_matching import b_matching_edges
from nx_gpumatch.benchmark import networkit_graph


def _alternate(fns, repeat, warmup=1):
    """Median time of each function, run in turn ``repeat`` times; last results."""
    out = [None] * len(fns)
    for _ in range(warmup):
        for i, fn in enumerate(fns):
            out[i] = fn()
    times = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            out[i] = fn()
            times[i].append(time.perf_counter() - t)
    return [statistics.median(t) for t in times], out


def main(argv):
    ap = argparse.ArgumentParser(prog="python -m nx_gpumatch.benchmark b_matching")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--m", type=int, default=8_000_000)
    ap.add_argument(
        "--b", default="1,3,10,deg10", help="comma-separated b values; 'deg10' is min(10, deg v)"
    )
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--others", action="store_true", help="also time local_dominant and greedy")
    ap.add_argument(
        "--cold-b",
        type=int,
        default=3,
        help="b of the run that includes the edge ranking (default 3)",
    )
    args = ap.parse_args(argv)

    import networkit as nk

    from nx_gpumatch import cpu, generators

    r = args.repeat
    print(f"random graph n={args.n:,} m={args.m:,} (seed 0), median of {r} alternating runs")
    g = generators.random_graph(args.n, args.m, seed=0)
    nkg = networkit_graph(g)
    t = time.perf_counter()
    g.arc_rank()
    t_rank = time.perf_counter() - t
    deg = np.diff(g.indptr)
    print(
        f"  {g.num_edges:,} distinct edges; NetworKit {nk.__version__}; edge ranking (once per Graph) {t_rank:.3f} s"
    )

    with cpu.threads(args.threads) as nthreads:
        print(
            f"{'b':>6s} {'NetworKit [s]':>14s} {'b_suitor [s]':>13s} {'ratio':>7s} {'edges':>10s}  same weight as NetworKit"
        )
        for spec in args.b.split(","):
            if spec == "deg10":
                bv = np.minimum(10, deg)
                nk_b = bv.tolist()
            else:
                bv = np.full(g.num_nodes, int(spec))
                nk_b = int(spec)

            def nk_run(nk_b=nk_b):
                m = nk.matching.BSuitorMatcher(nkg, nk_b)
                m.run()
                return m.getBMatching()

            def ours(bv=bv, algorithm="b_suitor"):
                return b_matching_edges(g, bv, algorithm, device="cpu")

            (t_nk, t_us), (bm, edges) = _alternate([nk_run, ours], r)
            w_us = float(g.edge_weight[edges].sum())
            w_nk = bm.weight()
            same = abs(w_us - w_nk) <= 1e-9 * max(1.0, abs(w_nk))
            print(
                f"{spec:>6s} {t_nk:14.4f} {t_us:13.4f} {t_us / t_nk:6.2f}x {edges.size:10,d}  {same} ({w_us:.4f} vs {w_nk:.4f})"
            )
            if args.others:
                for alg in ("local_dominant", "greedy"):
                    (t_alg,), (e2,) = _alternate([lambda alg=alg: ours(algorithm=alg)], r)
                    print(
                        f"{'':>6s} {alg:>14s} {t_alg:13.4f} {t_alg / t_nk:6.2f}x {e2.size:10,d}  "
                        f"equal to b_suitor: {np.array_equal(e2, edges)}"
                    )
        if args.cold_b is not None:
            bv = np.full(g.num_nodes, args.cold_b)

            def nk_cold():
                m = nk.matching.BSuitorMatcher(nkg, args.cold_b)
                m.run()
                return m

            def ours_cold():
                g.clear_cache()  # forget the edge ranking: it is recomputed inside
                return b_matching_edges(g, bv, "b_suitor", device="cpu")

            (t_nk, t_us), _ = _alternate([nk_cold, ours_cold], r)
            print(
                f"b={args.cold_b} cold (incl. edge ranking): NetworKit {t_nk:.4f} s, b_suitor {t_us:.4f} s, "
                f"ratio {t_us / t_nk:.2f}x"
            )
        print(f"(gpumatch with {nthreads} Numba threads; NetworKit's BSuitorMatcher is sequential)")
    return 0
