"""Numba (CPU) engine. Kernels compile on first use and are cached on disk.

Small inputs of a family whose kernels are neither compiled in this process
nor in the disk cache run the same kernels interpreted (their Python source) instead of waiting seconds for the
compiler: see :func:`run`. Importing this package does not import Numba; the
kernel modules do.
"""

import contextlib
import contextvars
import os
import time
import types
import warnings

import numpy as np

from nx_gpumatch._validation import check_threads
from nx_gpumatch.config import get_config

# Inputs with fewer work items than this run the serial build of a
# :func:`kernel`: threads cannot pay off there, and a first call on a small
# input then compiles no parallel code (parallel builds compile several times
# slower). Tests set it to 0 to run the parallel builds on small inputs.
PARALLEL_MIN = 1 << 15

# None: kernels called from Python run compiled. A _Reached set: each kernel
# called from Python records itself in it and runs interpreted (its Python
# source), or, where the set says ``cached``, compiled when that needs no
# compiling (compiled in this process, or in Numba's disk cache). False:
# compiled, and :func:`run` may not switch to interpreted.
_INTERPRETING = contextvars.ContextVar("nx_gpumatch_interpreting", default=None)


class _Reached(set):
    """The kernels that Python code called in an :func:`interpreted` block
    (not the kernels those call); ``interpreted``: whether any of them ran
    its Python source rather than compiled code; ``cached``: whether compiled
    code at hand may run instead (see :func:`interpreted`)."""

    interpreted = False

    def __init__(self, cached):
        super().__init__()
        self.cached = cached


# Largest input that a family runs interpreted while its kernels are not
# compiled: edges (graphs), stored entries (bipartite: of the matrix; stable
# marriage: of both sides' lists). A first call on a medium input would wait
# for the whole compile (3-25 CPU s per family); up to these sizes the
# interpreted call costs at most about a quarter of it on random inputs (0.3-3 s
# on a loaded 2-core machine; see python -m nx_gpumatch.benchmark cold_start
# --limits, and --medium for first calls). Exact matching interpreted: 2.8 CPU s
# at 32k edges against a 10 s compile; Leiden: 3 s against 16-27 s.
INTERPRET_MAX = {
    "graph": 64000,  # building the CSR form
    "matching": 20000,
    "exact": 32000,
    "b_matching": 30000,
    "stable_marriage": 64000,
    "louvain": 32000,
    "leiden": 32000,
    "bipartite": 64000,
}
# Interpreted seconds a family may spend in one process; past them its next
# call compiles (many small calls are faster compiled).
INTERPRET_BUDGET = 2.0
_SPENT = {}  # family -> [kernels its interpreted calls reached, seconds]


def njit(*args, **options):
    """``numba.njit`` with all its call forms (``@njit``, ``@njit(cache=True,
    ...)``, ``njit(sig)(fn)``), making a dispatcher that also runs its Python
    source while :func:`interpreted` is on. Compiled code, the disk cache and
    calls between jitted functions are numba's, unchanged, except that given
    signatures compile at the first call instead of at import."""
    from nx_gpumatch.cpu._dispatch import adopt

    if args and not callable(args[0]):  # signature(s): compiled lazily
        sigs = args[0] if isinstance(args[0], list) else [args[0]]
        return lambda fn: adopt(_jit(fn, args[1:], options), sigs)
    if args:
        return adopt(_jit(args[0], args[1:], options))
    return lambda fn: adopt(_jit(fn, (), options))


def _jit(fn, args, options):
    """numba's dispatcher of fn; without a writable cache folder (numba tries
    NUMBA_CACHE_DIR, the package's own (see :mod:`nx_gpumatch.cpu._cache`), its
    __pycache__, then the user's cache) it compiles in each process instead of
    failing every call."""
    import numba

    from nx_gpumatch.cpu import _cache

    if options.get("cache"):
        _cache.install()
    try:
        return numba.njit(*args, **options)(fn)
    except RuntimeError as exc:
        if not options.get("cache") or "cannot cache" not in str(exc):
            raise
        if not _NO_CACHE:
            _NO_CACHE.append(fn.__name__)

            warnings.warn(
                "nx_gpumatch: numba finds no writable folder for its kernel cache, so kernels "
                "compile again in every process; set NUMBA_CACHE_DIR to a writable folder",
                RuntimeWarning,
                stacklevel=2,
            )
        return numba.njit(*args, **{**options, "cache": False})(fn)


_NO_CACHE = []  # the first kernel that could not be cached, once known


