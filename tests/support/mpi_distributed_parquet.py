"""Parquet in and out for the distributed engine, run under ``mpiexec -n P`` by
tests/distributed/test_distributed_parquet.py. Prints ``ok <case>`` on rank 0
per passing case and ``FAIL <case>: ...`` otherwise; exits non-zero on a failure."""

import os
import sys
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pds
import pyarrow.parquet as pq
from mpi4py import MPI
from mpi_distributed_driver import expect_error, reference, same
from mpi_report import failures, report

from nx_gpumatch import distributed as D

comm = MPI.COMM_WORLD
P, RANK = comm.size, comm.rank
LAST = P - 1


def write_dataset_files(folder, s, t, w):
    """Four files of the global list, in this path order: a nested part, an
    empty file, files with many small row groups, int32 ids in one; beside them
    what readers skip (_SUCCESS, a hidden file, a _temporary folder)."""
    os.makedirs(os.path.join(folder, "b"))
    os.makedirs(os.path.join(folder, "_temporary"))
    cuts = [0, 130, 130, 1000, len(s)]
    names = ["a.parquet", "a2.parquet", "b/part-0.parquet", "c.parquet"]
    groups = [40, 10, 25, 333]
    for i, name in enumerate(names):
        lo, hi = cuts[i], cuts[i + 1]
        ids = np.int32 if i == 2 else np.int64
        tab = pa.table({"u": s[lo:hi].astype(ids), "v": t[lo:hi].astype(ids), "w": w[lo:hi]})
        pq.write_table(tab, os.path.join(folder, name), row_group_size=groups[i])
    for junk in ("_SUCCESS", ".hidden.parquet", "_temporary/x.parquet"):
        with open(os.path.join(folder, junk), "w") as f:
            f.write("not parquet")


def gathered(part):
    got = comm.allgather(part)
    for g in got:  # None: unit weights
        g["weight"] = np.ones(g["src"].shape[0]) if g["weight"] is None else g["weight"]
    return [np.concatenate([g[k] for g in got]) for k in ("src", "dst", "weight")]


