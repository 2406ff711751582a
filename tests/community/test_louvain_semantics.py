"""Louvain's front end: networkx's semantics (``threshold``, levels, seeds,
dispatch, self-loops, weights, resolution), fallback to networkx for inputs
the backend cannot cluster as networkx would, edge cases, inputs
(DataFrames, graphs, progress), bad inputs and the command line."""

import decimal
import fractions
import random

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import nx_gpumatch as gm
from nx_gpumatch import Graph, generators
from nx_gpumatch.algorithms.community import louvain as front
from nx_gpumatch.interface import BackendInterface
from tests.support.louvain_reference import communities_of
from tests.support.reference import summed_graph


# --------------------------------------------------------------- threshold
def test_threshold_is_the_gain_of_a_whole_level():
    """A large threshold ends the method after the level that gains too little;
    it does not cut the sweeps of a level short (networkx's meaning)."""
    g, _ = generators.planted_partition(1000, 20, 8, 3, seed=5, weights="exponential")
    G = g.to_networkx()
    for thr in (0.05, 0.2):
        ours = [gm.louvain_communities(G, threshold=thr, seed=s) for s in range(3)]
        ref = [
            nx.community.louvain_communities(G, threshold=thr, seed=s, backend="networkx")
            for s in range(3)
        ]
        q_ours = np.mean([nx.community.modularity(G, p) for p in ours])
        q_ref = np.mean([nx.community.modularity(G, p) for p in ref])
        assert q_ours >= 0.97 * q_ref, (thr, q_ours, q_ref)
        # as many levels' worth of merging as networkx: community counts alike
        n_ours, n_ref = np.mean([len(p) for p in ours]), np.mean([len(p) for p in ref])
        assert n_ours <= 2 * n_ref + 5, (thr, n_ours, n_ref)
    for thr in (1e-7, 0.05, 0.2):
        lv = list(front.levels(g, threshold=thr, seed=1))
        gains = np.diff([0.0] + [info["modularity"] for _, info in lv])
        gains[0] -= nx.community.modularity(G, [{v} for v in G])
        # every level but the last gained more than the threshold, the last at most
        assert all(x > thr for x in gains[:-1]), (thr, gains)


# ---------------------------------------------------------------- fallback
def _weighted(conv):
    G = nx.karate_club_graph()
    for _, _, d in G.edges(data=True):
        d["weight"] = conv(d["weight"])
    return G


_REFUSED = {
    "negative": (lambda w: -w, "negative"),
    "one-negative": (None, "negative"),
    "decimal": (decimal.Decimal, "Decimal"),
    "fraction": (fractions.Fraction, "Fraction"),
    "bool": (lambda w: w > 3, "bool"),
    "huge-int": (lambda w: w + 2**60, "precision"),
    "numpy-negative": (lambda w: np.float32(-w), "negative"),
}


@pytest.mark.parametrize("case", sorted(_REFUSED))
def test_unsupported_weights_fall_back_to_networkx(case):
    conv, why = _REFUSED[case]
    if conv is None:
        G = nx.karate_club_graph()
        G.add_edge(3, 3, weight=-0.5)  # a negative self-loop is refused too
    else:
        G = _weighted(conv)
    for name in ("louvain_communities", "louvain_partitions"):
        reason = BackendInterface.can_run(name, (G,), {})
        assert isinstance(reason, str) and why in reason, reason
    assert BackendInterface.can_run("louvain_communities", (G,), {"weight": None}) is True
    with pytest.raises(NotImplementedError):
        nx.community.louvain_communities(G, seed=1, backend="gpumatch")
    try:
        expected = nx.community.louvain_communities(G, seed=1, backend="networkx")
    except Exception as exc:  # networkx's own arithmetic may fail (Decimal with floats)
        expected = type(exc)
    old = nx.config.backend_priority
    nx.config.backend_priority = ["gpumatch"]
    try:
        try:
            got = nx.community.louvain_communities(G, seed=1)
        except Exception as exc:
            got = type(exc)
    finally:
        nx.config.backend_priority = old
    assert got == expected


def test_exact_parameters_fall_back():
    G = nx.karate_club_graph()
    reason = BackendInterface.can_run(
        "louvain_communities", (G,), {"resolution": fractions.Fraction(1, 2)}
    )
    assert isinstance(reason, str) and "resolution" in reason
    reason = BackendInterface.can_run(
        "louvain_partitions", (G, "weight", 1, decimal.Decimal("0.1")), {}
    )
    assert isinstance(reason, str) and "threshold" in reason
    assert BackendInterface.can_run("louvain_communities", (G, "weight", 0.5), {}) is True


