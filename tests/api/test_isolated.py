"""Vertices without edges take no part in any engine: every family gives on a
graph padded with isolated vertices (at the end or between the others) the
answer of the graph without them, and a graph declared far larger than its
edges costs about as little as its edges."""

import time

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import nx_gpumatch as ng
from nx_gpumatch.algorithms import stable_marriage as sm
from nx_gpumatch.algorithms.community import leiden, louvain


def _base(k, seed):
    """Edges of a random graph on 0..k-1 in which every vertex has an edge;
    small integer weights, so ties are broken by vertex ids."""
    rng = np.random.default_rng(seed)
    src = np.concatenate([rng.integers(0, k, 3 * k), np.arange(k)])
    dst = np.concatenate([rng.integers(0, k, 3 * k), (np.arange(k) + 1) % k])
    w = rng.integers(1, 5, src.shape[0]).astype(float)
    return src, dst, w


def _layout(k, extra, where, seed=0):
    """Declared size and the id of each of the k vertices among the others."""
    n = k + extra
    if where == "end":
        return n, np.arange(k)
    return n, np.sort(np.random.default_rng(seed).choice(n, k, replace=False))


@pytest.fixture(params=[(40, "end"), (40, "between"), (700, "between")], ids=str)
def padded(request):
    """(graph, the same graph padded with isolated vertices, its declared size,
    the padded ids of the graph's vertices, the isolated ids)."""
    k, where = request.param
    src, dst, w = _base(k, k)
    n, pos = _layout(k, 2 * k + 3, where, seed=k)
    g = ng.Graph.from_arrays(src, dst, w, num_nodes=k)
    big = ng.Graph.from_arrays(pos[src], pos[dst], w, num_nodes=n)
    iso = np.setdiff1d(np.arange(n), pos)
    return g, big, n, pos, iso


def _spread_mate(mate, pos, n):
    out = np.full(n, -1, mate.dtype)
    out[pos] = np.where(mate >= 0, pos[np.maximum(mate, 0)], -1)
    return out


MATCHINGS = [
    dict(algorithm="blossom"),
    dict(algorithm="blossom", maxcardinality=True),
    dict(algorithm="suitor"),
    dict(algorithm="greedy"),
    dict(algorithm="local_max"),
    dict(algorithm="red_blue", seed=3),
    dict(algorithm="red_blue", seed=3, select="random"),
]


@pytest.mark.parametrize("kw", MATCHINGS, ids=lambda kw: "-".join(map(str, kw.values())))
def test_matchings_ignore_isolated_vertices(padded, kw, nthreads):
    g, big, n, pos, iso = padded
    kw = dict(kw)
    card = kw.pop("maxcardinality", False)
    a = ng.max_weight_matching(g, card, device="cpu", **kw)
    b = ng.max_weight_matching(big, card, device="cpu", **kw)
    assert b.dtype == a.dtype
    np.testing.assert_array_equal(b, _spread_mate(a, pos, n))


def test_min_weight_and_maximal_ignore_isolated_vertices(padded):
    g, big, n, pos, _ = padded
    for f in (ng.min_weight_matching, ng.maximal_matching):
        np.testing.assert_array_equal(f(big), _spread_mate(f(g), pos, n))
    assert (
        ng.greedy_matching_smi(big).tolist()
        == _spread_mate(ng.greedy_matching_smi(g), pos, n).tolist()
    )


@pytest.mark.parametrize("algorithm", ["b_suitor", "local_dominant", "greedy"])
def test_b_matching_ignores_isolated_vertices(padded, algorithm):
    g, big, n, pos, _ = padded
    b = np.random.default_rng(1).integers(0, 4, g.num_nodes)
    u, v = ng.b_matching(g, b, algorithm=algorithm, device="cpu")
    bb = np.full(n, 5)
    bb[pos] = b
    ub, vb = ng.b_matching(big, bb, algorithm=algorithm, device="cpu")
    np.testing.assert_array_equal(ub, pos[u])
    np.testing.assert_array_equal(vb, pos[v])


