"""Backend information for networkx's dispatcher.

networkx calls :func:`get_info` at the end of its own import, so this package
stays light: it imports networkx's config base class and nothing of
``nx_gpumatch``.

``FUNCTIONS`` (in ``_info.py``) lists the dispatched networkx functions and the
notes networkx adds to their docs. It is generated from the registrations next
to each function in ``nx_gpumatch.algorithms`` (see
``nx_gpumatch.algorithms._registry``), so it cannot drift from them.
"""

from _nx_gpumatch._info import FUNCTIONS


def get_info():
    from _nx_gpumatch.config import GpumatchConfig

    return {
        "backend_name": "gpumatch",
        "project": "nx-gpumatch",
        "package": "nx_gpumatch",
        "url": "https://github.com/nx-gpumatch/nx-gpumatch",
        "short_summary": "Matching and clustering on large graphs with Numba (CPU) and CUDA (GPU).",
        "default_config": GpumatchConfig(),
        "functions": {name: dict(info) for name, info in FUNCTIONS.items()},
    }
