"""The distributed Louvain under mpiexec with 1-3 ranks (oversubscribed on small
machines): each launch runs every case of tests/support/mpi_louvain_driver.py and
fails on a partition that labels a vertex twice or not at all, labels that change
from run to run or with the split of the edges, a modularity unlike networkx's
or below the shared-memory engine's, a wrong error, or a hang (timeout)."""

import numpy as np
import pytest

from tests.support import SUPPORT
from tests.support.mpi_launch import driver_lines

pytest.importorskip("mpi4py")

from nx_gpumatch.distributed.launch import find_mpiexec, run_mpi  # noqa: E402

DRIVER = str(SUPPORT / "mpi_louvain_driver.py")
TIMEOUT = 300

pytestmark = pytest.mark.skipif(find_mpiexec() is None, reason="no mpiexec (pip install mpich)")


@pytest.mark.parametrize("nprocs", [1, 2, 3])
def test_distributed_louvain(nprocs):
    lines = driver_lines(nprocs, DRIVER, TIMEOUT)
    # Every case ran: 4 graphs x (6 seeds x 3 checks + 2), 5 edge cases, 7 errors
    # (and the seed differing across ranks where there are several).
    assert sum(ln.startswith("ok ") for ln in lines) == 80 + 5 + 7 + (nprocs > 1)


@pytest.mark.parametrize("nprocs", [1, 3])
def test_distributed_communities_on_stars_paths_hubs_grids(nprocs):
    lines = driver_lines(nprocs, DRIVER, TIMEOUT, "worst")
    assert sum(ln.startswith("ok ") for ln in lines) == 4 * 2 * 2


def test_cli_louvain_under_mpiexec(tmp_path):
    path = tmp_path / "g.mtx"
    # Two cliques of 5 joined by one edge, with a self-loop: two communities.
    edges = [(u, v) for c in (0, 5) for u in range(c, c + 5) for v in range(u + 1, c + 5)]
    edges += [(4, 5), (0, 0)]
    lines = ["%%MatrixMarket matrix coordinate real symmetric", f"10 10 {len(edges)}"]
    lines += [f"{v + 1} {u + 1} 1.0" for u, v in edges]
    path.write_text("\n".join(lines) + "\n")
    args = ["-m", "nx_gpumatch.cli", "distributed", "louvain", "--input", str(path)]
    out = run_mpi(2, [*args, "--seed", "3"], timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr[-2000:]
    import networkx as nx

    G = nx.Graph(edges)
    q = nx.community.modularity(G, [set(range(5)), set(range(5, 10))])
    assert f"modularity   {q:.6f}" in out.stdout
    assert "communities  2" in out.stdout
    assert "ghost updates" in out.stdout and "move" in out.stdout
    assert out.stdout.count("modularity   ") == 1  # rank 0 only
    bad = run_mpi(2, [*args, "-b", "2"], timeout=TIMEOUT)
    assert bad.returncode == 2
    assert bad.stderr.splitlines() == ["error: -b acts on matching, not on 'distributed louvain'"]
    bad = run_mpi(2, ["-m", "nx_gpumatch.cli", "distributed", "--resolution", "2"], timeout=TIMEOUT)
    msg = "--resolution acts on 'distributed louvain' and 'distributed leiden' only"
    assert bad.returncode == 2 and msg in bad.stderr


def test_partition_keeps_loops_only_when_asked():
    from nx_gpumatch import distributed as D

    src = np.array([0, 1, 2, 2, 1, 2])
    dst = np.array([1, 1, 0, 2, 1, 2])
    w = np.array([1.0, 5.0, 2.0, 3.0, 4.0, 1.0])
    plain = D.partition_edges(src, dst, w)
    assert plain.loops is None
    for rule, loops in (("last", [0.0, 4.0, 1.0]), ("max", [0.0, 5.0, 3.0])):
        p = D.partition_edges(src, dst, w, duplicates=rule, loops=True)
        assert p.loops.tolist() == loops
        # The graph is the one matching uses.
        assert p.graph.edge_src.tolist() == plain.graph.edge_src.tolist()
        assert (
            p.graph.edge_weight.tolist()
            == D.partition_edges(src, dst, w, duplicates=rule).graph.edge_weight.tolist()
        )


@pytest.mark.parametrize("method", ["louvain", "leiden"])
def test_one_rank_leaves_isolated_vertices_out(method):
    """A rank alone runs the levels on the vertices with an arc or a
    self-loop: the same partition of them as on the graph without the
    isolated ones, and each isolated vertex a community of its own."""
    import networkx as nx

    from nx_gpumatch import distributed as D

    n = 3000
    rng = np.random.default_rng(4)
    used = np.sort(rng.choice(n, 1800, replace=False))  # the others are isolated
    src, dst = rng.integers(0, 1798, 9000), rng.integers(0, 1798, 9000)
    w = rng.random(9000)
    # the last two have a self-loop and no other edge: kept, as singletons
    src, dst, w = (
        np.append(src, [1798, 1799]),
        np.append(dst, [1798, 1799]),
        np.append(w, [2.0, 0.5]),
    )
    fn = getattr(D, f"{method}_communities")
    whole = fn((used[src], used[dst], w), num_nodes=n, seed=3)
    small = fn((src, dst, w), num_nodes=1800, seed=3)
    lab, sub = whole.gather(), small.gather()
    assert whole.stats.level_info[0]["vertices"] == 1800
    assert np.array_equal(lab[used], sub)  # the same numbering, too
    alone = np.setdiff1d(np.arange(n), used)
    assert np.array_equal(np.sort(lab[alone]), np.arange(sub.max() + 1, lab.max() + 1))
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from(zip(used[src].tolist(), used[dst].tolist(), w.tolist()))
    comms = [set(np.flatnonzero(lab == c).tolist()) for c in range(lab.max() + 1)]
    assert whole.modularity() == pytest.approx(nx.community.modularity(G, comms), abs=1e-9)
    if method == "leiden":  # CPM counts every vertex: none is left out
        cpm = fn((used[src], used[dst], w), num_nodes=n, seed=3, metric="cpm", resolution=0.1)
        assert cpm.stats.level_info[0]["vertices"] == n
