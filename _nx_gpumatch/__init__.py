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
            "device : str, optional": "'auto', 'cpu' or 'gpu'; default from the config.",
        },
    },
    "min_weight_matching": {
        "module": "matching",
        "additional_docs": "Exact: the Numba weighted blossom method on networkx's transformed weights.",
    },
    "louvain_communities": {
        "module": "louvain",
        "additional_docs": "Parallel degree-bucketed Louvain (CPU, or CUDA kernels on a GPU); the partition does not depend on the thread count. Levels sweep to a local optimum (config louvain_coarse_threshold may stop large ones earlier).",
        "additional_parameters": {
            "device : str, optional": "'auto', 'cpu' or 'gpu'; default from the config."
        },
    },
    "louvain_partitions": {
        "module": "louvain",
        "additional_docs": "Partitions level by level, as louvain_communities computes them.",
    },
    "leiden_communities": {
        "module": "leiden",
        "additional_docs": "Leiden (Traag, Waltman, van Eck 2019) on the CPU, built on the parallel Louvain engine; every community of a finished run is connected; the partition does not depend on the thread count.",
        "additional_parameters": {
            "device : str, optional": "'auto' or 'cpu' ('gpu' raises NotImplementedError: no GPU Leiden)."
        },
    },
    "leiden_partitions": {
        "module": "leiden",
        "additional_docs": "Partitions level by level, as leiden_communities computes them.",
    },
    "maximal_matching": {
        "module": "matching",
        "additional_docs": "Greedy matching under the package's edge order (Suitor on the CPU).",
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
