"""Run-time settings, exposed to users as ``nx.config.backends.gpumatch``.

They live in networkx's config (not in keywords) because keywords only reach
the backend when the caller names ``backend="gpumatch"``; a setting must also
hold when networkx picks the backend on its own.
"""

import math

from networkx.utils.configs import Config

_DEVICES = ("auto", "cpu", "gpu")


class GpumatchConfig(Config):
    """Settings of the gpumatch backend.

    Parameters
    ----------
    device : {"auto", "cpu", "gpu"}
        Engine used when a call does not name one. "auto" takes the GPU only
        when CuPy sees a device and the graph has at least ``gpu_min_edges`` edges.
    threads : int or None
        Numba threads for CPU kernels; None uses Numba's default (all cores).
    gpu_min_edges : int
        Smallest graph (undirected edges) that "auto" sends to the GPU.
    louvain_coarse_threshold : float
        Louvain: a level whose graph has at least ``louvain_fine_below``
        vertices stops its sweeps once one gains at most this much modularity
        (seed 000's coarse threshold); smaller levels use the call's
        ``threshold``.
    louvain_fine_below : int
        Louvain: levels with fewer vertices use the fine threshold.
    """

    device: str = "auto"
    threads: int | None = None
    gpu_min_edges: int = 200_000
    louvain_coarse_threshold: float = 1e-2
    louvain_fine_below: int = 100_000

    def _on_setattr(self, key, value):
        if key == "device" and value not in _DEVICES:
            raise ValueError(f"device must be one of {_DEVICES}, got {value!r}")
        if key == "threads" and value is not None:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"threads must be a positive int or None, got {value!r}")
        if key == "gpu_min_edges":
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"gpu_min_edges must be a non-negative int, got {value!r}")
        if key == "louvain_coarse_threshold":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"louvain_coarse_threshold must be a finite number >= 0, got {value!r}")
            value = float(value)
        if key == "louvain_fine_below":
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"louvain_fine_below must be a non-negative int, got {value!r}")
        return value


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
    device = cfg.device if device is None else device
    if device not in _DEVICES:
        raise ValueError(f"device must be one of {_DEVICES}, got {device!r}")
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
