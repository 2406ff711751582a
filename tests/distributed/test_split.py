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


def test_ghost_groups():
    from nx_gpumatch.graph import Graph

    rng = np.random.default_rng(1)
    nl = 60
    owner = rng.choice([0, 2, 5], nl)  # ranks 1, 3, 4 own nothing here
    owned = owner == 2
    a, b = rng.integers(0, nl, 400), rng.integers(0, nl, 400)
    keep = (a != b) & (owned[a] | owned[b])  # a rank holds edges with an owned end
    pairs = sorted({(min(x, y), max(x, y)) for x, y in zip(a[keep].tolist(), b[keep].tolist())})
    src, dst = (np.array(c, np.int32) for c in zip(*pairs))
    g = Graph(nl, src, dst, np.ones(len(pairs)))
    ghosts_of, boundary, cut = _split.ghost_groups(6, g.indptr, g.indices, owned, owner)
    want_g, want_b, want_cut = {}, {}, 0
    for v in range(nl):
        nbrs = g.indices[g.indptr[v] : g.indptr[v + 1]]
        if not owned[v]:
            want_g.setdefault(int(owner[v]), []).append(v)
            continue
        ghost_nbrs = [x for x in nbrs.tolist() if not owned[x]]
        want_cut += len(ghost_nbrs)
        for r in sorted({int(owner[x]) for x in ghost_nbrs}):
            want_b.setdefault(r, []).append(v)
    assert {r: v.tolist() for r, v in ghosts_of.items()} == want_g
    assert {r: v.tolist() for r, v in boundary.items()} == want_b
    assert sorted(ghosts_of) == sorted(boundary) and cut == want_cut > 0


@pytest.mark.parametrize("block", [7, 0])  # owners by blocks, and from an array
def test_rows_by_owner(block):
    rng = np.random.default_rng(3)
    n, P = 40, 6
    own = rng.integers(0, P, n)
    src, dst = rng.integers(0, n, 300), rng.integers(0, n, 300)
    w = rng.random(300)

    def owner(v):
        return v // block if block else own[v]

    rows, counts = _split.rows_by_owner(src, dst, w, P, block, own)
    want = {r: [] for r in range(P)}
    for x, y, v in zip(src.tolist(), dst.tolist(), w.tolist()):
        lo, hi = min(x, y), max(x, y)
        if lo != hi:
            for r in sorted({owner(lo), owner(hi)}):
                want[r].append(((lo << 32) | hi, v))
    assert counts.tolist() == [len(want[r]) for r in range(P)]
    flat = [row for r in range(P) for row in want[r]]
    assert rows[:, 0].tolist() == [k for k, _ in flat]
    assert rows[:, 1].view(np.float64).tolist() == [v for _, v in flat]


@pytest.mark.parametrize("n", [50, 1 << 30])  # a dense map, and a search of the ghosts
def test_local_ids(n):
    rng = np.random.default_rng(2)
    owned = np.arange(n // 2, n // 2 + 10)
    lo = rng.integers(0, n, 200)
    hi = rng.integers(0, n, 200)
    gids, la, lb, _ = _split.local_ids(n, owned, lo, hi)
    assert gids.tolist() == sorted(set(owned.tolist()) | set(lo.tolist()) | set(hi.tolist()))
    assert np.array_equal(gids[la], lo) and np.array_equal(gids[lb], hi)


def test_pairs():
    rng = np.random.default_rng(4)
    src, dst = rng.integers(0, 30, 200), rng.integers(0, 30, 200)
    w = rng.random(200)
    keep = src != dst
    lo, hi, got_w = _split.pairs(src, dst, w)
    assert lo.dtype == hi.dtype == np.int32
    assert lo.tolist() == np.minimum(src, dst)[keep].tolist()
    assert hi.tolist() == np.maximum(src, dst)[keep].tolist()
    assert got_w.tolist() == w[keep].tolist()
    rows, _ = _split.rows_by_owner(src, dst, w, 1, 30, np.zeros(0, np.int64))
    again = _split.unpack_rows(rows)
    assert all(np.array_equal(x, y) for x, y in zip(again, (lo, hi, got_w)))
