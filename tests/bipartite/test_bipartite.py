"""Maximum-cardinality bipartite matching: every answer is checked by its
certificate (a valid matching, and a vertex cover of the same size: by weak
duality no matching can be larger), and its size against scipy and networkx."""

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_mbm

import nx_gpumatch as gm
from nx_gpumatch.algorithms.bipartite import matching as bp
from nx_gpumatch.generators_bipartite import GENERATORS, bipartite_graph

ENGINES = [(a, i) for a in bp.ALGORITHMS for i in bp.INITS]


def check_certificate(A, perm, rows_cover, cols_cover):
    """perm (perm_type='row') is a matching of A and the cover covers every
    edge of A with exactly as many vertices as matched pairs."""
    A = sp.coo_array(A)
    nr, nc = A.shape
    assert perm.shape == (nc,)
    cols = np.flatnonzero(perm >= 0)
    rows = perm[cols]
    assert len(set(rows.tolist())) == rows.shape[0], "a row matched twice"
    assert np.all((rows >= 0) & (rows < nr))
    keys = A.row.astype(np.int64) * nc + A.col
    assert np.isin(rows.astype(np.int64) * nc + cols, keys).all(), "not an edge"
    in_r = np.zeros(nr, bool)
    in_r[rows_cover] = True
    in_c = np.zeros(nc, bool)
    in_c[cols_cover] = True
    assert np.all(in_r[A.row] | in_c[A.col]), "an edge is not covered"
    assert in_r.sum() + in_c.sum() == cols.shape[0]
    return cols.shape[0]


def solve_checked(A, **kw):
    perm, (rc, cc) = gm.maximum_bipartite_matching(A, return_cover=True, **kw)
    return check_certificate(A, perm, rc, cc)


@st.composite
def matrices(draw):
    nr = draw(st.integers(0, 25))
    nc = draw(st.integers(0, 25))
    m = draw(st.integers(0, 80)) if nr and nc else 0
    r = draw(st.lists(st.integers(0, max(nr - 1, 0)), min_size=m, max_size=m))
    c = draw(st.lists(st.integers(0, max(nc - 1, 0)), min_size=m, max_size=m))
    fmt = draw(st.sampled_from(["csr", "csc", "coo"]))
    A = sp.coo_array((np.ones(m), (np.array(r, int), np.array(c, int))), shape=(nr, nc))
    return A.asformat(fmt)


@settings(max_examples=40, deadline=None)
@given(matrices(), st.sampled_from(ENGINES))
def test_hypothesis_against_scipy(A, engine):
    algo, init = engine
    want = int((scipy_mbm(sp.csr_array(A)) >= 0).sum())
    assert solve_checked(A, algorithm=algo, init=init) == want


@pytest.mark.parametrize("kind", sorted(GENERATORS))
@pytest.mark.parametrize("algo,init", ENGINES)
def test_adversarial_generators(kind, algo, init, nthreads):
    A = bipartite_graph(kind, 300, seed=3)
    want = int((scipy_mbm(sp.csr_array(A)) >= 0).sum())
    assert solve_checked(A, algorithm=algo, init=init) == want


def test_big_levels_use_threads(nthreads):
    # enough columns per BFS level to take the parallel branch
    from nx_gpumatch.cpu import bipartite as cb

    A = bipartite_graph("random", 20_000, seed=1)
    assert A.shape[1] > cb.SMALL_LEVEL
    want = int((scipy_mbm(A) >= 0).sum())
    for algo in bp.ALGORITHMS:
        assert solve_checked(A, algorithm=algo, init="none") == want


@pytest.mark.parametrize("init", ["cheap", "none"])
def test_hopcroft_karp_work_stays_bounded(init):
    # A random graph from a poor start: a DFS pass after every phase once made
    # 21 phases and ~14 m edge scans here (and 59 phases, ~70 m scans, ~100 s at
    # 1M x 1M), because its paths keep re-creating short ones. Hopcroft-Karp
    # itself needs about 9 phases of about one scan of the graph each.
    A = bipartite_graph("random", 50_000, seed=0)
    bi, _ = bp.Biadjacency.from_scipy(A)
    stats = {}
    rmatch, *_ = bp.solve(bi, algorithm="hopcroft_karp", init=init, device="cpu", stats=stats)
    assert int((rmatch >= 0).sum()) == int((scipy_mbm(A) >= 0).sum())
    assert stats["phases"] <= 12
    assert stats["work"] <= 13 * bi.num_edges


