"""Numba (CPU) engine. Kernels compile on first use and are cached on disk.

Importing this package does not import Numba; the kernel modules do.
"""

import contextlib
import types

# Inputs with fewer work items than this run the serial build of a
# :func:`kernel`: threads cannot pay off there, and a first call on a small
# input then compiles no parallel code (parallel builds compile several times
# slower). Tests set it to 0 to run the parallel builds on small inputs.
PARALLEL_MIN = 1 << 15


@contextlib.contextmanager
def threads(n=None):
    """Run the enclosed kernels with ``n`` Numba threads (default: the config's).

    Capped at the size of Numba's pool; results never depend on the count.
    """
    import numba

    from nx_gpumatch.config import check_threads, get_config

    check_threads(n)
    if n is None:
        n = get_config().threads
    if n is None:
        yield numba.get_num_threads()
        return
    old = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield numba.get_num_threads()
    finally:
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
    the serial one; ``k.sized(size)`` picks a build for a given work size, and
    ``k.serial`` / ``k.parallel`` are the builds themselves.
    """

    def __init__(self, fn, options):
        from numba import njit

        options = dict(options)
        parallel = options.pop("parallel", True)  # True or a ParallelOptions
        self.__wrapped__ = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self.serial = njit(cache=True, **options)(fn)
        # Numba's disk cache is keyed by the function's qualified name and
        # signature, not by its flags: the parallel build needs its own name.
        twin = types.FunctionType(
            fn.__code__, fn.__globals__, fn.__name__ + "_parallel", fn.__defaults__, fn.__closure__
        )
        twin.__qualname__ = fn.__qualname__ + "_parallel"
        twin.__module__ = fn.__module__
        twin.__doc__ = fn.__doc__
        self.parallel = njit(cache=True, parallel=parallel, **options)(twin)

    def __call__(self, *args):
        size = max((a.size for a in args if hasattr(a, "size") and hasattr(a, "shape")), default=0)
        return self.sized(size)(*args)

    def sized(self, size):
        import numba

        if size >= PARALLEL_MIN and numba.get_num_threads() > 1:
            return self.parallel
        return self.serial


def kernel(fn=None, **options):
    """Decorator making a :class:`Kernel` (``@njit(cache=True)`` plus ``options``;
    ``parallel=`` sets the parallel build's options)."""
    if fn is None:
        return lambda f: Kernel(f, options)
    return Kernel(fn, options)
