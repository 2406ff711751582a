"""First-use benchmark: the first call of each family in fresh processes.

    python -m nx_gpumatch.benchmark cold_start [--families a,b] [--repeat R] [--limits]
    python -m nx_gpumatch.benchmark cold_start --medium 10000,100000 [--kinds exact,louvain]

For each family (see :data:`nx_gpumatch.warmup.FAMILIES`) a fresh Python process
with an empty Numba cache directory imports the package and makes the family's
first call on a tiny graph, three ways:

* "first": as a user's first small call runs, interpreted (nothing compiles);
* "compile": with interpretation off, i.e. the Numba compile that the first
  call on a LARGE input pays (and that ``nx_gpumatch.warmup()`` pays ahead);
* "warm": import + first call in another fresh process once the cache is filled
  (the call loads the cached kernels and runs them compiled).

"all" is every family in one fresh process with an empty cache, both ways. The
import of the package alone is timed too (it must not compile or import Numba).
Times are medians over R fresh processes, each measured inside the child (so
Python's own start-up is not counted). ``--limits`` instead times interpreted
calls on growing random inputs in this process: how the size limits of
``nx_gpumatch.cpu.INTERPRET_MAX`` were chosen. ``--medium`` times the first call
on medium random inputs (edges, or entries for bipartite and stable marriage)
in fresh processes with an empty cache: as it runs by default (interpreted up
to the limit, compiled past it) and compiled.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import networkx as nx
import numpy as np

import nx_gpumatch as gm
from nx_gpumatch.warmup import FAMILIES

# The families timed by default: the shared-memory ones (the distributed
# family's warm-up starts an MPI job; name it to time that).
DEFAULT_FAMILIES = [f for f in FAMILIES if f != "distributed"]

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
c0 = time.process_time()
import nx_gpumatch
t1 = time.perf_counter()
c1 = time.process_time()
numba_loaded = "numba" in sys.modules
from nx_gpumatch.warmup import FAMILIES
names = sys.argv[1].split(",") if len(sys.argv) > 1 and sys.argv[1] else []
ran = []
for name in names:
    if FAMILIES[name](False):
        ran.append(name)
t2 = time.perf_counter()
c2 = time.process_time()
print(json.dumps({"import": t1 - t0, "call": t2 - t1, "call_cpu": c2 - c1,
                  "import_cpu": c1 - c0,
                  "numba_on_import": numba_loaded, "ran": ran}))
"""


def measure(families, cache_dir, threads=None, interpret=True):
    """Run the given families (comma list; "" = import only) in a fresh process
    using ``cache_dir`` as the Numba cache, with small calls interpreted or
    (``interpret=False``) compiled. Returns the child's JSON dict."""
    env = dict(
        os.environ, NUMBA_CACHE_DIR=cache_dir, NX_GPUMATCH_INTERPRET_SMALL="1" if interpret else "0"
    )
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
    """One family's first call: a dict of medians (``cold``, ``cold_cpu``: the
    first small call, interpreted; ``compile``, ``compile_cpu``: the same call
    compiled; ``warm``, ``warm_cpu``: import + call with the cache filled), or None when this
    version lacks the family. Each cold run starts with an empty cache
    directory; the warm run reuses the compiled one."""
    rows = {k: [] for k in ("cold", "cold_cpu", "compile", "compile_cpu", "warm", "warm_cpu")}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="nxgm-numba-") as d:
            r = measure(family, d)
            if not r["ran"]:
                return None
            rows["cold"].append(r["call"])
            rows["cold_cpu"].append(r["call_cpu"])
        with tempfile.TemporaryDirectory(prefix="nxgm-numba-") as d:
            r = measure(family, d, interpret=False)
            rows["compile"].append(r["call"])
            rows["compile_cpu"].append(r["call_cpu"])
            w = measure(family, d)
            rows["warm"].append(w["import"] + w["call"])
            rows["warm_cpu"].append(w["import_cpu"] + w["call_cpu"])
    return {k: statistics.median(v) for k, v in rows.items()}


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
    rows += [
        (f"{k} warm", v["warm"], v.get("warm_cpu", v["warm"]), GOAL_WARM)
        for k, v in result["families"].items()
    ]
    if "all" in result:
        a = result["all"]
        rows.append(("all cold", a["cold"], a["cold_cpu"], GOAL_ALL))
    over = [r for r in rows if r[1] > r[3]]
    if not over:
        print(
            f"  goals met by the first small call: cold <= {GOAL_FAMILY:g} s per family, "
            f"all <= {GOAL_ALL:g} s, warm <= {GOAL_WARM:g} s"
        )
    else:
        print("  over the goal (wall / CPU seconds past it):")
        for name, wall, cpu, goal in over:
            print(
                f"    {name:24s} goal {goal:4g} s: "
                f"+{wall - goal:6.2f} wall, +{max(0.0, cpu - goal):6.2f} CPU"
            )
    slow = [(k, v["compile_cpu"]) for k, v in result["families"].items() if "compile_cpu" in v]
    slow = [f"{k} {c:.1f}" for k, c in slow if c > GOAL_FAMILY]
    if slow:
        print(
            f"  compile above {GOAL_FAMILY:g} CPU s (paid by a first LARGE call, or by warmup): "
            + ", ".join(slow)
        )


