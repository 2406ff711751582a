"""The dispatcher class behind :func:`nx_gpumatch.cpu.njit` (imports Numba)."""

import os
import threading

import numpy as np
from numba.core import errors, types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher

from nx_gpumatch.cpu import _INTERPRETING


class Dispatcher(CPUDispatcher):
    """Numba's CPU dispatcher, plus one thing: a call from Python while
    :func:`nx_gpumatch.cpu.interpreted` is on compiles nothing. It runs the
    Python source (``py_func``); with ``cached=True`` it runs compiled code
    instead where that is compiled for the arguments' types or Numba's disk
    cache holds it (loaded then).

    Jitted callers never reach this ``__call__`` (Numba types the dispatcher
    itself), so compiled code is unchanged; interpreted code calling another
    kernel through a module global reaches that kernel's ``__call__`` and stays
    interpreted. Only kernels called from Python are looked up in the cache:
    the kernels they call (helpers inlined into them, say) are compiled into
    their code and never cached on their own.
    """

    def __call__(self, *args, **kwargs):
        used = _INTERPRETING.get()
        if used is None or used is False:
            return CPUDispatcher.__call__(self, *args, **kwargs)
        depth = getattr(_DEPTH, "n", 0)
        if not depth:  # called from Python
            used.add(self)
            if used.cached and not kwargs and self._loads(args):
                return CPUDispatcher.__call__(self, *args)
            used.interpreted = True
        _DEPTH.n = depth + 1
        try:
            result = self.py_func(*args, **kwargs)
        finally:
            _DEPTH.n = depth
        return result if depth else _boxed(result)

    def _loads(self, args):
        """Whether a call with these (all positional) arguments runs compiled
        without compiling: compiled in this process, or loaded now from Numba's
        disk cache (what ``compile`` would load before compiling)."""
        if self._lazy_sigs or len(args) != self.py_func.__code__.co_argcount:
            return False  # given signatures, or defaults numba would fill in
        try:
            sig = tuple(self.typeof_pyval(a) for a in args)
        except Exception:  # noqa: BLE001 - an untypable argument: interpret
            return False
        with global_compiler_lock:
            if sig in self.overloads:
                return True
            # No index file: nothing of this kernel is on disk. Asking the cache
            # anyway would first set up Numba's compiler (a CPU second or so).
            index = getattr(getattr(self._cache, "_cache_file", None), "_index_path", None)
            if index is None or not os.path.exists(index):
                return False
            cres = self._cache.load_overload(sig, self.targetctx)
            if cres is None:
                return False
            self._cache_hits[sig] += 1
            if not cres.objectmode:
                self.targetctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
            self.add_overload(cres)
        return True

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
        # A constant argument (0, -1, True) arrives as a literal type, and numba
        # would compile one more copy of the callee for each pattern of
        # constants among its call sites; no kernel needs a constant's value
        # while typing, so the one copy for the plain types serves them all.
        plain = tuple(types.unliteral(a) for a in args)
        plain_kws = {k: types.unliteral(v) for k, v in kws.items()}
        if plain != tuple(args) or plain_kws != kws:
            try:
                return super().get_call_template(plain, plain_kws)
            except errors.TypingError:
                pass  # typing needs the constants after all
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
