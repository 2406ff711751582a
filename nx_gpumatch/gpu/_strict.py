"""NumPy made as strict as CuPy: the array module the GPU engine's host code
gets in emulation (``array_module("emulate")``).

Where NumPy forgives what CuPy rejects, code that passes in CI fails on a
user's GPU. Here it fails in CI:

* only the names listed below exist (CuPy lacks much of NumPy), and each
  function takes only the parameters CuPy's takes (``CUPY_PARAMS``, the
  parameters common to CuPy 13 and 14; the tests compare them with the
  installed CuPy);
* ``bincount`` of an empty array raises ValueError, as CuPy's did up to 14.1
  (it took the ``max`` of the input first); host code calls
  :func:`nx_gpumatch.gpu._launch.bincount`, which returns the zeros itself;
* ``sort``/``argsort`` accept ``kind`` None or "stable" only, and are stable
  (CuPy's always are).

* arrays are :class:`ndarray`, a NumPy subclass that leaves the device as a
  CuPy array does: scalar indexing and reductions give 0-d arrays, not
  scalars; ``int()``, ``float()``, ``bool()``, ``.item()``, ``.tolist()`` are
  implicit transfers to the host, each a synchronisation on a GPU, counted by
  :func:`host_transfers`; there is no ``__index__`` (``range(a.sum())``
  fails on CuPy); an array made from host data is a copy (``asarray`` of a
  NumPy array), and ``.get()`` / :func:`nx_gpumatch.gpu._launch.to_host`
  give a host copy, so writes on one side never show on the other.

The emulated kernels take the arrays' memory as it is. :func:`device_memory`
measures the device memory host code would hold on a GPU (see there). What
this cannot catch: methods of NumPy arrays that CuPy's lack.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import sys
import tracemalloc

import numpy as np

# Function -> the parameters CuPy's takes; "*" separates the keyword-only ones.
CUPY_PARAMS = {
    "arange": ("start", "stop", "step", "dtype"),
    "argsort": ("a", "axis", "kind"),
    "array": ("obj", "dtype", "copy", "order", "subok", "ndmin", "*", "blocking"),
    "asarray": ("a", "dtype", "order", "*", "blocking"),  # copy= came with CuPy 14
    "ascontiguousarray": ("a", "dtype"),
    "bincount": ("x", "weights", "minlength"),
    "concatenate": ("tup", "axis", "out", "*", "dtype", "casting"),
    "count_nonzero": ("a", "axis"),
    "cumsum": ("a", "axis", "dtype", "out"),
    "diff": ("a", "n", "axis", "prepend", "append"),
    "empty": ("shape", "dtype", "order"),
    "empty_like": ("prototype", "dtype", "order", "subok", "shape"),
    "flatnonzero": ("a",),
    "full": ("shape", "fill_value", "dtype", "order"),
    "max": ("a", "axis", "out", "keepdims"),
    "min": ("a", "axis", "out", "keepdims"),
    "nonzero": ("a",),
    "ones": ("shape", "dtype", "order"),
    "repeat": ("a", "repeats", "axis"),
    "searchsorted": ("a", "v", "side", "sorter"),
    "sort": ("a", "axis", "kind"),
    "sum": ("a", "axis", "dtype", "out", "keepdims"),
    "unique": ("ar", "return_index", "return_inverse", "return_counts", "axis", "*", "equal_nan"),
    "where": ("condition", "x", "y"),
    "zeros": ("shape", "dtype", "order"),
    "zeros_like": ("a", "dtype", "order", "subok", "shape"),
}
# Ufuncs (CuPy's take NumPy's ufunc keywords) and types, passed through.
UFUNCS = ("abs", "bitwise_and", "bitwise_or", "isfinite", "isnan", "maximum", "minimum", "rint")
TYPES = (
    "bool_",
    "dtype",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "intp",
    "ndarray",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
)


class ndarray(np.ndarray):
    """A device array in emulation: NumPy memory with CuPy's rules for
    leaving the device (see the module notes)."""

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        # CuPy's reductions and ufuncs give arrays, 0-d ones included
        return np.asarray(arr).view(ndarray)

    def __getitem__(self, key):
        out = super().__getitem__(key)
        return out if isinstance(out, np.ndarray) else np.asarray(out).view(ndarray)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-dimensional array")
        return (self[i] for i in range(self.shape[0]))

    def _host(self, what):
        _note_transfer(what)
        return self.view(np.ndarray)

    def __int__(self):
        return int(self._host("int()"))

    def __float__(self):
        return float(self._host("float()"))

    def __complex__(self):
        return complex(self._host("complex()"))

    def __bool__(self):
        return bool(self._host("bool()"))

    def __index__(self):
        raise TypeError(
            "a CuPy array is not an index (CuPy arrays have no __index__): call int() on it"
        )

    def item(self, *args):
        return self._host(".item()").item(*args)

    def tolist(self):
        return self._host(".tolist()").tolist()

    def get(self):
        """A host copy (an explicit transfer, as ``cupy.ndarray.get``)."""
        return np.array(self.view(np.ndarray), copy=True)


class HostTransfers:
    """What :func:`host_transfers` counted: ``count`` implicit transfers to
    the host, and ``sites`` {(file, line, what): count} of the package's
    lines that made them."""

    def __init__(self):
        self.count = 0
        self.sites = {}


_COUNTERS = []


@contextlib.contextmanager
def host_transfers():
    """Count the implicit transfers of device arrays to the host in the block
    (``int()``, ``bool()``, ``.item()``, ... of an :class:`ndarray`): on a
    GPU each one waits for the device, so a count that grows with the input
    is a loop over device data in host code."""
    counter = HostTransfers()
    _COUNTERS.append(counter)
    try:
        yield counter
    finally:
        _COUNTERS.remove(counter)


_NUMPY_DIR = os.path.dirname(np.__file__)


def _note_transfer(what):
    if not _COUNTERS:
        return
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    if frame is not None and frame.f_code.co_filename.startswith(_NUMPY_DIR):
        return  # NumPy's own implementation of a function CuPy runs on the device
    site = (frame.f_code.co_filename, frame.f_lineno, what) if frame else ("?", 0, what)
    for counter in _COUNTERS:
        counter.count += 1
        counter.sites[site] = counter.sites.get(site, 0) + 1


def _device(x):
    """Results of this module as device arrays (tuples of them elementwise)."""
    if isinstance(x, ndarray):
        return x
    if isinstance(x, np.ndarray):
        return x.view(ndarray)
    if isinstance(x, tuple):
        return tuple(_device(v) for v in x)
    if isinstance(x, np.generic):
        return np.asarray(x).view(ndarray)
    return x


def _asarray(a, dtype=None, order=None, *, blocking=False):
    # data from the host is copied to the device, as CuPy copies it
    if isinstance(a, ndarray):
        return np.asarray(a, dtype=dtype, order=order)
    return np.array(a, dtype=dtype, order=order, copy=True)


def _array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
    host = not isinstance(obj, ndarray)
    return np.array(obj, dtype=dtype, copy=True if host else copy, order=order, ndmin=ndmin)


def _checked(name, params, fn):
    npos = params.index("*") if "*" in params else len(params)
    allowed = frozenset(p for p in params if p != "*")

    def call(*args, **kw):
        bad = sorted(set(kw) - allowed)
        if len(args) > npos or bad:
            raise TypeError(
                f"cupy.{name} takes ({', '.join(params)}): got {len(args)} positional "
                f"arguments{' and ' + ', '.join(bad) if bad else ''}"
            )
        return _device(fn(*args, **kw))

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"numpy.{name} with the parameters of cupy.{name}."
    return call


def _sort_kind(kind):
    if kind is not None and kind != "stable":
        raise ValueError("kind can only be None or 'stable' (CuPy sorts are stable)")


def _bincount(x, weights=None, minlength=None):
    if not isinstance(x, np.ndarray):
        raise TypeError(f"cupy.bincount takes an array, got {type(x).__name__}")
    if x.ndim != 1:
        raise ValueError("cupy.bincount takes a 1-D array")
    if x.dtype.kind == "f":
        raise TypeError("x must be int array")
    if x.size == 0:
        raise ValueError(
            "cupy.bincount of an empty array raises in CuPy up to 14.1 (NumPy returns "
            "zeros): call nx_gpumatch.gpu._launch.bincount"
        )
    return np.bincount(x, weights, 0 if minlength is None else minlength)


class DeviceMemory:
    """What :func:`device_memory` measured: ``peak`` and ``allocated`` bytes
    (``allocated``: live at the end, less live at the start)."""

    def __init__(self):
        self.base = 0
        self.sort_peak = 0
        self.peak = 0
        self.allocated = 0

    def _sort_scratch(self, nbytes):
        current = tracemalloc.get_traced_memory()[0]
        # builtins: this module's max is the array one
        self.sort_peak = builtins.max(self.sort_peak, current + nbytes)


_METERS = []


@contextlib.contextmanager
def device_memory():
    """Measure the bytes of the arrays host code allocates in the block, and
    their peak while live, as an estimate of what CuPy's memory pool would
    hold on a GPU.

    NumPy reports every array buffer to :mod:`tracemalloc` (views take none,
    as in CuPy); Python's own small objects count too (a few KB). A sort's
    working memory, untraced in NumPy, is added as CuPy's needs it: its
    radix sort takes a second buffer the size of what it sorts, and
    ``argsort`` sorts a copy of the keys with an int64 index (both
    doubled), and ``unique`` sorts a copy and masks it. Not counted:
    the pool's rounding of each block to 512 bytes, and blocks a pool keeps
    cached after they are freed."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    meter = DeviceMemory()
    tracemalloc.reset_peak()
    meter.base = tracemalloc.get_traced_memory()[0]
    _METERS.append(meter)
    try:
        yield meter
    finally:
        _METERS.remove(meter)
        current, peak = tracemalloc.get_traced_memory()
        meter.peak = builtins.max(peak, meter.sort_peak) - meter.base
        meter.allocated = current - meter.base
        if started:
            tracemalloc.stop()


