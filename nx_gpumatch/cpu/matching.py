"""½-approximate weighted matching on the CPU: Suitor, local max, greedy, red-blue.

Every kernel reads the graph through ``arc_rank``: the rank of each arc's edge
in the package's one edge order (0 = best, NO_RANK = never usable). Comparing
ranks instead of weights makes ties impossible, so Suitor, local max and greedy
all return exactly the greedy matching, whatever the thread count.

Results are ``mate`` arrays: mate[v] is v's partner, -1 if unmatched.
"""

import numpy as np
from numba import njit, prange

from nx_gpumatch.cpu.atomics import cas

NO_RANK = 0x7FFFFFFF
# Suitor word of a vertex: (rank of the edge to its suitor) << 32 | suitor id.
# A smaller word is a better offer; an empty slot has the largest possible word.
EMPTY = np.int64(0x7FFFFFFF_FFFFFFFF)
LOW = np.int64(0xFFFFFFFF)


# ------------------------------------------------------------------ greedy
@njit(cache=True)
def greedy(n, edge_src, edge_dst, order, num_usable):
    """Scan edges best-first; match an edge when both ends are free (the reference)."""
    mate = np.full(n, -1, np.int64)
    for i in range(num_usable):
        e = order[i]
        u = edge_src[e]
        v = edge_dst[e]
        if mate[u] < 0 and mate[v] < 0:
            mate[u] = v
            mate[v] = u
    return mate


# ------------------------------------------------------------------ Suitor
@njit(cache=True, inline="always")
def _best_offer(cur, indptr, indices, arc_rank, word):
    """Best neighbour of cur whose current suitor cur can beat, and the edge rank."""
    best_r = NO_RANK
    best_v = -1
    for p in range(indptr[cur], indptr[cur + 1]):
        r = arc_rank[p]
        if r < best_r:
            v = indices[p]
            # Stale reads are safe: a word only ever decreases, so a stale one
            # can only let cur try and then fail at the CAS below.
            if (np.int64(r) << 32) < (word[v] & ~LOW):
                best_r = r
                best_v = v
    return best_v, best_r


@njit(cache=True)
def _suitor_chain(u, indptr, indices, arc_rank, word):
    """Find a partner for u; carry on with every vertex displaced on the way."""
    cur = np.int64(u)
    while cur >= 0:
        v, r = _best_offer(cur, indptr, indices, arc_rank, word)
        if v < 0:
            return
        offer = (np.int64(r) << 32) | cur
        seen = word[v]
        while True:
            if seen <= offer:  # someone better got there first: look again
                break
            got = cas(word, v, seen, offer)
            if got == seen:
                break
            seen = got  # use what the CAS saw, never a re-read
        if seen <= offer:
            continue
        cur = -1 if seen == EMPTY else (seen & LOW)


@njit(cache=True, parallel=True)
def _suitor_run(n, indptr, indices, arc_rank, word):
    for u in prange(n):
        _suitor_chain(np.int64(u), indptr, indices, arc_rank, word)


@njit(cache=True, parallel=True)
def _mates_from_words(word):
    n = word.shape[0]
    mate = np.full(n, -1, np.int64)
    for v in prange(n):
        w = word[v]
        if w != EMPTY:
            s = w & LOW
            # At the end the suitor relation is symmetric; checking keeps the
            # result a matching even if that invariant were ever broken.
            if (word[s] & LOW) == v and word[s] != EMPTY:
                mate[v] = s
    return mate


def suitor(n, indptr, indices, arc_rank):
    """Parallel lock-free Suitor (Manne & Halappanavar): equals the greedy matching."""
    word = np.full(n, EMPTY, np.int64)
    _suitor_run(n, indptr, indices, arc_rank, word)
    return _mates_from_words(word)


# --------------------------------------------------------------- local max
@njit(cache=True)
def sorted_adjacency(n, edge_src, edge_dst, order, num_usable):
    """Each row's usable neighbours best-first, as (indptr, indices): a counting
    sort of the edges in rank order into their two rows."""
    deg = np.zeros(n + 1, np.int64)
    for i in range(num_usable):
        e = order[i]
        deg[edge_src[e] + 1] += 1
        deg[edge_dst[e] + 1] += 1
    ptr = np.empty(n + 1, np.int64)
    ptr[0] = 0
    for v in range(n):
        ptr[v + 1] = ptr[v] + deg[v + 1]
    fill = ptr[:-1].copy()
    nbr = np.empty(ptr[n], np.int32)
    for i in range(num_usable):
        e = order[i]
        u = edge_src[e]
        v = edge_dst[e]
        nbr[fill[u]] = v
        fill[u] += 1
        nbr[fill[v]] = u
        fill[v] += 1
    return ptr, nbr


