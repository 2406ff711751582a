"""½-approximate weighted matching on the GPU: host side of kernels/matching.cu.

Written against ``array_module``/``get_module`` only, so the same code runs on
a CUDA device (``backend="cupy"``) and on the CPU in emulation
(``backend="emulate"``). Every algorithm returns the CPU engine's matching
exactly: Suitor, local max and greedy give the greedy matching under the edge
order; red-blue gives the CPU red-blue matching for the same seed.

Each algorithm takes ``stats``: a dict that, when given, receives the row
entries the kernels read (``work``), the rounds (``rounds``) and the times the
host waited for the device (``host_syncs``). The tests bound them.
"""

from __future__ import annotations

import math

import numpy as np

from nx_gpumatch._constants import P_BLUE
from nx_gpumatch.gpu._launch import (
    EMPTY_WORD,
    MAX_GRID,
    array_module,
    get_module,
    row_classes,
    to_host,
)
from nx_gpumatch.gpu.graph import device_graph

__all__ = ["run", "suitor", "local_max", "red_blue", "red_blue_classes", "DEFINES"]

BLOCK = 128  # threads per block (4 warps)
VERTICES_PER_WARP = 8  # the best setting in Naim et al. 2015
MAX_VPW = 32  # one candidate per lane
# Rounds of local max / red-blue enqueued per host synchronisation, at most:
# the batches grow 1, 2, 4, ... up to this, so a short run wastes few launches
# (the kernels of rounds after the last return at once, but still launch) and a
# long one synchronises once per ROUNDS_PER_SYNC rounds.
ROUNDS_PER_SYNC = 32
# Threads per row of red-blue's rb_choose, by the row's length (as
# nx_gpumatch.gpu.louvain.ROW_WIDTHS): up to 16 arcs one, up to WIDE_ROW a
# warp, longer ones a block, so a hub's row never runs on one thread.
WIDE_ROW = 512
RB_WIDTHS = ((16, 1), (WIDE_ROW, 32), (None, BLOCK))


def _batches(limit):
    """1, 2, 4, ..., limit, limit, ..."""
    k = 1
    while True:
        yield k
        k = min(2 * k, max(1, int(limit)))


# Compiled into kernels/matching.cu (see nx_gpumatch.gpu._source.problem_defines).
DEFINES = {"BLOCK_SIZE": BLOCK, "MAX_VPW": MAX_VPW, "WIDE_ROW": WIDE_ROW}
_BLUE, _RED = 0, 1


def _grid(count):
    return (max(1, min(MAX_GRID, math.ceil(count / BLOCK))),)


def _work_counter(xp, stats):
    return None if stats is None else xp.zeros(1, xp.uint64)


def _record(stats, work, **values):
    if stats is not None:
        stats.update(values)
        stats["work"] = int(work[0])


def run(
    graph,
    algorithm,
    *,
    seed=0,
    select="weighted",
    backend="cupy",
    vertices_per_warp=VERTICES_PER_WARP,
    stats=None,
):
    """Mate array (int64 NumPy, -1 = unmatched) of ``graph`` (a host
    :class:`nx_gpumatch.Graph` or a :class:`~nx_gpumatch.gpu.graph.DeviceGraph`).

    ``algorithm``: "suitor", "greedy" (served by Suitor, which returns the
    greedy matching), "local_max" or "red_blue" (``seed``, ``select`` =
    "weighted" or "random").
    """
    dg = device_graph(graph, backend)
    if algorithm in ("suitor", "greedy"):
        mate = suitor(dg, backend=backend, vertices_per_warp=vertices_per_warp, stats=stats)
    elif algorithm == "local_max":
        mate = local_max(dg, backend=backend, stats=stats)
    elif algorithm == "red_blue":
        if select not in ("weighted", "random"):
            raise ValueError(f"select must be 'weighted' or 'random', got {select!r}")
        mate, _rounds = red_blue(
            dg, seed, weighted=select == "weighted", backend=backend, stats=stats
        )
    else:
        raise ValueError(f"the GPU engine has no matching algorithm {algorithm!r}")
    return to_host(mate).astype(np.int64, copy=False)


