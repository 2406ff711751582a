"""The GPU engine.

Tests marked ``gpu`` run the real kernels on a CUDA device and compare them with
the CPU engine on graphs up to 10**7 edges; without a device they are skipped
with the reason (see conftest). The rest runs anywhere: device selection, the
lazy CuPy import, and RAPIDS inputs (stand-ins built on NumPy/pandas).
"""

import ast
import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import nx_gpumatch
from nx_gpumatch import generators as gen
from nx_gpumatch import gpu
from nx_gpumatch._validation import seed_key
from nx_gpumatch.algorithms._convert import to_graph
from nx_gpumatch.algorithms.matching import mate_array
from nx_gpumatch.config import get_config
from nx_gpumatch.graph import Graph

# ------------------------------------------------------------ no GPU needed


def test_import_does_not_import_cupy():
    code = (
        "import sys, networkx as nx, nx_gpumatch\n"
        "nx_gpumatch.max_weight_matching(nx.path_graph(5), algorithm='suitor', device='auto')\n"
        "assert 'cupy' not in sys.modules, 'cupy imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.skipif(gpu.available(), reason="a usable GPU is present")
def test_device_gpu_without_a_gpu_raises_clearly():
    G = nx.path_graph(4)
    with pytest.raises(
        RuntimeError, match=r"device='gpu' was requested but no GPU can be used: .+"
    ):
        nx_gpumatch.max_weight_matching(G, algorithm="suitor", device="gpu")
    cfg = get_config()
    old = cfg.device
    cfg.device = "gpu"
    try:
        with pytest.raises(RuntimeError, match="no GPU can be used"):
            nx_gpumatch.max_weight_matching(G, algorithm="suitor")
    finally:
        cfg.device = old


@pytest.mark.skipif(gpu.available(), reason="a usable GPU is present")
def test_device_auto_runs_on_the_cpu_without_a_gpu():
    G = gen.random_graph(200, 800, seed=3).to_networkx()
    cfg = get_config()
    old = cfg.gpu_min_edges
    cfg.gpu_min_edges = 0  # large enough for the GPU, if there were one
    try:
        auto = nx_gpumatch.max_weight_matching(G, algorithm="suitor", device="auto")
    finally:
        cfg.gpu_min_edges = old
    assert auto == nx_gpumatch.max_weight_matching(G, algorithm="suitor", device="cpu")


ROOT = Path(nx_gpumatch.__file__).resolve().parents[1]


@pytest.mark.skipif(gpu.available(), reason="a usable GPU is present")
def test_selfcheck_without_a_gpu(tmp_path):
    """The self-check says there is no GPU, still imports everything and
    compiles every kernel file through NVRTC, and exits 0."""
    pytest.importorskip("cupy_backends.cuda.libs.nvrtc")
    out = tmp_path / "report.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    res = subprocess.run(
        [sys.executable, "-m", "nx_gpumatch.selfcheck", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "No GPU" in res.stdout
    report = json.loads(out.read_text())
    assert report["gpu"]["available"] is False and report["gpu"]["reason"]
    assert report["ok"] is True
    assert set(report["build"]["imports"].values()) == {"ok"}
    from nx_gpumatch.gpu._source import kernel_files

    compiled = report["build"]["nvrtc"]
    assert sorted(compiled) == sorted(p.name for p in kernel_files())
    assert all(entry["ok"] for entry in compiled.values())


def test_selfcheck_rejects_bad_arguments():
    from nx_gpumatch import selfcheck

    with pytest.raises(SystemExit):
        selfcheck.main(["--scale", "0"])


def test_selfcheck_sanitizes_every_kernel_file_with_every_tool(monkeypatch):
    """The planned compute-sanitizer runs: memcheck, racecheck, synccheck and
    initcheck, each over a workload that launches every kernel file (leiden.cu
    inside the Louvain family)."""
    from nx_gpumatch import selfcheck
    from nx_gpumatch.gpu._source import kernel_files

    plan = selfcheck.sanitizer_commands("/cuda/bin/compute-sanitizer")
    assert [tool for tool, _ in plan] == ["memcheck", "racecheck", "synccheck", "initcheck"]
    for tool, argv in plan:
        assert argv[:3] == ["/cuda/bin/compute-sanitizer", "--tool", tool]
        assert argv[-3:] == ["-m", "nx_gpumatch.selfcheck", "--small-workload"]
    seen = []
    monkeypatch.setattr(
        selfcheck, "run_family", lambda family, graph, **kw: seen.append(family) or {"ok": True}
    )
    selfcheck.small_workload()
    assert {p.stem for p in kernel_files()} - {"leiden"} <= set(seen)
    assert "louvain" in seen


def test_cupy_code_changes_with_the_included_headers(tmp_path, monkeypatch):
    """CuPy caches compiled modules on disk by their code text: the text handed
    to RawModule must change when common.cuh does (else an edited header, or a
    new package version, would reuse the old cubins), and only then."""
    from nx_gpumatch.gpu import _launch, _source

    kdir = tmp_path / "kernels"
    shutil.copytree(_source.kernels_dir(), kdir)
    monkeypatch.setattr(_source, "kernels_dir", lambda: kdir)
    monkeypatch.setattr(_launch, "kernels_dir", lambda: kdir)
    codes = []

    def raw_module(code, options, backend):
        codes.append(code)

    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(RawModule=raw_module))

    def code():
        _launch._CupyModule("b_matching", _source.problem_defines("b_matching"))
        return codes[-1]

    before = code()
    # the file's own text comes first, so compiler messages keep their line numbers
    assert before.startswith((kdir / "b_matching.cu").read_text())
    (kdir / "cuda_emu.h").write_text((kdir / "cuda_emu.h").read_text() + "// not included\n")
    assert code() == before
    common = kdir / "common.cuh"
    common.write_text(common.read_text().replace("#define NO_RANK 0x7FFFFFFF", "#define NO_RANK 7"))
    assert code() != before


def _imports(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_gpu_package_layering():
    """gpu/ is below the algorithms layer: it never reads the settings (the
    engine choice is made above it), and the launcher imports the emulation,
    never the other way round."""
    gpu_dir = ROOT / "nx_gpumatch" / "gpu"
    for path in sorted(gpu_dir.glob("*.py")):
        assert "nx_gpumatch.config" not in _imports(path), f"{path.name} imports the settings"
    assert "nx_gpumatch.gpu._launch" not in _imports(gpu_dir / "_emulate.py")
    assert "nx_gpumatch.gpu._emulate" not in _imports(gpu_dir / "_source.py")


# Stand-ins for RAPIDS objects: same attributes and module names, NumPy inside.
class FakeCudaGraph:
    """nx-cugraph's undirected layout: every edge stored both ways, a self-loop
    once (a MultiGraph's parallel edges side by side)."""

    def __init__(self, G, weight="weight"):
        nodes = list(G)
        index = {v: i for i, v in enumerate(nodes)}
        src, dst, w, has = [], [], [], []
        for u, v, d in G.edges(data=True):
            for a, b in ((u, v), (v, u)) if u != v else ((u, v),):
                src.append(index[a])
                dst.append(index[b])
                w.append(d.get(weight, 0.0))
                has.append(weight in d)
        self.src_indices = np.array(src, np.int32)
        self.dst_indices = np.array(dst, np.int32)
        self.edge_values = {weight: np.array(w, np.float32)}
        self.edge_masks = {weight: np.array(has, bool)}
        self.id_to_key = nodes
        self._N = len(nodes)

    def __len__(self):
        return self._N

    def is_directed(self):
        return False

    def is_multigraph(self):
        return False


FakeCudaGraph.__module__ = "nx_cugraph.classes.graph"


class FakeCudaMultiGraph(FakeCudaGraph):
    def is_multigraph(self):
        return True


FakeCudaMultiGraph.__module__ = "nx_cugraph.classes.multigraph"


class FakeCudfFrame:
    def __init__(self, df):
        self._df = df
        self.columns = df.columns

    def to_pandas(self):
        return self._df


FakeCudfFrame.__module__ = "cudf.core.dataframe"


class FakeCugraph:
    def __init__(self, df, directed=False):
        self._df = df
        self.source_columns = "src"
        self.destination_columns = "dst"
        self.weight_column = "wgt"
        self._directed = directed

    def is_directed(self):
        return self._directed

    def is_weighted(self):
        return True

    def view_edge_list(self):
        return FakeCudfFrame(self._df)


FakeCugraph.__module__ = "cugraph.structure.graph_classes"


def _graph_equal(a, b):
    assert a.num_nodes == b.num_nodes and a.labels() == b.labels()
    np.testing.assert_array_equal(a.edge_src, b.edge_src)
    np.testing.assert_array_equal(a.edge_dst, b.edge_dst)
    np.testing.assert_allclose(a.edge_weight, b.edge_weight)


def test_nx_cugraph_input(nthreads):
    G = nx.relabel_nodes(gen.rmat(7, 6, seed=9, weights="integer").to_networkx(), lambda v: f"v{v}")
    for k, (u, v) in enumerate(list(G.edges())[:20]):
        if k % 3 == 0:
            del G.edges[u, v]["weight"]  # missing weights count as 1
    fake = FakeCudaGraph(G)
    g, kind = to_graph(fake)
    assert kind == "networkx"
    _graph_equal(g, Graph.from_networkx(G))
    # the device CSR is built from the caller's arrays and gives the same matching
    from nx_gpumatch.gpu import matching as gm

    want = mate_array(g, "greedy", device="cpu")
    np.testing.assert_array_equal(gm.run(g, "suitor", backend="emulate"), want)
    assert nx_gpumatch.max_weight_matching(
        fake, algorithm="suitor", device="cpu"
    ) == nx_gpumatch.max_weight_matching(G, algorithm="suitor", device="cpu")


def test_nx_cugraph_multigraph_input():
    # Louvain and Leiden take a device MultiGraph as networkx takes the host
    # one: parallel edges summed (counted when unweighted); matchings refuse it.
    rng = np.random.default_rng(3)
    M = nx.MultiGraph()
    M.add_nodes_from(f"v{i}" for i in range(60))
    for _ in range(400):
        u, v = rng.integers(0, 60, 2)
        if rng.random() < 0.2:
            M.add_edge(f"v{u}", f"v{v}")  # no weight: counts as 1
        else:
            M.add_edge(f"v{u}", f"v{v}", weight=float(rng.integers(1, 9)))
    M.add_edge("v7", "v7", weight=2.0)
    M.add_edge("v7", "v7", weight=3.0)
    fake = FakeCudaMultiGraph(M)
    for weight in ("weight", None):
        g, _ = to_graph(fake, weight=weight, parallel="sum")
        want = Graph.from_networkx(M, weight=weight, parallel="sum")
        _graph_equal(g, want)
        np.testing.assert_array_equal(g.loop_weight, want.loop_weight)
        _graph_equal(g.unweighted(), want.unweighted())
        for fn in (nx_gpumatch.louvain_communities, nx_gpumatch.leiden_communities):
            got = fn(fake, weight=weight, seed=2, device="cpu")
            assert got == fn(M, weight=weight, seed=2, device="cpu")
    assert np.any(to_graph(fake, parallel="sum")[0].edge_weight > 8)  # summed, not replaced
    with pytest.raises(nx.NetworkXNotImplemented, match="multigraph"):
        to_graph(fake)
    with pytest.raises(nx.NetworkXNotImplemented, match="multigraph"):
        nx_gpumatch.max_weight_matching(fake, device="cpu")


def test_cugraph_input():
    rng = np.random.default_rng(4)
    df = pd.DataFrame(
        {"src": rng.integers(0, 50, 300), "dst": rng.integers(0, 50, 300), "wgt": rng.random(300)}
    )
    g, kind = to_graph(FakeCugraph(df))
    assert kind == "cudf"
    _graph_equal(g, Graph.from_pandas(df, source="src", target="dst", weight="wgt"))
    with pytest.raises(nx.NetworkXNotImplemented):
        to_graph(FakeCugraph(df, directed=True))


# ---------------------------------------------------------------- real GPU
SIZES = {
    "random-1e4": lambda: gen.random_graph(2_000, 10_000, seed=1),
    "random-1e6": lambda: gen.random_graph(200_000, 1_000_000, seed=2),
    "rmat-skewed-8e6": lambda: gen.rmat(20, 8, kind="g500", seed=3),
    "random-1e7": lambda: gen.random_graph(1_000_000, 10_000_000, seed=4),
    "ties-1e6": lambda: gen.random_graph(200_000, 1_000_000, seed=5, weights=None),
}


@pytest.fixture(scope="module", params=sorted(SIZES))
def big(request):
    g = SIZES[request.param]()
    return g, mate_array(g, "greedy", device="cpu")


@pytest.mark.gpu
@pytest.mark.parametrize("vpw", [8, 32])
def test_gpu_suitor_equals_cpu(big, vpw):
    from nx_gpumatch.gpu import matching as gm

    g, want = big
    got = gm.run(g, "suitor", backend="cupy", vertices_per_warp=vpw)
    np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
def test_gpu_local_max_equals_cpu(big):
    from nx_gpumatch.gpu import matching as gm

    g, want = big
    np.testing.assert_array_equal(gm.run(g, "local_max", backend="cupy"), want)


@pytest.mark.gpu
@pytest.mark.parametrize("select", ["weighted", "random"])
def test_gpu_red_blue_equals_cpu(big, select):
    from nx_gpumatch.gpu import matching as gm

    g, _ = big
    want = mate_array(g, "red_blue", device="cpu", seed=42, select=select)
    np.testing.assert_array_equal(
        gm.run(g, "red_blue", seed=seed_key(42), select=select, backend="cupy"), want
    )


@pytest.mark.gpu
def test_gpu_public_api():
    G = gen.random_graph(3_000, 12_000, seed=7).to_networkx()
    for alg in ("suitor", "local_max", "greedy"):
        assert nx_gpumatch.max_weight_matching(
            G, algorithm=alg, device="gpu"
        ) == nx_gpumatch.max_weight_matching(G, algorithm=alg, device="cpu")


@pytest.mark.gpu
def test_gpu_argument_checks():
    import cupy

    from nx_gpumatch.gpu._launch import get_module

    k = get_module("matching", "cupy").get_function("suitor_mates")
    with pytest.raises(TypeError, match="dtype"):
        k((1,), (32,), (np.int32(4), cupy.zeros(4, cupy.int64), cupy.zeros(4, cupy.int64)))
    with pytest.raises(TypeError, match="device array"):
        k((1,), (32,), (np.int32(4), np.zeros(4, np.uint64), cupy.zeros(4, cupy.int64)))


@pytest.mark.gpu
def test_gpu_cudf_roundtrip():
    cudf = pytest.importorskip("cudf")
    rng = np.random.default_rng(0)
    pdf = pd.DataFrame(
        {"a": rng.integers(0, 500, 3000), "b": rng.integers(0, 500, 3000), "w": rng.random(3000)}
    )
    got = nx_gpumatch.max_weight_matching(
        cudf.from_pandas(pdf), "w", algorithm="suitor", device="gpu", source="a", target="b"
    )
    assert type(got).__module__.startswith("cudf")
    want = nx_gpumatch.max_weight_matching(
        pdf, "w", algorithm="suitor", device="cpu", source="a", target="b"
    )
    pd.testing.assert_frame_equal(
        got.to_pandas().reset_index(drop=True), want.reset_index(drop=True), check_dtype=False
    )


@pytest.mark.gpu
def test_gpu_nx_cugraph_input():
    nxcg = pytest.importorskip("nx_cugraph")
    G = gen.random_graph(5_000, 40_000, seed=8).to_networkx()
    Gcg = nxcg.from_networkx(G, edge_attrs={"weight": 1.0})
    got = nx_gpumatch.max_weight_matching(Gcg, algorithm="suitor", device="gpu")
    assert got == nx_gpumatch.max_weight_matching(G, algorithm="suitor", device="cpu")
