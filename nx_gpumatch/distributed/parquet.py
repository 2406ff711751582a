"""Parquet edge lists in, Parquet results out, one share per rank.

:func:`read_parquet` reads a file or a dataset directory (the ``*.parquet``
files under it, in path order, as Spark and ``pyarrow.dataset`` write them;
names starting with ``_`` or ``.`` are skipped as they skip them). The global
edge list is the files' rows in that order. Its row groups are cut into one
contiguous run per rank, balanced by row count (a rank may get none), and each
rank reads only its own; so the ranks together read every row once, in the
same order whatever their number.

:func:`write_dataset` writes one ``part-NNNNN.parquet`` per rank into a
dataset directory, all or nothing (see :meth:`DistributedMatching.write`).
"""

import os
import shutil

import numpy as np

from nx_gpumatch.distributed import _faults
from nx_gpumatch.distributed._comm import (
    DistributedError,
    agree,
    allgather,
    allreduce_sum,
    check,
    get_comm,
    same,
)
from nx_gpumatch.distributed.partition import int_ids
from nx_gpumatch.graph import _as_weights

__all__ = ["read_parquet", "write_dataset", "parquet_files"]

PARQUET_EXTRA = 'pip install "nx-gpumatch[parquet]" (from a checkout: pip install ".[parquet]")'


def _pq():
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(f"reading and writing Parquet needs pyarrow: {PARQUET_EXTRA}") from None
    return pq


def parquet_files(path):
    """The Parquet files of ``path``: itself, or the ``*.parquet`` files under
    the directory in path order (hidden and ``_``-prefixed names skipped)."""
    path = os.fspath(path)
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise FileNotFoundError(f"{path}: no such file or directory")
    found = []
    for folder, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
        found += [
            os.path.join(folder, f)
            for f in names
            if f.endswith(".parquet") and not f.startswith(("_", "."))
        ]
    if not found:
        raise ValueError(f"{path}: a directory without .parquet files")
    return sorted(found, key=lambda f: os.path.relpath(f, path).split(os.sep))


def _columns(source, target, weight):
    names = [source, target] + ([weight] if weight is not None else [])
    for c in names:
        if not isinstance(c, str):
            raise TypeError(f"column names must be strings, got {c!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"source, target and weight must be different columns, got {names}")
    return names


def _row_groups(files, lo, hi, source, target, weight):
    """(rows per row group, weighted) for files[lo:hi], each schema checked."""
    pq = _pq()
    counts, weighted = [], None
    for f in files[lo:hi]:
        try:
            meta = pq.ParquetFile(f).metadata
        except OSError as exc:
            raise OSError(f"{f}: not a readable Parquet file ({exc})") from None
        names = list(meta.schema.to_arrow_schema().names)
        for c in (source, target):
            if c not in names:
                raise ValueError(f"{f}: no column {c!r} (columns: {names})")
        has = weight is not None and weight in names
        if weight is not None and not has and weight != "weight":
            # only the default name may be absent (unit weights): a typo must not
            # silently weigh every edge 1
            raise ValueError(
                f"{f}: no weight column {weight!r} (columns: {names}); pass weight=None for "
                "unit weights"
            )
        if weighted is not None and has != weighted:
            raise ValueError(f"{f}: has a {weight!r} column where other files have none, or not")
        weighted = has
        counts.append([meta.row_group(i).num_rows for i in range(meta.num_row_groups)])
    return counts, weighted


def _assign(rows, size):
    """Rank of each row group: contiguous runs, cut where the running row count
    crosses multiples of total / size (by each group's middle row)."""
    rows = np.asarray(rows, np.int64)
    total = int(rows.sum())
    if total == 0:
        return np.zeros(rows.shape[0], np.int64)
    mid = np.cumsum(rows) - rows + rows // 2
    return np.minimum(mid * size // total, size - 1)


def _ids(arr, what):
    import pyarrow as pa

    if arr.null_count:
        raise ValueError(f"{what} has missing (null) vertex ids")
    t = arr.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t)):
        raise ValueError(f"{what} must hold integer vertex ids, got {t}")
    ids = int_ids(arr.to_numpy(zero_copy_only=False), what)
    if ids.size and ids.min() < 0:
        raise ValueError(f"{what}: vertex ids must be >= 0, got {int(ids.min())}")
    return ids


def _weights(arr, what):
    import pyarrow as pa

    if arr.null_count:
        raise ValueError(f"{what} has missing (null) weights")
    if not (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)):
        raise ValueError(f"{what} must hold numbers, got {arr.type}")
    return _as_weights(arr.to_numpy(zero_copy_only=False), len(arr), what)


def _read_share(files, groups, source, target, weight, what):
    pq = _pq()
    cols = [source, target] + ([weight] if weight is not None else [])
    src, dst, w = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0)]
    # file by file: the files' column types may differ (int32 ids in one, int64 in another)
    for f, idx in groups:
        try:
            t = pq.ParquetFile(f).read_row_groups(idx, columns=cols)
        except OSError as exc:
            raise OSError(f"{f}: {exc}") from None
        src.append(_ids(t.column(source).combine_chunks(), f"{what}: column {source!r}"))
        dst.append(_ids(t.column(target).combine_chunks(), f"{what}: column {target!r}"))
        if weight is not None:
            w.append(_weights(t.column(weight).combine_chunks(), f"{what}: column {weight!r}"))
    # copies: arrays that Arrow lends are read-only
    return np.concatenate(src), np.concatenate(dst), (None if weight is None else np.concatenate(w))


