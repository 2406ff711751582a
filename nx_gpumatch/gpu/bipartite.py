"""Bipartite matching on the GPU: host side of kernels/bipartite.cu.

Written against ``array_module``/``get_module`` only, so the same code runs on a
CUDA device (``backend="cupy"``) and on the CPU in emulation
(``backend="emulate"``). The matching may differ from the CPU engine's (races
decide which tree claims a vertex); its cardinality does not. The engine has
no initial-matching heuristic and no proof of its own: the front end brings
the initial matching and proves the result (Konig's cover).
"""

from __future__ import annotations

import math

import numpy as np

from nx_gpumatch._constants import ENDPOINT, UNSEEN
from nx_gpumatch.gpu._launch import array_module, get_module, to_host

__all__ = ["run", "DEFINES", "INITS"]

# Compiled into kernels/bipartite.cu (see nx_gpumatch.gpu._source.problem_defines):
# the CPU engine's sentinels, so levels and endpoints mean the same on both.
DEFINES = {"UNSEEN": int(UNSEEN), "ENDPOINT": int(ENDPOINT)}
BLOCK = 256
CT_GRID = 120  # CT layout: a fixed grid; each thread walks many vertices
INITS = ("none",)  # the initial matchings run computes itself


def _grid(n, block, layout):
    g = max(1, math.ceil(n / block))
    return min(g, CT_GRID) if layout == "ct" else g


def run(bi, algorithm, start, *, wr=True, layout="ct", backend="cupy", block=None):
    """The entry every bipartite engine offers (see :func:`nx_gpumatch.cpu.bipartite.run`):
    a maximum matching of ``bi`` (a
    :class:`~nx_gpumatch.algorithms.bipartite.matching.Biadjacency`) by APsB
    for ``algorithm="apsb"``, else APFB (the GPU has no Hopcroft-Karp: a call
    that lets the device be chosen may bring any algorithm here), from
    ``start``: "none" or an initial matching (rmatch, cmatch).

    Returns (rmatch, cmatch, phases, initial, work, cover): int32 NumPy
    matchings, the phases that augmented, the initial matching's size, and
    None for the work and the cover, which this engine does not compute.
    """
    nr, nc = bi.nrows, bi.ncols
    if isinstance(start, str):
        if start not in INITS:
            raise ValueError(f"the GPU engine starts from one of {INITS} or a matching")
        start = (np.full(nr, -1, np.int32), np.full(nc, -1, np.int32))
    rmatch, cmatch, phases = _augment(
        bi, *start, algorithm != "apsb", wr, layout, backend, block or BLOCK
    )
    initial = int(np.count_nonzero(np.asarray(start[1]) >= 0))
    return rmatch, cmatch, phases, initial, None, None


def _augment(bi, rmatch, cmatch, full, wr, layout, backend, block):
    """APFB (``full``) or APsB from the given matching: (rmatch, cmatch,
    phases), int32 NumPy arrays and the number of phases that augmented."""
    xp = array_module(backend)
    nr, nc = bi.nrows, bi.ncols
    d_rmatch = xp.asarray(rmatch, dtype=xp.int32).copy()
    d_cmatch = xp.asarray(cmatch, dtype=xp.int32).copy()
    if nr == 0 or nc == 0:
        return to_host(d_rmatch), to_host(d_cmatch), 0
    cptr = xp.asarray(bi.cptr, dtype=xp.int64)
    crows = xp.asarray(bi.crows, dtype=xp.int32)
    level = xp.empty(nc, xp.int32)
    parent = xp.empty(nc, xp.int32)
    root = xp.empty(nc, xp.int32)
    found = xp.empty(nc, xp.int32)
    owner = xp.empty(nc, xp.int32)
    pred = xp.full(nr, -1, xp.int32)
    flags = xp.zeros(2, xp.int32)
    mod = get_module("bipartite", backend)
    init = mod.get_function("bp_init_levels")
    bfs = mod.get_function("bp_bfs_wr" if wr else "bp_bfs")
    alternate = mod.get_function("bp_alternate")
    fix = mod.get_function("bp_fix_matching")
    gc, gr = (_grid(nc, block, layout),), (_grid(nr, block, layout),)
    n_c, n_r = np.int32(nc), np.int32(nr)
    forest = dict(
        level=level, parent=parent, root=root, pred=pred, found=found
    )  # bipartite.cu's Forest
    phases = 0
    while True:
        init(gc, (block,), (n_c, d_cmatch, level, parent, root, found, owner))
        depth = 0
        any_path = False
        while True:
            flags[:] = 0
            bfs(gc, (block,), (np.int32(depth), n_c, cptr, crows, d_rmatch, forest, flags))
            inserted, got = (int(x) for x in to_host(flags))
            any_path = any_path or bool(got)
            if not inserted or (got and not full):
                break
            depth += 1
        if not any_path:
            return to_host(d_rmatch), to_host(d_cmatch), phases
        phases += 1
        alternate(gr, (block,), (n_r, d_rmatch, d_cmatch, parent, root, pred, owner))
        fix(gr, (block,), (n_r, d_rmatch, d_cmatch))
