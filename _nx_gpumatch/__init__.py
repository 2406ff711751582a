"""Backend information for networkx's dispatcher.

networkx calls :func:`get_info` at the end of its own import, so this package
stays light: it imports networkx's config base class and nothing of
``nx_gpumatch``.

``FUNCTIONS`` is the one list of dispatched networkx functions: the module of
``nx_gpumatch.algorithms`` whose ``DISPATCH`` implements each, and the notes
networkx adds to its docs. ``nx_gpumatch.interface`` registers exactly these.
"""

FUNCTIONS = {
    "max_weight_matching": {
        "module": "matching",
        "additional_docs": "Exact (Numba weighted blossom) unless an approximate ``algorithm`` is named: 'suitor', 'local_max', 'greedy' (all equal the greedy matching) or 'red_blue' (randomized, maximal).",
        "additional_parameters": {
            "algorithm : str, optional": "None or 'blossom' (exact), 'suitor', 'local_max', 'greedy', 'red_blue'.",
            "device : str, optional": "'auto', 'cpu' or 'gpu'; default from the config. The exact algorithm has no GPU engine.",
            "seed : int or random.Random, optional": "'red_blue' only.",
            "select : str, optional": "'red_blue' only: 'weighted' (default) or 'random'.",
        },
    },
    "min_weight_matching": {
        "module": "matching",
        "additional_docs": "Exact: the Numba weighted blossom method on networkx's transformed weights.",
        "additional_parameters": {
            "device : str, optional": "'auto' or 'cpu'; 'gpu' raises ValueError (no GPU engine for exact matching).",
        },
    },
    "louvain_communities": {
        "module": "community.louvain",
        "additional_docs": "Parallel degree-bucketed Louvain (CPU, or CUDA kernels on a GPU); the partition does not depend on the thread count. Levels sweep to a local optimum (config louvain_coarse_threshold may stop large ones earlier). A MultiGraph clusters with its parallel edges summed, as networkx does.",
        "additional_parameters": {
            "device : str, optional": "'auto', 'cpu' or 'gpu'; default from the config."
        },
    },
    "louvain_partitions": {
        "module": "community.louvain",
        "additional_docs": "Partitions level by level, as louvain_communities computes them.",
    },
    "leiden_communities": {
        "module": "community.leiden",
        "additional_docs": "Leiden (Traag, Waltman, van Eck 2019) on the parallel Louvain engine (CPU, or CUDA kernels on a GPU), for metric='cpm' (networkx 3.7's default: constant_potts_model with resolution as gamma, every node of weight 1) and metric='modularity' (the only one before networkx 3.7); theta is networkx's (gains in edge-weight units; staying alone is one of the refinement's choices). Every community of a finished run is connected; on the CPU the partition does not depend on the thread count. A MultiGraph clusters with its parallel edges summed, as networkx does. Directed graphs, negative weights and other metrics go to networkx's own Leiden (3.7+).",
        "additional_parameters": {
            "device : str, optional": "'auto', 'cpu' or 'gpu'; default from the config."
        },
    },
    "leiden_partitions": {
        "module": "community.leiden",
        "additional_docs": "Partitions level by level, as leiden_communities computes them (both metrics).",
        "additional_parameters": {
            "device : str, optional": "'auto', 'cpu' or 'gpu'; default from the config."
        },
    },
    "maximal_matching": {
        "module": "matching",
        "additional_docs": "Greedy matching under the package's edge order (Suitor on the CPU).",
        "additional_parameters": {
            "device : str, optional": "'auto', 'cpu' or 'gpu'; default from the config.",
        },
    },
    "hopcroft_karp_matching": {
        "module": "bipartite.matching",
        "additional_docs": "Also serves bipartite.maximum_matching. Karp-Sipser start, then Hopcroft-Karp with a parallel level-synchronous BFS (Numba); every answer is proved by a Konig vertex cover of the same size. Directed graphs and multigraphs fall back to networkx.",
    },
    "eppstein_matching": {
        "module": "bipartite.matching",
        "additional_docs": "Same engine as hopcroft_karp_matching (any maximum matching is a valid answer).",
    },
    "to_vertex_cover": {
        "module": "bipartite.matching",
        "additional_docs": "Konig's cover from one parallel alternating BFS; raises NetworkXError if the matching is not maximum.",
    },
}


def get_info():
    from _nx_gpumatch.config import GpumatchConfig

    return {
        "backend_name": "gpumatch",
        "project": "nx-gpumatch",
        "package": "nx_gpumatch",
        "url": "https://github.com/nx-gpumatch/nx-gpumatch",
        "short_summary": "Matching and clustering on large graphs with Numba (CPU) and CUDA (GPU).",
        "default_config": GpumatchConfig(),
        "functions": {
            name: {k: v for k, v in info.items() if k != "module"}
            for name, info in FUNCTIONS.items()
        },
    }