@contextlib.contextmanager
def interpreted(on=True, *, cached=False):
    """Kernels called from Python in this block run interpreted (``on=True``),
    or compiled with no switch to interpreted by :func:`run` (``on=False``).
    Interpreted kernels give the compiled kernels' results, only slower.
    ``cached=True``: a kernel whose compiled code for the call's argument
    types is at hand without compiling (in memory, or in Numba's disk cache,
    loaded then) runs compiled; :func:`run` asks for that."""
    token = _INTERPRETING.set(_Reached(cached) if on else False)
    try:
        if on:
            with np.errstate(over="ignore"):  # uint64 hashes wrap, as compiled
                yield
        else:
            yield
    finally:
        _INTERPRETING.reset(token)


def should_interpret(family, size):
    """True when a call of ``family`` on an input of ``size`` should run in an
    :func:`interpreted` block: the config allows it, the input is at most
    ``INTERPRET_MAX[family]``, the family has not used up its interpreted time,
    and not every kernel its earlier such calls called from Python is compiled
    in this process (unknown before the first call). In the block, each of
    those kernels still runs compiled when Numba's disk cache holds it, so a
    warm cache makes even the first small call compiled."""
    if not get_config().interpret_small or size > INTERPRET_MAX.get(family, -1):
        return False
    used, spent = _SPENT.get(family, (set(), 0.0))
    if spent >= INTERPRET_BUDGET:
        return False
    return not (used and all(d.signatures for d in used))


@contextlib.contextmanager
def run(family, size, n_threads=None, interpret=None):
    """:func:`threads` for one call of a family's kernels, interpreted when
    :func:`should_interpret` says so (and nothing decided it already).
    ``interpret``: that answer, asked once by a caller that runs one call in
    several steps (levels), so that a call which starts interpreted does not
    stop halfway to compile once the family's interpreted time is spent."""
    with threads(n_threads, size, family in SHARED_CORE_FAMILIES) as n:
        if interpret is None:
            interpret = should_interpret(family, size)
        if _INTERPRETING.get() is not None or not interpret:
            yield n
            return
        t = time.perf_counter()
        with interpreted(cached=True):
            try:
                yield n
            finally:
                reached = _INTERPRETING.get()
                rec = _SPENT.setdefault(family, [set(), 0.0])
                rec[0] |= reached
                if reached.interpreted:  # calls that only loaded cached kernels cost none
                    rec[1] += time.perf_counter() - t


# A parallel build compiles several times slower than its serial twin (on 2
# cores Louvain's sweeps took 39 s against 25), and on a medium input two
# threads save milliseconds. So while ``interpret_small`` is on, a call whose
# parallel build is neither compiled in this process nor in the disk cache
# runs the serial build (the results are the same) until the family's serial
# runs in this process have taken ``rent`` seconds (default PARALLEL_RENT), or
# the call is expected to take that long by itself; later calls compile the
# parallel build (a ski rental: threads save a fraction of the serial time, so
# the rent is a few times the compile). A thread count the caller chose,
# warmup and ``interpret_small=False`` compile at once.
PARALLEL_RENT = 10.0
_RENTED = {}  # family -> seconds its serial builds ran where parallel ones were wanted


def may_rent(family, expect=0.0, rent=PARALLEL_RENT):
    """Whether a call of ``family``, expected to run ``expect`` seconds, may
    run serial twins of parallel builds not at hand (see PARALLEL_RENT). A
    call made of several steps asks once, so that it never pays both builds'
    compiles."""
    if not get_config().interpret_small or _INTERPRETING.get() is False or _CHOSEN.get():
        return False
    return _RENTED.get(family, 0.0) + expect < rent


def at_hand(build, args):
    """Whether ``build`` (made by :func:`njit`) runs the positional ``args``
    without compiling; asking loads it from the disk cache when it is there.
    Compiled for any types counts (a kernel meets one set, and looking the
    call's up costs tens of microseconds on every call of a loop)."""
    return bool(build.signatures) or build._loads(args)


def serial_first(family, build, args, expect=0.0):
    """True when a call of ``family`` that wants the parallel ``build`` with
    ``args`` should run its serial twin instead (see PARALLEL_RENT)."""
    return may_rent(family, expect) and not at_hand(build, args)


@contextlib.contextmanager
def renting(family):
    """Charge the enclosed run of serial builds to ``family``'s rent (see
    PARALLEL_RENT), less the time it spent compiling them."""
    from numba.core import event

    compiling = [0.0]
    t = time.perf_counter()
    try:
        with event.install_timer("numba:compile", lambda s: compiling.__setitem__(0, s)):
            yield
    finally:
        ran = time.perf_counter() - t - compiling[0]
        _RENTED[family] = _RENTED.get(family, 0.0) + max(ran, 0.0)


def threads_for(size, n=None):
    """Threads for a call with ``size`` work items whose kernels start their
    thread team from jitted code (where :class:`Kernel` cannot pick a build):
    one below :data:`PARALLEL_MIN`, the rule by which a Kernel picks its serial
    build (starting the team there costs more than the work, and far more on a
    loaded machine); else ``n`` (None: the config's)."""
    n = check_threads(n)
    return 1 if size < PARALLEL_MIN else n


