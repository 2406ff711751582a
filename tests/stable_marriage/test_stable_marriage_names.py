"""Dict input with string names: the one-pass byte encoder must give exactly
what one dict lookup per entry gives, and leave every error to the general path."""

import numpy as np
import pytest

import nx_gpumatch
from nx_gpumatch.algorithms import stable_marriage as sm
from nx_gpumatch.cpu import stable_marriage_names as cnames
from tests.support.inputs import to_arrays


def _random_instance(rng, men_names, women_names, complete=False):
    men = {}
    for m in men_names:
        k = len(women_names) if complete else int(rng.integers(0, len(women_names) + 1))
        men[m] = [women_names[j] for j in rng.permutation(len(women_names))[:k]]
    women = {}
    for w in women_names:
        k = len(men_names) if complete else int(rng.integers(0, len(men_names) + 1))
        women[w] = [men_names[j] for j in rng.permutation(len(men_names))[:k]]
    return men, women


# Prefixes of each other, empty, non-ASCII (2-, 3- and 4-byte UTF-8), spaces.
ODD = ["", "a", "ab", "abc", "b", "é", "日本", "😀", "a b", "w1", "w10", "w100"]


@pytest.mark.parametrize("seed", range(4))
def test_string_names_equal_dict_lookups(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    calls = []
    real = cnames.encode_names
    monkeypatch.setattr(cnames, "encode_names", lambda *a: calls.append(1) or real(*a))
    men_names = ODD + [f"m{i}" for i in range(20)]
    women_names = [f"w{i}" for i in range(25)] + ODD[:6]
    men, women = _random_instance(rng, men_names, women_names)
    got = nx_gpumatch.stable_marriage(men, women)
    assert len(calls) == 2  # both sides took the byte encoder
    mate = nx_gpumatch.stable_marriage(*to_arrays(men, women))
    assert got == {men_names[m]: women_names[w] for m, w in enumerate(mate.tolist()) if w >= 0}
    assert nx_gpumatch.is_stable(got, men, women)


def test_string_names_tuples_and_numpy_rows():
    rng = np.random.default_rng(7)
    names_m = [f"m{i}" for i in range(15)]
    names_w = [f"w{i}" for i in range(15)]
    men, women = _random_instance(rng, names_m, names_w, complete=True)
    ref = nx_gpumatch.stable_marriage(men, women)
    men_t = {m: tuple(v) for m, v in men.items()}
    women_np = {w: np.array(v) for w, v in women.items()}  # np.str_ entries
    assert nx_gpumatch.stable_marriage(men_t, women_np) == ref


def test_encoder_counts_and_misses():
    keys = sm._utf8(["x", "xy", "", "z"])
    ids, status = cnames.encode_names(sm._utf8(["xy", "", "z", "x"]), keys, 4, 4, 0)
    assert status == 0 and ids.tolist() == [1, 2, 3, 0]
    ids, status = cnames.encode_names(sm._utf8(["xy", "q", "x"]), keys, 4, 3, 0)
    assert status == 1 and ids.tolist() == [1, -1, 0]
    # a NUL inside a name adds a name: the count no longer matches
    assert cnames.encode_names(sm._utf8(["x\0y"]), keys, 4, 1, 0)[1] == 2
    assert cnames.encode_names(sm._utf8(["x"]), sm._utf8(["x\0"]), 1, 1, 0)[1] == 2


@pytest.mark.parametrize(
    "men,women,match",
    [
        ({"a": ["x", "nobody"]}, {"x": ["a"]}, "'a' ranks 'nobody', who is not among the women"),
        ({"a": ["x"]}, {"x": ["a", "b"]}, "'x' ranks 'b', who is not among the men"),
        ({"a": ["x", "y", "x"]}, {"x": ["a"], "y": ["a"]}, "ranks 'x' twice"),
        ({"a": ["x", 3]}, {"x": ["a"]}, "ranks 3, who is not among the women"),
        ({"a": ["x\0"]}, {"x": ["a"]}, "ranks 'x\\\\x00', who is not among"),
        ({"a": ["\ud800"]}, {"x": ["a"]}, "who is not among the women"),
    ],
)
def test_string_names_errors(men, women, match):
    with pytest.raises(ValueError, match=match):
        nx_gpumatch.stable_marriage(men, women)


def test_names_with_nul_use_the_general_path():
    men = {"a\0": ["x\0", "y"], "b": ["y", "x\0"]}
    women = {"x\0": ["b", "a\0"], "y": ["a\0", "b"]}
    assert nx_gpumatch.stable_marriage(men, women) == {"a\0": "x\0", "b": "y"}


def test_mixed_key_types_use_the_general_path():
    men = {"a": [1, "y"], "b": ["y", 1]}
    women = {1: ["b", "a"], "y": ["a", "b"]}
    assert nx_gpumatch.stable_marriage(men, women) == {"a": 1, "b": "y"}


@pytest.mark.parametrize("parts", [1, 2, 3, 8])
def test_encoder_spans_agree(parts, nthreads):
    rng = np.random.default_rng(parts)
    names = ODD + [f"k{i}" for i in range(40)]
    keys = sm._utf8(names)
    pick = rng.integers(0, len(names), 300)
    words = [names[i] for i in pick] + ["missing"]
    ids, status = cnames.encode_names(sm._utf8(words), keys, len(names), len(words), 0, parts)
    assert status == 1 and ids[:-1].tolist() == pick.tolist() and ids[-1] == -1
    ids, status = cnames.encode_names(sm._utf8(words[:3]), keys, len(names), 3, 0, parts)
    assert status == 0 and ids.tolist() == pick[:3].tolist()
    assert cnames.encode_names(sm._utf8(words[:3]), keys, len(names), 4, 0, parts)[1] == 2


@pytest.mark.parametrize("long_key", [False, True])
def test_short_and_long_names_agree(long_key):
    """Keys of at most 8 bytes are compared as one word; a longer key anywhere
    sends the side through the byte-by-byte path: both give the same ids."""
    keys = ["abcdefgh", "abcdefg", "日本語", "x", ""] + (
        ["abcdefghi", "日本語日本語"] if long_key else []
    )
    rng = np.random.default_rng(3)
    words = [keys[i] for i in rng.integers(0, len(keys), 200)]
    ids, status = cnames.encode_names(sm._utf8(words), sm._utf8(keys), len(keys), len(words), 0, 2)
    assert status == 0 and ids.tolist() == [keys.index(x) for x in words]
    # names longer than 8 bytes, or 8-byte prefixes of keys, are never short keys
    for miss in ["abcdefghi", "abcdefghij", "日本語日本語x"]:
        ids, status = cnames.encode_names(sm._utf8(["x", miss]), sm._utf8(keys), len(keys), 2, 0, 1)
        assert status == (0 if miss in keys else 1) and ids.tolist()[0] == keys.index("x")
        assert ids.tolist()[1] == (keys.index(miss) if miss in keys else -1)


def test_integer_names_beyond_int64_use_the_general_path():
    big = 2**70
    assert nx_gpumatch.stable_marriage({big: [0]}, {0: [big]}) == {big: 0}
    assert nx_gpumatch.is_stable({big: 0}, {big: [0]}, {0: [big]})
    # 2**63 is no man here: it must not wrap onto -2**63
    with pytest.raises(ValueError, match="not among the men"):
        nx_gpumatch.stable_marriage({-(2**63): [0]}, {0: [2**63]})
    men = {-(2**63): [2**63 - 1], -(2**63) + 1: [2**63 - 1]}
    women = {2**63 - 1: [-(2**63) + 1, -(2**63)]}
    assert nx_gpumatch.stable_marriage(men, women) == {-(2**63) + 1: 2**63 - 1}


@pytest.mark.parametrize("parts", [1, 2, 3])
def test_short_names_up_to_the_buffer_end(parts):
    """The short-name lookup reads 8 bytes at each name: names within 8 bytes
    of the buffer's (or a span's) end, and names of exactly 8 bytes or longer,
    are found as well as any other."""
    rng = np.random.default_rng(11)
    keys = sorted({"".join(rng.choice(list("abcé"), k)) for k in range(9) for _ in range(30)})
    keys = [k for k in keys if len(k.encode()) <= 8]
    words = [keys[i] for i in rng.integers(0, len(keys), 10_000)]
    words[100] = "abababab" + "a"  # 9 bytes: not a short key
    for tail in ([], ["a"], ["abcabcab"], ["", ""]):
        got = words + [k for k in tail if k in keys]
        ids, status = cnames.encode_names(
            sm._utf8(got), sm._utf8(keys), len(keys), len(got), 0, parts
        )
        want = [keys.index(x) if x in keys else -1 for x in got]
        assert status == (1 if -1 in want else 0) and ids.tolist() == want


@pytest.mark.parametrize("parts", [1, 2, 3])
def test_short_names_in_lanes_of_any_length(parts):
    """Each part's names are walked in cnames.LANES spans side by side until
    one ends, then lane by lane: every count of names, empty spans and lanes
    of unequal names included, gives the dict's ids."""
    keys = ["a", "bb", "ccc", "dddddddd", "", "é"]
    table = {k: i for i, k in enumerate(keys)}
    rng = np.random.default_rng(parts)
    for count in range(4 * cnames.LANES * parts):
        words = [keys[i] for i in rng.integers(0, len(keys), count)]
        if count % 5 == 4:
            words[count // 2] = "dddddddde"  # 9 bytes: in no lane a key
        ids, status = cnames.encode_names(
            sm._utf8(words), sm._utf8(keys), len(keys), count, 0, parts
        )
        want = [table.get(x, -1) for x in words]
        assert status == (1 if -1 in want else 0) and ids.tolist() == want
