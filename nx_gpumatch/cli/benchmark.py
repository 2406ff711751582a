"""``nx-gpumatch benchmark``: the benchmarks of ``python -m nx_gpumatch.benchmark``
from the command line, e.g. ``nx-gpumatch benchmark scaling --plot fig.png``
regenerates the README figure (time against size per family, with anchors, and
the speed-up table)."""

import argparse

from nx_gpumatch.benchmark import PROBLEMS, load
from nx_gpumatch.cli._common import CliError


def add_command(subparsers):
    """Add the ``benchmark`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "benchmark",
        help="time the algorithms against their anchors (needs the 'bench' extra)",
        description=(
            "Run one benchmark; options after the name go to it (see "
            "'nx-gpumatch benchmark NAME --help'). 'scaling --plot FILE' draws time "
            "against graph size and the speed-up table; 'cold_start' times the first "
            "call of each family in fresh processes."
        ),
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="accepted as by every command (before the benchmark's name); a benchmark "
        "reports its progress as lines of its report",
    )
    p.add_argument("problem", choices=PROBLEMS, help="which benchmark")
    p.add_argument("options", nargs=argparse.REMAINDER, help="options of that benchmark")
    p.set_defaults(func=run)


def run(args):
    try:
        module = load(args.problem)  # checks the anchor packages before any measuring
    except ImportError as exc:
        raise CliError(str(exc)) from None
    return module.main(args.options)
