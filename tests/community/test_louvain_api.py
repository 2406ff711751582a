"""Louvain's front end: networkx's semantics (levels, seeds, dispatch, empty
inputs, self-loops, weights, resolution), inputs (DataFrames, graphs,
progress), bad inputs (negative and NaN weights, directed graphs,
multigraphs) and the command line."""

import random

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import nx_gpumatch as gm
from nx_gpumatch import Graph, generators
from nx_gpumatch.algorithms.community import louvain as front
from tests.support.louvain_reference import communities_of
from tests.support.reference import summed_graph


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
