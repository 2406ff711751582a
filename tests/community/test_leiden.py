"""Leiden communities: connected communities, modularity at least Louvain's,
partitions of all nodes, networkx's dispatch and the package's own entry
points, reproducibility and thread-count independence."""

from fractions import Fraction

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import nx_gpumatch as gm
from nx_gpumatch import Graph, generators, gpu
from nx_gpumatch.algorithms.community import leiden as front
from nx_gpumatch.community import levels, schedule
from nx_gpumatch.cpu import leiden as cd
from nx_gpumatch.cpu import louvain as cl
from tests.support.reference import modularity

needs_nx_leiden = pytest.mark.skipif(
    not hasattr(nx.community, "leiden_communities"),
    reason="this networkx has no leiden_communities to dispatch",
)


def _labels(n, communities):
    lab = np.full(n, -1, np.int64)
    for i, c in enumerate(communities):
        for v in c:
            assert lab[v] == -1, f"node {v} in two communities"
            lab[v] = i
    assert (lab >= 0).all(), "not every node is in a community"
    return lab


def _split_communities(g, labels):
    """How many more connected pieces than communities the partition has."""
    labels = np.asarray(labels)
    keep = labels[g.edge_src] == labels[g.edge_dst]
    n = g.num_nodes
    A = sp.coo_matrix((np.ones(keep.sum()), (g.edge_src[keep], g.edge_dst[keep])), shape=(n, n))
    pieces = sp.csgraph.connected_components(A, directed=False)[0]
    return pieces - (int(labels.max()) + 1 if n else 0)


# ------------------------------------------------------------ guarantees
def test_connected_where_louvain_splits_a_community():
    # Louvain leaves one community in two pieces on this weighted planted partition.
    g, _ = generators.planted_partition(10000, 100, 3, 1.5, seed=4, weights="uniform")
    louvain = gm.louvain_communities(g, seed=1)
    assert _split_communities(g, louvain) > 0, "Louvain is connected here: pick another graph"
    leiden = gm.leiden_communities(g, seed=1)
    assert _split_communities(g, leiden) == 0
    assert modularity(g, leiden) >= modularity(g, louvain)


# Two stars joined at a leaf, weighted: at resolution 3 local moving leaves
# two unlinked leaves of vertex 0 in one community that refinement cannot
# join, and a level that went on from it returned them together.
_STARS = [(0, 1, 1), (0, 2, 1), (0, 3, 3), (0, 4, 1), (0, 5, 2), (0, 6, 2), (0, 7, 1)]
_STARS += [(0, 8, 1), (8, 9, 1), (8, 10, 3), (8, 11, 1), (8, 12, 2), (8, 13, 2), (8, 14, 1)]


def test_connected_where_refinement_merges_nothing(monkeypatch):
    cuts = []

    def split(engine, comm, _split=levels._split):
        parts = _split(engine, comm)
        cuts.append(np.unique(parts).size > np.unique(comm).size)
        return parts

    monkeypatch.setattr(levels, "_split", split)
    G = nx.Graph()
    G.add_weighted_edges_from(_STARS)
    for seed in range(40):
        for resolution in (3, 5):
            for passes in (1, None):
                comms = gm.leiden_communities(G, seed=seed, resolution=resolution, passes=passes)
                assert all(nx.is_connected(G.subgraph(c)) for c in comms), (seed, comms)
    assert sum(cuts) > 10  # the runs went through the cut
    cuts.clear()
    assert gm.leiden_communities(G, seed=37, resolution=3) == gm.leiden_communities(
        G, seed=37, resolution=3, threads=1
    )
    assert cuts


_SET = [
    # n, communities, intra / inter neighbours per vertex, weights
    (300, 10, 3, 1, None),
    (500, 20, 2.5, 1.5, "uniform"),
    (1000, 30, 3, 2, None),
    (2000, 40, 4, 2, "exponential"),
    (1500, 20, 8, 8, "integer"),
]


