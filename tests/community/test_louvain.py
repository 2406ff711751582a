"""Louvain's engine: exact agreement with a plain-Python reference of its
rules (tests/support/louvain_reference.py), modularity against networkx's
Louvain, thread-count independence, sparse sweeps, margins, aggregation.
The front end's semantics, inputs and bad inputs: test_louvain_semantics.py."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nx_gpumatch as gm
from nx_gpumatch import Graph, generators
from nx_gpumatch.algorithms.community import common
from nx_gpumatch.algorithms.community import louvain as front
from nx_gpumatch.community import levels, schedule
from nx_gpumatch.cpu import louvain as cl
from tests.support.louvain_reference import communities_of, reference_levels


def engine_levels(g, **kw):
    weighted = kw.pop("weighted", True)
    indptr, indices, w, loop, _ = common.weighted_arrays(g, weighted)
    return [
        (lab.tolist(), info["modularity"])
        for lab, info in cl.louvain_levels(indptr, indices, w, loop, **kw)
    ]


def small_graphs():
    weight = st.sampled_from([1.0, 2.0, 3.0, 0.5, 0.25])
    return st.integers(1, 30).flatmap(
        lambda n: st.tuples(
            st.lists(
                st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), weight), max_size=4 * n
            ),
            st.integers(0, 2**32 - 1),
        ).map(
            lambda t: (
                Graph.from_arrays(
                    np.array([e[0] for e in t[0]], np.int64),
                    np.array([e[1] for e in t[0]], np.int64),
                    [e[2] for e in t[0]],
                    num_nodes=n,
                ),
                t[1],
            )
        )
    )


# -------------------------------------------------------- exact agreement
@settings(max_examples=60, deadline=None)
@given(small_graphs(), st.sampled_from([0.5, 1.0, 2.0]))
def test_engine_equals_reference_sequential(gs, resolution):
    g, s = gs
    order = np.random.default_rng(s).permutation(g.num_nodes)
    assert engine_levels(g, resolution=resolution, order=order) == reference_levels(
        g, resolution=resolution, order=order
    )


@settings(max_examples=40, deadline=None)
@given(small_graphs(), st.sampled_from([(0.2, 0), (0.5, 0), (1.0, 2), (4.0, 3), (1.0, 8)]))
def test_engine_equals_reference_batched(gs, batching):
    """Batches of several vertices (moves computed together), on 1 and 2 threads."""
    g, s = gs
    fraction, max_batches = batching
    order = np.random.default_rng(s).permutation(g.num_nodes)
    ref = reference_levels(g, order=order, batch_fraction=fraction, max_batches=max_batches)
    for t in (1, 2):
        with gm.cpu.threads(t):
            got = engine_levels(
                g,
                order=order,
                sequential_arcs=0,
                parallel_min_arcs=1,
                batch_fraction=fraction,
                max_batches=max_batches,
            )
        assert got == ref, t


@pytest.mark.parametrize("weighted", [True, False])
def test_karate_equals_reference(weighted):
    g = Graph.from_networkx(nx.karate_club_graph())
    assert engine_levels(g, weighted=weighted) == reference_levels(g, weighted=weighted)


def test_level_loop_hands_levels_between_engines(nthreads):
    """The level loop may change engines between levels (the GPU engine hands
    small levels to the CPU engine): handing the levels after the first to
    another engine keeps the run, labels included."""
    g = generators.random_graph(2000, 8000, seed=3)
    args = (g.indptr, g.indices, g.weights, g.loop_weight)
    kw = dict(order=np.random.default_rng(5).permutation(g.num_nodes), parallel_min_arcs=1)
    rule = cl.SweepRule(sequential_arcs=1000)

    class HandsOver(cl.LouvainEngine):
        @property
        def host_below_arcs(self):  # levels after the first go to a new host engine
            return 0 if self.n == g.num_nodes else self.arcs + 1

    def run(gen):
        return [(lab.tolist(), info) for lab, info in gen]

    got = run(levels.louvain(HandsOver(*args, rule, **kw), 1e-7))
    assert got == run(cl.louvain_levels(*args, sequential_arcs=1000, **kw)) and len(got) >= 3


def test_modularity_and_levels_match_networkx():
    """Reported modularity is networkx's; each level merges whole communities of
    the one before; every level but the last gained more than the threshold."""
    G = nx.les_miserables_graph()
    G.add_edge("Valjean", "Valjean", weight=7)
    g = Graph.from_networkx(G)
    for res in (0.5, 1.0, 2.0):
        q = nx.community.modularity(G, [{v} for v in G], resolution=res)
        prev = np.arange(g.num_nodes)
        lv = list(front.levels(g, resolution=res, seed=3))
        for i, (labels, info) in enumerate(lv):
            parts = communities_of(labels.tolist(), g.nodes)
            assert nx.community.is_partition(G, parts)
            assert info["modularity"] == pytest.approx(
                nx.community.modularity(G, parts, resolution=res), abs=1e-12
            )
            assert all(len(set(labels[prev == p].tolist())) == 1 for p in set(prev.tolist()))
            if i < len(lv) - 1:
                assert info["modularity"] - q > 1e-7
            q = info["modularity"]
            prev = labels


# ------------------------------------------------------------------ quality
def _quality_cases():
    rmat = generators.rmat(10, 8, seed=1, weights="integer").to_networkx()
    rgg = generators.random_geometric(2000, seed=2).to_networkx()
    planted = nx.planted_partition_graph(10, 60, 0.25, 0.01, seed=3)
    return [
        ("karate", nx.karate_club_graph(), "weight"),
        ("karate-unweighted", nx.karate_club_graph(), None),
        ("lesmis", nx.les_miserables_graph(), "weight"),
        ("rmat", rmat, "weight"),
        ("rgg", rgg, "weight"),
        ("planted", planted, None),
    ]


@pytest.mark.parametrize(
    "name,G,weight", _quality_cases(), ids=lambda x: x if isinstance(x, str) else ""
)
def test_modularity_at_least_99_percent_of_networkx(name, G, weight):
    seeds = range(4)
    ours = [
        nx.community.modularity(G, gm.louvain_communities(G, weight=weight, seed=s), weight=weight)
        for s in seeds
    ]
    ref = [
        nx.community.modularity(
            G,
            nx.community.louvain_communities(G, weight=weight, seed=s, backend="networkx"),
            weight=weight,
        )
        for s in seeds
    ]
    assert np.mean(ours) >= 0.99 * np.mean(ref), (ours, ref)


def test_large_level_parallel_thread_independent(nthreads):
    """A graph whose levels use parallel batches: same partition for 1 and 2 threads."""
    g = generators.random_graph(30_000, 150_000, seed=4)
    got = gm.louvain_communities(g, seed=5)
    ref = gm.louvain_communities(g, seed=5, threads=1)
    assert np.array_equal(got, ref)
    q = nx.community.modularity(g.to_networkx(), communities_of(got.tolist()))
    assert q > 0.25


def _grid(side):
    idx = np.arange(side * side).reshape(side, side)
    src = np.r_[idx[:, :-1].ravel(), idx[:-1].ravel()]
    dst = np.r_[idx[:, 1:].ravel(), idx[1:].ravel()]
    return Graph.from_arrays(src, dst, np.ones(src.shape[0]), num_nodes=side * side)


def _sparse_cases():
    planted, _ = generators.planted_partition(2000, 20, 6, 4, seed=2)
    n = 3000
    path = Graph.from_arrays(np.arange(n - 1), np.arange(1, n), np.ones(n - 1), num_nodes=n)
    return {
        "grid": (_grid(60), None),  # its own order: levels creep for many sweeps
        "path": (path, None),
        "planted": (planted, np.random.default_rng(1).permutation(planted.num_nodes)),
        "random": (generators.random_graph(3000, 15000, seed=6), None),
    }


def _sparse_run(g, order, sparse_div, margins, optimise=None):
    rule = cl.SweepRule(sequential_arcs=0, sparse_div=sparse_div, margins=margins)
    engine = cl.LouvainEngine(
        g.indptr, g.indices, g.weights, g.loop_weight, rule, order=order, parallel_min_arcs=1
    )
    if optimise is not None:
        engine._optimise = optimise
    return [(lab.tolist(), info) for lab, info in levels.louvain(engine, 1e-7)]


@pytest.mark.parametrize("case", ["grid", "path", "planted", "random"])
def test_sparse_sweeps_make_the_full_sweeps_moves(case):
    """Batched sweeps due to look at few vertices visit only those
    (_sparse_sweep, which draws the batches itself): every level, modularity
    and move count is the full sweeps', with margins and without, on 1 and 2
    threads, however eagerly sparse sweeps are taken."""
    g, order = _sparse_cases()[case]
    for margins in (True, False):
        ref = _sparse_run(g, order, 0, margins)
        for t in (1, 2):
            with gm.cpu.threads(t):
                for div in (1, schedule.SPARSE_DIV):
                    assert _sparse_run(g, order, div, margins) == ref, (margins, t, div)


def test_sparse_sweeps_run_and_undo(monkeypatch):
    """The test above is not vacuous: with sparse sweeps taken eagerly, the
    grid's levels make many of their moves in them. A sparse sweep's moves are
    undone exactly."""
    g, order = _sparse_cases()["grid"]
    ref = _sparse_run(g, order, 0, True)
    calls = []
    real = cl.sparse._sparse_sweep

    def counted(*args):
        out = real(*args)
        calls.append(out[0])
        return out

    # optimise's Python source, so that it calls the counting stand-in
    with monkeypatch.context() as mp, gm.cpu.threads(1):
        mp.setattr(cl.sweeps, "_sparse_sweep", counted)
        got = _sparse_run(g, order, 1, True, optimise=cl.optimise.py_func)
    assert len(calls) >= 5 and sum(calls) >= 500, calls
    assert got == ref

    # _sparse_sweep draws the batches of sweep_schedule's sweep for the vertices
    # it visits and their neighbours (the singleton rule of _best_move reads them)
    h = generators.random_graph(2000, 9000, seed=8)
    n = h.num_nodes
    rng = np.random.default_rng(8)
    k = cl.weighted_degrees(h.indptr, h.weights, h.loop_weight)
    order = rng.permutation(n).astype(np.int32)
    prio = np.argsort(order).astype(np.int32)
    bptr, verts = cl.degree_buckets(h.indptr, cl.MOVE_BUCKETS, order)
    arcs, nbatch = 500, 4
    vpos, nbb, base = cl.sparse._sparse_layout(bptr, verts, h.indptr, n, arcs, nbatch)
    for sweep in (1, 2, 7):
        ref = cl.sweep_schedule(bptr, verts, h.indptr, arcs, nbatch, sweep)[2]
        comm = np.arange(n, dtype=np.int32)
        a = k.copy()
        size = np.ones(n, np.int32)
        cur = rng.choice(verts, 40, replace=False).astype(np.int32)
        queued = np.zeros(n, np.uint8)
        queued[cur] = 1
        active = queued.copy()
        batch = np.full(n, -1, np.int32)
        pos, buf_c, buf_j, buf_w = cl.move_scratch(1, n, int(np.diff(h.indptr).max()))
        lv = cl.Level(h.indptr, h.indices, h.weights, h.loop_weight, k, order, prio, bptr, verts)
        st = cl.MoveState(
            comm, a, size, batch, active, np.zeros(n, np.uint8), np.zeros(n, np.int64),
            np.zeros((1, n), np.int64), comm.copy(), np.zeros(n),
        )  # fmt: skip
        sp = cl.SparseState(
            cur, np.empty(n, np.int32), np.empty(n, np.int32), np.empty(nbb.sum(), np.int32),
            np.empty(n, np.int32), queued, vpos, nbb, base, np.empty(3 * n, np.int32),
            np.empty(2 * n),
        )  # fmt: skip
        scratch = cl.Scratch(pos, buf_c, buf_j, buf_w)
        cl.sparse._sparse_sweep(
            sp, cur.shape[0], sweep, lv, st, scratch, 1.0 / k.sum(), 2.0**40 / k.sum(), 0.0, 0.0
        )
        seen = np.unique(np.concatenate([cur, h.indices[np.concatenate(
            [np.arange(h.indptr[v], h.indptr[v + 1]) for v in cur])]]))  # fmt: skip
        assert np.array_equal(batch[seen], ref[seen]), sweep

    # _undo restores a logged sweep's state bit for bit
    rng = np.random.default_rng(3)
    n = 50
    comm = rng.integers(0, 10, n).astype(np.int32)
    k = rng.random(n)
    a = np.bincount(comm, weights=k, minlength=n)
    size = np.bincount(comm, minlength=n).astype(np.int32)
    verts = rng.permutation(n).astype(np.int32)
    newc = comm.copy()
    newc[verts[:20]] = rng.integers(0, n, 20)
    logc = np.empty(3 * n, np.int32)
    loga = np.empty(2 * n, np.float64)
    before = (comm.copy(), a.copy(), size.copy())
    moved, _, _ = cl.moves._commit(verts, 0, n, newc, comm, a, size, k, np.zeros(n), logc, loga, 0)
    assert moved > 0 and not np.array_equal(comm, before[0])
    cl.moves._undo(moved, logc, loga, comm, newc, a, size)
    for x, y in zip((comm, a, size), before):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("seed", [0, 1])
def test_optimise_seq_equals_optimise_one_by_one(seed):
    """The sequential optimiser small levels run is the batched one with
    batches of one vertex: same communities, modularity, moves and sweeps."""
    g, _ = generators.planted_partition(800, 8, 5, 4, seed=seed)
    n = g.num_nodes
    k = cl.weighted_degrees(g.indptr, g.weights, g.loop_weight)
    order = np.random.default_rng(seed).permutation(n).astype(np.int32)
    prio = np.empty(n, np.int32)
    prio[order] = np.arange(n, dtype=np.int32)
    init = np.random.default_rng(seed).integers(0, n // 3, n).astype(np.int32)
    maxdeg = int(np.diff(g.indptr).max())
    lv = cl.Level(
        g.indptr, g.indices, g.weights, g.loop_weight, k, order, prio,
        *cl.degree_buckets(g.indptr, cl.MOVE_BUCKETS, order),
    )  # fmt: skip
    # m2, resolution, threshold, one vertex a batch, one work unit, no
    # parallel step, 1000 sweeps, rel_tol 0, confirm, no lead, margins, no chase
    rule = cl.SweepSettings(
        float(k.sum()), 1.0, 1e-7, 1, 0, 1, 10**9, 1000, 0.0, True, 0, True,
        schedule.SPARSE_DIV, 0,
    )  # fmt: skip
    out = []
    for fn in (cl.optimise_1, cl.optimise_seq):
        scratch = cl.Scratch(*cl.move_scratch(1, n, maxdeg))
        out.append(fn(lv, scratch, rule, init))
    (c1, q1, m1, s1), (c2, q2, m2, s2) = out
    assert c1.tolist() == c2.tolist() and (q1, m1, s1) == (q2, m2, s2)
    assert m1 > 0


def test_benchmark_planted_seeds(capsys):
    """The PLM benchmark on planted partitions of several seeds reports each
    and their mean."""
    pytest.importorskip("networkit")
    from nx_gpumatch.benchmark import louvain as bench

    argv = ["--skip-plm", "--skip-networkx", "--planted", "3000", "--planted-seeds", "1,2"]
    assert bench.main([*argv, "--repeat", "1", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "(seed 1)" in out and "(seed 2)" in out
    assert "planted, seeds 1,2: mean time ratio" in out


def _canonical(labels):
    """Community ids renamed in order of first appearance."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[inverse]


