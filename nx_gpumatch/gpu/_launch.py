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
CuPy passes them). A parameter of a struct type declared in the kernel file
or its headers (a "state bundle") is passed as a dict of its fields by name,
each held to the same rules; both back ends pack it in the struct's C layout
(:func:`nx_gpumatch.gpu._source.pack_struct`).
"""

from __future__ import annotations

import threading

import numpy as np

from nx_gpumatch.gpu import _strict
from nx_gpumatch.gpu._emulate import EmuModule
from nx_gpumatch.gpu._source import (
    check_args,
    define_options,
    kernel_source,
    kernels_dir,
    keyed_source,
    pack_struct,
    parse_kernels,
    problem_defines,
    struct_values,
)

__all__ = [
    "BACKENDS",
    "NVRTC_OPTIONS",
    "ARCHITECTURES",
    "architectures",
    "nvrtc_options",
    "get_module",
    "array_module",
    "on_device",
    "bincount",
    "to_host",
    "check_args",
    "row_classes",
]

BACKENDS = ("cupy", "emulate")
# Grid-stride kernels need no more blocks than this (tests patch it per module).
MAX_GRID = 4096
# An empty packed (rank << 32 | partner) slot of the Suitor-style words: the
# largest rank, so every real offer beats it.
EMPTY_WORD = np.uint64(0x7FFFFFFF_FFFFFFFF)
# Targets the NVRTC test compiles for. CUDA 12.9 deprecates sm_70 (Volta) and
# warns for every compile, so it is tested only with an older NVRTC.
ARCHITECTURES = ("sm_70", "sm_80", "sm_90")
DEPRECATED_SINCE = {"sm_70": (12, 9)}
# Used both by CuPy at run time and by the NVRTC compile test.
NVRTC_OPTIONS = ("--std=c++17",)


def architectures(nvrtc_version):
    """The targets of ARCHITECTURES that an NVRTC of ``nvrtc_version``
    (major, minor) compiles without a deprecation warning."""
    v = tuple(nvrtc_version)
    return tuple(a for a in ARCHITECTURES if v < DEPRECATED_SINCE.get(a, (10**6,)))


def nvrtc_options(problem=None, defines=None):
    """NVRTC options for ``kernels/<problem>.cu``: the common ones, the include
    path of ``common.cuh`` and the problem's ``-D`` defines."""
    if defines is None:
        defines = problem_defines(problem) if problem else {}
    return NVRTC_OPTIONS + (f"-I{kernels_dir()}",) + define_options(defines)


def array_module(backend="cupy"):
    """``cupy`` for the GPU back end; for the emulation NumPy made as strict as
    CuPy (:mod:`nx_gpumatch.gpu._strict`), so host code that only NumPy
    accepts fails in CI."""
    _check_backend(backend)
    if backend == "cupy":
        import cupy

        return cupy

    return _strict


def on_device(xp):
    """Is ``xp`` CuPy (rather than the emulation's array module)?"""
    return getattr(xp, "__name__", None) == "cupy"


def bincount(xp, x, minlength, weights=None):
    """``xp.bincount(x, weights, minlength)``, also for an empty ``x``, where
    CuPy up to 14.1 raises ValueError (NumPy returns zeros): int64 counts,
    float64 sums, ``minlength`` long at least."""
    if x.shape[0] == 0:
        return xp.zeros(minlength, xp.int64 if weights is None else xp.float64)
    return xp.bincount(x, weights=weights, minlength=minlength)


def to_host(a):
    """A NumPy array from a CuPy or NumPy array."""
    get = getattr(a, "get", None)
    return get() if callable(get) else np.asarray(a)


def row_classes(xp, lengths, widths, ids=None):
    """Rows grouped by the threads ``widths`` gives them: ``widths`` is
    ((longest row, threads per row), ..., (None, threads for the rest)) in
    increasing lengths. Returns [(threads, rows)] for the non-empty classes,
    rows an int32 device array (``ids[...]`` when ids is given, else
    positions)."""
    out = []
    lo = -1
    for hi, width in widths:
        sel = lengths > lo if hi is None else (lengths > lo) & (lengths <= hi)
        idx = xp.flatnonzero(sel)
        if idx.shape[0]:
            rows = ids[idx] if ids is not None else idx
            out.append((width, xp.ascontiguousarray(rows.astype(xp.int32))))
        lo = hi
    return out


def _check_backend(backend):
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")


_modules = {}
_modules_lock = threading.Lock()


def get_module(problem, backend="cupy", defines=None):
    """The compiled kernels of ``kernels/<problem>.cu`` (built once per process
    and set of defines; by default the problem's, see ``problem_defines``).

    Returns an object whose ``get_function(name)`` gives a callable
    ``kernel(grid, block, args, shared_mem=0)``.
    """
    _check_backend(backend)
    defines = problem_defines(problem) if defines is None else dict(defines)
    key = (problem, backend, define_options(defines))
    with _modules_lock:
        mod = _modules.get(key)
        if mod is None or getattr(mod, "poisoned", None):
            if backend == "cupy":
                mod = _CupyModule(problem, defines)
            else:
                mod = EmuModule(problem, defines=defines, device_arrays=True)
            _modules[key] = mod
        return mod


class _CupyModule:
    def __init__(self, problem, defines):
        import cupy

        self.problem = problem
        src = kernel_source(problem)
        self.kernels = parse_kernels(src)
        self._raw = cupy.RawModule(
            code=keyed_source(src), options=nvrtc_options(problem, defines), backend="nvrtc"
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
        if any(p.is_struct for p in self.params):
            args = tuple(
                _device_struct(p, a) if p.is_struct else a for p, a in zip(self.params, args)
            )
        self.raw(grid, block, args, shared_mem=shared_mem)


def _device_struct(p, a):
    """A struct argument for CuPy: a NumPy array of one record, which
    ``RawKernel`` passes by value (its bytes), pointer fields holding the
    arrays' device addresses."""
    return pack_struct(p, struct_values(p.name, p, a), lambda f, x: x.data.ptr)
