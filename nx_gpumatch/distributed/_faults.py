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
- a rank killed by a signal or ended by ``os._exit`` sends no notice, and
  mpiexec's own clean-up misses it now and then (MPICH's Hydra sometimes
  reads a dead rank's exit code as 0 and leaves the others running). Each
  rank learns the process ids of the peers it can see (same machine, same
  pid namespace) in the engine's gathers; a rank waiting for a peer whose
  process is gone aborts the job with a message. Peers on other machines
  still depend on mpiexec;
- with :func:`set_timeout` (or ``NX_GPUMATCH_MPI_TIMEOUT=<seconds>``) a rank
  that waits longer than that in one of the engine's calls aborts the job.
"""

import atexit
import os
import shutil
import sys
import time

__all__ = ["EXIT_TAG", "set_timeout", "get_timeout"]

EXIT_TAG = 32766  # every MPI allows tags up to 32767
# A departed rank may have finished its part of the call just before leaving;
# the call then completes here without it, at once. Past this, it never will.
GRACE = 2.0
ABORT_PAUSE = 0.5
LOOK_EVERY = 0.25  # seconds between looks at the peers' processes in one wait

_timeout = []  # [seconds or None] once set, else read from the environment
_departed = set()  # COMM_WORLD ranks that have announced their exit
_pids = {}  # COMM_WORLD rank -> process id, for the peers this rank can see
_identity = []  # [this process's identity()] once computed
_unfinished = {}  # this rank's temporary outputs (path -> is a folder), removed on abort


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


def unfinished(path, folder=False):
    """Note a temporary output of this rank, to be removed if the job is
    aborted before :func:`finished` (an abort ends the process at once)."""
    _unfinished[path] = folder


def finished(path):
    _unfinished.pop(path, None)


def remove_unfinished():
    for path, folder in list(_unfinished.items()):
        try:
            shutil.rmtree(path) if folder else os.remove(path)
        except OSError:
            pass
    _unfinished.clear()


def abort(comm, message):
    """Print why and end every rank of the job."""
    remove_unfinished()
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


def _translate(MPI, source, ranks, target):
    """``ranks`` of communicator ``source`` as ranks of ``target`` (UNDEFINED
    where a process is not in it)."""
    sg, tg = source.Get_group(), target.Get_group()
    try:
        return [int(r) for r in MPI.Group.Translate_ranks(sg, ranks, tg)]
    finally:
        sg.Free()
        tg.Free()


def departed(comm):
    """Ranks of ``comm`` that have announced their exit."""
    MPI = sys.modules["mpi4py.MPI"]
    world = MPI.COMM_WORLD
    _receive_notices(world, MPI)
    if not _departed:
        return []
    ranks = _translate(MPI, world, sorted(_departed), comm)
    return [r for r in ranks if r != MPI.UNDEFINED]


def identity():
    """(machine boot and pid namespace, process id) of this process: two
    processes whose first parts are equal can look up each other's pids.
    None where that is not possible (not Linux)."""
    if not _identity:
        try:
            with open("/proc/sys/kernel/random/boot_id") as f:
                boot = f.read().strip()
            ns = os.stat("/proc/self/ns/pid")
            _identity.append(((boot, ns.st_dev, ns.st_ino), os.getpid()))
        except OSError:
            _identity.append(None)
    ident = _identity[0]
    # a fork has the parent's key but its own pid
    return None if ident is None else (ident[0], os.getpid())


def note_peers(comm, idents):
    """Remember the pids of the ranks of ``comm`` in this process's pid
    namespace (``idents``: every rank's :func:`identity`, in rank order)."""
    mine = identity()
    MPI = sys.modules.get("mpi4py.MPI")
    if mine is None or MPI is None or comm.Is_inter():
        return
    world = MPI.COMM_WORLD
    me = world.Get_rank()
    ranks = _translate(MPI, comm, list(range(comm.Get_size())), world)
    for w, ident in zip(ranks, idents):
        if w not in (MPI.UNDEFINED, me) and ident is not None and ident[0] == mine[0]:
            _pids[w] = ident[1]


def _running(pid):
    """False once process ``pid`` has ended (gone, or a zombie not yet reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X", b"x")


def vanished(comm):
    """Ranks of ``comm`` whose process has ended without an exit notice."""
    lost = sorted(w for w, pid in _pids.items() if w not in _departed and not _running(pid))
    if not lost:
        return []
    MPI = sys.modules["mpi4py.MPI"]
    ranks = _translate(MPI, MPI.COMM_WORLD, lost, comm)
    return [r for r in ranks if r != MPI.UNDEFINED]


class Watch:
    """Guards one wait of the engine: called now and then while it polls."""

    def __init__(self, comm, what):
        self.comm = comm
        self.what = what
        self.start = time.monotonic()
        self.look = self.start + LOOK_EVERY
        self.limit = get_timeout()

    def check(self, done):
        """True once ``done()``; aborts the job if the wait can never end."""
        if self.comm.Get_size() < 2:
            return False
        gone = departed(self.comm)
        if not gone and time.monotonic() >= self.look:
            self.look = time.monotonic() + LOOK_EVERY
            gone = vanished(self.comm)
        if gone:
            end = time.monotonic() + GRACE
            while time.monotonic() < end:
                if done():
                    return True
                time.sleep(1e-3)
            said = departed(self.comm)  # a notice may have come in meanwhile
            if said:
                how = "exited (sys.exit or the end of its script)"
            else:
                how = "ended without a word (killed, or os._exit)"
            who = ", ".join(map(str, said or gone))
            abort(
                self.comm,
                f"rank {who} {how} while this rank waits for it in {self.what}; "
                "it will never take part",
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
