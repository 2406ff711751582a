"""Run-time settings, exposed to users as ``nx.config.backends.gpumatch``.

They live in networkx's config (not in keywords) because keywords only reach
the backend when the caller names ``backend="gpumatch"``; a setting must also
hold when networkx picks the backend on its own.
"""

import numbers

from _nx_gpumatch.config import _DEVICES, GpumatchConfig

__all__ = ["GpumatchConfig", "check_bool", "check_threads", "get_config", "resolve_device"]


def get_config():
    """The live config object (networkx's copy when registered, else a private one)."""
    import networkx as nx

    try:
        return nx.config.backends.gpumatch
    except AttributeError:  # package used without being installed as a backend
        global _FALLBACK
        if _FALLBACK is None:
            _FALLBACK = GpumatchConfig()
        return _FALLBACK


_FALLBACK = None


def resolve_device(device, num_edges):
    """'cpu' or 'gpu' for a call: the argument, else the config; 'auto' takes the
    GPU only when one is usable and the graph is large enough."""
    from nx_gpumatch import gpu

    cfg = get_config()
    device = check_device(cfg.device if device is None else device)
    if device == "cpu":
        return "cpu"
    if device == "gpu":
        reason = gpu.unavailable_reason()
        if reason is not None:
            raise RuntimeError(f"device='gpu' was requested but no GPU can be used: {reason}")
        return "gpu"
    if num_edges >= cfg.gpu_min_edges and gpu.available():
        return "gpu"
    return "cpu"


def check_device(device):
    """``device`` if it is one of 'auto', 'cpu', 'gpu'; else a ValueError."""
    if device not in _DEVICES:
        raise ValueError(f"device must be one of {_DEVICES}, got {device!r}")
    return device


def check_threads(threads):
    """None (the config's, else all cores) or a positive int; anything else,
    0 included, is a ValueError here as in the config."""
    if threads is not None and (
        isinstance(threads, bool) or not isinstance(threads, numbers.Integral) or threads < 1
    ):
        raise ValueError(f"threads must be a positive int or None (all cores), got {threads!r}")
    return None if threads is None else int(threads)


def check_bool(value, name, *, none=False):
    """``value`` as a bool when it is True or False (a numpy bool too), or None
    where ``none`` allows it; anything else (a string such as 'yes' or 'no'
    included, which Python would take as True) is a ValueError."""
    import numpy as np

    if value is None and none:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    allowed = "True, False or None" if none else "True or False"
    raise ValueError(f"{name} must be {allowed}, got {value!r}")
