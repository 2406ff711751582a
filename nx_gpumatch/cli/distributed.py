"""The ``nx-gpumatch distributed`` subcommand: run it under
``mpiexec -n P nx-gpumatch distributed ...`` (matching and b-matching) or
``mpiexec -n P nx-gpumatch distributed louvain|leiden ...`` (communities). Each rank
reads or generates its own share of the graph; rank 0 prints the result and
the statistics."""

import argparse
import os
import sys
import time

import numpy as np

import nx_gpumatch as gm
from nx_gpumatch.cli._common import (
    CliError,
    Given,
    check_paths,
    given,
    nonnegative_int,
    positive_int,
)
from nx_gpumatch.graph import Graph

ALGORITHMS = ("b_suitor", "suitor", "local_max")
STRATEGY = ("b_suitor", "suitor")
# Options that act on some algorithms only: elsewhere they are refused, not ignored.
ALGORITHM_OPTIONS = (
    ("algorithm", "--algorithm", ALGORITHMS),
    ("b", "-b", ("b_suitor",)),
    ("ordering", "--ordering", STRATEGY),
    ("vertex_subsets", "--vertex-subsets", STRATEGY),
    ("b_subset", "--b-subset", STRATEGY),
    ("full_sort", "--full-sort", STRATEGY),
)


class _OnceOnRanks:
    """Every rank parses the same command line. Bad options or files are checked
    here, collectively, so that rank 0 alone reports the first rank's error (one
    line, where one per rank would interleave) and every rank exits with 2."""

    def parse_known_args(self, args=None, namespace=None):
        error = None
        try:
            ns, extra = super().parse_known_args(args, namespace)
            if extra:
                self.error(f"unrecognized arguments: {' '.join(extra)}")
            _options(ns)
            _check_paths(ns)
            ns.paths_checked = True
        except CliError as exc:
            error = str(exc)
        try:
            from nx_gpumatch.distributed._comm import allgather, get_comm

            comm = get_comm()
        except ImportError as exc:  # no MPI: the option error, else how to get MPI
            raise CliError(error or str(exc)) from None
        errors = allgather(comm, error, "a check of the command line")
        error = next((e for e in errors if e is not None), None)
        if error is not None:
            _fail(comm, error)
        return ns, []

    def _print_message(self, message, file=None):
        # --help and --version print on rank 0 only
        from nx_gpumatch.distributed._comm import get_comm

        try:
            rank = get_comm().rank
        except ImportError:
            rank = 0
        if rank == 0:
            super()._print_message(message, file)


def _fail(comm, message):
    """Rank 0 raises the error for ``main`` to print; the others exit silently."""
    if comm.rank == 0:
        raise CliError(message)
    raise SystemExit(2)


