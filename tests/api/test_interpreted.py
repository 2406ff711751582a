"""Small inputs run the compiled kernels' Python source while they are not
compiled (nx_gpumatch.cpu.run). The interpreted result must be IDENTICAL to the
compiled one, for every family, on edge cases, for 1 and 2 threads."""

import json
import os
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import nx_gpumatch as gm
from nx_gpumatch import cpu
from nx_gpumatch.config import get_config


def _weighted(G, weights):
    for (u, v), w in zip(G.edges(), weights):
        G[u][v]["weight"] = w
    return G


def _graphs():
    rng = np.random.default_rng(7)
    ties = nx.gnm_random_graph(30, 80, seed=3)
    floats = nx.gnm_random_graph(40, 120, seed=1)
    isolated = nx.gnm_random_graph(25, 30, seed=5)
    isolated.add_nodes_from(range(25, 30))
    hub = nx.star_graph(80)  # a row long enough for Louvain's dense accumulator
    hub.add_edges_from(nx.gnm_random_graph(81, 100, seed=2).edges())
    return {
        "empty": nx.Graph(),
        "single": nx.empty_graph(1),
        "edge": _weighted(nx.path_graph(2), [2.5]),
        "star": nx.star_graph(6),  # unweighted: every edge weighs 1
        "path": _weighted(nx.path_graph(7), [3, 1, 4, 1, 5, 9]),
        "ties": _weighted(ties, rng.integers(1, 4, 80).tolist()),
        "complete": _weighted(nx.complete_graph(6), [2] * 15),
        "floats": _weighted(floats, rng.random(120).tolist()),
        "big_ints": _weighted(nx.cycle_graph(9), [2**50 + i % 3 for i in range(9)]),
        "isolated": _weighted(isolated, rng.integers(1, 100, 30).tolist()),
        "hub": _weighted(hub, (1 + rng.random(hub.number_of_edges())).tolist()),
    }


GRAPHS = _graphs()


def _outcome(fn):
    """Result, or the exception's type and message: both must agree."""
    try:
        r = fn()
    except Exception as exc:  # noqa: BLE001 - compared, not hidden
        return ("raised", type(exc).__name__, str(exc))
    return _plain(r)


def _plain(r):
    if isinstance(r, np.ndarray):
        return ("array", str(r.dtype), r.tolist())
    if isinstance(r, tuple):
        return tuple(_plain(x) for x in r)
    if isinstance(r, list):
        return [_plain(x) for x in r]
    if isinstance(r, (set, frozenset)):
        return ("set", sorted(map(repr, r)))
    if isinstance(r, dict):
        return ("dict", sorted((repr(k), repr(v)) for k, v in r.items()))
    return r


def _same(fn):
    """fn() interpreted equals fn() compiled; returns the compiled outcome."""
    with cpu.interpreted(False):
        want = _outcome(fn)
    with cpu.interpreted():
        got = _outcome(fn)
    assert got == want
    return want


GRAPH_CASES = {
    "suitor": lambda G: gm.max_weight_matching(G, algorithm="suitor", device="cpu"),
    "greedy": lambda G: gm.max_weight_matching(G, algorithm="greedy", device="cpu"),
    "local_max": lambda G: gm.max_weight_matching(G, algorithm="local_max", device="cpu"),
    "red_blue": lambda G: gm.max_weight_matching(G, algorithm="red_blue", device="cpu", seed=3),
    "red_blue_random": lambda G: gm.max_weight_matching(
        G, algorithm="red_blue", device="cpu", seed=4, select="random"
    ),
    "maximal": lambda G: gm.maximal_matching(G, device="cpu"),
    "exact": lambda G: gm.max_weight_matching(G),
    "exact_maxcard": lambda G: gm.max_weight_matching(G, True),
    "exact_min": lambda G: gm.min_weight_matching(G),
    "b_suitor": lambda G: gm.b_matching(G, 2, device="cpu"),
    "b_local_dominant": lambda G: gm.b_matching(
        G, {v: 1 + v % 3 for v in G}, algorithm="local_dominant", device="cpu"
    ),
    "b_greedy": lambda G: gm.b_matching(G, 3, algorithm="greedy", device="cpu"),
    "louvain": lambda G: gm.louvain_communities(G, seed=1, device="cpu"),
    "louvain_partitions": lambda G: list(
        gm.louvain_partitions(G, resolution=0.5, seed=2, device="cpu")
    ),
    "leiden": lambda G: gm.leiden_communities(G, seed=1, device="cpu"),
}


