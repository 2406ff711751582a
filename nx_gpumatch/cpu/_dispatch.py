"""The dispatcher class behind :func:`nx_gpumatch.cpu.njit` (imports Numba)."""

import threading

import numpy as np
from numba.core.registry import CPUDispatcher

from nx_gpumatch.cpu import _INTERPRETING


class Dispatcher(CPUDispatcher):
    """Numba's CPU dispatcher, plus one thing: a call from Python while
    :func:`nx_gpumatch.cpu.interpreted` is on runs the Python source
    (``py_func``) instead of compiled code, and compiles nothing.

    Jitted callers never reach this ``__call__`` (Numba types the dispatcher
    itself), so compiled code is unchanged; interpreted code calling another
    kernel through a module global reaches that kernel's ``__call__`` and stays
    interpreted.
    """

    def __call__(self, *args, **kwargs):
        used = _INTERPRETING.get()
        if used is None or used is False:
            return CPUDispatcher.__call__(self, *args, **kwargs)
        used.add(self)
        depth = getattr(_DEPTH, "n", 0)
        _DEPTH.n = depth + 1
        try:
            result = self.py_func(*args, **kwargs)
        finally:
            _DEPTH.n = depth
        return result if depth else _boxed(result)

    # Signatures given to njit compile on first use, not at import: an
    # interpreted call never needs them.
    _lazy_sigs = ()

    def _compile_lazy_sigs(self):
        sigs, self._lazy_sigs = self._lazy_sigs, ()
        if sigs:
            for sig in sigs:
                self.compile(sig)
            self.disable_compile()

    def get_call_template(self, args, kws):  # a jitted caller types a call
        self._compile_lazy_sigs()
        return super().get_call_template(args, kws)

    def _compile_for_args(self, *args, **kws):  # a call from Python
        self._compile_lazy_sigs()
        return super()._compile_for_args(*args, **kws)


_DEPTH = threading.local()  # nesting of interpreted kernel calls


def _boxed(result):
    """A result as compiled code hands it to Python: numpy scalars become
    int / float / bool (inside interpreted kernels they stay numpy scalars,
    which wrap and promote as the compiled code does)."""
    if isinstance(result, np.generic):
        return result.item()
    if type(result) is tuple:
        return tuple(x.item() if isinstance(x, np.generic) else x for x in result)
    return result


def adopt(disp, sigs=()):
    """Make a dispatcher that ``numba.njit`` built one of ours (same object),
    to be compiled for exactly ``sigs`` (if any) when first used."""
    if not isinstance(disp, CPUDispatcher):
        raise TypeError(f"njit made {type(disp).__name__}, not a CPU dispatcher")
    disp.__class__ = Dispatcher
    if sigs:
        disp._lazy_sigs = tuple(sigs)
    return disp
