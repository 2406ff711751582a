"""kernels/b_matching.cu: run in CPU emulation (every block's threads real and
concurrent, CAS real) and, with a GPU, on the device. Both must return the CPU
engine's b-matching exactly. NVRTC compiles of the file are covered by
tests/gpu/test_kernels_nvrtc.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nx_gpumatch import generators as gen
from nx_gpumatch.algorithms.b_matching import b_matching, b_matching_edges
from nx_gpumatch.gpu import b_matching as gbm
from nx_gpumatch.gpu._emulate import options
from nx_gpumatch.graph import Graph
from tests.support.inputs import star_forest, with_nonpositive

GRAPHS = {
    "random": lambda: gen.random_graph(300, 1200, seed=1),
    "rmat-skewed": lambda: gen.rmat(9, 8, kind="g500", seed=2),
    "all-ties": lambda: gen.rmat(8, 6, kind="ssca", seed=4, weights=None),
    "star-forest": lambda: star_forest(5, 50),
    "nonpositive+isolated": lambda: with_nonpositive(200, 800, 5),
    "single-edge": lambda: Graph.from_arrays(np.array([0]), np.array([1]), np.array([2.0])),
    "no-edges": lambda: Graph.from_arrays(
        np.array([], np.int64), np.array([], np.int64), None, num_nodes=4
    ),
}


def _b_cases(g):
    n = g.num_nodes
    rng = np.random.default_rng(n)
    deg = np.diff(g.indptr)
    return {
        "1": np.ones(n, np.int64),
        "3": np.full(n, 3, np.int64),
        "mixed": rng.integers(0, 5, n),
        "deg-or-more": deg + rng.integers(0, 2, n),
    }


def _check(g, b, backend, **opts):
    want = b_matching_edges(g, b, "greedy", device="cpu")
    with options(**opts):
        got = gbm.run(g, b, backend=backend)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_emulated_equals_cpu(name):
    g = GRAPHS[name]()
    for label, b in _b_cases(g).items():
        _check(g, b, "emulate")


@pytest.mark.parametrize("seed", [0, 1])
def test_emulated_under_chaos(seed):
    # Threads yield at random atomics: lost CAS races on the hubs' slots happen constantly.
    g = star_forest(5, 50, seed=seed)
    _check(g, np.full(g.num_nodes, 2, np.int64), "emulate", chaos=256, slots=3, seed=seed)


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(1, 40),
    m=st.integers(0, 150),
    seed=st.integers(0, 2**16),
    bmax=st.integers(0, 6),
)
def test_emulated_random_small(n, m, seed, bmax):
    rng = np.random.default_rng(seed)
    g = Graph.from_arrays(
        rng.integers(0, n, m),
        rng.integers(0, n, m),
        rng.integers(-1, 4, m).astype(float),
        num_nodes=n,
    )
    _check(g, rng.integers(0, bmax + 1, n), "emulate")


# ------------------------------------------------------------- work bounds
def _hub(d, taken, seed=0):
    """Hub 0 with leaves 1..d (heavier leaf ids weigh more, in shuffled id
    order); the `taken` heaviest leaves have a private partner that outbids the
    hub. With cap(hub) = 1 the hub goes past `taken` candidates (more than one
    batch) and must then pick exactly the best free leaf."""
    rng = np.random.default_rng(seed)
    leaves = np.arange(1, d + 1)
    w_hub = 1.0 + rng.permutation(d) / d
    best = leaves[np.argsort(-w_hub)[:taken]]
    partners = d + 1 + np.arange(taken)
    src = np.concatenate([np.zeros(d, np.int64), best])
    dst = np.concatenate([leaves, partners])
    w = np.concatenate([w_hub, np.full(taken, 10.0)])
    return Graph.from_arrays(src, dst, w)


@pytest.mark.parametrize(
    "d,taken,hub_b", [(200, 0, 200), (200, 45, 1), (200, 150, 1), (200, 100, 4)]
)
def test_emulated_work_is_not_quadratic(d, taken, hub_b):
    """The hub proposes up to d times: re-reading its row for each proposal
    would cost d**2 entries; sorted batches (doubling) cost O(d log d)."""
    g = _hub(d, taken)
    b = np.ones(g.num_nodes, np.int64)
    b[0] = hub_b
    want = b_matching_edges(g, b, "greedy", device="cpu")
    stats = {}
    got = gbm.run(g, b, backend="emulate", stats=stats)
    np.testing.assert_array_equal(got, want)
    arcs = 2 * g.num_edges
    print(
        f"hub d={d} taken={taken} b={hub_b}: rounds={stats['rounds']} entries read={stats['work']}"
    )
    # per batch: a count, four radix passes, a gather; log2(d / 32) + 1 batches
    assert stats["work"] <= 8 * arcs * (int(np.log2(d / 32)) + 2)
    assert stats["work"] < d * d


# ------------------------------------------------------------- on a GPU
@pytest.mark.gpu
@pytest.mark.parametrize("b", [1, 3, 10])
def test_gpu_equals_cpu(b):
    g = gen.random_graph(200_000, 1_600_000, seed=0)
    bv = np.full(g.num_nodes, b, np.int64)
    np.testing.assert_array_equal(
        gbm.run(g, bv, backend="cupy"), b_matching_edges(g, bv, "b_suitor", device="cpu")
    )


@pytest.mark.gpu
def test_gpu_skewed_and_front_end():
    g = gen.rmat(16, 8, kind="g500", seed=3)
    b = np.random.default_rng(0).integers(0, 12, g.num_nodes)
    want = b_matching_edges(g, b, "greedy", device="cpu")
    np.testing.assert_array_equal(gbm.run(g, b, backend="cupy"), want)
    s, d = b_matching(g, b, device="gpu")
    np.testing.assert_array_equal(s, g.edge_src[want])
    np.testing.assert_array_equal(d, g.edge_dst[want])


def test_negative_b_counts_as_zero_on_the_device():
    # the public functions refuse b < 0; the engine itself treats it as 0, as the CPU's does
    g = Graph.from_arrays([0, 0, 1, 2, 3], [1, 2, 2, 3, 4], [3.0, 2, 1, 5, 4])
    b = np.array([-1, 2, 1, 1, 1])
    got = gbm.run(g, b, backend="emulate")
    np.testing.assert_array_equal(
        got, b_matching_edges(g, np.maximum(b, 0), "greedy", device="cpu")
    )
