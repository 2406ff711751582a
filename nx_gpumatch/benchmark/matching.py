"""Matching benchmark: the 1M-vertex, 8M-edge random graph against NetworKit.

    python -m nx_gpumatch.benchmark matching [--n N] [--m M] [--repeat R]
        [--graph random,chung_lu,barabasi_albert,watts_strogatz] [--weights uniform,unit,small_int]

``--graph`` and ``--weights`` take comma-separated lists; each (graph, weights)
pair gets its table (see :func:`nx_gpumatch.generators.generate` for the kinds:
power-law, preferential-attachment and small-world stand-ins for real graphs;
"unit" and "small_int" weights give the ties of unweighted real graphs).

Every time is the median of R runs in this process, on a prebuilt Graph (and a
prebuilt NetworKit graph). local_max, greedy and red_blue use the edge ranking
the Graph caches after its first use ("cached"); the "cold" row clears that cache
first, so it includes ranking the edges.

Suitor against NetworKit times the same work on both sides: NetworKit's
``SuitorMatcher(G, sortSuitor=False)`` constructor and ``run()`` (unsorted rows,
the suitor arrays allocated, the Matching filled), and our whole
``max_weight_matching(g, algorithm="suitor")`` call (option checks, the kernel on
the rows as the Graph stores them, the mate array). Neither side sorts or ranks
anything, and nothing is cached between runs. The ratio is given twice: medians
of R runs of each side, and the median over R back-to-back pairs (order
alternating), which holds up better on a loaded machine.
"""

import argparse
import os
import subprocess
import sys
import time

import numpy as np

import nx_gpumatch as gm
from nx_gpumatch.benchmark import choice_list, median_time, networkit_graph, paired_ratios
from nx_gpumatch.generators import GRAPH_KINDS

LATENCY_SCRIPT = (
    "import time; t = time.perf_counter(); import nx_gpumatch as gm; from nx_gpumatch import generators; "
    "g = generators.random_graph(400, 1000, seed=0); gm.max_weight_matching(g, algorithm='suitor'); "
    "print(time.perf_counter() - t)"
)


