"""½-approximate b-matching on generated graphs (CPU engine), with NetworKit's
BSuitorMatcher on the same edges as the anchor.

Graphs are built in setup with their edge order cached, so the timings are the
algorithms alone.
"""

import numpy as np

from nx_gpumatch import generators
from nx_gpumatch.algorithms.b_matching import b_matching_edges

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
        b_matching_edges(self.g, self.b, algorithm, device="cpu")  # compile / load kernels

    def time_b_matching(self, graphs, size, b, algorithm):
        b_matching_edges(self.g, self.b, algorithm, device="cpu")

    def track_weight(self, graphs, size, b, algorithm):
        return float(
            self.g.edge_weight[b_matching_edges(self.g, self.b, algorithm, device="cpu")].sum()
        )


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
        self.nkg = nk.GraphFromCoo(
            (g.edge_weight, (g.edge_src.astype(np.uint64), g.edge_dst.astype(np.uint64))),
            n=g.num_nodes,
            weighted=True,
            directed=False,
        )

    def time_bsuitor(self, size, b):
        m = self.nk.matching.BSuitorMatcher(self.nkg, b)
        m.run()
