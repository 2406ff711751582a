"""Every parallel family on a machine whose cores are shared with other work.

``python -m nx_gpumatch.benchmark busy_core [--repeat 5] [--families ...]``
times each family's call on one thread, on all of Numba's threads (forced),
and as a user calls it (the thread count left unset: the free cores, see
``nx_gpumatch.cpu.threads``), first as the machine is, then while processes
this benchmark starts spin (``python -c "while True: pass"``, one per
``--busy`` core; default 1). It prints the medians and the ratios to the
one-thread time; the goal is at most 1 for the default call with a busy core:
threads may stop paying off when a core is taken, but must not cost. The
spinning processes are ended (by their process ids) before it returns, also
on an error.

Inputs are moderate (0.2-0.5M edges), so the whole run takes a minute or two.
"""

import argparse
import statistics
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

    weighted = G.chung_lu(100_000, 10, 2.5, seed=0, weights="uniform")
    communities, _ = G.planted_partition(50_000, 200, 12, 4, seed=0)
    A = bipartite_graph("random", 200_000, 0).tocsr()
    prefs = gm.stable_marriage_instance("easy", 200_000, seed=0)

    def local_max():
        weighted.clear_cache()  # the ranking's kernels are part of a first call
        return gm.max_weight_matching(weighted, algorithm="local_max")

    # Weighted: on one weight both are one pass on one thread (id_order_sweep).
    return {
        "suitor": lambda: gm.max_weight_matching(weighted, algorithm="suitor"),
        "local_max": local_max,
        "b_matching": lambda: gm.b_matching(weighted, 3),
        "bipartite": lambda: gm.maximum_bipartite_matching(A),
        "stable_marriage": lambda: gm.stable_marriage(*prefs),
        "louvain": lambda: gm.louvain_communities(communities, seed=1),
        "leiden": lambda: gm.leiden_communities(communities, seed=1),
    }


def _once(fn, n_threads):
    """Seconds of one call; ``n_threads`` None: as a user calls (nothing set
    around the call, which then chooses its own count)."""
    import contextlib

    from nx_gpumatch import cpu

    with cpu.threads(n_threads) if n_threads else contextlib.nullcontext():
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t


def _measure(calls, families, repeat, many):
    """{family: ((1 thread, all threads, default) median seconds, (all threads,
    default) median ratios to 1 thread)}. Each round times the three back to
    back, the order rotating, and the ratios are taken within a round: a load
    spike or a drift of the machine then hits all three sides alike."""
    out = {}
    for name in families:
        times = {k: [] for k in (1, many, None)}
        ratios = {k: [] for k in (many, None)}
        for r in range(repeat):
            order = (1, many, None)[r % 3 :] + (1, many, None)[: r % 3]
            took = {k: _once(calls[name], k) for k in order}
            for k in order:
                times[k].append(took[k])
            for k in ratios:
                ratios[k].append(took[k] / took[1])
        med = statistics.median
        out[name] = (
            tuple(med(times[k]) for k in (1, many, None)),
            tuple(med(ratios[k]) for k in (many, None)),
        )
    return out


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
        _once(calls[name], 1)
        _once(calls[name], many)
    quiet = _measure(calls, families, args.repeat, many)
    procs = _spinners(args.busy)
    try:
        busy = _measure(calls, families, args.repeat, many)
    finally:
        for p in procs:
            p.kill()
            p.wait()
    print(
        f"1 thread, {many} threads and the default (unset: the free cores), medians of "
        f"{args.repeat} rounds (ratios: medians of the ratios within a round); busy: "
        f"{args.busy} spinning process(es) on {many} cores"
    )
    head = f"{'1 [s]':>8s} {f'{many} [s]':>8s} {'ratio':>6s} {'default':>8s} {'ratio':>6s}"
    print(f"  {'':16s} {'quiet':^40s} | {'busy':^40s}")
    print(f"  {'family':16s} {head} | {head}")
    worst = 0.0
    for name in families:
        cells = []
        for (one, forced, default), (r_forced, r_default) in (quiet[name], busy[name]):
            cells.append(
                f"{one:8.4f} {forced:8.4f} {r_forced:5.2f}x {default:8.4f} {r_default:5.2f}x"
            )
        worst = max(worst, busy[name][1][1])
        print(f"  {name:16s} {cells[0]} | {cells[1]}")
    print(f"worst busy ratio of the default call {worst:.2f}x (goal: at most 1)")
    return 0