@njit(cache=True, parallel=True)
def _local_max_rounds(n, sptr, snbr):
    mate = np.full(n, -1, np.int64)
    head = sptr[:-1].copy()  # next candidate of each row; only moves forward
    cand = np.full(n, -1, np.int64)
    active = np.arange(n)
    k = n
    while k > 0:
        # Phase 1: each active vertex points at its best unmatched neighbour.
        # Only mate[] of other vertices is read and it is not written here.
        for i in prange(k):
            u = active[i]
            h = head[u]
            end = sptr[u + 1]
            while h < end and mate[snbr[h]] >= 0:
                h += 1
            head[u] = h
            cand[u] = snbr[h] if h < end else -1
        # Phase 2: mutual pointers are locally dominant edges; match them. Each
        # pair is written by its smaller end only, so writes never collide.
        for i in prange(k):
            u = active[i]
            c = cand[u]
            if c > u and cand[c] == u:
                mate[u] = c
                mate[c] = u
        j = 0
        for i in range(k):
            u = active[i]
            if mate[u] < 0 and cand[u] >= 0:
                active[j] = u
                j += 1
        k = j
    return mate


def local_max(n, edge_src, edge_dst, order, num_usable):
    """Round-parallel locally-dominant matching: equals the greedy matching."""
    sptr, snbr = sorted_adjacency(n, edge_src, edge_dst, order, num_usable)
    return _local_max_rounds(n, sptr, snbr)


# ---------------------------------------------------------------- red-blue
P_BLUE = 0.53406  # maximizes the expected number of matches per round (seed 001)


@njit(cache=True, inline="always")
def _mix(x):
    # splitmix64 finalizer: a fast, well-mixed hash standing in for the seed's MD5.
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, inline="always")
def _hash3(seed, a, b):
    return _mix(_mix(seed ^ np.uint64(a)) + np.uint64(b) * np.uint64(0x9E3779B97F4A7C15))


@njit(cache=True, parallel=True)
def _red_blue_rounds(n, indptr, indices, arc_rank, seed, weighted, max_rounds):
    BLUE, RED, DONE = 0, 1, 2
    mate = np.full(n, -1, np.int64)
    color = np.zeros(n, np.int8)
    sigma = np.full(n, -1, np.int64)
    threshold = np.uint64(P_BLUE * 18446744073709551615.0)
    rounds = 0
    for rnd in range(max_rounds):
        rounds = rnd + 1
        for v in prange(n):
            if color[v] != DONE:
                color[v] = BLUE if _hash3(seed, rnd, v) < threshold else RED
            sigma[v] = -1
        alive = 0
        # Blue vertices propose to a red neighbour; vertices with no unmatched
        # neighbour at all are done for good.
        for v in prange(n):
            if color[v] != BLUE:
                continue
            best = -1
            key = np.uint64(0xFFFFFFFFFFFFFFFF)
            usable = False
            for p in range(indptr[v], indptr[v + 1]):
                if arc_rank[p] == NO_RANK:
                    continue
                w = indices[p]
                if mate[w] >= 0:
                    continue
                usable = True
                if color[w] != RED:
                    continue
                k = np.uint64(arc_rank[p]) if weighted else _hash3(seed, rnd, (np.int64(v) << 32) | w)
                if k < key:
                    key = k
                    best = w
            sigma[v] = best
            if usable:
                alive += 1
            else:
                color[v] = DONE
        # Red vertices answer one of the blue neighbours that proposed to them.
        for v in prange(n):
            if color[v] != RED:
                continue
            best = -1
            key = np.uint64(0xFFFFFFFFFFFFFFFF)
            usable = False
            for p in range(indptr[v], indptr[v + 1]):
                if arc_rank[p] == NO_RANK:
                    continue
                w = indices[p]
                if mate[w] >= 0:
                    continue
                usable = True
                if color[w] != BLUE or sigma[w] != v:
                    continue
                k = np.uint64(arc_rank[p]) if weighted else _hash3(seed, rnd, (np.int64(w) << 32) | v)
                if k < key:
                    key = k
                    best = w
            sigma[v] = best
            if usable:
                alive += 1
            else:
                color[v] = DONE
        if alive == 0:
            break
        # A blue vertex whose chosen red answered it marries it; each red answers
        # one blue, so every write below has a single writer.
        for v in prange(n):
            if color[v] == BLUE:
                w = sigma[v]
                if w >= 0 and sigma[w] == v:
                    mate[v] = w
                    mate[w] = v
                    color[v] = DONE
                    color[w] = DONE
    return mate, rounds


def red_blue(n, indptr, indices, arc_rank, seed, weighted=True, max_rounds=1 << 20):
    """Randomized blue/red proposal matching (Fagginger Auer & Bisseling), run until
    maximal. Reproducible for a given seed, independent of the thread count."""
    return _red_blue_rounds(n, indptr, indices, arc_rank, np.uint64(seed), weighted, max_rounds)
