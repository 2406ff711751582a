"""What a distributed matching call returns on each rank."""

import os

import numpy as np

from nx_gpumatch.distributed import _faults
from nx_gpumatch.distributed._comm import (
    DistributedError,
    agree,
    allreduce,
    allreduce_max,
    allreduce_sum,
    check,
    gather,
)

__all__ = ["DistributedMatching", "Stats"]

COUNTS = (
    "supersteps",
    "iterations",
    "proposals",
    "rejections",
    "annulments",
    "rounds",
    "candidate_updates",
    "matched_updates",
)


class Stats:
    """Messages of each kind and supersteps of one call.

    The attributes are this rank's counts (messages it sent); after the call
    ``total`` holds the sums over all ranks, ``time`` the slowest rank's seconds
    per phase (partition, setup, compute, communicate, messages) and
    ``time_rank`` this rank's. b-Suitor counts PROP / REJ / ANL messages; local
    max counts rounds and the candidate / matched updates it sends to
    neighbours. Supersteps, iterations and rounds are the same on every rank.
    """

    def __init__(self):
        for k in COUNTS:
            setattr(self, k, 0)
        self.times = {}
        self.total = {}
        self.time = {}

    @property
    def messages(self):
        return (
            self.proposals
            + self.rejections
            + self.annulments
            + self.candidate_updates
            + (self.matched_updates)
        )

    def finish(self, comm):
        """Sum the counts and take the slowest rank's times (collective)."""
        what = "the sums of the statistics"
        local = np.array([getattr(self, k) for k in COUNTS], np.int64)
        summed = allreduce(comm, local, "sum", what)
        self.total = {k: int(v) for k, v in zip(COUNTS, summed)}
        # Supersteps and rounds are global; iterations (queue refills) differ
        # per rank: the largest is reported.
        for k in ("supersteps", "rounds"):
            self.total[k] = getattr(self, k)
        self.total["iterations"] = allreduce_max(comm, int(self.iterations), what)
        self.total["messages"] = int(sum(self.total[k] for k in COUNTS[2:] if k != "rounds"))
        phases = ("partition", "setup", "compute", "messages", "communicate")
        names = [k for k in phases if k in self.times] + sorted(set(self.times) - set(phases))
        t = np.array([self.times[k] for k in names], np.float64)
        tmax = allreduce(comm, t, "max", what)
        self.time = dict(zip(names, tmax.tolist()))
        self.time_rank = dict(self.times)

    def as_dict(self):
        return {"total": dict(self.total), "time": dict(self.time)}

    def __repr__(self):
        return f"Stats({self.total or {k: getattr(self, k) for k in COUNTS}})"


