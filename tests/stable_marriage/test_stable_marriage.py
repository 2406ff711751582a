"""Stable marriage: every algorithm and engine returns the man-optimal stable
matching, checked against a textbook Gale-Shapley written here, a brute-force
blocking-pair search, and the ``matching`` package."""

import random
import sys
import threading

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nx_gpumatch
from nx_gpumatch.algorithms import stable_marriage as sm
from nx_gpumatch.cpu import stable_marriage as csm
from tests.support.inputs import to_arrays

ENGINES = [
    ("mcvitie_wilson", False),
    ("mcvitie_wilson", True),
    ("gale_shapley", False),
    ("gale_shapley", True),
]


# ------------------------------------------------------------ references
def reference_gale_shapley(men, women):
    """Textbook SMI Gale-Shapley on dicts: free men propose down their lists;
    a woman holds the best acceptable proposal so far."""
    rank = {w: {m: i for i, m in enumerate(lst)} for w, lst in women.items()}
    nxt = {m: 0 for m in men}
    held = {}
    free = list(men)[::-1]
    while free:
        m = free.pop()
        lst = men[m]
        while nxt[m] < len(lst):
            w = lst[nxt[m]]
            nxt[m] += 1
            r = rank[w].get(m)
            if r is None:
                continue  # she does not rank him: not a possible pair
            cur = held.get(w)
            if cur is None or r < rank[w][cur]:
                held[w] = m
                if cur is not None:
                    free.append(cur)
                break
    return {m: w for w, m in held.items()}


def brute_blocking(matching, men, women):
    """All blocking pairs, straight from the definition."""
    wife = dict(matching)
    husband = {w: m for m, w in matching.items()}
    out = []
    for m, lst in men.items():
        for w in lst:
            if m not in women[w]:
                continue
            m_prefers = m not in wife or lst.index(w) < lst.index(wife[m])
            h = husband.get(w)
            w_prefers = h is None or women[w].index(m) < women[w].index(h)
            if m_prefers and w_prefers and wife.get(m) != w:
                out.append((m, w))
    return out


def to_dicts(men, women):
    (mp, mc), (wp, wc) = men, women
    md = {i: mc[mp[i] : mp[i + 1]].tolist() for i in range(len(mp) - 1)}
    wd = {j: wc[wp[j] : wp[j + 1]].tolist() for j in range(len(wp) - 1)}
    return md, wd


@st.composite
def instances(draw, max_men=7, max_women=7):
    """SMI instances with names of mixed types: incomplete and empty lists,
    pairs ranked by one side only, unequal numbers of men and women."""
    nm = draw(st.integers(0, max_men))
    nw = draw(st.integers(0, max_women))
    men_names = [("m", i) for i in range(nm)]
    women_names = [f"w{j}" for j in range(nw)]
    men = {}
    for m in men_names:
        perm = draw(st.permutations(women_names))
        men[m] = list(perm[: draw(st.integers(0, nw))])
    women = {}
    for w in women_names:
        perm = draw(st.permutations(men_names))
        women[w] = list(perm[: draw(st.integers(0, nm))])
    return men, women


