"""Atomic operations on array elements for Numba kernels (and ``prefetch``, a
cache hint that orders nothing).

Numba has no CPU atomics, so these emit LLVM ``cmpxchg`` / ``atomicrmw`` / atomic
loads directly. All are sequentially consistent. In a spin loop, use the value a
CAS returns instead of re-reading the array: a plain read may be hoisted out of
the loop by the optimizer and the loop then never sees the other thread's write.

Called from Python (kernels run interpreted, one thread) each one is a plain
read-modify-write with the same result: values are converted to the array's
dtype as the compiled code converts them (integers wrap).
"""

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.extending import _Intrinsic
from numba.extending import intrinsic


class _Interpretable(_Intrinsic):
    """An intrinsic that, called from Python, runs a Python function of the same
    meaning (Numba's own intrinsics raise there). Jitted code is unchanged."""

    def __call__(self, *args):
        return self._python(*args)

    def _reduce_states(self):
        return dict(super()._reduce_states(), python=self._python)

    @classmethod
    def _rebuild(cls, uuid, name, defn, python):
        llc = super()._rebuild(uuid, name, defn)
        llc.__class__ = cls
        llc._python = python
        return llc


def in_python(python):
    """Decorator for an ``@intrinsic``: calls from Python run ``python``."""

    def attach(intr):
        intr.__class__ = _Interpretable
        intr._python = python
        return intr

    return attach


def _cast(arr, value):
    # as LLVM's integer cast: keep the low bits (np.uint64(-1) would raise)
    return np.asarray(value).astype(arr.dtype, casting="unsafe")[()]


def _py_cas(arr, idx, expected, desired):
    old = arr[idx]
    if old == _cast(arr, expected):
        arr[idx] = _cast(arr, desired)
    return old


def _py_add(arr, idx, val):
    old = arr[idx]
    arr[idx : idx + 1] += _cast(arr, val)  # array arithmetic wraps silently
    return old


def _py_max(arr, idx, val):
    old = arr[idx]
    arr[idx] = max(old, _cast(arr, val))
    return old


def _py_min(arr, idx, val):
    old = arr[idx]
    arr[idx] = min(old, _cast(arr, val))
    return old


def _py_load(arr, idx):
    return arr[idx]


def _py_store(arr, idx, val):
    arr[idx] = _cast(arr, val)


__all__ = ["cas", "atomic_add", "atomic_max", "atomic_min", "atomic_load", "atomic_store"]


def _item_pointer(context, builder, arrty, arr, idxty, idx):
    ary = context.make_array(arrty)(context, builder, arr)
    idx = context.cast(builder, idx, idxty, types.intp)
    return cgutils.get_item_pointer(context, builder, arrty, ary, [idx], wraparound=False)


def _check(arr, idx):
    if not isinstance(arr, types.Array) or arr.ndim != 1:
        raise TypeError("atomic ops need a 1-D array")
    if not isinstance(arr.dtype, types.Integer):
        raise TypeError("atomic ops support integer arrays only")
    if not isinstance(idx, types.Integer):
        raise TypeError("atomic ops need an integer index")


@in_python(_py_cas)
@intrinsic
def cas(typingctx, arr, idx, expected, desired):
    """Compare-and-swap arr[idx]: if it equals expected, store desired.
    Returns the value arr[idx] held before (== expected iff the swap happened)."""
    _check(arr, idx)
    dt = arr.dtype

    def codegen(context, builder, sig, args):
        a, i, exp, des = args
        ptr = _item_pointer(context, builder, sig.args[0], a, sig.args[1], i)
        exp = context.cast(builder, exp, sig.args[2], dt)
        des = context.cast(builder, des, sig.args[3], dt)
        pair = builder.cmpxchg(ptr, exp, des, "seq_cst", "seq_cst")
        return builder.extract_value(pair, 0)

    return dt(arr, idx, expected, desired), codegen


def _rmw(op_signed, op_unsigned, python):
    @in_python(python)
    @intrinsic
    def rmw(typingctx, arr, idx, val):
        _check(arr, idx)
        dt = arr.dtype
        op = op_signed if dt.signed else op_unsigned

        def codegen(context, builder, sig, args):
            a, i, v = args
            ptr = _item_pointer(context, builder, sig.args[0], a, sig.args[1], i)
            v = context.cast(builder, v, sig.args[2], dt)
            return builder.atomic_rmw(op, ptr, v, "seq_cst")

        return dt(arr, idx, val), codegen

    return rmw


atomic_add = _rmw("add", "add", _py_add)
atomic_add.__doc__ = "arr[idx] += val atomically; returns the old value."
atomic_max = _rmw("max", "umax", _py_max)
atomic_max.__doc__ = "arr[idx] = max(arr[idx], val) atomically; returns the old value."
atomic_min = _rmw("min", "umin", _py_min)
atomic_min.__doc__ = "arr[idx] = min(arr[idx], val) atomically; returns the old value."


@in_python(_py_load)
@intrinsic
def atomic_load(typingctx, arr, idx):
    """Atomic (acquire) read of arr[idx]; never hoisted out of a loop."""
    _check(arr, idx)
    dt = arr.dtype

    def codegen(context, builder, sig, args):
        a, i = args
        ptr = _item_pointer(context, builder, sig.args[0], a, sig.args[1], i)
        return builder.load_atomic(
            ptr, "acquire", context.get_abi_sizeof(context.get_value_type(dt))
        )

    return dt(arr, idx), codegen


@in_python(_py_store)
@intrinsic
def atomic_store(typingctx, arr, idx, val):
    """Atomic (release) write of arr[idx] = val."""
    _check(arr, idx)
    dt = arr.dtype

    def codegen(context, builder, sig, args):
        a, i, v = args
        ptr = _item_pointer(context, builder, sig.args[0], a, sig.args[1], i)
        v = context.cast(builder, v, sig.args[2], dt)
        builder.store_atomic(v, ptr, "release", context.get_abi_sizeof(context.get_value_type(dt)))
        return context.get_dummy_value()

    return types.none(arr, idx, val), codegen


@in_python(lambda arr, idx: None)
@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint that arr[idx] is read soon (llvm.prefetch: read, keep in all levels)."""
    if not isinstance(arr, types.Array) or not isinstance(idx, types.Integer):
        raise TypeError("prefetch needs an array and an integer index")

    def codegen(context, builder, sig, args):
        a, i = args
        ary = context.make_array(sig.args[0])(context, builder, a)
        i = context.cast(builder, i, sig.args[1], types.intp)
        ptr = cgutils.get_item_pointer(context, builder, sig.args[0], ary, [i], wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.none(arr, idx), codegen
