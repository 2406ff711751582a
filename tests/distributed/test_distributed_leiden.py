"""The distributed Leiden under mpiexec with 1-4 ranks (oversubscribed on small
machines): each launch runs every case of tests/support/mpi_leiden_driver.py and
fails on a partition that labels a vertex twice or not at all, a community
that is not connected, refinement totals unlike those recomputed from the
arcs, an objective unlike the one computed from the labels or
below the shared-memory engine's, labels that change from run to run or with
the split of the edges, a wrong error, or a hang (timeout)."""

import numpy as np
import pytest

from tests.support import SUPPORT
from tests.support.mpi_launch import driver_lines

pytest.importorskip("mpi4py")

from nx_gpumatch.distributed.launch import find_mpiexec, run_mpi  # noqa: E402

DRIVER = str(SUPPORT / "mpi_leiden_driver.py")
TIMEOUT = 400

pytestmark = pytest.mark.skipif(find_mpiexec() is None, reason="no mpiexec (pip install mpich)")


@pytest.mark.parametrize("nprocs", [1, 2, 3, 4])
def test_distributed_leiden(nprocs):
    lines = driver_lines(nprocs, DRIVER, TIMEOUT)
    # Every case ran: 4 graphs x 2 metrics x (4 seeds x 4 checks + 2), 8 edge
    # cases, the refinement's running totals, 5 errors (and the metric
    # differing across ranks where there are several, back-to-back exchanges
    # where there are three).
    expected = 144 + 8 + 1 + 5 + (nprocs > 1) + (nprocs >= 3)
    assert sum(ln.startswith("ok ") for ln in lines) == expected


def test_cli_leiden_under_mpiexec(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import networkx as nx
    import pyarrow.dataset as ds

    # Two cliques of 5 joined by one edge, with a self-loop, as a Parquet file.
    edges = [(u, v) for c in (0, 5) for u in range(c, c + 5) for v in range(u + 1, c + 5)]
    edges += [(4, 5), (0, 0)]
    src, dst = (np.array(x, np.int64) for x in zip(*edges))
    path = tmp_path / "g.parquet"
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"a": src, "b": dst}), path)
    out_dir = tmp_path / "labels.parquet"
    args = ["-m", "nx_gpumatch.cli", "distributed", "leiden", "--input", str(path)]
    args += ["--source", "a", "--target", "b", "--seed", "3", "-o", str(out_dir)]
    out = run_mpi(2, [*args, "--metric", "cpm", "--resolution", "0.5"], timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr[-2000:]
    G = nx.Graph(edges)
    parts = [set(range(5)), set(range(5, 10))]
    # networkx's constant_potts_model: inner weight less gamma * n_C**2 / 2.
    cpm = sum(G.subgraph(c).size() for c in parts) - 0.5 * (25 + 25) / 2
    assert f"cpm          {cpm:.6f}" in out.stdout
    assert "communities  2, connected: True" in out.stdout
    assert "refine" in out.stdout and "ghost updates" in out.stdout
    table = ds.dataset(str(out_dir)).to_table().to_pandas().sort_values("vertex")
    assert table["vertex"].tolist() == list(range(10))
    lab = table["community"].to_numpy()
    assert len(set(lab[:5])) == 1 and len(set(lab[5:])) == 1 and lab[0] != lab[5]
    out = run_mpi(2, [*args[:-2], "--passes", "1"], timeout=TIMEOUT)
    q = nx.community.modularity(G, parts)
    assert out.returncode == 0 and f"modularity   {q:.6f}" in out.stdout, out.stderr[-2000:]
    bad = run_mpi(2, [*args, "--threshold", "1"], timeout=TIMEOUT)
    assert bad.returncode == 2
    assert bad.stderr.splitlines() == ["error: --threshold acts on 'distributed louvain' only"]
    bad = run_mpi(2, [*args, "--check"], timeout=TIMEOUT)
    assert bad.stderr.splitlines() == [
        "error: --check acts on matching, not on 'distributed leiden'"
    ]
