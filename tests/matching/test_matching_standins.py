"""The matching family on the stand-ins for real graphs (power law, preferential
attachment, small world) with unit, small-integer and uniform weights: ties and
hubs, where the edge order falls back to vertex ids. Suitor, local max and
greedy equal the sorted greedy, b-matching the sorted greedy b-matching,
maximal_matching the greedy on unit weights, the exact matching networkx's."""

import networkx as nx
import numpy as np
import pytest

import nx_gpumatch as gm
from nx_gpumatch import generators as G
from nx_gpumatch.algorithms.b_matching import ALGORITHMS as B_ALGORITHMS
from tests.support.reference import greedy_b_matching, greedy_mate

WEIGHTS = ["unit", "small_int", "uniform"]
MAKERS = {
    "chung_lu": lambda n, w: G.chung_lu(n, 6, 2.3, seed=11, weights=w),
    "barabasi_albert": lambda n, w: G.barabasi_albert(n, 3, seed=12, weights=w),
    "watts_strogatz": lambda n, w: G.watts_strogatz(n, 6, 0.2, seed=13, weights=w),
}


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("kind", MAKERS)
def test_half_approximate_equal_sorted_greedy(kind, weights, nthreads):
    g = MAKERS[kind](3000, weights)
    ref = greedy_mate(g)
    for algo in ("suitor", "local_max", "greedy"):
        assert gm.max_weight_matching(g, algorithm=algo).tolist() == ref, algo
    red_blue = gm.max_weight_matching(g, algorithm="red_blue", seed=3)
    assert gm.is_matching(g, red_blue, maximal=True)


@pytest.mark.parametrize("kind", MAKERS)
def test_maximal_matching_is_the_unit_greedy(kind, nthreads):
    g = MAKERS[kind](3000, "uniform")
    # A Graph in, a mate array out.
    assert gm.maximal_matching(g).tolist() == greedy_mate(g.unweighted())


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("kind", MAKERS)
def test_b_matching_equal_sorted_greedy(kind, weights, nthreads):
    g = MAKERS[kind](2000, weights)
    rng = np.random.default_rng(1)
    deg = np.diff(g.indptr)
    for b in (np.full(g.num_nodes, 2), rng.integers(0, 4, g.num_nodes), np.minimum(deg, 5)):
        want = greedy_b_matching(
            g.num_nodes, g.edge_src.tolist(), g.edge_dst.tolist(), g.edge_weight.tolist(), b
        )
        for algo in B_ALGORITHMS:
            s, d = gm.b_matching(g, b, algorithm=algo)
            assert set(zip(s.tolist(), d.tolist())) == want, algo


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("kind", MAKERS)
def test_exact_weight_equals_networkx(kind, weights):
    g = MAKERS[kind](150, weights)
    Gx = g.to_networkx()
    want = sum(Gx[u][v]["weight"] for u, v in nx.max_weight_matching(Gx))
    mate = gm.max_weight_matching(g)
    assert gm.matching_weight(g, mate) == pytest.approx(want, rel=1e-12)
    card = gm.max_weight_matching(g, maxcardinality=True)
    ref = nx.max_weight_matching(Gx, maxcardinality=True)
    assert int((card >= 0).sum()) // 2 == len(ref)
    assert gm.matching_weight(g, card) == pytest.approx(
        sum(Gx[u][v]["weight"] for u, v in ref), rel=1e-12
    )
