"""Device memory of GPU graph preparation, measured in emulation
(nx_gpumatch.gpu._strict.device_memory): the packed-key sorts hold no
permutation of the arcs, and the device CSR stays the host's."""

import numpy as np
import pytest

from nx_gpumatch import Graph
from nx_gpumatch.gpu import _strict
from nx_gpumatch.gpu import graph as gg

FIELDS = ("edge_src", "edge_dst", "edge_weight", "indptr", "indices", "arc_edge")


def _pairs(m, n, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(-2, 6, m).astype(float)


@pytest.mark.parametrize("chunk", [3, 1 << 22])
@pytest.mark.parametrize("n,m", [(0, 0), (4, 0), (1, 5), (30, 400), (2000, 9000)])
def test_from_coo_is_the_host_csr(n, m, chunk, monkeypatch):
    monkeypatch.setattr(gg, "CHUNK", chunk)
    src, dst, w = _pairs(m, max(n, 1), n + m)
    for weight in (w, None):
        dg = gg.DeviceGraph.from_coo("emulate", n, src.astype(np.int32), dst, weight)
        host = Graph.from_arrays(src, dst, weight, num_nodes=n)
        for f in FIELDS:
            got, want = getattr(dg, f), getattr(host, f)
            assert got.dtype == want.dtype and np.array_equal(got, want), f
        # rows best-first: by rank of the edge, among positive-weight edges
        sptr, snbr, srank = dg.sorted_ranked_adjacency()
        order, usable = dg.edge_order()
        top = order[:usable]
        rows = np.concatenate([dg.edge_src[top], dg.edge_dst[top]])
        cols = np.concatenate([dg.edge_dst[top], dg.edge_src[top]])
        ranks = np.concatenate([np.arange(usable)] * 2)
        arcs = np.lexsort((ranks, rows))
        assert snbr.dtype == srank.dtype == np.int32
        assert np.array_equal(snbr, cols[arcs]) and np.array_equal(srank, ranks[arcs])
        assert np.array_equal(sptr, np.r_[0, np.cumsum(np.bincount(rows, minlength=n))])


def test_device_memory_counts_arrays_and_sort_buffers():
    xp = _strict
    with _strict.device_memory() as mem:
        a = xp.zeros(100_000, xp.int64)
    assert 800_000 <= mem.allocated < 810_000 and mem.peak >= mem.allocated
    with _strict.device_memory() as mem:
        b = xp.sort(a)
        del b
    # the output and the radix sort's second buffer
    assert 1_600_000 <= mem.peak < 1_700_000 and mem.allocated < 10_000
    with _strict.device_memory() as mem:
        b = xp.argsort(a)
        del b
    # int64 index out, the keys' copy, and both doubled
    assert 3_200_000 <= mem.peak < 3_300_000


def test_graph_preparation_peak_bytes_per_edge(monkeypatch):
    # chunks far below the graph's size, as on a graph of 10**8 edges
    monkeypatch.setattr(gg, "CHUNK", 1 << 14)
    m, n = 200_000, 25_000
    src, dst, w = _pairs(m, n, 7)
    w = np.abs(w) + 1
    # the caller's arrays on the device already (copying them is not preparation)
    src, dst, w = (_strict.asarray(x) for x in (src, dst, w))
    with _strict.device_memory() as prep:
        dg = gg.DeviceGraph.from_coo("emulate", n, src, dst, w)
    edges = dg.num_edges
    resident = sum(getattr(dg, f).nbytes for f in FIELDS)
    assert edges > 199_000
    assert resident / edges < 34  # 4 + 4 + 8 + 8 + 8 per edge, 8 per vertex
    assert prep.allocated == pytest.approx(resident, rel=0.01)
    # sorting (row, column) and (lo, hi) with int64 permutations took 166
    assert prep.peak / edges < 70
    dg.edge_order()
    with _strict.device_memory() as adj:
        dg.sorted_ranked_adjacency()
    # with an int64 permutation of the arcs it took 132
    assert adj.peak / edges < 56
    assert adj.allocated / edges < 22


@pytest.mark.parametrize("chunk", [3, 1 << 22])
@pytest.mark.parametrize(
    "w",
    [
        np.zeros(0),
        np.array([2.0]),
        np.array([1.0, 3.0, 1.0, -2.0, 0.0, 3.0, 1.0, 1e-300, -0.0]),
        np.random.default_rng(3).integers(-3, 4, 5000).astype(float),
        np.random.default_rng(4).random(5000),
    ],
    ids=["empty", "one", "ties", "small-int", "random"],
)
def test_edge_order_is_a_stable_sort_without_a_permutation(w, chunk, monkeypatch):
    """Heavier first, ties by edge id (the (src, dst) order), as a stable
    argsort of -w gives, found with one sort of packed keys: no argsort, so no
    int64 permutation of the edges is ever held."""
    monkeypatch.setattr(gg, "CHUNK", chunk)
    m = w.shape[0]
    n = m + 1
    dg = gg.DeviceGraph.from_coo("emulate", n, np.arange(m), np.arange(m) + 1, w)
    assert np.array_equal(dg.edge_weight, w)

    def no_argsort(*args, **kw):
        raise AssertionError("edge_order argsorts")

    monkeypatch.setattr(_strict, "argsort", no_argsort)
    order, usable = dg.edge_order()
    assert order.dtype == np.int32
    assert np.array_equal(order, np.argsort(-w, kind="stable"))
    assert usable == int((w > 0).sum())


def test_edge_order_peak_bytes_per_edge():
    m, n = 200_000, 25_000
    src, dst, w = _pairs(m, n, 8)
    dg = gg.DeviceGraph.from_coo("emulate", n, src, dst, np.abs(w) + 1)
    with _strict.device_memory() as mem:
        dg.edge_order()
    # an argsort of -w took 8 (the negation) + 40 (int64 index, keys copy,
    # both doubled) + 4 (int32 copy of the order)
    assert mem.peak / dg.num_edges < 30
    assert mem.allocated / dg.num_edges < 5