def test_supported_weights_run_here():
    G = _weighted(lambda w: np.float64(w) / 3)
    assert BackendInterface.can_run("louvain_communities", (G,), {}) is True
    G = _weighted(int)
    assert BackendInterface.can_run("louvain_communities", (G,), {}) is True
    G[0][1]["weight"] = float("nan")  # bad input: a clear error, not a fallback
    assert BackendInterface.can_run("louvain_communities", (G,), {}) is True
    with pytest.raises(ValueError, match="finite"):
        gm.louvain_communities(G)


# -------------------------------------------------------------- edge cases
def _both(G, **kw):
    return (
        gm.louvain_communities(G, seed=3, **kw),
        nx.community.louvain_communities(G, seed=3, backend="networkx", **kw),
    )


def test_trivial_graphs_follow_networkx():
    G = nx.Graph()
    assert _both(G)[0] == _both(G)[1] == []
    assert list(gm.louvain_partitions(G)) == list(nx.community.louvain_partitions(G)) == [[]]
    G.add_node("a")
    ours, ref = _both(G)
    assert ours == ref == [{"a"}]
    G = nx.empty_graph(4)
    ours, ref = _both(G)
    assert sorted(map(sorted, ours)) == sorted(map(sorted, ref))
    G.add_edge(1, 1, weight=3)  # self-loops only: every node alone
    ours, ref = _both(G)
    assert sorted(map(sorted, ours)) == sorted(map(sorted, ref)) == [[0], [1], [2], [3]]
    # isolated vertices stay alone next to a clustered part
    G = nx.complete_graph(5)
    G.add_nodes_from([10, 11])
    ours, ref = _both(G)
    assert sorted(map(sorted, ours)) == sorted(map(sorted, ref))


def test_zero_and_huge_resolution():
    """Resolution 0: no penalty, so every connected component becomes one
    community; a huge resolution keeps every node alone (networkx alike)."""
    G = nx.disjoint_union_all([nx.path_graph(6), nx.cycle_graph(5), nx.star_graph(4)])
    G.add_node(99)
    ours, ref = _both(G, resolution=0)
    assert sorted(map(sorted, ours)) == sorted(map(sorted, ref))
    assert sorted(map(sorted, ours)) == sorted(map(sorted, nx.connected_components(G)))
    ours, ref = _both(G, resolution=1e9)
    assert sorted(map(sorted, ours)) == sorted(map(sorted, ref)) == [[v] for v in sorted(G)]


@pytest.mark.parametrize("shift", [-1000, -600, 500, 1000])
def test_weight_scale_does_not_change_partitions(shift):
    """Modularity does not depend on the weights' scale: weights times 2**shift
    (down to near the smallest normal float, up to near the largest, where
    squared community degrees overflow) give the partitions of the graph
    itself, for Louvain and for Leiden with theta (in weight units) scaled
    alike."""
    g, _ = generators.planted_partition(3000, 20, 8, 4, seed=1)
    h = Graph.from_arrays(
        g.edge_src, g.edge_dst, np.ldexp(g.edge_weight, shift), num_nodes=g.num_nodes
    )
    runs = [
        (gm.louvain_partitions, {}, {}),
        (gm.leiden_partitions, dict(theta=float(np.ldexp(0.01, shift))), dict(theta=0.01)),
    ]
    for run, kw_h, kw_g in runs:
        ours = list(run(h, seed=3, progress=False, **kw_h))
        ref = list(run(g, seed=3, progress=False, **kw_g))
        assert len(ours) == len(ref) > 1
        for a, b in zip(ours, ref):
            assert np.array_equal(a, b)


def test_large_edge_cases_are_quick():
    """Edgeless and self-loop-only graphs with many vertices need no sweeps."""
    import time

    g = Graph.from_arrays(np.arange(200_000), np.arange(200_000), num_nodes=200_000)
    t = time.perf_counter()
    labels = gm.louvain_communities(g, seed=1)
    assert time.perf_counter() - t < 5.0
    assert np.array_equal(np.sort(labels), np.arange(200_000))


