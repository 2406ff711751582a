"""What every subcommand shares: the input-graph and engine options, graph
loading, and one way to report bad input (``CliError``: one line on stderr,
exit code 2)."""

import numpy as np


class CliError(Exception):
    """Bad input or options: ``main`` prints ``error: <message>`` and exits with 2."""


GENERATORS = ("random", "rmat", "geometric", "delaunay")


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
    g.add_argument(
        "--input", "-i", help=".mtx file or edge-list .csv (header row); default: generate one"
    )
    g.add_argument(
        "--generate",
        choices=GENERATORS,
        default="random",
        help="generator when no --input (default: random)",
    )
    g.add_argument("-n", type=int, default=n, help=f"vertices of the generated graph (default {n})")
    g.add_argument(
        "-m", type=int, default=m, help=f"edges drawn for the generated graph (default {m})"
    )
    g.add_argument("--seed", type=int, default=0, help="generator / algorithm seed (default 0)")
    g.add_argument("--source", default="source", help="CSV source column")
    g.add_argument("--target", default="target", help="CSV target column")
    g.add_argument("--weight", default="weight", help="CSV weight column (all 1 if absent)")
    e = p.add_argument_group("engine")
    e.add_argument(
        "--device",
        choices=("auto", "cpu", "gpu"),
        default=None,
        help="engine (default: config, 'auto')",
    )
    e.add_argument("--threads", type=int, default=None, help="Numba threads (default: all cores)")
    e.add_argument("--no-progress", action="store_true", help="no progress display")
