"""Parquet edge lists in and results out for the distributed engine, under
mpiexec with 1-3 ranks: tests/support/mpi_distributed_parquet.py checks every
case on every rank."""

import numpy as np
import pytest

from tests.support import SUPPORT
from tests.support.mpi_launch import driver_lines

pytest.importorskip("mpi4py")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from nx_gpumatch.distributed.launch import find_mpiexec, run_mpi  # noqa: E402

SCRIPT = str(SUPPORT / "mpi_distributed_parquet.py")
TIMEOUT = 420

pytestmark = pytest.mark.skipif(find_mpiexec() is None, reason="no mpiexec (pip install mpich)")


@pytest.mark.parametrize("nprocs", [1, 3])
def test_parquet_in_and_out(nprocs):
    lines = driver_lines(nprocs, SCRIPT, TIMEOUT)
    assert sum(ln.startswith("ok ") for ln in lines) >= 25


def test_row_groups_assigned_in_runs():
    from nx_gpumatch.distributed.parquet import _assign

    rows = [40] * 4 + [0, 10, 25, 333, 1]
    for size in (1, 2, 3, 4, 7, 20):
        owner = _assign(rows, size)
        assert np.all(np.diff(owner) >= 0) and owner.min() >= 0 and owner.max() < size
        per = np.bincount(owner, weights=rows, minlength=size)
        assert per.max() <= sum(rows) / size + max(rows)  # a group at most past an even cut
    assert list(_assign([0, 0], 3)) == [0, 0]


def test_cli_parquet_input_and_output(tmp_path):
    rng = np.random.default_rng(3)
    s, t = rng.integers(0, 500, 4000), rng.integers(0, 500, 4000)
    (tmp_path / "in").mkdir()
    for i in range(2):
        half = slice(2000 * i, 2000 * (i + 1))
        tab = pa.table({"a": s[half], "b": t[half], "x": rng.random(2000)})
        pq.write_table(tab, tmp_path / "in" / f"part-{i}.parquet", row_group_size=300)
    cli = ["-m", "nx_gpumatch.cli", "distributed", "--input", str(tmp_path / "in")]
    args = [*cli, "--source", "a", "--target", "b", "--weight", "x", "-b", "2", "--check"]
    out = run_mpi(2, [*args, "-o", str(tmp_path / "m.parquet")], timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "equal to the shared-memory result: True" in out.stdout
    parts = sorted(p.name for p in (tmp_path / "m.parquet").iterdir())
    assert parts == ["_SUCCESS", "part-00000.parquet", "part-00001.parquet"]
    bad = run_mpi(2, [*cli, "--source", "nope", "--target", "b"], timeout=TIMEOUT)
    assert bad.returncode == 2
    (line,) = bad.stderr.splitlines()
    assert "no column 'nope'" in line
    misplaced = run_mpi(2, ["-m", "nx_gpumatch.cli", "distributed", "--source", "a"], timeout=60)
    assert misplaced.returncode == 2
    assert "--source names a column of a Parquet --input" in misplaced.stderr
