"""Loading and launching the CUDA kernels of ``kernels/<problem>.cu``.

One API for two back ends, so the same host code runs on a GPU and in CI:

* ``"cupy"``: the file is compiled once per process with ``cupy.RawModule``
  (NVRTC) and kernels run on the current CUDA device on CuPy arrays;
* ``"emulate"``: the same file is compiled as C++ with ``kernels/cuda_emu.h``
  and runs on the CPU on NumPy arrays, every block's threads concurrent.

A kernel is called like a CuPy ``RawKernel``: ``kernel(grid, block, args,
shared_mem=0)``. Both back ends check ``args`` against the kernel's parameter
list first, because a mismatch (an int64 array for an ``int*``, a Python int
for an ``int``) is silent corruption on the GPU: pass arrays of the declared
element type and scalars as NumPy scalars of the declared type (a Python int
may stand for a 64-bit integer, a float for a double, a bool for a bool, as
CuPy passes them).
"""

from __future__ import annotations

import threading

import numpy as np

from nx_gpumatch.gpu._source import kernel_source, kernels_dir, parse_kernels

__all__ = [
    "BACKENDS",
    "NVRTC_OPTIONS",
    "ARCHITECTURES",
    "get_module",
    "array_module",
    "to_host",
    "check_args",
]

BACKENDS = ("cupy", "emulate")
ARCHITECTURES = ("sm_70", "sm_80", "sm_90")
# Used both by CuPy at run time and by the NVRTC compile test.
NVRTC_OPTIONS = ("--std=c++17",)


def array_module(backend="cupy"):
    """``cupy`` for the GPU back end, ``numpy`` for the emulation."""
    _check_backend(backend)
    if backend == "cupy":
        import cupy

        return cupy
    return np


def to_host(a):
    """A NumPy array from a CuPy or NumPy array."""
    get = getattr(a, "get", None)
    return get() if callable(get) and not isinstance(a, np.ndarray) else np.asarray(a)


def _check_backend(backend):
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")


_modules = {}
_modules_lock = threading.Lock()


def get_module(problem, backend="cupy"):
    """The compiled kernels of ``kernels/<problem>.cu`` (built once per process).

    Returns an object whose ``get_function(name)`` gives a callable
    ``kernel(grid, block, args, shared_mem=0)``.
    """
    _check_backend(backend)
    key = (problem, backend)
    with _modules_lock:
        mod = _modules.get(key)
        if mod is None or getattr(mod, "poisoned", None):
            if backend == "cupy":
                mod = _CupyModule(problem)
            else:
                from nx_gpumatch.gpu._emulate import EmuModule

                mod = EmuModule(problem)
            _modules[key] = mod
        return mod


class _CupyModule:
    def __init__(self, problem):
        import cupy

        self.problem = problem
        src = kernel_source(problem)
        self.kernels = parse_kernels(src)
        self._raw = cupy.RawModule(
            code=src, options=NVRTC_OPTIONS + (f"-I{kernels_dir()}",), backend="nvrtc"
        )
        self._functions = {}

    def get_function(self, name):
        if name not in self.kernels:
            raise AttributeError(
                f"kernels/{self.problem}.cu has no kernel {name!r} (has: {', '.join(self.kernels)})"
            )
        fn = self._functions.get(name)
        if fn is None:
            fn = self._functions[name] = _CupyKernel(
                name, self.kernels[name], self._raw.get_function(name)
            )
        return fn


class _CupyKernel:
    def __init__(self, name, params, raw):
        self.name = name
        self.params = params
        self.raw = raw

    def __call__(self, grid, block, args, shared_mem=0):
        import cupy

        args = tuple(args)
        check_args(self.name, self.params, args, cupy)
        self.raw(grid, block, args, shared_mem=shared_mem)


# ------------------------------------------------------------ argument checks
def _dtype_fits(code, dtype):
    """Does an array of ``dtype`` fit a pointer to type ``code``?"""
    kind, size = code[0], int(code[1:])
    if kind == "v":
        return True
    if kind == "b":
        return dtype == np.bool_
    if kind == "u" and size == 1 and dtype == np.bool_:
        return True
    return dtype.kind == kind and dtype.itemsize == size


def check_args(name, params, args, xp):
    """Raise TypeError unless ``args`` match the kernel's parameters (see the
    module docstring for the rules)."""
    if len(args) != len(params):
        raise TypeError(
            f"kernel {name} takes {len(params)} arguments ({', '.join(p.name for p in params)}), got {len(args)}"
        )
    for i, (p, a) in enumerate(zip(params, args)):
        where = f"kernel {name}, argument {i} ({p.ctype} {p.name})"
        if p.code is None:
            continue  # a type the parser does not know: passed through unchecked
        if p.is_pointer:
            if a is None:
                continue
            if not isinstance(a, xp.ndarray):
                raise TypeError(f"{where}: expected a {xp.__name__} array, got {type(a).__name__}")
            if not a.flags.c_contiguous:
                raise TypeError(f"{where}: array must be C-contiguous")
            if p.code != "pp8" and not _dtype_fits(p.code[1:], a.dtype):
                raise TypeError(f"{where}: array dtype {a.dtype} does not match the parameter type")
            continue
        kind, size = p.code[0], int(p.code[1:])
        if isinstance(a, np.generic):
            dt = a.dtype
            if dt.kind != kind or dt.itemsize != size:
                raise TypeError(
                    f"{where}: got a numpy {dt}, expected a numpy scalar matching {p.ctype}"
                )
        elif isinstance(a, bool):
            if kind != "b":
                raise TypeError(f"{where}: got a bool")
        elif isinstance(a, int):
            # CuPy passes a Python int as a 64-bit signed integer
            if not (kind in "iu" and size == 8):
                np_name = {"i": "int", "u": "uint", "f": "float"}.get(kind, "?") + str(8 * size)
                raise TypeError(
                    f"{where}: a Python int is passed as 64 bits; pass numpy.{np_name}(...) instead"
                )
            if not -(2**63) <= a < 2**63:
                raise TypeError(f"{where}: {a} does not fit in 64 bits")
        elif isinstance(a, float):
            if not (kind == "f" and size == 8):
                raise TypeError(
                    f"{where}: a Python float is passed as a double; pass numpy.float32(...) instead"
                )
        else:
            raise TypeError(f"{where}: unsupported argument type {type(a).__name__}")
