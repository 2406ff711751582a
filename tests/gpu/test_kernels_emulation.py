"""CUDA kernels executed on the CPU (``backend="emulate"``).

Part 1 checks the emulation itself: correct kernels give exact answers, and
broken ones (early return before a barrier, divergent shuffles, endless spins,
mismatched argument types) fail loudly instead of passing.
Part 2 runs the matching kernels and requires the exact CPU-engine matching.
"""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nx_gpumatch._validation import seed_key
from nx_gpumatch.gpu._emulate import EmulationError, EmulationHang, EmuModule, options
from nx_gpumatch.gpu._launch import get_module

SELFTEST = Path(__file__).parent / "kernels" / "emu_selftest.cu"


@pytest.fixture(scope="module")
def selftest():
    return EmuModule("emu_selftest", source=SELFTEST.read_text())


# --------------------------------------------------------------- part 1
@pytest.mark.parametrize("n", [1, 31, 1000, 4097])
def test_block_sum(selftest, n):
    x = np.random.default_rng(n).integers(-1000, 1000, n).astype(np.int64)
    total = np.zeros(1, np.uint64)
    selftest.get_function("block_sum")((3,), (96,), (x, np.int64(n), total))
    assert int(total[0].astype(np.int64)) == int(x.sum())


def test_warp_intrinsics(selftest):
    n = 300
    x = np.random.default_rng(1).integers(0, 100, n).astype(np.int32)
    out = np.zeros(4 * n, np.int32)
    selftest.get_function("warp_ops")((3,), (128,), (x, np.int32(n), out), shared_mem=128 * 4)
    pad = np.full(384, -1, np.int32)
    pad[:n] = x
    ref = np.zeros((n, 4), np.int32)
    for i in range(n):
        w = pad[i // 32 * 32 : i // 32 * 32 + 32]
        lane = i % 32
        ref[i] = [
            w.max(),
            ((w >= 0) & (w % 2 == 1)).sum(),
            w[0] + pad[i ^ 1],
            -7 if lane == 0 else w[lane - 1],
        ]
    np.testing.assert_array_equal(out.reshape(n, 4), ref)


@pytest.mark.parametrize("chaos", [0, 128])
def test_contended_cas(selftest, chaos):
    counter = np.zeros(7, np.uint64)
    with options(chaos=chaos, slots=3):
        selftest.get_function("cas_count")((5,), (64,), (counter, np.int32(7), np.int32(40)))
    assert int(counter.sum()) == 5 * 64 * 40


def test_early_return_before_barrier_fails(selftest):
    x = np.arange(128, dtype=np.int32)
    with pytest.raises(EmulationError, match="returned"):
        selftest.get_function("early_return_barrier")((1,), (128,), (x, np.int32(100)))


def test_divergent_shuffle_fails(selftest):
    with pytest.raises(EmulationError, match="__shfl_xor_sync"):
        selftest.get_function("divergent_shuffle")((2,), (64,), (np.zeros(64, np.int32),))


def test_divergent_barrier_fails(selftest):
    with pytest.raises(EmulationError, match="__syncthreads"):
        selftest.get_function("divergent_barrier")((2,), (64,), (np.zeros(64, np.int32),))


def test_endless_spin_hits_the_time_limit(selftest):
    with options(timeout=2.0), pytest.raises(EmulationHang, match="time limit"):
        selftest.get_function("spin_forever")((2,), (64,), (np.zeros(1, np.int32),))
    # the module is still usable afterwards
    total = np.zeros(1, np.uint64)
    selftest.get_function("block_sum")((1,), (64,), (np.ones(10, np.int64), np.int64(10), total))
    assert total[0] == 10


def test_lost_updates_are_visible(selftest):
    """A plain read-modify-write loses increments under real concurrency."""
    counter = np.zeros(1, np.int32)
    with options(chaos=256, slots=2):
        selftest.get_function("racy_count")((4,), (64,), (counter, np.int32(50)))
    assert counter[0] < 4 * 64 * 50


def test_argument_checks(selftest):
    k = selftest.get_function("block_sum")
    total = np.zeros(1, np.uint64)
    x = np.ones(10, np.int64)
    with pytest.raises(TypeError, match="dtype int32"):
        k((1,), (32,), (x.astype(np.int32), np.int64(10), total))
    with pytest.raises(TypeError, match="numpy int32"):
        k((1,), (32,), (x, np.int32(10), total))
    with pytest.raises(TypeError, match="takes 3 arguments"):
        k((1,), (32,), (x, total))
    w = selftest.get_function("warp_ops")
    with pytest.raises(TypeError, match="Python int"):
        w((1,), (32,), (np.ones(4, np.int32), 4, np.zeros(16, np.int32)))
    with pytest.raises(ValueError, match="threads per block"):
        k((1,), (2048,), (x, np.int64(10), total))


def test_unknown_kernel(selftest):
    with pytest.raises(AttributeError, match="no kernel"):
        selftest.get_function("nope")


def test_get_module_is_cached():
    a = get_module("matching", backend="emulate")
    assert get_module("matching", backend="emulate") is a
    print(
        f"g++ emulation build of kernels/matching.cu ({a.path.name}); kernels: {', '.join(a.kernels)}"
    )
    print(a.compile_log or "(no compiler warnings)")


def test_mutable_device_globals_are_refused():
    src = '__device__ int counter;\nextern "C" __global__ void k(int* x) { x[0] = counter; }\n'
    with pytest.raises(EmulationError, match="mutable __device__ global"):
        EmuModule("bad_globals", source=src)


def test_global_without_extern_c_is_refused():
    with pytest.raises(ValueError, match='extern "C"'):
        EmuModule("bad_linkage", source="__global__ void k(int* x) { x[0] = 1; }\n")


# --------------------------------------------------------------- part 2
from nx_gpumatch import generators as gen  # noqa: E402
from nx_gpumatch.algorithms._compact import compact_graph  # noqa: E402
from nx_gpumatch.algorithms.matching import mate_array  # noqa: E402
from nx_gpumatch.gpu import matching as gm  # noqa: E402
from nx_gpumatch.graph import Graph  # noqa: E402
from tests.support.inputs import star_forest, with_nonpositive  # noqa: E402


def _path_decreasing(n=200):
    """Weights fall along the path: local max needs many rounds."""
    src = np.arange(n - 1)
    return Graph.from_arrays(src, src + 1, np.linspace(2.0, 1.0, n - 1))


GRAPHS = {
    "random": lambda: gen.random_graph(300, 1200, seed=1),
    "rmat-skewed": lambda: gen.rmat(9, 8, kind="g500", seed=2),
    "rmat-integer-ties": lambda: gen.rmat(9, 6, kind="g500", seed=3, weights="integer"),
    "all-ties": lambda: gen.rmat(8, 6, kind="ssca", seed=4, weights=None),
    "star-forest": lambda: star_forest(6, 60),
    "path": _path_decreasing,
    "nonpositive+isolated": lambda: with_nonpositive(250, 900, 7),
    "single-edge": lambda: Graph.from_arrays(np.array([0]), np.array([1]), np.array([2.0])),
    "no-edges": lambda: Graph.from_arrays(
        np.array([], np.int64), np.array([], np.int64), None, num_nodes=5
    ),
}


@pytest.fixture(scope="module", params=sorted(GRAPHS))
def graph(request):
    return GRAPHS[request.param]()


@pytest.fixture(scope="module")
def greedy_mate(graph):
    return mate_array(graph, "greedy", device="cpu")


def _assert_same(got, want, what):
    assert got.dtype == np.int64 and got.shape == want.shape
    diff = np.flatnonzero(got != want)
    assert diff.size == 0, (
        f"{what}: {diff.size} vertices differ from the CPU engine, e.g. {diff[:5]} -> {got[diff[:5]]} vs {want[diff[:5]]}"
    )


@pytest.mark.parametrize("vpw", [8, 1, 32, 5])
def test_suitor_equals_cpu(graph, greedy_mate, vpw):
    if vpw != 8 and graph.num_edges < 100:
        pytest.skip("one setting is enough for tiny graphs")
    assert np.array_equal(mate_array(graph, "suitor", device="cpu"), greedy_mate)
    with options(chaos=64, slots=3, seed=vpw, timeout=30):
        got = gm.run(graph, "suitor", backend="emulate", vertices_per_warp=vpw)
    print(
        f"suitor vpw={vpw}: n={graph.num_nodes} m={graph.num_edges} matched={int((got >= 0).sum())} == CPU engine"
    )
    _assert_same(got, greedy_mate, f"suitor (vertices per warp {vpw})")


def test_local_max_equals_cpu(graph, greedy_mate):
    assert np.array_equal(mate_array(graph, "local_max", device="cpu"), greedy_mate)
    with options(chaos=64, slots=3, timeout=30):
        got = gm.run(graph, "local_max", backend="emulate")
    print(
        f"local_max: n={graph.num_nodes} m={graph.num_edges} matched={int((got >= 0).sum())} == CPU engine"
    )
    _assert_same(got, greedy_mate, "local max")


def test_greedy_on_gpu_is_suitor(graph, greedy_mate):
    _assert_same(gm.run(graph, "greedy", backend="emulate"), greedy_mate, "greedy")


@pytest.mark.parametrize(
    "select,seed", [("weighted", 12345), ("random", 777), ("weighted", 2**64 - 1)]
)
def test_red_blue_equals_cpu(graph, select, seed):
    want = mate_array(graph, "red_blue", device="cpu", seed=seed, select=select)
    # as the front end routes it: vertices without edges never reach an engine,
    # and red-blue's random choices follow the vertex ids it is given
    small, c = compact_graph(graph)
    with options(chaos=64, slots=3, timeout=30):
        got = gm.run(
            graph if c is None else small,
            "red_blue",
            seed=seed_key(seed),  # the key the front end draws from the seed
            select=select,
            backend="emulate",
        )
    if c is not None:
        got = c.spread_partners(got, c)
    print(f"red_blue {select} seed={seed}: matched={int((got >= 0).sum())} == CPU engine")
    _assert_same(got, want, f"red-blue {select}")
    # and it is a maximal matching of usable edges
    idx = np.arange(graph.num_nodes)
    m = got >= 0
    assert np.array_equal(got[got[m]], idx[m])
    usable = graph.edge_weight > 0
    assert not np.any((got[graph.edge_src[usable]] < 0) & (got[graph.edge_dst[usable]] < 0))


def test_suitor_kernel_is_repeatable():
    """Different schedules (chaos seeds, slot counts) give the same words."""
    g = gen.rmat(8, 8, kind="g500", seed=11, weights="integer")
    want = mate_array(g, "greedy", device="cpu")
    for s in range(3):
        with options(chaos=200, slots=1 + s, seed=100 + s):
            _assert_same(gm.run(g, "suitor", backend="emulate"), want, f"suitor run {s}")


@settings(max_examples=12, deadline=None)
@given(
    n=st.integers(1, 150),
    density=st.floats(0.0, 6.0),
    levels=st.integers(1, 4),
    vpw=st.sampled_from([1, 3, 8, 32]),
    seed=st.integers(0, 2**32 - 1),
)
def test_suitor_and_local_max_random_ties(n, density, levels, vpw, seed):
    """Few distinct weights (so ties everywhere), any size, any chunking."""
    rng = np.random.default_rng(seed)
    m = int(density * n)
    g = Graph.from_arrays(
        rng.integers(0, n, m),
        rng.integers(0, n, m),
        rng.integers(0, levels, m).astype(float),
        num_nodes=n,
    )
    want = mate_array(g, "greedy", device="cpu")
    with options(chaos=128, slots=2, seed=seed, timeout=30):
        _assert_same(gm.run(g, "suitor", backend="emulate", vertices_per_warp=vpw), want, "suitor")
        _assert_same(gm.run(g, "local_max", backend="emulate"), want, "local max")


# --------------------------------------------------------------- part 3
# Work and rounds. Suitor and local max read sorted rows through a pointer per
# vertex, so whole runs read O(n + m) row entries however often vertices are
# displaced; local max and red-blue enqueue many rounds per host wait.
def _unit_path(n):
    src = np.arange(n - 1)
    return Graph.from_arrays(src, src + 1, None)


def _unit_star(leaves):
    return Graph.from_arrays(np.zeros(leaves, np.int64), np.arange(1, leaves + 1), None)


def _unit_grid(rows, cols):
    ids = np.arange(rows * cols).reshape(rows, cols)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    return Graph.from_arrays(src, dst, None)


def _displaced_hub(d):
    """Hub 0 prefers leaf d, then d-1, ...; leaf i's own partner (id 2d + 1 - i,
    so the partners of the hub's favourites come first) outbids the hub. Run in
    id order, the hub is displaced d times: re-reading its row each time would
    cost d**2 entries."""
    leaves = np.arange(1, d + 1)
    partners = 2 * d + 1 - leaves
    src = np.concatenate([np.zeros(d, np.int64), leaves])
    dst = np.concatenate([leaves, partners])
    w = np.concatenate([1.0 + leaves / d, np.full(d, 10.0)])
    return Graph.from_arrays(src, dst, w)


SHAPES = {
    "path": lambda: _unit_path(260),
    "star": lambda: _unit_star(300),
    "grid": lambda: _unit_grid(16, 16),
    "displaced-hub": lambda: _displaced_hub(200),
    "random": lambda: gen.random_graph(300, 1500, seed=3, weights=None),
}


@pytest.fixture(scope="module", params=sorted(SHAPES))
def shape(request):
    g = SHAPES[request.param]()
    return request.param, g, mate_array(g, "greedy", device="cpu")


def _syncs_bound(rounds):
    # batches of 1, 2, 4, ..., ROUNDS_PER_SYNC rounds, plus one that finds nothing
    steps = int(np.log2(gm.ROUNDS_PER_SYNC))
    return steps + 2 + max(0, rounds - (2**steps - 1)) // gm.ROUNDS_PER_SYNC + 1


def test_suitor_work_is_linear(shape):
    name, g, want = shape
    stats = {}
    _assert_same(gm.run(g, "suitor", backend="emulate", stats=stats), want, "suitor")
    n, arcs = g.num_nodes, 2 * g.num_edges
    print(f"suitor {name}: n={n} arcs={arcs} entries read={stats['work']}")
    # each attempt moves a pointer past >= 1 entry and reads one 32-entry window
    assert stats["work"] <= 32 * (n + arcs)
    if name == "displaced-hub":
        assert stats["work"] < (g.num_nodes // 2) ** 2 // 4


def test_local_max_rounds_and_work(shape):
    name, g, want = shape
    stats = {}
    _assert_same(gm.run(g, "local_max", backend="emulate", stats=stats), want, "local max")
    n, m = g.num_nodes, g.num_edges
    print(
        f"local_max {name}: n={n} m={m} rounds={stats['rounds']} host waits={stats['host_syncs']} "
        f"entries read={stats['work']}"
    )
    # worklist entries: n + one per pointer step; plus one row read per matched vertex
    assert stats["work"] <= n + 6 * m
    assert stats["host_syncs"] <= _syncs_bound(stats["rounds"])
    bound = {"star": 2, "path": n // 2 + 1, "grid": n // 2 + 1}.get(name)
    if bound is not None:
        assert stats["rounds"] <= bound


def test_red_blue_rounds_and_work(shape):
    name, g, _ = shape
    stats = {}
    want = mate_array(g, "red_blue", device="cpu", seed=9, select="weighted")
    got = gm.run(g, "red_blue", seed=seed_key(9), select="weighted", backend="emulate", stats=stats)
    _assert_same(got, want, "red-blue")
    arcs = 2 * g.num_edges
    print(
        f"red_blue {name}: arcs={arcs} rounds={stats['rounds']} host waits={stats['host_syncs']} "
        f"entries read={stats['work']}"
    )
    assert stats["host_syncs"] <= _syncs_bound(stats["rounds"])
    # each round reads only the live arcs of unfinished vertices
    assert stats["work"] <= 8 * arcs