@pytest.mark.parametrize("case", sorted(GRAPH_CASES))
def test_graph_families(case, nthreads):
    fn = GRAPH_CASES[case]
    outcomes = [_same(lambda G=G: fn(G)) for G in GRAPHS.values()]
    assert any(o and o[0] != "raised" for o in outcomes)  # not only errors compared


def _prefs(n, rng, complete):
    men, women = [f"m{i}" for i in range(n)], [f"w{i}" for i in range(n)]
    if complete:
        mp = {m: [women[j] for j in rng.permutation(n)] for m in men}
        wp = {w: [men[j] for j in rng.permutation(n)] for w in women}
        return mp, wp
    mp = {m: [women[j] for j in rng.permutation(n)[: rng.integers(0, n + 1)]] for m in men}
    wp = {
        w: [m for m in rng.permutation(men).tolist() if w in mp[m] or rng.random() < 0.2]
        for w in women
    }
    return mp, wp


@pytest.mark.parametrize("algorithm", ["mcvitie_wilson", "gale_shapley"])
@pytest.mark.parametrize("parallel", [False, True])
def test_stable_marriage(algorithm, parallel, nthreads):
    rng = np.random.default_rng(11)
    cases = [({}, {}), ({"a": []}, {"x": []}), ({"a": ["x"]}, {"x": ["a"]})]
    cases += [_prefs(n, rng, complete) for n in (5, 12) for complete in (True, False)]
    for men, women in cases:
        M = _same(
            lambda men=men, women=women: gm.stable_marriage(
                men, women, algorithm=algorithm, parallel=parallel, device="cpu"
            )
        )
        assert M[0] == "dict"
    men, women = cases[-1]
    M = gm.stable_marriage(men, women)
    _same(lambda: gm.is_stable(M, men, women))
    _same(lambda: gm.blocking_pair({}, men, women))


def _matrices():
    rng = np.random.default_rng(3)
    out = [sp.csr_matrix((0, 0)), sp.csr_matrix((3, 0)), sp.csr_matrix((0, 4))]
    out.append(sp.csr_matrix(np.eye(4)))
    out.append(sp.csr_matrix(np.ones((3, 5))))
    for r, c, d in [(30, 40, 0.1), (50, 20, 0.08), (40, 40, 0.03)]:
        out.append(sp.random(r, c, density=d, format="csr", random_state=rng))
    return out


@pytest.mark.parametrize("algorithm", ["auto", "hopcroft_karp", "apfb", "apsb"])
@pytest.mark.parametrize("init", ["karp_sipser", "cheap", "none"])
def test_bipartite(algorithm, init, nthreads):
    for A in _matrices():
        _same(
            lambda A=A: gm.maximum_bipartite_matching(
                A, algorithm=algorithm, init=init, return_cover=True
            )
        )


def test_bipartite_networkx_graphs():
    G = nx.complete_bipartite_graph(3, 4)
    _same(lambda: gm.maximum_bipartite_matching(G, top_nodes=range(3)))
    P = nx.path_graph(6)  # connected: sides from the 2-colouring
    M = _same(lambda: nx.bipartite.maximum_matching(P, backend="gpumatch"))
    assert M[0] == "dict"
    matching = nx.bipartite.maximum_matching(P)
    _same(lambda: nx.bipartite.to_vertex_cover(P, matching, backend="gpumatch"))
    _same(lambda: gm.bipartite_vertex_cover(P))


def test_atomics_from_python():
    from nx_gpumatch.cpu import atomics as A

    @cpu.njit
    def ops(a, b):
        r0 = A.cas(a, 0, -1, 5)  # -1 converted to the dtype: wraps for unsigned
        r1 = A.atomic_add(a, 1, -3)
        r2 = A.atomic_max(a, 2, 7)
        r3 = A.atomic_min(a, 3, -2)
        r4 = A.atomic_load(a, 1)
        A.atomic_store(a, 4, b)
        r5 = A.cas(a, 4, b, 1)
        r6 = A.cas(a, 2, 12345, 9)  # fails: a[2] is 7, stays 7
        return r0, r1, r2, r3, r4, r5, r6

    for dtype in (np.int32, np.int64, np.uint32, np.uint64):
        start = np.array([-1, 2, 3, 4, 0], np.int64).astype(dtype)
        a1, a2 = start.copy(), start.copy()
        want = ops(a1, 2**40 + 3)
        with cpu.interpreted():
            got = ops(a2, 2**40 + 3)
        assert [int(x) for x in got] == [int(x) for x in want]
        assert [type(x) for x in got] == [type(x) for x in want]  # as compiled code boxes them
        assert np.array_equal(a1, a2) and a2.dtype == dtype


