"""Numba kernels of the distributed local max rounds (Birn et al. 2013): each
active vertex points at its best live neighbour; mutual pointers are locally
dominant edges and are matched. Rows come best-first from the CPU engine's
``sorted_adjacency``."""

import numpy as np

from nx_gpumatch.cpu import njit


@njit(cache=True)
def candidates(active, sptr, snbr, mate, head, cand):
    """cand[u] = best neighbour of u that is not matched (mate == -1), or -1;
    returns a mask of the vertices whose candidate changed."""
    changed = np.zeros(mate.shape[0], np.bool_)
    for i in range(active.shape[0]):
        u = active[i]
        h = head[u]
        end = sptr[u + 1]
        while h < end and mate[snbr[h]] != -1:
            h += 1
        head[u] = h
        c = np.int64(snbr[h]) if h < end else np.int64(-1)
        if c != cand[u]:
            changed[u] = True
            cand[u] = c
    return changed


@njit(cache=True)
def match_mutual(active, cand, mate, owned):
    """Match every active u whose candidate points back at it; returns the
    mask of vertices matched now."""
    newly = np.zeros(mate.shape[0], np.bool_)
    for i in range(active.shape[0]):
        u = active[i]
        c = cand[u]
        if c >= 0 and cand[c] == u:
            mate[u] = c
            newly[u] = True
            if not owned[c]:
                mate[c] = u  # the ghost's owner makes the same decision
    return newly


@njit(cache=True)
def arc_positions(indptr, indices, a, b):
    """Position of arc (a[i], b[i]) in the CSR rows (sorted by neighbour)."""
    out = np.empty(a.shape[0], np.int64)
    for i in range(a.shape[0]):
        lo = indptr[a[i]]
        hi = indptr[a[i] + 1]
        while lo < hi:
            mid = (lo + hi) >> 1
            if indices[mid] < b[i]:
                lo = mid + 1
            else:
                hi = mid
        out[i] = lo
    return out
