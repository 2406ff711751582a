"""½-approximate b-matching on the GPU: host side of kernels/b_matching.cu.

Written against ``array_module``/``get_module`` only, so the same code runs on
a CUDA device (``backend="cupy"``) and on the CPU in emulation
(``backend="emulate"``). b-Suitor returns the greedy b-matching, exactly the
CPU engine's answer.
"""

from __future__ import annotations

import math

import numpy as np

from nx_gpumatch.gpu._launch import array_module, get_module, to_host
from nx_gpumatch.gpu.graph import device_graph

__all__ = ["run", "b_suitor"]

BLOCK = 128  # threads per block (4 warps, one queued vertex each)
MAX_GRID = 4096
EMPTY_WORD = np.uint64(0x7FFFFFFF_FFFFFFFF)
NO_RANK = 0x7FFFFFFF


def _grid(count, per_block=BLOCK):
    return (max(1, min(MAX_GRID, math.ceil(count / per_block))),)


def capacities(dg, b):
    """min(b(v), number of usable edges at v) on the device, int64."""
    xp = dg.xp
    n = dg.num_nodes
    pos = dg.edge_weight > 0
    deg = (
        xp.bincount(dg.edge_src[pos], minlength=n)[:n]
        + xp.bincount(dg.edge_dst[pos], minlength=n)[:n]
    )
    return xp.minimum(xp.asarray(b, dtype=xp.int64), deg.astype(xp.int64))


def run(graph, b, *, backend="cupy"):
    """Matched edge ids (int64 NumPy, ascending) of the b-matching of ``graph``
    (a host :class:`nx_gpumatch.Graph` or a DeviceGraph); ``b`` gives b(v) per
    vertex (values past the degree mean no limit)."""
    dg = device_graph(graph, backend)
    return to_host(b_suitor(dg, capacities(dg, b), backend=backend)).astype(np.int64, copy=False)


def b_suitor(dg, cap, *, backend="cupy"):
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
    last = xp.full(n, -1, xp.int32)
    need = cap.astype(xp.uint64)
    q = xp.flatnonzero(cap > 0).astype(xp.int32)
    nextq = xp.empty(n, xp.int32)
    qtail = xp.zeros(1, xp.uint64)
    arc_rank = dg.arc_rank()
    nq = int(q.shape[0])
    q = xp.concatenate([q, xp.empty(n - nq, xp.int32)])
    while nq > 0:
        nqi = np.int32(nq)
        unqueue(_grid(nq), (BLOCK,), (nqi, q, need))
        qtail.fill(0)
        round_k(
            _grid(nq, BLOCK // 32),
            (BLOCK,),
            (nqi, q, dg.indptr, dg.indices, arc_rank, sptr, slots, hint, last, need, nextq, qtail),
        )
        q, nextq = nextq, q
        nq = int(qtail[0])

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