def test_connected_and_modularity_at_least_louvains():
    """Over a set of sparse planted partitions (where Louvain's levels stall
    early), every Leiden community is connected and the summed modularity is
    at least Louvain's with the same seed."""
    ours, louv = [], []
    for n, k, d_in, d_out, weights in _SET:
        for seed in range(2):
            g, _ = generators.planted_partition(n, k, d_in, d_out, seed=seed, weights=weights)
            lab = gm.leiden_communities(g, seed=seed)
            assert lab.shape == (n,) and lab.dtype == np.int64
            assert _split_communities(g, lab) == 0, (n, k, weights, seed)
            ours.append(modularity(g, lab))
            louv.append(modularity(g, gm.louvain_communities(g, seed=seed)))
    assert sum(ours) >= sum(louv), (ours, louv)


def test_reported_modularity_rises():
    """Each yielded partition carries its modularity (networkx's), which rises
    from one to the next. (Unlike Louvain's, Leiden's levels need not nest: a
    level moves refined parts of the communities before it.)"""
    g, _ = generators.planted_partition(3000, 30, 3, 1.5, seed=2, weights="uniform")
    prev = -1.0
    passes = set()
    for lab, info in front.levels(g, seed=5, progress=False):
        assert info["modularity"] == pytest.approx(modularity(g, lab), abs=1e-9)
        assert info["modularity"] > prev
        prev = info["modularity"]
        passes.add(info["pass"])
    assert _split_communities(g, lab) == 0
    assert len(passes) > 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_refinement_gives_connected_parts_of_each_community(seed):
    """Refining any partition (here a random one) splits every community into
    connected sub-communities."""
    g, _ = generators.planted_partition(800, 8, 4, 2, seed=seed, weights="exponential")
    rng = np.random.default_rng(seed)
    comm = rng.integers(0, 12, g.num_nodes).astype(np.int32)
    k = cl.weighted_degrees(g.indptr, g.weights, g.loop_weight)
    a = np.bincount(comm, weights=k, minlength=g.num_nodes)
    order = rng.permutation(g.num_nodes).astype(np.int32)
    ref = cd.refine(
        g.indptr, g.indices, g.weights, k, comm, a, order, 1.0 / k.sum(), 0.01, np.uint64(7), 0
    )
    # every sub-community inside one community
    pairs = np.unique(np.c_[ref, comm], axis=0)
    assert np.unique(pairs[:, 0]).size == pairs.shape[0]
    _, dense = np.unique(ref, return_inverse=True)
    assert _split_communities(g, dense) == 0
    assert dense.max() + 1 < g.num_nodes  # it merged something


def _refinement_input(seed, weights):
    """A planted graph, its first Louvain level's partition, the degrees, the
    community degrees, a random vertex order and the generator that drew it."""
    g, _ = generators.planted_partition(3000, 12, 6, 3, seed=seed, weights=weights)
    rng = np.random.default_rng(seed)
    comm = np.asarray(gm.louvain_communities(g, seed=seed, max_level=1), np.int32)
    k = cl.weighted_degrees(g.indptr, g.weights, g.loop_weight)
    a = np.bincount(comm, weights=k, minlength=g.num_nodes)
    return g, comm, k, a, rng.permutation(g.num_nodes).astype(np.int32), rng


def test_parallel_refinement_equals_serial(nthreads):
    """Communities refined in parallel chunks give the serial walk's partition,
    whatever the chunking and the thread count."""
    g, comm, k, a, order, _ = _refinement_input(4, "uniform")
    args = (g.indptr, g.indices, g.weights, k, comm, a, order, 1.0 / k.sum(), 0.5, np.uint64(5), 2)
    want = cd._refine_1(*args, 1)
    assert np.unique(want).size > np.unique(comm).size  # it refined something
    for chunks in (1, 3, 16):
        np.testing.assert_array_equal(cd.refine(*args, chunks), want)