@pytest.mark.parametrize("nthreads", [1, 2])
def test_seeded_runs_relabel_the_graph_into_the_vertex_order(nthreads):
    """A seeded run renames vertex order[i] to i (rows then read front to
    back) and maps the labels back: every level is the partition the engine
    finds under ``order`` on the graph as given (integer weights: exact)."""
    from nx_gpumatch import cpu

    g = generators.random_graph(6000, 70_000, seed=4, weights="integer")
    g.loop_weight[:50] = 3.0  # self-loops travel with their vertex
    arrays = (g.indptr, g.indices, g.weights, g.loop_weight)
    order = common.seeded_order(g.num_nodes, 7)
    with cpu.threads(nthreads):
        direct = list(cl.louvain_levels(*arrays, order=order))
        via = list(front.in_order(_engine_levels, *arrays, order))
    assert len(direct) == len(via) >= 2
    for (a, ia), (b, ib) in zip(direct, via):
        assert np.array_equal(_canonical(a), b)  # numbered by first vertex
        assert ia["modularity"] == ib["modularity"] and ia["sweeps"] == ib["sweeps"]
    # Small graphs and runs without an order go to the engine as they are.
    small = generators.random_graph(300, 900, seed=4, weights="integer")
    small = (small.indptr, small.indices, small.weights, small.loop_weight)
    for graph, order in ((small, common.seeded_order(300, 7)), (arrays, None)):
        want = [lab for lab, _ in cl.louvain_levels(*graph, order=order)]
        got = [lab for lab, _ in front.in_order(_engine_levels, *graph, order)]
        assert len(want) == len(got) and all(np.array_equal(a, b) for a, b in zip(want, got))


