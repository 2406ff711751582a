"""Generators standing in for real graphs (power law, preferential attachment,
small world): their degrees, determinism by seed, the edge-array contract and
the errors on bad sizes."""

import numpy as np
import pytest

from nx_gpumatch import generators as G

STANDINS = {
    "chung_lu": lambda seed, weights: G.chung_lu(3000, 8, 2.5, seed=seed, weights=weights),
    "barabasi_albert": lambda seed, weights: G.barabasi_albert(3000, 3, seed=seed, weights=weights),
    "watts_strogatz": lambda seed, weights: G.watts_strogatz(
        3000, 6, 0.2, seed=seed, weights=weights
    ),
}


def _degrees(g):
    return np.diff(g.indptr)


def _edge_set(g):
    return set(zip(g.edge_src.tolist(), g.edge_dst.tolist()))


@pytest.mark.parametrize("name", STANDINS)
@pytest.mark.parametrize("weights", ["unit", "small_int", "uniform", "integer", None])
def test_contract(name, weights):
    g = STANDINS[name](1, weights)
    s, d = g.edge_src, g.edge_dst
    assert g.num_nodes == 3000 and g.num_edges > 0
    assert np.all(s != d), "self-loop"
    assert not g.loop_weight.any()
    lo, hi = np.minimum(s, d), np.maximum(s, d)
    assert np.unique(lo * g.num_nodes + hi).size == g.num_edges, "repeated pair"
    w = g.edge_weight
    if weights in ("unit", None):
        assert np.all(w == 1)
    elif weights == "small_int":
        assert set(np.unique(w).tolist()) == {1.0, 2.0, 3.0, 4.0, 5.0}
    elif weights == "uniform":
        assert np.all((w >= 0) & (w < 1)) and np.unique(w).size > g.num_edges * 0.99
    # The CSR form holds every edge both ways.
    assert g.indptr[-1] == 2 * g.num_edges


@pytest.mark.parametrize("name", STANDINS)
def test_deterministic_by_seed(name):
    a, b, c = (STANDINS[name](seed, "small_int") for seed in (4, 4, 5))
    assert np.array_equal(a.edge_src, b.edge_src) and np.array_equal(a.edge_dst, b.edge_dst)
    assert np.array_equal(a.edge_weight, b.edge_weight)
    assert _edge_set(a) != _edge_set(c)


@pytest.mark.parametrize("name", STANDINS)
def test_unit_weights_same_edges(name):
    # The weight kind changes the weights only, never the edges.
    assert _edge_set(STANDINS[name](2, "unit")) == _edge_set(STANDINS[name](2, "uniform"))


@pytest.mark.parametrize("exponent", [2.5, 3.0])
def test_chung_lu_degrees(exponent):
    # Average degree as asked; the largest degree near the hub's expected degree
    # w_0 ~ n ** (1 / (exponent - 1)), growing with n at that rate.
    tops = []
    for n in (20_000, 160_000):
        g = G.chung_lu(n, 10, exponent, seed=1, weights="unit")
        deg = _degrees(g)
        assert 9.5 < deg.mean() <= 10
        w0 = G.chung_lu_weights(n, 10, exponent)[0]
        assert 0.7 * w0 < deg.max() < 1.1 * w0
        tops.append(deg.max())
    growth = tops[1] / tops[0]
    expected = 8 ** (1 / (exponent - 1))
    assert 0.85 * expected < growth < 1.2 * expected
    # Heavy tail: far more vertices of 5x the mean degree than a uniform random graph has.
    assert (deg > 50).sum() > 0.005 * deg.size
    uniform = _degrees(G.random_graph(160_000, 800_000, seed=1))
    assert (uniform > 50).sum() == 0


def test_barabasi_albert_degrees():
    n, m = 20_000, 4
    g = G.barabasi_albert(n, m, seed=3, weights="unit")
    deg = _degrees(g)
    assert deg.min() == m
    assert g.num_edges == m * (m + 1) // 2 + (n - m - 1) * m
    # Preferential attachment: a power-law tail (exponent 3), hubs far above m.
    assert deg.max() > 20 * m
    assert 0.5 * n * 10**-2 < (deg >= 10 * m).sum() < 4 * n * 10**-2  # about n m^2 / (10m)^2


def test_barabasi_albert_smallest():
    g = G.barabasi_albert(2, 1, seed=0)
    assert g.num_edges == 1
    g = G.barabasi_albert(6, 5, seed=0)  # the clique alone
    assert g.num_edges == 15


def test_watts_strogatz_structure():
    n, k = 10_000, 6
    ring = G.watts_strogatz(n, k, 0.0, seed=0, weights="unit")
    assert np.all(_degrees(ring) == k)
    assert _edge_set(ring) == {
        (min(u, (u + j) % n), max(u, (u + j) % n)) for u in range(n) for j in range(1, k // 2 + 1)
    }
    g = G.watts_strogatz(n, k, 0.3, seed=0, weights="unit")
    assert g.num_edges == n * k // 2
    moved = len(_edge_set(g) - _edge_set(ring))
    assert 0.27 * g.num_edges < moved < 0.33 * g.num_edges
    # Every vertex keeps the ring edges it did not move: at least k/2 of them on average.
    assert _degrees(g).min() >= 1
    full = G.watts_strogatz(9, 8, 1.0, seed=0)  # nowhere to move to: all stay
    assert full.num_edges == 36


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: G.chung_lu(1, 1), "n >= 2"),
        (lambda: G.chung_lu(100, 0), "avg_degree"),
        (lambda: G.chung_lu(100, 100), "avg_degree"),
        (lambda: G.chung_lu(100, 4, exponent=2.0), "exponent"),
        (lambda: G.barabasi_albert(4, 4), "n > m"),
        (lambda: G.barabasi_albert(10, 0), "m >= 1"),
        (lambda: G.watts_strogatz(10, 3), "even k"),
        (lambda: G.watts_strogatz(10, 10), "even k"),
        (lambda: G.watts_strogatz(10, 0), "even k"),
        (lambda: G.watts_strogatz(10, 4, p=1.5), "probability"),
        (lambda: G.chung_lu(100, 4, weights="heavy"), "unknown weights"),
        (lambda: G.random_graph(100, 400, weights="heavy"), "unknown weights"),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_too_large_is_refused_before_drawing():
    with pytest.raises(ValueError, match="2\\*\\*31"):
        G.chung_lu(2**31, 4)
    with pytest.raises(ValueError, match="2\\*\\*31"):
        G.barabasi_albert(2**31, 2)
    with pytest.raises(ValueError, match="2\\*\\*31"):
        G.watts_strogatz(2**31, 2)


@pytest.mark.parametrize("kind", G.GRAPH_KINDS)
def test_generate_kinds(kind):
    g = G.generate(kind, 2000, 8000, seed=1, weights="unit")
    assert g.num_nodes == 2000
    assert 0.9 * 8000 <= g.num_edges <= 8000
    assert np.all(g.edge_weight == 1)
    with pytest.raises(ValueError, match="unknown graph kind"):
        G.generate("lattice", 10, 20)