def group_read():
    tmp = comm.bcast(tempfile.mkdtemp() if RANK == 0 else None)
    n = 150
    rng = np.random.default_rng(5)
    m = 1800
    s = rng.integers(0, n, m)
    t = rng.integers(0, n, m)
    w = rng.integers(1, 6, m).astype(np.float64)  # ties and repeated pairs
    ds = os.path.join(tmp, "edges")
    if RANK == 0:
        write_dataset_files(ds, s, t, w)
        pq.write_table(pa.table({"source": s, "target": t}), os.path.join(tmp, "one.parquet"))
    comm.Barrier()
    part = D.read_parquet(ds, source="u", target="v", weight="w", num_nodes=n)
    gs, gt, gw = gathered(part)
    # the rows in file order, whatever the number of ranks
    report(
        "parquet dataset: the global list in order",
        np.array_equal(gs, s) and np.array_equal(gt, t) and np.array_equal(gw, w),
    )
    sizes = comm.allgather(part["src"].shape[0])
    # row groups of 40, 10, 25 and 333 rows: no share is a group past an even cut
    report("parquet shares balanced by rows", max(sizes) - m / P <= 333, str(sizes))
    for dup in ("last", "max"):
        part = D.read_parquet(ds, source="u", target="v", weight="w", duplicates=dup)
        res = D.b_matching(part, 2, num_nodes=n)
        report(f"parquet b_matching ({dup})", same(res, reference(s, t, w, n, 2, dup)))
    res = D.max_weight_matching(part, num_nodes=n, algorithm="local_max")
    report("parquet local max", same(res, reference(s, t, w, n, 1, "max")))
    one = D.read_parquet(os.path.join(tmp, "one.parquet"))  # no 'weight' column: all 1
    gs, gt, gw = gathered(one)
    report("parquet file, unit weights", np.array_equal(gs, s) and np.all(gw == 1))
    res = D.b_matching(one, 1, num_nodes=n)
    report("parquet file b_matching", same(res, reference(s, t, None, n, 1)))
    unit = D.read_parquet(ds, source="u", target="v", weight=None)
    report("parquet weight=None", np.all(gathered(unit)[2] == 1))

    # Results out: a dataset with a part per rank, read back whole.
    res = D.b_matching(D.read_parquet(ds, source="u", target="v", weight="w"), 2, num_nodes=n)
    out = os.path.join(tmp, "m.parquet")
    if RANK == 0:  # an earlier result from more ranks: its extra parts must go
        os.makedirs(out)
        pq.write_table(pa.table({"vertex": [0]}), os.path.join(out, "part-00099.parquet"))
    comm.Barrier()
    name = res.write(out)
    report("parquet write: this rank's part", name == os.path.join(out, f"part-{RANK:05d}.parquet"))
    comm.Barrier()
    listed = sorted(os.listdir(out))
    report(
        "parquet write: parts and _SUCCESS only",
        listed == ["_SUCCESS"] + [f"part-{r:05d}.parquet" for r in range(P)],
        str(listed),
    )
    tab = pds.dataset(out).to_table()
    u = np.repeat(res.vertices, np.diff(res.indptr))
    mine = pq.read_table(name)
    report(
        "parquet write: rows of this rank",
        np.array_equal(mine["vertex"].to_numpy(), u)
        and np.array_equal(mine["partner"].to_numpy(), res.partners)
        and np.array_equal(mine["weight"].to_numpy(), res.weights),
    )
    back = D.read_parquet(out, source="vertex", target="partner", weight="weight")
    bs, bt, bw = gathered(back)
    got = res.gather()
    ok = tab.num_rows == 2 * res.size()
    if RANK == 0:
        up = bs < bt
        o = np.lexsort((bt[up], bs[up]))
        ok = ok and np.array_equal(bs[up][o], got[0]) and np.array_equal(bw[up][o], got[2])
    report("parquet write: read back whole", comm.bcast(ok))
    nm = res.write(os.path.join(tmp, "m.npy"))
    rows = np.load(nm)
    report(
        "npy write per rank",
        nm.endswith(f"m.npy.{RANK}")
        and rows.shape == (u.shape[0], 3)
        and np.array_equal(rows[:, 1], res.partners),
    )
    clash = os.path.join(tmp, "notes.parquet")
    if RANK == 0:
        os.makedirs(clash)
        open(os.path.join(clash, "notes.txt"), "w").close()
    comm.Barrier()
    expect_error("parquet write: a folder of other files", lambda: res.write(clash), "notes.txt")
    report("parquet write: that folder untouched", os.listdir(clash) == ["notes.txt"])

    from nx_gpumatch.distributed import parquet

    real = parquet.write_part
    if RANK == LAST:

        def full_disk(name, columns):
            real(name, columns)
            raise OSError(28, "No space left on device")

        parquet.write_part = full_disk
    try:
        failed = os.path.join(tmp, "full.parquet")
        expect_error("parquet write: a part fails", lambda: res.write(failed), "No space left")
    finally:
        parquet.write_part = real
    comm.Barrier()  # rank 0 removes the temporary folder
    left = [f for f in os.listdir(tmp) if "full.parquet" in f]
    report("parquet write: nothing left after a failure", left == [], str(left))

    # Errors: the same DistributedError on every rank.
    def read(path=ds, **kw):
        kw = {"source": "u", "target": "v", "weight": "w", **kw}
        return lambda: D.read_parquet(path, **kw)

    gone = os.path.join(tmp, "gone")
    expect_error(
        "parquet: a folder missing on one rank",
        read(ds if RANK != LAST else gone),
        (f"rank {LAST}: " if P > 1 else "") + f"{gone}: no such file or directory",
    )
    expect_error("parquet: missing column", read(target="x"), "no column 'x'")
    expect_error("parquet: missing weight column", read(weight="ww"), "no weight column 'ww'")
    bad = {
        "float ids": ({"u": [0.0, 1.5], "v": [1, 2]}, "must be integers, got 1.5"),
        "string ids": ({"u": ["a", "b"], "v": [1, 2]}, "must hold integer vertex ids"),
        "null ids": ({"u": pa.array([0, None]), "v": [1, 2]}, "missing (null) vertex ids"),
        "negative ids": ({"u": [0, -4], "v": [1, 2]}, "vertex ids must be >= 0"),
        "NaN weights": ({"u": [0, 1], "v": [1, 2], "w": [1.0, np.nan]}, "must be finite"),
        "null weights": ({"u": [0, 1], "v": [1, 2], "w": pa.array([1.0, None])}, "null"),
        "text weights": ({"u": [0, 1], "v": [1, 2], "w": ["1", "2"]}, "must hold numbers"),
    }
    for name, (cols, text) in bad.items():
        path = os.path.join(tmp, name.replace(" ", "_") + ".parquet")
        if RANK == 0:
            cols.setdefault("w", [1.0, 2.0])
            pq.write_table(pa.table(cols), path, row_group_size=1)
        comm.Barrier()
        expect_error(f"parquet: {name}", read(path), text)
    saved = {k: sys.modules.get(k) for k in ("pyarrow", "pyarrow.parquet")}
    if RANK == LAST:
        sys.modules.update(dict.fromkeys(saved))  # as if pyarrow were not installed
    try:
        expect_error("parquet: no pyarrow on one rank", read(), "nx-gpumatch[parquet]")
    finally:
        sys.modules.update(saved)


if __name__ == "__main__":
    group_read()
    comm.Barrier()
    sys.exit(1 if comm.allreduce(len(failures)) else 0)
