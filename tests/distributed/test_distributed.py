"""The distributed engine under mpiexec with 1-4 ranks (oversubscribed on small
machines): each launch runs every case of tests/support/mpi_distributed_driver.py and
fails on a mismatch with the shared-memory engine, on a wrong error, or on a
hang (timeout)."""

import subprocess
import sys

import numpy as np
import pytest

from tests.support import SUPPORT
from tests.support.mpi_launch import driver_lines

pytest.importorskip("mpi4py")

from nx_gpumatch.distributed.launch import find_mpiexec, run_mpi  # noqa: E402

DRIVER = str(SUPPORT / "mpi_distributed_driver.py")
TIMEOUT = 420

needs_mpiexec = pytest.mark.skipif(find_mpiexec() is None, reason="no mpiexec (pip install mpich)")


@needs_mpiexec
@pytest.mark.parametrize("nprocs", [1, 2, 3, 4])
def test_distributed_equals_shared_memory(nprocs):
    lines = driver_lines(nprocs, DRIVER, TIMEOUT)
    # Every group ran: the driver prints one line per case on rank 0.
    assert sum(ln.startswith("ok ") for ln in lines) >= 40


@needs_mpiexec
def test_failure_on_one_rank_aborts_all():
    try:
        out = run_mpi(2, [DRIVER, "abort"], timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail("a failure on one rank left the others hanging")
    assert out.returncode != 0
    assert "injected failure" in out.stderr and "aborting all ranks" in out.stderr
    assert "FAIL abort" not in out.stdout


def test_import_is_lazy():
    code = "import nx_gpumatch.distributed, sys; print('mpi4py' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_generators_do_not_depend_on_the_split():
    from nx_gpumatch.distributed import planted_edges, random_edges, rmat_edges

    gens = ((random_edges, (500, 150_000)), (rmat_edges, (9, 4)), (planted_edges, (3000, 9, 60, 5)))
    for gen, args in gens:
        whole = gen(*args, seed=4, comm=False)
        nb = -(-len(whole["src"]) // (1 << 16))
        parts = [gen(*args, seed=4, comm=False, blocks=(k, k + 1)) for k in range(nb)]
        for key in ("src", "dst", "weight"):
            assert np.array_equal(np.concatenate([p[key] for p in parts]), whole[key])
    r = rmat_edges(6, 8, seed=1, comm=False)
    assert r["src"].max() < 64 and len(np.unique(r["src"])) > 16  # ids scrambled, in range


def test_planted_edges_follow_their_communities():
    from nx_gpumatch.distributed import planted_edges
    from nx_gpumatch.generators import planted_sizes

    n, k, d_in, d_out = 20_000, 40, 12.0, 3.0
    e = planted_edges(n, k, d_in, d_out, seed=2, comm=False)
    src, dst = e["src"], e["dst"]
    assert e["num_nodes"] == n and not (src == dst).any()
    assert min(src.min(), dst.min()) >= 0 and max(src.max(), dst.max()) < n
    # n * (d_in + d_out) / 2 pairs drawn, less the self-loops (a few inside small communities)
    assert 0.99 * n * (d_in + d_out) / 2 <= len(src) <= n * (d_in + d_out) / 2
    sizes = planted_sizes(n, k)
    label = np.searchsorted(np.cumsum(sizes), np.arange(n), side="right")
    inside = (label[src] == label[dst]).mean()
    # the d_in share, plus the mixing pairs that land inside by chance
    chance = float((sizes / n) @ (sizes / n))
    expected = (d_in + d_out * chance) / (d_in + d_out)
    assert abs(inside - expected) < 0.01
    assert sizes[0] > sizes[-1] >= 4 and sizes.sum() == n  # skewed, none below 4
    with pytest.raises(ValueError, match="n >= 4 \\* k"):
        planted_edges(30, 8, 4, 1, comm=False)
    with pytest.raises(ValueError, match="finite and >= 0"):
        planted_edges(300, 8, float("nan"), 1, comm=False)


@needs_mpiexec
def test_cli_under_mpiexec(tmp_path):
    args = ["-m", "nx_gpumatch.cli", "distributed", "-n", "3000", "-m", "20000", "-b", "2"]
    args += ["--ordering", "heaviest", "--vertex-subsets", "2", "--check"]
    args += ["-o", str(tmp_path / "m.{rank}.csv")]
    out = run_mpi(2, args, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "equal to the shared-memory result: True" in out.stdout
    assert "proposals" in out.stdout and "supersteps" in out.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.0.csv", "m.1.csv"]
    bad = run_mpi(2, ["-m", "nx_gpumatch.cli", "distributed", "--b-subset", "x"], timeout=TIMEOUT)
    # Once, not once per rank (the driver's "cli" group checks every rank's exit code).
    assert bad.returncode == 2
    assert bad.stderr.splitlines() == [
        "error: nx-gpumatch distributed: argument --b-subset: "
        "expected a positive integer or 'half', got 'x'"
    ]
    helped = run_mpi(2, ["-m", "nx_gpumatch.cli", "distributed", "--help"], timeout=TIMEOUT)
    assert helped.returncode == 0 and helped.stdout.count("usage:") == 1
