"""½-approximate b-matching on generated graphs (CPU engine), with NetworKit's
BSuitorMatcher on the same edges as the anchor.

Graphs are built in setup with their edge order cached, so the timings are the
algorithms alone.
"""

import numpy as np

import nx_gpumatch as gm
from nx_gpumatch import generators
from nx_gpumatch.benchmark import networkit_graph

SIZES = [(10_000, 80_000), (100_000, 800_000), (1_000_000, 8_000_000)]
B_VALUES = [1, 3, 10]


def _graph(n, m):
    g = generators.random_graph(n, m, seed=0)
    g.arc_rank()
    return g


class BMatching:
    params = ([f"{n}/{m}" for n, m in SIZES], B_VALUES, ["b_suitor", "local_dominant", "greedy"])
    param_names = ["n/m", "b", "algorithm"]
    timeout = 900

    def setup_cache(self):
        return {f"{n}/{m}": _graph(n, m) for n, m in SIZES}

    def setup(self, graphs, size, b, algorithm):
        self.g = graphs[size]
        self.b = np.full(self.g.num_nodes, b)
        self.algorithm = algorithm
        self.run()  # compile / load kernels

    def run(self):
        return gm.b_matching(self.g, self.b, algorithm=self.algorithm, device="cpu")

    def time_b_matching(self, graphs, size, b, algorithm):
        self.run()

    def track_weight(self, graphs, size, b, algorithm):
        return gm.b_matching_weight(self.g, self.run())


class NetworKitBSuitor:
    """The anchor: NetworKit's sequential BSuitorMatcher on a prebuilt NetworKit graph."""

    params = ([f"{n}/{m}" for n, m in SIZES], B_VALUES)
    param_names = ["n/m", "b"]
    timeout = 900

    def setup(self, size, b):
        try:
            import networkit as nk
        except ImportError:
            raise NotImplementedError("networkit is not installed") from None
        n, m = map(int, size.split("/"))
        g = generators.random_graph(n, m, seed=0)
        self.nk = nk
        self.nkg = networkit_graph(g)

    def time_bsuitor(self, size, b):
        m = self.nk.matching.BSuitorMatcher(self.nkg, b)
        m.run()