# ------------------------------------------------------------------ tests
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(instances())
def test_all_engines_equal_reference_dict(nthreads, inst):
    men, women = inst
    expect = reference_gale_shapley(men, women)
    assert brute_blocking(expect, men, women) == []
    for algorithm, parallel in ENGINES:
        got = nx_gpumatch.stable_marriage(
            men, women, algorithm=algorithm, parallel=parallel, device="cpu"
        )
        assert got == expect, (algorithm, parallel)
    assert nx_gpumatch.is_stable(expect, men, women)
    assert nx_gpumatch.blocking_pair(expect, men, women) is None


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(instances(max_men=9, max_women=6))
def test_array_form_and_proposals(nthreads, inst):
    men, women = inst
    expect = reference_gale_shapley(men, women)
    marr, warr = to_arrays(men, women)
    mi = {m: i for i, m in enumerate(men)}
    wi = {w: j for j, w in enumerate(women)}
    want = np.full(len(men), -1, np.int64)
    for m, w in expect.items():
        want[mi[m]] = wi[w]
    # Proposals: each man's mutually ranked list up to and including his wife.
    props = 0
    for m, lst in men.items():
        usable = [w for w in lst if m in women[w]]
        props += usable.index(expect[m]) + 1 if m in expect else len(usable)
    prefs = sm.prepare_preferences(marr, warr)
    for algorithm, parallel in ENGINES:
        got = nx_gpumatch.stable_marriage(
            marr, warr, algorithm=algorithm, parallel=parallel, device="cpu"
        )
        assert got.dtype == np.int64 and np.array_equal(got, want)
        mate, p = sm.solve(
            prefs, algorithm=algorithm, engine="parallel" if parallel else "sequential"
        )
        assert np.array_equal(mate, want) and p == props
    assert nx_gpumatch.is_stable(want, marr, warr)


@settings(max_examples=100, deadline=None)
@given(instances(), st.randoms(use_true_random=False))
def test_is_stable_matches_brute_force(inst, rnd):
    men, women = inst
    # A random matching, mostly of mutually ranked pairs, sometimes not.
    pairs = [(m, w) for m in men for w in men[m] if rnd.random() < 0.8 and m in women[w]]
    pairs += [(m, w) for m in men for w in women if rnd.random() < 0.05]
    rnd.shuffle(pairs)
    matching, used = {}, set()
    for m, w in pairs:
        if m not in matching and w not in used:
            matching[m] = w
            used.add(w)
    valid = all(w in men[m] and m in women[w] for m, w in matching.items())
    blocking = brute_blocking(matching, men, women) if valid else None
    assert nx_gpumatch.is_stable(matching, men, women) == (valid and not blocking)
    if valid:
        bp = nx_gpumatch.blocking_pair(matching, men, women)
        assert (bp is None) == (not blocking)
        if bp is not None:
            assert bp in blocking
    else:
        with pytest.raises(ValueError, match="do not both rank"):
            nx_gpumatch.blocking_pair(matching, men, women)


def test_is_stable_rejects_malformed():
    men = {"a": ["x", "y"], "b": ["x", "y"]}
    women = {"x": ["a", "b"], "y": ["b", "a"]}
    assert nx_gpumatch.is_stable({"a": "x", "b": "y"}, men, women)
    assert not nx_gpumatch.is_stable({"a": "x", "b": "x"}, men, women)  # woman married twice
    assert not nx_gpumatch.is_stable({"a": "y", "b": "x"}, men, women)  # a and x block
    assert nx_gpumatch.blocking_pair({"a": "y"}, men, women) == ("a", "x")
    with pytest.raises(ValueError, match="not among the men"):
        nx_gpumatch.is_stable({"zz": "x"}, men, women)
    with pytest.raises(ValueError, match="not among the women"):
        nx_gpumatch.is_stable({"a": "zz"}, men, women)
    marr, warr = to_arrays(men, women)
    assert nx_gpumatch.is_stable(np.array([0, 1]), marr, warr)
    assert not nx_gpumatch.is_stable(np.array([0, 0]), marr, warr)
    assert nx_gpumatch.blocking_pair(np.array([-1, 1]), marr, warr) == (0, 0)
    with pytest.raises(ValueError, match="length 2"):
        nx_gpumatch.is_stable(np.array([0]), marr, warr)
    with pytest.raises(ValueError, match="outside"):
        nx_gpumatch.is_stable(np.array([0, 5]), marr, warr)


