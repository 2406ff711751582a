"""The ``nx-gpumatch`` command line: one module per subcommand, each with
``add_command(subparsers)``; options and errors shared through ``_common``.

``nx-gpumatch`` alone runs the default job (``match``): weighted matching on a
generated random graph, compared with networkx's exact answer.
"""

import argparse
import importlib
import sys

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
    from nx_gpumatch.cli._common import CliError  # noqa: F401  (one error type for all)

    parser = argparse.ArgumentParser(
        prog="nx-gpumatch",
        description="Matching and clustering on large graphs. With no command, runs 'match'.",
    )
    sub = parser.add_subparsers(dest="command")
    for name in COMMANDS:
        importlib.import_module(f"nx_gpumatch.cli.{name}").add_command(sub)
    return parser


def main(argv=None):
    from nx_gpumatch.cli._common import CliError

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    commands = set(parser._subparsers._group_actions[0].choices)
    if not argv or (argv[0] not in commands and argv[0] not in ("-h", "--help")):
        argv.insert(0, "match")
    args = parser.parse_args(argv)
    try:
        if getattr(args, "threads", None) is not None:
            import networkx as nx

            nx.config.backends.gpumatch.threads = args.threads
        return args.func(args)
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
