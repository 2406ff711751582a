"""``nx-gpumatch match`` (the default command): weighted matching of a generated
graph or a file, compared with networkx's exact answer when the graph is small."""

import sys
import time

from nx_gpumatch.cli._common import (
    CliError,
    add_graph_arguments,
    given,
    load_graph,
    nonnegative_int,
)


def add_command(sub):
    p = sub.add_parser("match", help="weighted matching (the default command)")
    add_graph_arguments(p)
    p.add_argument(
        "--algorithm",
        "-a",
        default="suitor",
        choices=("suitor", "local_max", "greedy", "red_blue", "blossom"),
        help="blossom is exact; the others are ½-approximate (default suitor)",
    )
    p.add_argument(
        "--compare-max-edges",
        type=nonnegative_int,
        default=20_000,
        help="compare with networkx's exact answer on graphs of at most this many edges "
        "(0: never; default 20000)",
    )
    p.add_argument(
        "--output", "-o", help="write the matched edges (source,target,weight) to this CSV file"
    )
    p.set_defaults(func=run_match)


def run_match(args):
    from tqdm import tqdm

    import nx_gpumatch as gm
    from nx_gpumatch.config import resolve_device

    if args.input and given(args, "seed") and args.algorithm != "red_blue":
        raise CliError("--seed acts on generated graphs and on -a red_blue only")
    seed = args.seed if args.algorithm == "red_blue" else None
    steps = 3 + (args.output is not None)
    with tqdm(total=steps, disable=args.no_progress, leave=False, file=sys.stderr) as bar:
        t0 = time.perf_counter()
        g = load_graph(args, bar)
        t_load = time.perf_counter() - t0
        bar.update()
        engine = resolve_device(args.device, g.num_edges) if args.algorithm != "blossom" else "cpu"
        algo = None if args.algorithm == "blossom" else args.algorithm
        bar.set_description(f"{args.algorithm} (first call compiles or loads kernels)")
        # The first call includes kernel loading and the edge ranking the graph
        # caches; the timed second call is the algorithm alone.
        t0 = time.perf_counter()
        gm.max_weight_matching(
            g, algorithm=algo, device=args.device, seed=seed, threads=args.threads
        )
        t_first = time.perf_counter() - t0
        t0 = time.perf_counter()
        mate = gm.max_weight_matching(
            g, algorithm=algo, device=args.device, seed=seed, threads=args.threads
        )
        t_run = time.perf_counter() - t0
        bar.update()
        size = int((mate >= 0).sum() // 2)
        weight = gm.matching_weight(g, mate)
        exact = None
        if 0 < args.compare_max_edges and g.num_edges <= args.compare_max_edges:
            import networkx as nx

            bar.set_description("networkx exact max_weight_matching (for comparison)")
            G = g.to_networkx()
            t0 = time.perf_counter()
            M = nx.max_weight_matching(G, weight=g.weight_attr or "weight", backend="networkx")
            t_nx = time.perf_counter() - t0
            w_nx = sum(G[u][v][g.weight_attr or "weight"] for u, v in M)
            exact = (len(M), w_nx, t_nx)
        bar.update()
        if args.output:
            bar.set_description(f"writing {args.output}")
            import pandas as pd

            from nx_gpumatch.algorithms._convert import edge_weights, matched_pairs

            u, v = matched_pairs(mate)
            labels = g.labels()
            pd.DataFrame(
                {
                    "source": [labels[i] for i in u.tolist()],
                    "target": [labels[i] for i in v.tolist()],
                    "weight": edge_weights(g, u, v),
                }
            ).to_csv(args.output, index=False)
            bar.update()
    src = args.input or f"generated {args.generate} (seed {args.seed})"
    print(
        f"graph        {src}: {g.num_nodes:,} vertices, {g.num_edges:,} edges (built in {t_load:.3f} s)"
    )
    print(
        f"algorithm    {args.algorithm} on {engine} ({'exact' if algo is None else '½-approximate'})"
    )
    print(f"matching     {size:,} edges, weight {weight:.6g}, valid: {gm.is_matching(g, mate)}")
    print(
        f"time         {t_run:.4f} s (first call {t_first:.3f} s incl. kernel load and edge ranking)"
    )
    if exact is not None:
        n_nx, w_nx, t_nx = exact
        ratio = weight / w_nx if w_nx else 1.0
        print(f"networkx     exact: {n_nx:,} edges, weight {w_nx:.6g} in {t_nx:.3f} s")
        print(
            f"comparison   weight ratio {ratio:.4f} of the exact optimum; {t_nx / max(t_run, 1e-9):,.0f}x faster than networkx"
        )
    elif args.compare_max_edges == 0:
        print("networkx     exact comparison skipped: --compare-max-edges 0")
    else:
        print(
            f"networkx     exact comparison skipped: {g.num_edges:,} edges > --compare-max-edges {args.compare_max_edges:,}"
        )
    if args.output:
        print(f"output       {size:,} matched edges written to {args.output}")
    return 0
