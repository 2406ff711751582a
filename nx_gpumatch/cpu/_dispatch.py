"""The dispatcher class behind :func:`nx_gpumatch.cpu.njit` (imports Numba)."""

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
        return self.py_func(*args, **kwargs)


def adopt(disp):
    """Make a dispatcher that ``numba.njit`` built one of ours (same object)."""
    if not isinstance(disp, CPUDispatcher):
        raise TypeError(f"njit made {type(disp).__name__}, not a CPU dispatcher")
    disp.__class__ = Dispatcher
    return disp
