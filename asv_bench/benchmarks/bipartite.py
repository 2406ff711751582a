"""Maximum-cardinality bipartite matching (CPU engine) on generated graphs, with
scipy's maximum_bipartite_matching on the same matrices as the anchor.

Matrices are built in setup_cache; timings include the initial matching and the
Konig cover proof."""

from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_mbm

import nx_gpumatch as gm
from nx_gpumatch.generators_bipartite import bipartite_graph

SIZES = [10_000, 100_000, 1_000_000]
KINDS = ["random", "rmat", "layered", "long_path", "components", "hub", "empty_sides"]


class BipartiteMatching:
    params = (SIZES, ["random", "rmat"], ["auto", "hopcroft_karp", "apfb", "apsb"])
    param_names = ["size", "kind", "algorithm"]
    timeout = 900

    def setup_cache(self):
        return {(k, n): bipartite_graph(k, n, 0) for n in SIZES for k in ("random", "rmat")}

    def setup(self, graphs, size, kind, algorithm):
        self.A = graphs[(kind, size)]
        gm.maximum_bipartite_matching(self.A, algorithm=algorithm, device="cpu")  # load kernels

    def time_matching(self, graphs, size, kind, algorithm):
        gm.maximum_bipartite_matching(self.A, algorithm=algorithm, device="cpu")

    def track_cardinality(self, graphs, size, kind, algorithm):
        m = gm.maximum_bipartite_matching(self.A, algorithm=algorithm, device="cpu")
        return int((m >= 0).sum())


class ScipyMatching:
    """The anchor: scipy's Hopcroft-Karp on the same CSR matrices."""

    params = (SIZES, ["random", "rmat"])
    param_names = ["size", "kind"]
    timeout = 900

    def setup_cache(self):
        return {(k, n): bipartite_graph(k, n, 0) for n in SIZES for k in ("random", "rmat")}

    def time_scipy(self, graphs, size, kind):
        scipy_mbm(graphs[(kind, size)])


class Adversarial:
    """Every adversarial shape at one size: time per edge should stay close to
    the random graph's (scipy is left out: some of these take it minutes)."""

    params = (KINDS,)
    param_names = ["kind"]
    timeout = 900

    def setup(self, kind):
        self.A = bipartite_graph(kind, 200_000, 0)
        gm.maximum_bipartite_matching(self.A, device="cpu")

    def time_matching(self, kind):
        gm.maximum_bipartite_matching(self.A, device="cpu")