@pytest.mark.parametrize("algo", ["auto", "hopcroft_karp"])
def test_adversarial_work_per_edge_does_not_grow(algo, nthreads):
    # The engines count the edges their searches scan: a bound on work / m,
    # not on the clock. Deep layered inputs take ~7-9 scans of the graph (a few
    # dozen augmenting paths, each thousands of levels long, whatever the
    # size; 13-19 before dead columns and alternating scan directions, which
    # the bound of 14 catches); every other generator takes at most ~2. A shape
    # whose count grows with the size (the sqrt(n) of Hopcroft-Karp's bound, or
    # worse) fails the second check: 4x the size may add 30% and one scan.
    per_edge = {}
    for size in (16_000, 64_000):
        for kind in sorted(GENERATORS):
            bi, _ = bp.Biadjacency.from_scipy(bipartite_graph(kind, size, seed=0))
            stats = {}
            bp.solve(bi, algorithm=algo, device="cpu", stats=stats)  # raises if not proved
            per_edge[kind, size] = stats["work"] / max(bi.num_edges, 1)
            assert per_edge[kind, size] <= (14 if kind == "layered" else 3), (kind, size)
    if nthreads > 1:
        # Threads race for vertices, which moves a layered count by up to ~30%
        # from run to run (6.1-7.7 at 16k, 8.2-10.4 at 64k); the growth check
        # runs on one thread, where the count is the same on every run.
        return
    for kind in GENERATORS:
        small, big = per_edge[kind, 16_000], per_edge[kind, 64_000]
        assert big <= 1.3 * small + 1.0, (kind, small, big)


@pytest.mark.parametrize("limit", [0, 1, 3])
def test_auto_hands_over_to_hopcroft_karp(limit, monkeypatch, nthreads):
    # after `limit` APFB phases Hopcroft-Karp finishes from the same matching
    monkeypatch.setattr(bp, "AUTO_APFB_PHASES", limit)
    A = bipartite_graph("layered", 2_000, seed=1)
    want = int((scipy_mbm(A) >= 0).sum())
    assert solve_checked(A, init="none") == want
    bi, _ = bp.Biadjacency.from_scipy(A)
    stats = {}
    bp.solve(bi, init="none", device="cpu", stats=stats)
    assert stats["algorithm"] == "auto" and stats["phases"] >= limit


@pytest.mark.parametrize("kind", ["rmat", "random", "empty_sides", "hub"])
def test_transpose_and_karp_sipser(kind, nthreads):
    from nx_gpumatch.cpu import bipartite as cb

    A = bipartite_graph(kind, 5_000, seed=2).tocsc()
    bi, _ = bp.Biadjacency.from_scipy(A)
    nr, nc = bi.nrows, bi.ncols
    rptr, rcols = cb.transpose(nr, nc, bi.cptr, bi.crows)
    B = A.tocsr()
    B.sort_indices()
    assert np.array_equal(rptr, B.indptr) and np.array_equal(rcols, B.indices)
    rmatch = np.full(nr, -1, np.int32)
    cmatch = np.full(nc, -1, np.int32)
    cb.init_karp_sipser(nr, nc, bi.cptr, bi.crows, rptr, rcols, rmatch, cmatch)
    assert rmatch.min() >= -1 and cmatch.min() >= -1  # no claim left half done
    cols = np.flatnonzero(cmatch >= 0)
    assert np.array_equal(rmatch[cmatch[cols]], cols)  # one matching, both directions
    assert np.isin(
        cmatch[cols].astype(np.int64) * nc + cols, B.tocoo().row * nc + B.tocoo().col
    ).all()
    if nthreads == 1:  # no claim can fail: a column left free has no free row
        free_c = cmatch < 0
        lens = np.diff(bi.cptr)
        assert not np.any(np.repeat(free_c, lens) & (rmatch[bi.crows] < 0))