def add_command(subparsers):
    """Add the "distributed" subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "distributed",
        help="matching / b-matching / Louvain / Leiden on MPI ranks (run under mpiexec)",
        description="Distributed ½-approximate matching and b-matching. Run under "
        "'mpiexec -n P nx-gpumatch distributed ...': every rank reads or generates its own "
        "share of the graph. The result equals the shared-memory one; rank 0 prints the "
        "weight, size, time per phase and the messages of each kind. 'distributed louvain' "
        "and 'distributed leiden' find communities instead and print their modularity (or "
        "CPM), number, levels, time per phase and messages.",
    )
    p.add_argument(
        "problem",
        nargs="?",
        choices=COMMUNITIES,
        help="louvain or leiden: communities by the Louvain or Leiden method (default: matching)",
    )
    g = p.add_argument_group("input graph")
    g.add_argument(
        "--input",
        "-i",
        help=".mtx file (read in byte ranges), .npy edge rows (u, v[, w]) or Parquet edge "
        "list (a .parquet file or a directory of them, read by row group); default: generate",
    )
    for col, what in (("source", "source"), ("target", "target")):
        g.add_argument(
            f"--{col}",
            default=col,
            action=Given,
            help=f"Parquet: the {what} column, integer vertex ids (default {col!r})",
        )
    g.add_argument(
        "--weight",
        default="weight",
        action=Given,
        help="Parquet: the weight column (default 'weight'; all 1 if the files have none)",
    )
    g.add_argument(
        "--generate",
        choices=("random", "rmat", "planted"),
        default="rmat",
        action=Given,
        help="default rmat; planted: a planted partition (communities of skewed sizes on "
        "consecutive ids)",
    )
    g.add_argument(
        "--communities",
        type=positive_int,
        default=None,
        action=Given,
        help="planted: the communities (default n // 1000, at least 1; at most n // 4)",
    )
    g.add_argument(
        "--mixing",
        type=float,
        default=0.2,
        action=Given,
        help="planted: the share of the edges drawn from the whole graph (default 0.2)",
    )
    g.add_argument(
        "-n",
        type=positive_int,
        default=1 << 16,
        action=Given,
        help="vertices (rmat: rounded up to 2**k, at most 2**30)",
    )
    g.add_argument(
        "-m",
        type=nonnegative_int,
        default=8 << 16,
        action=Given,
        help="edges drawn (rmat: rounded down to a multiple of the vertices, at least one per "
        "vertex unless 0)",
    )
    g.add_argument(
        "--rmat-kind",
        choices=("g500", "ssca", "er"),
        default="g500",
        action=Given,
        help="R-MAT parameters",
    )
    g.add_argument(
        "--seed",
        type=nonnegative_int,
        default=0,
        action=Given,
        help="seed of the generator, of the random partition and of Louvain's and Leiden's "
        "vertex order and draws (default 0)",
    )
    a = p.add_argument_group(
        "algorithm",
        "-b acts on b_suitor; --ordering, --vertex-subsets, --b-subset and --full-sort "
        "on b_suitor and suitor (refused with local_max)",
    )
    a.add_argument(
        "--algorithm",
        "-a",
        choices=ALGORITHMS,
        default="b_suitor",
        action=Given,
        help="b_suitor (b-matching, default), suitor or local_max (matching)",
    )
    a.add_argument(
        "--b", "-b", type=nonnegative_int, default=1, action=Given, help="b_suitor's b (default 1)"
    )
    a.add_argument(
        "--ordering",
        choices=("id", "heaviest"),
        default="id",
        action=Given,
        help="queue order: vertex id, or heaviest remaining edge first",
    )
    a.add_argument(
        "--vertex-subsets",
        type=positive_int,
        default=1,
        action=Given,
        help="supersteps per iteration (default 1)",
    )
    a.add_argument(
        "--b-subset",
        type=_b_subset,
        default=None,
        action=Given,
        help="proposals per vertex and superstep: an int or 'half'",
    )
    a.add_argument("--full-sort", action="store_true", help="sort whole rows (no partial sort)")
    for flag, kind, default, what, problems in COMMUNITY_OPTIONS:
        a.add_argument(
            flag,
            type=kind,
            default=default,
            action=Given,
            help=f"{' and '.join(problems)}: {what}",
            **({"choices": ("modularity", "cpm")} if flag == "--metric" else {}),
        )
    a.add_argument(
        "--partition",
        choices=("block", "random"),
        default="block",
        help="vertex owners: blocks of ids, or a seeded random owner per vertex",
    )
    a.add_argument("--threads", type=positive_int, default=None, help="Numba threads per rank")
    a.add_argument(
        "--no-progress",
        action="store_true",
        help="accepted as by every command; the ranks print no progress display",
    )
    o = p.add_argument_group("output")
    o.add_argument(
        "--output",
        "-o",
        help="write each rank's partners (louvain, leiden: each owned vertex's community): "
        "x.parquet writes a dataset directory (one part-NNNNN.parquet per rank); otherwise "
        "one file per rank ('{rank}' replaced, else '.<rank>' added), .npy rows or CSV",
    )
    o.add_argument(
        "--check",
        action="store_true",
        help="also gather the graph on rank 0 and compare with the shared-memory engine",
    )
    p.set_defaults(func=run_distributed)
    # the subcommand dispatch calls this parser's parse_known_args
    p.__class__ = type("DistributedParser", (_OnceOnRanks, type(p)), {})
    return p


def _finite(text):
    try:
        x = float(text)
    except ValueError:
        x = float("nan")
    if not np.isfinite(x):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return x


def _positive(text):
    x = _finite(text)
    if not x > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return x


COMMUNITIES = ("louvain", "leiden")
# (flag, type, default, help, the problems it acts on; elsewhere it is refused)
COMMUNITY_OPTIONS = (
    (
        "--resolution",
        _finite,
        1.0,
        "modularity's resolution, or CPM's gamma (default 1)",
        COMMUNITIES,
    ),
    (
        "--threshold",
        _finite,
        1e-7,
        "least gain of a level for another to follow (default 1e-7)",
        ("louvain",),
    ),
    (
        "--max-level",
        positive_int,
        None,
        "at most this many levels (default: no limit)",
        COMMUNITIES,
    ),
    (
        "--metric",
        str,
        "modularity",
        "the objective, modularity or cpm (default modularity)",
        ("leiden",),
    ),
    ("--theta", _positive, 0.01, "randomness of the refinement (default 0.01)", ("leiden",)),
    (
        "--passes",
        positive_int,
        None,
        "at most this many passes (default: while they gain)",
        ("leiden",),
    ),
)


def _b_subset(text):
    if text != "half" and not (text.isdigit() and int(text) > 0):
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'half', got {text!r}")
    return text if text == "half" else int(text)


def _options(args):
    communities = args.problem in COMMUNITIES
    for flag, *_, problems in COMMUNITY_OPTIONS:
        if args.problem not in problems and given(args, flag[2:].replace("-", "_")):
            where = " and ".join(f"'distributed {p}'" for p in problems)
            raise CliError(f"{flag} acts on {where} only")
    if communities:
        what = f"'distributed {args.problem}'"
        for dest, flag, _ in ALGORITHM_OPTIONS:
            if given(args, dest) or getattr(args, dest) is True:
                raise CliError(f"{flag} acts on matching, not on {what}")
        for flag in ("check", "threads"):
            if getattr(args, flag):
                raise CliError(f"--{flag} acts on matching, not on {what}")
    for dest, flag, algorithms in ALGORITHM_OPTIONS:
        # store_true flags are given when true; the others record it (Given)
        if args.algorithm not in algorithms and (given(args, dest) or getattr(args, dest) is True):
            raise CliError(f"{flag} acts on -a {' and '.join(algorithms)} only")
    for dest in ("communities", "mixing"):
        if given(args, dest) and (args.input or args.generate != "planted"):
            raise CliError(f"--{dest} acts on --generate planted only")
    if not args.input and args.generate == "planted":
        if not 0.0 <= args.mixing <= 1.0:
            raise CliError(f"--mixing must lie in [0, 1], got {args.mixing}")
        if args.n >= 2**31:
            raise CliError(f"-n must be below 2**31 for --generate planted, got {args.n}")
        if args.n < 4 * _planted_k(args):
            raise CliError(
                f"--generate planted needs -n of at least 4 per community, got -n {args.n} "
                f"for {_planted_k(args)} communities"
            )
    if not args.input and args.generate == "rmat" and args.n > 1 << 30:
        raise CliError(f"-n rounds up to 2**k for rmat and must be at most 2**30, got {args.n}")
    if args.input and args.input.lower().endswith((".gz", ".bz2", ".xz", ".zip")):
        raise CliError(
            "--input: compressed files cannot be read by the distributed reader (each rank "
            "reads a byte range of the file); decompress it first (e.g. gunzip)"
        )
    if args.input and not (_parquet(args.input) or args.input.lower().endswith((".mtx", ".npy"))):
        raise CliError(
            "--input must be a .mtx, .npy or .parquet file or a directory of .parquet files"
        )
    if not (args.input and _parquet(args.input)):
        for dest in ("source", "target", "weight"):
            if given(args, dest):
                raise CliError(f"--{dest} names a column of a Parquet --input")
    if args.input:
        generator = (("generate", "--generate"), ("rmat_kind", "--rmat-kind"), ("n", "-n"))
        for dest, flag in (*generator, ("m", "-m")):
            if given(args, dest):
                raise CliError(f"{flag} acts on a generated graph, not on --input")
        if given(args, "seed") and args.partition != "random" and not communities:
            raise CliError("--seed with --input acts on --partition random only")


def _planted_k(args):
    return args.communities if args.communities is not None else max(1, args.n // 1000)


def _parquet(path):
    return os.path.isdir(path) or path.lower().rstrip("/").endswith((".parquet", ".pq"))


def _check_paths(args):
    """The common checks, except for what may be a directory here: a Parquet
    dataset as input, or as output (written as one, replacing an earlier one)."""
    from nx_gpumatch.distributed.result import _is_dataset

    ns = argparse.Namespace(**vars(args))
    if ns.input is not None and os.path.isdir(ns.input):
        ns.input = None
    if ns.output is not None and _is_dataset(ns.output):
        folder = os.path.dirname(os.path.abspath(ns.output))
        if not os.path.isdir(folder):
            raise CliError(f"cannot write {ns.output}: folder {folder} does not exist")
        ns.output = None
    check_paths(ns)


def _load(args, comm):
    from nx_gpumatch import distributed as D

    if args.input and _parquet(args.input):
        part = D.read_parquet(
            args.input, comm, source=args.source, target=args.target, weight=args.weight
        )
        return part, args.input
    if args.input:
        read = D.read_edges_npy if args.input.lower().endswith(".npy") else D.read_mtx
        return read(args.input, comm), args.input
    if args.generate == "random":
        part = D.random_edges(args.n, args.m, seed=args.seed, comm=comm)
        return part, f"random n={args.n:,} m={args.m:,} seed {args.seed}"
    if args.generate == "planted":
        k, d = _planted_k(args), 2.0 * args.m / args.n
        d_in, d_out = d * (1 - args.mixing), d * args.mixing
        part = D.planted_edges(args.n, k, d_in, d_out, seed=args.seed, comm=comm)
        what = f"planted n={args.n:,} m={args.m:,}, {k:,} communities, mixing {args.mixing:g}"
        return part, f"{what}, seed {args.seed}"
    scale = max(1, int(np.ceil(np.log2(max(args.n, 2)))))
    ef = max(1, args.m // (1 << scale)) if args.m else 0  # as the match command rounds -m
    part = D.rmat_edges(scale, ef, args.rmat_kind, seed=args.seed, comm=comm)
    return part, f"rmat {args.rmat_kind} scale {scale}, edge factor {ef}, seed {args.seed}"


def load_timed(args, comm):
    """(this rank's part, what was loaded, the slowest rank's load seconds, the
    owner array of ``--partition``): the start every distributed command shares."""
    from nx_gpumatch.distributed._comm import allreduce_max

    t0 = time.perf_counter()
    part, what = _load(args, comm)
    t_load = allreduce_max(comm, time.perf_counter() - t0, "the load")
    return part, what, t_load, partition_owner(args, part, comm)


def partition_owner(args, part, comm):
    """The owner array of ``--partition random`` (None: blocks)."""
    from nx_gpumatch.distributed._comm import allreduce_max

    if args.partition != "random":
        return None
    n = part.get("num_nodes")
    if n is None:
        top = int(max(part["src"].max(initial=-1), part["dst"].max(initial=-1)))
        n = part["num_nodes"] = allreduce_max(comm, top, "the count of the vertices") + 1
    return np.random.default_rng([args.seed, 1]).integers(0, comm.size, n)


def run_distributed(args):
    if args.problem in COMMUNITIES:
        from nx_gpumatch.cli.distributed_louvain import run_communities

        return run_communities(args)
    from nx_gpumatch import distributed as D
    from nx_gpumatch.distributed._comm import gather

    comm = D._comm.get_comm()
    try:
        part, what, t_load, owner = load_timed(args, comm)
        kw = {"owner": owner, "threads": args.threads}
        if args.algorithm in STRATEGY:
            kw.update(ordering=args.ordering, vertex_subsets=args.vertex_subsets)
            kw.update(b_subset=args.b_subset, partial_sort=not args.full_sort)
        if args.algorithm == "b_suitor":
            res = D.b_matching(part, args.b, **kw)
        else:
            res = D.max_weight_matching(part, algorithm=args.algorithm, **kw)
        size = res.size()
        weight = res.weight()
        same = _check(args, part, res, comm) if args.check else None
        # collective: a write that fails on any rank raises on every rank
        name = res.write(args.output) if args.output else None
    except D.DistributedError as exc:
        _fail(comm, str(exc))
    names = gather(comm, name, 0, "the output file names")
    if comm.rank == 0:
        b = args.b if args.algorithm == "b_suitor" else 1
        st = res.stats
        print(f"graph        {what} on {comm.size} ranks (loaded in {t_load:.3f} s)")
        if args.algorithm in STRATEGY:
            print(
                f"algorithm    {args.algorithm}, b = {b}; ordering {args.ordering}, "
                f"vertex subsets {args.vertex_subsets}, b' {args.b_subset or 'b'}, "
                f"{'full' if args.full_sort else 'partial'} sort; {args.partition} partition"
            )
        else:
            print(f"algorithm    {args.algorithm}; {args.partition} partition")
        print(f"matching     {size:,} edges, weight {weight:.6g}")
        print("time         " + ", ".join(f"{k} {v:.3f} s" for k, v in st.time.items()))
        t = st.total
        if args.algorithm == "local_max":
            print(
                f"messages     rounds {t['rounds']}, candidate updates {t['candidate_updates']:,}, "
                f"matched updates {t['matched_updates']:,}"
            )
        else:
            print(
                f"messages     supersteps {t['supersteps']}, proposals {t['proposals']:,}, "
                f"rejections {t['rejections']:,}, annulments {t['annulments']:,}, "
                f"total {t['messages']:,}"
            )
        if same is not None:
            print(f"check        equal to the shared-memory result: {same}")
        if name:
            print(f"output       {len(names)} files: {names[0]} ...")
    return 0 if same is not False else 1


def _check(args, part, res, comm):
    """Gather the edge list on rank 0 and compare with the shared-memory engine."""
    from nx_gpumatch.distributed._comm import gather

    pieces = gather(comm, (part["src"], part["dst"], part.get("weight")), 0, "--check")
    got = res.gather()
    if comm.rank != 0:
        return None
    s = np.concatenate([p[0] for p in pieces])
    t = np.concatenate([p[1] for p in pieces])
    w = None if pieces[0][2] is None else np.concatenate([p[2] for p in pieces])
    n = part.get("num_nodes")
    g = Graph.from_arrays(s, t, w, num_nodes=n, duplicates=part.get("duplicates", "last"))
    b = args.b if args.algorithm == "b_suitor" else 1
    u, v = gm.b_matching(g, b)
    ok = bool(np.array_equal(u, got[0]) and np.array_equal(v, got[1]))
    if not ok:
        print("check        MISMATCH with the shared-memory result", file=sys.stderr)
    return ok
