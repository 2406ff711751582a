"""The certificate of a maximum bipartite matching: Konig's vertex cover, from
the levels of the engines' last (failed) search or from one alternating BFS of
its own, and the check that it covers every edge with exactly one end per
matched edge, which proves the matching maximum."""

import numpy as np
from numba import prange

from nx_gpumatch._constants import UNSEEN
from nx_gpumatch.cpu import njit
from nx_gpumatch.cpu.bipartite import alternating_bfs


@njit(cache=True, parallel=True)
def cover_from_levels(nrows, rmatch, levels):
    """Konig's cover from a finished alternating search from the free columns
    (levels[c] < UNSEEN: c reached; no free row reached). With Z the reached
    vertices, the cover is the columns outside Z and the rows inside Z; a
    matched row is in Z exactly when its mate is (the mate is reached through it)."""
    col_cover = np.empty(levels.shape[0], np.bool_)
    for c in prange(levels.shape[0]):
        col_cover[c] = levels[c] == UNSEEN
    row_cover = np.empty(nrows, np.bool_)
    for r in prange(nrows):
        c = rmatch[r]
        row_cover[r] = c >= 0 and levels[c] != UNSEEN
    return row_cover, col_cover


@njit(cache=True)
def konig_cover(nrows, ncols, cptr, crows, rmatch, cmatch):
    """(row_in_cover, col_in_cover, ok) from a full alternating BFS of the given
    matching; ok is False if a free row was reached (the matching is not
    maximum; the sets are then no certificate)."""
    dist = np.empty(ncols, np.int32)
    front = np.empty(ncols, np.int32)
    nxt = np.empty(ncols, np.int32)
    none_dead = np.zeros(ncols, np.uint8)
    hit, _ = alternating_bfs(ncols, cptr, crows, rmatch, cmatch, dist, front, nxt, False, none_dead)
    row_cover, col_cover = cover_from_levels(nrows, rmatch, dist)
    return row_cover, col_cover, hit < 0


@njit(cache=True, parallel=True)
def verify(nrows, ncols, cptr, crows, rmatch, cmatch, row_cover, col_cover):
    """True when rmatch/cmatch are one matching of the graph and the cover covers
    every edge with as many vertices as there are matched pairs."""
    bad = 0
    size = 0
    nc = 0
    for c in prange(ncols):
        r = cmatch[c]
        if col_cover[c]:
            nc += 1
        if r >= 0:
            size += 1
            if r >= nrows or rmatch[r] != c:
                bad += 1
            else:
                edge = False
                for k in range(cptr[c], cptr[c + 1]):
                    if crows[k] == r:
                        edge = True
                    if not (col_cover[c] or row_cover[crows[k]]):
                        bad += 1
                if not edge:
                    bad += 1
        elif not col_cover[c]:
            for k in range(cptr[c], cptr[c + 1]):
                if not row_cover[crows[k]]:
                    bad += 1
    nr = 0
    rsize = 0
    for r in prange(nrows):
        if row_cover[r]:
            nr += 1
        if rmatch[r] >= 0:
            rsize += 1
    return bad == 0 and rsize == size and nr + nc == size
