"""Distributed Louvain or Leiden against the shared-memory engine: time,
quality and memory per rank.

``python -m nx_gpumatch.benchmark distributed_louvain [--method louvain|leiden]
[--metric modularity|cpm] [--resolution 1] [--graph random|rmat|planted]
[-n 1000000] [-m 8000000] [-P 1 2 4] [--repeat 3]`` starts itself under
``mpiexec -n P`` for each P. ``planted`` is a planted partition
(``--communities`` of skewed sizes on consecutive ids, ``--mixing``: the share
of the edges drawn from the whole graph), on which a block partition cuts few
edges. Every run generates the same global graph (each rank only its own
share), splits it (``partition_edges`` with self-loops kept), and times
``nx_gpumatch.distributed.louvain_communities`` or ``leiden_communities``
(seed 1), then reports per P: the median time, the objective (modularity, or
CPM for ``--metric cpm``), the communities, the time per phase, sweeps, levels
and messages (slowest rank), the split's time, and the peak resident memory
of each rank (``getrusage``: the largest, the smallest and their sum; and
the process's own before the graph is generated: interpreter, libraries and
the kernels loaded). The
anchor is the shared-memory function of the same name on the whole graph
(same seed and parameters), timed in another process so that its memory does
not count in the ranks' peaks. With two rank counts or more it ends with the
scaling model of :mod:`nx_gpumatch.benchmark.distributed_model` fitted to the
runs: the predicted time for up to 1024 ranks on a graph of 1B edges.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

from nx_gpumatch.benchmark.distributed import _edges


def _parser():
    p = argparse.ArgumentParser(prog="python -m nx_gpumatch.benchmark distributed_louvain")
    p.add_argument("--method", choices=("louvain", "leiden"), default="louvain")
    p.add_argument(
        "--metric",
        choices=("modularity", "cpm"),
        default="modularity",
        help="Leiden's objective (default modularity)",
    )
    p.add_argument("--resolution", type=float, default=1.0, help="resolution, or CPM's gamma")
    p.add_argument("--graph", choices=("random", "rmat", "planted"), default="random")
    p.add_argument("--communities", type=int, default=1000, help="planted: communities")
    p.add_argument(
        "--mixing", type=float, default=0.2, help="planted: share of edges drawn from all vertices"
    )
    p.add_argument("--rmat-kind", choices=("er", "ssca", "g500"), default="g500")
    p.add_argument("-n", type=int, default=1_000_000, help="vertices (rmat: 2**ceil(log2 n))")
    p.add_argument("-m", type=int, default=8_000_000, help="edges drawn")
    p.add_argument("-P", type=int, nargs="+", default=[1, 2, 4], help="rank counts")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per configuration")
    p.add_argument("--timeout", type=int, default=3600, help="seconds per launch")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--anchor", action="store_true", help=argparse.SUPPRESS)
    return p


def _peak_mb():
    # ru_maxrss is in KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _graph(args, comm):
    """This rank's share of the benchmark graph (``comm`` False: all of it)."""
    if args.graph != "planted":
        return _edges(args, comm)
    from nx_gpumatch import distributed as D

    d = 2.0 * args.m / args.n
    d_in, d_out = d * (1 - args.mixing), d * args.mixing
    return D.planted_edges(args.n, args.communities, d_in, d_out, seed=1, comm=comm)


def _kwargs(args):
    kw = {"seed": 1, "resolution": args.resolution}
    if args.method == "leiden":
        kw["metric"] = args.metric
    elif args.metric != "modularity":
        raise SystemExit("--metric cpm needs --method leiden")
    return kw


def _objective(args, res):
    return res.cpm() if args.metric == "cpm" else res.modularity()


def worker(args):
    """One mpiexec launch: split, then the method timed ``repeat`` times."""
    from mpi4py import MPI

    from nx_gpumatch import distributed as D
    from nx_gpumatch.config import get_config

    comm = MPI.COMM_WORLD
    get_config().interpret_small = False  # kernels compile (or load) in the warm-up
    method = getattr(D, f"{args.method}_communities")
    method(D.random_edges(2000, 20_000, seed=2, comm=comm), **_kwargs(args))
    base = comm.gather(_peak_mb())
    part = _graph(args, comm)
    comm.Barrier()
    t = time.perf_counter()
    p = D.as_partition(part, comm, num_nodes=part["num_nodes"], loops=True)
    t_split = comm.allreduce(time.perf_counter() - t, op=MPI.MAX)
    del part
    times = []
    for _ in range(args.repeat):
        comm.Barrier()
        t = time.perf_counter()
        res = method(p, **_kwargs(args))
        times.append(comm.allreduce(time.perf_counter() - t, op=MPI.MAX))
    q = _objective(args, res)
    connected = res.connected() if args.method == "leiden" else None
    k = res.num_communities()
    peaks = comm.gather(_peak_mb())
    if comm.rank == 0:
        st = res.stats
        out = {
            "P": comm.size,
            "split": t_split,
            "time": statistics.median(times),
            "modularity": q,
            "communities": k,
            "phases": st.time,
            "levels": st.total["levels"],
            "sweeps": st.total["sweeps"],
            "rounds": st.total["rounds"],
            "refinements": st.total["refinements"],
            "messages": st.total["messages"],
            "bytes": st.total["bytes"],
            "peak_mb": peaks,
            "base_mb": base,
            "connected": connected,
        }
        print("RESULT " + json.dumps(out), flush=True)
    return 0


