"""kernels/bipartite.cu: APFB / APsB run in CPU emulation (every block's threads
real and concurrent, CAS real) and, with a GPU, on the device. Each run must
reach the Numba engine's cardinality and pass the same Konig-cover proof.
NVRTC compiles of the file are covered by tests/gpu/test_kernels_nvrtc.py."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nx_gpumatch.algorithms.bipartite.matching import Biadjacency, solve
from nx_gpumatch.generators_bipartite import GENERATORS, bipartite_graph
from nx_gpumatch.gpu._emulate import options

VARIANTS = [
    (algo, wr, layout)
    for algo in ("apfb", "apsb")
    for wr in (True, False)
    for layout in ("ct", "mt")
]


def _size(bi, **kw):
    rmatch, cmatch, row_cover, col_cover = solve(bi, **kw)
    size = int((cmatch >= 0).sum())
    assert int(row_cover.sum() + col_cover.sum()) == size
    return size


def _check(A, backend, init="none", block=32, **variants):
    bi = Biadjacency.from_scipy(sp.csc_array(A))[0]
    want = _size(bi, algorithm="hopcroft_karp", init=init, device="cpu")
    stats = {}
    got = _size(bi, init=init, backend=backend, block=block, stats=stats, **variants)
    assert got == want
    assert stats["engine"] == "gpu"
    return stats


@st.composite
def matrices(draw):
    nr = draw(st.integers(1, 40))
    nc = draw(st.integers(1, 40))
    m = draw(st.integers(0, 120))
    r = draw(st.lists(st.integers(0, nr - 1), min_size=m, max_size=m))
    c = draw(st.lists(st.integers(0, nc - 1), min_size=m, max_size=m))
    return sp.coo_array((np.ones(m), (np.array(r, int), np.array(c, int))), shape=(nr, nc))


@settings(max_examples=15, deadline=None)
@given(matrices(), st.sampled_from(VARIANTS), st.sampled_from(["none", "cheap"]))
def test_emulated_kernels_reach_maximum(A, variant, init):
    algo, wr, layout = variant
    _check(A, "emulate", init=init, algorithm=algo, wr=wr, layout=layout)


@pytest.mark.parametrize("kind", sorted(GENERATORS))
@pytest.mark.parametrize(
    "variant", VARIANTS, ids=lambda v: f"{v[0]}-{'wr' if v[1] else 'plain'}-{v[2]}"
)
def test_emulated_kernels_generated(kind, variant):
    algo, wr, layout = variant
    A = bipartite_graph(kind, 120, seed=1)
    _check(A, "emulate", init="cheap", algorithm=algo, wr=wr, layout=layout)


@pytest.mark.parametrize("seed", [0, 1])
def test_emulated_kernels_under_chaos(seed):
    # threads yield at random atomics: lost CAS races on levels and endpoints
    A = bipartite_graph("random", 200, seed=seed)
    with options(chaos=256, slots=3, seed=seed):
        for algo in ("apfb", "apsb"):
            _check(A, "emulate", algorithm=algo, wr=True, layout="mt")


def test_emulated_empty_sides():
    for shape in [(0, 4), (4, 0), (3, 3)]:
        bi = Biadjacency.from_scipy(sp.csc_array(shape))[0]
        assert _size(bi, algorithm="apfb", backend="emulate") == 0


# ------------------------------------------------------------- real GPU
@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["random", "rmat", "layered", "long_path"])
@pytest.mark.parametrize(
    "variant", VARIANTS, ids=lambda v: f"{v[0]}-{'wr' if v[1] else 'plain'}-{v[2]}"
)
def test_gpu_kernels(kind, variant):
    algo, wr, layout = variant
    A = bipartite_graph(kind, 100_000, seed=2)
    _check(A, "cupy", init="karp_sipser", block=256, algorithm=algo, wr=wr, layout=layout)


@pytest.mark.gpu
def test_gpu_front_end():
    import nx_gpumatch as gm

    A = bipartite_graph("random", 50_000, seed=3)
    gpu = gm.maximum_bipartite_matching(A, algorithm="apfb", device="gpu")
    cpu = gm.maximum_bipartite_matching(A, device="cpu")
    assert (gpu >= 0).sum() == (cpu >= 0).sum()