def test_refinement_does_not_depend_on_arc_order():
    """The engines' aggregations order a row's arcs differently (the CPU by first
    occurrence, the GPU sorted), so the refinement's random pick must not depend
    on the order in which it meets the candidate sub-communities. Integer
    weights: every sum is exact in any order."""
    g, comm, k, a, order, rng = _refinement_input(2, "integer")
    rows = np.repeat(np.arange(g.num_nodes), np.diff(g.indptr))
    perm = np.lexsort((rng.random(rows.size), rows))  # each row's arcs shuffled
    indices, weights = g.indices[perm], g.weights[perm]
    for theta in (0.01, 1.0, 100.0):  # nearly greedy to nearly uniform
        args = (k, comm, a, order, 1.0 / k.sum(), theta, np.uint64(9), 3)
        want = cd.refine(g.indptr, g.indices, g.weights, *args)
        assert np.unique(want).size > np.unique(comm).size  # it refined something
        np.testing.assert_array_equal(cd.refine(g.indptr, indices, weights, *args), want)


def test_theta_makes_the_refinement_random():
    g, _ = generators.planted_partition(2000, 10, 6, 3, seed=1, weights="uniform")
    k = cl.weighted_degrees(g.indptr, g.weights, g.loop_weight)
    comm = np.asarray(gm.louvain_communities(g, seed=1, max_level=1), np.int32)
    a = np.bincount(comm, weights=k, minlength=g.num_nodes)
    order = np.arange(g.num_nodes, dtype=np.int32)

    def refined(theta, key):
        return cd.refine(
            g.indptr, g.indices, g.weights, k, comm, a, order, 1 / k.sum(), theta, np.uint64(key), 0
        )

    assert np.array_equal(refined(100.0, 3), refined(100.0, 3))
    assert not np.array_equal(refined(100.0, 3), refined(100.0, 4))
    # a small theta is nearly greedy: the key hardly matters
    low = [refined(1e-4, key) for key in (3, 4)]
    assert np.mean(low[0] == low[1]) > 0.99


