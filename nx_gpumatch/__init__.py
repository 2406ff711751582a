"""nx-gpumatch: matching and clustering on large graphs, as the networkx backend
``gpumatch`` and as a package of its own.

Importing this module is cheap: Numba kernels load on first use and CuPy only
when a GPU path is taken.
"""

# networkx must finish importing before our config module is: at the end of its
# import it calls _nx_gpumatch.get_info, which imports nx_gpumatch.config.
import networkx  # noqa: F401

from nx_gpumatch.algorithms.matching import is_matching, matching_weight, max_weight_matching, maximal_matching
from nx_gpumatch.graph import Graph

__version__ = "0.1.0"

__all__ = [
    "Graph",
    "max_weight_matching",
    "maximal_matching",
    "is_matching",
    "matching_weight",
]