def test_njit_call_forms():
    @cpu.njit
    def f(x):
        return x + 1

    @cpu.njit(cache=False, fastmath=False)
    def g(x):
        return f(x) * 2

    @cpu.njit("int64(int64)")
    def h(x):
        return g(x) - 1

    @cpu.njit(["float64(float64)", "int64(int64)"], inline="always")
    def k(x):
        return h(np.int64(x)) + x

    @cpu.njit(cache=True)
    def caller(x):
        return k(x) + k(x * 1.0)

    from nx_gpumatch.cpu._dispatch import Dispatcher

    for fn in (f, g, h, k, caller):
        assert isinstance(fn, Dispatcher)
    assert h.signatures == []  # given signatures compile on first use
    with cpu.interpreted():
        assert caller(3) == 20.0
        assert [d.py_func.__name__ for d in [f, g, h, k, caller] if d.signatures] == []
    assert caller(3) == 20.0 and h(3) == 7
    assert len(h.signatures) == 1 and k.signatures == []  # k: inlined into caller


def test_constant_arguments_compile_one_copy():
    """A jitted function called with constants (0, -1, True) and with variables
    from jitted code compiles once, for the plain types, not once per pattern
    of constants among the call sites."""

    @cpu.njit(cache=False, no_cpython_wrapper=True)
    def step(a, k, flag):
        return a[k] + 1 if flag else a[k] - 1

    @cpu.njit(cache=False)
    def caller(a, k):
        return step(a, 0, True) + step(a, -1, False) + step(a, k, k > 0) + step(a, 1, True)

    a = np.arange(4, dtype=np.int64)
    assert caller(a, np.int64(2)) == (0 + 1) + (3 - 1) + (2 + 1) + (1 + 1)
    assert [str(s) for s in step.signatures] == [
        "(Array(int64, 1, 'C', False, aligned=True), int64, bool)"
    ]


def test_kernel_twins_interpreted():
    from nx_gpumatch.cpu import csr

    values = np.arange(10, dtype=np.int32) * 3
    idx = np.array([9, 0, 4])
    with cpu.interpreted():
        got = [csr.gather_int32.serial(values, idx), csr.gather_int32.parallel(values, idx)]
    for r in got:
        assert r.tolist() == [27, 0, 12]


def test_policy():
    cfg = get_config()
    fam = "test-family"
    cpu.INTERPRET_MAX[fam] = 10

    @cpu.njit(cache=False)  # in no disk cache: compiled only once called compiled
    def plus_one(a):
        return a + 1

    ints = np.arange(3)
    try:
        with cfg(interpret_small=True):
            assert cpu.should_interpret(fam, 10)
            assert not cpu.should_interpret(fam, 11)
            assert not cpu.should_interpret("no such family", 0)
            cpu._SPENT[fam] = [set(), cpu.INTERPRET_BUDGET]  # used up its time
            assert not cpu.should_interpret(fam, 1)
            cpu._SPENT[fam] = [set(), 0.0]
            with cpu.run(fam, 5) as n:
                assert n >= 1 and cpu._INTERPRETING.get() == set()
                assert plus_one(ints).tolist() == [1, 2, 3]
                assert cpu._INTERPRETING.get().interpreted
            assert cpu._SPENT[fam][0] == {plus_one} and cpu._SPENT[fam][1] > 0
            assert not plus_one.signatures and cpu.should_interpret(fam, 1)
            plus_one(ints)  # compiled now
            assert not cpu.should_interpret(fam, 1)  # every kernel it called is compiled
            # a kernel compiled for the call's types runs compiled even in the block,
            # and costs the family no interpreted time
            cpu._SPENT[fam] = [set(), 0.0]
            with cpu.run(fam, 5):
                assert plus_one(ints).tolist() == [1, 2, 3]
                assert not cpu._INTERPRETING.get().interpreted
            assert cpu._SPENT[fam] == [{plus_one}, 0.0]
            cpu._SPENT[fam] = [set(), 0.0]
            with cpu.run(fam, 5):  # other types: not compiled, so interpreted
                assert plus_one(np.ones(2)).tolist() == [2.0, 2.0]
                assert cpu._INTERPRETING.get().interpreted
            assert len(plus_one.signatures) == 1
            with cpu.interpreted():  # asked for: interpreted, compiled or not
                assert plus_one(ints).tolist() == [1, 2, 3]
                assert cpu._INTERPRETING.get().interpreted
            with cpu.run(fam, 50):
                assert cpu._INTERPRETING.get() is None
            with cpu.interpreted(False), cpu.run(fam, 1):
                assert cpu._INTERPRETING.get() is False
        with cfg(interpret_small=False):
            assert not cpu.should_interpret(fam, 1)
        with pytest.raises(ValueError, match="interpret_small"):
            cfg.interpret_small = "yes"
    finally:
        del cpu.INTERPRET_MAX[fam]
        cpu._SPENT.pop(fam, None)


