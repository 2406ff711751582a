"""``nx-gpumatch warmup``: compile and cache every kernel family now, so that
later processes start fast (for container images and CI runners)."""


def add_command(subparsers):
    """Add the ``warmup`` subcommand to an argparse subparsers object."""
    from nx_gpumatch.warmup import FAMILIES

    p = subparsers.add_parser(
        "warmup",
        help="compile and cache all kernels (run once per machine, image or CI runner)",
        description=(
            "Call every algorithm family once on a tiny input, so that Numba compiles its "
            "kernels and caches them on disk (in ~/.cache/nx-gpumatch, or in NUMBA_CACHE_DIR). "
            "Later processes load them instead of compiling."
        ),
    )
    p.add_argument(
        "families",
        nargs="*",
        metavar="FAMILY",
        help=f"families to compile (default: all): {', '.join(FAMILIES)}",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args):
    from nx_gpumatch.cli._common import CliError
    from nx_gpumatch.warmup import FAMILIES, announce, warmup

    unknown = [f for f in args.families if f not in FAMILIES]
    if unknown:
        raise CliError(f"unknown family {unknown[0]!r}; choose from {', '.join(FAMILIES)}")
    if args.no_progress:  # else warmup prints it above its progress bar
        print(announce(args.families or None), flush=True)
    times = warmup(args.families or None, progress=not args.no_progress)
    for name, sec in times.items():
        print(f"{name:18s} {sec:7.2f} s")
    print(f"{'total':18s} {sum(times.values()):7.2f} s")
    return 0