# ------------------------------------------------------------ edge cases
def test_trivial_graphs():
    assert gm.leiden_communities(nx.Graph()) == []
    G = nx.Graph()
    G.add_node("a")
    assert gm.leiden_communities(G) == [{"a"}]
    G = nx.empty_graph(4)
    assert sorted(map(sorted, gm.leiden_communities(G))) == [[0], [1], [2], [3]]
    G = nx.Graph([(0, 0), (1, 1)])
    assert sorted(map(sorted, gm.leiden_communities(G))) == [[0], [1]]
    # self-loops and an isolated node next to two triangles joined by one edge
    G = nx.Graph([(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (2, 3), (0, 0)])
    G.add_node(9)
    parts = gm.leiden_communities(G, seed=1)
    assert sorted(map(sorted, parts)) == [[0, 1, 2], [3, 4, 5], [9]]
    assert list(gm.leiden_partitions(nx.empty_graph(3))) == [[{0}, {1}, {2}]]


def test_bad_input():
    G = nx.karate_club_graph()
    if not gpu.available():
        with pytest.raises(RuntimeError, match="no GPU can be used"):
            gm.leiden_communities(G, device="gpu")
    assert gm.leiden_communities(G, device="auto", seed=1) == gm.leiden_communities(
        G, device="cpu", seed=1
    )
    with pytest.raises(ValueError, match="max_level"):
        gm.leiden_communities(G, max_level=0)
    with pytest.raises(ValueError, match="theta"):
        gm.leiden_communities(G, theta=0)
    with pytest.raises(ValueError, match="passes"):
        gm.leiden_communities(G, passes=0)
    with pytest.raises(ValueError, match="resolution"):
        gm.leiden_communities(G, resolution=float("nan"))
    H = G.copy()
    H[0][1]["weight"] = -1.0
    with pytest.raises(ValueError, match="non-negative"):
        gm.leiden_communities(H)


# ------------------------------------------------------------ input types
def test_input_types_agree():
    G = nx.karate_club_graph()
    sets = gm.leiden_communities(G, seed=3)
    lab = _labels(34, sets)
    df = nx.to_pandas_edgelist(G)
    out = gm.leiden_communities(df, seed=3)
    assert list(out.columns) == ["vertex", "community"]
    by_df = dict(zip(out["vertex"], out["community"]))
    g = Graph.from_networkx(G, weight="weight")
    arr = gm.leiden_communities(g, seed=3)
    assert arr.dtype == np.int64
    # same partition up to community names
    for other in (np.array([by_df[v] for v in range(34)]), arr):
        pairs = np.unique(np.c_[lab, other], axis=0)
        assert pairs.shape[0] == lab.max() + 1 == other.max() + 1
    parts = list(gm.leiden_partitions(df, seed=3))
    assert all(isinstance(p, pd.DataFrame) for p in parts)
    assert np.array_equal(parts[-1]["community"].to_numpy(), out["community"].to_numpy())


def test_resolution_and_weights_matter():
    g, _ = generators.planted_partition(1000, 10, 6, 2, seed=0, weights="exponential")
    few = gm.leiden_communities(g, resolution=0.2, seed=0).max()
    many = gm.leiden_communities(g, resolution=3.0, seed=0).max()
    assert few < many
    G = nx.Graph()
    G.add_weighted_edges_from([(0, 1, 10), (1, 2, 0.1), (2, 3, 10), (3, 0, 0.1)])
    assert sorted(map(sorted, gm.leiden_communities(G))) == [[0, 1], [2, 3]]
    H = nx.karate_club_graph()
    unit = H.copy()
    nx.set_edge_attributes(unit, 1, "weight")
    by_none = gm.leiden_communities(H, weight=None, seed=2)
    assert by_none == gm.leiden_communities(unit, seed=2)


# ------------------------------------------------------------ determinism
def test_seeded_runs_repeat_and_seeds_differ():
    g, _ = generators.planted_partition(3000, 60, 3, 2, seed=3)
    a = gm.leiden_communities(g, seed=11)
    assert np.array_equal(a, gm.leiden_communities(g, seed=11))
    assert not np.array_equal(a, gm.leiden_communities(g, seed=12))


@pytest.mark.parametrize("sequential_arcs", [0, 1000])
def test_thread_count_independent(nthreads, sequential_arcs):
    # batched, threaded local moving on a graph this small, to exercise the
    # parallel kernels (sequential_arcs 1000: the first level's lead sweep too)
    g, _ = generators.planted_partition(6000, 40, 6, 3, seed=1, weights="uniform")
    order = np.random.default_rng(1).permutation(g.num_nodes).astype(np.int32)
    out = [
        (lab, info["modularity"])
        for lab, info in cd.leiden_levels(
            g.indptr,
            g.indices,
            g.weights,
            g.loop_weight,
            key=99,
            order=order,
            sequential_arcs=sequential_arcs,
            parallel_min_arcs=1,
            max_passes=2,
        )
    ]
    key = tuple(np.concatenate([lab for lab, _ in out]).tolist())
    mods = [q for _, q in out]
    cache = test_thread_count_independent.__dict__.setdefault("seen", {})
    cache.setdefault(sequential_arcs, (key, mods))
    assert cache[sequential_arcs] == (key, mods), f"differs with {nthreads} threads"
    assert _split_communities(g, out[-1][0]) == 0


def test_first_level_is_led_as_louvains():
    """Local moving from singletons begins with a sweep one vertex at a time,
    as Louvain's does: with Louvain's sweep tolerance, the first level of a
    Leiden run is Louvain's first level. Later levels start from a partition
    and have no lead sweep (lead_sweeps=0 drops the first one too)."""
    g, _ = generators.planted_partition(4000, 20, 6, 4, seed=5, weights="uniform")
    order = np.random.default_rng(5).permutation(g.num_nodes).astype(np.int32)
    args = (g.indptr, g.indices, g.weights, g.loop_weight)
    kw = dict(order=order, sequential_arcs=1000, parallel_min_arcs=1)
    lv_first = next(iter(cl.louvain_levels(*args, **kw)))
    led = next(iter(cd.leiden_levels(*args, key=3, rel_tol=cl.SWEEP_REL_TOL, **kw)))
    blind = next(
        iter(cd.leiden_levels(*args, key=3, rel_tol=cl.SWEEP_REL_TOL, lead_sweeps=0, **kw))
    )
    assert np.array_equal(led[0], lv_first[0])
    assert led[1]["moves"] == lv_first[1]["moves"]
    assert led[1]["modularity"] == lv_first[1]["modularity"]
    assert not np.array_equal(blind[0], led[0])


def test_first_batched_sweep_that_chases_is_led_one_at_a_time():
    """A path in its own order: in a batched first sweep every vertex joins
    the one before, which leaves too, so the level merges nothing (the
    first level's lead sweep is dropped here; later levels and passes have
    none). That sweep
    is undone and a sweep one vertex at a time goes first (CHASE): level 1
    pairs the vertices with n / 2 moves, as good a result, connected. On a
    random graph the check never trips: the run is the one without it."""
    n = 20_000
    path = Graph.from_arrays(np.arange(n - 1), np.arange(1, n), np.ones(n - 1), num_nodes=n)

    def run(g, chase, **kw):
        args = (g.indptr, g.indices, g.weights, g.loop_weight)
        return [
            (lab, info)
            for lab, info in cd.leiden_levels(
                *args,
                key=1,
                sequential_arcs=1000,
                chase=chase,
                parallel_min_arcs=1,
                lead_sweeps=0,
                **kw,
            )
        ]

    blind = run(path, 0)
    led = run(path, schedule.CHASE)
    assert blind[0][1]["moves"] > 3 * n
    assert led[0][1]["moves"] == n // 2 and led[0][1]["vertices"] == n
    assert led[-1][1]["modularity"] >= blind[-1][1]["modularity"] - 1e-4
    assert _split_communities(path, led[-1][0]) == 0

    g = generators.random_graph(20_000, 80_000, seed=2)
    order = np.random.default_rng(2).permutation(g.num_nodes)
    a, b = run(g, 0, order=order), run(g, schedule.CHASE, order=order)
    assert [(x.tolist(), i) for x, i in a] == [(x.tolist(), i) for x, i in b]


# ------------------------------------------------------------ networkx
@needs_nx_leiden
def test_dispatch_matches_own_entry_point():
    G = nx.karate_club_graph()
    got = nx.community.leiden_communities(G, backend="gpumatch", seed=7)
    # networkx 3.7's default metric is CPM; before it Leiden means modularity
    metric = "cpm" if front.networkx_implements_leiden() else "modularity"
    assert got == gm.leiden_communities(G, seed=7, metric=metric)
    if metric == "cpm":
        got = nx.community.leiden_communities(G, backend="gpumatch", seed=7, metric="modularity")
        assert got == gm.leiden_communities(G, seed=7)
    kw = {"metric": "modularity"} if metric == "cpm" else {}
    parts = list(nx.community.leiden_partitions(G, backend="gpumatch", seed=7, **kw))
    assert parts[-1] == got
    first = nx.community.leiden_communities(G, backend="gpumatch", seed=7, max_level=1, **kw)
    assert first == parts[0]
    q = nx.community.modularity(G, got)
    assert q == pytest.approx(modularity(Graph.from_networkx(G, weight="weight"), _labels(34, got)))
    assert q > 0.4


@needs_nx_leiden
def test_dispatch_refuses_what_it_cannot_run():
    G = nx.karate_club_graph()
    own = front.networkx_implements_leiden()
    # networkx before 3.7 refuses directed graphs itself; 3.7 has a directed
    # Leiden of its own, which an explicit backend= does not reach
    with pytest.raises(NotImplementedError if own else nx.NetworkXNotImplemented):
        nx.community.leiden_communities(nx.DiGraph(G), backend="gpumatch")
    M = nx.MultiGraph(G)
    M.add_edge(0, 1, weight=3.0)  # clustered as G with edge 0-1 weighing 4 + 3
    H = G.copy()
    H[0][1]["weight"] += 3.0
    got = nx.community.leiden_communities(M, backend="gpumatch", seed=7)
    assert got == nx.community.leiden_communities(H, backend="gpumatch", seed=7)
    H = G.copy()
    H.add_edge(0, 1, weight=-2.0)
    with pytest.raises(
        NotImplementedError if own else ValueError, match=None if own else "negative weight"
    ):
        nx.community.leiden_communities(H, backend="gpumatch")
    # Weights float64 cannot hold are refused for every function; with no Leiden
    # of networkx's own to hand them to, the refusal says why.
    for w in (True, Fraction(1, 3), 2**53 + 1):
        H = nx.Graph([(0, 1), (1, 2)])
        H.add_edge(2, 3, weight=w)
        for call in (nx.community.leiden_communities, nx.community.leiden_partitions):
            if own:  # networkx runs its own Leiden, or refuses the explicit backend
                with pytest.raises(NotImplementedError):
                    list(call(H, backend="gpumatch"))
            else:
                with pytest.raises(ValueError, match="gpumatch cannot run .* weight"):
                    list(call(H, backend="gpumatch"))


# ------------------------------------------------------------ command line
def test_cli_leiden(capsys, tmp_path):
    from nx_gpumatch.cli import main

    out_csv = tmp_path / "c.csv"
    argv = ["louvain", "--leiden", "-n", "1000", "-m", "3000", "--no-progress"]
    assert main([*argv, "--passes", "2", "-o", str(out_csv)]) == 0
    out = capsys.readouterr().out
    assert "Leiden" in out and "ours by networkx" in out
    df = pd.read_csv(out_csv)
    assert len(df) == 1000 and df["community"].min() == 0
    assert main(["louvain", "-n", "200", "-m", "800", "--no-progress", "--passes", "2"]) == 2
    assert "--passes needs --leiden" in capsys.readouterr().err


# ------------------------------------------------------------ networkx's tests
@needs_nx_leiden
@pytest.mark.slow
def test_networkx_leiden_tests_on_backend():
    """networkx's own Leiden tests in its test mode on gpumatch, multigraphs
    included: all pass but the seed-exact ones (xfailed with their reason,
    see algorithms/community/leiden.py); from networkx 3.7 on, directed graphs and
    unknown metrics go to networkx's own Leiden."""
    import importlib.util

    if importlib.util.find_spec("networkx.algorithms.community.tests.test_leiden") is None:
        pytest.skip("this networkx ships no Leiden tests")
    from tests.support.nx_suite import run_networkx_suite

    res, out = run_networkx_suite(
        ["networkx.algorithms.community.tests.test_leiden"],
        ("leiden_communities", "leiden_partitions"),
        fallback=True,  # for modularity and partition_quality, which gpumatch lacks
    )
    out = out[-4000:]
    assert res["code"] == 0 and not res["failed"], out
    # only the seed-exact tests, each with its written reason
    for name, reason, _outcome in res["xfailed"]:
        base = name.split("[")[0]  # less the parameters
        assert base in front.NX_TESTS_XFAIL[2] and reason.startswith("gpumatch Leiden:"), name
    # networkx 3.7 runs what gpumatch refuses: directed graphs and unknown metrics
    for msg in res["fallbacks"]:
        assert any(s in msg for s in ("DiGraph", "directed", "bad_metric", "barber")), msg
    assert res["calls"]["leiden_communities"] >= 10
    assert res["calls"]["leiden_partitions"] >= 2
    assert res["passed"] >= 8


def test_passes_stop_at_relative_gain_and_keep_the_last():
    """The default passes are a prefix of the passes run to the end (each pass
    is deterministic), stop once a pass gains under PASS_REL_TOL of the
    modularity, and end with the best partition found."""
    g, _ = generators.planted_partition(3000, 20, 4, 3, seed=2)
    args = (g.indptr, g.indices, g.weights, g.loop_weight)
    order = np.random.default_rng(2).permutation(g.num_nodes).astype(np.int32)
    short = [(lab.tolist(), info) for lab, info in cd.leiden_levels(*args, key=7, order=order)]
    full = [
        (lab.tolist(), info)
        for lab, info in cd.leiden_levels(*args, key=7, order=order, pass_rel_tol=0.0)
    ]
    assert short == full[: len(short)]
    qs = [info["modularity"] for _, info in short if info["pass"] > 1]
    assert qs == sorted(qs)
    assert len(short) < len(full)  # stopped early: the last pass gained little
    last, before = short[-1][1], short[-2][1]
    assert last["modularity"] - before["modularity"] <= schedule.PASS_REL_TOL * last["modularity"]
    for q0, q1 in zip(qs[:-2], qs[1:-1]):  # every pass but the last gained enough
        assert q1 - q0 > schedule.PASS_REL_TOL * q1
