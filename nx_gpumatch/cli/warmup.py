"""``nx-gpumatch warmup``: compile and cache every kernel family now, so that
later processes start fast (for container images and CI runners)."""

from nx_gpumatch.cli._common import CliError
from nx_gpumatch.warmup import add_arguments, report, unknown_family


def add_command(subparsers):
    """Add the ``warmup`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "warmup",
        help="compile and cache all kernels (run once per machine, image or CI runner)",
        description=(
            "Call every algorithm family once on a tiny input, so that Numba compiles its "
            "kernels and caches them on disk (in ~/.cache/nx-gpumatch, or in NUMBA_CACHE_DIR). "
            "Later processes load them instead of compiling."
        ),
    )
    add_arguments(p)
    p.set_defaults(func=run)


def run(args):
    why = unknown_family(args.families)
    if why:
        raise CliError(why)
    report(args.families or None, progress=not args.no_progress)
    return 0
