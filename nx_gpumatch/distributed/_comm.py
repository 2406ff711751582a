"""MPI plumbing shared by the distributed engines: the lazy mpi4py import,
collective validation, and the two exchange patterns (all-to-all for the
redistribution, sparse neighbour exchange for supersteps)."""

import sys
import time

import numpy as np


class DistributedError(ValueError):
    """Bad input found on some rank; raised on every rank with the same message."""


def mpi():
    """The ``mpi4py.MPI`` module, with an error that says how to install it."""
    try:
        from mpi4py import MPI
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            'the distributed engine needs mpi4py and an MPI library: pip install "nx-gpumatch[mpi]"'
        ) from exc
    return MPI


def get_comm(comm=None):
    return mpi().COMM_WORLD if comm is None else comm


def agree(comm, error):
    """Collective check: ``error`` is this rank's message or None. If any rank
    has one, every rank raises DistributedError naming the first failing rank,
    so no rank is left waiting in a later collective call."""
    errors = comm.allgather(None if error is None else str(error))
    for r, msg in enumerate(errors):
        if msg is not None:
            raise DistributedError(msg if comm.size == 1 else f"rank {r}: {msg}")


def same(comm, what, value):
    """Collective check that ``value`` (a small picklable summary of an
    argument) is equal on every rank: ranks that disagree on a collective
    argument would wait on each other or compute different graphs. Every
    rank sees the same values, so every rank raises the same
    DistributedError."""
    values = comm.allgather(value)
    for r, v in enumerate(values):
        if v != values[0]:
            raise DistributedError(
                f"{what} differs across ranks: rank 0 has {values[0]!r}, rank {r} has {v!r}"
            )


def check(comm, fn, *args, **kwargs):
    """Run ``fn`` on every rank; a ValueError/TypeError on any rank becomes the
    same DistributedError everywhere. Returns fn's result."""
    try:
        out = fn(*args, **kwargs)
        err = None
    except (ValueError, TypeError, OSError) as exc:
        out, err = None, exc
    except Exception as exc:  # e.g. from a user's callable: still fail everywhere
        out, err = None, f"{type(exc).__name__}: {exc}"
    agree(comm, err)
    return out


def abort_on_error(comm, fn, *args, **kwargs):
    """Run a collective phase; an unexpected exception on one rank would leave
    the others blocked in a receive, so it prints the error and aborts the job."""
    try:
        return fn(*args, **kwargs)
    except DistributedError:
        raise  # raised on every rank together: nobody is left waiting
    except Exception as exc:
        if comm.size == 1:
            raise
        import traceback

        traceback.print_exc()
        print(
            f"nx_gpumatch.distributed: rank {comm.rank} failed ({type(exc).__name__}: {exc}); "
            "aborting all ranks",
            file=sys.stderr,
            flush=True,
        )
        comm.Abort(1)
        raise


def _backoff(spins):
    # Blocking MPI calls busy-poll; with more ranks than cores (tests, small
    # machines) a waiting rank would take the core from the rank it waits for.
    # A short, growing sleep after a few polls costs little when cores are free.
    if spins > 20:
        time.sleep(min(1e-3, 2e-6 * spins))


def wait(req):
    """Wait for one request, yielding the core while it is pending."""
    spins = 0
    while not req.Test():
        spins += 1
        _backoff(spins)


def wait_all(reqs):
    """Wait for a list of requests, yielding the core while any is pending."""
    MPI = mpi()
    spins = 0
    while not MPI.Request.Testall(reqs):
        spins += 1
        _backoff(spins)


def allreduce_sum(comm, value):
    """Sum of an int over the ranks, waiting politely (see ``wait``)."""
    MPI = mpi()
    a = np.array([value], np.int64)
    out = np.zeros(1, np.int64)
    wait(comm.Iallreduce(a, out, op=MPI.SUM))
    return int(out[0])


def alltoallv(comm, send, dest, width):
    """Send row i of the int64 array ``send`` (k x width) to rank ``dest[i]``;
    returns the rows this rank received (rank order, order within a rank kept)."""
    MPI = mpi()
    P = comm.size
    order = np.argsort(dest, kind="stable")
    send = np.ascontiguousarray(send[order], np.int64)
    counts = np.bincount(dest, minlength=P).astype(np.int64)
    rcounts = np.empty(P, np.int64)
    comm.Alltoall(counts, rcounts)
    recv = np.empty((int(rcounts.sum()), width), np.int64)
    sc = counts * width
    rc = rcounts * width
    sd = np.zeros(P, np.int64)
    rd = np.zeros(P, np.int64)
    np.cumsum(sc[:-1], out=sd[1:])
    np.cumsum(rc[:-1], out=rd[1:])
    comm.Alltoallv([send, (sc, sd), MPI.INT64_T], [recv, (rc, rd), MPI.INT64_T])
    return recv


class Neighbours:
    """Sparse exchange with the ranks that own this rank's ghosts (the relation
    is symmetric: a cut edge is stored at both owners). Every superstep each rank
    sends one batch, possibly empty, to every neighbour, so a receiver knows when
    a superstep's messages are complete. Neighbours are at most one superstep
    apart, so the tag's parity keeps supersteps apart."""

    def __init__(self, comm, ranks):
        self.comm = comm
        self.ranks = [int(r) for r in ranks]
        self.step = 0

    def post(self, batches):
        """Start sending batches[r] (int64 arrays) to each neighbour r; returns
        the requests (wait on them after the receives)."""
        tag = 100 + (self.step & 1)
        self.step += 1
        self._tag = tag
        self._keep = [batches[r] for r in self.ranks]  # alive until the sends finish
        return [self.comm.Isend(b, dest=r, tag=tag) for r, b in zip(self.ranks, self._keep)]

    def arrivals(self):
        """Yield (rank, int64 array) for each neighbour's batch of the step just
        posted, in the order they arrive."""
        MPI = mpi()
        status = MPI.Status()
        left = set(self.ranks)
        while left:
            spins = 0
            while not self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=self._tag, status=status):
                spins += 1
                _backoff(spins)
            src = status.Get_source()
            buf = np.empty(status.Get_count(MPI.INT64_T), np.int64)
            self.comm.Recv(buf, source=src, tag=self._tag)
            left.discard(src)
            yield src, buf

    def exchange(self, batches):
        """Blocking form: {rank: received array}."""
        reqs = self.post(batches)
        got = dict(self.arrivals())
        wait_all(reqs)
        return got
