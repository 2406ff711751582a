"""½-approximate weighted matching on the GPU: host side of kernels/matching.cu.

Written against ``array_module``/``get_module`` only, so the same code runs on
a CUDA device (``backend="cupy"``) and on the CPU in emulation
(``backend="emulate"``). Every algorithm returns the CPU engine's matching
exactly: Suitor, local max and greedy give the greedy matching under the edge
order; red-blue gives the CPU red-blue matching for the same seed.
"""

from __future__ import annotations

import math

import numpy as np

from nx_gpumatch.gpu._launch import array_module, get_module, to_host
from nx_gpumatch.gpu.graph import device_graph

__all__ = ["run", "suitor", "local_max", "red_blue"]

BLOCK = 128  # threads per block (4 warps)
VERTICES_PER_WARP = 8  # best setting in seed 000, paper I
MAX_VPW = 32  # one candidate per lane
MAX_GRID = 4096  # grid-stride kernels need no more blocks than this
EMPTY_WORD = np.uint64(0x7FFFFFFF_FFFFFFFF)
_BLUE, _RED = 0, 1


def _grid(count):
    return (max(1, min(MAX_GRID, math.ceil(count / BLOCK))),)


def run(
    graph,
    algorithm,
    *,
    seed=0,
    select="weighted",
    backend="cupy",
    vertices_per_warp=VERTICES_PER_WARP,
):
    """Mate array (int64 NumPy, -1 = unmatched) of ``graph`` (a host
    :class:`nx_gpumatch.Graph` or a :class:`~nx_gpumatch.gpu.graph.DeviceGraph`).

    ``algorithm``: "suitor", "greedy" (served by Suitor, which returns the
    greedy matching), "local_max" or "red_blue" (``seed``, ``select`` =
    "weighted" or "random").
    """
    dg = device_graph(graph, backend)
    if algorithm in ("suitor", "greedy"):
        mate = suitor(dg, backend=backend, vertices_per_warp=vertices_per_warp)
    elif algorithm == "local_max":
        mate = local_max(dg, backend=backend)
    elif algorithm == "red_blue":
        if select not in ("weighted", "random"):
            raise ValueError(f"select must be 'weighted' or 'random', got {select!r}")
        mate, _rounds = red_blue(dg, seed, weighted=select == "weighted", backend=backend)
    else:
        raise ValueError(f"the GPU engine has no matching algorithm {algorithm!r}")
    return to_host(mate).astype(np.int64, copy=False)


def suitor(dg, *, backend="cupy", vertices_per_warp=VERTICES_PER_WARP):
    """GPU-Suitor (NoSync): device mate array."""
    xp = array_module(backend)
    vpw = int(vertices_per_warp)
    if not 1 <= vpw <= MAX_VPW:
        raise ValueError(f"vertices_per_warp must be in 1..{MAX_VPW}, got {vertices_per_warp}")
    n = dg.num_nodes
    mate = xp.full(n, -1, xp.int64)
    if n == 0:
        return mate
    mod = get_module("matching", backend)
    word = xp.full(n, EMPTY_WORD, xp.uint64)
    warps = math.ceil(n / vpw)
    blocks = math.ceil(warps / (BLOCK // 32))
    mod.get_function("suitor_warp")(
        (blocks,),
        (BLOCK,),
        (np.int32(n), dg.indptr, dg.indices, dg.arc_rank(), word, np.int32(vpw)),
    )
    mod.get_function("suitor_mates")(_grid(n), (BLOCK,), (np.int32(n), word, mate))
    return mate


def local_max(dg, *, backend="cupy"):
    """Locally-dominant matching in rounds (one thread per active vertex)."""
    xp = array_module(backend)
    n = dg.num_nodes
    mate = xp.full(n, -1, xp.int64)
    if n == 0:
        return mate
    mod = get_module("matching", backend)
    candidates = mod.get_function("ld_candidates")
    match = mod.get_function("ld_match")
    sptr, snbr = dg.sorted_adjacency()
    head = sptr[:-1].copy()
    cand = xp.full(n, -1, xp.int32)
    active = xp.arange(n, dtype=xp.int32)
    k = n
    while k > 0:
        candidates(_grid(k), (BLOCK,), (np.int32(k), active, sptr, snbr, head, mate, cand))
        match(_grid(k), (BLOCK,), (np.int32(k), active, cand, mate))
        active = active[(mate[active] < 0) & (cand[active] >= 0)]
        k = int(active.shape[0])
    return mate


def red_blue(dg, seed, *, weighted=True, backend="cupy", max_rounds=1 << 20):
    """Red-blue proposal matching until maximal: (device mate array, rounds)."""
    from nx_gpumatch.cpu.matching import P_BLUE  # one constant for both engines

    xp = array_module(backend)
    n = dg.num_nodes
    mate = xp.full(n, -1, xp.int64)
    if n == 0:
        return mate, 0
    mod = get_module("matching", backend)
    color_k = mod.get_function("rb_color")
    choose = mod.get_function("rb_choose")
    marry = mod.get_function("rb_marry")
    arc_rank = dg.arc_rank()
    color = xp.zeros(n, xp.int8)
    sigma = xp.full(n, -1, xp.int32)
    alive = xp.zeros(1, xp.uint64)
    seed64 = np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF)
    threshold = np.uint64(P_BLUE * 18446744073709551615.0)
    grid = _grid(n)
    nn = np.int32(n)
    w = np.int32(1 if weighted else 0)
    rounds = 0
    for rnd in range(max_rounds):
        rounds = rnd + 1
        r = np.int64(rnd)
        color_k(grid, (BLOCK,), (nn, seed64, r, threshold, color, sigma))
        alive.fill(0)
        for side in (_BLUE, _RED):
            choose(
                grid,
                (BLOCK,),
                (
                    nn,
                    dg.indptr,
                    dg.indices,
                    arc_rank,
                    mate,
                    color,
                    sigma,
                    seed64,
                    r,
                    w,
                    np.int32(side),
                    alive,
                ),
            )
        if int(alive[0]) == 0:
            break
        marry(grid, (BLOCK,), (nn, color, sigma, mate))
    return mate, rounds
