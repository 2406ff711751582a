"""½-approximate weighted matching on the CPU: Suitor, local max, greedy, red-blue.

All compare edges in the package's one edge order (heavier first, ties by the
(min id, max id) pair), either directly or through the edge ranking the Graph
caches, so ties never leave a choice: Suitor, local max and greedy all return
exactly the greedy matching, whatever the thread count. Edges of weight <= 0 are
never used.

Results are ``mate`` arrays: mate[v] is v's partner, -1 if unmatched.
"""

import numpy as np
from numba import prange

from nx_gpumatch._constants import NO_RANK, P_BLUE
from nx_gpumatch.cpu import kernel, njit, num_threads
from nx_gpumatch.cpu.atomics import atomic_add, cas, prefetch
from nx_gpumatch.cpu.random import counter_hash


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
# Suitor word of a vertex v: coarse key of the edge to its suitor s (top 32 bits)
# above s (low 32 bits). The key is the top half of the weight's order-preserving
# bit pattern, complemented, so a smaller word is a heavier offer. Equal keys are
# resolved exactly by looking up w(s, v) in v's row, so no global sort of the
# edges is needed. A word names its edge exactly, so publishing it with one CAS
# publishes weight and suitor together.
EMPTY = np.uint64(0xFFFFFFFF_FFFFFFFF)
LOW32 = np.uint64(0xFFFFFFFF)
AHEAD = 16

# What the weights allow the scan to skip (weight_mode). Unit and small-integer
# weights, the common networkx inputs, tie on almost every comparison: where
# every key is exact, equal keys mean equal weights and the edge order falls to
# the pairs without a lookup; where all weights are one positive value, the
# edge order is the pair order and one sweep in id order finds the matching
# (id_order_sweep).
GENERAL = 0
EXACT_KEYS = 1  # every positive weight has zero low 32 bits
CONSTANT = 2  # every weight is the same positive value (implies EXACT_KEYS)


@kernel
def weight_mode(w):
    """GENERAL, EXACT_KEYS or CONSTANT for the edge weights ``w`` (float64)."""
    m = w.shape[0]
    bits = w.view(np.uint64)
    w0 = w[0] if m else 0.0
    inexact = 0
    differ = 0
    for i in prange(m):
        if w[i] > 0 and (bits[i] & LOW32) != 0:
            inexact += 1
        if w[i] != w0:
            differ += 1
    if m and differ == 0 and w0 > 0:
        return CONSTANT
    return EXACT_KEYS if inexact == 0 else GENERAL


@njit(cache=True, inline="always")
def coarse_key(bits):
    """Top 32 bits of the complemented order-preserving pattern of a weight > 0,
    given the weight's IEEE bits (read through a uint64 view of the weights)."""
    return (~(bits | np.uint64(0x8000000000000000))) >> np.uint64(32)


@njit(cache=True, inline="always")
def pair_less(a, b, c, d):
    """(min(a, b), max(a, b)) < (min(c, d), max(c, d)) lexicographically."""
    lo1, hi1 = min(a, b), max(a, b)
    lo2, hi2 = min(c, d), max(c, d)
    return lo1 < lo2 or (lo1 == lo2 and hi1 < hi2)


@njit(cache=True, inline="always")
def beats(w1, u1, v1, w2, u2, v2):
    """Edge (u1, v1) of weight w1 comes before (u2, v2) of weight w2 in the edge order."""
    return w1 > w2 or (w1 == w2 and pair_less(u1, v1, u2, v2))