def main(argv):
    # NetworKit and Numba share the process's OpenMP runtime, which reads its
    # wait policy when it loads: whichever loads first would choose it for
    # both, and with spinning idle workers each side's threads take the other's
    # cores in the back-to-back timings. NetworKit's Suitor is sequential, so
    # sleeping idle workers (the package's own choice) cost it nothing.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    ap = argparse.ArgumentParser(prog="python -m nx_gpumatch.benchmark matching")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--m", type=int, default=8_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument(
        "--nx-n",
        type=int,
        default=100_000,
        help="size of the networkx graph for the conversion timing",
    )
    ap.add_argument("--nx-m", type=int, default=800_000)
    ap.add_argument(
        "--suitor-only",
        action="store_true",
        help="time only Suitor against NetworKit (skip the other algorithms and conversions)",
    )
    ap.add_argument(
        "--graph",
        default="random",
        help=f"comma-separated graph kinds among {','.join(GRAPH_KINDS)} (default random)",
    )
    ap.add_argument(
        "--weights",
        default="uniform",
        help="comma-separated weight kinds among uniform, unit, small_int, integer (default uniform)",
    )
    args = ap.parse_args(argv)
    kinds = choice_list(ap, "--graph", args.graph, GRAPH_KINDS)
    weight_kinds = choice_list(
        ap, "--weights", args.weights, ("uniform", "unit", "small_int", "integer")
    )

    import pandas as pd

    from nx_gpumatch import Graph, generators

    r = args.repeat
    g = None
    for kind in kinds:
        for weights in weight_kinds:
            g = generators.generate(kind, args.n, args.m, seed=0, weights=weights)
            table(g, f"{kind} graph n={args.n:,} m={args.m:,} (seed 0), {weights} weights", args)
    if args.suitor_only:
        return 0

    # Conversions.
    df = pd.DataFrame({"source": g.edge_src, "target": g.edge_dst, "weight": g.edge_weight})
    t_df, _ = median_time(lambda: Graph.from_pandas(df), max(1, r // 2), warmup=0)
    t_arr, _ = median_time(
        lambda: Graph.from_arrays(g.edge_src, g.edge_dst, g.edge_weight, num_nodes=g.num_nodes),
        max(1, r // 2),
        warmup=0,
    )
    small = generators.random_graph(args.nx_n, args.nx_m, seed=0)
    G = small.to_networkx()
    t_nx, _ = median_time(lambda: Graph.from_networkx(G), 1, warmup=0)
    print(
        f"conversion: DataFrame ({g.num_edges:,} edges) {t_df:.3f} s; arrays {t_arr:.3f} s; "
        f"networkx graph ({small.num_edges:,} edges) {t_nx:.3f} s ({small.num_edges / t_nx / 1e6:.2f} M edges/s)"
    )

    # First-call latency in a fresh process with a warm Numba cache.
    subprocess.run([sys.executable, "-c", LATENCY_SCRIPT], check=True, capture_output=True)
    walls = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", LATENCY_SCRIPT], check=True, capture_output=True)
        walls.append(time.perf_counter() - t0)
    print(
        f"fresh process, warm cache: python start + import + 1,000-edge Suitor {np.median(walls):.2f} s wall (median of 3)"
    )
    return 0


def table(g, title, args):
    """Time the matchings on Graph g against NetworKit and print their table."""
    import networkit as nk

    from nx_gpumatch import cpu

    r = args.repeat
    print(f"{title}, median of {r} runs")
    print(f"  load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    nkg = networkit_graph(g)
    print(
        f"  {g.num_edges:,} distinct edges; NetworKit {nk.__version__} with {nk.getMaxNumberOfThreads()} threads"
    )

    def nk_suitor():
        m = nk.matching.SuitorMatcher(nkg, sortSuitor=False, checkSortedEdges=False)
        m.run()
        return m

    t_nk, m_nk = median_time(nk_suitor, r)
    rows = [("NetworKit SuitorMatcher(sortSuitor=False)", t_nk, m_nk.getMatching().size(nkg))]

    with cpu.threads(args.threads) as nthreads:

        def ours(algo):
            kw = {"seed": 1} if algo == "red_blue" else {}  # only red_blue is randomized
            return lambda: gm.max_weight_matching(g, algorithm=algo, **kw)

        def cold():
            g.clear_cache()
            return gm.max_weight_matching(g, algorithm="local_max")

        results = {}
        algos = ("suitor",) if args.suitor_only else ("suitor", "local_max", "greedy", "red_blue")
        for algo in algos:
            t, mate = median_time(ours(algo), r)
            results[algo] = mate
            how = "no preprocessing" if algo == "suitor" else "ranking cached"
            rows.append(
                (f"gpumatch {algo} ({how}, {nthreads} threads)", t, int((mate >= 0).sum() // 2))
            )
        if not args.suitor_only:
            t, mate = median_time(cold, r)
            rows.append(
                (
                    f"gpumatch local_max (cold: incl. edge ranking, {nthreads} threads)",
                    t,
                    int((mate >= 0).sum() // 2),
                )
            )
            t_rank, _ = median_time(lambda: (g.clear_cache(), g.arc_rank()), r)
        pair_med, pairs = paired_ratios(ours("suitor"), nk_suitor, r)

    nk_weight = m_nk.getMatching().weight(nkg)
    our_weight = gm.matching_weight(g, results["suitor"])
    print(f"{'':62s} {'time [s]':>9s} {'vs NetworKit':>13s} {'matched':>9s}")
    for name, t, size in rows:
        print(f"  {name:60s} {t:9.4f} {t / t_nk:12.2f}x {size:9,d}")
    if not args.suitor_only:
        print(
            f"  edge ranking alone (cached on the Graph after first use)     {t_rank:9.4f} {t_rank / t_nk:12.2f}x"
        )
    print(
        f"  Suitor / NetworKit in back-to-back pairs (order alternating): median {pair_med:.2f}x "
        f"(range {min(pairs):.2f}-{max(pairs):.2f}x over {len(pairs)} pairs)"
    )
    print(
        "  timed on both sides: the whole call on the prebuilt graph, rows unsorted, no "
        "sort or ranking, nothing cached"
    )
    print(f"  load average after the timings: {os.getloadavg()[0]:.2f}")
    if args.suitor_only:
        print(f"weight {our_weight:.6f} vs NetworKit {nk_weight:.6f}")
        return
    same = all(np.array_equal(results["suitor"], results[a]) for a in ("local_max", "greedy"))
    print(
        f"suitor = local_max = greedy: {same}; weight {our_weight:.6f} vs NetworKit {nk_weight:.6f}"
    )