def suitor(dg, *, backend="cupy", vertices_per_warp=VERTICES_PER_WARP, stats=None):
    """GPU-Suitor (NoSync) on rows sorted best-first: device mate array."""
    xp = array_module(backend)
    vpw = int(vertices_per_warp)
    if not 1 <= vpw <= MAX_VPW:
        raise ValueError(f"vertices_per_warp must be in 1..{MAX_VPW}, got {vertices_per_warp}")
    n = dg.num_nodes
    mate = xp.full(n, -1, xp.int64)
    if n == 0:
        return mate
    mod = get_module("matching", backend)
    sptr, snbr, srank = dg.sorted_ranked_adjacency()
    head = sptr[:-1].copy()
    word = xp.full(n, EMPTY_WORD, xp.uint64)
    work = _work_counter(xp, stats)
    warps = math.ceil(n / vpw)
    blocks = math.ceil(warps / (BLOCK // 32))
    mod.get_function("suitor_warp")(
        (blocks,),
        (BLOCK,),
        (np.int32(n), sptr, snbr, srank, head, word, np.int32(vpw), work),
    )
    mod.get_function("suitor_mates")(_grid(n), (BLOCK,), (np.int32(n), word, mate))
    _record(stats, work, rounds=1, host_syncs=0)
    return mate


def local_max(dg, *, backend="cupy", stats=None, rounds_per_sync=ROUNDS_PER_SYNC):
    """Locally-dominant matching in worklist rounds, ``rounds_per_sync`` rounds
    per host synchronisation."""
    xp = array_module(backend)
    n = dg.num_nodes
    mate = xp.full(n, -1, xp.int64)
    if n == 0:
        return mate
    mod = get_module("matching", backend)
    candidates = mod.get_function("ld_candidates")
    candidates_wide = mod.get_function("ld_candidates_wide")
    match = mod.get_function("ld_match")
    push = mod.get_function("ld_push")
    push_wide = mod.get_function("ld_push_wide")
    sptr, snbr = dg.sorted_adjacency()
    head = sptr[:-1].copy()
    cand = xp.full(n, -1, xp.int32)
    wl = xp.empty(2 * n, xp.int32)
    wl[:n] = xp.arange(n, dtype=xp.int32)
    # worklists 0 and 1, vertices matched this round, the long rows left to
    # ld_push_wide and to ld_candidates_wide
    sizes = xp.zeros(5, xp.int64)
    sizes[0] = n
    stamp = xp.zeros(n, xp.int64)  # stamp[v] == r: v is in round r's worklist
    matched = xp.empty(n, xp.int32)
    # the long rows left to the *_wide kernels: each vertex once a round at most
    wide = int(xp.count_nonzero(sptr[1:] - sptr[:-1] > WIDE_ROW))
    wl_wide = xp.empty(max(1, wide), xp.int32)
    wl_cand_wide = xp.empty(max(1, wide), xp.int32)
    wide_grid = (min(MAX_GRID, wide),) if wide else None  # a block per row
    wide_rows = xp.zeros(1, xp.uint64)
    rounds = xp.zeros(1, xp.int64)
    work = _work_counter(xp, stats)
    nn = np.int32(n)
    # kernels/matching.cu's LocalMax, the same every round
    state = dict(sptr=sptr, snbr=snbr, head=head, mate=mate, cand=cand, stamp=stamp)
    rnd = 0
    syncs = 0
    size = n
    for batch in _batches(rounds_per_sync):
        # Kernels loop over whatever the worklist holds; the grid only follows
        # its size as of the last wait, so idle blocks are not launched by the
        # hundred on a long chain of small rounds.
        grid = _grid(size)
        for _ in range(batch):
            p = np.int32(rnd & 1)
            r = np.int64(rnd)
            lists = dict(wl=wl, sizes=sizes, n=nn, p=p)
            candidates(grid, (BLOCK,), (lists, state, wl_cand_wide, rounds, work))
            if wide_grid:
                candidates_wide(
                    wide_grid,
                    (BLOCK,),
                    (sizes, wl_cand_wide, sptr, snbr, head, mate, cand, wide_rows, work),
                )
            match(grid, (BLOCK,), (nn, p, r, wl, sizes, cand, stamp, mate, matched))
            push(grid, (BLOCK,), (lists, r, state, matched, wl_wide, work))
            if wide_grid:
                push_wide(wide_grid, (BLOCK,), (lists, r, state, wl_wide, wide_rows, work))
            rnd += 1
        syncs += 1
        size = int(sizes[rnd & 1])
        if size == 0:
            break
    _record(stats, work, rounds=int(rounds[0]), host_syncs=syncs, wide_rows=int(wide_rows[0]))
    return mate


def red_blue_classes(dg):
    """rb_choose's row classes of ``dg`` by RB_WIDTHS: [(threads per row,
    count, device int32 vertices)], the vertices None (all, in order) where
    one class holds every vertex."""
    classes = row_classes(dg.xp, dg.indptr[1:] - dg.indptr[:-1], RB_WIDTHS)
    if len(classes) == 1:
        return [(classes[0][0], dg.num_nodes, None)]
    return [(width, int(rows.shape[0]), rows) for width, rows in classes]


def red_blue(
    dg,
    seed,
    *,
    weighted=True,
    backend="cupy",
    max_rounds=1 << 20,
    stats=None,
    rounds_per_sync=ROUNDS_PER_SYNC,
):
    """Red-blue proposal matching until maximal: (device mate array, rounds)."""
    xp = array_module(backend)
    n = dg.num_nodes
    mate = xp.full(n, -1, xp.int64)
    if n == 0:
        return mate, 0
    mod = get_module("matching", backend)
    color_k = mod.get_function("rb_color")
    choose = mod.get_function("rb_choose")
    check = mod.get_function("rb_check")
    marry = mod.get_function("rb_marry")
    lnbr = dg.indices.copy()  # each row's live arcs, compacted as neighbours marry
    lrank = dg.arc_rank().copy()
    live_end = dg.indptr[1:].copy()
    color = xp.zeros(n, xp.int8)
    sigma = xp.full(n, -1, xp.int32)
    alive = xp.zeros(1, xp.uint64)
    stop = xp.zeros(1, xp.int32)
    rounds = xp.zeros(1, xp.int64)
    work = _work_counter(xp, stats)
    seed64 = np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF)
    threshold = np.uint64(P_BLUE * 18446744073709551615.0)
    grid = _grid(n)
    nn = np.int32(n)
    # kernels/matching.cu's RedBlue
    rb = dict(indptr=dg.indptr, lnbr=lnbr, lrank=lrank, live_end=live_end, mate=mate, color=color)
    rb.update(sigma=sigma, seed=seed64, weighted=np.int32(1 if weighted else 0))
    classes = [
        (_grid(count * width), np.int32(count), rows, np.int32(width))
        for width, count, rows in red_blue_classes(dg)
    ]
    rnd = 0
    syncs = 0
    for batch in _batches(rounds_per_sync):
        if rnd >= max_rounds:
            break
        for _ in range(min(batch, max_rounds - rnd)):
            r = np.int64(rnd)
            color_k(grid, (BLOCK,), (nn, seed64, r, threshold, color, sigma, stop))
            for side in (_BLUE, _RED):
                for cgrid, count, rows, width in classes:
                    choose(
                        cgrid,
                        (BLOCK,),
                        (count, rows, width, rb, r, np.int32(side), alive, stop, work),
                    )
            check((1,), (32,), (r, alive, stop, rounds))
            marry(grid, (BLOCK,), (nn, color, sigma, mate, stop))
            rnd += 1
        syncs += 1
        if int(stop[0]):
            break
    done = int(rounds[0])
    _record(stats, work, rounds=done, host_syncs=syncs)
    return mate, done
