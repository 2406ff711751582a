"""Exact maximum-weight matching: the blossom kernel against networkx.

``python -m nx_gpumatch.benchmark exact_matching [--repeat R] [--nx-repeat K (0: skip networkx)]
[--sizes 20000,100000,1000000] [--maxcardinality] [--weights uniform|integer]``

Prints (1) the time of networkx's ``max_weight_matching`` and of ours on the
2,000-vertex, 10,000-edge random graph (``generators.random_graph``, seed 0),
both in this process, with the ratio and a check that the totals agree, and
(2) our time on sparse random graphs of the same density (m = 5n) at the given
edge counts, with the growth exponent between consecutive sizes
(t ~ m**k, k = log(t2/t1) / log(m2/m1)).
"""

import argparse
import math
import time

import networkx as nx
import numpy as np

from nx_gpumatch.benchmark import median_time


def _ours(graph, maxcardinality):
    from nx_gpumatch.cpu import blossom

    return blossom.max_weight_matching(
        graph.num_nodes,
        graph.indptr,
        graph.indices,
        graph.arc_edge,
        graph.edge_src,
        graph.edge_dst,
        graph.edge_weight,
        maxcardinality=maxcardinality,
    )


def _total(graph, mate):
    u = np.flatnonzero(mate > np.arange(mate.shape[0]))
    keys = graph.edge_src.astype(np.int64) * graph.num_nodes + graph.edge_dst
    e = np.searchsorted(keys, u * graph.num_nodes + mate[u])
    return float(graph.edge_weight[e].sum()), int(u.size)


def main(argv=None):
    from nx_gpumatch.generators import random_graph

    ap = argparse.ArgumentParser(prog="python -m nx_gpumatch.benchmark exact_matching")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs of ours (median), default 5")
    ap.add_argument(
        "--nx-repeat",
        type=int,
        default=1,
        help="timed runs of networkx (median), default 1; 0 skips networkx",
    )
    ap.add_argument(
        "--sizes", default="20000,100000,1000000", help="edge counts for the scaling runs"
    )
    ap.add_argument("--maxcardinality", action="store_true")
    ap.add_argument("--weights", default="uniform", choices=["uniform", "integer"])
    args = ap.parse_args(argv)
    mc = args.maxcardinality

    g = random_graph(2000, 10000, seed=0, weights=args.weights)
    t0 = time.perf_counter()
    _ours(g, mc)  # compiles (or loads the cache)
    first = time.perf_counter() - t0
    ours_t, mate = median_time(lambda: _ours(g, mc), repeat=args.repeat, warmup=1)
    if args.nx_repeat == 0:
        print(f"  nx_gpumatch blossom (Numba): {ours_t * 1e3:9.2f} ms at n=2000, m={g.num_edges}")
        return _scaling(args, mc)
    G = g.to_networkx()
    nx_t, M = median_time(
        lambda: nx.max_weight_matching(G, maxcardinality=mc, backend="networkx"),
        repeat=args.nx_repeat,
        warmup=0,
    )
    ours_w, ours_c = _total(g, mate)
    nx_w = sum(G[u][v]["weight"] for u, v in M)
    same = math.isclose(ours_w, nx_w, rel_tol=1e-9) and (not mc or ours_c == len(M))
    print(
        f"exact matching, random graph n=2000 m={g.num_edges} weights={args.weights} maxcardinality={mc}"
    )
    print(f"  networkx max_weight_matching : {nx_t:9.3f} s  (median of {args.nx_repeat})")
    print(
        f"  nx_gpumatch blossom (Numba)  : {ours_t * 1e3:9.2f} ms (median of {args.repeat}; first call {first:.2f} s)"
    )
    print(
        f"  speed-up                     : {nx_t / ours_t:9.0f}x   totals {'equal' if same else 'DIFFER'}"
        f" ({ours_w:.6f} vs {nx_w:.6f}, {ours_c} vs {len(M)} edges)"
    )
    if not same:
        return 1
    return _scaling(args, mc)


def _scaling(args, mc):
    from nx_gpumatch.generators import random_graph

    sizes = [int(s) for s in args.sizes.split(",") if s]
    rows = []
    print(f"scaling, sparse random graphs m = 5n (median of {max(1, min(args.repeat, 3))}):")
    for m in sizes:
        h = random_graph(m // 5, m, seed=1, weights=args.weights)
        t, mate = median_time(lambda: _ours(h, mc), repeat=max(1, min(args.repeat, 3)), warmup=0)  # noqa: B023 (called at once)
        w, c = _total(h, mate)
        line = f"  n={h.num_nodes:>8} m={h.num_edges:>8}: {t:8.3f} s   matched {c} edges"
        if rows:
            pm, pt = rows[-1]
            line += f"   growth t ~ m^{math.log(t / pt) / math.log(h.num_edges / pm):.2f}"
        rows.append((h.num_edges, t))
        print(line, flush=True)
    if len(rows) >= 2:
        (m1, t1), (m2, t2) = rows[0], rows[-1]
        print(
            f"  overall growth {rows[0][0]}..{rows[-1][0]} edges: t ~ m^{math.log(t2 / t1) / math.log(m2 / m1):.2f}"
        )
    return 0
