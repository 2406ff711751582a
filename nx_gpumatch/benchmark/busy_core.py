"""Every parallel family on a machine whose cores are shared with other work.

``python -m nx_gpumatch.benchmark busy_core [--repeat 5] [--families ...]``
times each family's call with one thread and with all of Numba's threads,
first as the machine is, then while processes this benchmark starts spin
(``python -c "while True: pass"``, one per ``--busy`` core; default 1). It
prints each median and the ratio all-threads / one-thread for both; the goal
is a ratio of at most 1 with a busy core: threads may stop paying off when a
core is taken, but must not cost. The spinning processes are ended (by their
process ids) before it returns, also on an error.

Inputs are moderate (0.2-0.5M edges), so the whole run takes a minute or two.
"""

import argparse
import subprocess
import sys
import time

FAMILIES = (
    "suitor",
    "local_max",
    "b_matching",
    "bipartite",
    "stable_marriage",
    "louvain",
    "leiden",
)


def _calls():
    """{family: fn() running one call}, inputs built once."""
    import nx_gpumatch as gm
    from nx_gpumatch import generators as G
    from nx_gpumatch.generators_bipartite import bipartite_graph

    unit = G.chung_lu(100_000, 10, 2.5, seed=0, weights="unit")
    weighted = G.chung_lu(100_000, 10, 2.5, seed=0, weights="uniform")
    communities, _ = G.planted_partition(50_000, 200, 12, 4, seed=0)
    A = bipartite_graph("random", 200_000, 0).tocsr()
    prefs = gm.stable_marriage_instance("easy", 200_000, seed=0)

    def local_max():
        unit.clear_cache()  # the ranking's kernels are part of a first call
        return gm.max_weight_matching(unit, algorithm="local_max")

    return {
        "suitor": lambda: gm.max_weight_matching(unit, algorithm="suitor"),
        "local_max": local_max,
        "b_matching": lambda: gm.b_matching(weighted, 3),
        "bipartite": lambda: gm.maximum_bipartite_matching(A),
        "stable_marriage": lambda: gm.stable_marriage(*prefs),
        "louvain": lambda: gm.louvain_communities(communities, seed=1),
        "leiden": lambda: gm.leiden_communities(communities, seed=1),
    }


def _time(fn, n_threads, repeat):
    from nx_gpumatch import cpu
    from nx_gpumatch.benchmark import median_time

    with cpu.threads(n_threads):
        return median_time(fn, repeat)[0]


def _measure(calls, families, repeat, many):
    rows = {}
    for name in families:
        one = _time(calls[name], 1, repeat)
        all_ = _time(calls[name], many, repeat)
        rows[name] = (one, all_)
    return rows


def _spinners(k):
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(k)]
    time.sleep(0.5)  # let them take their cores
    return procs


def main(argv):
    from nx_gpumatch import cpu
    from nx_gpumatch.benchmark import choice_list

    ap = argparse.ArgumentParser(prog="python -m nx_gpumatch.benchmark busy_core")
    ap.add_argument("--repeat", type=int, default=5, help="timed calls per median")
    ap.add_argument("--busy", type=int, default=1, help="cores kept busy (default 1)")
    ap.add_argument(
        "--families",
        default=",".join(FAMILIES),
        help=f"comma-separated, among {','.join(FAMILIES)}",
    )
    args = ap.parse_args(argv)
    families = choice_list(ap, "--families", args.families, FAMILIES)
    many = cpu.num_threads()
    if many < 2:
        print("error: one thread only here; nothing to compare", file=sys.stderr)
        return 2
    calls = _calls()
    for name in families:  # compile (or load) both builds before timing
        _time(calls[name], 1, 1)
        _time(calls[name], many, 1)
    quiet = _measure(calls, families, args.repeat, many)
    procs = _spinners(args.busy)
    try:
        busy = _measure(calls, families, args.repeat, many)
    finally:
        for p in procs:
            p.kill()
            p.wait()
    print(
        f"{many} threads vs 1, medians of {args.repeat}; busy: {args.busy} spinning "
        f"process(es) on {cpu.num_threads()} cores"
    )
    print(
        f"  {'family':16s} {'quiet 1 [s]':>11s} {f'{many} [s]':>9s} {'ratio':>6s}"
        f" | {'busy 1 [s]':>10s} {f'{many} [s]':>9s} {'ratio':>6s}"
    )
    worst = 0.0
    for name in families:
        q1, qn = quiet[name]
        b1, bn = busy[name]
        worst = max(worst, bn / b1)
        print(
            f"  {name:16s} {q1:11.4f} {qn:9.4f} {qn / q1:5.2f}x"
            f" | {b1:10.4f} {bn:9.4f} {bn / b1:5.2f}x"
        )
    print(f"worst busy ratio {worst:.2f}x (goal: at most 1)")
    return 0
