"""What keeps one rank's failure or early exit from leaving the others waiting.

MPI gives a rank no sign that a peer has gone: a rank whose peer raised or
called ``sys.exit`` before a collective call waits in it forever. Three guards,
set up when ``nx_gpumatch.distributed`` is imported (they act only inside an
MPI job of more than one process):

- an uncaught exception aborts the whole job (``sys.excepthook``), as
  ``python -m mpi4py`` does;
- a rank that exits (``sys.exit``, the end of its script) tells every other
  rank so on ``COMM_WORLD`` (tag :data:`EXIT_TAG`, reserved); a rank waiting in
  one of the engine's collective calls on a communicator holding the departed
  rank aborts the job with a message instead of waiting forever;
- with :func:`set_timeout` (or ``NX_GPUMATCH_MPI_TIMEOUT=<seconds>``) a rank
  that waits longer than that in one of the engine's calls aborts the job.
"""

import atexit
import os
import sys
import time

__all__ = ["EXIT_TAG", "set_timeout", "get_timeout"]

EXIT_TAG = 32766  # every MPI allows tags up to 32767
# A departed rank may have finished its part of the call just before leaving;
# the call then completes here without it, at once. Past this, it never will.
GRACE = 2.0
ABORT_PAUSE = 0.5

_timeout = []  # [seconds or None] once set, else read from the environment
_departed = set()  # COMM_WORLD ranks that have announced their exit


def _check_timeout(seconds, what):
    if seconds is None:
        return None
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        value = float("nan")
    if isinstance(seconds, bool) or not value > 0 or value == float("inf"):
        raise ValueError(f"{what} must be a positive number of seconds or None, got {seconds!r}")
    return value


def set_timeout(seconds):
    """Abort the job when a rank waits more than ``seconds`` in one of the
    engine's collective calls (for peers that failed, exited or hang outside
    it); None (the default) waits as long as it takes. Call it on every rank."""
    _timeout[:] = [_check_timeout(seconds, "the timeout")]


def get_timeout():
    """The timeout in seconds, or None: :func:`set_timeout`'s value, else the
    environment variable ``NX_GPUMATCH_MPI_TIMEOUT`` (unset or empty: None)."""
    if _timeout:
        return _timeout[0]
    text = os.environ.get("NX_GPUMATCH_MPI_TIMEOUT", "").strip()
    return _check_timeout(text or None, "NX_GPUMATCH_MPI_TIMEOUT")


def _live_mpi():
    """mpi4py's MPI module while a job of several processes is running, else None."""
    MPI = sys.modules.get("mpi4py.MPI")
    if MPI is None:
        return None
    try:
        if not MPI.Is_initialized() or MPI.Is_finalized() or MPI.COMM_WORLD.Get_size() < 2:
            return None
    except Exception:  # noqa: BLE001 - a broken MPI must not hide the original problem
        return None
    return MPI


def abort(comm, message):
    """Print why and end every rank of the job."""
    print(
        f"nx_gpumatch.distributed: rank {comm.Get_rank()}: {message}; aborting all ranks",
        file=sys.stderr,
        flush=True,
    )
    # mpiexec forwards a rank's output through its proxies, and an abort ends
    # them at once: without a pause the message was lost in about 1 run in 12.
    time.sleep(ABORT_PAUSE)
    comm.Abort(1)


def _receive_notices(world, MPI):
    """Take the exit notices that have arrived (a notice left unreceived makes
    MPI_Finalize fail) and note who sent them."""
    status = MPI.Status()
    while world.Iprobe(source=MPI.ANY_SOURCE, tag=EXIT_TAG, status=status):
        src = status.Get_source()
        world.Recv([bytearray(1), 0, MPI.BYTE], source=src, tag=EXIT_TAG)
        _departed.add(src)


def departed(comm):
    """Ranks of ``comm`` that have announced their exit."""
    MPI = sys.modules["mpi4py.MPI"]
    world = MPI.COMM_WORLD
    _receive_notices(world, MPI)
    if not _departed:
        return []
    gone = sorted(_departed)
    wg, cg = world.Get_group(), comm.Get_group()
    try:
        ranks = MPI.Group.Translate_ranks(wg, gone, cg)
    finally:
        wg.Free()
        cg.Free()
    return [int(r) for r in ranks if r != MPI.UNDEFINED]


class Watch:
    """Guards one wait of the engine: called now and then while it polls."""

    def __init__(self, comm, what):
        self.comm = comm
        self.what = what
        self.start = time.monotonic()
        self.limit = get_timeout()

    def check(self, done):
        """True once ``done()``; aborts the job if the wait can never end."""
        if self.comm.Get_size() < 2:
            return False
        gone = departed(self.comm)
        if gone:
            end = time.monotonic() + GRACE
            while time.monotonic() < end:
                if done():
                    return True
                time.sleep(1e-3)
            who = ", ".join(map(str, gone))
            abort(
                self.comm,
                f"rank {who} exited (sys.exit or the end of its script) while this rank "
                f"waits for it in {self.what}; it will never take part",
            )
        if self.limit is not None and time.monotonic() - self.start > self.limit:
            abort(
                self.comm,
                f"waited {self.limit:g} s in {self.what} for the other ranks (did one fail, "
                "exit or hang outside the engine?); the limit is set by "
                "nx_gpumatch.distributed.set_timeout or NX_GPUMATCH_MPI_TIMEOUT",
            )
        return False


def _excepthook(exc_type, exc, tb, _previous=sys.excepthook):
    _previous(exc_type, exc, tb)
    MPI = _live_mpi()
    if MPI is not None and not hasattr(sys, "ps1"):  # not at an interactive prompt
        abort(
            MPI.COMM_WORLD,
            f"uncaught {exc_type.__name__}; the other ranks would wait for this one forever",
        )


def _at_exit():
    """Tell every other rank that this one is leaving; a peer that waits for it
    in the engine then stops instead of waiting forever. Then take the
    others' notices: at the end of a job every rank leaves at about the same
    time; a rank still at work gets this one's notice when it leaves itself."""
    MPI = _live_mpi()
    if MPI is None:
        return
    world = MPI.COMM_WORLD
    me = world.Get_rank()
    empty = bytearray(1)
    others = [r for r in range(world.Get_size()) if r != me]
    reqs = [world.Isend([empty, 0, MPI.BYTE], dest=r, tag=EXIT_TAG) for r in others]
    end = time.monotonic() + GRACE  # never hold up the exit for long
    while time.monotonic() < end:
        _receive_notices(world, MPI)
        if len(_departed) >= len(others) and MPI.Request.Testall(reqs):
            break
        time.sleep(1e-3)


def install():
    """Set up the guards once (mpi4py finalizes after Python's atexit calls, so
    the notices go out while MPI still works)."""
    if getattr(sys.excepthook, "__module__", None) != __name__:
        sys.excepthook = _excepthook
    atexit.unregister(_at_exit)
    atexit.register(_at_exit)
