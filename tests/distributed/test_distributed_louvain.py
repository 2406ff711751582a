"""The distributed Louvain under mpiexec with 1-3 ranks (oversubscribed on small
machines): each launch runs every case of tests/support/mpi_louvain_driver.py and
fails on a partition that labels a vertex twice or not at all, labels that change
from run to run or with the split of the edges, a modularity unlike networkx's
or below the shared-memory engine's, a wrong error, or a hang (timeout)."""

import subprocess

import pytest

from tests.support import SUPPORT

pytest.importorskip("mpi4py")

from nx_gpumatch.distributed.launch import find_mpiexec, run_mpi  # noqa: E402

DRIVER = str(SUPPORT / "mpi_louvain_driver.py")
TIMEOUT = 300

pytestmark = pytest.mark.skipif(find_mpiexec() is None, reason="no mpiexec (pip install mpich)")


@pytest.mark.parametrize("nprocs", [1, 2, 3])
def test_distributed_louvain(nprocs):
    try:
        out = run_mpi(nprocs, [DRIVER], timeout=TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"mpiexec -n {nprocs} did not finish in {TIMEOUT} s (hang?): {exc.stdout}")
    lines = out.stdout.splitlines()
    failed = [ln for ln in lines if ln.startswith("FAIL")]
    assert out.returncode == 0 and not failed, (
        f"rc={out.returncode}\n" + "\n".join(failed) + "\n" + out.stderr[-3000:]
    )
    # Every case ran: 4 graphs x (6 seeds x 3 checks + 2), 4 edge cases, 7 errors
    # (and the seed differing across ranks where there are several).
    assert sum(ln.startswith("ok ") for ln in lines) == 80 + 4 + 7 + (nprocs > 1)