@pytest.mark.parametrize("family", [louvain, leiden], ids=["louvain", "leiden"])
@pytest.mark.parametrize("seed", [None, 7])
def test_communities_ignore_isolated_vertices(padded, family, seed):
    """Each isolated vertex is a community of its own (as in networkx), numbered
    after the others in id order; the levels and their modularity are those of
    the graph without them (Leiden's random choices and a seeded vertex order
    included)."""
    g, big, n, pos, iso = padded
    small = list(family.levels(g, seed=seed, device="cpu", progress=False))
    levels = list(family.levels(big, seed=seed, device="cpu", progress=False))
    assert len(levels) == len(small)
    for (la, ia), (lb, ib) in zip(small, levels):
        np.testing.assert_array_equal(lb[pos], la)
        np.testing.assert_array_equal(lb[iso], la.max() + 1 + np.arange(iso.shape[0]))
        assert ib["modularity"] == ia["modularity"]
        assert ib["vertices"] == ia["vertices"] + iso.shape[0]
    f = family.louvain_communities if family is louvain else family.leiden_communities
    np.testing.assert_array_equal(f(big, seed=seed), levels[-1][0])


def test_cpm_leiden_ignores_isolated_vertices(padded):
    """CPM runs as CPM on the vertices with edges (the objective is kept across
    the compaction), and its reported value counts each isolated singleton's
    -gamma / 2, as networkx's constant_potts_model does."""
    from nx_gpumatch.community.quality import cpm

    g, big, n, pos, iso = padded
    kw = dict(seed=3, device="cpu", progress=False, metric="cpm", resolution=0.3)
    small = list(leiden.levels(g, **kw))
    levels = list(leiden.levels(big, **kw))
    assert len(levels) == len(small)
    for (la, ia), (lb, ib) in zip(small, levels):
        np.testing.assert_array_equal(lb[pos], la)
        assert ib["metric"] == "cpm" and "modularity" not in ib
        want = cpm(big.indptr, big.indices, big.weights, big.loop_weight, lb, 0.3)
        assert ib["quality"] == pytest.approx(want, rel=1e-9, abs=1e-9)
        assert ib["quality"] == pytest.approx(ia["quality"] - 0.3 * iso.shape[0] / 2)


def test_communities_of_a_networkx_graph_with_isolated_nodes():
    G = nx.karate_club_graph()
    H = G.copy()
    H.add_nodes_from(["a", "b", 100])
    for f in (ng.louvain_communities, ng.leiden_communities):
        got = f(H, seed=1)
        assert got[: len(got) - 3] == f(G, seed=1)
        assert got[-3:] == [{"a"}, {"b"}, {100}]


def test_no_edges_at_all():
    g = ng.Graph.from_arrays([], [], num_nodes=5)
    for f in (ng.louvain_communities, ng.leiden_communities):
        np.testing.assert_array_equal(f(g), np.arange(5))
    (labels, info), *more = louvain.levels(g, progress=False)
    assert not more and info["vertices"] == 5
    np.testing.assert_array_equal(ng.max_weight_matching(g), np.full(5, -1))
    np.testing.assert_array_equal(ng.max_weight_matching(g, algorithm="suitor"), np.full(5, -1))
    assert ng.b_matching(g, 2)[0].shape == (0,)
    np.testing.assert_array_equal(ng.greedy_matching_smi(g), np.full(5, -1))
    A = sp.csr_array((4, 6))
    np.testing.assert_array_equal(ng.maximum_bipartite_matching(A), np.full(6, -1))


