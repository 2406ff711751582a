"""First use: a light import, the warmup function and command, the serial and
parallel builds of a kernel, and the cold-start benchmark."""

import json
import os
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest

import nx_gpumatch
from nx_gpumatch import cpu
from nx_gpumatch.cli import main
from nx_gpumatch.warmup import FAMILIES


def test_import_is_light():
    code = (
        "import sys, nx_gpumatch; "
        "print(sorted(m for m in ('numba', 'cupy', 'pandas', 'scipy', 'tqdm') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_warmup_all_families():
    times = nx_gpumatch.warmup(progress=False)
    # every family the package has ran; look-ups by name skip the others
    for name in ("suitor", "local_max", "greedy", "red_blue", "exact", "b_matching"):
        assert name in times and times[name] >= 0
    assert ("louvain" in times) == hasattr(nx_gpumatch, "louvain_communities")
    assert ("leiden" in times) == hasattr(nx_gpumatch, "leiden_communities")
    assert set(times) <= set(FAMILIES)


def test_warmup_compiles_the_cpu_kernels_whatever_the_device_setting():
    # each family runs on the CPU: "gpu" in the config refused some, or would
    # have compiled device kernels instead where a GPU is present
    cfg = nx.config.backends.gpumatch
    with cfg(device="gpu"):
        times = nx_gpumatch.warmup(["exact", "leiden", "bipartite"], progress=False)
    assert set(times) == {"exact", "leiden", "bipartite"} & set(FAMILIES)


def test_warmup_as_a_module():
    out = subprocess.run(
        [sys.executable, "-m", "nx_gpumatch.warmup", "suitor", "--no-progress"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and "suitor" in out.stdout, out.stderr


def test_warmup_unknown_family():
    with pytest.raises(ValueError, match="unknown families"):
        nx_gpumatch.warmup(["suitor", "quantum"], progress=False)


def test_warmup_command(capsys):
    assert main(["warmup", "suitor", "stable_marriage", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "suitor" in out and "stable_marriage" in out and "total" in out
    assert main(["warmup", "quantum", "--no-progress"]) == 2
    assert "unknown family 'quantum'" in capsys.readouterr().err


MEMORY_CHILD = r"""
import resource, sys
limit = 2 << 30  # address space: numba's threads and compiler fit; a dense draw does not
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from nx_gpumatch.warmup import FAMILIES
assert FAMILIES["bipartite"](True)  # warmup's threaded step: input built and matched
# VmHWM is this process image's own peak; ru_maxrss would also count the
# parent (the test runner) as it was when it forked this child
print(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
"""


def test_warmup_bipartite_input_is_built_in_small_memory():
    # scipy's sp.random(40_000, 40_000, random_state=1) drew from all 1.6e9
    # positions (12.8 GB): the machine's OOM killer ended warmup
    env = dict(os.environ, NUMBA_NUM_THREADS="2")
    out = subprocess.run(
        [sys.executable, "-c", MEMORY_CHILD], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.split()[-1]) < 1 << 20  # peak resident set under 1 GB (in kB)


def test_warmup_says_how_long_it_takes(capsys):
    from nx_gpumatch.warmup import COLD_SECONDS, estimate

    assert set(COLD_SECONDS) == set(FAMILIES)
    assert (
        estimate(["suitor", "exact"], threads=2) == COLD_SECONDS["suitor"] + COLD_SECONDS["exact"]
    )
    assert estimate(["suitor"], threads=1) < estimate(["suitor"], threads=2)
    nx_gpumatch.warmup(["suitor"], progress=True)
    err = capsys.readouterr().err
    assert "compiling 1 kernel family; about" in err
    assert err.index("about") < err.index("compiling:")  # before the progress bar
    assert main(["warmup", "suitor", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("warmup: compiling 1 kernel family; about") and "total" in out


@pytest.mark.parametrize("size", [0, 1, 100_000])
def test_kernel_builds_agree(size):
    from nx_gpumatch.cpu import csr

    rng = np.random.default_rng(size)
    values = rng.integers(0, 1000, size).astype(np.int32)
    idx = rng.integers(0, max(size, 1), size)
    want = values[idx] if size else np.empty(0, np.int32)
    assert np.array_equal(csr.gather_int32.serial(values, idx), want)
    assert np.array_equal(csr.gather_int32.parallel(values, idx), want)
    assert np.array_equal(csr.gather_int32(values, idx), want)
    # two builds, two cache entries: the names differ
    assert csr.gather_int32.serial.py_func.__qualname__ != (
        csr.gather_int32.parallel.py_func.__qualname__
    )


def test_kernel_picks_build_by_size():
    from nx_gpumatch.cpu import csr

    k = csr.gather_int32
    with cpu.threads(2) as t:
        if t < 2:
            pytest.skip("needs 2 Numba threads")
        with cpu.parallel_min(1000):
            assert k.sized(999) is k.serial
            assert k.sized(1000) is k.parallel
    with cpu.threads(1):
        assert k.sized(10**9) is k.serial


def test_cold_start_benchmark_measures_a_fresh_process(tmp_path):
    from nx_gpumatch.benchmark import cold_start

    first, compiled = tmp_path / "first", tmp_path / "compiled"
    r = cold_start.measure("suitor", str(first))
    assert r["ran"] == ["suitor"] and r["call"] > 0 and r["import"] > 0
    assert r["numba_on_import"] is False
    assert not any(first.rglob("*.nbi"))  # a small first call is interpreted
    r = cold_start.measure("suitor", str(compiled), interpret=False)
    assert r["ran"] == ["suitor"] and any(compiled.rglob("*.nbi"))  # compiled into the cache
    out = tmp_path / "cold.json"
    assert cold_start.main(["--families", "suitor", "--no-all", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    row = data["families"]["suitor"]
    assert set(data["families"]) == {"suitor"} and row["cold"] > 0 and row["compile"] > 0


def test_cold_start_goals_name_what_is_over(capsys):
    from nx_gpumatch.benchmark import cold_start

    fam = {"cold": 7.5, "cold_cpu": 6.0, "warm": 0.5}
    ok = {"cold": 1.0, "cold_cpu": 0.9, "warm": 0.4}
    cold_start._goals(
        {"families": {"exact": fam, "suitor": ok}, "all": {"cold": 25.0, "cold_cpu": 19.0}}
    )
    out = capsys.readouterr().out
    assert "exact cold" in out and "+  2.50 wall" in out and "+  1.00 CPU" in out
    assert "all cold" in out and "suitor" not in out and "warm" not in out
    cold_start._goals({"families": {"suitor": ok}})
    assert "goals met" in capsys.readouterr().out
    slow = dict(ok, compile=9.0, compile_cpu=8.5)
    cold_start._goals({"families": {"bipartite": slow, "suitor": ok}})
    out = capsys.readouterr().out
    assert "goals met" in out and "first LARGE call" in out and "bipartite 8.5" in out


def test_warmup_compiles_where_small_calls_would_interpret():
    from nx_gpumatch.config import get_config
    from nx_gpumatch.cpu import matching as cm

    spent = {k: v[1] for k, v in cpu._SPENT.items()}
    with get_config()(interpret_small=True):
        nx_gpumatch.warmup(["suitor"], progress=False)
    assert {k: v[1] for k, v in cpu._SPENT.items()} == spent  # nothing ran interpreted
    assert cm._suitor_run.serial.signatures  # the serial build is compiled (or loaded)


def test_kernels_run_without_a_writable_cache_folder():
    # a read-only install and home: numba finds no cache folder; calls compile
    # (with one warning) instead of each raising "cannot cache function"
    code = (
        "import warnings\n"
        "from numba.core import caching\n"
        "impl = getattr(caching, 'CacheImpl', None) or caching._CacheImpl\n"
        "impl._locator_classes = []\n"
        "import networkx as nx, nx_gpumatch as gm\n"
        "with warnings.catch_warnings(record=True) as rec:\n"
        "    warnings.simplefilter('always')\n"
        "    G = nx.gnm_random_graph(3000, 6000, seed=1)\n"
        "    M = gm.max_weight_matching(G, algorithm='suitor', device='cpu')\n"
        "print(len(M) > 0, sum('NUMBA_CACHE_DIR' in str(r.message) for r in rec))\n"
    )
    env = dict(
        os.environ, NX_GPUMATCH_CACHE_DIR="/proc/no-cache-here", NX_GPUMATCH_INTERPRET_SMALL="0"
    )
    env.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.split() == ["True", "1"], out.stderr[-2000:]


WARM_THEN_LARGE = r"""
import sys
import nx_gpumatch as gm
from nx_gpumatch import cpu
from nx_gpumatch.generators import random_graph
step, load = sys.argv[1:]
if step == "warmup":
    if load == "busy":  # every other core taken while warmup runs
        cpu.free_cores = lambda: 1
    gm.warmup(["suitor", "louvain"], progress=False)
else:
    # A count left open follows the load; on a busy machine, name both.
    counts = [None] if load == "quiet" else [2, 1]
    g = random_graph(60_000, 400_000, seed=2)
    for k in counts:
        gm.max_weight_matching(g, algorithm="suitor", threads=k)
        gm.louvain_communities(g, seed=3, threads=k)
"""


@pytest.mark.parametrize("load", ["quiet", "busy"])
def test_warmup_compiles_what_a_large_call_uses(tmp_path, load):
    """After warmup, a large call in a new process (threads, batched sweeps)
    loads every kernel from the cache and compiles none, also when warmup ran
    while the other cores were busy (it names its thread counts)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NUMBA_NUM_THREADS="2")
    for step in ("warmup", "large"):
        before = {p.name for p in tmp_path.rglob("*") if p.is_file()}
        subprocess.run(
            [sys.executable, "-c", WARM_THEN_LARGE, step, load], env=env, check=True, timeout=600
        )
    new = {p.name for p in tmp_path.rglob("*") if p.is_file()} - before
    assert not new, f"compiled after warmup: {sorted(new)}"