def test_call_in_levels_stays_interpreted():
    """A call run level by level (Louvain, Leiden) decides once: when its first
    level uses up the family's interpreted time, the later levels still run
    interpreted instead of stopping to compile."""
    from nx_gpumatch.algorithms.community.common import with_threads

    fam = "test-levels"
    cpu.INTERPRET_MAX[fam] = 10

    def levels():
        for _ in range(3):
            cpu._SPENT.setdefault(fam, [set(), 0.0])[1] = cpu.INTERPRET_BUDGET  # all spent
            yield cpu._INTERPRETING.get() is not None

    try:
        with get_config()(interpret_small=True):
            assert list(with_threads(1, levels(), fam, 5)) == [True, True, True]
            assert list(with_threads(1, levels(), fam, 5)) == [False, False, False]
    finally:
        del cpu.INTERPRET_MAX[fam]
        cpu._SPENT.pop(fam, None)


def test_suite_runs_compiled():
    """The conftest turns interpretation off for every other test, and for
    the processes tests start."""
    assert get_config().interpret_small is False
    assert os.environ["NX_GPUMATCH_INTERPRET_SMALL"] == "0"
    assert not cpu.should_interpret("matching", 1)
    spent = {k: v[1] for k, v in cpu._SPENT.items()}
    gm.max_weight_matching(GRAPHS["path"], algorithm="suitor")
    assert {k: v[1] for k, v in cpu._SPENT.items()} == spent


CHILD = r"""
import gc, json, time
t = time.perf_counter()
import networkx as nx, numpy as np, scipy.sparse as sp
import nx_gpumatch as gm
G = nx.gnm_random_graph(60, 200, seed=1)
for (u, v), w in zip(G.edges(), np.random.default_rng(1).random(200).tolist()):
    G[u][v]["weight"] = w
for a in ("suitor", "greedy", "local_max", "red_blue"):
    gm.max_weight_matching(G, algorithm=a, device="cpu")
gm.maximal_matching(G, device="cpu")
gm.max_weight_matching(G)
gm.min_weight_matching(G)
gm.b_matching(G, 2, device="cpu")
gm.louvain_communities(G, seed=1, device="cpu")
gm.leiden_communities(G, seed=1, device="cpu")
gm.maximum_bipartite_matching(sp.random(20, 30, density=0.1, format="csr", random_state=1))
gm.stable_marriage({"a": ["x", "y"], "b": ["x"]}, {"x": ["b", "a"], "y": ["a"]}, device="cpu")
# the same through networkx's dispatch
nx.max_weight_matching(G, backend="gpumatch")
nx.min_weight_matching(G, backend="gpumatch")
nx.maximal_matching(G, backend="gpumatch")
nx.community.louvain_communities(G, seed=1, backend="gpumatch")
from nx_gpumatch.cpu._dispatch import Dispatcher
compiled = sorted(d.py_func.__qualname__ for d in gc.get_objects()
                  if isinstance(d, Dispatcher) and d.signatures)
print(json.dumps({"compiled": compiled, "seconds": time.perf_counter() - t}))
"""


