"""Numba (CPU) engine. Kernels compile on first use and are cached on disk."""

import contextlib


@contextlib.contextmanager
def threads(n=None):
    """Run the enclosed kernels with ``n`` Numba threads (default: the config's).

    Capped at the size of Numba's pool; results never depend on the count.
    """
    import numba

    from nx_gpumatch.config import get_config

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
