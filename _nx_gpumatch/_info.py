"""The functions networkx dispatches to gpumatch, with the notes networkx adds
to their docs. Generated from the registrations in nx_gpumatch.algorithms
(``python -m nx_gpumatch.algorithms --write``); do not edit.
"""

FUNCTIONS = {
    "eppstein_matching": {
        "additional_docs": "Same engine as hopcroft_karp_matching (any maximum matching is a valid answer).",
    },
    "hopcroft_karp_matching": {
        "additional_docs": "Also serves bipartite.maximum_matching. Karp-Sipser start, then Hopcroft-Karp with a parallel level-synchronous BFS (Numba); every answer is proved by a Konig vertex cover of the same size. Directed graphs and multigraphs fall back to networkx.",
    },
    "leiden_communities": {
        "additional_docs": "Leiden (Traag, Waltman, van Eck 2019) on the parallel Louvain engine (CPU, or CUDA kernels on a GPU), for metric='cpm' (networkx 3.7's default: constant_potts_model with resolution as gamma, every node of weight 1) and metric='modularity' (the only one before networkx 3.7); theta is networkx's (gains in edge-weight units; staying alone is one of the refinement's choices). Every community of a finished run is connected; on the CPU the partition does not depend on the thread count. A MultiGraph clusters with its parallel edges summed, as networkx does. Directed graphs, negative weights and other metrics go to networkx's own Leiden (3.7+).",
        "additional_parameters": {
            "device : str, optional": "'auto', 'cpu' or 'gpu'; default from the config.",
        },
    },
    "leiden_partitions": {
        "additional_docs": "Partitions level by level, as leiden_communities computes them (both metrics).",
        "additional_parameters": {
            "device : str, optional": "'auto', 'cpu' or 'gpu'; default from the config.",
        },
    },
    "louvain_communities": {
        "additional_docs": "Parallel degree-bucketed Louvain (CPU, or CUDA kernels on a GPU); the partition does not depend on the thread count. Levels sweep to a local optimum (config louvain_coarse_threshold may stop large ones earlier). A MultiGraph clusters with its parallel edges summed, as networkx does.",
        "additional_parameters": {
            "device : str, optional": "'auto', 'cpu' or 'gpu'; default from the config.",
        },
    },
    "louvain_partitions": {
        "additional_docs": "Partitions level by level, as louvain_communities computes them.",
    },
    "max_weight_matching": {
        "additional_docs": "Exact (Numba weighted blossom) unless an approximate ``algorithm`` is named: 'suitor', 'local_max', 'greedy' (all equal the greedy matching) or 'red_blue' (randomized, maximal).",
        "additional_parameters": {
            "algorithm : str, optional": "None or 'blossom' (exact), 'suitor', 'local_max', 'greedy', 'red_blue'.",
            "device : str, optional": "'auto', 'cpu' or 'gpu'; default from the config. The exact algorithm has no GPU engine.",
            "seed : int or random.Random, optional": "'red_blue' only.",
            "select : str, optional": "'red_blue' only: 'weighted' (default) or 'random'.",
        },
    },
    "maximal_matching": {
        "additional_docs": "Greedy matching under the package's edge order (Suitor on the CPU).",
        "additional_parameters": {
            "device : str, optional": "'auto', 'cpu' or 'gpu'; default from the config.",
        },
    },
    "min_weight_matching": {
        "additional_docs": "Exact: the Numba weighted blossom method on networkx's transformed weights.",
        "additional_parameters": {
            "device : str, optional": "'auto' or 'cpu'; 'gpu' raises ValueError (no GPU engine for exact matching).",
        },
    },
    "to_vertex_cover": {
        "additional_docs": "Konig's cover from one parallel alternating BFS; raises NetworkXError if the matching is not maximum.",
    },
}
