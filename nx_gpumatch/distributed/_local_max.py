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
def settle(active, sptr, snbr, head, cand, mate, owned, newly, carried):
    """After a round's mutual matches: the owned vertices that pointed at a
    vertex just matched look again at once, and mutual pairs of owned
    vertices match, one matched vertex at a time (as the shared-memory
    engine's last rounds), so that a chain of ties inside a rank settles in
    one superstep instead of one superstep per edge.

    Safe on stale news of ghosts: a ghost believed free may be matched
    elsewhere, so a candidate is never worse than the truth, and an owned
    vertex named by a candidate is free for certain. Two owned vertices
    pointing at each other thus share a locally dominant edge. Pairs with a
    ghost wait for the next exchange. Vertices matched here join ``newly``;
    those whose candidate changed here are set in ``carried`` (their
    owners' neighbours hear of it in the next exchange)."""
    # This round's matches (all in ``active``), and the ghosts they took.
    stack = np.empty(2 * active.shape[0] + 16, np.int64)
    top = 0
    for i in range(active.shape[0]):
        u = active[i]
        if newly[u]:
            stack[top] = u
            top += 1
            if not owned[mate[u]]:
                stack[top] = mate[u]
                top += 1
    while top > 0:
        top -= 1
        x = stack[top]
        for p in range(sptr[x], sptr[x + 1]):
            y = snbr[p]
            if not owned[y] or mate[y] != -1 or cand[y] != x:
                continue
            h = head[y]
            end = sptr[y + 1]
            while h < end and mate[snbr[h]] != -1:
                h += 1
            head[y] = h
            c = np.int64(snbr[h]) if h < end else np.int64(-1)
            cand[y] = c
            carried[y] = True
            if c >= 0 and owned[c] and cand[c] == y:
                mate[y] = c
                mate[c] = y
                newly[y] = True
                newly[c] = True
                if top + 2 > stack.shape[0]:
                    stack = np.concatenate((stack, np.empty(stack.shape[0] + 2, np.int64)))
                stack[top] = y
                stack[top + 1] = c
                top += 2


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