def test_small_cases():
    sm_ = nx_gpumatch.stable_marriage
    assert sm_({}, {}) == {}
    assert sm_({"a": []}, {"x": ["a"]}) == {}
    assert sm_({"a": ["x"]}, {"x": []}) == {}  # ranked by one side only
    assert sm_({"a": ["x"]}, {"x": ["a"]}) == {"a": "x"}  # n = 1
    assert sm_({0: [0]}, {0: [0]}) == {0: 0}  # same names on both sides are fine
    empty = (np.zeros(1, np.int64), np.zeros(0, np.int32))
    assert sm_(empty, empty).shape == (0,)
    one = (np.array([0, 1]), np.array([0]))
    assert sm_(one, one).tolist() == [0]
    # Different numbers of men and women.
    men = {"a": ["x"], "b": ["x"], "c": ["x"]}
    women = {"x": ["c", "a", "b"]}
    assert sm_(men, women) == {"c": "x"}
    # Man-optimal, not woman-optimal: the classic two stable matchings.
    men = {"a": ["x", "y"], "b": ["y", "x"]}
    women = {"x": ["b", "a"], "y": ["a", "b"]}
    assert sm_(men, women) == {"a": "x", "b": "y"}
    assert sm_(women, men) == {"x": "b", "y": "a"}


def test_prepared_preferences_reused():
    men, women = sm.stable_marriage_instance("easy", 2000, seed=3)
    prefs = sm.prepare_preferences(men, women)
    assert prefs.n_men == prefs.n_women == 2000
    a = nx_gpumatch.stable_marriage(prefs)
    b = nx_gpumatch.stable_marriage(men, women)
    assert np.array_equal(a, b)
    assert nx_gpumatch.is_stable(a, prefs)
    with pytest.raises(ValueError, match="women_prefs=None"):
        nx_gpumatch.stable_marriage(prefs, women)
    with pytest.raises(ValueError, match="women_prefs is required"):
        nx_gpumatch.stable_marriage(men)


@pytest.mark.parametrize(
    "kind,n,seed",
    [
        ("easy", 1, 0),
        ("easy", 2, 1),
        ("easy", 3000, 1),
        ("easy", 3000, 2),
        ("hard", 1, 0),
        ("hard", 150, 4),
        ("hard", 257, 5),
    ],
)
def test_generated_instances(nthreads, kind, n, seed):
    men, women = nx_gpumatch.stable_marriage_instance(kind, n, seed)
    md, wd = to_dicts(men, women)
    expect = reference_gale_shapley(md, wd)
    want = np.full(n, -1, np.int64)
    for m, w in expect.items():
        want[m] = w
    prefs = sm.prepare_preferences(men, women)
    for algorithm, parallel in ENGINES:
        mate, props = sm.solve(
            prefs, algorithm=algorithm, engine="parallel" if parallel else "sequential"
        )
        assert np.array_equal(mate, want), (algorithm, parallel)
        if kind == "hard":
            assert props == n * (n + 1) // 2
    assert nx_gpumatch.is_stable(want, prefs)
    if kind == "hard":
        assert (want >= 0).all()


def test_generated_large_easy_engines_agree(nthreads):
    men, women = nx_gpumatch.stable_marriage_instance("easy", 200_000, seed=11)
    prefs = sm.prepare_preferences(men, women)
    results = [
        sm.solve(prefs, algorithm=a, engine="parallel" if p else "sequential") for a, p in ENGINES
    ]
    for mate, props in results[1:]:
        assert np.array_equal(mate, results[0][0]) and props == results[0][1]
    assert nx_gpumatch.is_stable(results[0][0], prefs)
    assert (results[0][0] >= 0).mean() > 0.95  # the seed reports > 98% matched


