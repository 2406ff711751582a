import sys

from nx_gpumatch.benchmark import PROBLEMS, load


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in PROBLEMS:
        print(f"usage: python -m nx_gpumatch.benchmark {{{','.join(PROBLEMS)}}} [options]")
        return 2
    try:
        module = load(argv[0])
    except ImportError as exc:  # an anchor package is missing: say so before measuring
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return module.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