def _record_builds(monkeypatch):
    """(build, Numba's thread count, init code) of each CPU engine call."""
    import numba

    from nx_gpumatch.cpu import bipartite_run as br

    seen = []

    def spy(name, inner):
        def call(*args):
            seen.append((name, numba.get_num_threads(), args[4]))
            return inner(*args)

        return call

    for name in ("solve", "solve_serial"):
        monkeypatch.setattr(br, name, spy(name, getattr(br, name)))
    return seen


def test_small_inputs_run_the_serial_build(monkeypatch):
    # A 300 x 300 call (2.9x scipy's time) spent more on setting Numba's thread
    # count to one and back, on one-thread teams for each parallel loop, and on
    # Karp-Sipser than on matching: it now runs the build without parallel
    # loops, leaves the thread count alone and starts with "cheap".
    import numba

    from nx_gpumatch import cpu
    from nx_gpumatch.cpu import bipartite_run as br

    seen = _record_builds(monkeypatch)
    sets = []
    set_threads = numba.set_num_threads
    monkeypatch.setattr(numba, "set_num_threads", lambda n: (sets.append(n), set_threads(n)))
    small = sp.random(300, 300, density=0.02, format="csr", random_state=1)
    large = bipartite_graph("random", 6000, seed=1)
    with cpu.threads(2) as n:
        if n < 2:
            pytest.skip("needs 2 Numba threads")
        with cpu.parallel_min(2 * small.nnz):
            assert large.nnz >= cpu.PARALLEL_MIN and large.nnz >= bp.KARP_SIPSER_MIN
            sets.clear()
            gm.maximum_bipartite_matching(small, device="cpu")
            gm.maximum_bipartite_matching(small, device="cpu", threads=2)
            gm.maximum_bipartite_matching(small, device="cpu", init="karp_sipser")
            assert sets == []  # Numba's thread count never touched
            gm.maximum_bipartite_matching(large, device="cpu")
            gm.maximum_bipartite_matching(large, device="cpu", threads=1)
    cheap, ks = br.INIT_CODES["cheap"], br.INIT_CODES["karp_sipser"]
    assert seen == [
        ("solve_serial", 2, cheap),
        ("solve_serial", 2, cheap),
        ("solve_serial", 2, ks),
        ("solve", 2, ks),
        ("solve_serial", 2, ks),
    ]
    with pytest.raises(ValueError, match="threads"):
        gm.maximum_bipartite_matching(small, device="cpu", threads=0)


def _parallel_callees(disp, seen=None):
    """Names of the parallel builds that jitted ``disp`` reaches through its calls."""
    from numba.core.registry import CPUDispatcher

    seen = set() if seen is None else seen
    found = set()
    if disp.targetoptions.get("parallel"):
        found.add(disp.py_func.__name__)
    fn = disp.py_func
    for name in fn.__code__.co_names:
        callee = fn.__globals__.get(name)
        if isinstance(callee, CPUDispatcher) and id(callee) not in seen:
            seen.add(id(callee))
            found |= _parallel_callees(callee, seen)
    return found


def test_few_columns_run_the_serial_build(monkeypatch):
    # 3000 x 3000 with 135 000 entries took 8-15x scipy's time on 2 threads: no
    # search level had enough columns to split, so the threads only started teams
    from nx_gpumatch import cpu
    from nx_gpumatch.cpu import bipartite as cb
    from nx_gpumatch.cpu import bipartite_run as br

    seen = _record_builds(monkeypatch)
    A = sp.random(3000, 3000, density=0.015, format="csc", random_state=1)
    assert A.nnz >= cpu.PARALLEL_MIN and A.shape[1] < cb.SMALL_LEVEL
    with cpu.threads(2) as n:
        if n < 2:
            pytest.skip("needs 2 Numba threads")
        assert solve_checked(A, device="cpu") == int((scipy_mbm(sp.csr_array(A)) >= 0).sum())
    # and "cheap" first: Karp-Sipser's pass cost more than it saved at 45 a column
    assert seen == [("solve_serial", 2, br.INIT_CODES["cheap"])]


