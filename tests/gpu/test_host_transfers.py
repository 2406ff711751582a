"""The emulation's device arrays leave the device as CuPy's do
(nx_gpumatch.gpu._strict.ndarray), and the GPU engine's host code moves data
to the host a bounded number of times: each implicit transfer (``int()``,
``bool()``, ``.item()`` of a device array) waits for the GPU, so a count
that grows with the input is a loop over device data in host code."""

import numpy as np
import pytest

import nx_gpumatch
from nx_gpumatch.generators import planted_partition
from nx_gpumatch.gpu import _emulate, _strict
from nx_gpumatch.gpu import b_matching as gb
from nx_gpumatch.gpu import leiden as gle
from nx_gpumatch.gpu import louvain as gl
from nx_gpumatch.gpu import matching as gm
from nx_gpumatch.gpu._launch import to_host
from nx_gpumatch.gpu._source import check_args, parse_kernels

xp = _strict


def test_scalars_stay_on_the_device():
    a = xp.arange(10, dtype=xp.int64)
    for x in (a.sum(), a[3], xp.max(a), (a > 3).any(), a[a > 3]):
        assert isinstance(x, xp.ndarray)
    assert a.sum().ndim == 0 and a[3].ndim == 0
    assert [type(x) for x in a[:2]] == [xp.ndarray, xp.ndarray]


def test_implicit_transfers_are_counted_where_they_happen():
    a = xp.arange(10, dtype=xp.int64)
    with xp.host_transfers() as t:
        n = int(a.sum())
        flag = bool((a > 3).any())
        v = a[2].item()
        xs = a[:3].tolist()
        u = xp.unique(a)  # NumPy's own bool() inside unique is not the caller's
    assert (n, flag, v, xs, u.shape) == (45, True, 2, [0, 1, 2], (10,))
    assert t.count == 4
    assert {(f.rsplit("/", 1)[-1], what) for f, _, what in t.sites} == {
        ("test_host_transfers.py", w) for w in ("int()", "bool()", ".item()", ".tolist()")
    }
    with xp.host_transfers() as t:
        h = to_host(a)  # explicit
    assert t.count == 0 and type(h) is np.ndarray


def test_a_device_array_is_not_an_index():
    a = xp.arange(4, dtype=xp.int64)
    with pytest.raises(TypeError, match="no __index__"):
        range(a.sum())
    assert list(range(int(a.sum()))) == list(range(6))


def test_host_and_device_copies_are_apart():
    h = np.zeros(3)
    d = xp.asarray(h)
    d[0] = 5
    assert h[0] == 0
    back = to_host(d)
    back[1] = 7
    assert d[1] == 0 and d[0] == 5
    assert xp.asarray(d) is not None and xp.asarray(d).base is not None  # no copy on the device


def test_a_device_scalar_is_refused_as_a_kernel_scalar():
    """CuPy would pass a 0-d array as a pointer where the kernel takes an int."""
    params = parse_kernels('extern "C" __global__ void k(int n) {}')["k"]
    with pytest.raises(TypeError, match="unsupported argument type"):
        check_args("k", params, (xp.arange(3, dtype=xp.int32).sum(),), np)
    check_args("k", params, (np.int32(3),), np)


@pytest.fixture
def launches(monkeypatch):
    count = [0]
    real = _emulate.EmuKernel.__call__

    def counted(self, *args, **kw):
        count[0] += 1
        return real(self, *args, **kw)

    monkeypatch.setattr(_emulate.EmuKernel, "__call__", counted)
    return count


def _random(n, seed=0):
    rng = np.random.default_rng(seed)
    m = 4 * n
    return nx_gpumatch.Graph.from_arrays(
        rng.integers(0, n, m), rng.integers(0, n, m), rng.random(m) + 0.1, num_nodes=n
    )


def _count(fn, g, launches, warm=True):
    if warm:
        fn(g)  # kernels loaded
    launches[0] = 0
    with xp.host_transfers() as t:
        fn(g)
    return t, launches[0]


MATCHING = {
    "suitor": lambda g: gm.run(g, "suitor", backend="emulate"),
    "local_max": lambda g: gm.run(g, "local_max", backend="emulate"),
    "red_blue": lambda g: gm.run(g, "red_blue", backend="emulate"),
    "b_suitor": lambda g: gb.run(g, np.full(g.num_nodes, 2), backend="emulate"),
}


@pytest.mark.parametrize("family", sorted(MATCHING))
def test_matching_transfers_do_not_grow_with_the_graph(family, launches):
    small, _ = _count(MATCHING[family], _random(250), launches)
    large, n_launches = _count(MATCHING[family], _random(1500), launches)
    # more rounds may take a sync each; nothing per vertex or edge
    assert large.count <= small.count + 3, large.sites
    assert large.count <= n_launches + 2, large.sites


@pytest.mark.parametrize(
    "engine", [gl.louvain_levels, gle.leiden_levels], ids=["louvain", "leiden"]
)
def test_community_transfers_are_per_sweep_not_per_vertex(engine, launches):
    def run(g):
        return list(
            engine(
                g.indptr, g.indices, g.weights, g.loop_weight, backend="emulate", cpu_below_arcs=0
            )
        )

    counts = {}
    for n in (60, 150):
        g = planted_partition(n, 6, 8, 1, seed=1)[0]
        counts[n] = _count(run, g, launches, warm=n == 60)  # kernels loaded once
    (small, _), (large, n_launches) = counts[60], counts[150]
    # measured, Louvain / Leiden: 19 / 53 transfers on 60 vertices, 25 / 64 on 120,
    # 29 / 79 on 200 (about 4.6k / 6.7k launches), 33 / 73 on 300: they follow
    # the levels and sweeps; a transfer per vertex would add 90 here
    assert large.count < small.count + (150 - 60) // 2, large.sites
    assert large.count < n_launches


def test_the_package_kernels_take_device_arrays_only():
    """CuPy passes a NumPy array to a kernel by value (its bytes), not as a
    pointer: the package's emulated kernels refuse one, as a wrong dtype is."""
    from nx_gpumatch.gpu._launch import get_module

    k = get_module("matching", "emulate").get_function("suitor_mates")
    word, mate = xp.zeros(4, xp.uint64), xp.zeros(4, xp.int64)
    k((1,), (32,), (np.int32(4), word, mate))
    with pytest.raises(TypeError, match=r"expected a device array .*got numpy\.ndarray"):
        k((1,), (32,), (np.int32(4), np.zeros(4, np.uint64), mate))