def test_generators_shape_and_determinism():
    n = 5000
    from nx_gpumatch import cpu

    with cpu.threads(1):
        a = nx_gpumatch.stable_marriage_instance("easy", n, seed=7)
    with cpu.threads(2):
        b = nx_gpumatch.stable_marriage_instance("easy", n, seed=7)
    for x, y in zip(a[0] + a[1], b[0] + b[1]):
        assert np.array_equal(x, y)
    (mp, mc), (wp, wc) = a
    lengths = np.diff(mp)
    assert lengths.min() >= 1 and lengths.max() <= int(2 * np.log(n))
    assert abs(lengths.mean() - 1.5 * np.log(n)) < 1.0
    # Women rank exactly the men who rank them, each once.
    pairs_m = set(zip(np.repeat(np.arange(n), lengths).tolist(), mc.tolist()))
    pairs_w = set(zip(wc.tolist(), np.repeat(np.arange(n), np.diff(wp)).tolist()))
    assert pairs_m == pairs_w and len(pairs_m) == mc.size == wc.size
    assert csm.first_bad_entry(mp, mc, n, csm.row_bounds(mp, 2)) < 0
    assert csm.first_bad_entry(wp, wc, n, csm.row_bounds(wp, 2)) < 0
    c = nx_gpumatch.stable_marriage_instance("easy", n, seed=8)
    assert not np.array_equal(c[0][1][:100], a[0][1][:100])
    (hp, hc), (hwp, hwc) = nx_gpumatch.stable_marriage_instance("hard", 50, seed=1)
    rows = hc.reshape(50, 50)
    assert (rows == rows[0]).all() and sorted(rows[0].tolist()) == list(range(50))
    wrows = hwc.reshape(50, 50)
    assert (wrows == wrows[0]).all() and sorted(wrows[0].tolist()) == list(range(50))
    with pytest.raises(ValueError, match="kind"):
        nx_gpumatch.stable_marriage_instance("medium", 5)
    with pytest.raises(ValueError, match="n must be"):
        nx_gpumatch.stable_marriage_instance("easy", -1)


@pytest.mark.parametrize("method", ["search", "transpose"])
def test_mutual_lists_both_methods(nthreads, method):
    rng = np.random.default_rng(5)
    nm, nw = 300, 200
    men = {m: rng.permutation(nw)[: rng.integers(0, nw)].tolist() for m in range(nm)}
    women = {w: rng.permutation(nm)[: rng.integers(0, nm)].tolist() for w in range(nw)}
    (mp, mc), (wp, wc) = to_arrays(men, women)
    ptr, packed = csm.mutual_lists(mp, mc, wp, wc, nm, nw, nthreads, block=997, method=method)
    for m in range(nm):
        want = [((women[w].index(m)) << 32) | w for w in men[m] if m in women[w]]
        assert packed[ptr[m] : ptr[m + 1]].tolist() == want
    expect = reference_gale_shapley(men, women)
    mate = csm.mates_from_words(csm.mcvitie_wilson_parallel(ptr, packed, nw, nthreads)[0], nm)
    assert {m: int(w) for m, w in enumerate(mate) if w >= 0} == expect


def _matching_package(men, women):
    from matching.games import StableMarriage

    game = StableMarriage.create_from_dictionaries(men, women)
    return {s.name: r.name for s, r in game.solve(optimal="suitor").items()}


@pytest.mark.parametrize("n,seed", [(1, 0), (2, 1), (8, 2), (30, 3), (60, 4)])
def test_equals_matching_package(n, seed):
    rnd = random.Random(seed)
    men = {f"m{i}": rnd.sample([f"w{j}" for j in range(n)], n) for i in range(n)}
    women = {f"w{i}": rnd.sample([f"m{j}" for j in range(n)], n) for i in range(n)}
    expect = _matching_package(men, women)
    for algorithm, parallel in ENGINES:
        assert (
            nx_gpumatch.stable_marriage(men, women, algorithm=algorithm, parallel=parallel)
            == expect
        )


def test_equals_matching_package_n150():
    # The package recurses once per player when copying the game; it needs a
    # raised recursion limit and a large thread stack from about n = 100 on.
    n = 150
    rnd = random.Random(9)
    men = {f"m{i}": rnd.sample([f"w{j}" for j in range(n)], n) for i in range(n)}
    women = {f"w{i}": rnd.sample([f"m{j}" for j in range(n)], n) for i in range(n)}
    out = {}

    def target():
        out["r"] = _matching_package(men, women)

    old_limit = sys.getrecursionlimit()
    old_stack = threading.stack_size(256 * 1024 * 1024)
    sys.setrecursionlimit(100_000)
    try:
        t = threading.Thread(target=target)
        t.start()
        t.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    assert nx_gpumatch.stable_marriage(men, women) == out["r"]