def test_bipartite_matrix_ignores_empty_rows_and_columns():
    rng = np.random.default_rng(2)
    r, c = 300, 200
    rows, cols = rng.integers(0, r, 600), rng.integers(0, c, 600)
    A = sp.csr_array((np.ones(600), (rows, cols)), shape=(r, c))
    nr, rpos = _layout(r, 2 * r, "between", 1)
    nc, cpos = _layout(c, 3 * c, "between", 2)
    B = sp.csr_array((np.ones(600), (rpos[rows], cpos[cols])), shape=(nr, nc))
    for perm_type, side, other, n in (("row", cpos, rpos, nc), ("column", rpos, cpos, nr)):
        # threads=1: the threaded search may find another maximum matching
        a, (ra, ca) = ng.maximum_bipartite_matching(A, perm_type, return_cover=True, threads=1)
        b, (rb, cb) = ng.maximum_bipartite_matching(B, perm_type, return_cover=True, threads=1)
        expect = np.full(n, -1, np.int32)
        expect[side] = np.where(a >= 0, other[np.maximum(a, 0)], -1)
        np.testing.assert_array_equal(b, expect)
        np.testing.assert_array_equal(rb, rpos[ra])
        np.testing.assert_array_equal(cb, cpos[ca])


def test_bipartite_graph_with_isolated_vertices():
    k = 60
    rng = np.random.default_rng(3)
    src = rng.integers(0, k // 2, 200) * 2  # even ids on top
    dst = rng.integers(0, k // 2, 200) * 2 + 1
    n, pos = _layout(k, 100, "between", 4)
    g = ng.Graph.from_arrays(src, dst, num_nodes=k)
    big = ng.Graph.from_arrays(pos[src], pos[dst], num_nodes=n)
    mate, cover = ng.maximum_bipartite_matching(
        g, top_nodes=range(0, k, 2), return_cover=True, threads=1
    )
    mb, cb = ng.maximum_bipartite_matching(
        big, top_nodes=pos[::2].tolist(), return_cover=True, threads=1
    )
    np.testing.assert_array_equal(mb, _spread_mate(mate, pos, n))
    np.testing.assert_array_equal(cb, pos[cover])
    # without top_nodes an isolated vertex makes the sides ambiguous, as in networkx
    with pytest.raises(nx.AmbiguousSolution):
        ng.maximum_bipartite_matching(big)


def test_stable_marriage_with_people_without_lists():
    men, women = sm.stable_marriage_instance("easy", 300, seed=4)
    n_men, mpos = _layout(300, 500, "between", 5)
    n_women, wpos = _layout(300, 200, "end")

    def pad(side, n, pos, other):
        ptr, choices = side
        full = np.zeros(n + 1, np.int64)
        full[pos + 1] = np.diff(ptr)
        return np.cumsum(full), other[choices].astype(np.int32)

    big_men, big_women = pad(men, n_men, mpos, wpos), pad(women, n_women, wpos, mpos)
    for kw in (
        dict(parallel=False),
        dict(parallel=True, threads=2),
        dict(algorithm="gale_shapley"),
    ):
        a = ng.stable_marriage(men, women, **kw)
        b = ng.stable_marriage(big_men, big_women, **kw)
        expect = np.full(n_men, -1, np.int64)
        expect[mpos] = np.where(a >= 0, wpos[np.maximum(a, 0)], -1)
        np.testing.assert_array_equal(b, expect)
    prefs = ng.prepare_preferences(big_men, big_women)
    assert (prefs.n_men, prefs.n_women) == (n_men, n_women)
    assert ng.is_stable(b, prefs)
    # a fault is still reported in the caller's numbering
    bad_choices = big_men[1].copy()
    q = big_men[0][mpos[10]]
    bad_choices[q + 1] = bad_choices[q]
    with pytest.raises(ValueError, match=f"man {mpos[10]} ranks {bad_choices[q]} twice"):
        ng.stable_marriage((big_men[0], bad_choices), big_women)


# -------------------------------------------------------------- large n
# Declared sizes far beyond the edges: the engines must not walk every declared
# vertex (before, each family took seconds to minutes here). The bounds are
# generous; the work left is the per-vertex output and numpy passes.
N = 10**7


@pytest.fixture(scope="module")
def huge():
    src = np.array([0, 5, N // 2, N - 2])
    dst = np.array([N - 1, 6, N // 2 + 1, 5])
    return ng.Graph.from_arrays(src, dst, [1.0, 2.0, 3.0, 4.0], num_nodes=N)


def _fast(f, limit=5.0):
    f()  # compiles or loads the kernels of a small run
    t = time.perf_counter()
    out = f()
    assert time.perf_counter() - t < limit
    return out


CALLS = {
    "blossom": lambda g: ng.max_weight_matching(g),
    "suitor": lambda g: ng.max_weight_matching(g, algorithm="suitor", device="cpu"),
    "local_max": lambda g: ng.max_weight_matching(g, algorithm="local_max", device="cpu"),
    "red_blue": lambda g: ng.max_weight_matching(g, algorithm="red_blue", seed=1, device="cpu"),
    "min_weight": lambda g: ng.min_weight_matching(g),
    "b_suitor": lambda g: ng.b_matching(g, 2, device="cpu"),
    "local_dominant": lambda g: ng.b_matching(g, 2, algorithm="local_dominant", device="cpu"),
    "louvain": lambda g: ng.louvain_communities(g, device="cpu", seed=1),
    "leiden": lambda g: ng.leiden_communities(g, device="cpu", seed=1),
    "greedy_matching_smi": lambda g: ng.greedy_matching_smi(g, device="cpu"),
    "bipartite": lambda g: ng.maximum_bipartite_matching(g, top_nodes=[0, 5, N // 2]),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_declared_size_far_beyond_the_edges(huge, name):
    out = _fast(lambda: CALLS[name](huge.with_weights(huge.edge_weight)))
    if name in ("louvain", "leiden"):
        kept = [0, 5, 6, N // 2, N // 2 + 1, N - 2, N - 1]
        assert out.shape == (N,) and out[N // 2] == out[N // 2 + 1]
        assert out.max() == len(set(out[kept].tolist())) + (N - len(kept)) - 1
    elif name in ("b_suitor", "local_dominant"):
        assert out[0].shape[0] == 4
    elif name != "bipartite":
        assert out[N // 2] == N // 2 + 1 and out[N // 2 + 1] == N // 2 and out[1] == -1


def test_matrix_and_lists_far_beyond_their_entries():
    A = sp.csr_array(([1.0, 1.0], ([0, N - 1], [N - 1, 3])), shape=(N, N))
    perm = _fast(lambda: ng.maximum_bipartite_matching(A))
    assert perm[N - 1] == 0 and perm[3] == N - 1 and np.count_nonzero(perm >= 0) == 2
    ptr = np.zeros(N + 1, np.int64)
    ptr[N - 3 :] = [0, 1, 1, 2]  # men N - 3 and N - 1 rank someone
    men = (ptr, np.array([7, 3], np.int32))
    wptr = np.zeros(N + 1, np.int64)
    wptr[4:] = 1
    wptr[8:] = 2  # woman 3 ranks man N - 1, woman 7 ranks man N - 3
    women = (wptr, np.array([N - 1, N - 3], np.int32))
    mate = _fast(lambda: ng.stable_marriage(men, women, device="cpu"))
    assert mate[N - 3] == 7 and mate[N - 1] == 3 and np.count_nonzero(mate >= 0) == 2


def test_gpu_route_gets_the_compacted_input(monkeypatch, padded):
    """Compaction sits above the engines: a call routed to the GPU hands its
    engine only the vertices with edges (the engine stubbed by the CPU one)."""
    from nx_gpumatch.algorithms import _engines as engines
    from nx_gpumatch.algorithms import b_matching as fb
    from nx_gpumatch.gpu import b_matching as gb
    from nx_gpumatch.gpu import louvain as gl
    from nx_gpumatch.gpu import matching as gm
    from nx_gpumatch.gpu import stable_marriage as gsm

    g, big, n, pos, _ = padded
    # The matchings ranked by the edge order are compacted only where the
    # isolated vertices outnumber the arcs (test_matching_ties): pad further.
    n = n + 2 * big.num_edges + 1
    big = ng.Graph.from_arrays(big.edge_src, big.edge_dst, big.edge_weight, num_nodes=n)
    seen = []

    def matching_run(graph, algorithm, seed=0, select="weighted"):
        from nx_gpumatch.cpu import matching as cm

        seen.append(graph.num_nodes)
        order, usable = graph.edge_order(), graph.num_usable()
        return cm.greedy(graph.num_nodes, graph.edge_src, graph.edge_dst, order, usable)

    def b_run(graph, b, algorithm="b_suitor"):
        seen.append(graph.num_nodes)
        return fb.b_matching_edges(graph, b, "greedy")  # the same b-matching, on the CPU

    def sm_run(prefs, algorithm="mcvitie_wilson", backend="cupy"):
        seen.append(prefs.n_men)
        return sm.solve(prefs, engine="sequential")

    import nx_gpumatch.cpu.louvain as cl

    def louvain_levels(indptr, *args, **kw):
        seen.append(indptr.shape[0] - 1)
        kw = {k: v for k, v in kw.items() if k in ("order", "resolution", "threshold")}
        return cl.louvain_levels(indptr, *args, **kw)

    expect = _spread_mate(ng.max_weight_matching(g, algorithm="suitor", device="cpu"), pos, n)
    b_expect = pos[ng.b_matching(g, 1, device="cpu")[0]]
    monkeypatch.setattr(gm, "run", matching_run)
    monkeypatch.setattr(gb, "run", b_run)
    monkeypatch.setattr(gsm, "run", sm_run)
    monkeypatch.setattr(gl, "louvain_levels", louvain_levels)
    for mod in (engines, sm):
        monkeypatch.setattr(mod, "resolve_device", lambda *a, **k: "gpu")
    np.testing.assert_array_equal(ng.max_weight_matching(big, algorithm="suitor"), expect)
    np.testing.assert_array_equal(ng.b_matching(big, 1)[0], b_expect)
    ng.louvain_communities(big)
    np.testing.assert_array_equal(ng.greedy_matching_smi(big), expect)
    assert seen == [g.num_nodes] * 4


def test_building_a_graph_costs_its_edges_even_interpreted():
    """A small graph's first build runs interpreted: its loops must not walk
    the declared vertices."""
    from nx_gpumatch import cpu
    from nx_gpumatch.cpu import csr  # noqa: F401 (imports Numba before the clock starts)

    t = time.perf_counter()
    with cpu.interpreted():
        g = ng.Graph.from_arrays([0, 5], [N - 1, 6], num_nodes=N)
    assert time.perf_counter() - t < 2.0  # walking the vertices interpreted: 4 s and more
    assert g.indptr[-1] == 4 and g.indices.tolist() == [N - 1, 6, 5, 0]
    assert g.indptr[N] - g.indptr[N - 1] == 1 and g.indptr[6] == 2


@pytest.mark.parametrize("name", ["blossom", "louvain", "leiden", "greedy_matching_smi"])
def test_first_calls_run_interpreted_on_the_edges_only(huge, name):
    """A first call on few edges runs interpreted (no compiling for a small
    input): it must cost the edges, not the declared vertices."""
    from nx_gpumatch import cpu

    with cpu.interpreted():
        _fast(lambda: CALLS[name](huge.with_weights(huge.edge_weight)))


@pytest.mark.parametrize("case", ["late", "never", "second-array", "rows"])
def test_compaction_stops_early_only_when_everyone_is_kept(case):
    """compaction marks long id arrays in chunks and stops once every vertex is
    kept: a vertex named only at the very end, or only in a later array, or not
    at all, must still come out right."""
    from nx_gpumatch.algorithms._compact import compaction

    n = 1000
    rng = np.random.default_rng(5)
    ids = rng.integers(0, n - 1, 400_000)  # vertex n - 1 not among them
    rows, arrays = None, [ids]
    if case == "late":
        ids[-1] = n - 1
    elif case == "second-array":
        arrays.append(np.array([n - 1]))
    elif case == "rows":  # everyone has a row: the ids need not be read
        rows = np.arange(n + 1)
        arrays = [np.full(10, -(10**9))]  # would raise if read
    c = compaction(n, rows=rows, ids=arrays)
    if case == "never":
        assert c is not None and c.kept.tolist() == list(range(n - 1))
    else:
        assert c is None
