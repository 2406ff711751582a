"""½-approximate b-matching on the GPU: host side of kernels/b_matching.cu.

Written against ``array_module``/``get_module`` only, so the same code runs on
a CUDA device (``backend="cupy"``) and on the CPU in emulation
(``backend="emulate"``). b-Suitor returns the greedy b-matching, exactly the
CPU engine's answer.

``stats``, when given, receives the row entries the kernels read (``work``) and
the rounds (``rounds``); the tests bound them.
"""

from __future__ import annotations

import math

import numpy as np

from nx_gpumatch._constants import NO_RANK
from nx_gpumatch.gpu._launch import (
    EMPTY_WORD,
    MAX_GRID,
    array_module,
    bincount,
    get_module,
    to_host,
)
from nx_gpumatch.gpu.graph import device_graph

__all__ = ["run", "b_suitor", "DEFINES"]

BLOCK = 128  # threads per block (4 warps, one queued vertex each)
# First batch of sorted candidates per vertex: SORT_FACTOR * b(v), at least
# MIN_BATCH (one per lane); later batches double (Khan et al. sort about b*k).
SORT_FACTOR = 2
MIN_BATCH = 32
# Compiled into kernels/b_matching.cu (see nx_gpumatch.gpu._source.problem_defines).
DEFINES = {"BLOCK_SIZE": BLOCK}


def _grid(count, per_block=BLOCK):
    return (max(1, min(MAX_GRID, math.ceil(count / per_block))),)


def capacities(dg, b):
    """min(b(v), number of usable edges at v) on the device, int64 (b below 0
    counts as 0, as on the CPU)."""
    xp = dg.xp
    n = dg.num_nodes
    pos = dg.edge_weight > 0
    # no positive weight: empty inputs
    deg = bincount(xp, dg.edge_src[pos], n)[:n] + bincount(xp, dg.edge_dst[pos], n)[:n]
    b = xp.maximum(xp.asarray(b, dtype=xp.int64), 0)
    return xp.minimum(b, deg.astype(xp.int64))


def run(graph, b, algorithm="b_suitor", *, backend="cupy", stats=None):
    """Matched edge ids (int64 NumPy, ascending) of the b-matching of ``graph``
    (a host :class:`nx_gpumatch.Graph` or a DeviceGraph); ``b`` gives b(v) per
    vertex (values past the degree mean no limit). The GPU engine runs
    ``algorithm="b_suitor"`` only."""
    if algorithm != "b_suitor":
        raise ValueError(f"the GPU engine runs algorithm='b_suitor' only, not {algorithm!r}")
    dg = device_graph(graph, backend)
    edges = b_suitor(dg, capacities(dg, b), backend=backend, stats=stats)
    return to_host(edges).astype(np.int64, copy=False)


def b_suitor(dg, cap, *, backend="cupy", stats=None):
    """Delayed b-Suitor in rounds: device array of matched edge ids, ascending."""
    xp = array_module(backend)
    n = dg.num_nodes
    if n == 0 or dg.num_edges == 0:
        return xp.zeros(0, xp.int64)
    mod = get_module("b_matching", backend)
    unqueue = mod.get_function("bs_unqueue")
    round_k = mod.get_function("bs_round")
    cap = xp.asarray(cap, dtype=xp.int64)
    sptr = xp.zeros(n + 1, xp.int64)
    sptr[1:] = xp.cumsum(cap)
    slots = xp.full(int(sptr[n]), EMPTY_WORD, xp.uint64)
    hint = xp.where(cap > 0, NO_RANK, 0).astype(xp.int32)
    # each vertex's sorted batch of candidates: inside its own arc range of cbuf
    cbuf = xp.empty(dg.indices.shape[0], xp.uint64)
    cpos = dg.indptr[:-1].copy()
    cend = cpos.copy()
    clo = xp.full(n, -1, xp.int32)
    cnext = xp.maximum(SORT_FACTOR * cap, MIN_BATCH).astype(xp.int64)
    work = None if stats is None else xp.zeros(1, xp.uint64)
    need = cap.astype(xp.uint64)
    q = xp.flatnonzero(cap > 0).astype(xp.int32)
    nextq = xp.empty(n, xp.int32)
    qtail = xp.zeros(1, xp.uint64)
    arc_rank = dg.arc_rank()
    nq = int(q.shape[0])
    q = xp.concatenate([q, xp.empty(n - nq, xp.int32)])
    # kernels/b_matching.cu's RankedRows, Suitors and Candidates
    rows = dict(indptr=dg.indptr, indices=dg.indices, arc_rank=arc_rank)
    suitors = dict(sptr=sptr, slots=slots, hint=hint)
    cands = dict(cbuf=cbuf, cpos=cpos, cend=cend, clo=clo, cnext=cnext)
    rounds = 0
    while nq > 0:
        rounds += 1
        nqi = np.int32(nq)
        unqueue(_grid(nq), (BLOCK,), (nqi, q, need))
        qtail.fill(0)
        round_k(
            _grid(nq, BLOCK // 32),
            (BLOCK,),
            (nqi, q, rows, suitors, cands, need, nextq, qtail, work),
        )
        q, nextq = nextq, q
        nq = int(qtail[0])
    if stats is not None:
        stats.update(rounds=rounds, work=int(work[0]))

    upper = xp.empty(n, xp.int64)
    total = xp.empty(n, xp.int64)
    mod.get_function("bs_count")(_grid(n), (BLOCK,), (np.int32(n), sptr, slots, upper, total))
    off = xp.zeros(n + 1, xp.int64)
    off[1:] = xp.cumsum(upper)
    m = int(off[n])
    if int(total.sum()) != 2 * m:
        raise RuntimeError("b-Suitor ended with a suitor relation that is not mutual")
    out = xp.empty(m, xp.int64)
    mod.get_function("bs_edges")(
        _grid(n), (BLOCK,), (np.int32(n), sptr, slots, dg.indptr, dg.indices, dg.arc_edge, off, out)
    )
    return xp.sort(out)