def test_serial_build_reaches_no_parallel_loop():
    # every prange on the serial build's way is a plain loop: no thread team
    from nx_gpumatch.cpu import bipartite_run as br

    assert _parallel_callees(br.solve_serial) == set()
    assert _parallel_callees(br.check_cover_serial) == set()
    assert {"transpose", "_ks_round", "_ap_level", "verify"} <= _parallel_callees(br.solve)
    A = bipartite_graph("hub", 300, seed=1)
    bi, _ = bp.Biadjacency.from_scipy(A)
    for init in (0, 1, 2):
        for algo in (0, 1, 2, 3):
            args = (bi.nrows, bi.ncols, bi.cptr, bi.crows, init, algo, True, 8)
            one, two = br.solve_serial(*args), br.solve(*args)
            assert one[-1] and two[-1]  # proved
            assert (one[0] >= 0).sum() == (two[0] >= 0).sum() == (scipy_mbm(A) >= 0).sum()


def test_a_matrix_is_checked_once(monkeypatch):
    # from_scipy checked a CSR/CSC structure, then Biadjacency checked it again
    import nx_gpumatch._input as inp

    calls = []
    check = inp.check_compressed
    monkeypatch.setattr(
        inp, "check_compressed", lambda *a, **k: (calls.append(1), check(*a, **k))[1]
    )
    for fmt in ("csr", "csc"):
        A = sp.random(50, 40, density=0.1, format=fmt, random_state=2)
        calls.clear()
        assert solve_checked(A) == int((scipy_mbm(sp.csr_array(A)) >= 0).sum())
        assert len(calls) == 1, fmt
    with pytest.raises(ValueError, match="indices"):
        bad = sp.csr_array(A)
        bad.indices[0] = 99
        gm.maximum_bipartite_matching(bad)


def test_same_matching_on_every_call_below_the_thread_threshold():
    # with 2 threads the races of Karp-Sipser and APFB changed the pairs
    from nx_gpumatch import cpu

    A = bipartite_graph("random", 3000, seed=3)
    assert A.nnz < cpu.PARALLEL_MIN
    with cpu.threads(2):
        first = gm.maximum_bipartite_matching(A, device="cpu")
        for _ in range(8):
            assert np.array_equal(gm.maximum_bipartite_matching(A, device="cpu"), first)
    with cpu.threads(1):
        assert np.array_equal(gm.maximum_bipartite_matching(A, device="cpu"), first)


def test_hopcroft_karp_from_cheap_repeats_on_threads(monkeypatch):
    # The README's way to the same pairs on threads: Hopcroft-Karp's levels are
    # the same whichever thread sets them and its path search runs on one
    # thread; "cheap" is one pass on one thread (Karp-Sipser and APFB race)
    from nx_gpumatch import cpu
    from nx_gpumatch.cpu import bipartite as cb

    A = bipartite_graph("random", 20_000, seed=5)
    assert A.nnz >= cpu.PARALLEL_MIN and A.shape[0] >= cb.SMALL_LEVEL
    kw = dict(device="cpu", algorithm="hopcroft_karp", init="cheap")
    with cpu.threads(1):
        first = gm.maximum_bipartite_matching(A, **kw)
    seen = _record_builds(monkeypatch)
    with cpu.threads(2) as n:
        if n < 2:
            pytest.skip("needs 2 Numba threads")
        for _ in range(4):
            assert np.array_equal(gm.maximum_bipartite_matching(A, **kw), first)
    assert {build for build, _, _ in seen} == {"solve"}


def test_perm_types_as_scipy():
    A = sp.csr_array(np.array([[1, 1, 0], [1, 0, 0]]))
    row = gm.maximum_bipartite_matching(A, "row")
    col = gm.maximum_bipartite_matching(A, "column")
    # the only maximum matching: row 1 - column 0, row 0 - column 1
    np.testing.assert_array_equal(row, [1, 0, -1])
    np.testing.assert_array_equal(col, [1, 0])
    assert row.dtype == scipy_mbm(A).dtype


@pytest.mark.parametrize("shape", [(0, 0), (4, 0), (0, 3), (3, 5)])
def test_empty(shape):
    A = sp.csr_array(shape)
    np.testing.assert_array_equal(gm.maximum_bipartite_matching(A), np.full(shape[1], -1))
    np.testing.assert_array_equal(gm.maximum_bipartite_matching(A, "column"), np.full(shape[0], -1))


def test_single_row():
    A = sp.csr_array(np.ones((1, 7)))
    assert solve_checked(A) == 1
    assert solve_checked(A.T.tocsr()) == 1


