"""The ``nx-gpumatch`` command: run an algorithm on a generated graph or a file.

``nx-gpumatch`` alone runs the default job: weighted matching on a generated
random graph, compared with networkx's exact answer when the graph is small.
"""

import argparse
import sys
import time

import numpy as np

GENERATORS = ("random", "rmat", "geometric", "delaunay")
# Subcommands of other problems: (module, function adding the subparser).
EXTRA_COMMANDS = (
    ("nx_gpumatch.cli_b_matching", "add_b_matching_command"),
    ("nx_gpumatch.cli_stable_marriage", "add_stable_marriage_command"),
    ("nx_gpumatch.cli_louvain", "add_louvain_command"),
)


def load_graph(args, progress):
    """A Graph from --input (.mtx or edge-list .csv) or a generated one."""
    from nx_gpumatch import Graph, generators

    if args.input:
        progress.set_description(f"reading {args.input}")
        if args.input.endswith(".mtx") or args.input.endswith(".mtx.gz"):
            return Graph.from_mtx(args.input)
        import pandas as pd

        df = pd.read_csv(args.input)
        weight = args.weight if args.weight in df.columns else None
        return Graph.from_pandas(df, source=args.source, target=args.target, weight=weight)
    progress.set_description(f"generating {args.generate} graph")
    if args.generate == "random":
        return generators.random_graph(args.n, args.m, seed=args.seed)
    if args.generate == "rmat":
        scale = max(1, int(np.ceil(np.log2(max(args.n, 2)))))
        return generators.rmat(scale, max(1, args.m // (1 << scale)), seed=args.seed)
    if args.generate == "geometric":
        return generators.random_geometric(args.n, seed=args.seed)
    return generators.delaunay(args.n, seed=args.seed)


def add_graph_arguments(p, n=1000, m=5000):
    g = p.add_argument_group("input graph")
    g.add_argument("--input", "-i", help=".mtx file or edge-list .csv (header row); default: generate one")
    g.add_argument("--generate", choices=GENERATORS, default="random", help="generator when no --input (default: random)")
    g.add_argument("-n", type=int, default=n, help=f"vertices of the generated graph (default {n})")
    g.add_argument("-m", type=int, default=m, help=f"edges drawn for the generated graph (default {m})")
    g.add_argument("--seed", type=int, default=0, help="generator / algorithm seed (default 0)")
    g.add_argument("--source", default="source", help="CSV source column")
    g.add_argument("--target", default="target", help="CSV target column")
    g.add_argument("--weight", default="weight", help="CSV weight column (all 1 if absent)")
    e = p.add_argument_group("engine")
    e.add_argument("--device", choices=("auto", "cpu", "gpu"), default=None, help="engine (default: config, 'auto')")
    e.add_argument("--threads", type=int, default=None, help="Numba threads (default: all cores)")
    e.add_argument("--no-progress", action="store_true", help="no progress display")


def _match_parser(sub):
    p = sub.add_parser("match", help="weighted matching (the default command)")
    add_graph_arguments(p)
    p.add_argument(
        "--algorithm",
        "-a",
        default="suitor",
        choices=("suitor", "local_max", "greedy", "red_blue", "blossom"),
        help="blossom is exact; the others are ½-approximate (default suitor)",
    )
    p.add_argument("--compare-max-edges", type=int, default=20_000, help="compare with networkx's exact answer up to this many edges")
    p.add_argument("--output", "-o", help="write the matched edges (source,target,weight) to this CSV file")
    p.set_defaults(func=run_match)


def run_match(args):
    from tqdm import tqdm

    import nx_gpumatch as gm
    from nx_gpumatch.config import resolve_device

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
        gm.max_weight_matching(g, algorithm=algo, device=args.device, seed=args.seed, threads=args.threads)
        t_first = time.perf_counter() - t0
        t0 = time.perf_counter()
        mate = gm.max_weight_matching(g, algorithm=algo, device=args.device, seed=args.seed, threads=args.threads)
        t_run = time.perf_counter() - t0
        bar.update()
        size = int((mate >= 0).sum() // 2)
        weight = gm.matching_weight(g, mate)
        exact = None
        if g.num_edges <= args.compare_max_edges:
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

            from nx_gpumatch.algorithms._convert import matched_pairs, edge_weights

            u, v = matched_pairs(mate)
            labels = g.labels()
            pd.DataFrame(
                {"source": [labels[i] for i in u.tolist()], "target": [labels[i] for i in v.tolist()], "weight": edge_weights(g, u, v)}
            ).to_csv(args.output, index=False)
            bar.update()
    src = args.input or f"generated {args.generate} (seed {args.seed})"
    print(f"graph        {src}: {g.num_nodes:,} vertices, {g.num_edges:,} edges (built in {t_load:.3f} s)")
    print(f"algorithm    {args.algorithm} on {engine} ({'exact' if algo is None else '½-approximate'})")
    print(f"matching     {size:,} edges, weight {weight:.6g}, valid: {gm.is_matching(g, mate)}")
    print(f"time         {t_run:.4f} s (first call {t_first:.3f} s incl. kernel load and edge ranking)")
    if exact is not None:
        n_nx, w_nx, t_nx = exact
        ratio = weight / w_nx if w_nx else 1.0
        print(f"networkx     exact: {n_nx:,} edges, weight {w_nx:.6g} in {t_nx:.3f} s")
        print(f"comparison   weight ratio {ratio:.4f} of the exact optimum; {t_nx / max(t_run, 1e-9):,.0f}x faster than networkx")
    else:
        print(f"networkx     exact comparison skipped: {g.num_edges:,} edges > --compare-max-edges {args.compare_max_edges:,}")
    if args.output:
        print(f"output       {size:,} matched edges written to {args.output}")
    return 0


def build_parser():
    import importlib

    parser = argparse.ArgumentParser(
        prog="nx-gpumatch",
        description="Matching and clustering on large graphs. With no command, runs 'match'.",
    )
    sub = parser.add_subparsers(dest="command")
    _match_parser(sub)
    for module, func in EXTRA_COMMANDS:
        getattr(importlib.import_module(module), func)(sub)
    return parser


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    commands = set(parser._subparsers._group_actions[0].choices)
    if not argv or (argv[0] not in commands and argv[0] not in ("-h", "--help")):
        argv.insert(0, "match")
    args = parser.parse_args(argv)
    if args.threads is not None:
        import networkx as nx

        nx.config.backends.gpumatch.threads = args.threads
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
