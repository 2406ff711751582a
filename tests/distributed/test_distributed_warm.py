"""The distributed warm-up: after it, a job's first calls load cached kernels
and compile nothing, on more ranks than the warm-up ran on."""

import os

import pytest

pytest.importorskip("mpi4py")

from nx_gpumatch.distributed import warm  # noqa: E402
from nx_gpumatch.distributed.launch import find_mpiexec, run_mpi  # noqa: E402

pytestmark = pytest.mark.skipif(find_mpiexec() is None, reason="no mpiexec (pip install mpich)")

# A job's first calls of every distributed function, on another graph than the
# warm-up's (other sizes, integer weights, uneven slices).
JOB = r"""
from mpi4py import MPI
from nx_gpumatch import distributed as D
comm = MPI.COMM_WORLD
e = D.random_edges(3_000, 20_000, seed=7, weights="integer")
keep = slice(None, None if comm.rank else len(e["src"]) // 2)
part = {k: (v[keep] if k != "num_nodes" else v) for k, v in e.items()}
D.b_matching(part, 2)
D.max_weight_matching(part)
D.max_weight_matching(part, algorithm="local_max")
D.louvain_communities(part, seed=3)
D.leiden_communities(part, seed=3)
D.leiden_communities(part, seed=3, metric="cpm", resolution=0.1)
if comm.rank == 0:
    print("job done")
"""


def test_a_job_after_the_warm_up_compiles_nothing(tmp_path):
    # an empty cache of this test's own: the warm-up alone must fill it
    # and small calls interpreted, as users have them: the warm-up compiles anyway
    env = dict(
        os.environ, NX_GPUMATCH_CACHE_DIR=str(tmp_path / "cache"), NX_GPUMATCH_INTERPRET_SMALL="1"
    )
    env.pop("NUMBA_CACHE_DIR", None)
    assert warm.on_two_ranks(env=env)
    env.update(NUMBA_DEBUG_CACHE="1", NX_GPUMATCH_INTERPRET_SMALL="0")  # the job: all compiled
    out = run_mpi(3, ["-c", JOB], timeout=600, env=env)
    assert out.returncode == 0 and "job done" in out.stdout, out.stderr[-3000:]
    compiled = sorted(
        {ln.split("data saved to")[1] for ln in out.stdout.splitlines() if "data saved to" in ln}
    )
    assert not compiled, "compiled by the job's first calls:\n" + "\n".join(compiled)
    assert any("data loaded from" in ln for ln in out.stdout.splitlines())  # the cache was used


SMALL = JOB.replace("3_000, 20_000", "400, 2_000")


def test_small_first_calls_compile_nothing(tmp_path):
    """Without a warm-up, a job's first calls on a small graph run the kernels
    interpreted and compile none (the first call waits for no compiler)."""
    env = dict(
        os.environ,
        NX_GPUMATCH_CACHE_DIR=str(tmp_path / "cache"),
        NX_GPUMATCH_INTERPRET_SMALL="1",
        NUMBA_DEBUG_CACHE="1",
    )
    env.pop("NUMBA_CACHE_DIR", None)
    out = run_mpi(2, ["-c", SMALL], timeout=600, env=env)
    assert out.returncode == 0 and "job done" in out.stdout, out.stderr[-3000:]
    compiled = sorted(
        {ln.split("data saved to")[1] for ln in out.stdout.splitlines() if "data saved to" in ln}
    )
    assert not compiled, "compiled by small first calls:\n" + "\n".join(compiled)