# ------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "men,women,match",
    [
        ({"a": ["x", "x"]}, {"x": ["a"]}, "ranks 'x' twice"),
        ({"a": ["x"]}, {"x": ["a", "a"]}, "ranks 'a' twice"),
        ({"a": ["x", "q"]}, {"x": ["a"]}, "ranks 'q', who is not among the women"),
        ({"a": ["x"]}, {"x": ["b"]}, "ranks 'b', who is not among the men"),
        ({"a": ["x"]}, {"x": [["a"]]}, "not among the men"),
        ({"a": {"x"}}, {"x": ["a"]}, "must be a list"),
        ({"a": "x"}, {"x": ["a"]}, "must be a list"),
        ({"a": ["x"]}, {"x": {"a": 1}}, "must be a list"),
        ({"a": ["x"]}, {"x": None}, "must be a list"),
        ({"a": iter(["x"])}, {"x": ["a"]}, "must be a list"),
        ({"a": ["x"]}, (np.array([0, 1]), np.array([0])), "both be dicts"),
        ([["x"]], {"x": ["a"]}, "both be dicts"),
    ],
)
def test_bad_dict_input(men, women, match):
    with pytest.raises(ValueError, match=match):
        nx_gpumatch.stable_marriage(men, women)


def _csr(ptr, ch):
    return (np.asarray(ptr), np.asarray(ch))


@pytest.mark.parametrize(
    "men,women,match",
    [
        (_csr([0, 2], [0, 0]), _csr([0, 1], [0]), "ranks 0 twice"),
        (_csr([0, 1], [0]), _csr([0, 2], [0, 0]), "ranks 0 twice"),
        (_csr([0, 1], [1]), _csr([0, 1], [0]), "numbered 0..0"),
        (_csr([0, 1], [-1]), _csr([0, 1], [0]), "numbered 0..0"),
        (_csr([0, 1], [0]), _csr([0, 1], [3]), "ranks man 3"),
        (_csr([1, 1], [0]), _csr([0, 1], [0]), "start at 0"),
        (_csr([0, 2, 1], [0, 0]), _csr([0, 1], [0]), "never decrease"),
        (_csr([0, 3], [0]), _csr([0, 1], [0]), "end at len"),
        (_csr([0, 1], [0.0]), _csr([0, 1], [0]), "integer"),
        (_csr([], []), _csr([0, 1], [0]), "non-empty"),
        ((np.array([0, 1]),), _csr([0, 1], [0]), "tuple"),
        (np.array([0, 1]), _csr([0, 1], [0]), "tuple"),
        (_csr([0, 1], [2**40]), _csr([0, 1], [0]), "int32"),
    ],
)
def test_bad_array_input(men, women, match):
    with pytest.raises(ValueError, match=match):
        nx_gpumatch.stable_marriage(men, women)


def test_bad_options():
    men, women = {"a": ["x"]}, {"x": ["a"]}
    with pytest.raises(ValueError, match="algorithm"):
        nx_gpumatch.stable_marriage(men, women, algorithm="irving")
    with pytest.raises(ValueError, match="McVitie-Wilson only"):
        nx_gpumatch.stable_marriage(men, women, algorithm="gale_shapley", device="gpu")
    with pytest.raises(ValueError, match="device"):
        nx_gpumatch.stable_marriage(men, women, device="tpu")
    with pytest.raises(ValueError, match="engine"):
        sm.solve(sm.prepare_preferences(men, women), engine="quantum")


