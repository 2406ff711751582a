"""kernels/louvain.cu run in CPU emulation (and on a GPU when there is one):
computeMove, commit, aggregation and whole runs give exactly the CPU engine's
results on integer weights (sums exact in any order) with the same bucket
order. NVRTC compilation of the file is covered by test_kernels_nvrtc.py."""

import math

import numpy as np
import pytest

from nx_gpumatch import Graph
from nx_gpumatch.cpu import louvain as cl
from nx_gpumatch.gpu import _strict
from nx_gpumatch.gpu import louvain as gl
from nx_gpumatch.gpu._emulate import options
from nx_gpumatch.gpu._launch import get_module, to_host
from tests.support.inputs import csr_rows


def hub_graph(seed, n=600):
    """Six planted groups plus hubs, so that every degree bucket is used
    (group kernels of 4/8/16/32 lanes, a warp with up to 3 arcs per lane, a
    block with a shared table, a block with a global one). Integer weights."""
    rng = np.random.default_rng(seed)
    block = rng.integers(0, 6, n)
    src, dst = [], []
    for _ in range(5 * n):
        u = int(rng.integers(0, n))
        v = (
            int(rng.choice(np.flatnonzero(block == block[u])))
            if rng.random() < 0.85
            else int(rng.integers(0, n))
        )
        src.append(u)
        dst.append(v)
    for h, d in [(0, 350), (1, 330), (2, 150), (3, 100), (4, 60), (5, 45), (6, 40)]:
        for v in rng.choice(n, d, replace=False):
            src.append(h)
            dst.append(int(v))
    w = rng.integers(1, 4, len(src)).astype(np.float64)
    return Graph.from_arrays(np.array(src), np.array(dst), w, num_nodes=n)


class Counting:
    """Wraps the module's kernels to record which variants ran."""

    def __init__(self, monkeypatch, backend):
        self.seen = set()
        mod = get_module("louvain", backend)
        real = mod.get_function

        def get_function(name):
            fn = real(name)

            def call(grid, block, args, shared_mem=0):
                if name == "compute_moves_group":
                    self.seen.add((name, int(args[4]), int(args[5])))
                elif name == "compute_moves_block":
                    self.seen.add((name, "shared" if args[5]["off"] is None else "global"))
                elif name in ("commit_moves", "intra_weights", "segment_sums"):
                    self.seen.add((name, int(args[-1])))  # threads per row
                else:
                    self.seen.add((name,))
                return fn(grid, block, args, shared_mem)

            return call

        monkeypatch.setattr(mod, "get_function", get_function)


def run_both(g, backend="emulate", **kw):
    order = kw.pop("order", None)
    gpu_only = {"cpu_below_arcs": kw.pop("cpu_below_arcs")} if "cpu_below_arcs" in kw else {}
    cpu = [
        (lab.tolist(), info["modularity"], info["moves"], info["sweeps"])
        for lab, info in cl.louvain_levels(
            g.indptr, g.indices, g.weights, g.loop_weight, order=order, **kw
        )
    ]
    gpu = _gpu_levels(g, order, backend, kw, gpu_only)
    return cpu, gpu


def _gpu_levels(g, order, backend, kw, gpu_only):
    return [
        (lab.tolist(), info["modularity"], info["moves"], info["sweeps"])
        for lab, info in gl.louvain_levels(
            g.indptr,
            g.indices,
            g.weights,
            g.loop_weight,
            order=order,
            backend=backend,
            **kw,
            **gpu_only,
        )
    ]


