"""The ``nx-gpumatch`` command line: one module per subcommand, each with
``add_command(subparsers)``; options and errors shared through ``_common``.

``nx-gpumatch`` alone runs the default job (``match``): weighted matching on a
generated random graph, compared with networkx's exact answer.

Every bad input ends the same way in every subcommand: one line
``error: <what is wrong>`` on stderr and exit code 2, never a traceback.
"""

import importlib
import sys

import networkx as nx

from nx_gpumatch import __version__

# Subcommand modules under nx_gpumatch.cli, in the order ``--help`` lists them.
COMMANDS = (
    "match",
    "b_matching",
    "stable_marriage",
    "louvain",
    "bipartite",
    "distributed",
    "warmup",
    "benchmark",
)


def build_parser():
    from nx_gpumatch.cli._common import Parser

    parser = Parser(
        prog="nx-gpumatch",
        description="Matching and clustering on large graphs. With no command, runs 'match'.",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}", help="print the version"
    )
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    for name in COMMANDS:
        importlib.import_module(f"nx_gpumatch.cli.{name}").add_command(sub)
    return parser


def main(argv=None):
    from nx_gpumatch.cli._common import CliError, check_device, check_paths, open_output

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    commands = set(parser._subparsers._group_actions[0].choices)
    if not argv or (argv[0] not in commands and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "match")
    output = None
    try:
        args = parser.parse_args(argv)
        check_paths(args)
        output = open_output(args)
        check_device(args)
        if getattr(args, "threads", None) is not None:
            nx.config.backends.gpumatch.threads = args.threads
        return args.func(args)
    # Errors from the library about the input (bad values, missing files, no GPU)
    # are the user's to fix: one line, no traceback.
    except (CliError, ValueError, RuntimeError, OSError, nx.NetworkXException) as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"error: {message}", file=sys.stderr)
        return 2
    # An input too large for this machine is as much the user's to fix.
    except MemoryError as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else "no detail"
        print(f"error: out of memory: {message}", file=sys.stderr)
        return 2
    finally:
        if output is not None:  # an error or Ctrl-C before the result was written
            output.discard()