# --------------------------------------------------- networkx bridge
def sorted_greedy(G):
    """Greedy matching under the package's edge order, from scratch."""
    index = {v: i for i, v in enumerate(G)}
    edges = []
    for u, v, d in G.edges(data=True):
        w = d.get("weight", 1)
        if u != v and w > 0:
            a, b = sorted((index[u], index[v]))
            edges.append((-w, a, b, u, v))
    edges.sort(key=lambda e: e[:3])
    used, out = set(), set()
    for _, _, _, u, v in edges:
        if u not in used and v not in used:
            used.update((u, v))
            out.add(frozenset((u, v)))
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 12),
    st.lists(
        st.tuples(
            st.integers(0, 11),
            st.integers(0, 11),
            st.sampled_from([-1.0, 0.0, 1.0, 2.0, 2.0, 3.5, 7.0]),
        ),
        max_size=40,
    ),
)
def test_greedy_matching_via_smi(n, edges):
    G = nx.Graph()
    G.add_nodes_from(range(n))
    for u, v, w in edges:
        if u < n and v < n:
            G.add_edge(u, v, weight=w)
    expect = sorted_greedy(G)
    got = nx_gpumatch.greedy_matching_smi(G)
    assert {frozenset(e) for e in got} == expect
    foundation = nx_gpumatch.max_weight_matching(G, algorithm="greedy")
    assert {frozenset(e) for e in foundation} == expect
    # Lemma 3.1: the stable matching pairs man i with woman j and man j with woman i.
    men, women = nx_gpumatch.smi_from_graph(G)
    mate = nx_gpumatch.stable_marriage(men, women)
    matched = np.flatnonzero(mate >= 0)
    assert np.array_equal(mate[mate[matched]], matched)


def test_greedy_matching_via_smi_larger(nthreads):
    from nx_gpumatch.generators import random_graph

    g = random_graph(3000, 20000, seed=2)
    got = nx_gpumatch.greedy_matching_smi(g)
    want = nx_gpumatch.max_weight_matching(g, algorithm="greedy")
    assert np.array_equal(got, want)
    G = g.to_networkx()
    G.add_edge(0, 1, weight=0.5)
    assert nx_gpumatch.greedy_matching_smi(
        G, algorithm="gale_shapley"
    ) == nx_gpumatch.max_weight_matching(G, algorithm="greedy")


