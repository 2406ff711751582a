"""Louvain (CPU engine) on random graphs, with NetworKit's PLM alongside and
the modularity of both tracked. The networkx comparison (100k vertices, one
slow run) is in ``python -m nx_gpumatch.benchmark louvain``."""

import numpy as np

import nx_gpumatch as gm
from nx_gpumatch.benchmark import networkit_graph as _networkit_graph
from nx_gpumatch.benchmark.louvain import _graph, modularity

SIZES = ["100000/800000", "1000000/8000000"]


def _key(size):
    n, m = size.split("/")
    return int(n), int(m)


class Louvain:
    params = (SIZES, [1, 2])
    param_names = ["graph", "threads"]
    timeout = 900

    def setup_cache(self):
        return {size: _graph(*_key(size)) for size in SIZES}

    def setup(self, graphs, size, threads):
        self.g = graphs[size]
        gm.louvain_communities(
            self.g, threads=threads, device="cpu", progress=False
        )  # load kernels

    def time_louvain(self, graphs, size, threads):
        gm.louvain_communities(self.g, threads=threads, device="cpu", progress=False)

    def track_modularity(self, graphs, size, threads):
        return modularity(
            self.g, gm.louvain_communities(self.g, threads=threads, device="cpu", progress=False)
        )

    track_modularity.unit = "modularity"


class NetworKitPLM:
    params = (SIZES, [1, 2])
    param_names = ["graph", "threads"]
    timeout = 900

    def setup_cache(self):
        return {size: _graph(*_key(size)) for size in SIZES}

    def setup(self, graphs, size, threads):
        import networkit as nk

        nk.setNumberOfThreads(threads)
        self.g = graphs[size]
        self.G = _networkit_graph(self.g)

    def _run(self):
        import networkit as nk

        algo = nk.community.PLM(self.G, refine=False)
        algo.run()
        return algo.getPartition()

    def time_plm(self, graphs, size, threads):
        self._run()

    def track_modularity(self, graphs, size, threads):
        return modularity(self.g, np.asarray(self._run().getVector(), np.int64))

    track_modularity.unit = "modularity"