def test_explicit_zeros_are_edges():
    A = sp.csr_array((np.array([0.0, 0.0]), np.array([1, 0]), np.array([0, 1, 2])), shape=(2, 2))
    assert A.nnz == 2
    assert solve_checked(A) == 2


def test_forced_augmentation():
    # a first-free-row start matches column 0 with row 0 and leaves column 1 stuck
    A = sp.csc_array(np.array([[1, 1], [1, 0]]))
    for algo, init in ENGINES:
        assert solve_checked(A, algorithm=algo, init=init) == 2


def test_matrix_market_path(tmp_path):
    import scipy.io

    A = bipartite_graph("random", 50, seed=2)
    path = tmp_path / "g.mtx"
    scipy.io.mmwrite(path, A)
    got = gm.maximum_bipartite_matching(str(path))
    assert (got >= 0).sum() == (scipy_mbm(A) >= 0).sum()
    assert (gm.maximum_bipartite_matching(path) >= 0).sum() == (got >= 0).sum()


def test_dataframe():
    df = pd.DataFrame({"a": ["x", "x", "y", "z"], "b": [1, 2, 1, 1]})
    out = gm.maximum_bipartite_matching(df, source="a", target="b")
    assert list(out.columns) == ["a", "b"]
    assert len(out) == 2
    assert out["a"].is_unique and out["b"].is_unique
    pairs = set(zip(df["a"], df["b"]))
    assert all(p in pairs for p in zip(out["a"], out["b"]))
    out2, (srcs, tgts) = gm.maximum_bipartite_matching(
        df, source="a", target="b", return_cover=True
    )
    assert len(srcs) + len(tgts) == 2
    assert all(s in set(srcs) or t in set(tgts) for s, t in pairs)
    with pytest.raises(ValueError, match="column 'source'"):
        gm.maximum_bipartite_matching(df)


def _nx_random_bipartite(n1, n2, p, seed):
    return nx.bipartite.random_graph(n1, n2, p, seed=seed)


@pytest.mark.parametrize("seed", range(6))
def test_networkx_graph_and_dispatch(seed):
    G = _nx_random_bipartite(12, 9, 0.2, seed)
    top = {v for v, d in G.nodes(data="bipartite") if d == 0}
    want = nx.bipartite.hopcroft_karp_matching(G, top)
    for func in (nx.bipartite.maximum_matching, nx.bipartite.eppstein_matching):
        got = func(G, top, backend="gpumatch")
        assert len(got) == len(want)
        assert all(got[got[u]] == u and G.has_edge(u, got[u]) for u in got)
        assert all(type(u) is int for u in got)
    got, cover = gm.maximum_bipartite_matching(G, top_nodes=top, return_cover=True)
    assert len(cover) == len(got) // 2
    assert all(u in cover or v in cover for u, v in G.edges())
    cover2 = nx.bipartite.to_vertex_cover(G, want, top, backend="gpumatch")
    assert cover2 == nx.bipartite.to_vertex_cover(G, want, top)


def test_graph_input():
    G = nx.path_graph(5)
    g = gm.Graph.from_networkx(G)
    mate, cover = gm.maximum_bipartite_matching(g, return_cover=True)
    assert mate.dtype == np.int64 and (mate >= 0).sum() == 4
    assert len(cover) == 2
    assert gm.is_matching(g, mate)


def test_networkx_errors():
    disconnected = nx.Graph([(0, 1), (2, 3)])
    with pytest.raises(nx.AmbiguousSolution):
        nx.bipartite.maximum_matching(disconnected, backend="gpumatch")
    # with top_nodes a disconnected graph is fine
    assert len(nx.bipartite.maximum_matching(disconnected, {0, 2}, backend="gpumatch")) == 4
    with pytest.raises(nx.NetworkXError, match="not bipartite"):
        nx.bipartite.maximum_matching(nx.cycle_graph(3), backend="gpumatch")
    loop = nx.Graph([(0, 1), (1, 1)])
    with pytest.raises(nx.NetworkXError, match="not bipartite"):
        nx.bipartite.maximum_matching(loop, backend="gpumatch")
    with pytest.raises(nx.NetworkXError, match="same side"):
        nx.bipartite.maximum_matching(nx.path_graph(3), {0, 1}, backend="gpumatch")
    with pytest.raises(nx.NetworkXPointlessConcept):
        nx.bipartite.maximum_matching(nx.Graph(), backend="gpumatch")
    assert nx.bipartite.maximum_matching(nx.Graph(), set(), backend="gpumatch") == {}


