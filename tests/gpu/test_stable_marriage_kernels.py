"""kernels/stable_marriage.cu: run in CPU emulation (every block's threads real
and concurrent, CAS real) and, with a GPU, on the device. Both must return the
CPU engines' man-optimal matching and proposal count exactly. NVRTC compiles
of the file are covered by tests/gpu/test_kernels_nvrtc.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nx_gpumatch
from nx_gpumatch.algorithms import stable_marriage as sm
from nx_gpumatch.gpu._emulate import options


@st.composite
def array_instances(draw):
    nm = draw(st.integers(0, 40))
    nw = draw(st.integers(0, 40))
    rnd = draw(st.randoms(use_true_random=False))

    def side(n, n_other):
        lists = [rnd.sample(range(n_other), rnd.randint(0, n_other)) for _ in range(n)]
        ptr = np.zeros(n + 1, np.int64)
        ptr[1:] = np.cumsum([len(x) for x in lists])
        return ptr, np.array([x for lst in lists for x in lst], dtype=np.int32)

    return side(nm, nw), side(nw, nm)


def _check(prefs, backend, **kw):
    want, want_props = sm.solve(prefs, engine="sequential")
    got, props = sm.solve(prefs, engine="gpu", backend=backend, **kw)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    assert props == want_props


@settings(max_examples=30, deadline=None)
@given(array_instances())
def test_emulated_kernel_equals_cpu(inst):
    men, women = inst
    _check(sm.prepare_preferences(men, women), "emulate")


@pytest.mark.parametrize("kind,n", [("easy", 1), ("easy", 2000), ("hard", 1), ("hard", 160)])
def test_emulated_kernel_generated(kind, n):
    men, women = nx_gpumatch.stable_marriage_instance(kind, n, seed=5)
    _check(sm.prepare_preferences(men, women), "emulate")


@pytest.mark.parametrize("seed", [0, 1])
def test_emulated_kernel_under_chaos(seed):
    # Threads yield at random atomics and fences: every man of a hard instance
    # fights for the same women, so lost CAS races happen constantly.
    men, women = nx_gpumatch.stable_marriage_instance("hard", 96, seed=seed)
    prefs = sm.prepare_preferences(men, women)
    with options(chaos=256, slots=3, seed=seed):
        _check(prefs, "emulate")


def test_gpu_engine_refuses_gale_shapley():
    prefs = sm.prepare_preferences({"a": ["x"]}, {"x": ["a"]})
    with pytest.raises(ValueError, match="McVitie-Wilson only"):
        sm.solve(prefs, algorithm="gale_shapley", engine="gpu", backend="emulate")


# ------------------------------------------------------------- real GPU
@pytest.mark.gpu
@pytest.mark.parametrize("kind,n", [("easy", 1), ("easy", 200_000), ("hard", 1), ("hard", 3000)])
def test_gpu_kernel_equals_cpu(kind, n):
    men, women = nx_gpumatch.stable_marriage_instance(kind, n, seed=2)
    _check(sm.prepare_preferences(men, women), "cupy")


@pytest.mark.gpu
def test_gpu_front_end():
    men = {"a": ["x", "y"], "b": ["y", "x"], "c": ["x"]}
    women = {"x": ["b", "c", "a"], "y": ["a", "b"]}
    assert nx_gpumatch.stable_marriage(men, women, device="gpu") == nx_gpumatch.stable_marriage(
        men, women, device="cpu"
    )
