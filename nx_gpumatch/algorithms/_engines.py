"""Engine choice: which engine (``cpu/<problem>`` or ``gpu/<problem>``) runs a
call. It lives with the front ends, above the engines; the config only holds
the settings it reads (``device``, ``gpu_min_edges``)."""

from __future__ import annotations

import importlib

from nx_gpumatch._validation import check_device
from nx_gpumatch.config import get_config

__all__ = ["engine_for", "engine_module", "resolve_device"]


def resolve_device(device, num_edges):
    """'cpu' or 'gpu' for a call: the argument, else the config; 'auto' takes the
    GPU only when one is usable and the graph is large enough."""
    cfg = get_config()
    device = check_device(cfg.device if device is None else device)
    if device == "cpu":
        return "cpu"
    from nx_gpumatch import gpu

    if device == "gpu":
        reason = gpu.unavailable_reason()
        if reason is not None:
            raise RuntimeError(f"device='gpu' was requested but no GPU can be used: {reason}")
        return "gpu"
    if num_edges >= cfg.gpu_min_edges and gpu.available():
        return "gpu"
    return "cpu"


def engine_for(problem, device, num_edges):
    """(device, engine module) for ``problem``: ``nx_gpumatch.cpu.<problem>`` or
    ``nx_gpumatch.gpu.<problem>``, as :func:`resolve_device` picks."""
    name = resolve_device(device, num_edges)
    return name, engine_module(problem, name)


def engine_module(problem, name):
    """The engine ``nx_gpumatch.<name>.<problem>`` itself, without a device
    check: for a GPU engine run in emulation, or the CPU engine's parts that
    serve another engine."""
    return importlib.import_module(f"nx_gpumatch.{name}.{problem}")
