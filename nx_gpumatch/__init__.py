"""nx-gpumatch: matching and clustering on large graphs, as the networkx backend
``gpumatch`` and as a package of its own.

Importing this module is cheap: Numba kernels load on first use and CuPy only
when a GPU path is taken.
"""

# networkx must finish importing before the settings class is defined: at the
# end of its import it calls _nx_gpumatch.get_info, which builds the default config.
import networkx  # noqa: F401, I001

from nx_gpumatch.algorithms.bipartite.matching import (
    bipartite_vertex_cover,
    maximum_bipartite_matching,
)
from nx_gpumatch.algorithms.b_matching import b_matching, b_matching_weight, is_b_matching
from nx_gpumatch.algorithms.community.louvain import louvain_communities, louvain_partitions
from nx_gpumatch.algorithms.community.leiden import leiden_communities, leiden_partitions
from nx_gpumatch.algorithms.matching import (
    is_matching,
    matching_weight,
    max_weight_matching,
    maximal_matching,
    min_weight_matching,
)
from nx_gpumatch.algorithms.stable_marriage import (
    blocking_pair,
    greedy_matching_smi,
    is_stable,
    prepare_preferences,
    smi_from_graph,
    stable_marriage,
    stable_marriage_instance,
)
from nx_gpumatch.graph import Graph
from nx_gpumatch.warmup import warmup

__version__ = "0.1.0"

__all__ = [
    "Graph",
    # weighted matching
    "max_weight_matching",
    "min_weight_matching",
    "maximal_matching",
    "is_matching",
    "matching_weight",
    # b-matching
    "b_matching",
    "is_b_matching",
    "b_matching_weight",
    # stable marriage
    "stable_marriage",
    "is_stable",
    "blocking_pair",
    "prepare_preferences",
    "stable_marriage_instance",
    "smi_from_graph",
    "greedy_matching_smi",
    # bipartite matching
    "maximum_bipartite_matching",
    "bipartite_vertex_cover",
    # communities
    "louvain_communities",
    "louvain_partitions",
    "leiden_communities",
    "leiden_partitions",
    # first use
    "warmup",
]