_POOL = []  # True once Numba's thread pool is started through num_threads


def num_threads():
    """``numba.get_num_threads()``, starting Numba's thread pool on the first
    call with idle OpenMP workers that sleep at once (``OMP_WAIT_POLICY=PASSIVE``
    for this start only, unless the user set a policy). The OpenMP default
    keeps a worker spinning for milliseconds after each parallel loop; on a
    core another process also needs, that worker takes the other process's
    time, and the next parallel loop then waits for the worker to be scheduled
    again: the package's 2-thread calls took several times their 1-thread time
    with two other busy processes on 2 cores, and the same with passive workers."""
    import numba

    if _POOL:
        return numba.get_num_threads()
    _POOL.append(True)
    if "OMP_WAIT_POLICY" in os.environ:
        return numba.get_num_threads()
    # The OpenMP runtime reads its settings when it loads, which is here; the
    # variable is taken back at once, so subprocesses and libraries never see it.
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        return numba.get_num_threads()
    finally:
        del os.environ["OMP_WAIT_POLICY"]


# True inside threads(n) with a count the caller chose: inner calls keep it.
_CHOSEN = contextvars.ContextVar("nx_gpumatch_threads_chosen", default=False)


# free_cores takes the least of SAMPLES readings SAMPLE_GAP seconds apart (a
# kernel thread runnable for microseconds is not a busy core), and a reading
# serves the calls of the next FRESH seconds.
SAMPLES = 3
SAMPLE_GAP = 50e-6
FRESH = 0.25
_LAST = [-1.0, None]  # time of the last reading, its result


def free_cores():
    """Cores no other process's task is running on now (at least 1), from
    Linux's count of runnable tasks (``/proc/loadavg``) less this process's
    own running threads (the one asking, and idle workers of OpenMP runtimes
    that spin); None where that cannot say: not Linux, or a process held to
    a subset of the machine's CPUs (the count is machine-wide)."""
    now = time.monotonic()
    if now - _LAST[0] < FRESH:
        return _LAST[1]
    try:
        cpus = len(os.sched_getaffinity(0))
        if cpus != os.cpu_count():
            return None
        others = cpus
        for i in range(SAMPLES):
            if i:
                time.sleep(SAMPLE_GAP)
            running, own = _runnable()
            others = min(others, max(0, running - own))
            if others == 0:
                break
    except (AttributeError, OSError, ValueError, IndexError):
        return None
    _LAST[:] = [now, max(1, cpus - others)]
    return _LAST[1]


def _runnable():
    """(runnable tasks on the machine, running threads of this process)."""
    with open("/proc/loadavg", "rb") as f:
        running = int(f.read().split()[3].split(b"/")[0])
    if running <= 1:  # the asking thread alone: no need to look further
        return running, 1
    own = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # the thread ended meanwhile
            continue
        own += stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3] == b"R"
    return running, max(own, 1)


# Families whose parallel loops hand out work dynamically and meet at few
# barriers: a thread on a core another process keeps busy still adds work
# there, so they take one thread more than the free cores. With one of two
# cores busy, two threads took 0.80-0.89x of one thread's time in stable
# marriage (six runs); bipartite matching 0.84-1.12x, Louvain and Leiden
# 1.05-1.07x, the matchings about one thread's: those keep to the free cores.
SHARED_CORE_FAMILIES = ("stable_marriage",)


@contextlib.contextmanager
def threads(n=None, size=None, shared_core=False):
    """Run the enclosed kernels with ``n`` Numba threads (default: the config's).

    Capped at the size of Numba's pool; results never depend on the count.
    With no count chosen (here, in the config or by an enclosing call), a
    call of ``size`` work items (None: unknown) of at least
    :data:`PARALLEL_MIN` takes only the cores no other process is running on
    (:func:`free_cores`): a thread on a core another process keeps busy makes
    every parallel loop wait for its turn there, so one core free runs faster
    on one thread than on two. Smaller calls run serial builds and do not ask.
    ``shared_core``: the call's loops gain from a thread on a shared core
    (:data:`SHARED_CORE_FAMILIES`): one thread more than the free cores.
    """
    import numba

    check_threads(n)
    if n is None:
        n = get_config().threads
    chosen = n is not None
    if n is None:
        have = num_threads()
        small = size is not None and size < PARALLEL_MIN
        free = None if _CHOSEN.get() or have < 2 or small else free_cores()
        if free is not None and shared_core:
            free += 1
        if free is None or free >= have:
            yield have
            return
        n = free
    old = num_threads()
    want = max(1, min(int(n), numba.config.NUMBA_NUM_THREADS))
    change = want != old  # setting it costs microseconds, a small call's whole budget
    if change:
        numba.set_num_threads(want)
    token = _CHOSEN.set(True) if chosen else None
    try:
        yield want
    finally:
        if token is not None:
            _CHOSEN.reset(token)
        if change:
            numba.set_num_threads(old)


