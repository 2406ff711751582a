"""GPU self-check: ``python -m nx_gpumatch.selfcheck [--out report.json]``.

On a machine with a CUDA device it
  1. runs every ``gpu``-marked test ``--repeat`` times (10),
  2. runs each kernel family on small inputs under ``compute-sanitizer``
     (memcheck, racecheck, synccheck, initcheck),
  3. stress-tests each family on an R-MAT graph of scale ``--scale`` (22)
     against the CPU engine (exact equality where the package promises it,
     modularity within 1% for Louvain),
  4. times each family against the CPU engine, and against cuGraph where it
     has the algorithm (Louvain, Leiden),
and writes everything to one JSON report. The exit status is 1 if a check
failed. Without a usable GPU it says why, checks that it would run (imports,
every kernel file compiled through NVRTC with the defines the engine uses)
and exits 0 (1 if that check fails).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from nx_gpumatch.algorithms.b_matching import b_matching_edges
from nx_gpumatch.algorithms.matching import mate_array
from nx_gpumatch.community.quality import modularity

__all__ = ["main"]

FAMILIES = ("matching", "b_matching", "stable_marriage", "bipartite", "louvain")
# initcheck: a kernel that reads device memory nobody wrote (an empty() buffer)
SANITIZER_TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
GPU_MODULES = (
    "graph",
    "interop",
    "matching",
    "b_matching",
    "bipartite",
    "stable_marriage",
    "louvain",
    "leiden",
)


def _log(msg):
    print(msg, flush=True)


def _versions():
    out = {"python": platform.python_version(), "platform": platform.platform()}
    for name in ("numpy", "numba", "networkx", "cupy", "cugraph", "cudf"):
        try:
            out[name] = importlib.import_module(name).__version__
        except Exception:
            out[name] = None
    return out


# ------------------------------------------------------------------ build
def check_build(arch=None):
    """Import every GPU module and compile every ``kernels/*.cu`` through NVRTC
    (for ``arch``, default the newest target NVRTC supports without a
    deprecation warning). Returns a report dict with ``ok``."""
    from nx_gpumatch.gpu._launch import architectures, nvrtc_options
    from nx_gpumatch.gpu._source import kernel_files, parse_kernels

    rep = {"imports": {}, "nvrtc": {}, "ok": True}
    for name in GPU_MODULES:
        try:
            importlib.import_module(f"nx_gpumatch.gpu.{name}")
            rep["imports"][name] = "ok"
        except Exception as exc:
            rep["imports"][name] = f"{type(exc).__name__}: {exc}"
            rep["ok"] = False
    try:
        from cupy_backends.cuda.libs import nvrtc

        version = nvrtc.getVersion()
    except Exception as exc:
        rep["nvrtc"] = {"error": f"NVRTC is not available ({type(exc).__name__}: {exc})"}
        rep["ok"] = False
        return rep
    arch = arch or architectures(version)[-1]
    rep["nvrtc_version"] = list(version)
    rep["arch"] = arch
    for path in kernel_files():
        src = path.read_text()
        entry = {"kernels": sorted(parse_kernels(src))}
        prog = nvrtc.createProgram(src, path.name, [], [])
        try:
            nvrtc.compileProgram(prog, [f"--gpu-architecture={arch}", *nvrtc_options(path.stem)])
            entry["ok"] = True
        except nvrtc.NVRTCError as exc:
            entry["ok"] = False
            entry["error"] = str(exc)
            rep["ok"] = False
        log = nvrtc.getProgramLog(prog).strip()
        if log:
            entry["log"] = log
        nvrtc.destroyProgram(prog)
        rep["nvrtc"][path.name] = entry
    return rep


# ------------------------------------------------------------------ helpers
def _timed(fn, repeat):
    """(result of the first call, median seconds of ``repeat`` calls after it;
    None for repeat=0)."""
    result = fn()  # warm-up: compiles, uploads, caches
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return result, statistics.median(times) if times else None


def _ratio(a, b):
    return a / b if a is not None and b else None


def _secs(t):
    return "-" if t is None else f"{t:.3f}s"


def connected_communities(graph, labels):
    """Does every community of ``labels`` induce a connected subgraph?"""
    from nx_gpumatch.community.levels import connected_parts

    labels = np.asarray(labels)
    parts = connected_parts(graph.indptr, graph.indices, labels)
    return np.unique(parts).shape[0] == np.unique(labels).shape[0]


def _cugraph_graph(graph):
    import cudf
    import cugraph

    df = cudf.DataFrame(
        {"src": graph.edge_src, "dst": graph.edge_dst, "w": graph.edge_weight.astype(np.float32)}
    )
    G = cugraph.Graph(directed=False)
    G.from_cudf_edgelist(df, source="src", destination="dst", edge_attr="w", renumber=True)
    return G


# ------------------------------------------------------------------ families
def run_family(family, graph, *, repeat=3, check=True):
    """Run one family on the GPU and the CPU engine: a dict with the checks
    (``ok``), the median times and the ratios."""
    rep = {"n": graph.num_nodes, "m": graph.num_edges, "cases": {}}
    ok = True

    def case(name, gpu_fn, cpu_fn, same):
        nonlocal ok
        got, t_gpu = _timed(gpu_fn, repeat)
        want, t_cpu = _timed(cpu_fn, repeat)
        good = bool(same(got, want)) if check else None
        ok = ok and good is not False
        rep["cases"][name] = {
            "ok": good,
            "gpu_s": t_gpu,
            "cpu_s": t_cpu,
            "gpu_over_cpu": _ratio(t_gpu, t_cpu),
        }
        _log(f"  {family}/{name}: ok={good} gpu {_secs(t_gpu)} cpu {_secs(t_cpu)}")
        return got

    if family == "matching":
        for alg in ("suitor", "local_max", "red_blue"):
            kw = {"seed": 7} if alg == "red_blue" else {}
            case(
                alg,
                lambda alg=alg, kw=kw: mate_array(graph, alg, device="gpu", **kw),
                lambda alg=alg, kw=kw: mate_array(graph, alg, device="cpu", **kw),
                np.array_equal,
            )
    elif family == "b_matching":
        for b in (1, 3, 10):
            bv = np.full(graph.num_nodes, b, np.int64)
            case(
                f"b={b}",
                lambda bv=bv: b_matching_edges(graph, bv, "b_suitor", device="gpu"),
                lambda bv=bv: b_matching_edges(graph, bv, "b_suitor", device="cpu"),
                np.array_equal,
            )
    elif family == "stable_marriage":
        import nx_gpumatch
        from nx_gpumatch.algorithms import stable_marriage as sm

        for kind, n in (("easy", graph.num_nodes), ("hard", min(3000, graph.num_nodes))):
            prefs = sm.prepare_preferences(*nx_gpumatch.stable_marriage_instance(kind, n, seed=1))
            case(
                f"{kind}-{n}",
                lambda prefs=prefs: sm.solve(prefs, engine="gpu"),
                lambda prefs=prefs: sm.solve(prefs, engine="parallel"),
                lambda a, b: np.array_equal(a[0], b[0]) and a[1] == b[1],
            )
    elif family == "bipartite":
        from nx_gpumatch.algorithms.bipartite.matching import Biadjacency, solve

        # the graph's rows as a biadjacency (n x n): every edge twice, a
        # symmetric bipartite instance with the graph's degree skew
        bi = Biadjacency(graph.num_nodes, graph.num_nodes, graph.indptr, graph.indices)
        for alg in ("apfb", "apsb"):
            case(
                alg,
                lambda alg=alg: solve(bi, algorithm=alg, device="gpu"),
                lambda alg=alg: solve(bi, algorithm=alg, device="cpu"),
                # matchings may differ (races pick the trees); sizes may not
                lambda a, b: np.count_nonzero(a[0] >= 0) == np.count_nonzero(b[0] >= 0),
            )
    elif family == "louvain":
        from nx_gpumatch.algorithms.community.louvain import louvain_communities

        labels = case(
            "louvain",
            lambda: louvain_communities(graph, seed=1, device="gpu"),
            lambda: louvain_communities(graph, seed=1, device="cpu"),
            # quality, not identical partitions: within 1% of the CPU engine's
            lambda a, b: modularity(graph, a) >= 0.99 * modularity(graph, b),
        )
        rep["cases"]["louvain"]["modularity_gpu"] = modularity(graph, labels)
        _cugraph_cases(graph, rep, repeat)
        leiden = getattr(importlib.import_module("nx_gpumatch"), "leiden_communities", None)
        if leiden is not None:
            case(
                "leiden",
                lambda: leiden(graph, seed=1, device="gpu"),
                lambda: leiden(graph, seed=1, device="cpu"),
                # and every community connected (the method's guarantee)
                lambda a, b: (
                    modularity(graph, a) >= 0.99 * modularity(graph, b)
                    and connected_communities(graph, a)
                ),
            )
            _cugraph_cases(graph, rep, repeat, algorithms=("leiden",))
    else:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    rep["ok"] = ok
    return rep


def _cugraph_cases(graph, rep, repeat, algorithms=("louvain",)):
    """cuGraph's time and modularity for the same graph, if cuGraph is here."""
    try:
        import cugraph
    except Exception as exc:
        rep["cugraph"] = f"not available ({type(exc).__name__}: {exc})"
        return
    G = _cugraph_graph(graph)
    for alg in algorithms:
        fn = getattr(cugraph, alg)
        (parts, q), t = _timed(lambda fn=fn: fn(G), repeat)
        ours = rep["cases"].get(alg, {})
        rep["cases"][f"cugraph_{alg}"] = {
            "cugraph_s": t,
            "cugraph_modularity": float(q),
            "gpu_over_cugraph": _ratio(ours.get("gpu_s"), t),
        }
        _log(f"  cugraph {alg}: {_secs(t)} modularity {float(q):.4f}")


def small_workload():
    """Every family once on small inputs on the device (what compute-sanitizer
    watches); raises if a result differs from the CPU engine."""
    from nx_gpumatch import generators as gen

    g = gen.rmat(12, 8, kind="g500", seed=5)
    for family in FAMILIES:
        rep = run_family(family, g, repeat=0)
        if not rep["ok"]:
            raise RuntimeError(f"{family} differs from the CPU engine: {rep}")


# ------------------------------------------------------------------ steps
def _tests_dir():
    from nx_gpumatch.gpu._source import kernels_dir

    d = kernels_dir().parent / "tests"
    return d if (d / "conftest.py").is_file() else None


def step_tests(repeat):
    d = _tests_dir()
    if d is None:
        return {
            "ok": None,
            "skipped": "the test suite is not next to the package (installed wheel)",
        }
    runs = []
    for i in range(repeat):
        t = time.perf_counter()
        res = subprocess.run(
            [sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider", str(d)],
            capture_output=True,
            text=True,
            cwd=d.parent,
        )
        tail = res.stdout.strip().splitlines()[-1:] or [""]
        runs.append({"rc": res.returncode, "summary": tail[0], "s": time.perf_counter() - t})
        _log(f"  gpu tests run {i + 1}/{repeat}: rc={res.returncode} {tail[0]}")
    return {"ok": all(r["rc"] == 0 for r in runs), "runs": runs}


def _sanitizer():
    exe = shutil.which("compute-sanitizer")
    if exe:
        return exe
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and (Path(root) / "bin" / "compute-sanitizer").is_file():
            return str(Path(root) / "bin" / "compute-sanitizer")
    return None


def sanitizer_commands(exe):
    """[(tool, argv)]: one compute-sanitizer run of the small workload (every
    family of FAMILIES) per tool of SANITIZER_TOOLS."""
    out = []
    for tool in SANITIZER_TOOLS:
        cmd = [exe, "--tool", tool, "--error-exitcode", "99"]
        cmd += [sys.executable, "-m", "nx_gpumatch.selfcheck", "--small-workload"]
        out.append((tool, cmd))
    return out


def step_sanitizer():
    exe = _sanitizer()
    if exe is None:
        return {
            "ok": False,
            "error": "compute-sanitizer not found (PATH, CUDA_HOME, /usr/local/cuda)",
        }
    rep = {"ok": True, "tools": {}}
    for tool, cmd in sanitizer_commands(exe):
        t = time.perf_counter()
        res = subprocess.run(cmd, capture_output=True, text=True)
        summary = re.findall(r"ERROR SUMMARY: .*", res.stdout + res.stderr)
        good = res.returncode == 0
        rep["tools"][tool] = {
            "ok": good,
            "rc": res.returncode,
            "summary": summary[-1] if summary else None,
            "s": time.perf_counter() - t,
        }
        if not good:
            rep["tools"][tool]["output_tail"] = (res.stdout + res.stderr)[-4000:]
            rep["ok"] = False
        _log(f"  compute-sanitizer {tool}: rc={res.returncode} {summary[-1] if summary else ''}")
    return rep


def step_stress(scale, edge_factor, repeat):
    from nx_gpumatch import generators as gen

    t = time.perf_counter()
    g = gen.rmat(scale, edge_factor, kind="g500", seed=22)
    rep = {"graph": f"R-MAT g500 scale {scale}, edge factor {edge_factor}"}
    rep["generate_s"] = time.perf_counter() - t
    _log(f"  {rep['graph']}: n={g.num_nodes} m={g.num_edges}")
    ok = True
    for family in FAMILIES:
        try:
            rep[family] = run_family(family, g, repeat=repeat)
        except Exception as exc:  # one family failing must not hide the others
            rep[family] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            _log(f"  {family}: {type(exc).__name__}: {exc}")
        ok = ok and rep[family]["ok"] is not False
    rep["ok"] = ok
    return rep


def _device_info():
    import cupy

    dev = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"]
    return {
        "name": name.decode() if isinstance(name, bytes) else name,
        "compute_capability": dev.compute_capability,
        "memory_bytes": int(props["totalGlobalMem"]),
        "driver": cupy.cuda.runtime.driverGetVersion(),
        "runtime": cupy.cuda.runtime.runtimeGetVersion(),
    }


# ------------------------------------------------------------------ main
def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m nx_gpumatch.selfcheck", description=__doc__.split("\n")[0]
    )
    p.add_argument("--out", default="gpu-selfcheck.json", help="JSON report (default: %(default)s)")
    p.add_argument("--repeat", type=int, default=10, help="runs of the gpu-marked tests")
    p.add_argument("--scale", type=int, default=22, help="R-MAT scale of the stress graph")
    p.add_argument("--edge-factor", type=int, default=8, help="R-MAT edges per vertex")
    p.add_argument("--timing-repeat", type=int, default=3, help="timed runs per case (median)")
    p.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=("tests", "sanitizer", "stress"),
        help="leave a step out (repeatable)",
    )
    p.add_argument("--small-workload", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.small_workload:  # the process compute-sanitizer runs
        small_workload()
        return 0
    if args.repeat < 0 or args.scale < 1 or args.edge_factor < 1 or args.timing_repeat < 1:
        p.error("--repeat must be >= 0; --scale, --edge-factor and --timing-repeat >= 1")

    from nx_gpumatch import gpu

    report = {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "versions": _versions()}
    reason = gpu.unavailable_reason()
    if reason is not None:
        _log(f"No GPU: {reason}.")
        _log("Checking that the self-check would run (imports, NVRTC compiles) ...")
        report["gpu"] = {"available": False, "reason": reason}
        report["build"] = check_build()
        report["ok"] = report["build"]["ok"]
        for name, entry in report["build"]["nvrtc"].items():
            _log(f"  {name}: {'compiles' if entry.get('ok') else entry}")
        _write(args.out, report)
        _log(f"{'ok' if report['ok'] else 'FAILED'}: nothing ran on a GPU; report in {args.out}")
        return 0 if report["ok"] else 1

    report["gpu"] = {"available": True, **_device_info()}
    _log(f"GPU: {report['gpu']['name']} (compute capability {report['gpu']['compute_capability']})")
    cc = report["gpu"]["compute_capability"]
    report["build"] = check_build(arch=f"sm_{cc}")
    steps = [
        ("tests", lambda: step_tests(args.repeat)),
        ("sanitizer", step_sanitizer),
        ("stress", lambda: step_stress(args.scale, args.edge_factor, args.timing_repeat)),
    ]
    ok = report["build"]["ok"]
    for name, fn in steps:
        if name in args.skip:
            report[name] = {"ok": None, "skipped": "--skip"}
            continue
        _log(f"{name} ...")
        try:
            report[name] = fn()
        except Exception as exc:
            report[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        ok = ok and report[name]["ok"] is not False
        _write(args.out, report)  # partial results survive a crash later on
    report["ok"] = ok
    _write(args.out, report)
    _log(f"{'ok' if ok else 'FAILED'}; report in {args.out}")
    return 0 if ok else 1


def _write(path, report):
    Path(path).write_text(json.dumps(report, indent=2, default=str) + "\n")


if __name__ == "__main__":
    sys.exit(main())
