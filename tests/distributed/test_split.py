"""The linear-time steps of the redistribution against plain numpy."""

import numpy as np
import pytest

from nx_gpumatch.distributed import _split


@pytest.mark.parametrize("keep", ["last", "max"])
@pytest.mark.parametrize("n, m", [(1, 50), (7, 600), (300, 4000), (2000, 3000)])
def test_unique_pairs(keep, n, m):
    rng = np.random.default_rng(n + m)
    a = rng.integers(0, n, m)
    b = rng.integers(0, 5 if n < 10 else n, m)  # few columns: rows past 64 entries
    w = rng.integers(0, 4, m).astype(np.float64) + rng.random(m).round(1)
    got = _split.unique_pairs(n, a, int(b.max()) + 1, b, w, keep)
    pairs = {}
    for x, y, v in zip(a.tolist(), b.tolist(), w.tolist()):
        pairs[x, y] = v if keep == "last" else max(v, pairs.get((x, y), -np.inf))
    want = sorted(pairs.items())
    assert [(x, y) for (x, y), _ in want] == list(zip(got[0].tolist(), got[1].tolist()))
    assert [v for _, v in want] == got[2].tolist()
    assert got[0].dtype == got[1].dtype == np.int32


def test_grouped_ids():
    rng = np.random.default_rng(1)
    ranks = rng.choice([0, 2, 5], 500)  # ranks 1, 3, 4 without ids
    ids = rng.integers(0, 40, 500)
    got = _split.grouped_ids(6, ranks, 40, ids)
    assert sorted(got) == [0, 2, 5]
    for r, v in got.items():
        assert v.tolist() == sorted(set(ids[ranks == r].tolist()))
    assert _split.grouped_ids(3, np.zeros(0, int), 10, np.zeros(0, int)) == {}


@pytest.mark.parametrize("n", [50, 1 << 30])  # a dense map, and a search of the ghosts
def test_local_ids(n):
    rng = np.random.default_rng(2)
    owned = np.arange(n // 2, n // 2 + 10)
    lo = rng.integers(0, n, 200)
    hi = rng.integers(0, n, 200)
    gids, la, lb, _ = _split.local_ids(n, owned, lo, hi)
    assert gids.tolist() == sorted(set(owned.tolist()) | set(lo.tolist()) | set(hi.tolist()))
    assert np.array_equal(gids[la], lo) and np.array_equal(gids[lb], hi)
