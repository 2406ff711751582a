"""The front ends' shared machinery: one walk of a networkx graph's edges per
dispatched call, parameters checked once, one seed rule, engine choice above
the engines."""

import random
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest

import nx_gpumatch as gm
from nx_gpumatch import _validation
from nx_gpumatch.algorithms.community import common, louvain


class _CountingGraph(nx.Graph):
    """A Graph that counts the walks over its edges with data (each a full pass)."""

    walks = 0

    @property
    def edges(self):
        view = super().edges
        graph = self

        class Counting:
            def __call__(self, *args, **kwargs):
                if args or kwargs:
                    type(graph).walks += 1
                return view(*args, **kwargs)

            def __getattr__(self, name):
                return getattr(view, name)

            def __iter__(self):
                return iter(view)

            def __len__(self):
                return len(view)

        return Counting()


def _graph(weights):
    G = _CountingGraph()
    rng = np.random.default_rng(1)
    for u, v in rng.integers(0, 60, (300, 2)).tolist():
        if u != v:
            G.add_edge(u, v, weight=weights(rng))
    return G


@pytest.mark.parametrize("call", ["louvain", "matching"])
def test_a_dispatched_call_walks_the_edges_once(call):
    G = _graph(lambda rng: float(rng.integers(1, 5)))
    run = {
        "louvain": lambda: nx.community.louvain_communities(G, seed=1, backend="gpumatch"),
        "matching": lambda: nx.max_weight_matching(G, backend="gpumatch"),
    }[call]
    _CountingGraph.walks = 0
    first = run()
    assert _CountingGraph.walks == 1  # checked and converted from one walk
    assert run() == first
    assert _CountingGraph.walks == 1  # the check's verdict and the conversion are cached


def test_a_refused_call_walks_once_and_says_why():
    G = _graph(lambda rng: -1.0)
    _CountingGraph.walks = 0
    with pytest.raises(NotImplementedError, match="negative weight -1.0 on edge"):
        nx.community.louvain_communities(G, backend="gpumatch")
    assert _CountingGraph.walks == 1


def test_dispatched_louvain_checks_its_parameters_once(monkeypatch):
    calls = []
    check = common.check_params
    monkeypatch.setattr(louvain, "check_params", lambda *a: calls.append(a) or check(*a))
    G = nx.karate_club_graph()
    nx.community.louvain_communities(G, seed=1, backend="gpumatch")
    gm.louvain_communities(G, seed=1)
    assert len(calls) == 2  # one per call


def test_one_seed_rule_for_every_function():
    """An int seed means random.Random(seed) everywhere, as networkx's
    dispatcher passes it, so the two spellings give the same answer."""
    G = nx.gnm_random_graph(200, 800, seed=3)
    for u, v in G.edges:
        G.edges[u, v]["weight"] = (u * 7 + v) % 11 + 1
    kw = dict(algorithm="red_blue", device="cpu")
    assert gm.max_weight_matching(G, seed=5, **kw) == gm.max_weight_matching(
        G, seed=random.Random(5), **kw
    )
    assert _validation.seed_key(5) == random.Random(5).getrandbits(64)
    assert _validation.seed_key(np.random.default_rng(2)) == int(
        np.random.default_rng(2).integers(0, 2**63)
    )
    assert _validation.seed_key(None) is None and _validation.seed_key(None, default=9) == 9
    with pytest.raises(ValueError, match="seed must be None, an int"):
        _validation.seed_key("x")
    with pytest.raises(ValueError, match="seed must be None, an int"):
        gm.max_weight_matching(G, seed=True, **kw)


def test_config_does_not_import_the_gpu_engines():
    code = (
        "import sys, nx_gpumatch.config as c\n"
        "c.get_config()\n"
        "print(sorted(m for m in sys.modules if m.startswith('nx_gpumatch.gpu')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"
    import nx_gpumatch.config as config

    assert not hasattr(config, "resolve_device")


def test_scan_reports_the_first_problem_in_edge_order():
    G = nx.Graph()
    G.add_edge(0, 1, weight=1.0)
    G.add_edge(1, 2, weight=True)
    G.add_edge(2, 3, weight=float("nan"))
    scan = _validation.scan_edges(G)
    assert scan.dispatch[0] == "reason" and scan.dispatch[1] == (1, 2)
    assert "real numbers" in str(scan.error)
    G.edges[1, 2]["weight"] = 2
    scan = _validation.scan_edges(G)
    assert scan.dispatch[0] == "error" and scan.error is None
    assert scan.negative is None
    G.edges[2, 3]["weight"] = -3
    assert _validation.scan_edges(G).negative == (2, 3, -3)


def test_a_walk_is_handed_only_to_the_graph_it_walked():
    G = nx.Graph([(0, 1, {"weight": 2.0})])
    _validation.edge_summary(G, "weight")
    G.add_edge(1, 2)  # after the check, before a conversion: walk again
    assert _validation.pending_scan(G, "weight", 1) is None
    _validation.edge_summary(nx.Graph(G), "weight")
    assert _validation.pending_scan(G, "weight", 1) is None  # another graph's walk
