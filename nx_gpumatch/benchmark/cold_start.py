"""First-use benchmark: Numba compile time per family, in fresh processes.

    python -m nx_gpumatch.benchmark cold_start [--families a,b] [--repeat R]

For each family (see :data:`nx_gpumatch.warmup.FAMILIES`) a fresh Python process
with an empty Numba cache directory imports the package and makes the family's
first call on a tiny graph: that is the compile time a new machine pays. Then
the same call in another fresh process with the now-filled cache ("warm"), and
"all": every family in one fresh process with an empty cache. The import of the
package alone is timed too (it must not compile or import Numba).

Times are medians over R fresh processes, each measured inside the child (so
Python's own start-up is not counted).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import nx_gpumatch
t1 = time.perf_counter()
c1 = time.process_time()
numba_loaded = "numba" in sys.modules
from nx_gpumatch.warmup import FAMILIES
names = sys.argv[1].split(",") if len(sys.argv) > 1 and sys.argv[1] else []
ran = []
for name in names:
    if FAMILIES[name]():
        ran.append(name)
t2 = time.perf_counter()
c2 = time.process_time()
print(json.dumps({"import": t1 - t0, "call": t2 - t1, "call_cpu": c2 - c1,
                  "numba_on_import": numba_loaded, "ran": ran}))
"""


def measure(families, cache_dir, threads=None):
    """Run the given families (comma list; "" = import only) in a fresh process
    using ``cache_dir`` as the Numba cache. Returns the child's JSON dict."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    if threads:
        env["NUMBA_NUM_THREADS"] = str(threads)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, families],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def cold_and_warm(family, repeat=1):
    """(cold seconds, cold CPU seconds, warm seconds, ran) of one family's first
    call; each cold run starts with an empty cache directory, each warm run
    reuses the last one."""
    cold, cpu, warm, ran = [], [], [], True
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="nxgm-numba-") as d:
            r = measure(family, d)
            ran = bool(r["ran"])
            cold.append(r["call"])
            cpu.append(r["call_cpu"])
            if ran:
                w = measure(family, d)
                warm.append(w["import"] + w["call"])
    med = statistics.median
    return med(cold), med(cpu), (med(warm) if warm else 0.0), ran


# First-use goals: cold first call per family, all families in one process, warm process.
GOAL_FAMILY = 5.0
GOAL_ALL = 20.0
GOAL_WARM = 1.0


def _goals(result):
    """Print which measurements miss the first-use goals, and by how much (CPU
    seconds too: on a busy machine wall time overstates the compile)."""
    rows = [
        (f"{k} cold", v["cold"], v["cold_cpu"], GOAL_FAMILY) for k, v in result["families"].items()
    ]
    rows += [(f"{k} warm", v["warm"], v["warm"], GOAL_WARM) for k, v in result["families"].items()]
    if "all" in result:
        a = result["all"]
        rows.append(("all cold", a["cold"], a["cold_cpu"], GOAL_ALL))
    over = [r for r in rows if r[1] > r[3]]
    if not over:
        print(
            f"  goals met: cold <= {GOAL_FAMILY:g} s per family, all <= {GOAL_ALL:g} s, warm <= {GOAL_WARM:g} s"
        )
        return
    print("  over the goal (wall / CPU seconds past it):")
    for name, wall, cpu, goal in over:
        print(
            f"    {name:24s} goal {goal:4g} s: +{wall - goal:6.2f} wall, +{max(0.0, cpu - goal):6.2f} CPU"
        )


def main(argv):
    from nx_gpumatch.warmup import FAMILIES

    ap = argparse.ArgumentParser(prog="python -m nx_gpumatch.benchmark cold_start")
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated families")
    ap.add_argument("--repeat", type=int, default=1, help="fresh processes per measurement")
    ap.add_argument("--no-all", action="store_true", help="skip the all-families run")
    ap.add_argument("--json", help="also write the numbers to this JSON file")
    args = ap.parse_args(argv)
    families = [f for f in args.families.split(",") if f]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        print(f"unknown families {unknown}; choose from {list(FAMILIES)}", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="nxgm-numba-") as d:
        imp = [measure("", d) for _ in range(max(3, args.repeat))]
    t_imp = statistics.median(r["import"] for r in imp)
    loaded = any(r["numba_on_import"] for r in imp)
    print(f"fresh process, empty Numba cache; median of {args.repeat} process(es) per row")
    print(f"  import nx_gpumatch: {t_imp:.3f} s (numba imported: {loaded})")
    print(f"  {'family':18s} {'cold [s]':>9s} {'cold CPU [s]':>12s} {'warm [s]':>9s}")
    result = {"import": t_imp, "numba_on_import": loaded, "families": {}}
    for name in families:
        cold, cpu, warm, ran = cold_and_warm(name, args.repeat)
        if not ran:
            print(f"  {name:18s} {'(not in this version)':>19s}")
            continue
        result["families"][name] = {"cold": cold, "cold_cpu": cpu, "warm": warm}
        print(f"  {name:18s} {cold:9.2f} {cpu:12.2f} {warm:9.2f}", flush=True)
    if not args.no_all:
        with tempfile.TemporaryDirectory(prefix="nxgm-numba-") as d:
            r = measure(",".join(families), d)
            w = measure(",".join(families), d)
        result["all"] = {
            "cold": r["call"],
            "cold_cpu": r["call_cpu"],
            "warm": w["import"] + w["call"],
        }
        print(
            f"  {'all, one process':18s} {r['call']:9.2f} {r['call_cpu']:12.2f} "
            f"{w['import'] + w['call']:9.2f}"
        )
    _goals(result)
    print(
        "  cold: first call(s) after import (wall; CPU: this process's CPU time, which a busy\n"
        "  machine inflates less); warm: import + call with the cache filled"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0