def _engine_levels(indptr, indices, w, loop, order):
    return cl.louvain_levels(indptr, indices, w, loop, order=order)


# ------------------------------------------------------------------ margins
def _stay_margin(g, comm, k, res_over_m2, j):
    """How much more staying in its community gains j than its best move
    (to a neighbouring community, or to an empty one, which gains 0)."""
    own = comm[j]
    a = np.bincount(comm, weights=k, minlength=g.num_nodes)
    e = {}
    for p in range(g.indptr[j], g.indptr[j + 1]):
        c = comm[g.indices[p]]
        e[c] = e.get(c, 0.0) + g.weights[p]
    scale = res_over_m2 * k[j]
    stay = e.get(own, 0.0) - (a[own] - k[j]) * scale
    best = max([e[c] - a[c] * scale for c in e if c != own] + [0.0])
    return stay - best


@settings(max_examples=60, deadline=None)
@given(small_graphs(), st.sampled_from([0.5, 1.0, 3.0]))
def test_a_move_charges_each_neighbour_at_least_its_margin_loss(gs, resolution):
    """What a mover charges a neighbour (in units) bounds from above how much
    the move lowers that neighbour's margin: a neighbour left asleep cannot
    have lost more than its charges say."""
    g, s = gs
    n = g.num_nodes
    rng = np.random.default_rng(s)
    if g.indices.shape[0] == 0:
        return
    k = cl.weighted_degrees(g.indptr, g.weights, g.loop_weight)
    m2 = float(k.sum())
    r = resolution / m2
    units = 2.0**40 / m2
    comm = rng.integers(0, max(1, n // 3), n).astype(np.int32)
    for v in rng.permutation(n)[:5]:
        if g.indptr[v + 1] == g.indptr[v]:
            continue
        newc = comm.copy()
        newc[v] = rng.choice([comm[rng.choice(g.indices[g.indptr[v] : g.indptr[v + 1]])], n - 1])
        if newc[v] == comm[v]:
            continue
        active = np.zeros(n, np.uint8)
        charge = np.zeros(n, np.int64)
        batch = np.arange(n, dtype=np.int32)  # v moves alone
        pending = np.zeros(n, np.uint8)
        cl.moves._inner_change(
            v,
            newc,
            comm,
            batch,
            g.indptr,
            g.indices,
            g.weights,
            active,
            pending,
            k,
            charge,
            r * k[v],
            units,
        )
        assert np.array_equal(pending, active | (charge > 0))
        for j in set(g.indices[g.indptr[v] : g.indptr[v + 1]].tolist()) - {v}:
            lost = _stay_margin(g, comm, k, r, j) - _stay_margin(g, newc, k, r, j)
            if not active[j]:
                assert charge[j] / units >= lost - 1e-12 * m2, (j, charge[j] / units, lost)


def test_margins_run_equals_reference():
    """A graph on which waking neighbours by margins changes the run: the
    engine (1 and 2 threads) follows the reference's margin rule exactly."""
    g0, _ = generators.planted_partition(500, 10, 6, 6, seed=4)
    w = np.random.default_rng(4).integers(1, 100, g0.num_edges).astype(float)
    g = Graph.from_arrays(g0.edge_src, g0.edge_dst, w, num_nodes=g0.num_nodes)
    order = np.random.default_rng(4).permutation(g.num_nodes)
    kw = dict(batch_fraction=1.0, max_batches=4)
    ref = reference_levels(g, order=order, **kw)
    assert ref != reference_levels(g, order=order, margins=False, **kw)
    for t in (1, 2):
        with gm.cpu.threads(t):
            got = engine_levels(g, order=order, sequential_arcs=0, parallel_min_arcs=1, **kw)
        assert got == ref, t


def test_dense_accumulator_follows_the_reference(monkeypatch):
    """Long rows of small levels sum in the dense accumulator: the engine (one
    vertex at a time, and in batches on 1 and 2 threads) still follows the
    reference exactly. With a zero-weight arc (which the dense accumulator
    cannot tell from no arc) the level uses the sparse one, still exactly."""
    g0, _ = generators.planted_partition(1200, 8, 60, 20, seed=6)
    w = np.random.default_rng(6).integers(1, 50, g0.num_edges).astype(float)
    used = []
    real = cl.dense_size

    def spy(*args):
        used.append(real(*args))
        return used[-1]

    monkeypatch.setattr(cl.engine, "dense_size", spy)  # as the engine calls it
    kw = dict(batch_fraction=1.0, max_batches=4)
    for zero in (False, True):
        if zero:
            w[::7] = 0.0
        g = Graph.from_arrays(g0.edge_src, g0.edge_dst, w, num_nodes=g0.num_nodes)
        used.clear()
        assert engine_levels(g) == reference_levels(g)
        ref = reference_levels(g, **kw)
        for t in (1, 2):
            with gm.cpu.threads(t):
                got = engine_levels(g, sequential_arcs=0, parallel_min_arcs=1, **kw)
            assert got == ref, (zero, t)
        assert max(used) == (0 if zero else g.num_nodes)


def test_benchmark_lattices(capsys):
    """The lattice benchmark runs both methods and both anchors on a grid and
    a path in their own order."""
    pytest.importorskip("networkit")
    from nx_gpumatch.benchmark import louvain as bench

    assert bench.main(["--lattice", "40", "--repeat", "1", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "grid 40 x 40 in its own order" in out and "path of 1600 vertices" in out
    assert out.count("time ratio Louvain/PLM") == 2


def test_kept_aggregation_buffers_give_the_same_runs(monkeypatch, nthreads):
    """Levels aggregated into the engine's kept buffers (a scratch, and one
    for the levels, each written over the one before) are the levels
    aggregated into fresh arrays: whole Louvain and Leiden runs of several
    levels and passes are equal."""
    from nx_gpumatch.cpu import leiden as cd

    g, _ = generators.planted_partition(8000, 40, 3, 3, seed=2, weights="uniform")
    args = (g.indptr, g.indices, g.weights, g.loop_weight)
    kw = dict(sequential_arcs=1000, parallel_min_arcs=1)

    def runs():
        lv = [(lab.tolist(), info) for lab, info in cl.louvain_levels(*args, **kw)]
        ld = [(lab.tolist(), info) for lab, info in cd.leiden_levels(*args, key=4, **kw)]
        return lv, ld

    kept = runs()
    monkeypatch.setattr(cl.engine, "KEEP_BUFFERS_ARCS", 1 << 62)
    fresh = runs()
    assert len(kept[0]) >= 3 and kept[1][-1][1]["pass"] >= 2
    assert kept == fresh


@pytest.mark.parametrize("n, m", [(400, 2_000), (120, 4_000)])  # mean degree 10 and 67
def test_aggregation_paths_agree_with_each_other_and_scipy(n, m):
    """Rows gathered by community first (sparse levels) or merged where they
    lie (dense ones): the same bits, and the quotient graph P^T A P."""
    import scipy.sparse as sp

    g = generators.random_graph(n, m, seed=5)
    rng = np.random.default_rng(5)
    comm = rng.integers(0, n // 8, n).astype(np.int32)
    comm[: n // 10] = np.arange(n // 10, dtype=np.int32)  # some singletons
    loop = np.where(rng.random(n) < 0.2, rng.random(n), 0.0)
    newid, K, ptr, members = cl.renumber(comm)
    cx = newid[comm].astype(np.int32)
    deg = np.diff(g.indptr)
    ub_ptr = np.concatenate(
        [[0], np.cumsum([deg[members[ptr[x] : ptr[x + 1]]].sum() for x in range(K)])]
    )
    voff = np.empty(n, np.int64)
    for x in range(K):
        mem = members[ptr[x] : ptr[x + 1]]
        voff[mem] = ub_ptr[x] + np.concatenate([[0], np.cumsum(deg[mem])[:-1]])
    chunks = np.array([0, K // 2, K], np.int64)
    outs = []
    for gathered in (False, True):
        pos = np.full((2, n), -1, np.int32)
        tmp_c = np.empty(ub_ptr[-1], np.int32)
        tmp_w = np.empty(ub_ptr[-1])
        count = np.empty(K, np.int64)
        loop2 = np.empty(K)
        if gathered:
            cl.aggregation._gather(
                np.array([0, n // 3, n], np.int64),
                g.indptr,
                g.indices,
                g.weights,
                cx,
                voff,
                tmp_c,
                tmp_w,
            )
            cl.aggregation._merge_gathered(
                chunks, ptr, members, loop, ub_ptr, pos, tmp_c, tmp_w, count, loop2
            )
        else:
            cl.aggregation._merge(
                chunks,
                ptr,
                members,
                cx,
                g.indptr,
                g.indices,
                g.weights,
                loop,
                ub_ptr,
                pos,
                tmp_c,
                tmp_w,
                count,
                loop2,
            )
        rows = [
            (
                tmp_c[ub_ptr[x] : ub_ptr[x] + count[x]].tolist(),
                tmp_w[ub_ptr[x] : ub_ptr[x] + count[x]].tolist(),
            )
            for x in range(K)
        ]
        outs.append((rows, loop2.tolist()))
    assert outs[0] == outs[1]
    pos = np.full((2, n), -1, np.int32)
    indptr2, indices2, w2, loop2, k2 = cl.aggregate(
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
        4,
        *cl.own_buffers(),
    )
    # into buffers (longer than needed, as the engine's are): the same graph
    m = g.indices.shape[0] + 5
    bufs = (np.empty(m, np.int32), np.empty(m), np.empty(m, np.int32), np.full(m, np.nan))
    got = cl.aggregate(
        comm, newid, K, ptr, members, g.indptr, g.indices, g.weights, loop, pos, 4, *bufs
    )
    for x, y in zip(got, (indptr2, indices2, w2, loop2, k2)):
        np.testing.assert_array_equal(x, y)
    assert np.shares_memory(got[1], bufs[2]) and np.shares_memory(got[2], bufs[3])
    # the level written over its own arrays (as the engine's kept buffer is)
    own_i, own_w = g.indices.copy(), g.weights.copy()
    got = cl.aggregate(
        comm, newid, K, ptr, members, g.indptr, own_i, own_w, loop, pos, 4, *bufs[:2], own_i, own_w
    )
    for x, y in zip(got, (indptr2, indices2, w2, loop2, k2)):
        np.testing.assert_array_equal(x, y)
    A = sp.csr_matrix((g.weights, g.indices, g.indptr), shape=(n, n))
    P = sp.csr_matrix((np.ones(n), (np.arange(n), cx)), shape=(n, K))
    Q = (P.T @ A @ P).toarray()
    got = sp.csr_matrix((w2, indices2, indptr2), shape=(K, K)).toarray()
    np.testing.assert_allclose(got, Q - np.diag(np.diag(Q)), rtol=1e-12)
    np.testing.assert_allclose(loop2, np.bincount(cx, loop, K) + np.diag(Q) / 2, rtol=1e-12)
    np.testing.assert_allclose(k2, got.sum(axis=1) + 2 * loop2, rtol=1e-12)
