"""Scaling and communication of the distributed b-Suitor, in the form of the
tables of Khan et al. (SC 2016).

``python -m nx_gpumatch.benchmark.distributed [--graph random|rmat] [-P 1 2 4]``
starts itself under ``mpiexec -n P`` for each P. Every run generates the same
global graph (1M vertices, 8M drawn edges by default), each rank only its own
share, and reports time per phase, supersteps and the messages of each kind, and
the time of each step of the split (``partition_edges``: checks, exchange,
local ids, unique edges, graph, ghosts) on the slowest rank.
The anchor is the shared-memory ``nx_gpumatch.b_matching`` on the whole graph,
timed on rank 0 of the P = 1 run (the same process as the distributed runs),
and every distributed result is checked equal to it.

Strategy table (the largest P): the percent reduction of each message kind
against the basic strategy (b' = b, one vertex subset, queue in id order), for
b' = ceil(b/2) (``b'half_N1_U``), 32 vertex subsets (``b'b_N32_U``) and 16
vertex subsets with the queue sorted by heaviest edge (``b'b_N16_S``), the
columns of the paper's Table II.
"""

import argparse
import hashlib
import json
import os
import statistics
import sys
import time

import numpy as np

STRATEGIES = {
    "b'b_N1_U": {},
    "b'half_N1_U": {"b_subset": "half"},
    "b'b_N32_U": {"vertex_subsets": 32},
    "b'b_N16_S": {"vertex_subsets": 16, "ordering": "heaviest"},
}
# Khan et al. 2016, Table II: percent reduction of proposals, rejections,
# annulments and all messages w.r.t. the basic strategy, per graph class
# (ER_28 and SSCA_28 on 256 nodes, G500_27 on 128 nodes; its sorted column
# used 64 vertex subsets).
PAPER = {
    "ER_28": {
        "b'half_N1_U": (3.23, 20.72, 0.33, 4.97),
        "b'b_N32_U": (3.58, 11.15, 12.75, 5.51),
        "b'b_N16_S": (6.91, 21.18, 24.90, 10.62),
    },
    "SSCA_28": {
        "b'half_N1_U": (7.37, 16.58, 17.03, 9.84),
        "b'b_N32_U": (8.13, 17.63, -1.55, 8.62),
        "b'b_N16_S": (11.62, 19.22, 31.12, 14.87),
    },
    "G500_27": {
        "b'half_N1_U": (0.14, 0.95, 4.51, 0.78),
        "b'b_N32_U": (5.75, 12.16, -2.19, 7.12),
        "b'b_N16_S": (9.16, 7.08, 40.12, 11.16),
    },
}
PAPER_CLASS = {"random": "ER_28", "er": "ER_28", "ssca": "SSCA_28", "g500": "G500_27"}
KINDS = ("proposals", "rejections", "annulments", "messages")


def _parser():
    p = argparse.ArgumentParser(prog="python -m nx_gpumatch.benchmark.distributed")
    p.add_argument("--graph", choices=("random", "rmat"), default="random")
    p.add_argument("--rmat-kind", choices=("er", "ssca", "g500"), default="g500")
    p.add_argument("-n", type=int, default=1_000_000, help="vertices (rmat: 2**ceil(log2 n))")
    p.add_argument("-m", type=int, default=8_000_000, help="edges drawn")
    p.add_argument("-b", type=int, default=3)
    p.add_argument("-P", type=int, nargs="+", default=[1, 2, 4], help="rank counts")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per configuration")
    p.add_argument("--timeout", type=int, default=1800, help="seconds per mpiexec launch")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--anchor", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--strategies", action="store_true", help=argparse.SUPPRESS)
    return p