class DistributedMatching:
    """This rank's part of a (b-)matching: the partners of its owned vertices.

    ``vertices``: owned global ids, ascending; the partners of ``vertices[i]``
    are ``partners[indptr[i]:indptr[i + 1]]`` (ascending global ids) with edge
    weights ``weights[...]``. ``stats``: a :class:`Stats`. Methods marked
    collective must be called on every rank.
    """

    def __init__(self, num_nodes, vertices, indptr, partners, weights, stats, comm):
        self.num_nodes = num_nodes
        self.vertices = vertices
        self.indptr = indptr
        self.partners = partners
        self.weights = weights
        self.stats = stats
        self.comm = comm

    @property
    def mate(self):
        """Partner of each owned vertex, -1 if none (matchings, b = 1 only)."""
        deg = np.diff(self.indptr)
        if deg.size and deg.max() > 1:
            raise ValueError("mate needs a matching (b = 1); use partners / edges()")
        out = np.full(self.vertices.shape[0], -1, np.int64)
        out[deg == 1] = self.partners
        return out

    def edges(self):
        """(u, v, w) of the matched edges whose smaller end u this rank owns:
        over all ranks, every matched edge exactly once."""
        u = np.repeat(self.vertices, np.diff(self.indptr))
        up = self.partners > u
        return u[up], self.partners[up], self.weights[up]

    def size(self):
        """Number of matched edges (collective)."""
        return allreduce_sum(self.comm, int(self.edges()[0].shape[0]), "size()")

    def weight(self):
        """Total weight of the matched edges (collective; summed per rank, then
        over ranks, so the last bits may differ from a sequential sum)."""
        w = np.array([self.edges()[2].sum()], np.float64)
        return float(allreduce(self.comm, w, "sum", "weight()")[0])

    def gather(self, root=0):
        """(src, dst, weight) arrays of the whole matching, src < dst, sorted, on
        ``root``; None elsewhere (collective)."""
        parts = gather(self.comm, self.edges(), root, "gather()")
        if self.comm.rank != root:
            return None
        u = np.concatenate([p[0] for p in parts])
        v = np.concatenate([p[1] for p in parts])
        w = np.concatenate([p[2] for p in parts])
        o = np.lexsort((v, u))
        return u[o], v[o], w[o]

    def gather_mate(self, root=0):
        """The global mate array (length num_nodes, -1 = unmatched) on ``root``;
        None elsewhere (collective; matchings only)."""
        mine = (self.vertices, check(self.comm, lambda: self.mate))  # b > 1 anywhere: all raise
        parts = gather(self.comm, mine, root, "gather_mate()")
        if self.comm.rank != root:
            return None
        out = np.full(self.num_nodes, -1, np.int64)
        for v, m in parts:
            out[v] = m
        return out

    def write(self, path):
        """Write the partners of this rank's owned vertices, one row
        ``vertex, partner, weight`` per pair (collective). Returns this rank's
        file name.

        - ``*.parquet``: a dataset directory, one ``part-<rank>.parquet`` per
          rank (5 digits) and a ``_SUCCESS`` file, as Spark writes it; read it
          whole with ``pyarrow.dataset``, pandas or Spark. Needs a folder that
          every rank sees. An existing result there is replaced.
        - otherwise one file per rank: ``{rank}`` in ``path`` is replaced by
          the rank, else ``.<rank>`` is appended; ``*.npy`` paths get a float64
          array of rows (vertex, partner, weight), which
          :func:`read_edges_npy` reads back; others CSV lines with a header.

        All or nothing: every rank writes under a hidden temporary name beside
        its target, and the names become final only once every rank has
        written its whole part, so a failure on any rank (an error, a full
        disk, a rank that dies) leaves no file or dataset under a final name and
        one already there as it was. An error on any rank raises
        DistributedError on every rank."""
        u = np.repeat(self.vertices, np.diff(self.indptr))
        cols = {"vertex": u, "partner": self.partners, "weight": self.weights}
        return write_table(self.comm, path, cols)

    def __repr__(self):
        return (
            f"<DistributedMatching rank {self.comm.rank}/{self.comm.size}: "
            f"{self.vertices.shape[0]} owned vertices, {self.partners.shape[0]} partner entries>"
        )


def write_table(comm, path, columns):
    """Each rank's ``columns`` (a dict of equal-length arrays, in order) to
    ``path``, all or nothing, as :meth:`DistributedMatching.write` describes
    (collective); ``.npy`` files get one row per entry, int64 when every
    column is integer, else float64. Returns this rank's file name."""
    path = os.fspath(path)
    if _is_dataset(path):
        from nx_gpumatch.distributed.parquet import write_dataset

        return write_dataset(comm, path, columns)
    rank = str(comm.rank)
    name = path.replace("{rank}", rank) if "{rank}" in path else f"{path}.{rank}"
    folder, base = os.path.split(name)
    tmp = os.path.join(folder, f".{base}.{os.getpid()}.tmp")
    err = None
    _faults.unfinished(tmp)
    try:
        if path.replace("{rank}", "").lower().endswith(".npy"):
            ints = all(np.issubdtype(c.dtype, np.integer) for c in columns.values())
            rows = np.column_stack(list(columns.values())).astype(np.int64 if ints else np.float64)
            with open(tmp, "wb") as f:
                np.save(f, rows)  # a file object: no .npy added to the name
        else:
            with open(tmp, "w") as f:
                _write_rows(f, columns)
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        err = exc
    try:
        agree(comm, err)  # every rank has its whole file, or none renames
        err = None
        try:
            os.replace(tmp, name)
        except OSError as exc:
            err = exc
        agree(comm, err)
    except DistributedError:
        _remove(tmp)
        raise
    finally:
        _faults.finished(tmp)
    return name


def _is_dataset(path):
    return "{rank}" not in path and path.rstrip("/" + os.sep).lower().endswith(".parquet")


def _write_rows(f, columns):
    f.write(",".join(columns) + "\n")
    for row in zip(*(c.tolist() for c in columns.values())):
        f.write(",".join(map(repr, row)) + "\n")


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass  # never written, or already renamed