def _note_sort(nbytes):
    for meter in _METERS:
        meter._sort_scratch(nbytes)


def _argsort(a, axis=-1, kind=None):
    _sort_kind(kind)
    if _METERS:
        _note_sort(2 * a.nbytes + 16 * a.size)  # index out, keys copy, 2 buffers
    return np.argsort(a, axis=axis, kind="stable")


def _sort(a, axis=-1, kind=None):
    _sort_kind(kind)
    if _METERS:
        _note_sort(2 * a.nbytes)  # the output and its second buffer
    return np.sort(a, axis=axis, kind="stable")


def _unique(ar, *args, **kw):
    if _METERS:
        _note_sort(2 * ar.nbytes + ar.size)  # a sorted copy, its second buffer, a mask
    return np.unique(ar, *args, **kw)


_OWN = {
    "bincount": _bincount,
    "argsort": _argsort,
    "sort": _sort,
    "unique": _unique,
    "asarray": _asarray,
    "array": _array,
}
for _name, _params in CUPY_PARAMS.items():
    globals()[_name] = _checked(_name, _params, _OWN.get(_name) or getattr(np, _name))
for _name in UFUNCS + tuple(t for t in TYPES if t != "ndarray"):
    globals()[_name] = getattr(np, _name)
del _name, _params

__all__ = sorted(CUPY_PARAMS) + sorted(UFUNCS + TYPES)


def __getattr__(name):
    raise AttributeError(
        f"the GPU engine's array module has no {name!r}: CuPy may lack it (check that "
        "CuPy >= 13 has it, then list it in nx_gpumatch/gpu/_strict.py)"
    )
