"""The ``nx-gpumatch bipartite`` subcommand: maximum-cardinality bipartite
matching of a Matrix Market file (rows one side, columns the other), an
edge list (CSV, TSV, Parquet) or a generated graph, proved by a Konig cover and compared with
scipy."""

import sys
import time

import numpy as np
import scipy.sparse as sp

import nx_gpumatch as gm
from nx_gpumatch.algorithms.bipartite.matching import ALGORITHMS, INITS, LAYOUTS
from nx_gpumatch.cli._common import (
    INPUT_HELP,
    CliError,
    Given,
    add_no_progress,
    add_output_arguments,
    columns,
    given,
    id_base,
    id_note,
    nonnegative_int,
    positive_int,
    read_input,
    write_output,
)
from nx_gpumatch.generators_bipartite import GENERATORS, bipartite_graph


def add_command(subparsers):
    """Add the "bipartite" subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "bipartite",
        help="maximum-cardinality bipartite matching (scipy's contract), with a proof",
        description="Maximum-cardinality bipartite matching. The answer is proved by a Konig "
        "vertex cover of the same size and compared with scipy's maximum_bipartite_matching.",
    )
    g = p.add_argument_group("input graph")
    g.add_argument(
        "--input",
        "-i",
        help=INPUT_HELP + " (a matrix: rows one side, columns the other; an edge list: "
        "--source one side, --target the other); default: generate one",
    )
    g.add_argument(
        "--generate",
        choices=sorted(GENERATORS),
        default="random",
        action=Given,
        help="generator of a hard or random bipartite graph when no --input (default: random)",
    )
    g.add_argument(
        "-n",
        type=positive_int,
        default=100_000,
        action=Given,
        help="rows (and columns) of the generated graph (default 100000)",
    )
    g.add_argument(
        "--seed", type=nonnegative_int, default=0, action=Given, help="generator seed (default 0)"
    )
    g.add_argument(
        "--source",
        default="source",
        help="edge list: the column of the row side (default 'source')",
    )
    g.add_argument(
        "--target",
        default="target",
        help="edge list: the column of the column side (default 'target')",
    )
    e = p.add_argument_group("engine")
    e.add_argument(
        "--algorithm",
        "-a",
        choices=ALGORITHMS,
        default="auto",
        help="auto (default: APFB phases while they pay, then Hopcroft-Karp on the CPU; APFB "
        "on the GPU), hopcroft_karp (CPU), apfb or apsb",
    )
    e.add_argument(
        "--init",
        choices=INITS,
        default="auto",
        help="initial matching (default auto: karp_sipser on large inputs, else cheap)",
    )
    e.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="ct",
        help="GPU thread assignment: ct (a fixed grid) or mt (a thread per column); default ct",
    )
    e.add_argument(
        "--device",
        choices=("auto", "cpu", "gpu"),
        default=None,
        help="engine (default: config, 'auto')",
    )
    e.add_argument(
        "--threads", type=positive_int, default=None, help="Numba threads (default: all cores)"
    )
    add_no_progress(e)
    p.add_argument("--no-scipy", action="store_true", help="skip the scipy comparison")
    add_output_arguments(
        p,
        "the matched pairs (a matrix: row, column; an edge list: its --source and --target names)",
    )
    p.set_defaults(func=run_bipartite)
    return p


def _load(args):
    if args.input is not None:
        for dest, flag in (("generate", "--generate"), ("n", "-n"), ("seed", "--seed")):
            if given(args, dest):
                raise CliError(f"{flag} acts on a generated graph, not on --input")
    if args.input is None:
        if args.n < 1:
            raise CliError("-n must be at least 1")
        return bipartite_graph(args.generate, args.n, args.seed), None
    import pandas as pd

    try:
        df = read_input(args)
        if df is None:
            from nx_gpumatch._input import mmread as _mmread

            return sp.csr_array(_mmread(args.input)), None
    except (OSError, ValueError) as exc:
        raise CliError(f"cannot read {args.input}: {exc}") from None
    for col in (args.source, args.target):
        if col not in df.columns:
            raise CliError(f"column {col!r} not in {args.input} {columns(df)}")
    rows, row_labels = pd.factorize(df[args.source])
    cols, col_labels = pd.factorize(df[args.target])
    if (rows < 0).any() or (cols < 0).any():
        raise CliError(f"{args.input}: empty cells in {args.source!r} or {args.target!r}")
    A = sp.csr_array(
        ([1] * len(rows), (rows, cols)), shape=(len(row_labels), len(col_labels)), dtype="int8"
    )
    return A, (row_labels, col_labels)


def run_bipartite(args):
    from tqdm import tqdm

    kw = dict(
        algorithm=args.algorithm,
        init=args.init,
        layout=args.layout,
        device=args.device,
        threads=args.threads,
    )
    steps = 2 + (not args.no_scipy) + (args.output is not None)
    with tqdm(total=steps, disable=args.no_progress, leave=False, file=sys.stderr) as bar:
        bar.set_description(f"reading {args.input}" if args.input else "generating")
        t0 = time.perf_counter()
        A, labels = _load(args)
        t_load = time.perf_counter() - t0
        base = id_base(args)
        bar.update()
        bar.set_description(f"{args.algorithm} (first call compiles or loads kernels)")
        try:
            t0 = time.perf_counter()
            gm.maximum_bipartite_matching(A, **kw)  # first call: loads the compiled kernels
            t_first = time.perf_counter() - t0
            t0 = time.perf_counter()
            perm, (rc, cc) = gm.maximum_bipartite_matching(A, return_cover=True, **kw)
            t_run = time.perf_counter() - t0
        except (ValueError, RuntimeError) as exc:
            raise CliError(str(exc)) from None
        bar.update()
        size = int((perm >= 0).sum())
        if not args.no_scipy:
            import scipy.sparse as sp
            from scipy.sparse.csgraph import maximum_bipartite_matching

            bar.set_description("scipy maximum_bipartite_matching (for comparison)")
            t0 = time.perf_counter()
            sp_size = int((maximum_bipartite_matching(sp.csr_array(A)) >= 0).sum())
            t_sp = time.perf_counter() - t0
            bar.update()
        if args.output:
            import pandas as pd

            bar.set_description(f"writing {args.output}")
            cols = np.flatnonzero(perm >= 0)
            rows = perm[cols].astype(np.int64)
            names = ("row", "column")
            if labels is not None:
                rows, cols = labels[0].take(rows), labels[1].take(cols)
                names = (args.source, args.target)
            else:
                rows, cols = rows + base, cols + base
            write_output(args, pd.DataFrame({names[0]: rows, names[1]: cols}))
            bar.update()
    src = args.input or f"generated {args.generate} (seed {args.seed})"
    print(f"graph        {src}: {A.shape[0]:,} rows, {A.shape[1]:,} columns, {A.nnz:,} edges")
    print(f"             (read/built in {t_load:.3f} s)")
    print(f"algorithm    {args.algorithm}, init {args.init}")
    print(f"matching     {size:,} pairs; Konig cover {len(rc) + len(cc):,} vertices (proof)")
    print(f"time         {t_run:.4f} s (first call {t_first:.3f} s incl. kernel load)")
    ok = len(rc) + len(cc) == size
    if not args.no_scipy:
        ok = ok and sp_size == size
        print(
            f"scipy        {sp_size:,} pairs in {t_sp:.4f} s: "
            f"{'same cardinality' if sp_size == size else 'DIFFERENT cardinality'}, "
            f"time ratio {t_run / t_sp:.2f}x"
        )
    if args.output:
        print(f"output       {size:,} pairs written to {args.output} ({id_note(base)})")
    return 0 if ok else 1
