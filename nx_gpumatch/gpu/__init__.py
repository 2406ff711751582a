"""CuPy (GPU) engine. Nothing here imports CuPy until a GPU path is taken."""

import functools


@functools.cache
def unavailable_reason():
    """None when a CUDA device can be used, else a sentence saying what is missing."""
    try:
        import cupy
    except Exception as exc:  # ImportError, or a broken CUDA install
        return f"CuPy is not importable ({exc}); install nx-gpumatch[gpu]"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return f"CuPy found no usable CUDA driver/device ({type(exc).__name__}: {exc})"
    if count < 1:
        return "CuPy sees no CUDA device"
    return None


def available():
    return unavailable_reason() is None