def main(argv):
    ap = argparse.ArgumentParser(prog="python -m nx_gpumatch.benchmark cold_start")
    ap.add_argument(
        "--families", default=",".join(DEFAULT_FAMILIES), help="comma-separated families"
    )
    ap.add_argument("--repeat", type=int, default=1, help="fresh processes per measurement")
    ap.add_argument("--no-all", action="store_true", help="skip the all-families run")
    ap.add_argument("--json", help="also write the numbers to this JSON file")
    ap.add_argument(
        "--limits", action="store_true", help="time interpreted calls on growing inputs instead"
    )
    ap.add_argument(
        "--medium",
        help="comma-separated input sizes: time first calls on medium inputs instead",
    )
    ap.add_argument(
        "--no-compiled", action="store_true", help="with --medium: skip the compiled column"
    )
    ap.add_argument(
        "--kinds",
        default=",".join(MEDIUM_KINDS),
        help="with --medium: comma-separated call kinds (" + ", ".join(MEDIUM_KINDS) + ")",
    )
    args = ap.parse_args(argv)
    families = [f for f in args.families.split(",") if f]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        print(f"unknown families {unknown}; choose from {list(FAMILIES)}", file=sys.stderr)
        return 2

    if args.limits:
        return limits()
    if args.medium:
        kinds = [k for k in args.kinds.split(",") if k]
        bad = [k for k in kinds if k not in MEDIUM_KINDS]
        if bad:
            print(f"unknown kinds {bad}; choose from {list(MEDIUM_KINDS)}", file=sys.stderr)
            return 2
        sizes = [int(x) for x in args.medium.split(",")]
        return medium(sizes, kinds, args.repeat, compiled=not args.no_compiled)
    with tempfile.TemporaryDirectory(prefix="nxgm-numba-") as d:
        imp = [measure("", d) for _ in range(max(3, args.repeat))]
    t_imp = statistics.median(r["import"] for r in imp)
    loaded = any(r["numba_on_import"] for r in imp)
    print(f"fresh process, empty Numba cache; median of {args.repeat} process(es) per row")
    print(f"  import nx_gpumatch: {t_imp:.3f} s (numba imported: {loaded})")
    print(
        f"  {'family':18s} {'first [s]':>9s} {'CPU [s]':>8s} {'compile [s]':>11s} "
        f"{'CPU [s]':>8s} {'warm [s]':>9s}"
    )
    result = {"import": t_imp, "numba_on_import": loaded, "families": {}}
    for name in families:
        r = cold_and_warm(name, args.repeat)
        if r is None:
            print(f"  {name:18s} {'(not in this version)':>19s}")
            continue
        result["families"][name] = r
        print(
            f"  {name:18s} {r['cold']:9.2f} {r['cold_cpu']:8.2f} {r['compile']:11.2f} "
            f"{r['compile_cpu']:8.2f} {r['warm']:9.2f}",
            flush=True,
        )
    if not args.no_all:
        names = ",".join(result["families"])
        with tempfile.TemporaryDirectory(prefix="nxgm-numba-") as d:
            r = measure(names, d)
        with tempfile.TemporaryDirectory(prefix="nxgm-numba-") as d:
            c = measure(names, d, interpret=False)
            w = measure(names, d)
        result["all"] = {
            "cold": r["call"],
            "cold_cpu": r["call_cpu"],
            "compile": c["call"],
            "compile_cpu": c["call_cpu"],
            "warm": w["import"] + w["call"],
            "warm_cpu": w["import_cpu"] + w["call_cpu"],
        }
        a = result["all"]
        print(
            f"  {'all, one process':18s} {a['cold']:9.2f} {a['cold_cpu']:8.2f} "
            f"{a['compile']:11.2f} {a['compile_cpu']:8.2f} {a['warm']:9.2f}"
        )
    _goals(result)
    print(
        "  first: first call(s) after import, small inputs interpreted (wall; CPU: this\n"
        "  process's CPU time, which a busy machine inflates less); compile: the same call\n"
        "  with interpret_small off (what a first large call pays); warm: import + call\n"
        "  with the cache filled"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


LIMIT_SIZES = (250, 500, 1000, 2000, 4000, 8000, 16000, 32000, 64000)


def _limit_case(name, size):
    """(input, call) of a family for an input of ``size`` (its INTERPRET_MAX unit)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(1)
    if name == "bipartite":
        k = max(2, size // 4)
        return sp.random(k, k, density=min(1.0, size / k**2), format="csr", random_state=1), (
            lambda a: gm.maximum_bipartite_matching(a)
        )
    if name == "stable_marriage":
        n = max(1, int((size / 2) ** 0.5))  # complete lists: 2 n^2 entries
        men = {f"m{i}": [f"w{j}" for j in rng.permutation(n)] for i in range(n)}
        women = {f"w{i}": [f"m{j}" for j in rng.permutation(n)] for i in range(n)}
        return (men, women), lambda p: gm.stable_marriage(*p, device="cpu")
    G = nx.gnm_random_graph(max(2, size // 4), size, seed=1)
    for (u, v), w in zip(G.edges(), rng.random(G.number_of_edges()).tolist()):
        G[u][v]["weight"] = w
    calls = {
        "matching": lambda G: gm.max_weight_matching(G, algorithm="red_blue", device="cpu"),
        "exact": lambda G: gm.max_weight_matching(G),
        "b_matching": lambda G: gm.b_matching(G, 2, device="cpu"),
        "louvain": lambda G: gm.louvain_communities(G, seed=1, device="cpu"),
        "leiden": lambda G: gm.leiden_communities(G, seed=1, device="cpu"),
        "graph": lambda G: gm.Graph.from_networkx(G),
    }
    return G, calls[name]


def limits():
    """Print interpreted seconds per input size and family (this process; the
    first call of each size is not timed), next to INTERPRET_MAX."""
    from nx_gpumatch import cpu

    print("interpreted call [s] by input size (edges / entries); machine load shifts these")
    for name, limit in cpu.INTERPRET_MAX.items():
        row = []
        for size in LIMIT_SIZES:
            x, call = _limit_case(name, size)
            with cpu.interpreted():
                call(x)
                t = time.perf_counter()
                call(x)
                dt = time.perf_counter() - t
            row.append(f"{size}: {dt:.3f}")
            if dt > 3.0:
                break
        print(f"  {name:16s} limit {limit:6d} | " + "  ".join(row), flush=True)
    return 0


MEDIUM_KINDS = (
    "matching",
    "exact",
    "b_matching",
    "stable_marriage",
    "louvain",
    "leiden",
    "bipartite",
)

MEDIUM_CHILD = r"""
import sys, time, json
from nx_gpumatch.benchmark.cold_start import _limit_case
x, call = _limit_case(sys.argv[1], int(sys.argv[2]))
t = time.perf_counter()
c = time.process_time()
call(x)
print(json.dumps({"call": time.perf_counter() - t, "cpu": time.process_time() - c}))
"""


def _medium_once(kind, size, interpret):
    with tempfile.TemporaryDirectory(prefix="nxgm-numba-") as d:
        env = dict(
            os.environ,
            NUMBA_CACHE_DIR=d,
            NX_GPUMATCH_INTERPRET_SMALL="1" if interpret else "0",
        )
        out = subprocess.run(
            [sys.executable, "-c", MEDIUM_CHILD, kind, str(size)],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def medium(sizes, kinds, repeat=1, compiled=True):
    """Print the first call's wall (and CPU) seconds on medium inputs in fresh
    processes with an empty cache: by default, and with interpretation off."""
    from nx_gpumatch import cpu

    print("first call on a medium random input, fresh process, empty Numba cache;")
    print(f"median of {repeat} process(es); wall [CPU] seconds")
    print(f"  {'kind':16s} {'size':>7s} {'limit':>7s} {'first call':>14s} {'compiled':>14s}")
    for kind in kinds:
        for size in sizes:
            rows = {True: [], False: []} if compiled else {True: []}
            for _ in range(repeat):
                for interpret in rows:
                    rows[interpret].append(_medium_once(kind, size, interpret))
            cells = [
                f"{statistics.median(r['call'] for r in got):7.2f} "
                f"[{statistics.median(r['cpu'] for r in got):5.2f}]"
                for got in rows.values()
            ]
            print(
                f"  {kind:16s} {size:7d} {cpu.INTERPRET_MAX[kind]:7d} " + " ".join(cells),
                flush=True,
            )
    return 0
