"""What every subcommand shares: the input-graph and engine options, graph
loading, argument checks, and one way to report bad input (``CliError``: one
line on stderr, exit code 2)."""

import argparse
import os

import numpy as np


class CliError(Exception):
    """Bad input or options: ``main`` prints ``error: <message>`` and exits with 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is a CliError (one line, exit 2) like every other
    bad input, instead of argparse's usage block."""

    def error(self, message):
        raise CliError(f"{self.prog}: {message}")


GENERATORS = ("random", "rmat", "geometric", "delaunay")
# Generators that draw a number of edges; the others place points (-m has no use).
TAKES_M = ("random", "rmat")


def _int_at_least(low, what):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be {what}, got {value}")
        return value

    parse.__name__ = what  # argparse names the type in some messages
    return parse


positive_int = _int_at_least(1, "a positive integer")
nonnegative_int = _int_at_least(0, "a non-negative integer")


class Given(argparse.Action):
    """Stores the value and records that the user gave the option, so options
    that would have no effect can be refused (see :func:`given`)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        seen = set(getattr(namespace, "given_options", None) or ())
        seen.add(self.dest)
        namespace.given_options = seen


def given(args, dest):
    return dest in (getattr(args, "given_options", None) or ())


def check_paths(args):
    """Fail early (before any work) on a missing input or an unwritable output."""
    path = getattr(args, "input", None)
    if path is not None and not os.path.isfile(path):
        raise CliError(f"input file not found: {path}")
    out = getattr(args, "output", None)
    if out is not None:
        folder = os.path.dirname(os.path.abspath(out))
        if os.path.isdir(out):
            raise CliError(f"cannot write {out}: it is a directory")
        if not os.path.isdir(folder):
            raise CliError(f"cannot write {out}: folder {folder} does not exist")
        if not os.access(folder, os.W_OK) or (os.path.exists(out) and not os.access(out, os.W_OK)):
            raise CliError(f"cannot write {out}: permission denied")


def check_device(args):
    """--device gpu must find a GPU before any work starts."""
    if getattr(args, "device", None) == "gpu":
        from nx_gpumatch import gpu

        reason = gpu.unavailable_reason()
        if reason is not None:
            raise CliError(f"--device gpu: no GPU can be used: {reason}")


def load_graph(args, progress):
    """A Graph from --input (.mtx or edge-list .csv) or a generated one."""
    from nx_gpumatch import Graph, generators

    if args.input:
        progress.set_description(f"reading {args.input}")
        name = args.input.lower()
        if name.endswith((".mtx", ".mtx.gz")):
            if given(args, "weight"):
                raise CliError("--weight names a CSV column; a .mtx file carries its own weights")
            return Graph.from_mtx(args.input)
        import pandas as pd

        df = pd.read_csv(args.input)
        for opt, col in (("--source", args.source), ("--target", args.target)):
            if col not in df.columns:
                raise CliError(
                    f"{opt} {col!r} is not a column of {args.input} ({list(df.columns)})"
                )
        if given(args, "weight") and args.weight not in df.columns:
            raise CliError(
                f"--weight {args.weight!r} is not a column of {args.input} ({list(df.columns)})"
            )
        weight = args.weight if args.weight in df.columns else None
        return Graph.from_pandas(df, source=args.source, target=args.target, weight=weight)
    if given(args, "m") and args.generate not in TAKES_M:
        raise CliError(f"-m does not apply to --generate {args.generate} (it places -n points)")
    if args.generate in TAKES_M and args.n == 0 and args.m > 0:
        raise CliError(f"-n must be at least 1 when -m > 0 (-m is {args.m})")
    if args.generate == "delaunay" and args.n < 3:
        raise CliError(f"--generate delaunay needs -n of at least 3 (a triangle), got {args.n}")
    progress.set_description(f"generating {args.generate} graph")
    if args.generate == "random":
        return generators.random_graph(args.n, args.m, seed=args.seed)
    if args.generate == "rmat":
        scale = max(1, int(np.ceil(np.log2(max(args.n, 2)))))
        factor = max(1, args.m // (1 << scale)) if args.m else 0
        return generators.rmat(scale, factor, seed=args.seed)
    if args.generate == "geometric":
        return generators.random_geometric(args.n, seed=args.seed)
    return generators.delaunay(args.n, seed=args.seed)


def add_engine_arguments(p):
    e = p.add_argument_group("engine")
    e.add_argument(
        "--device",
        choices=("auto", "cpu", "gpu"),
        default=None,
        help="engine (default: config, 'auto')",
    )
    e.add_argument(
        "--threads", type=positive_int, default=None, help="Numba threads (default: all cores)"
    )
    return e


def add_graph_arguments(p, n=1000, m=5000):
    g = p.add_argument_group("input graph")
    g.add_argument(
        "--input", "-i", help=".mtx(.gz) file or edge-list .csv (header row); default: generate one"
    )
    g.add_argument(
        "--generate",
        choices=GENERATORS,
        default="random",
        help="generator when no --input (default: random)",
    )
    g.add_argument(
        "-n",
        type=nonnegative_int,
        default=n,
        help=f"vertices of the generated graph (default {n}; rmat: rounded up to a power of 2, "
        "at least 2; delaunay: at least 3)",
    )
    g.add_argument(
        "-m",
        type=nonnegative_int,
        default=m,
        action=Given,
        help=f"edges drawn by the random and rmat generators, self-loops and repeats then "
        f"dropped (default {m}; rmat: rounded down to a multiple of the vertices, at least "
        "one per vertex unless 0)",
    )
    g.add_argument(
        "--seed",
        type=nonnegative_int,
        default=0,
        action=Given,
        help="seed of the generator (and of randomized algorithms; default 0)",
    )
    g.add_argument("--source", default="source", help="CSV source column")
    g.add_argument("--target", default="target", help="CSV target column")
    g.add_argument(
        "--weight",
        default="weight",
        action=Given,
        help="CSV weight column (default 'weight'; all 1 if the file has none)",
    )
    e = add_engine_arguments(p)
    e.add_argument("--no-progress", action="store_true", help="no progress display")
