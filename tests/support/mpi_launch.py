"""Running a driver script of tests/support under mpiexec from a test: the
job must end in time, exit 0 and print no FAIL line (the drivers print one
"ok ..." or "FAIL ..." line per case on rank 0)."""

import subprocess

import pytest

from nx_gpumatch.distributed.launch import run_mpi


def driver_lines(nprocs, script, timeout, *groups):
    """The driver's output lines (its ``groups``: default all); the test
    fails on a hang, an error or a FAIL."""
    try:
        out = run_mpi(nprocs, [str(script), *groups], timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"mpiexec -n {nprocs} did not finish in {timeout} s (hang?): {exc.stdout}")
    lines = out.stdout.splitlines()
    failed = [ln for ln in lines if ln.startswith("FAIL")]
    assert out.returncode == 0 and not failed, (
        f"rc={out.returncode}\n" + "\n".join(failed) + "\n" + out.stderr[-3000:]
    )
    return lines