def test_to_vertex_cover_rejects_a_non_maximum_matching():
    G = nx.path_graph(4)
    with pytest.raises(nx.NetworkXError, match="not a maximum"):
        nx.bipartite.to_vertex_cover(G, {1: 2, 2: 1}, backend="gpumatch")


def test_bad_arguments():
    A = sp.csr_array(np.eye(3))
    with pytest.raises(ValueError, match="perm_type"):
        gm.maximum_bipartite_matching(A, "rows")
    with pytest.raises(ValueError, match="algorithm"):
        gm.maximum_bipartite_matching(A, algorithm="blossom")
    with pytest.raises(ValueError, match="init"):
        gm.maximum_bipartite_matching(A, init="greedy")
    with pytest.raises(TypeError, match="sparse"):
        gm.maximum_bipartite_matching(np.eye(3))
    with pytest.raises(TypeError, match="top_nodes"):
        gm.maximum_bipartite_matching(A, top_nodes=[0])
    with pytest.raises(ValueError, match="GPU engine"):
        gm.maximum_bipartite_matching(A, device="gpu", algorithm="hopcroft_karp")


def test_generator_errors():
    with pytest.raises(ValueError, match="kind"):
        bipartite_graph("nope", 10)
    with pytest.raises(ValueError, match="size"):
        bipartite_graph("random", 0)


def test_thread_count_does_not_change_cardinality():
    from nx_gpumatch import cpu

    A = bipartite_graph("rmat", 10_000, seed=4)
    sizes = set()
    for t in (1, 2):
        with cpu.threads(t):
            for algo in bp.ALGORITHMS:
                sizes.add(solve_checked(A, algorithm=algo))
    assert len(sizes) == 1


# ------------------------------------------------------------------ CLI
def test_cli_generated(capsys):
    from nx_gpumatch.cli import main

    assert main(["bipartite", "-n", "300", "--generate", "hub"]) == 0
    out = capsys.readouterr().out
    assert "same cardinality" in out and "Konig cover" in out


def test_cli_csv_and_errors(tmp_path, capsys):
    from nx_gpumatch.cli import main

    src = tmp_path / "e.csv"
    src.write_text("a,b\nx,1\nx,2\ny,1\n")
    dst = tmp_path / "m.csv"
    assert (
        main(["bipartite", "-i", str(src), "--source", "a", "--target", "b", "-o", str(dst)]) == 0
    )
    got = pd.read_csv(dst)
    assert len(got) == 2 and set(got["a"]) == {"x", "y"}  # the input's column names
    assert main(["bipartite", "-i", str(src)]) == 2
    assert "column 'source'" in capsys.readouterr().err
    assert main(["bipartite", "-i", str(tmp_path / "missing.csv")]) == 2


def test_disconnected_before_not_bipartite():
    # networkx checks connectivity first, wherever the odd cycle lies
    for G in (nx.Graph([(0, 1), (1, 2), (2, 0)]), nx.Graph([(1, 2), (2, 3), (3, 1)])):
        G.add_node(0 if 0 not in G else 3)
        for f in (nx.bipartite.maximum_matching, nx.bipartite.eppstein_matching):
            with pytest.raises(nx.AmbiguousSolution):
                f(G)
            with pytest.raises(nx.AmbiguousSolution):
                f(G, backend="gpumatch")


def test_to_vertex_cover_takes_pairs_either_way():
    G = nx.complete_bipartite_graph(2, 3)
    top = [0, 1]
    for matching in ({0: 2, 1: 3}, {2: 0, 3: 1}, {0: 2, 2: 0, 3: 1, 1: 3}):
        cover = nx.bipartite.to_vertex_cover(G, matching, top, backend="gpumatch")
        assert cover == {0, 1}


def test_dataframe_source_and_target_must_differ():
    df = pd.DataFrame({"u": ["a", "b"], "v": [1, 2]})
    with pytest.raises(ValueError, match="same column 'u'"):
        gm.maximum_bipartite_matching(df, source="u", target="u")
