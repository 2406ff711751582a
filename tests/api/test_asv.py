"""The asv suite stays runnable: every benchmark module is discovered the way
``asv run`` discovers it, and one quick benchmark of each family runs on a
tiny input (the real sizes are for ``asv run``, not for tests)."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from tests import support

ROOT = str(support.ROOT)
ASV = os.path.join(ROOT, "asv_bench")
BENCH = os.path.join(ASV, "benchmarks")
MODULES = sorted(f[:-3] for f in os.listdir(BENCH) if f.endswith(".py") and not f.startswith("_"))

DISCOVER = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from asv_runner.discovery import disc_benchmarks
print(json.dumps([b.name for b in disc_benchmarks(sys.argv[3])]))
"""


def _module(name):
    spec = importlib.util.spec_from_file_location(f"_asv_{name}", os.path.join(BENCH, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_discovery_finds_every_module():
    pytest.importorskip("asv_runner")
    out = subprocess.run(
        [sys.executable, "-c", DISCOVER, ROOT, ASV, BENCH],
        cwd=ASV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    names = json.loads(out.stdout.strip().splitlines()[-1])
    found = {n.split(".")[0] for n in names}
    assert found == set(MODULES), f"modules without benchmarks: {set(MODULES) - found}"
    assert all(n.split(".")[-1].startswith(("time_", "track_", "peakmem_")) for n in names)


def test_no_private_imports():
    """Benchmarks use the public API, so refactoring internals cannot break them."""
    for name in MODULES:
        with open(os.path.join(BENCH, f"{name}.py")) as f:
            text = f.read()
        for private in ("nx_gpumatch.cpu", "nx_gpumatch.gpu", "nx_gpumatch.algorithms", "._cache"):
            assert private not in text, f"asv_bench/benchmarks/{name}.py uses {private}"


def test_matching_quick():
    mod = _module("matching")
    graphs = {"tiny": mod._graph(200, 800)}
    for algorithm in mod.ApproximateMatching.params[1]:
        b = mod.ApproximateMatching()
        b.setup(graphs, "tiny", algorithm)
        b.time_matching(graphs, "tiny", algorithm)
        assert b.track_weight(graphs, "tiny", algorithm) > 0
    kinds = mod.MatchingGraphKinds
    graphs = {
        (k, w): mod._standin(k, w, 300, 1200) for k in kinds.params[0] for w in kinds.params[1]
    }
    for key in graphs:
        for algorithm in kinds.params[2]:
            b = kinds()
            b.setup(graphs, *key, algorithm)
            b.time_matching(graphs, *key, algorithm)
            assert b.track_weight(graphs, *key, algorithm) > 0
    p = mod.Preprocessing()
    p.setup("200/800")
    p.time_build_graph("200/800")
    p.time_edge_ranking("200/800")


def test_exact_matching_quick():
    mod = _module("exact_matching")
    b = mod.ExactMatching()
    b.setup(500, True, "integer")
    b.time_blossom(500, True, "integer")
    mod.NetworkxExactMatching().setup()


def test_b_matching_quick():
    mod = _module("b_matching")
    graphs = {"tiny": mod._graph(200, 800)}
    for algorithm in mod.BMatching.params[2]:
        b = mod.BMatching()
        b.setup(graphs, "tiny", 3, algorithm)
        b.time_b_matching(graphs, "tiny", 3, algorithm)
        assert b.track_weight(graphs, "tiny", 3, algorithm) > 0
    pytest.importorskip("networkit")
    nk = mod.NetworKitBSuitor()
    nk.setup("200/800", 3)
    nk.time_bsuitor("200/800", 3)


def test_stable_marriage_quick():
    mod = _module("stable_marriage")
    prefs = {"easy/300": mod._prepare("easy/300")}
    for engine in ("parallel", "sequential"):
        b = mod.StableMarriage()
        b.setup(prefs, "easy/300", "gale_shapley", engine)
        b.time_solve(prefs, "easy/300", "gale_shapley", engine)
        assert b.track_proposals_per_second(prefs, "easy/300", "gale_shapley", engine) > 0
    p = mod.Preparation()
    p.setup("easy/300")
    p.time_prepare("easy/300")
    p.time_is_stable("easy/300")
    v = mod.VersusMatchingPackage()
    v.setup(10)
    v.time_nx_gpumatch(10)


def test_louvain_quick():
    mod = _module("louvain")
    graphs = {"tiny": mod._graph(300, 1200)}
    b = mod.Louvain()
    b.setup(graphs, "tiny", 1)
    b.time_louvain(graphs, "tiny", 1)
    assert b.track_modularity(graphs, "tiny", 1) > 0
    pytest.importorskip("networkit")
    p = mod.NetworKitPLM()
    p.setup(graphs, "tiny", 1)
    p.time_plm(graphs, "tiny", 1)


def test_bipartite_quick():
    mod = _module("bipartite")
    graphs = {("random", 300): mod.bipartite_graph("random", 300, 0)}
    for algorithm in mod.BipartiteMatching.params[2]:
        b = mod.BipartiteMatching()
        b.setup(graphs, 300, "random", algorithm)
        b.time_matching(graphs, 300, "random", algorithm)
        assert b.track_cardinality(graphs, 300, "random", algorithm) > 0
    mod.ScipyMatching().time_scipy(graphs, 300, "random")