def test_thread_count_independent_on_weighted_structure(nthreads):
    """Levels big enough for parallel batches: the same partition on 1 and 2
    threads for a given seed."""
    g, _ = generators.planted_partition(20_000, 40, 9, 7, seed=2)
    got = gm.louvain_communities(g, seed=4)
    ref = gm.louvain_communities(g, seed=4, threads=1)
    assert np.array_equal(got, ref)


@pytest.mark.parametrize("weight", ["weight", None])
def test_multigraph_sums_parallel_edges(weight):
    """A MultiGraph clusters as the Graph with its parallel edges' weights summed
    (networkx's Louvain does the same); edges without the attribute count 1."""
    rng = np.random.default_rng(3)
    M = nx.MultiGraph()
    M.add_nodes_from(range(60))
    for _ in range(400):
        u, v = (int(x) for x in rng.integers(0, 60, 2))
        M.add_edge(u, v, weight=float(rng.uniform(0.5, 2.0)))
    M.add_edge(0, 1)  # no weight attribute: counts 1
    H = summed_graph(M, weight, "w")
    for fn in (gm.louvain_communities, gm.leiden_communities):
        got = fn(M, weight=weight, seed=4)
        want = fn(H, weight="w", seed=4)
        assert got == want
    parts = list(gm.louvain_partitions(M, weight=weight, seed=4))
    assert parts[-1] == gm.louvain_communities(M, weight=weight, seed=4)


# --------------------------------------------------------------- semantics
def test_max_level_and_partitions():
    G = nx.LFR_benchmark_graph(250, 3, 1.5, 0.009, average_degree=5, min_community=20, seed=10)
    parts = list(gm.louvain_partitions(G, seed=42))
    assert len(parts) > 1
    for lvl, expected in enumerate(parts, 1):
        assert gm.louvain_communities(G, max_level=lvl, seed=42) == expected
    assert gm.louvain_communities(G, max_level=len(parts) + 3, seed=42) == parts[-1]
    with pytest.raises(ValueError, match="max_level argument must be a positive integer"):
        gm.louvain_communities(G, max_level=0)


def test_seed_semantics():
    G = nx.karate_club_graph()
    assert gm.louvain_communities(G, seed=7) == gm.louvain_communities(G, seed=random.Random(7))
    assert gm.louvain_communities(G) == gm.louvain_communities(G)
    assert gm.louvain_communities(G, seed=np.random.default_rng(1)) is not None
    with pytest.raises(ValueError, match="seed"):
        gm.louvain_communities(G, seed="abc")


def test_dispatch_matches_package_api():
    G = nx.karate_club_graph()
    a = nx.community.louvain_communities(G, seed=11, backend="gpumatch")
    b = gm.louvain_communities(G, seed=11)
    assert a == b
    c = list(nx.community.louvain_partitions(G, seed=11, backend="gpumatch"))
    assert c[-1] == a
    # networkx wraps numpy generators before dispatching: drawn from as the
    # package draws from them (a RandomState was refused)
    for make in (np.random.RandomState, np.random.default_rng):
        a = nx.community.louvain_communities(G, seed=make(5), backend="gpumatch")
        assert a == gm.louvain_communities(G, seed=make(5))
        c = list(nx.community.louvain_partitions(G, seed=make(5), backend="gpumatch"))
        assert c[-1] == a


def test_empty_and_edgeless():
    assert gm.louvain_communities(nx.Graph()) == []
    assert list(gm.louvain_partitions(nx.Graph())) == [[]]
    assert nx.community.louvain_communities(nx.Graph(), backend="gpumatch") == []
    G = nx.empty_graph(5)
    assert gm.louvain_communities(G) == [{0}, {1}, {2}, {3}, {4}]
    assert nx.community.louvain_communities(G, backend="gpumatch") == [{0}, {1}, {2}, {3}, {4}]
    G.add_edge(0, 0)  # a self-loop alone moves nothing
    assert gm.louvain_communities(G) == [{0}, {1}, {2}, {3}, {4}]
    G = nx.Graph([(0, 1, {"weight": 0.0})])
    assert gm.louvain_communities(G) == [{0}, {1}]


def test_self_loops_count_like_networkx():
    G = nx.karate_club_graph()
    G.add_weighted_edges_from([(i, i, i * 1000) for i in range(9)])
    for weight in ("weight", None):
        labels, info = next(
            front.levels(Graph.from_networkx(G, weight=weight), weighted=weight is not None, seed=1)
        )
        parts = communities_of(labels.tolist())
        assert info["modularity"] == pytest.approx(
            nx.community.modularity(G, parts, weight=weight), abs=1e-12
        )


