"""``nx-gpumatch louvain``: Louvain (or, with ``--leiden``, Leiden) communities
of a generated graph or a file, level by level, with networkx's modularity
check on small graphs."""

import sys
import time

import networkx as nx

from nx_gpumatch.algorithms.community import louvain as lv
from nx_gpumatch.algorithms.community.common import communities
from nx_gpumatch.cli._common import (
    add_graph_arguments,
    add_output_arguments,
    id_base,
    id_note,
    load_graph,
    nonnegative_int,
    write_output,
)


def add_command(subparsers):
    """Add the ``louvain`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "louvain",
        help="Louvain community detection (parallel CPU engine, or CUDA kernels on a GPU)",
        description=(
            "Run the Louvain method on a generated graph or a file (.mtx, or an edge list) and print "
            "each level (vertices, edges, modularity, sweeps) and the final partition; --leiden "
            "runs the Leiden method instead."
        ),
    )
    add_graph_arguments(p, n=100_000, m=800_000)
    a = p.add_argument_group("Louvain")
    a.add_argument(
        "--resolution",
        type=float,
        default=1.0,
        help="resolution of the metric (default 1): modularity's gamma, or with --metric cpm the "
        "edge density a community must exceed, gamma per pair of nodes (between 0 and 1 on unit "
        "weights; typical values are much smaller than 1, e.g. 0.01)",
    )
    a.add_argument(
        "--threshold",
        type=float,
        default=1e-7,
        help="stop when a level gains at most this (default 1e-7)",
    )
    a.add_argument("--max-level", type=int, default=None, help="at most this many levels")
    a.add_argument(
        "--coarse-threshold",
        type=float,
        default=None,
        help="sweep tolerance of large levels (default: config, 1e-7)",
    )
    a.add_argument(
        "--fine-below",
        type=int,
        default=None,
        help="levels with fewer vertices use --threshold (default: config, 100000)",
    )
    a.add_argument("--unweighted", action="store_true", help="ignore weights (weight=None)")
    a.add_argument(
        "--leiden",
        action="store_true",
        help="run the Leiden method instead (CPU or GPU engine, as --device picks): "
        "connected communities; --threshold unused",
    )
    a.add_argument(
        "--passes",
        type=int,
        default=None,
        help="Leiden: at most this many passes (default: until one gains under 2.5%%, usually three)",
    )
    a.add_argument(
        "--metric",
        choices=("modularity", "cpm"),
        default=None,
        help="Leiden: the objective (default: modularity); cpm is networkx's Constant Potts "
        "Model, whose --resolution is gamma per pair of nodes, so typical values are much "
        "smaller than 1",
    )
    a.add_argument(
        "--theta",
        type=float,
        default=None,
        help="Leiden: randomness of the refinement, in units of edge weight (default 0.01)",
    )
    a.add_argument(
        "--order-seed",
        type=int,
        default=None,
        help="shuffle the vertex order with this seed (default: graph order)",
    )
    a.add_argument(
        "--compare-max-edges",
        type=nonnegative_int,
        default=20_000,
        help="run networkx's Louvain too on graphs of at most this many edges (0: never; "
        "default 20000)",
    )
    add_output_arguments(p, "one row per vertex: vertex, community")
    p.set_defaults(func=run_louvain)
    return p


def run_louvain(args):
    from tqdm import tqdm

    from nx_gpumatch.algorithms._engines import resolve_device
    from nx_gpumatch.config import get_config

    if args.max_level is not None and args.max_level <= 0:
        print("error: --max-level must be a positive integer", file=sys.stderr)
        return 2
    if not args.leiden:
        from nx_gpumatch.cli._common import CliError

        for opt in ("passes", "metric", "theta"):
            if getattr(args, opt) is not None:
                raise CliError(f"--{opt} needs --leiden (Louvain optimises modularity)")
    metric = args.metric or "modularity"
    cfg = get_config()
    try:
        if args.coarse_threshold is not None:
            cfg.louvain_coarse_threshold = args.coarse_threshold
        if args.fine_below is not None:
            cfg.louvain_fine_below = args.fine_below
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with tqdm(total=1, disable=args.no_progress, leave=False, file=sys.stderr) as bar:
        t0 = time.perf_counter()
        g = load_graph(args, bar)
        t_load = time.perf_counter() - t0
        base = id_base(args)
    weighted = not args.unweighted
    try:
        engine = resolve_device(args.device, g.num_edges)
        t0 = time.perf_counter()
        rows = []
        labels = None
        common = dict(
            weighted=weighted,
            resolution=args.resolution,
            seed=args.order_seed,
            device=args.device,
            threads=args.threads,
            progress=False if args.no_progress else None,
        )
        if args.leiden:
            from nx_gpumatch.algorithms.community import leiden

            extra = {} if args.theta is None else {"theta": args.theta}
            gen = leiden.levels(g, passes=args.passes, metric=metric, **extra, **common)
        else:
            gen = lv.levels(g, threshold=args.threshold, **common)
        for labels, info in gen:
            rows.append((info, time.perf_counter() - t0))
            if args.max_level is not None and info["level"] >= args.max_level:
                break
        t_run = time.perf_counter() - t0
    except (ValueError, RuntimeError, NotImplementedError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    src = args.input or f"generated {args.generate} (seed {args.seed})"
    print(
        f"graph        {src}: {g.num_nodes:,} vertices, {g.num_edges:,} edges (built in {t_load:.3f} s)"
    )
    method = f"Leiden, {metric}," if args.leiden else f"Louvain, threshold {args.threshold:g},"
    print(
        f"engine       {engine}; {method} resolution {args.resolution}, "
        f"coarse threshold {cfg.louvain_coarse_threshold:g} on levels of >= {cfg.louvain_fine_below:,} vertices"
    )
    print(f"level  vertices       edges  sweeps     moves  {metric:>10s}   time (s)")
    for info, t in rows:
        print(
            f"{info['level']:>5} {info['vertices']:>9,} {info['edges']:>11,} {info['sweeps']:>7} {info['moves']:>9,}  {_quality(info):10.6f} {t:10.3f}"
        )
    k = int(labels.max()) + 1 if labels is not None and labels.shape[0] else 0
    q = _quality(rows[-1][0]) if rows else 0.0  # no level: no vertex, 0 in either metric
    print(
        f"result       {k:,} communities, {metric} {q:.6f}, {t_run:.3f} s (first call includes loading the kernels)"
    )
    skip = None
    if args.compare_max_edges == 0:
        skip = "--compare-max-edges 0"
    elif g.num_edges > args.compare_max_edges:
        skip = f"{g.num_edges:,} edges > --compare-max-edges {args.compare_max_edges:,}"
    else:
        import numpy as np

        G = g.to_networkx()
        weight = (g.weight_attr or "weight") if weighted else None
        labels_list = g.labels()
        G.add_weighted_edges_from(
            (
                (labels_list[v], labels_list[v], float(g.loop_weight[v]))
                for v in np.flatnonzero(g.loop_weight).tolist()
            ),
            weight=g.weight_attr or "weight",
        )
        if metric == "cpm":
            _check_cpm(nx, G, g, labels, weight, args.resolution)
            skip = False
        # networkx's modularity (and its Louvain) divides by the total weight
        elif G.size(weight=weight) == 0:
            skip = "total edge weight 0, where networkx's modularity divides by zero"
    if skip is None:
        t0 = time.perf_counter()
        ref = nx.community.louvain_communities(
            G,
            weight=weight,
            resolution=args.resolution,
            threshold=args.threshold,
            # islice (in networkx) takes at most sys.maxsize; no run has that many levels
            max_level=None if args.max_level is None else min(args.max_level, sys.maxsize),
            seed=args.seed,
            backend="networkx",
        )
        t_nx = time.perf_counter() - t0
        q_nx = nx.community.modularity(G, ref, weight=weight, resolution=args.resolution)
        ours = communities(g, labels)
        q_ours = nx.community.modularity(G, ours, weight=weight, resolution=args.resolution)
        print(
            f"networkx     {len(ref):,} communities, modularity {q_nx:.6f} in {t_nx:.3f} s; ours by networkx: {q_ours:.6f} "
            f"(ratio {q_ours / q_nx if q_nx else 1.0:.4f})"
        )
    elif skip:
        print(f"networkx     comparison skipped: {skip}")
    if args.output:
        import numpy as np
        import pandas as pd

        vertex = np.arange(base, base + g.num_nodes) if base is not None else g.labels()
        write_output(args, pd.DataFrame({"vertex": vertex, "community": labels}))
        print(f"output       {g.num_nodes:,} rows written to {args.output} ({id_note(base)})")
    return 0


def _quality(info):
    """The value of the run's metric at one level (Louvain's levels give modularity only)."""
    return info.get("quality", info.get("modularity")) + 0.0  # no "-0.000000"


def _check_cpm(nx, G, g, labels, weight, resolution):
    """networkx's Louvain optimises modularity, so a CPM run is not compared
    with it; networkx's ``constant_potts_model`` (3.7 on) checks the value
    reported instead."""
    why = "no Louvain comparison: networkx's optimises modularity"
    cpm = getattr(nx.community, "constant_potts_model", None)
    if cpm is None:
        print(f"networkx     {why}, and networkx {nx.__version__} has no constant_potts_model")
        return
    ours = cpm(G, communities(g, labels), weight=weight, node_weight=None, resolution=resolution)
    print(f"networkx     ours by networkx's constant_potts_model: {ours:.6f} ({why})")