@contextlib.contextmanager
def parallel_min(size):
    """Temporarily set :data:`PARALLEL_MIN` (``None``: leave it)."""
    global PARALLEL_MIN
    old = PARALLEL_MIN
    if size is not None:
        PARALLEL_MIN = int(size)
    try:
        yield
    finally:
        PARALLEL_MIN = old


class Kernel:
    """One Numba kernel with a serial and a parallel build, each compiled (and
    cached) only when first used. Loops written with ``prange`` run in parallel
    in the parallel build and as plain loops in the serial one, so both give the
    same result; the serial build is the one to call from other jitted code.

    ``k(*args)`` runs the parallel build when the largest array argument has
    at least :data:`PARALLEL_MIN` elements and more than one thread is set, else
    the serial one; ``k.run(size, *args)`` runs the build for a given work
    size, ``k.sized(size)`` picks one, and
    ``k.serial`` / ``k.parallel`` are the builds themselves.
    """

    def __init__(self, fn, options):
        options = dict(options)
        parallel = options.pop("parallel", True)  # True or a ParallelOptions
        self.__wrapped__ = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self.__module__ = fn.__module__
        self.serial = njit(cache=True, **options)(fn)
        self.parallel = twin(fn, "_parallel", fn.__globals__, parallel=parallel, **options)

    def __call__(self, *args):
        size = max((a.size for a in args if hasattr(a, "size") and hasattr(a, "shape")), default=0)
        return self.run(size, *args)

    def sized(self, size, floor=None):
        """The build for ``size`` work items: parallel from ``floor`` (None:
        :data:`PARALLEL_MIN`) with more than one thread set."""
        if size >= (PARALLEL_MIN if floor is None else floor) and num_threads() > 1:
            return self.parallel
        return self.serial

    def run(self, size, *args, floor=None):
        """``self.sized(size, floor)(*args)``, except that a parallel build
        not at hand gives way to the serial one while first use rents (see
        :func:`serial_first`; the rent is the kernel's module's)."""
        build = self.sized(size, floor)
        if build is self.parallel and serial_first(self.__module__, build, args):
            with renting(self.__module__):
                return self.serial(*args)
        return build(*args)


def twin(fn, suffix, space, **options):
    """A cached Numba build of ``fn`` under the name ``fn.__name__ + suffix``,
    reading its globals from ``space`` and compiled with ``options``: the one way
    the package makes a second build of a function (:class:`Kernel`'s parallel
    build, :func:`serial_builds`). Numba's disk cache is keyed by the qualified
    name and the signature, not by flags or globals, so each build needs a name
    of its own."""
    fn2 = types.FunctionType(
        fn.__code__, space, fn.__name__ + suffix, fn.__defaults__, fn.__closure__
    )
    fn2.__qualname__ = fn.__qualname__ + suffix
    fn2.__module__ = fn.__module__
    fn2.__doc__ = fn.__doc__
    return njit(cache=True, **options)(fn2)


def serial_builds(*dispatchers):
    """Serial builds of jitted functions that call one another: for each of
    ``dispatchers`` (made by :func:`njit`) a :func:`twin` compiled without
    ``parallel``, whose calls to any of the others reach their twins. A whole
    call tree then runs with no thread team at all (``prange`` is a plain
    loop), where even a one-thread team costs microseconds per parallel loop.
    A function has one serial build: one given to an earlier call keeps the
    twin made there (its calls reach that call's twins), and calls to it
    reach that twin. Returns the twins in the order given."""
    spaces = {}  # each module's globals, with the twins in place of the originals
    twins = {}
    for disp in dispatchers:
        if id(disp) in _SERIAL:
            twins[id(disp)] = _SERIAL[id(disp)][1]
            continue
        fn = disp.py_func
        space = spaces.setdefault(id(fn.__globals__), dict(fn.__globals__))
        twins[id(disp)] = _SERIAL.setdefault(id(disp), (disp, twin(fn, "_serial", space)))[1]
    for space in spaces.values():  # read at compile time, after this returns
        for name, value in space.items():
            if id(value) in twins:
                space[name] = twins[id(value)]
    return [twins[id(d)] for d in dispatchers]


_SERIAL = {}  # id(dispatcher) -> (dispatcher, its serial build)


def kernel(fn=None, **options):
    """Decorator making a :class:`Kernel` (``@njit(cache=True)`` plus ``options``;
    ``parallel=`` sets the parallel build's options)."""
    if fn is None:
        return lambda f: Kernel(f, options)
    return Kernel(fn, options)