def _edges(args, comm):
    from nx_gpumatch import distributed as D

    if args.graph == "random":
        return D.random_edges(args.n, args.m, seed=1, comm=comm)
    scale = max(1, int(np.ceil(np.log2(args.n))))
    return D.rmat_edges(scale, max(1, args.m // (1 << scale)), args.rmat_kind, seed=1, comm=comm)


def worker(args):
    """One mpiexec launch: the basic strategy timed, the others counted."""
    from mpi4py import MPI

    from nx_gpumatch import distributed as D
    from nx_gpumatch.config import get_config

    comm = MPI.COMM_WORLD
    threads = max(1, (os.cpu_count() or 1) // comm.size)
    get_config().interpret_small = False  # kernels compile (or load) in the warm-up
    D.as_partition(D.random_edges(1000, 5000, seed=2, comm=comm), comm)  # untimed: warm-up
    part = _edges(args, comm)
    comm.Barrier()
    t = time.perf_counter()
    p = D.as_partition(part, comm, num_nodes=part["num_nodes"])
    t_part = comm.allreduce(time.perf_counter() - t, op=MPI.MAX)
    split = {k: comm.allreduce(v, op=MPI.MAX) for k, v in p.times.items()}
    out = {"P": comm.size, "threads": threads, "partition": t_part, "split": split}
    names = list(STRATEGIES) if args.strategies else ["b'b_N1_U"]
    res = D.b_matching(p, args.b, threads=threads)  # untimed: kernels load, graph caches fill
    for name in names:
        times, stats = [], None
        for i in range(args.repeat if name == "b'b_N1_U" else 1):
            comm.Barrier()
            t = time.perf_counter()
            res = D.b_matching(p, args.b, threads=threads, **STRATEGIES[name])
            times.append(comm.allreduce(time.perf_counter() - t, op=MPI.MAX))
            stats = res.stats
        out[name] = {
            "time": statistics.median(times),
            "times": times,
            "phases": stats.time,
            **{k: stats.total[k] for k in ("supersteps", "iterations") + KINDS},
        }
    got = res.gather()
    if comm.rank == 0:
        out["digest"] = _digest(got[0], got[1])
    if args.anchor and comm.rank == 0:
        import nx_gpumatch as gm
        from nx_gpumatch.graph import Graph

        whole = _edges(args, False)
        g = Graph.from_arrays(whole["src"], whole["dst"], whole["weight"], num_nodes=args.n)
        u, v = gm.b_matching(g, args.b, threads=threads)  # compile / warm
        ts = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            u, v = gm.b_matching(g, args.b, threads=threads)
            ts.append(time.perf_counter() - t)
        out["anchor"] = statistics.median(ts)
        out["anchor_digest"] = _digest(u, v)
        out["edges"] = int(g.num_edges)
        out["size"] = int(u.shape[0])
    if comm.rank == 0:
        print("RESULT " + json.dumps(out), flush=True)
    return 0


def _digest(u, v):
    """A fingerprint of a matching (sorted edge list), to compare runs."""
    h = hashlib.sha256(np.ascontiguousarray(u, np.int64).tobytes())
    h.update(np.ascontiguousarray(v, np.int64).tobytes())
    return h.hexdigest()[:16]


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.worker:
        return worker(args)
    from nx_gpumatch.distributed.launch import run_mpi

    base = ["-m", "nx_gpumatch.benchmark.distributed", "--worker", "--graph", args.graph]
    base += ["--rmat-kind", args.rmat_kind]
    base += ["-n", str(args.n), "-m", str(args.m), "-b", str(args.b), "--repeat", str(args.repeat)]
    rows = {}
    top = max(args.P)
    for P in args.P:
        extra = (["--anchor"] if P == min(args.P) else []) + (["--strategies"] if P == top else [])
        print(f"running mpiexec -n {P} ...", file=sys.stderr, flush=True)
        out = run_mpi(P, base + extra, timeout=args.timeout)
        line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
        if out.returncode != 0 or not line:
            print(out.stdout[-2000:], out.stderr[-4000:], file=sys.stderr)
            return 1
        rows[P] = json.loads(line[-1][7:])
    _print(args, rows, top)
    return 0


def _print(args, rows, top):
    first = rows[min(rows)]
    anchor = first.get("anchor")
    kind = "random" if args.graph == "random" else f"R-MAT {args.rmat_kind}"
    print(
        f"\n{kind} graph: n={args.n:,}, {args.m:,} drawn edges "
        f"({first.get('edges', 0):,} distinct), b={args.b}; medians of {args.repeat} runs"
    )
    if anchor is not None:
        print(
            f"anchor: shared-memory nx_gpumatch.b_matching {anchor:.3f} s "
            f"({first['threads']} threads)"
        )
    print(
        "\n  P thr | time (s)  vs anchor |  setup compute  msgs   comm | supersteps  proposals "
        "rejections annulments   messages | equal"
    )
    for P, r in sorted(rows.items()):
        b = r["b'b_N1_U"]
        ph = b["phases"]
        ratio = f"{b['time'] / anchor:8.2f}x" if anchor else "        -"
        print(
            f"{P:3d} {r['threads']:3d} | {b['time']:8.3f} {ratio} | {ph.get('setup', 0):6.3f} "
            f"{ph.get('compute', 0):7.3f} "
            f"{ph.get('messages', 0):6.3f} {ph.get('communicate', 0):6.3f} | {b['supersteps']:10d} "
            f"{b['proposals']:10,d} {b['rejections']:10,d} {b['annulments']:10,d} "
            f"{b['messages']:10,d} | {r['digest'] == first.get('anchor_digest')}"
        )
    print(
        "  (phases: slowest rank, last run; partition / redistribution not included: "
        + ", ".join(f"{r['partition']:.2f} s at P={P}" for P, r in sorted(rows.items()))
        + ")"
    )
    print("\nSplit (partition_edges) per step, slowest rank (s):")
    steps = list(first.get("split", {}))
    print("  P " + "".join(f"{k:>13s}" for k in steps) + "        total")
    for P, r in sorted(rows.items()):
        sp = r.get("split", {})
        print(
            f"{P:3d} " + "".join(f"{sp.get(k, 0):13.3f}" for k in steps) + f"{r['partition']:13.3f}"
        )
    r = rows[top]
    basic = r["b'b_N1_U"]
    cls = PAPER_CLASS[args.graph if args.graph == "random" else args.rmat_kind]
    paper = PAPER[cls]
    print(f"\nReduction in messages w.r.t. the basic strategy b'b_N1_U, P = {top} (paper: {cls})")
    cols = [c for c in STRATEGIES if c != "b'b_N1_U"]
    print(f"{'':12s}" + "".join(f"{c:>24s}" for c in cols))
    for i, k in enumerate(KINDS):
        cells = []
        for c in cols:
            ours = 100.0 * (basic[k] - r[c][k]) / basic[k] if basic[k] else 0.0
            cells.append(f"{ours:7.2f}% (paper {paper[c][i]:5.2f}%)")
        print(f"{k:12s}" + "".join(f"{x:>24s}" for x in cells))
    print(
        f"{'supersteps':12s}"
        + "".join(f"{r[c]['supersteps']:>24d}" for c in cols)
        + f"   (basic {basic['supersteps']})"
    )


if __name__ == "__main__":
    sys.exit(main())
