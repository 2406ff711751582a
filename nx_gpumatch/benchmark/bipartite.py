"""Bipartite matching benchmark against scipy and igraph, same process.

    python -m nx_gpumatch.benchmark bipartite [--size N] [--repeat R] [--adversarial-size S,...]

Part 1: a random graph (N rows, N columns, 8N edges) and an R-MAT-like
power-law graph of the same size. Every time is the median of R runs on a
prebuilt matrix (scipy: CSR; igraph: a prebuilt Graph and its types); ours
includes the initial matching and the Konig cover proof.

Part 2: every adversarial generator at each size S: our time per edge against
the random graph's of the same size, the edges our searches scanned per edge
(work / m, independent of the machine's load), and scipy's time where it
finishes within --scipy-limit seconds (it runs in a subprocess that is killed
past the limit; 0 skips it). Several sizes show whether a ratio grows with
the size (a defect) or stays constant.

Part 3 (``--small-sizes 300,1000,3000``): small random matrices (density 1.5%,
and the random generator's 8 entries per row) against scipy, each time the
median of ``--small-repeat`` warm calls, the two interleaved; small inputs
should stay within 2x scipy's time.

``--skip-main`` runs parts 2 and 3 only.
"""

import argparse
import subprocess
import sys

import numpy as np

import nx_gpumatch as gm
from nx_gpumatch.benchmark import median_time

SCIPY_SCRIPT = (
    "import sys, time; from nx_gpumatch.generators_bipartite import bipartite_graph; "
    "from scipy.sparse.csgraph import maximum_bipartite_matching as f; "
    "A = bipartite_graph(sys.argv[1], int(sys.argv[2]), 0).tocsr(); t = time.perf_counter(); "
    "p = f(A); print(time.perf_counter() - t, int((p >= 0).sum()))"
)


def _igraph(A):
    import igraph as ig

    coo = A.tocoo()
    nr, nc = A.shape
    g = ig.Graph(
        n=nr + nc, edges=np.column_stack([coo.row, nr + coo.col.astype(np.int64)]).tolist()
    )
    return g, [False] * nr + [True] * nc


def main(argv):
    ap = argparse.ArgumentParser(prog="python -m nx_gpumatch.benchmark bipartite")
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument(
        "--adversarial-size", default="200000", help="size, or sizes: 50000,200000 ('' skips)"
    )
    ap.add_argument("--skip-main", action="store_true", help="parts 2 and 3 only")
    ap.add_argument("--scipy-limit", type=float, default=60.0)
    ap.add_argument("--no-igraph", action="store_true")
    ap.add_argument("--small-sizes", default="", help="part 3: sizes, e.g. 300,1000,3000")
    ap.add_argument("--small-repeat", type=int, default=200)
    args = ap.parse_args(argv)

    from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_mbm

    from nx_gpumatch import cpu
    from nx_gpumatch.algorithms.bipartite.matching import Biadjacency, solve
    from nx_gpumatch.generators_bipartite import GENERATORS, bipartite_graph

    r = args.repeat
    print(f"median of {r} runs; all times in one process")
    with cpu.threads(args.threads) as nthreads:
        for kind in () if args.skip_main else ("random", "rmat"):
            A = bipartite_graph(kind, args.size, 0).tocsr()
            print(f"\n{kind}: {A.shape[0]:,} x {A.shape[1]:,}, {A.nnz:,} edges")
            t_sp, p = median_time(lambda A=A: scipy_mbm(A), r)
            card = int((p >= 0).sum())
            rows = [("scipy maximum_bipartite_matching", t_sp, card)]
            t_ig = None
            if not args.no_igraph:
                g, types = _igraph(A)
                t_ig, mt = median_time(
                    lambda g=g, types=types: g.maximum_bipartite_matching(types), r
                )
                rows.append(("igraph Graph.maximum_bipartite_matching", t_ig, len(mt)))
            for algo, init in (
                ("auto", "karp_sipser"),
                ("hopcroft_karp", "karp_sipser"),
                ("hopcroft_karp", "cheap"),
                ("apfb", "karp_sipser"),
                ("apsb", "karp_sipser"),
            ):
                t, p = median_time(
                    lambda A=A, a=algo, i=init: gm.maximum_bipartite_matching(
                        A, algorithm=a, init=i, device="cpu"
                    ),
                    r,
                )
                rows.append(
                    (f"gpumatch {algo} init={init} ({nthreads} threads)", t, int((p >= 0).sum()))
                )
            print(
                f"  {'':52s} {'time [s]':>9s} {'vs scipy':>9s} {'vs igraph':>10s} {'matched':>10s}"
            )
            for name, t, size in rows:
                vs_ig = f"{t / t_ig:9.2f}x" if t_ig else f"{'-':>10s}"
                print(f"  {name:52s} {t:9.4f} {t / t_sp:8.2f}x {vs_ig} {size:10,d}")
            sizes = {s for _, _, s in rows}
            print(f"  same cardinality everywhere: {sizes == {card}}")

        for s in (int(x) for x in str(args.adversarial_size).split(",") if x):
            _adversarial(s, r, args.scipy_limit, GENERATORS, bipartite_graph, Biadjacency, solve)
        for s in (int(x) for x in str(args.small_sizes).split(",") if x):
            _small(s, args.small_repeat, scipy_mbm, bipartite_graph)
    return 0