def test_weight_none_ignores_weights():
    G = nx.karate_club_graph()
    H = nx.Graph()
    H.add_nodes_from(G)
    H.add_edges_from(G.edges())
    assert gm.louvain_communities(G, weight=None, seed=3) == gm.louvain_communities(H, seed=3)
    # also when networkx hands over a graph it converted with weights (its cache)
    nx.community.louvain_communities(G, seed=3, backend="gpumatch")
    assert nx.community.louvain_communities(
        G, weight=None, seed=3, backend="gpumatch"
    ) == gm.louvain_communities(H, seed=3)


def test_resolution_orders_community_counts():
    G = nx.LFR_benchmark_graph(250, 3, 1.5, 0.009, average_degree=5, min_community=20, seed=10)
    counts = [len(gm.louvain_communities(G, resolution=r, seed=12)) for r in (0.25, 1, 4)]
    assert counts[0] <= counts[1] <= counts[2]


def test_coarse_threshold_config():
    cfg = nx.config.backends.gpumatch
    g = generators.random_graph(3000, 12000, seed=1)
    old = (cfg.louvain_coarse_threshold, cfg.louvain_fine_below)
    try:
        cfg.louvain_fine_below = 0
        cfg.louvain_coarse_threshold = 0.5  # every level stops after one sweep
        lv = list(front.levels(g))
        assert all(info["sweeps"] == 1 for _, info in lv)
        cfg.louvain_fine_below = 10**9
        lv = list(front.levels(g))
        assert max(info["sweeps"] for _, info in lv) > 1
        with pytest.raises(ValueError):
            cfg.louvain_coarse_threshold = -1.0
        with pytest.raises(ValueError):
            cfg.louvain_fine_below = -5
    finally:
        cfg.louvain_coarse_threshold, cfg.louvain_fine_below = old


# ------------------------------------------------------------------ inputs
def test_dataframe_and_graph_inputs():
    G = nx.les_miserables_graph()
    df = nx.to_pandas_edgelist(G)
    out = gm.louvain_communities(df, seed=4)
    assert list(out.columns) == ["vertex", "community"]
    assert set(out["vertex"]) == set(G)
    g = Graph.from_pandas(df)
    labels = gm.louvain_communities(g, seed=4)
    assert labels.dtype == np.int64 and labels.shape == (G.number_of_nodes(),)
    by_vertex = dict(zip(out["vertex"], out["community"]))
    assert [by_vertex[v] for v in g.labels()] == labels.tolist()
    parts = list(gm.louvain_partitions(df, seed=4))
    assert parts[-1].equals(out)
    # weight=None on a DataFrame without a weight column
    out2 = gm.louvain_communities(df[["source", "target"]], weight=None)
    assert len(out2) == G.number_of_nodes()


def test_progress_display(capsys):
    gm.louvain_communities(nx.karate_club_graph(), progress=True)
    assert "Louvain" in capsys.readouterr().err
    gm.louvain_communities(nx.karate_club_graph(), progress=False)
    assert capsys.readouterr().err == ""


# --------------------------------------------------------------- bad input
def test_negative_and_nan_weights():
    G = nx.karate_club_graph()
    G[0][1]["weight"] = -1.0
    with pytest.raises(ValueError, match="non-negative"):
        gm.louvain_communities(G)
    with pytest.raises(NotImplementedError, match="because: .*negative"):
        nx.community.louvain_communities(G, backend="gpumatch")
    gm.louvain_communities(G, weight=None)  # weights ignored: fine
    H = nx.karate_club_graph()
    H.add_edge(3, 3, weight=-2)
    with pytest.raises(ValueError, match="self-loop"):
        gm.louvain_communities(H)
    H = nx.karate_club_graph()
    H[0][1]["weight"] = float("nan")
    with pytest.raises(ValueError):
        gm.louvain_communities(H)
    with pytest.raises(ValueError):
        nx.community.louvain_communities(H, backend="gpumatch")
    df = pd.DataFrame({"source": [0, 1], "target": [1, 2], "weight": [1.0, np.nan]})
    with pytest.raises(ValueError):
        gm.louvain_communities(df)
    with pytest.raises(ValueError, match="resolution"):
        gm.louvain_communities(nx.karate_club_graph(), resolution=float("nan"))


