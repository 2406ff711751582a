"""Run-time settings, exposed to users as ``nx.config.backends.gpumatch``.

They live in networkx's config (not in keywords) because keywords only reach
the backend when the caller names ``backend="gpumatch"``; a setting must also
hold when networkx picks the backend on its own.
"""

import networkx as nx

from _nx_gpumatch.config import GpumatchConfig

__all__ = ["GpumatchConfig", "get_config"]


def get_config():
    """The live config object (networkx's copy when registered, else a private one)."""
    try:
        return nx.config.backends.gpumatch
    except AttributeError:  # package used without being installed as a backend
        global _FALLBACK
        if _FALLBACK is None:
            _FALLBACK = GpumatchConfig()
        return _FALLBACK


_FALLBACK = None
