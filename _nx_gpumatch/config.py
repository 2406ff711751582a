"""The backend's settings class, ``nx.config.backends.gpumatch``.

It lives here, outside ``nx_gpumatch``, because networkx builds the default
config while it imports itself (through :func:`_nx_gpumatch.get_info`); this
module imports only networkx's config base class.
"""

import math
import numbers
import os

from networkx.utils.configs import Config

_DEVICES = ("auto", "cpu", "gpu")


def _is_int(x):
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


# Values of an environment switch (any case, blanks around ignored).
_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")


def _env_switch(name, default):
    """The bool an environment variable sets; unset or empty: ``default``. A value
    that is neither on nor off is refused (ValueError): read as True, a typo of
    "off" would leave the switch on."""
    raw = os.environ.get(name, "")
    text = raw.strip().lower()
    if not text:
        return default
    if text in _ON:
        return True
    if text in _OFF:
        return False
    raise ValueError(
        f"environment variable {name}={raw!r} is not understood: use one of "
        f"{', '.join(_ON)} (on) or {', '.join(_OFF)} (off)"
    )


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
        (smaller levels sweep until they gain almost nothing). The default
        lets large levels converge too; raising it trades modularity for
        time (1e-2 loses up to a third of the modularity on noisy community
        structure).
    louvain_fine_below : int
        Louvain: levels with fewer vertices use the fine threshold.
    interpret_small : bool
        Run a family's kernels interpreted (their Python source, same results)
        on small inputs while they are neither compiled nor in Numba's disk
        cache, so a first call takes milliseconds instead of a compile
        (cached kernels are loaded and run compiled). False: always compile. The
        environment variable NX_GPUMATCH_INTERPRET_SMALL=0 (or false, no,
        off) sets the default to False (the test suite sets it, so child
        processes compile too); 1, true, yes, on or unset: True; any other
        value is refused with a ValueError.
    """

    device: str = "auto"
    threads: int | None = None
    gpu_min_edges: int = 200_000
    louvain_coarse_threshold: float = 1e-7
    louvain_fine_below: int = 100_000
    interpret_small: bool = _env_switch("NX_GPUMATCH_INTERPRET_SMALL", True)

    def _on_setattr(self, key, value):
        if key == "device" and value not in _DEVICES:
            raise ValueError(f"device must be one of {_DEVICES}, got {value!r}")
        # numpy scalars count as the Python numbers they stand for
        if key == "threads" and value is not None:
            if not _is_int(value) or value < 1:
                raise ValueError(
                    f"threads must be a positive int or None (all cores), got {value!r}"
                )
            value = int(value)
        if key == "gpu_min_edges":
            if not _is_int(value) or value < 0:
                raise ValueError(f"gpu_min_edges must be a non-negative int, got {value!r}")
            value = int(value)
        if key == "louvain_coarse_threshold":
            if (
                isinstance(value, bool)
                or not isinstance(value, numbers.Real)
                or not math.isfinite(value)
                or value < 0
            ):
                raise ValueError(
                    f"louvain_coarse_threshold must be a finite number >= 0, got {value!r}"
                )
            value = float(value)
        if key == "louvain_fine_below":
            if not _is_int(value) or value < 0:
                raise ValueError(f"louvain_fine_below must be a non-negative int, got {value!r}")
            value = int(value)
        if key == "interpret_small" and not isinstance(value, bool):
            raise ValueError(f"interpret_small must be True or False, got {value!r}")
        return value