def read_parquet(
    path,
    comm=None,
    *,
    source="source",
    target="target",
    weight="weight",
    num_nodes=None,
    duplicates="last",
):
    """This rank's share of a Parquet edge list (a file, or a directory of
    ``.parquet`` files), split by row group: see the module notes.

    ``source`` and ``target`` name integer columns of global vertex ids (>= 0;
    integral floats are accepted); ``weight`` a numeric column, or None for
    unit weights (a missing column named ``"weight"`` also means unit weights;
    any other missing name is an error). Returns a dict (src, dst, weight,
    num_nodes, duplicates) to pass to :func:`nx_gpumatch.distributed.b_matching`
    or ``max_weight_matching``; repeated pairs keep the last row by default.
    Collective: an error on any rank (no such file on one rank, a missing
    column, non-integer ids, NaN or null weights, no pyarrow) raises the same
    DistributedError on every rank.
    """
    comm = get_comm(comm)
    path = os.fspath(path)
    check(comm, _pq)  # no pyarrow on any rank: every rank says which extra to install
    cols = check(comm, _columns, source, target, weight)
    same(comm, "the columns (source, target, weight)", cols)
    same(comm, "duplicates", duplicates)
    files = check(comm, parquet_files, path)
    # every rank must see the same files, or their shares would not fit together
    same(comm, f"the Parquet files of {path}", [os.path.relpath(f, path) for f in files])
    P = comm.size
    lo, hi = len(files) * comm.rank // P, len(files) * (comm.rank + 1) // P
    mine = check(comm, _row_groups, files, lo, hi, source, target, weight)
    parts = allgather(comm, mine, "the row groups of the Parquet files")
    counts = [c for p in parts for c in p[0]]
    flags = {p[1] for p in parts if p[1] is not None}
    if len(flags) > 1:
        raise DistributedError(f"{path}: some files have a {weight!r} column and some do not")
    if not flags or not flags.pop():
        weight = None
    rows = [r for c in counts for r in c]
    owner = _assign(rows, P)
    k = 0
    groups = []
    for f, c in zip(files, counts):
        idx = [i for i in range(len(c)) if owner[k + i] == comm.rank]
        if idx:
            groups.append((f, idx))
        k += len(c)
    src, dst, w = check(comm, _read_share, files, groups, source, target, weight, path)
    total = allreduce_sum(comm, src.shape[0], "the count of the rows read")
    if total != sum(rows):  # a file that changed between the metadata and the read
        raise DistributedError(f"{path}: read {total} rows, the metadata announces {sum(rows)}")
    out = {"src": src, "dst": dst, "weight": w, "duplicates": duplicates}
    if num_nodes is not None:
        out["num_nodes"] = num_nodes
    return out


# ------------------------------------------------------------------ writing
def write_part(name, columns):
    """One rank's table (a dict of equal-length arrays) to the file ``name``."""
    import pyarrow as pa

    pq = _pq()
    pq.write_table(pa.table(columns), name)


def write_dataset(comm, path, columns):
    """Collective: every rank's ``columns`` to ``path/part-<rank>.parquet``.
    The parts go to a hidden folder beside ``path``, which replaces ``path``
    once every rank has written its part; a ``_SUCCESS`` file marks it complete,
    as Spark does. An existing ``path`` is replaced only when it holds nothing
    but such parts. Returns this rank's part's final name."""
    path = os.path.abspath(os.fspath(path)).rstrip(os.sep)
    folder, base = os.path.split(path)
    token = allgather(comm, os.getpid() if comm.rank == 0 else None, "write()")[0]
    tmp = os.path.join(folder, f".{base}.{token}.tmp")
    old = os.path.join(folder, f".{base}.{token}.old")
    agree(comm, check_replaceable(path) if comm.rank == 0 else None)
    err = None
    if comm.rank == 0:
        try:
            os.mkdir(tmp)
            _faults.unfinished(tmp, folder=True)
        except OSError as exc:
            err = exc
    agree(comm, err)
    part = f"part-{comm.rank:05d}.parquet"
    err = None
    try:
        if not os.path.isdir(tmp):
            raise OSError(f"{tmp}: not visible on this rank (write a dataset on a shared disk)")
        write_part(os.path.join(tmp, part), columns)
    except (OSError, ValueError, ImportError, DistributedError) as exc:
        err = exc
    try:
        agree(comm, err)  # every part is whole, or nothing is renamed
        err = None
        if comm.rank == 0:
            try:
                open(os.path.join(tmp, "_SUCCESS"), "wb").close()
                if os.path.exists(path):
                    os.rename(path, old)
                os.rename(tmp, path)
            except OSError as exc:
                err = exc
        agree(comm, err)
    except DistributedError:
        if comm.rank == 0:
            shutil.rmtree(tmp, ignore_errors=True)
            if os.path.exists(old) and not os.path.exists(path):
                os.rename(old, path)  # the earlier result, as it was
        raise
    finally:
        _faults.finished(tmp)
    if comm.rank == 0:
        shutil.rmtree(old, ignore_errors=True)
    return os.path.join(path, part)


def check_replaceable(path):
    """An error message if ``path`` exists and is not a dataset of parts."""
    if not os.path.lexists(path):
        return None
    if not os.path.isdir(path) or os.path.islink(path):
        return f"cannot write the dataset {path}: a file of that name exists"
    other = [
        f
        for f in os.listdir(path)
        if f != "_SUCCESS" and not (f.startswith("part-") and f.endswith(".parquet"))
    ]
    if other:
        return (
            f"cannot write the dataset {path}: the folder holds other files than parts of a "
            f"dataset ({other[0]!r}); remove it or write elsewhere"
        )
    return None
