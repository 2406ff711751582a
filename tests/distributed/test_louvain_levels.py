"""The distributed Louvain's level kernels against plain numpy, in one process:
the rows sent for aggregation and their merge at the owners, the arcs into
ghosts, and the owned rows of level 0."""

import numpy as np
import pytest

from nx_gpumatch.distributed import _levels as LV
from nx_gpumatch.distributed import louvain as L


def _level(seed, nl=80, m=600, ghosts=20):
    """A rank's level: nl local vertices, the last ``ghosts`` of them ghosts
    (empty rows), random arcs from the owned ones, some self-loops."""
    rng = np.random.default_rng(seed)
    owned = np.arange(nl) < nl - ghosts
    tail = np.sort(rng.integers(0, nl - ghosts, m))
    head = rng.integers(0, nl, m)
    indptr = np.zeros(nl + 1, np.int64)
    np.cumsum(np.bincount(tail, minlength=nl), out=indptr[1:])
    w = rng.integers(1, 5, m).astype(np.float64) + 0.25
    loop = np.where(owned & (rng.random(nl) < 0.3), rng.random(nl), 0.0)
    return indptr, head.astype(np.int32), w, loop, owned


def _pairs(ptr, heads, ws, loops):
    """{(row, head): weight} and the self-loops of a merged CSR."""
    d = {}
    for x in range(ptr.shape[0] - 1):
        for p in range(ptr[x], ptr[x + 1]):
            d[x, int(heads[p])] = d.get((x, int(heads[p])), 0.0) + ws[p]
    return d, np.asarray(loops)


