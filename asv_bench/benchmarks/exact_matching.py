"""Exact maximum-weight matching (blossom) on sparse random graphs, and
networkx's ``max_weight_matching`` on the 2,000-vertex, 10,000-edge graph of
the README (the anchor of the >= 100x bar). The 1M-edge run and the printed
ratio are in ``python -m nx_gpumatch.benchmark exact_matching``.
"""

import networkx as nx

import nx_gpumatch as gm
from nx_gpumatch.generators import random_graph


class ExactMatching:
    params = ([10_000, 20_000, 100_000], [False, True], ["uniform", "integer"])
    param_names = ["edges", "maxcardinality", "weights"]
    timeout = 300

    def setup(self, edges, maxcardinality, weights):
        n = 2000 if edges == 10_000 else edges // 5
        self.g = random_graph(n, edges, seed=0, weights=weights)
        gm.max_weight_matching(self.g, maxcardinality=maxcardinality)  # compile / load kernels

    def time_blossom(self, edges, maxcardinality, weights):
        gm.max_weight_matching(self.g, maxcardinality=maxcardinality)


class NetworkxExactMatching:
    """The reference: minutes of repeats are not needed, one run is enough."""

    number = 1
    repeat = 1
    timeout = 300

    def setup(self):
        self.G = random_graph(2000, 10_000, seed=0).to_networkx()

    def time_networkx_max_weight_matching(self):
        nx.max_weight_matching(self.G, backend="networkx")