# ---------------------------------------------------------- single launches
def _state(g, seed):
    """A mid-sweep state: random communities (some singletons), their degrees
    and sizes, random activity flags and batches."""
    rng = np.random.default_rng(seed)
    n = g.num_nodes
    comm = np.where(rng.random(n) < 0.3, np.arange(n), rng.integers(0, n // 8, n)).astype(np.int32)
    k = cl.weighted_degrees(g.indptr, g.weights, g.loop_weight)
    a = np.bincount(comm, k, n)
    size = np.bincount(comm, minlength=n).astype(np.int32)
    prio = rng.permutation(n).astype(np.int32)
    batch = rng.integers(0, 3, n).astype(np.int32)
    active = (rng.random(n) < 0.9).astype(np.uint8)
    return comm, k, a, size, prio, batch, active


@pytest.mark.parametrize("seed", [1, 2])
def test_compute_moves_every_bucket_equals_cpu(seed):
    """computeMove for all vertices of each degree bucket against the CPU rule."""
    check_compute_moves(seed)


def check_compute_moves(seed):
    g = hub_graph(seed)
    comm, k, a, size, prio, batch, active = _state(g, seed)
    m2 = float(k.sum())
    r = 1.0 / m2
    bptr, verts = cl.degree_buckets(
        g.indptr, cl.MOVE_BUCKETS, np.arange(g.num_nodes, dtype=np.int32)
    )
    assert all(bptr[b + 1] > bptr[b] for b in range(7)), np.diff(bptr)
    maxdeg = int(np.diff(g.indptr).max())
    assert cl.dense_size(g.num_nodes, maxdeg, True) == g.num_nodes  # hub rows use it
    refs = []
    for dense in (g.num_nodes, 0):
        pos, bc, bj, bw = cl.move_scratch(1, g.num_nodes, maxdeg, dense)
        ref = np.full(g.num_nodes, -7, np.int32)
        ref_active = active.copy()
        slack = np.zeros(g.num_nodes, np.int64)
        n = g.num_nodes
        lv = cl.Level(g.indptr, g.indices, g.weights, g.loop_weight, k, prio, prio, bptr, verts)
        st = cl.MoveState(
            comm, a, size, batch, ref_active, np.zeros(n, np.uint8), slack,
            np.zeros((1, n), np.int64), ref, np.zeros(n),
        )  # fmt: skip
        scratch = cl.Scratch(pos, bc, bj, bw)
        unit = np.array([0, verts.shape[0]], np.int64)  # one work unit: all of verts
        cl.moves._compute_moves_seq(verts, unit, lv, st, scratch, r, 2.0**40 / m2)
        # both accumulators are left clean
        assert not bw[0, bc.shape[1] :].any() and (pos == -1).all()
        refs.append((ref, ref_active, slack))
    # the dense and the sparse accumulator make the same moves and margins
    for x, y in zip(*refs):
        assert np.array_equal(x, y)
    ref, ref_active, _ = refs[0]

    mod = get_module("louvain", "emulate")
    xp = _strict
    got = xp.full(g.num_nodes, -7, np.int32)
    got_active = xp.asarray(active)
    rows = (g.indptr, g.indices, g.weights, g.loop_weight)
    lev = gl._Level(xp, *map(xp.asarray, rows), xp.asarray(k))
    part = dict(comm=comm, a=a, size=size, prio=prio, batch=batch)
    part = {name: xp.asarray(v) for name, v in part.items()}
    part["active"] = got_active
    for b in range(7):
        lo, hi = int(bptr[b]), int(bptr[b + 1])
        host_vs = verts[lo:hi]
        vs = xp.asarray(host_vs)
        count = np.int32(hi - lo)
        common = (count, vs, lev.bundle(r), part)
        if b in gl.GROUP_KERNELS:
            width, slots = gl.GROUP_KERNELS[b]
            per = gl.BLOCK // width
            mod.get_function("compute_moves_group")(
                (math.ceil(int(count) / per),),
                (gl.BLOCK,),
                common + (np.int32(width), np.int32(slots), got),
                shared_mem=per * slots * 16,
            )
        elif b == 5:
            shared = dict(off=None, key=None, val=None, rep=None)
            mod.get_function("compute_moves_block")(
                (int(count),),
                (gl.BLOCK,),
                common + (np.int32(gl.BLOCK_SLOTS), shared, got),
                shared_mem=gl.BLOCK_SLOTS * 16,
            )
        else:
            off = xp.asarray(gl._pow2_tables(np.diff(g.indptr)[host_vs]))
            t = int(off[-1])
            mod.get_function("compute_moves_block")(
                (2,),
                (gl.BLOCK,),
                common
                + (
                    np.int32(0),
                    dict(
                        off=off,
                        key=xp.empty(t, np.int32),
                        val=xp.empty(t, np.float64),
                        rep=xp.empty(t, np.int32),
                    ),
                    got,
                ),
            )
    got, got_active = to_host(got), to_host(got_active)
    np.testing.assert_array_equal(got[verts], ref[verts])
    np.testing.assert_array_equal(got_active, ref_active)
    assert (got[verts] != comm[verts]).any()  # some vertices do move


@pytest.mark.parametrize("seed", [3])
def test_aggregation_equals_cpu(seed):
    """Sorted-arc aggregation: the same merged graph as the CPU engine (rows
    may list their arcs in another order)."""
    check_aggregation(seed)


def check_aggregation(seed):
    g = hub_graph(seed)
    rng = np.random.default_rng(seed)
    n = g.num_nodes
    # community sizes from 1 to ~150: merged rows short and long
    comm = np.where(
        rng.random(n) < 0.2,
        np.arange(n),
        rng.choice([0, 1, 2, 10, 11, 12, 13, 20, 21, 22, 23, 24, 25], n),
    ).astype(np.int32)
    loop = np.where(rng.random(n) < 0.1, rng.integers(1, 5, n), 0).astype(np.float64)
    k = cl.weighted_degrees(g.indptr, g.weights, loop)
    newid, K, ptr, members = cl.renumber(comm)
    pos = np.full((1, n), -1, np.int32)
    ref = cl.aggregate(
        comm,
        newid,
        K,
        ptr,
        members,
        g.indptr,
        g.indices,
        g.weights,
        loop,
        pos,
        1,
        *cl.own_buffers(),
    )
    xp = _strict
    lev = gl._Level(xp, *map(xp.asarray, (g.indptr, g.indices, g.weights, loop)), xp.asarray(k))
    nid, K2 = gl.renumber(xp, xp.asarray(comm))
    assert K2 == K and np.array_equal(nid, newid)
    got = gl.aggregate(xp, get_module("louvain", "emulate"), lev, xp.asarray(comm), nid, K2)

    rows = csr_rows(*map(to_host, (got.indptr, got.indices, got.w)), K)
    assert csr_rows(*ref[:3], K) == rows
    np.testing.assert_array_equal(ref[3], got.loop)
    np.testing.assert_array_equal(ref[4], got.k)


# --------------------------------------------------------------- whole runs
@pytest.mark.parametrize(
    "kw",
    [
        # one batch per bucket (Naim et al. 2017's bucket-synchronous sweep), coarse threshold
        dict(
            sequential_arcs=0,
            batch_fraction=50.0,
            max_batches=1,
            fine_below=0,
            coarse_threshold=1e-3,
        ),
        # several batches per bucket, fine threshold, all levels on the GPU
        dict(sequential_arcs=0, batch_fraction=1.0, max_batches=3, cpu_below_arcs=0),
    ],
    ids=["bucket-sync", "batched"],
)
def test_emulated_run_equals_cpu_engine(kw, monkeypatch):
    g = hub_graph(4)
    kw = dict(kw, order=np.random.default_rng(5).permutation(g.num_nodes))
    kw.setdefault("cpu_below_arcs", 0)
    counting = Counting(monkeypatch, "emulate")
    cpu, gpu = run_both(g, **kw)
    assert cpu == gpu
    assert len(cpu) >= 1 and cpu[-1][1] > 0.3
    variants = counting.seen
    for width, slots in gl.GROUP_KERNELS.values():
        assert ("compute_moves_group", width, slots) in variants
    assert ("compute_moves_block", "shared") in variants and (
        "compute_moves_block",
        "global",
    ) in variants
    for name in ("commit_moves", "intra_weights"):
        assert {v[1] for v in variants if v[0] == name} >= {1, 8, 32}, variants


def test_emulated_run_hands_small_levels_to_cpu():
    g = hub_graph(6)
    kw = dict(sequential_arcs=0, batch_fraction=2.0, max_batches=2, cpu_below_arcs=3000)
    cpu, gpu = run_both(g, **kw)
    assert cpu == gpu and len(cpu) >= 2


def test_emulation_under_thread_chaos():
    """Threads yield at random inside the CAS / atomic hashing and merging:
    the same results."""
    with options(chaos=200, seed=3, slots=3):
        check_compute_moves(8)
        check_aggregation(9)


# ------------------------------------------------------------- real device
@pytest.mark.gpu
@pytest.mark.parametrize("seed", [1, 2])
def test_gpu_run_equals_cpu_engine(seed):
    from nx_gpumatch import generators

    g = generators.random_graph(200_000, 1_500_000, seed=seed, weights="integer")
    kw = dict(order=np.random.default_rng(seed).permutation(g.num_nodes))
    cpu, gpu = run_both(g, backend="cupy", **kw)
    assert cpu == gpu
    g = hub_graph(seed)
    cpu, gpu = run_both(
        g, backend="cupy", sequential_arcs=0, batch_fraction=1.0, max_batches=3, cpu_below_arcs=0
    )
    assert cpu == gpu