def test_first_small_calls_compile_nothing(tmp_path):
    """A fresh process with an empty cache runs every family's first small call
    without compiling a single kernel."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NX_GPUMATCH_INTERPRET_SMALL="1")
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True
    )
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["compiled"] == []


def test_distributed_kernels_one_rank():
    """The distributed engine's own kernels, interpreted on one rank, give the
    shared-memory (compiled) answer, as they must compiled on any rank count."""
    pytest.importorskip("mpi4py")
    from nx_gpumatch import distributed as D
    from nx_gpumatch.graph import Graph

    rng = np.random.default_rng(5)
    n, m = 40, 150
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.integers(1, 6, m).astype(np.float64)  # ties
    g = Graph.from_arrays(src, dst, w, num_nodes=n)
    with cpu.interpreted(False):
        ref_b = [x.astype(np.int64).tolist() for x in gm.b_matching(g, 2)]
        ref_mate = gm.max_weight_matching(g, algorithm="suitor").tolist()
    with cpu.interpreted():
        got_b = D.b_matching((src, dst, w), 2, num_nodes=n).gather()
        mates = [
            D.max_weight_matching((src, dst, w), algorithm=a, num_nodes=n).gather_mate()
            for a in ("suitor", "local_max")
        ]
    assert [got_b[0].tolist(), got_b[1].tolist()] == ref_b
    assert all(mate.tolist() == ref_mate for mate in mates)


def test_distributed_communities_one_rank():
    """One rank's Louvain and Leiden (the shared-memory engine's steps, and the
    distributed set-up and labels around them) give the same labels
    interpreted as compiled."""
    pytest.importorskip("mpi4py")
    from nx_gpumatch import distributed as D

    edges = D.random_edges(300, 1500, seed=3)
    calls = [
        lambda: D.louvain_communities(edges, seed=2),
        lambda: D.leiden_communities(edges, seed=2),
        lambda: D.leiden_communities(edges, seed=2, metric="cpm", resolution=0.05),
    ]
    for call in calls:
        with cpu.interpreted(False):
            ref = call()
        with cpu.interpreted():
            got = call()
        assert got.labels.tolist() == ref.labels.tolist()
        assert got.quality_found == ref.quality_found


def test_counter_hash_wraps_as_compiled():
    from nx_gpumatch.cpu.random import counter_hash, mix64

    cases = [
        (np.uint64(2**64 - 1), np.int64(-1), np.int64(5)),
        (np.uint64(7), np.int32(-3), np.int64(2**62)),
        (np.uint64(0), 0, 0),
        (np.uint64(123), 2**40, np.uint32(9)),
    ]
    want = [counter_hash(*c) for c in cases] + [mix64(np.uint64(2**63 + 11))]
    with cpu.interpreted():
        got = [counter_hash(*c) for c in cases] + [mix64(np.uint64(2**63 + 11))]
    assert got == want and len(set(want)) == len(want)


MEDIUM_CHILD = r"""
import gc, json
import numpy as np
import networkx as nx
import nx_gpumatch as gm
from nx_gpumatch import cpu
# the size limits are under test, not the interpreted-time budget (its own
# tests): on a slow machine the 10k call alone can spend it
cpu.INTERPRET_BUDGET = float("inf")
G = nx.gnm_random_graph(2000, 10_000, seed=1)
H = nx.gnm_random_graph(4000, 20_000, seed=2)
rng = np.random.default_rng(1)
for g in (G, H):
    for (u, v), w in zip(g.edges(), rng.random(g.number_of_edges()).tolist()):
        g[u][v]["weight"] = w
gm.max_weight_matching(G)
gm.max_weight_matching(H)
gm.louvain_communities(H, seed=1, device="cpu")
gm.leiden_communities(H, seed=1, device="cpu")
gm.max_weight_matching(H, algorithm="suitor", device="cpu")
from nx_gpumatch.cpu._dispatch import Dispatcher
compiled = sorted(d.py_func.__qualname__ for d in gc.get_objects()
                  if isinstance(d, Dispatcher) and d.signatures)
print(json.dumps({"compiled": compiled}))
"""


def test_first_medium_calls_compile_nothing(tmp_path):
    """A first call on a medium graph (exact matching on 10k and 20k edges,
    Louvain, Leiden and Suitor on 20k) answers interpreted in about a second
    instead of waiting for a compile of 3-16 CPU seconds."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NX_GPUMATCH_INTERPRET_SMALL="1")
    out = subprocess.run(
        [sys.executable, "-c", MEDIUM_CHILD], env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1])["compiled"] == []