def _small(n, repeat, scipy_mbm, bipartite_graph):
    import scipy.sparse as sp

    inputs = (
        ("density 1.5%", sp.random(n, n, density=0.015, format="csr", random_state=1)),
        ("random, 8 per row", bipartite_graph("random", n, 0).tocsr()),
    )
    for name, A in inputs:
        ours, theirs = [], []
        for _ in range(5):  # interleaved: a change in the machine's load hits both
            ours.append(median_time(lambda A=A: gm.maximum_bipartite_matching(A), repeat)[0])
            theirs.append(median_time(lambda A=A: scipy_mbm(A), repeat)[0])
        t, t_sp = sorted(ours)[2], sorted(theirs)[2]
        print(
            f"small {n:,} x {n:,} {name:18s} {A.nnz:8,d} entries: scipy {t_sp * 1e6:8.1f} us,"
            f" gpumatch {t * 1e6:8.1f} us, {t / t_sp:5.2f}x"
        )


def _adversarial(s, r, scipy_limit, generators, bipartite_graph, Biadjacency, solve):
    print(f"\nadversarial inputs at size {s:,} (gpumatch: the default, and init='cheap')")
    print(
        f"  {'kind':12s} {'edges':>10s} {'ours [s]':>9s} {'ns/edge':>8s} {'vs random/edge':>15s}"
        f" {'work/m':>7s} {'cheap [s]':>10s} {'scipy [s]':>10s}"
    )
    per_edge_random = None
    for kind in generators:  # "random" first: the anchor of the row's ratio
        A = bipartite_graph(kind, s, 0)
        t, p = median_time(lambda A=A: gm.maximum_bipartite_matching(A, device="cpu"), r)
        tc, pc = median_time(
            lambda A=A: gm.maximum_bipartite_matching(A, init="cheap", device="cpu"), r
        )
        stats = {}
        solve(Biadjacency.from_scipy(A)[0], device="cpu", stats=stats)
        sp_t = f"{'-':>10s}"
        if scipy_limit > 0:
            try:
                out = subprocess.run(
                    [sys.executable, "-c", SCIPY_SCRIPT, kind, str(s)],
                    capture_output=True,
                    text=True,
                    timeout=scipy_limit,
                    check=True,
                ).stdout.split()
                sp_t = f"{float(out[0]):10.4f}"
                assert int(out[1]) == int((p >= 0).sum()) == int((pc >= 0).sum())
            except subprocess.TimeoutExpired:
                sp_t = f"> {scipy_limit:.0f}".rjust(10)
        pe = t / max(A.nnz, 1)
        if per_edge_random is None:
            per_edge_random = pe
        print(
            f"  {kind:12s} {A.nnz:10,d} {t:9.4f} {pe * 1e9:8.1f} {pe / per_edge_random:14.2f}x"
            f" {stats['work'] / max(A.nnz, 1):7.2f} {tc:10.4f} {sp_t}",
            flush=True,
        )
