"""MPI plumbing shared by the distributed engines: the lazy mpi4py import,
collective validation, and the two exchange patterns (all-to-all for the
redistribution, sparse neighbour exchange for supersteps)."""

import pickle
import sys
import time
import traceback

import numpy as np

from nx_gpumatch.distributed import _faults


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
    _faults.get_timeout()  # a bad NX_GPUMATCH_MPI_TIMEOUT fails here, before any wait
    return mpi().COMM_WORLD if comm is None else comm


def agree(comm, error):
    """Collective check: ``error`` is this rank's message or None. If any rank
    has one, every rank raises DistributedError naming the first failing rank,
    so no rank is left waiting in a later collective call."""
    errors = allgather(comm, None if error is None else str(error), "a check of the arguments")
    for r, msg in enumerate(errors):
        if msg is not None:
            raise DistributedError(msg if comm.size == 1 else f"rank {r}: {msg}")


def same(comm, what, value, *, unless_none=False):
    """Collective check that ``value`` (a small picklable summary of an
    argument) is equal on every rank: ranks that disagree on a collective
    argument would wait on each other or compute different graphs. Every
    rank sees the same values, so every rank raises the same
    DistributedError. ``unless_none``: ranks whose value is None take part
    without being compared (a form of the argument that is per rank)."""
    values = allgather(comm, value, f"a comparison of {what} across ranks")
    ranks = [r for r, v in enumerate(values) if not (unless_none and v is None)]
    for r in ranks:
        if values[r] != values[ranks[0]]:
            first = ranks[0]
            raise DistributedError(
                f"{what} differs across ranks: rank {first} has {values[first]!r}, "
                f"rank {r} has {values[r]!r}"
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

        traceback.print_exc()
        _faults.remove_unfinished()
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


def poll(done, comm, what, *, bulk=False):
    """Wait until ``done()`` is true, yielding the core meanwhile. Every wait of
    the engine goes through here, so that a peer that has exited, or a wait
    past the timeout, ends the job with a message (see ``_faults``). ``bulk``:
    a large transfer, which moves only while it is polled: spin, as a blocking
    MPI call would, instead of sleeping between polls."""
    if done():
        return
    watch = _faults.Watch(comm, what)
    spins = 0
    every = 256 if bulk else 16
    while not done():
        spins += 1
        if spins % every == 0 and watch.check(done):
            return
        if not bulk:
            _backoff(spins)


def wait(req, comm, what="a collective call", *, bulk=False):
    """Wait for one request (see ``poll``)."""
    poll(req.Test, comm, what, bulk=bulk)


def wait_all(reqs, comm, what="messages to neighbour ranks"):
    """Wait for a list of requests (see ``poll``)."""
    MPI = mpi()
    poll(lambda: MPI.Request.Testall(reqs), comm, what)


def allreduce(comm, values, op, what="a collective call"):
    """Element-wise reduction (``op``: "sum", "max") of an int64 or float64
    array over the ranks, non-blocking and polled."""
    MPI = mpi()
    a = np.ascontiguousarray(values)
    out = np.empty_like(a)
    wait(comm.Iallreduce(a, out, op={"sum": MPI.SUM, "max": MPI.MAX}[op]), comm, what)
    return out


def allreduce_sum(comm, value, what="a collective call"):
    """Sum of an int over the ranks."""
    return int(allreduce(comm, np.array([value], np.int64), "sum", what)[0])


def allreduce_max(comm, value, what="a collective call"):
    """Largest of an int or float over the ranks."""
    dtype = np.float64 if isinstance(value, float) else np.int64
    out = allreduce(comm, np.array([value], dtype), "max", what)[0]
    return float(out) if dtype is np.float64 else int(out)


def exscan_sum(comm, value, what="a collective call"):
    """Sum of an int over the lower ranks (0 on rank 0)."""
    if comm.size == 1:
        return 0
    MPI = mpi()
    a = np.array([value], np.int64)
    out = np.zeros(1, np.int64)
    wait(comm.Iexscan(a, out, op=MPI.SUM), comm, what)
    return 0 if comm.rank == 0 else int(out[0])


def _pickled_parts(comm, obj, root, what):
    """Pickle ``obj`` and move every rank's bytes to ``root`` (None: to all)."""
    MPI = mpi()
    data = np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), np.uint8)
    size = np.array([data.shape[0]], np.int64)
    sizes = np.empty(comm.size, np.int64)
    if root is None:
        wait(comm.Iallgather(size, sizes), comm, what)
    else:
        wait(comm.Igather(size, sizes if comm.rank == root else None, root=root), comm, what)
    if root is not None and comm.rank != root:
        wait(comm.Igatherv([data, MPI.BYTE], None, root=root), comm, what, bulk=True)
        return None
    displs = np.zeros(comm.size, np.int64)
    np.cumsum(sizes[:-1], out=displs[1:])
    buf = np.empty(int(sizes.sum()), np.uint8)
    spec = [buf, (sizes, displs), MPI.BYTE]
    if root is None:
        wait(comm.Iallgatherv([data, MPI.BYTE], spec), comm, what, bulk=True)
    else:
        wait(comm.Igatherv([data, MPI.BYTE], spec, root=root), comm, what, bulk=True)
    return [pickle.loads(buf[d : d + k].tobytes()) for d, k in zip(displs, sizes)]