def anchor(args):
    """The shared-memory method on the whole graph, in this process."""
    import nx_gpumatch as gm
    from nx_gpumatch.community.quality import modularity
    from nx_gpumatch.graph import Graph

    whole = _graph(args, False)
    g = Graph.from_arrays(whole["src"], whole["dst"], whole["weight"], num_nodes=whole["num_nodes"])
    del whole
    base = _peak_mb()
    method = getattr(gm, f"{args.method}_communities")
    method(g, **_kwargs(args))  # compile or load the kernels
    ts = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        labels = method(g, **_kwargs(args))  # a Graph's: a label per vertex
        ts.append(time.perf_counter() - t)
    if args.metric == "cpm":  # networkx's constant_potts_model, from the edge list
        lab = np.asarray(labels)
        inner = float(g.edge_weight[lab[g.edge_src] == lab[g.edge_dst]].sum())
        sizes = np.bincount(lab).astype(np.float64)
        q = inner + float(g.loop_weight.sum()) - args.resolution * float(sizes @ sizes) / 2
    else:
        q = modularity(g, labels, args.resolution)
    out = {
        "time": statistics.median(ts),
        "modularity": q,
        "communities": int(np.unique(labels).shape[0]),
        "edges": int(g.num_edges),
        "graph_mb": base,
        "peak_mb": _peak_mb(),
    }
    print("RESULT " + json.dumps(out), flush=True)
    return 0


def _result(stdout):
    line = [ln for ln in stdout.splitlines() if ln.startswith("RESULT ")]
    return json.loads(line[-1][7:]) if line else None


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.metric != "modularity" and args.method != "leiden":
        _parser().error("--metric cpm needs --method leiden")
    if args.worker:
        return worker(args)
    if args.anchor:
        return anchor(args)
    from nx_gpumatch.distributed.launch import run_mpi

    base = ["-m", "nx_gpumatch.benchmark.distributed_louvain", "--graph", args.graph]
    base += ["--method", args.method, "--metric", args.metric]
    base += ["--resolution", repr(args.resolution)]
    base += ["--rmat-kind", args.rmat_kind, "-n", str(args.n), "-m", str(args.m)]
    base += ["--communities", str(args.communities), "--mixing", repr(args.mixing)]
    base += ["--repeat", str(args.repeat)]
    print("running the shared-memory anchor ...", file=sys.stderr, flush=True)
    out = subprocess.run(
        [sys.executable, *base, "--anchor"],
        capture_output=True,
        text=True,
        timeout=args.timeout,
        env=os.environ,
    )
    ref = _result(out.stdout)
    if out.returncode != 0 or ref is None:
        print(out.stdout[-2000:], out.stderr[-4000:], file=sys.stderr)
        return 1
    rows = {}
    for P in args.P:
        print(f"running mpiexec -n {P} ...", file=sys.stderr, flush=True)
        out = run_mpi(P, [*base, "--worker"], timeout=args.timeout)
        rows[P] = _result(out.stdout)
        if out.returncode != 0 or rows[P] is None:
            print(out.stdout[-2000:], out.stderr[-4000:], file=sys.stderr)
            return 1
    _print(args, ref, rows)
    return 0


def _print(args, ref, rows):
    kind = {
        "random": "random",
        "rmat": f"R-MAT {args.rmat_kind}",
        "planted": f"planted ({args.communities:,} communities, mixing {args.mixing:g})",
    }[args.graph]
    print(
        f"\n{kind} graph: n={args.n:,}, {args.m:,} drawn edges ({ref['edges']:,} distinct); "
        f"medians of {args.repeat} runs, seed 1"
    )
    print(
        f"anchor: shared-memory nx_gpumatch.{args.method}_communities {ref['time']:.3f} s, "
        f"{args.metric} "
        f"{ref['modularity']:.6f}, {ref['communities']:,} communities; peak memory "
        f"{ref['peak_mb']:,.0f} MB ({ref['graph_mb']:,.0f} MB with the graph built)"
    )
    print(
        f"\n  P | time (s) vs anchor | {args.metric:<10}  vs anchor | communities | levels sweeps |"
        "  split (s) | peak MB per rank: max   min   sum | base"
    )
    for P, r in sorted(rows.items()):
        pk = r["peak_mb"]
        dq = (r["modularity"] - ref["modularity"]) / abs(ref["modularity"] or 1)
        print(
            f"{P:3d} | {r['time']:8.3f} {r['time'] / ref['time']:7.2f}x | {r['modularity']:10.6g} "
            f"{dq:+8.3%} | {r['communities']:11,d} | {r['levels']:6d} {r['sweeps']:6d} | "
            f"{r['split']:10.3f} | {max(pk):21,.0f} {min(pk):5,.0f} {sum(pk):6,.0f} | "
            f"{max(r['base_mb']):4,.0f}"
        )
    print("\nTime per phase (s, slowest rank) and messages:")
    for P, r in sorted(rows.items()):
        ph = ", ".join(f"{k} {v:.3f}" for k, v in r["phases"].items())
        conn = "" if r["connected"] is None else f", every community connected: {r['connected']}"
        print(f"{P:3d} | {ph} | {r['messages']:,} messages, {r['bytes']:,} bytes{conn}")
    if len(rows) >= 2:
        from nx_gpumatch.benchmark.distributed_model import print_model

        print_model(rows, args.n, ref["edges"])


if __name__ == "__main__":
    sys.exit(main())