@pytest.mark.parametrize("nranks", [1, 2, 3, 5])
@pytest.mark.parametrize("seed", [0, 1])
def test_pack_and_merge_equal_one_merge(nranks, seed):
    """Each rank's rows merged per community pair, sent to the owners of
    their tails' communities and merged there, equal one merge of all the
    arcs (in the same order, so the same bits)."""
    K = 13
    levels = [_level(seed * 10 + r) for r in range(nranks)]
    rng = np.random.default_rng(seed)
    cids = [rng.integers(0, K, lv[0].shape[0] - 1) for lv in levels]
    block = -(-K // nranks)
    sent = []
    for (indptr, idx, w, loop, owned), cid in zip(levels, cids):
        own = np.flatnonzero(owned)
        rptr, heads, aw, rloop = LV._community_rows(indptr, idx, w, loop, own, cid, K)
        rows, counts = LV._pack_coarse(rptr, heads, aw, rloop, block, nranks)
        assert counts.sum() == rows.shape[0]
        assert (np.repeat(np.arange(nranks), counts) == (rows[:, 0] >> 32) // block).all()
        sent.append(np.split(rows, np.cumsum(counts)[:-1]))
    want = {}
    want_loops = np.zeros(K)
    for (indptr, idx, w, loop, owned), cid in zip(levels, cids):
        for v in np.flatnonzero(owned):
            want_loops[cid[v]] += loop[v]
            for p in range(indptr[v], indptr[v + 1]):
                x, y = int(cid[v]), int(cid[idx[p]])
                if x == y:
                    want_loops[x] += 0.5 * w[p]
                else:
                    want[x, y] = want.get((x, y), 0.0) + w[p]
    for r in range(nranks):
        lo, hi = min(K, r * block), min(K, (r + 1) * block)
        got = np.concatenate([sent[s][r] for s in range(nranks)]).reshape(-1, 2)
        ptr, heads, ws, loops = LV._merge_coarse(got, lo, hi, K)
        d, loops = _pairs(ptr, heads, ws, loops)
        part = {(x - lo, y): v for (x, y), v in want.items() if lo <= x < hi}
        assert d.keys() == part.keys()
        assert np.allclose([d[k] for k in part], [part[k] for k in part])
        assert np.allclose(loops, want_loops[lo:hi])
        # a head once per row
        for x in range(hi - lo):
            row = heads[ptr[x] : ptr[x + 1]]
            assert np.unique(row).shape[0] == row.shape[0]


def test_merge_of_one_rank_is_bit_identical():
    """With one rank the owner's merge repeats the rank's own: same rows,
    same order, same bits."""
    indptr, idx, w, loop, owned = _level(7, ghosts=0)
    cid = np.random.default_rng(7).integers(0, 9, indptr.shape[0] - 1)
    one = LV._community_rows(indptr, idx, w, loop, np.flatnonzero(owned), cid, 9)
    rows, _ = LV._pack_coarse(*one, 9, 1)
    two = LV._merge_coarse(rows, 0, 9, 9)
    for a, b in zip(one, two):
        assert np.array_equal(a, b)


def test_ghost_arcs_and_owned_rows():
    indptr, idx, w, loop, owned = _level(3)
    ptr, arc, tail = LV._ghost_arcs(indptr, idx, owned)
    tails = np.repeat(np.arange(owned.shape[0]), np.diff(indptr))
    into = np.flatnonzero(~owned[idx])
    for g in range(owned.shape[0]):
        mine = into[idx[into] == g]  # ascending arc positions
        assert arc[ptr[g] : ptr[g + 1]].tolist() == mine.tolist()
        assert tail[ptr[g] : ptr[g + 1]].tolist() == tails[mine].tolist()
    assert tail.dtype == np.int32
    # owned rows: every arc of an owned row kept, the others dropped
    keep = np.where(np.arange(owned.shape[0]) % 3 == 0, False, owned)
    optr, oidx, ow = LV._owned_rows(indptr, idx, w, keep)
    sel = keep[tails]
    assert np.array_equal(np.diff(optr), np.where(keep, np.diff(indptr), 0))
    assert np.array_equal(oidx, idx[sel]) and np.array_equal(ow, w[sel])
    assert oidx.dtype == np.int32


def test_a_round_tracks_the_inner_weight_from_its_moves():
    """A round's sweep returns the change of the rank's inner weight (arcs of
    owned rows inside a community; an arc to a ghost lies in one owned row)
    with the ghosts where they were, and ``_ghost_change`` adds the ghosts'
    moves: together, the inner weight recomputed from the arcs. The ghosts'
    owned neighbours are made due."""
    from nx_gpumatch.cpu.louvain.state import Level, MoveState, Scratch

    rng = np.random.default_rng(11)
    nl, n_own = 80, 60  # view ids: owned first, then the ghosts (empty rows)
    a, b = rng.integers(0, nl, 700), rng.integers(0, n_own, 700)
    pairs = {(min(x, y), max(x, y)) for x, y in zip(a.tolist(), b.tolist()) if x != y}
    pairs = sorted(pairs)
    wt = rng.integers(1, 5, len(pairs)) + 0.5
    arcs = [(x, y, v) for (x, y), v in zip(pairs, wt) for x, y in ((x, y), (y, x)) if x < n_own]
    arcs.sort(key=lambda t: t[0])
    tail = np.array([t[0] for t in arcs])
    indices = np.array([t[1] for t in arcs], np.int32)
    w = np.array([t[2] for t in arcs], np.float64)
    indptr = np.zeros(nl + 1, np.int64)
    np.cumsum(np.bincount(tail, minlength=nl), out=indptr[1:])
    owned = np.arange(nl) < n_own
    k = np.bincount(tail, w, minlength=nl) + np.where(owned, 0.0, 7.0)
    comm0 = rng.integers(0, 12, nl).astype(np.int32)
    batch = np.where(owned, 0, L.GHOST).astype(np.int32)
    none = np.zeros(0, np.int32)
    lv = Level(indptr, indices, w, np.zeros(nl), k, none, np.arange(nl, dtype=np.int32), none, none)
    st = MoveState(
        comm0.copy(),
        np.bincount(comm0, k, minlength=nl),
        np.bincount(comm0, minlength=nl).astype(np.int32),
        batch,
        np.ones(nl, np.uint8),
        np.zeros(nl, np.uint8),
        np.zeros(nl, np.int64),
        np.zeros((1, nl), np.int64),
        comm0.copy(),
        np.zeros(nl),
    )
    deg = int(np.diff(indptr).max())
    scratch = Scratch(
        np.full((1, nl), -1, np.int32),
        np.empty((1, deg), np.int32),
        np.empty((1, deg), np.int32),
        np.zeros((1, deg)),
    )

    def inner(c):
        return float(np.sum(w * (c[tail] == c[indices])))

    verts = np.arange(n_own, dtype=np.int32)
    moved, d = L._sweep(verts, lv, st, scratch, 1.0 / k.sum(), 0.0, n_own)
    assert moved == np.count_nonzero(st.comm != comm0) > 0
    assert np.array_equal(st.comm[n_own:], comm0[n_own:])
    assert d == pytest.approx(inner(st.comm) - inner(comm0))
    new = st.comm.copy()
    moving = np.arange(n_own, nl)[rng.random(nl - n_own) < 0.5]
    new[moving] = rng.integers(0, 12, moving.shape[0])
    moving = moving[new[moving] != st.comm[moving]].astype(np.int32)
    due = np.zeros(nl, np.uint8)
    ga = LV.GhostArcs(*LV._ghost_arcs(indptr, indices, owned))
    d2 = L._ghost_change(w, ga, st.comm, new, moving, due, np.arange(nl, dtype=np.int32))
    assert d2 == pytest.approx(inner(new) - inner(st.comm))
    assert set(np.flatnonzero(due).tolist()) == set(tail[np.isin(indices, moving)].tolist())


def test_one_rank_runs_the_shared_engine_the_same_for_any_threads():
    """One rank moves, refines and aggregates with the shared-memory kernels,
    threaded on large levels and relabelled in the sweep order: the labels
    do not depend on the thread count, and the relabelling changes no move."""
    import numba

    from nx_gpumatch import distributed as D

    part = D.rmat_edges(14, 8, seed=5)  # 260k arcs: batched, threaded, relabelled
    calls = (
        lambda: D.louvain_communities(part, seed=2),
        lambda: D.leiden_communities(part, seed=2),
        lambda: D.leiden_communities(part, seed=2, metric="cpm", resolution=0.05),
    )
    before = numba.get_num_threads()
    got = {}
    try:
        for t in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(t)
            got[t] = [call() for call in calls]
    finally:
        numba.set_num_threads(before)
    for runs in zip(*got.values()):
        assert all(np.array_equal(r.labels, runs[0].labels) for r in runs)
    assert all(r.connected() for r in got[1][1:])
    # the same first level without the relabelling
    first = D.louvain_communities(part, seed=2, max_level=1).labels
    saved = L.SEQUENTIAL_ARCS
    L.SEQUENTIAL_ARCS = 1 << 62
    try:
        plain = D.louvain_communities(part, seed=2, max_level=1).labels
    finally:
        L.SEQUENTIAL_ARCS = saved
    assert np.array_equal(first, plain)


def test_sweep_view_is_the_level_relabelled_in_sweep_order():
    """The several-rank sweeps run on the level relabelled so that the i-th
    vertex swept becomes vertex i (then the owned vertices left out, then the
    ghosts): each row is the old one renamed, arcs in their order."""
    rng = np.random.default_rng(7)
    nl = 60
    owned = rng.random(nl) < 0.7
    owned_ids = np.flatnonzero(owned)
    tail = np.sort(rng.choice(owned_ids[:-3], 400))  # the last three owned: no arcs
    head = rng.integers(0, nl, 400).astype(np.int32)
    indptr = np.zeros(nl + 1, np.int64)
    np.cumsum(np.bincount(tail, minlength=nl), out=indptr[1:])
    w = rng.random(400)
    loop = np.where(owned, rng.random(nl), 0.0)
    lvl = LV._Level(
        2 * nl, 2 * np.arange(nl), owned_ids, np.where(owned, 0, 1), indptr, head, w, loop
    )
    verts = rng.permutation(owned_ids[:-3]).astype(np.int32)
    v = LV.sweep_view(lvl, verts)
    assert v.n_own == owned_ids.shape[0]
    assert v.perm[: verts.shape[0]].tolist() == verts.tolist()
    assert v.perm[verts.shape[0] : v.n_own].tolist() == owned_ids[-3:].tolist()
    assert v.perm[v.n_own :].tolist() == np.flatnonzero(~owned).tolist()
    assert np.array_equal(v.rank[v.perm], np.arange(nl))
    for i, x in enumerate(v.perm):
        old = slice(indptr[x], indptr[x + 1])
        new = slice(v.indptr[i], v.indptr[i + 1])
        assert v.indices[new].tolist() == v.rank[head[old]].tolist()
        assert v.w[new].tolist() == w[old].tolist()
    assert np.array_equal(v.loop, loop[v.perm]) and np.array_equal(v.k, lvl.k[v.perm])