def test_directed_graphs_stay_with_networkx():
    from nx_gpumatch.interface import BackendInterface

    D = nx.gn_graph(40, seed=1)
    for name in ("louvain_communities", "louvain_partitions"):
        assert isinstance(BackendInterface.can_run(name, (D,), {}), str)
        assert isinstance(BackendInterface.can_run(name, (nx.MultiDiGraph(D),), {}), str)
    with pytest.raises(NotImplementedError, match="because: directed graphs"):
        nx.community.louvain_communities(D, backend="gpumatch")
    with pytest.raises(nx.NetworkXNotImplemented):
        gm.louvain_communities(D)
    assert BackendInterface.can_run("louvain_communities", (nx.karate_club_graph(),), {}) is True


@pytest.mark.parametrize("weight", ["weight", None])
def test_dispatched_multigraph_runs_here_and_sums_parallel_edges(weight):
    """networkx hands a MultiGraph to the backend, which clusters the Graph
    with each pair's parallel edges summed (counted for weight=None), as
    networkx's own Louvain does: same partition as for that Graph."""
    from nx_gpumatch.interface import BackendInterface

    M = nx.MultiGraph(nx.karate_club_graph())
    M.add_edge(0, 1, weight=9)
    M.add_edge(0, 9, weight=20)
    M.add_edge(2, 5)  # no weight: counts 1
    M.add_edge(3, 3, weight=2)
    M.add_edge(3, 3, weight=0.5)
    H = summed_graph(M, weight)
    assert BackendInterface.can_run("louvain_communities", (M,), {}) is True
    calls = []
    real = BackendInterface.louvain_communities

    def counted(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    BackendInterface.louvain_communities = staticmethod(counted)
    try:
        got = nx.community.louvain_communities(M, weight=weight, seed=3, backend="gpumatch")
    finally:
        BackendInterface.louvain_communities = staticmethod(real)
    assert len(calls) == 1
    assert calls[0].num_edges == H.number_of_edges() - nx.number_of_selfloops(H)
    want = nx.community.louvain_communities(H, weight="weight", seed=3, backend="gpumatch")
    assert got == want
    q_multi = nx.community.modularity(M, got, weight=weight)
    q_simple = nx.community.modularity(H, want, weight="weight")
    assert q_multi == pytest.approx(q_simple, abs=1e-12)


def test_multigraph_conversion_counts_and_sums():
    M = nx.MultiGraph()
    M.add_edges_from([(0, 1, {"w": 1.5}), (1, 0, {"w": 2.0}), (1, 2), (2, 2, {"w": 3.0}), (2, 2)])
    with pytest.raises(nx.NetworkXNotImplemented, match="multigraph"):
        gm.Graph.from_networkx(M, weight="w")
    g = gm.Graph.from_networkx(M, weight="w", parallel="sum")
    assert g.num_edges == 2
    assert g.edge_weight.tolist() == [3.5, 1.0]  # (0,1) summed; (1,2) lacks "w": default 1
    assert g.loop_weight.tolist() == [0.0, 0.0, 4.0]
    u = g.unweighted()
    assert u.edge_weight.tolist() == [2.0, 1.0] and u.loop_weight.tolist() == [0.0, 0.0, 2.0]
    c = gm.Graph.from_networkx(M, weight=None, parallel="sum")
    assert c.edge_weight.tolist() == [2.0, 1.0] and c.unweighted() is c


# --------------------------------------------------------------------- CLI
def test_cli_louvain(tmp_path, capsys):
    import argparse

    from nx_gpumatch.cli.louvain import add_command

    parser = argparse.ArgumentParser()
    add_command(parser.add_subparsers())
    out_csv = tmp_path / "c.csv"
    args = parser.parse_args(
        [
            "louvain",
            "-n",
            "500",
            "-m",
            "2500",
            "--no-progress",
            "--order-seed",
            "3",
            "-o",
            str(out_csv),
        ]
    )
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "500 vertices" in out and "modularity" in out and "ratio" in out
    df = pd.read_csv(out_csv)
    assert list(df.columns) == ["vertex", "community"] and len(df) == 500
    args = parser.parse_args(
        ["louvain", "-n", "200", "-m", "800", "--no-progress", "--max-level", "0"]
    )
    assert args.func(args) == 2
