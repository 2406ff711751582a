"""``nx-gpumatch stable-marriage``: solve one of the generated stable
marriage instances (Manne et al. 2016) and report proposals per second and a stability check."""

import statistics
import sys
import time

import nx_gpumatch as gm
from nx_gpumatch.algorithms import stable_marriage as sm
from nx_gpumatch.algorithms.stable_marriage import ALGORITHMS, KINDS
from nx_gpumatch.cli._common import nonnegative_int, positive_int


def add_command(subparsers):
    """Add the ``stable-marriage`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "stable-marriage",
        help="man-optimal stable matching of a generated easy/hard instance",
        description=(
            "Generate the 'easy' instance of Manne et al. 2016 (each man ranks (1+eps) ln n random women, "
            "women rank exactly their suitors) or 'hard' instance (one shared complete ranking "
            "per side), solve it, and check the result is stable."
        ),
    )
    p.add_argument("--kind", choices=KINDS, default="easy", help="instance family (default easy)")
    p.add_argument(
        "-n", type=nonnegative_int, default=1_000_000, help="men and women (default 1,000,000)"
    )
    p.add_argument("--seed", type=nonnegative_int, default=0, help="generator seed (default 0)")
    p.add_argument(
        "--algorithm",
        "-a",
        choices=ALGORITHMS,
        default="mcvitie_wilson",
        help="default mcvitie_wilson",
    )
    p.add_argument(
        "--device",
        choices=("auto", "cpu", "gpu"),
        default=None,
        help="engine (default: config, 'auto')",
    )
    p.add_argument(
        "--sequential", action="store_true", help="CPU: the sequential algorithm instead of threads"
    )
    p.add_argument(
        "--threads", type=positive_int, default=None, help="Numba threads (default: all cores)"
    )
    p.add_argument(
        "--repeat",
        type=positive_int,
        default=3,
        help="timed solves; the median is reported (default 3)",
    )
    p.add_argument("--no-check", action="store_true", help="skip the stability check")
    p.add_argument("--no-progress", action="store_true", help="no progress display on stderr")
    p.set_defaults(func=run_stable_marriage)
    return p


def run_stable_marriage(args):
    from tqdm import tqdm

    with tqdm(total=3 + args.repeat, disable=args.no_progress, leave=False, file=sys.stderr) as bar:
        return _run(args, bar)


def _run(args, bar):
    bar.set_description(f"generating the {args.kind} instance")
    t = time.perf_counter()
    men, women = gm.stable_marriage_instance(args.kind, args.n, args.seed, threads=args.threads)
    t_gen = time.perf_counter() - t
    entries = int(men[0][-1])
    bar.update()
    bar.set_description("ranking the pairs")
    t = time.perf_counter()
    prefs = sm.prepare_preferences(men, women, threads=args.threads)
    t_prep = time.perf_counter() - t
    del men, women
    bar.update()
    try:
        engine = sm._choose_engine(
            prefs, args.algorithm, args.device, not args.sequential, args.threads
        )
    except (ValueError, RuntimeError) as exc:
        # Also called without main() (tests): answer the way main does.
        print(f"error: {exc}", file=sys.stderr)
        return 2
    bar.set_description(f"{args.algorithm} (first call compiles or loads kernels)")
    t = time.perf_counter()
    mate, proposals = sm.solve(prefs, algorithm=args.algorithm, engine=engine, threads=args.threads)
    t_first = time.perf_counter() - t
    bar.update()
    bar.set_description(f"{args.algorithm}, timed")
    times = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        mate, proposals = sm.solve(
            prefs, algorithm=args.algorithm, engine=engine, threads=args.threads
        )
        times.append(time.perf_counter() - t)
        bar.update()
    bar.close()  # the report follows
    t_solve = statistics.median(times)
    matched = int((mate >= 0).sum())
    print(
        f"instance     {args.kind}, n={args.n:,}, seed {args.seed}: {entries:,} list entries per side (generated in {t_gen:.2f} s)"
    )
    print(f"prepared     {prefs.num_entries:,} mutually ranked pairs packed in {t_prep:.2f} s")
    print(f"algorithm    {args.algorithm} on {engine}")
    print(
        f"time         {t_solve:.4f} s (median of {len(times)}; first call {t_first:.3f} s incl. kernel load)"
    )
    print(f"proposals    {proposals:,} = {proposals / max(t_solve, 1e-12):,.0f} proposals/s")
    print(f"matched      {matched:,} of {args.n:,} men ({100 * matched / max(args.n, 1):.2f}%)")
    if args.no_check:
        return 0
    t = time.perf_counter()
    bp = gm.blocking_pair(mate, prefs)
    t_check = time.perf_counter() - t
    if bp is None:
        print(f"stable       yes: no blocking pair (checked in {t_check:.2f} s)")
        return 0
    print(f"stable       NO: man {bp[0]} and woman {bp[1]} block the matching")
    return 1
