"""What every subcommand shares: the input-graph and engine options, graph
loading, argument checks, and one way to report bad input (``CliError``: one
line on stderr, exit code 2)."""

import argparse
import os
import tempfile

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
    if getattr(args, "paths_checked", False):  # by the command itself (the ranks together)
        return
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
        if path is not None and os.path.exists(out) and os.path.samefile(path, out):
            raise CliError(f"--output {out} is the input file; write the result elsewhere")


class Output:
    """The --output file, written whole or not at all: the result goes to a
    temporary file in the target's folder, created up front (so an unwritable
    place fails before any work, whatever ``os.access`` says, e.g. for root in
    /proc), and renamed over the target only once complete. A failed write (a
    full disk) leaves no partial file and keeps a file that was there."""

    def __init__(self, path):
        self.path = path
        self.target = os.path.realpath(path)  # through a symlink, as open() would write
        folder, name = os.path.split(self.target)
        try:
            fd, self.tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=folder)
        except OSError as exc:
            raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None
        os.close(fd)

    def write_csv(self, df):
        try:
            with open(self.tmp, "w", newline="") as f:
                df.to_csv(f, index=False)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(self.tmp, self._mode())
            os.replace(self.tmp, self.target)
        except OSError as exc:
            self.discard()
            kept = " (the file there is unchanged)" if os.path.exists(self.target) else ""
            raise CliError(f"cannot write {self.path}: {exc.strerror or exc}{kept}") from None
        self.tmp = None

    def _mode(self):
        try:  # keep the permissions of the file replaced
            return os.stat(self.target).st_mode & 0o7777
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            return 0o666 & ~umask

    def discard(self):
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = None


def write_output(args, df):
    """Write the result table to --output (reserved by ``main``, or now when a
    subcommand runs without it)."""
    out = getattr(args, "output_file", None) or Output(args.output)
    out.write_csv(df)


def open_output(args):
    """Reserve ``args.output`` (see :class:`Output`) for commands that write one file."""
    if getattr(args, "output", None) is not None and getattr(args, "writes_output", False):
        args.output_file = Output(args.output)
    return getattr(args, "output_file", None)


def id_base(args):
    """0 or 1: what the first vertex is called in outputs of a .mtx file or a
    generated graph (their vertices have no labels of their own)."""
    if args.input is not None and getattr(args, "input_format", None) != "mtx":
        if args.id_base is not None:
            raise CliError(
                "--id-base acts on .mtx files and generated graphs (an edge list's ids are its own)"
            )
        return None
    if args.id_base is not None:
        return args.id_base
    return 1 if args.input is not None else 0


def id_note(base):
    if base is None:
        return "ids as in the input"
    return f"vertex ids {base}-based" + (", as in the .mtx file" if base == 1 else "")


def add_output_arguments(p, what):
    o = p.add_argument_group("output")
    o.add_argument(
        "--output", "-o", help=f"write {what} to this CSV file (written whole or not at all)"
    )
    o.add_argument(
        "--id-base",
        type=int,
        choices=(0, 1),
        default=None,
        help="number the vertices of a .mtx file or a generated graph from 0 or 1 in the "
        "output (default: 1 for .mtx, as the file does; 0 for generated graphs)",
    )
    p.set_defaults(writes_output=True)
    return o


def check_device(args):
    """--device gpu must find a GPU before any work starts."""
    if getattr(args, "device", None) == "gpu":
        from nx_gpumatch import gpu

        reason = gpu.unavailable_reason()
        if reason is not None:
            raise CliError(f"--device gpu: no GPU can be used: {reason}")


def load_graph(args, progress):
    """A Graph from --input (any format of :mod:`nx_gpumatch.files`) or a generated one."""
    from nx_gpumatch import Graph, generators

    if args.input:
        progress.set_description(f"reading {args.input}")
        df = read_input(args)
        if df is None:
            if given(args, "weight"):
                raise CliError("--weight names a CSV column; a .mtx file carries its own weights")
            return Graph.from_mtx(args.input)
        for opt, col in (("--source", args.source), ("--target", args.target)):
            if col not in df.columns:
                raise CliError(f"{opt} {col!r} is not a column of {args.input} {columns(df)}")
        if given(args, "weight") and args.weight not in df.columns:
            raise CliError(
                f"--weight {args.weight!r} is not a column of {args.input} {columns(df)}"
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


INPUT_HELP = (
    "graph file: Matrix Market (.mtx, .mtx.gz), or an edge list in CSV, tab- or "
    "whitespace-separated text (header row optional; '#' and '%%' comment lines) or Parquet; "
    "the format is read from the file"
)


def columns(df):
    """The columns of an edge list, for error messages."""
    return (
        f"(columns: {list(df.columns)}; a file without a header row has them in the order "
        "source, target, weight)"
    )


def read_input(args):
    """The edge list in --input as a DataFrame, or None for a Matrix Market file
    (``args.input_format`` records which)."""
    from nx_gpumatch import files

    args.input_format = files.file_format(args.input)
    if args.input_format == "mtx":
        return None
    try:
        return files.read_edge_list(args.input, args.source, args.target)
    except ImportError as exc:  # Parquet without pyarrow: how to install it
        raise CliError(str(exc)) from None


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
    g.add_argument("--input", "-i", help=INPUT_HELP + "; default: generate one")
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
    g.add_argument(
        "--source", default="source", help="edge list: the source column (default 'source')"
    )
    g.add_argument(
        "--target", default="target", help="edge list: the target column (default 'target')"
    )
    g.add_argument(
        "--weight",
        default="weight",
        action=Given,
        help="edge list: the weight column (default 'weight'; all 1 if the file has none)",
    )
    add_no_progress(add_engine_arguments(p))


def add_no_progress(group, what="no progress display on stderr"):
    group.add_argument("--no-progress", action="store_true", help=what)
