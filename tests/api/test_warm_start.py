"""A fresh process with a warm Numba cache runs small calls compiled from the
first call: after ``warmup`` (compiled calls in an earlier process with the
same cache folder), no family interprets its kernels, and a small call takes
the time of a compiled call."""

import json
import os
import subprocess
import sys

import pytest

from tests.support import ROOT

CHILD = r"""
import json, sys, time
import networkx as nx, numpy as np, scipy.sparse as sp
import nx_gpumatch as gm
from nx_gpumatch import cpu

if sys.argv[1] == "warmup":
    gm.warmup(progress=False)
    sys.exit(0)

# every input is within its family's INTERPRET_MAX: a cold process interprets them all
G = nx.gnm_random_graph(300, 900, seed=4)
rng = np.random.default_rng(4)
for (u, v), w in zip(G.edges(), rng.random(900).tolist()):
    G[u][v]["weight"] = w
A = sp.random(40, 50, density=0.1, format="csr", random_state=4)
men = {f"m{i}": [f"w{j}" for j in rng.permutation(20)] for i in range(20)}
women = {f"w{i}": [f"m{j}" for j in rng.permutation(20)] for i in range(20)}
CASES = {
    "suitor": lambda: gm.max_weight_matching(G, algorithm="suitor", device="cpu"),
    "greedy": lambda: gm.max_weight_matching(G, algorithm="greedy", device="cpu"),
    "local_max": lambda: gm.max_weight_matching(G, algorithm="local_max", device="cpu"),
    "red_blue": lambda: gm.max_weight_matching(G, algorithm="red_blue", device="cpu", seed=1),
    "maximal": lambda: gm.maximal_matching(G, device="cpu"),
    "exact": lambda: gm.max_weight_matching(G),
    "exact_min": lambda: gm.min_weight_matching(G),
    "b_matching": lambda: gm.b_matching(G, 2, device="cpu"),
    "louvain": lambda: gm.louvain_communities(G, seed=1, device="cpu"),
    "leiden": lambda: gm.leiden_communities(G, seed=1, device="cpu"),
    "bipartite": lambda: gm.maximum_bipartite_matching(A, device="cpu"),
    "stable_marriage": lambda: gm.stable_marriage(men, women, device="cpu"),
}


def interpreted_seconds():
    return sum(v[1] for v in cpu._SPENT.values())


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


out = {}
for name, fn in CASES.items():
    before = interpreted_seconds()
    first = timed(fn)
    interpreted = interpreted_seconds() - before
    small, compiled = [], []
    for _ in range(15):  # alternating, and the fastest of each: load on the machine adds only
        small.append(timed(fn))
        with cpu.interpreted(False):
            compiled.append(timed(fn))
    out[name] = {
        "first": first,
        "interpreted": interpreted,
        "small": min(small),
        "compiled": min(compiled),
    }
print(json.dumps(out))
"""


@pytest.mark.slow
def test_small_calls_run_compiled_after_warmup(tmp_path):
    env = dict(
        os.environ,
        NUMBA_CACHE_DIR=str(tmp_path),
        NUMBA_NUM_THREADS="1",  # warmup then compiles the serial builds only
        NX_GPUMATCH_INTERPRET_SMALL="1",
    )

    def child(step):
        r = subprocess.run(
            [sys.executable, "-c", CHILD, step],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert r.returncode == 0, r.stderr[-3000:]
        return r.stdout

    child("warmup")
    rows = json.loads(child("calls").strip().splitlines()[-1])
    interpreted = {k: r["interpreted"] for k, r in rows.items() if r["interpreted"]}
    assert not interpreted, f"ran interpreted (seconds) after warmup: {interpreted}"
    slow = {
        k: (r["small"], r["compiled"])
        for k, r in rows.items()
        if r["small"] > 2 * r["compiled"] + 2e-4  # 0.2 ms: timer and scheduling noise
    }
    assert not slow, f"small calls slower than compiled ones (s): {slow}"


LOAD = r"""
import sys
import numpy as np
from nx_gpumatch import cpu
from nx_gpumatch.cpu import csr

values, idx = np.arange(5, dtype=np.int32), np.array([4, 0])
if sys.argv[1] == "compile":
    csr.gather_int32.serial(values, idx)
else:
    with cpu.interpreted(cached=True):  # as small calls run
        assert csr.gather_int32.serial(values, idx).tolist() == [4, 0]
        ran_source = cpu._INTERPRETING.get().interpreted
    # Numba sets its compiler up (importing its numpy implementations) only to
    # compile or load: a kernel in no cache runs interpreted without that cost
    print(ran_source, len(csr.gather_int32.serial.signatures), "numba.np.arraymath" in sys.modules)
"""


def test_a_kernel_in_the_disk_cache_loads_instead_of_running_interpreted(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))

    def child(step):
        r = subprocess.run(
            [sys.executable, "-c", LOAD, step], env=env, capture_output=True, text=True
        )
        assert r.returncode == 0, r.stderr[-3000:]
        return r.stdout.split()

    # empty cache: interpreted, nothing compiled, Numba's compiler not even set up
    assert child("check") == ["True", "0", "False"]
    child("compile")  # an earlier process compiles it into the cache
    assert child("check") == ["False", "1", "True"]  # loaded from the cache, not compiled
    assert child("check") == ["False", "1", "True"]


COPY_CHILD = r"""
import gc, json, sys
import numpy as np
import nx_gpumatch as gm
assert gm.__file__.startswith(sys.argv[1]), gm.__file__
rng = np.random.default_rng(1)
g = gm.Graph.from_arrays(rng.integers(0, 50, 300), rng.integers(0, 50, 300), rng.random(300))
gm.max_weight_matching(g, algorithm="suitor", device="cpu")
from nx_gpumatch.cpu._dispatch import Dispatcher
ds = [d for d in gc.get_objects() if isinstance(d, Dispatcher) and d.signatures]
print(json.dumps({"misses": sum(sum(d.stats.cache_misses.values()) for d in ds),
                  "hits": sum(sum(d.stats.cache_hits.values()) for d in ds)}))
"""


def test_kernels_cached_by_one_environment_load_in_another(tmp_path):
    """Two copies of the package at different paths (a reinstall, or a second
    environment): what the first compiles, the second loads from the user's
    cache folder instead of compiling again. A third copy that differs in one
    file the kernels do not live in compiles anew (compiled code holds helpers
    and constants of other files)."""
    import shutil

    src = str(ROOT / "nx_gpumatch")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(NX_GPUMATCH_CACHE_DIR=str(tmp_path / "cache"), NX_GPUMATCH_INTERPRET_SMALL="0")
    runs = []
    for name in ("env1", "env2", "env3"):
        root = tmp_path / name
        shutil.copytree(src, root / "nx_gpumatch", ignore=shutil.ignore_patterns("__pycache__"))
        if name == "env3":
            with open(root / "nx_gpumatch" / "cpu" / "atomics.py", "a") as f:
                f.write("\n# edited\n")
        out = subprocess.run(
            [sys.executable, "-c", COPY_CHILD, str(root)],
            env=dict(env, PYTHONPATH=str(root)),
            cwd=root,  # "-c" puts the current folder first on the path
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert runs[0]["misses"] > 0
    assert runs[1]["misses"] == 0 and runs[1]["hits"] > 0
    assert runs[2]["misses"] == runs[0]["misses"] and runs[2]["hits"] == 0
    pycache = [tmp_path / n / "nx_gpumatch" / "cpu" / "__pycache__" for n in ("env1", "env2")]
    assert not any(any(p.glob("*.nbi")) for p in pycache)
