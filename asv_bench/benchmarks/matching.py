"""½-approximate matching on generated graphs (CPU engine).

Graphs are built in setup with their edge order cached, so the timings are the
algorithms alone; ``time_edge_ranking`` times that preprocessing separately.
Only the public API is used, so refactoring the internals cannot break these.
"""

import numpy as np

import nx_gpumatch as gm
from nx_gpumatch import generators

SIZES = [(10_000, 80_000), (100_000, 800_000), (1_000_000, 8_000_000)]


def _graph(n, m):
    g = generators.random_graph(n, m, seed=0)
    g.arc_rank()
    return g


class ApproximateMatching:
    params = ([f"{n}/{m}" for n, m in SIZES], ["suitor", "local_max", "greedy", "red_blue"])
    param_names = ["n/m", "algorithm"]
    timeout = 600

    def setup_cache(self):
        return {f"{n}/{m}": _graph(n, m) for n, m in SIZES}

    def setup(self, graphs, size, algorithm):
        self.g = graphs[size]
        self.algorithm = algorithm
        self.run()  # compile / load kernels

    def run(self):
        kw = {"seed": 1} if self.algorithm == "red_blue" else {}  # only red_blue is randomized
        return gm.max_weight_matching(self.g, algorithm=self.algorithm, device="cpu", **kw)

    def time_matching(self, graphs, size, algorithm):
        self.run()

    def track_weight(self, graphs, size, algorithm):
        return gm.matching_weight(self.g, self.run())


class Preprocessing:
    params = [f"{n}/{m}" for n, m in SIZES]
    param_names = ["n/m"]
    timeout = 600

    def setup(self, size):
        n, m = map(int, size.split("/"))
        rng = np.random.default_rng(0)
        self.src = rng.integers(0, n, m)
        self.dst = rng.integers(0, n, m)
        self.w = rng.random(m)
        self.n = n
        self.g = gm.Graph.from_arrays(self.src, self.dst, self.w, num_nodes=n)
        self.g.arc_rank()  # compile / load kernels

    def time_build_graph(self, size):
        gm.Graph.from_arrays(self.src, self.dst, self.w, num_nodes=self.n)

    def time_edge_ranking(self, size):
        # a copy with the same weights starts with an empty cache
        self.g.with_weights(self.g.edge_weight).arc_rank()


STANDIN = (200_000, 1_600_000)  # vertices, about the edges of each graph kind
WEIGHTS = ["uniform", "unit", "small_int"]


def _standin(kind, weights, n=STANDIN[0], m=STANDIN[1]):
    g = generators.generate(kind, n, m, seed=0, weights=weights)
    g.arc_rank()
    return g


class MatchingGraphKinds:
    """The ½-approximate matchings on power-law, preferential-attachment and
    small-world graphs beside the random graph, with unit and small-integer
    weights (the ties of unweighted real graphs) beside uniform ones."""

    params = (list(generators.GRAPH_KINDS), WEIGHTS, ["suitor", "local_max"])
    param_names = ["graph", "weights", "algorithm"]
    timeout = 600

    def setup_cache(self):
        return {(k, w): _standin(k, w) for k in generators.GRAPH_KINDS for w in WEIGHTS}

    def setup(self, graphs, kind, weights, algorithm):
        self.g = graphs[(kind, weights)]
        self.algorithm = algorithm
        self.run()  # compile / load kernels

    def run(self):
        return gm.max_weight_matching(self.g, algorithm=self.algorithm, device="cpu")

    def time_matching(self, graphs, kind, weights, algorithm):
        self.run()

    def track_weight(self, graphs, kind, weights, algorithm):
        return gm.matching_weight(self.g, self.run())