# ------------------------------------------------------------------ CLI
@pytest.mark.parametrize(
    "argv",
    [
        ["--kind", "easy", "-n", "3000"],
        ["--kind", "hard", "-n", "300", "-a", "gale_shapley", "--sequential"],
    ],
)
def test_cli_subcommand(argv, capsys):
    import argparse

    from nx_gpumatch.cli.stable_marriage import add_command

    parser = argparse.ArgumentParser()
    add_command(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["stable-marriage", *argv, "--repeat", "1"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "proposals/s" in out and "stable       yes" in out
    if "hard" in argv:
        assert f"{300 * 301 // 2:,} =" in out
    args = parser.parse_args(
        ["stable-marriage", "-n", "10", "-a", "gale_shapley", "--device", "gpu"]
    )
    assert args.func(args) == 2


# ------------------------------------------------------------ 2-D arrays
def test_dense_array_input_equals_csr_and_dicts():
    rng = np.random.default_rng(3)
    n = 40
    men = np.array([rng.permutation(n) for _ in range(n)])
    women = np.array([rng.permutation(n) for _ in range(n)], dtype=np.int16)
    csr_men = (np.arange(n + 1) * n, men.reshape(-1))
    csr_women = (np.arange(n + 1) * n, women.reshape(-1))
    got = nx_gpumatch.stable_marriage(men, women)
    assert isinstance(got, np.ndarray) and got.dtype == np.int64
    assert np.array_equal(got, nx_gpumatch.stable_marriage(csr_men, csr_women))
    assert np.array_equal(got, nx_gpumatch.stable_marriage(men, csr_women))  # forms mix
    assert np.array_equal(got, nx_gpumatch.stable_marriage(men.tolist(), women.tolist()))
    dmen = {i: men[i].tolist() for i in range(n)}
    dwomen = {i: women[i].tolist() for i in range(n)}
    as_dict = nx_gpumatch.stable_marriage(dmen, dwomen)
    assert as_dict == {m: int(w) for m, w in enumerate(got.tolist())}
    assert nx_gpumatch.is_stable(got, men, women)
    assert nx_gpumatch.blocking_pair(got, men, women) is None


def test_dense_array_shapes_may_differ():
    # 3 men ranking 2 women each, 2 women ranking 3 men each.
    men = np.array([[0, 1], [1, 0], [0, 1]])
    women = np.array([[2, 0, 1], [1, 2, 0]])
    mate = nx_gpumatch.stable_marriage(men, women)
    assert nx_gpumatch.is_stable(mate, men, women)
    assert sorted(mate.tolist()) == [-1, 0, 1]


@pytest.mark.parametrize(
    "men,match",
    [
        (np.array([[0, 0], [1, 0]]), "ranks 0 twice"),
        (np.array([[0, 2], [1, 0]]), "numbered 0..1"),
        (np.array([[0.0, 1.0], [1.0, 0.0]]), "integer ids"),
        (np.zeros((2, 2, 2), np.int64), "must be 2-D"),
        (np.array([[0, 2**40], [1, 0]]), "int32"),
    ],
)
def test_bad_dense_array_input(men, match):
    women = np.array([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match=match):
        nx_gpumatch.stable_marriage(men, women)


# ------------------------------------------------- integer names (fast path)
def test_integer_names_take_the_table_path_with_dict_semantics():
    rng = np.random.default_rng(5)
    n = 30
    men = {100 + i: [200 + int(j) for j in rng.permutation(n)] for i in range(n)}
    women = {200 + i: rng.permutation(n) + 100 for i in range(n)}  # numpy rows
    got = nx_gpumatch.stable_marriage(men, women)
    strs = nx_gpumatch.stable_marriage(
        {str(m): [str(w) for w in ws] for m, ws in men.items()},
        {str(w): [str(m) for m in ms.tolist()] for w, ms in women.items()},
    )
    assert got == {int(m): int(w) for m, w in strs.items()}
    assert all(type(m) is int and type(w) is int for m, w in got.items())
    # a float equal to a name is that name, as in a dict lookup
    men_f = dict(men)
    men_f[100] = [float(x) for x in men[100]]
    assert nx_gpumatch.stable_marriage(men_f, women) == got


@pytest.mark.parametrize(
    "bad,match",
    [(999, "ranks 999, who is not among the women"), ("x", "ranks 'x'"), (-5, "ranks -5")],
)
def test_integer_names_unknown_entry(bad, match):
    men = {0: [10, 11], 1: [11, bad]}
    women = {10: [0, 1], 11: [1, 0]}
    with pytest.raises(ValueError, match=match):
        nx_gpumatch.stable_marriage(men, women)


def test_integer_names_repeat():
    with pytest.raises(ValueError, match="ranks 10 twice"):
        nx_gpumatch.stable_marriage({0: [10, 10]}, {10: [0]})


def test_inputs_refused_with_the_package_errors():
    men, women = {"a": ["x"]}, {"x": ["a"]}
    for algorithm in ("gale_shapley", "mcvitie_wilson"):
        with pytest.raises(ValueError, match="device must be one of"):
            nx_gpumatch.stable_marriage(men, women, algorithm=algorithm, device="tpu")
    with pytest.raises(ValueError, match=r"man 0 ranks \(2,\), who is not among the women"):
        nx_gpumatch.stable_marriage({0: [1, (2,)]}, {1: [0], 2: [0]})  # ragged for numpy
    with pytest.raises(ValueError, match="who is not among the women"):
        nx_gpumatch.is_stable({"a": ["x"]}, men, women)  # an unhashable partner
    for seed in (None, 1.7, True):
        with pytest.raises(ValueError, match="seed must be an integer"):
            nx_gpumatch.stable_marriage_instance("easy", 10, seed=seed)