def allgather(comm, obj, what="a collective call"):
    """Every rank's ``obj`` (picklable), in rank order, on every rank."""
    if comm.size == 1:
        return _pickled_parts(comm, obj, None, what)
    # the process ids ride along: a peer killed later is then seen to be gone
    parts = _pickled_parts(comm, (_faults.identity(), obj), None, what)
    _faults.note_peers(comm, [ident for ident, _ in parts])
    return [part for _, part in parts]


def gather(comm, obj, root=0, what="a collective call"):
    """Every rank's ``obj`` on ``root``, in rank order; None elsewhere."""
    return _pickled_parts(comm, obj, root, what)


def alltoallv(comm, send, dest, width):
    """Send row i of the int64 array ``send`` (k x width) to rank ``dest[i]``;
    returns the rows this rank received (rank order, order within a rank kept)."""
    P = comm.size
    # A stable sort of small integers is a radix sort: linear, not m log m.
    small = np.uint16 if P <= 1 << 16 else np.int64
    order = np.argsort(dest.astype(small, copy=False), kind="stable")
    send = np.ascontiguousarray(send[order], np.int64)
    return alltoallv_grouped(comm, send, np.bincount(dest, minlength=P), width)


def alltoallv_grouped(comm, send, counts, width):
    """:func:`alltoallv` of rows already grouped by destination rank:
    ``counts[r]`` rows for rank r, in rank order."""
    MPI = mpi()
    P = comm.size
    send = np.ascontiguousarray(send, np.int64)
    counts = np.asarray(counts, np.int64)
    rcounts = np.empty(P, np.int64)
    wait(comm.Ialltoall(counts, rcounts), comm, "the redistribution of the edges")
    recv = np.empty((int(rcounts.sum()), width), np.int64)
    sc = counts * width
    rc = rcounts * width
    sd = np.zeros(P, np.int64)
    rd = np.zeros(P, np.int64)
    np.cumsum(sc[:-1], out=sd[1:])
    np.cumsum(rc[:-1], out=rd[1:])
    req = comm.Ialltoallv([send, (sc, sd), MPI.INT64_T], [recv, (rc, rd), MPI.INT64_T])
    wait(req, comm, "the redistribution of the edges", bulk=True)
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

        # Probe the awaited ranks only: a neighbour may already have posted
        # its next batch (exchanges of two Neighbours objects can follow one
        # another with the same tag); MPI keeps each sender's messages in
        # order, so one message per neighbour is this step's.
        def arrived():
            return any(self.comm.Iprobe(source=r, tag=self._tag, status=status) for r in left)

        while left:
            poll(arrived, self.comm, "a superstep's messages from neighbour ranks")
            src = status.Get_source()
            buf = np.empty(status.Get_count(MPI.INT64_T), np.int64)
            self.comm.Recv(buf, source=src, tag=self._tag)
            left.discard(src)
            yield src, buf

    def exchange(self, batches):
        """Blocking form: {rank: received array}."""
        reqs = self.post(batches)
        got = dict(self.arrivals())
        wait_all(reqs, self.comm)
        return got