@njit(cache=True)
def arc_weight(indptr, indices, weights, v, s):
    """w(v, s) by binary search in v's sorted row."""
    lo = indptr[v]
    hi = indptr[v + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if indices[mid] < s:
            lo = mid + 1
        else:
            hi = mid
    return weights[lo]


@njit(cache=True, inline="always")
def _offer_beats(word, key, w, cur, v, indptr, indices, weights, mode):
    """Does cur's offer (weight w, coarse key) beat the offer held in word at v?"""
    k2 = word >> np.uint64(32)
    if key != k2:
        return key < k2
    if word == EMPTY:
        return True
    s = np.int64(word & LOW32)
    if mode != GENERAL:  # equal exact keys: equal weights
        return pair_less(cur, v, s, v)
    return beats(w, cur, v, arc_weight(indptr, indices, weights, v, s), s, v)


@njit(cache=True, inline="always")
def _best_accepting(cur, lim_k, indptr, indices, weights, wbits, word, ahead_end, mode):
    """(v, w, key) of the best edge of cur's row whose word accepts cur, or
    (-1, 0, EMPTY). Edges with keys below lim_k are not tried."""
    best_v = np.int64(-1)
    best_w = 0.0
    best_k = EMPTY
    for p in range(indptr[cur], indptr[cur + 1]):
        # Words are read at random; ask for the one AHEAD arcs on early. This
        # runs on up to ahead_end, past the row's end when the next rows are
        # scanned next (reading indices[] of a row at random would stall).
        if p + AHEAD < ahead_end:
            prefetch(word, indices[p + AHEAD])
        w = weights[p]
        if w < best_w:  # also skips weights <= 0: best_w starts at 0
            continue
        v = np.int64(indices[p])
        if w == best_w and (best_v < 0 or not pair_less(cur, v, cur, best_v)):
            continue
        key = coarse_key(wbits[p])
        if key < lim_k:
            continue
        # Stale reads are safe: a word only ever improves, so a stale one can
        # only let cur try and then lose at the CAS below.
        if _offer_beats(word[v], key, w, cur, v, indptr, indices, weights, mode):
            best_v, best_w, best_k = v, w, key
    return best_v, best_w, best_k


@njit(cache=True)
def _suitor_scan(cur, lim_k, indptr, indices, weights, wbits, word, ahead_end, mode):
    """Scan cur's row and win the best edge whose word accepts cur.

    Returns the vertex this displaced (-1 if none: cur found a free partner or
    nothing) and that vertex's bound: the coarse key of the edge it lost.

    A vertex that lost an edge only looks at edges not heavier than it: every
    heavier one was refused when it chose that edge, and words only improve, so
    those refuse it still. Bounding by the lost edge's coarse key (read from the
    word that held it, no weight lookup) and skipping only strictly smaller keys
    is conservative: an edge let through is merely refused again."""
    while True:
        best_v, best_w, best_k = _best_accepting(
            cur, lim_k, indptr, indices, weights, wbits, word, ahead_end, mode
        )
        if best_v < 0:
            return np.int64(-1), lim_k
        offer = (best_k << np.uint64(32)) | np.uint64(cur)
        seen = word[best_v]
        while _offer_beats(seen, best_k, best_w, cur, best_v, indptr, indices, weights, mode):
            got = cas(word, best_v, seen, offer)
            if got == seen:
                if seen == EMPTY:
                    return np.int64(-1), lim_k
                return np.int64(seen & LOW32), seen >> np.uint64(32)
            seen = got  # use what the CAS saw, never a re-read
        lim_k = best_k  # someone better got there first: look again


# Displaced vertices wait in a small ring while the block's next vertices are
# scanned: their rows lie at random, and waiting hides the misses. The row
# pointer is prefetched when a vertex is queued, its row STAGE_ROW scans later,
# and the words of its neighbours STAGE_WORD scans later, each stage once its
# input has arrived. The order of proposals never changes the result.
RING = 64  # a power of two > DEFER
DEFER = 8
STAGE_ROW = 2
STAGE_WORD = 4
STAGE_MAX = 64  # arcs prefetched per queued row; longer rows are prefetched as scanned
SUITOR_BLOCK = 4096


@njit(cache=True)
def _suitor_block(lo, hi, indptr, indices, weights, wbits, word, mode):
    total = indptr[indptr.shape[0] - 1]
    mask = RING - 1
    ring_v = np.empty(RING, np.int64)
    ring_k = np.empty(RING, np.uint64)
    ring_t = np.empty(RING, np.int64)  # scan count when queued
    head = 0
    tail = 0
    row_done = 0  # entries before this had their row prefetched
    word_done = 0  # ... and their neighbours' words
    t = 0
    u = lo
    while True:
        if tail - head >= DEFER or (u >= hi and tail > head):
            cur = ring_v[head & mask]
            lim_k = ring_k[head & mask]
            head += 1
            ahead_end = indptr[cur + 1]  # its neighbours' words were prefetched
        elif u < hi:
            cur = u
            lim_k = np.uint64(0)
            u += 1
            ahead_end = total
        else:
            return
        d, d_k = _suitor_scan(cur, lim_k, indptr, indices, weights, wbits, word, ahead_end, mode)
        t += 1
        if d >= 0:
            prefetch(indptr, d)
            ring_v[tail & mask] = d
            ring_k[tail & mask] = d_k
            ring_t[tail & mask] = t
            tail += 1
        row_done = max(row_done, head)
        while row_done < tail and ring_t[row_done & mask] <= t - STAGE_ROW:
            x = ring_v[row_done & mask]
            start = indptr[x]
            end = min(indptr[x + 1], start + STAGE_MAX)
            # Every cache line of the row: 16 indices or 8 weights a line, the
            # row's start anywhere in its first line.
            if end > start:
                for p in range(start, end, 16):
                    prefetch(indices, p)
                prefetch(indices, end - 1)
                for p in range(start, end, 8):
                    prefetch(weights, p)
                prefetch(weights, end - 1)
            row_done += 1
        word_done = max(word_done, head)
        while word_done < row_done and ring_t[word_done & mask] <= t - STAGE_WORD:
            x = ring_v[word_done & mask]
            start = indptr[x]
            for p in range(start, min(indptr[x + 1], start + STAGE_MAX)):
                prefetch(word, indices[p])
            word_done += 1


@njit(cache=True)
def _suitor_worker(claimed, num_blocks, size, indptr, indices, weights, wbits, word, mode):
    n = word.shape[0]
    while True:
        b = atomic_add(claimed, 0, 1)
        if b >= num_blocks:
            return
        lo = b * size
        _suitor_block(lo, min(lo + size, n), indptr, indices, weights, wbits, word, mode)


@kernel
def _suitor_run(n, indptr, indices, weights, wbits, word, workers, mode):
    # Each worker claims the next block of vertices until none are left, so a
    # thread slowed by hub rows or by another process on its core does less of
    # the work instead of holding up the end. Small graphs get small blocks, so
    # that every thread has work (and tests on small graphs see threads contend).
    size = max(1, min(SUITOR_BLOCK, n // 64))
    num_blocks = (n + size - 1) // size
    claimed = np.zeros(1, np.int64)
    for _ in prange(workers):
        _suitor_worker(claimed, num_blocks, size, indptr, indices, weights, wbits, word, mode)


@kernel
def _mates_from_words(word):
    n = word.shape[0]
    mate = np.full(n, -1, np.int64)
    for v in prange(n):
        w = word[v]
        if w != EMPTY:
            s = np.int64(w & LOW32)
            # At the end the suitor relation is symmetric; checking keeps the
            # result a matching even if that invariant were ever broken.
            if word[s] != EMPTY and np.int64(word[s] & LOW32) == v:
                mate[v] = s
    return mate


def suitor(n, indptr, indices, weights, mode=GENERAL):
    """Parallel lock-free Suitor (Manne and Halappanavar 2014): equals the greedy
    matching. ``mode``: what :func:`weight_mode` says of the weights (rows must
    be sorted by id); GENERAL is right for any weights. One weight for every
    edge is scanned as exact keys: :func:`run` takes :func:`id_order_sweep`
    there instead."""
    mode = min(mode, EXACT_KEYS)
    word = np.full(n, EMPTY, np.uint64)
    wbits = weights.view(np.uint64)
    _suitor_run(n, indptr, indices, weights, wbits, word, num_threads(), mode)
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


# Once a round matches at most this many vertices, the rest runs on one thread.
# A chain of ties (a path, a ring lattice with unit weights) matches one edge
# per round; rounds over every vertex then cost O(n) each and O(n^2) in all.
SERIAL_FRONTIER = 2048


def local_max_rounds(n, sptr, snbr):
    """Locally-dominant matching on rows sorted best-first (every vertex points
    at its best free neighbour; mutual pointers match): equals the greedy
    matching, in rounds. A round either updates every vertex still looking
    (pull) or only those that pointed at a vertex just matched (push: the
    rows of the vertices just matched are read), whichever reads less, and
    once a round matches few vertices the rest runs on one thread, pushing
    from one matched vertex at a time: each row is read O(1) times in pushes,
    however many rounds the ties make."""
    mate, head, cand, frontier = _first_round(n, sptr, snbr)
    looking = np.flatnonzero((mate < 0) & (cand >= 0))
    mark = np.zeros(n, np.bool_)
    while frontier.shape[0] > SERIAL_FRONTIER:
        push = _row_lengths(frontier, sptr)
        if looking.shape[0] <= push:
            looking, frontier = _pull_round.run(
                looking.shape[0], looking, sptr, snbr, head, cand, mate
            )
        else:
            frontier = _push_round.run(push, frontier, sptr, snbr, head, cand, mate, mark)
    _finish(frontier, sptr, snbr, head, cand, mate)
    return mate


@kernel
def _first_round(n, sptr, snbr):
    mate = np.full(n, -1, np.int64)
    head = sptr[:-1].copy()  # next candidate of each row; only moves forward
    cand = np.full(n, -1, np.int64)
    for u in prange(n):
        cand[u] = snbr[head[u]] if head[u] < sptr[u + 1] else -1
    # Each pair is written by its smaller end only, so writes never collide.
    for u in prange(n):
        c = cand[u]
        if c > u and cand[c] == u:
            mate[u] = c
            mate[c] = u
    return mate, head, cand, np.flatnonzero(mate >= 0)


@njit(cache=True)
def _row_lengths(vertices, sptr):
    total = 0
    for i in range(vertices.shape[0]):
        total += sptr[vertices[i] + 1] - sptr[vertices[i]]
    return total


@kernel
def _pull_round(looking, sptr, snbr, head, cand, mate):
    """Every free vertex of ``looking`` (a superset of those with a
    candidate) finds its best free neighbour; mutual pairs match. Returns
    (the vertices still looking, those matched now)."""
    nl = looking.shape[0]
    live = np.empty(nl, np.bool_)
    # mate[] is only read here, so every thread sees the same matched set.
    for i in prange(nl):
        u = looking[i]
        live[i] = mate[u] < 0
        if live[i]:
            cand[u] = _next_candidate(u, sptr, snbr, head, mate)
    # Both ends of a mutual pair are live; the smaller writes it.
    for i in prange(nl):
        u = looking[i]
        c = cand[u]
        if live[i] and c > u and cand[c] == u:
            mate[u] = c
            mate[c] = u
    # One pass sorts them out (a chain of numpy masks read the arrays 13 times).
    k_look = 0
    k_done = 0
    for i in range(nl):
        if live[i]:
            u = looking[i]
            if mate[u] >= 0:
                k_done += 1
            elif cand[u] >= 0:
                k_look += 1
    still = np.empty(k_look, np.int64)
    done = np.empty(k_done, np.int64)
    k_look = 0
    k_done = 0
    for i in range(nl):
        if live[i]:
            u = looking[i]
            if mate[u] >= 0:
                done[k_done] = u
                k_done += 1
            elif cand[u] >= 0:
                still[k_look] = u
                k_look += 1
    return still, done


@njit(cache=True, inline="always")
def _next_candidate(y, sptr, snbr, head, mate):
    """y's best neighbour not matched yet (-1: none), moving y's head past the
    matched ones: mate[] only gains entries, so they never come back."""
    h = head[y]
    end = sptr[y + 1]
    while h < end and mate[snbr[h]] >= 0:
        h += 1
    head[y] = h
    return snbr[h] if h < end else -1


@kernel
def _push_round(frontier, sptr, snbr, head, cand, mate, mark):
    """One parallel round: the free vertices that pointed at a vertex of
    ``frontier`` (just matched) find their next candidate, and mutual pairs
    among them match. Returns the vertices matched in this round."""
    # The free vertices pointing at a frontier vertex, each once (it points at
    # one vertex, whose row holds it once), in a buffer of the rows' arcs: the
    # round costs the frontier's rows, never a pass over all vertices.
    nf = frontier.shape[0]
    start = np.empty(nf + 1, np.int64)
    start[0] = 0
    for i in range(nf):
        x = frontier[i]
        start[i + 1] = start[i] + sptr[x + 1] - sptr[x]
    found = np.empty(start[nf], np.int64)
    for i in prange(nf):
        x = frontier[i]
        for p in range(sptr[x], sptr[x + 1]):
            y = snbr[p]
            found[start[i] + p - sptr[x]] = y if mate[y] < 0 and cand[y] == x else -1
    again = found[found >= 0]
    for i in prange(again.shape[0]):
        mark[again[i]] = True  # y looks again
    # mate[] is only read here, so every thread sees the same matched set.
    for i in prange(again.shape[0]):
        y = again[i]
        cand[y] = _next_candidate(y, sptr, snbr, head, mate)
    # A pair is written by its end that looked again, the smaller if both did.
    for i in prange(again.shape[0]):
        y = again[i]
        c = cand[y]
        if c >= 0 and cand[c] == y and (y < c or not mark[c]):
            mate[y] = c
            mate[c] = y
    matched = again[mate[again] >= 0]
    partners = mate[matched]
    # A partner that looked again is in ``matched`` itself.
    out = np.concatenate((matched, partners[~mark[partners]]))
    for i in range(again.shape[0]):
        mark[again[i]] = False
    return out


@njit(cache=True)
def _finish(frontier, sptr, snbr, head, cand, mate):
    """The remaining rounds on one thread, one matched vertex at a time (the
    locally-dominant edges are the same in any order)."""
    stack = np.empty(max(2 * frontier.shape[0], 16), np.int64)
    top = frontier.shape[0]
    stack[:top] = frontier
    while top > 0:
        top -= 1
        x = stack[top]
        for p in range(sptr[x], sptr[x + 1]):
            y = snbr[p]
            if mate[y] >= 0 or cand[y] != x:
                continue
            c = _next_candidate(y, sptr, snbr, head, mate)
            cand[y] = c
            if c >= 0 and cand[c] == y:
                mate[y] = c
                mate[c] = y
                if top + 2 > stack.shape[0]:
                    grown = np.empty(2 * stack.shape[0], np.int64)
                    grown[:top] = stack[:top]
                    stack = grown
                stack[top] = y
                stack[top + 1] = c
                top += 2


@njit(cache=True)
def id_order_sweep(n, indptr, indices):
    """The greedy matching when every edge has one positive weight, without a
    ranking: the edge order is then the (min id, max id) order, so vertices in
    id order each take their first free neighbour above them (rows are sorted
    by id). This is also the locally-dominant matching, settled one edge at a
    time: the smallest free vertex u with a free neighbour points at the
    smallest such v, and v points back, since a free neighbour of v below u
    would be a smaller free vertex with a free neighbour. Every neighbour
    below u is matched by u's turn, so the scan starts above u."""
    mate = np.full(n, -1, np.int64)
    for u in range(n):
        if mate[u] >= 0:
            continue
        lo = indptr[u]
        hi = indptr[u + 1]
        while lo < hi:  # first neighbour above u
            mid = (lo + hi) >> 1
            if indices[mid] <= u:
                lo = mid + 1
            else:
                hi = mid
        for p in range(lo, indptr[u + 1]):
            v = indices[p]
            if mate[v] < 0:
                mate[u] = v
                mate[v] = u
                break
    return mate


# ---------------------------------------------------------------- red-blue
# Colours and random selections come from counter_hash, standing in for the
# MD5 hashing of Fagginger Auer & Bisseling.


BLUE, RED, DONE = 0, 1, 2


@njit(cache=True)
def _choose(v, blue_side, indptr, indices, arc_rank, mate, color, sigma, seed, rnd, weighted):
    """select() of Fagginger Auer & Bisseling for vertex v: a blue v picks among its red neighbours,
    a red v among the blue neighbours that proposed to it. Weighted: the best
    edge; random: the smallest hash of (round, blue end, red end).
    Returns (choice or -1, whether v still has an unmatched neighbour)."""
    want = RED if blue_side else BLUE
    best = -1
    key = np.uint64(0xFFFFFFFFFFFFFFFF)
    usable = False
    for p in range(indptr[v], indptr[v + 1]):
        if arc_rank[p] == NO_RANK:
            continue
        w = np.int64(indices[p])
        if mate[w] >= 0:
            continue
        usable = True
        if color[w] != want or (not blue_side and sigma[w] != v):
            continue
        if weighted:
            k = np.uint64(arc_rank[p])
        else:
            b, r = (v, w) if blue_side else (w, v)
            k = counter_hash(seed, rnd, (np.int64(b) << 32) | r)
        if k < key:
            key = k
            best = w
    return best, usable


@njit(cache=True)
def _propose_or_answer(
    v, blue_side, indptr, indices, arc_rank, mate, color, sigma, seed, rnd, weighted
):
    best, usable = _choose(
        v, blue_side, indptr, indices, arc_rank, mate, color, sigma, seed, rnd, weighted
    )
    sigma[v] = best
    if not usable:
        color[v] = DONE


@kernel
def _red_blue_rounds(n, indptr, indices, arc_rank, seed, weighted, max_rounds):
    mate = np.full(n, -1, np.int64)
    color = np.zeros(n, np.int8)
    sigma = np.full(n, -1, np.int64)
    threshold = np.uint64(P_BLUE * 18446744073709551615.0)
    rounds = 0
    for rnd in range(max_rounds):
        rounds = rnd + 1
        for v in prange(n):
            if color[v] != DONE:
                color[v] = BLUE if counter_hash(seed, rnd, v) < threshold else RED
            sigma[v] = -1
        # Blue vertices propose, then red ones answer. A vertex with no unmatched
        # neighbour is done for good; turning BLUE or RED into DONE here never
        # changes another vertex's test (it only asks "is w red/blue?").
        for side in range(2):
            color_now = BLUE if side == 0 else RED
            for v in prange(n):
                if color[v] == color_now:
                    _propose_or_answer(
                        np.int64(v),
                        side == 0,
                        indptr,
                        indices,
                        arc_rank,
                        mate,
                        color,
                        sigma,
                        seed,
                        rnd,
                        weighted,
                    )
        alive = 0
        for v in prange(n):
            if color[v] != DONE:
                alive += 1
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


def _best_first_rows(graph):
    """Each row's usable neighbours best-first, (indptr, indices)."""
    n, usable = graph.num_nodes, graph.num_usable()
    return sorted_adjacency(n, graph.edge_src, graph.edge_dst, graph.edge_order(), usable)


def run(graph, algorithm, *, seed=0, select="weighted"):
    """Mate array of ``graph`` (an :class:`nx_gpumatch.Graph`), the entry the
    GPU engine's ``run`` also offers: ``algorithm`` "suitor", "greedy",
    "local_max" or "red_blue" (``seed``, ``select`` = "weighted" or "random").
    The caller sets the thread count (``nx_gpumatch.cpu.run``)."""
    n = graph.num_nodes
    mode = graph.cached("weight_mode", lambda: weight_mode(graph.edge_weight))
    if mode == CONSTANT and algorithm != "red_blue":
        # All three are the greedy matching; this order needs no ranking, no
        # rounds (a chain of ties settles one edge per round) and no
        # proposals (every vertex's first free neighbour tends to be a hub:
        # on a 1M-edge power-law graph two threads' proposals took 7-20 ms
        # as they contended for its word, one thread 12 ms, the sweep 3.5).
        return id_order_sweep(n, graph.indptr, graph.indices)
    if algorithm == "suitor":
        return suitor(n, graph.indptr, graph.indices, graph.weights, mode)
    usable = graph.num_usable()
    if algorithm == "greedy":
        return greedy(n, graph.edge_src, graph.edge_dst, graph.edge_order(), usable)
    if algorithm == "local_max":
        adj = graph.cached("sorted_adjacency", lambda: _best_first_rows(graph))
        return local_max_rounds(n, *adj)
    if algorithm == "red_blue":
        mate, _rounds = red_blue(
            n, graph.indptr, graph.indices, graph.arc_rank(), seed, select == "weighted"
        )
        return mate
    raise ValueError(f"the CPU engine has no matching algorithm {algorithm!r}")
