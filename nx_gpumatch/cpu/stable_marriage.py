"""Stable marriage (SM and SMI) on the CPU: Gale-Shapley and McVitie-Wilson,
sequential and parallel, plus the preprocessing they share.

Preferences arrive as one CSR structure per side (``ptr`` int64, ``choices``
int32: person i ranks ``choices[ptr[i]:ptr[i+1]]``, best first). Before solving,
each man's list is reduced to the women who rank him too, and every entry is
packed as ``(her rank of him) << 32 | woman`` (Naim et al.), so a
proposal reads whom he courts and how she ranks him from one word.

A woman's state is one int64 word, ``(her rank of her suitor) << 32 | suitor``;
smaller is better and EMPTY means no suitor. Words only ever decrease, so a
stale read can only make a man try and then fail at the CAS, never skip a
woman he could win. Every engine returns the unique man-optimal matching.
"""

import numpy as np
from numba import prange

from nx_gpumatch._constants import NO_RANK
from nx_gpumatch.cpu import kernel, njit
from nx_gpumatch.cpu.atomics import cas, prefetch
from nx_gpumatch.cpu.random import counter_hash

LOW = np.int64(0xFFFFFFFF)
HIGH = np.int64(-0x100000000)  # ~LOW: the rank half of a packed word
EMPTY = np.int64(0x7FFFFFFF_FFFFFFFF)

# Men in flight per thread in the parallel McVitie-Wilson engine, and how far
# ahead the parallel Gale-Shapley queue prefetches: enough outstanding loads to
# hide memory latency when displaced men jump between lists far apart.
LANES = 32
LOOKAHEAD = 32
# Women's lists this short (on average, weighted by use) are searched directly
# for each man's entry instead of being transposed.
SEARCH_COST = 64
# Lists up to this length are checked for repeats by comparing entries pairwise.
SHORT_LIST = 32

# Largest transposed block built at once while computing mutual ranks (int64
# entries): bounds the extra memory on dense instances to 1 GiB.
TRANSPOSE_BLOCK = 1 << 27


# ------------------------------------------------------------ helpers
@njit(cache=True)
def row_bounds(ptr, parts):
    """Split rows into ``parts`` contiguous ranges with about equal entry counts."""
    n = ptr.shape[0] - 1
    total = ptr[n]
    b = np.empty(parts + 1, np.int64)
    b[0] = 0
    for t in range(1, parts):
        target = (total * t) // parts
        b[t] = max(b[t - 1], min(n, np.searchsorted(ptr, target)))
    b[parts] = n
    return b


@kernel
def first_bad_entry(ptr, choices, n_other, bounds):
    """Index of the first entry that is out of range or repeats a name within its
    list, or -1. One stamp array per thread: stamp[x] == row marks x as seen."""
    parts = bounds.shape[0] - 1
    bad = np.full(parts, -1, np.int64)
    for t in prange(parts):
        bad[t] = _first_bad_in_rows(ptr, choices, n_other, bounds[t], bounds[t + 1])
    for t in range(parts):
        if bad[t] >= 0:
            return bad[t]
    return np.int64(-1)


@njit(cache=True)
def _first_bad_in_rows(ptr, choices, n_other, lo, hi):
    # Short lists compare pairwise; a stamp table (random access into an array
    # as long as the other side) is only built once a long list shows up.
    stamp = np.empty(0, np.int64)
    for r in range(lo, hi):
        start = ptr[r]
        end = ptr[r + 1]
        if end - start <= SHORT_LIST:
            for q in range(start, end):
                x = choices[q]
                if x < 0 or x >= n_other:
                    return q
                for p in range(start, q):
                    if choices[p] == x:
                        return q
            continue
        if stamp.shape[0] == 0:
            stamp = np.full(n_other, -1, np.int64)
        for q in range(start, end):
            x = choices[q]
            if x < 0 or x >= n_other or stamp[x] == r:
                return q
            stamp[x] = r
    return np.int64(-1)


# ------------------------------------------------- transposing one side
@kernel
def transpose_offsets(ptr, choices, n_dst, bounds):
    """Counting-sort offsets for the transpose of a CSR side.

    Returns (tptr, cursor): the transposed row pointers and, per source part t
    and target row d, where part t starts writing in row d. Parts write in
    order, so each transposed row lists its sources in increasing id whatever
    the thread count.
    """
    parts = bounds.shape[0] - 1
    cursor = np.zeros((parts, n_dst), np.int64)
    for t in prange(parts):
        for q in range(ptr[bounds[t]], ptr[bounds[t + 1]]):
            cursor[t, choices[q]] += 1
    tptr = np.empty(n_dst + 1, np.int64)
    tptr[0] = 0
    for d in range(n_dst):
        s = np.int64(0)
        for t in range(parts):
            c = cursor[t, d]
            cursor[t, d] = tptr[d] + s
            s += c
        tptr[d + 1] = tptr[d] + s
    return tptr, cursor


@kernel
def transpose_block(ptr, choices, bounds, a, b, tptr, cursor, out):
    """Write the transposed rows a..b-1 into ``out`` (offset by tptr[a]); each
    entry is ``(position of d in source s's list) << 32 | s``."""
    parts = bounds.shape[0] - 1
    base = tptr[a]
    for t in prange(parts):
        _transpose_part(ptr, choices, bounds[t], bounds[t + 1], a, b, t, base, cursor, out)


@njit(cache=True)
def _transpose_part(ptr, choices, lo, hi, a, b, t, base, cursor, out):
    for s in range(lo, hi):
        start = ptr[s]
        for q in range(start, ptr[s + 1]):
            d = choices[q]
            if d >= a and d < b:
                k = cursor[t, d]
                cursor[t, d] = k + 1
                out[k - base] = ((q - start) << 32) | s


@kernel
def transpose_ids(ptr, choices, bounds, tptr, cursor, out):
    """The transpose's source ids only (int32), all rows at once."""
    parts = bounds.shape[0] - 1
    for t in prange(parts):
        _transpose_ids_part(ptr, choices, bounds[t], bounds[t + 1], t, cursor, out)


@njit(cache=True)
def _transpose_ids_part(ptr, choices, lo, hi, t, cursor, out):
    for s in range(lo, hi):
        for q in range(ptr[s], ptr[s + 1]):
            d = choices[q]
            k = cursor[t, d]
            cursor[t, d] = k + 1
            out[k] = s


@kernel
def _mutual_block(m_ptr, m_choices, n_women, mbounds, base, tptr, tblock, packed, kept):
    """For the men in ``mbounds``: keep the women who rank them, packed with her rank.

    The women ranking man m are scattered into a per-thread stamp table, then his
    own list is filtered through it in his order of preference.
    """
    parts = mbounds.shape[0] - 1
    for t in prange(parts):
        _mutual_rows(
            m_ptr, m_choices, n_women, mbounds[t], mbounds[t + 1], base, tptr, tblock, packed, kept
        )


@njit(cache=True)
def _mutual_rows(m_ptr, m_choices, n_women, lo, hi, base, tptr, tblock, packed, kept):
    stamp = np.full(n_women, -1, np.int64)
    val = np.empty(n_women, np.int64)
    for m in range(lo, hi):
        for k in range(tptr[m] - base, tptr[m + 1] - base):
            te = tblock[k]
            w = te & LOW
            stamp[w] = m
            val[w] = te
        out = m_ptr[m]
        for e in range(m_ptr[m], m_ptr[m + 1]):
            w = m_choices[e]
            if stamp[w] == m:
                packed[out] = val[w]
                out += 1
        kept[m] = out - m_ptr[m]


@njit(cache=True)
def _compact(m_ptr, kept, packed):
    """Slide each man's kept entries left so the lists are contiguous again.
    Sequential: a destination never lies after its source, so in increasing
    order no entry is overwritten before it is moved."""
    n = m_ptr.shape[0] - 1
    ptr = np.empty(n + 1, np.int64)
    ptr[0] = 0
    for m in range(n):
        src = m_ptr[m]
        dst = ptr[m]
        for i in range(kept[m]):
            packed[dst + i] = packed[src + i]
        ptr[m + 1] = dst + kept[m]
    return ptr


@kernel
def _search_block(m_ptr, m_choices, w_ptr, w_choices, mbounds, packed, kept):
    """For short women's lists: find each man in the list of every woman he
    ranks by a linear scan. Loads run ahead with prefetches, since consecutive
    entries point at unrelated women."""
    parts = mbounds.shape[0] - 1
    for t in prange(parts):
        _search_rows(m_ptr, m_choices, w_ptr, w_choices, mbounds[t], mbounds[t + 1], packed, kept)


@njit(cache=True)
def _search_rows(m_ptr, m_choices, w_ptr, w_choices, lo, hi, packed, kept):
    e1 = m_ptr[hi]
    for m in range(lo, hi):
        out = m_ptr[m]
        for e in range(m_ptr[m], m_ptr[m + 1]):
            if e + 16 < e1:
                prefetch(w_ptr, m_choices[e + 16])
            if e + 8 < e1:
                prefetch(w_choices, w_ptr[m_choices[e + 8]])
            w = m_choices[e]
            start = w_ptr[w]
            for q in range(start, w_ptr[w + 1]):
                if w_choices[q] == m:
                    packed[out] = ((q - start) << 32) | w
                    out += 1
                    break
        kept[m] = out - m_ptr[m]


@kernel
def _search_cost(m_ptr, m_choices, w_ptr, bounds):
    """Comparisons a direct search could make: a man's entry naming woman w
    scans up to deg(w) entries."""
    parts = bounds.shape[0] - 1
    cost = 0.0
    for t in prange(parts):
        c = 0.0
        for e in range(m_ptr[bounds[t]], m_ptr[bounds[t + 1]]):
            w = m_choices[e]
            c += w_ptr[w + 1] - w_ptr[w]
        cost += c
    return cost


def mutual_lists(
    m_ptr, m_choices, w_ptr, w_choices, n_men, n_women, parts, block=TRANSPOSE_BLOCK, method=None
):
    """Men's lists reduced to mutually ranked women, packed with the women's ranks.

    Returns (ptr, packed): man m's usable entries are packed[ptr[m]:ptr[m+1]],
    best first, each ``(her position of him in her list) << 32 | woman``.

    Short women's lists are searched in place (no extra memory). Otherwise the
    women's side is transposed in blocks of at most ``block`` entries, so no
    second full-size copy of a dense instance is ever held. ``method``
    ("search" or "transpose") overrides the choice.
    """
    packed = np.empty(m_choices.shape[0], np.int64)
    kept = np.zeros(n_men, np.int64)
    if method is None:
        wdeg = np.diff(w_ptr)
        if wdeg.size == 0 or wdeg.max() <= SEARCH_COST:
            method = "search"
        elif w_choices.shape[0] > SEARCH_COST * n_women:
            method = "transpose"  # long lists on average: skip counting the cost
        else:
            cost = _search_cost(m_ptr, m_choices, w_ptr, row_bounds(m_ptr, parts))
            method = "search" if cost <= SEARCH_COST * max(m_choices.shape[0], 1) else "transpose"
    if method == "search":
        _search_block(m_ptr, m_choices, w_ptr, w_choices, row_bounds(m_ptr, parts), packed, kept)
    else:
        _transposed_mutual(
            m_ptr, m_choices, w_ptr, w_choices, n_men, n_women, parts, block, packed, kept
        )
    degree = np.diff(m_ptr)
    if np.array_equal(kept, degree):
        return m_ptr.astype(np.int64, copy=True), packed
    ptr = _compact(m_ptr, kept, packed)
    total = int(ptr[-1])
    packed = packed[:total].copy() if total < 0.75 * packed.shape[0] else packed[:total]
    return ptr, packed


def _transposed_mutual(
    m_ptr, m_choices, w_ptr, w_choices, n_men, n_women, parts, block, packed, kept
):
    wb = row_bounds(w_ptr, parts)
    tptr, cursor = transpose_offsets(w_ptr, w_choices, n_men, wb)
    a = 0
    tblock = None
    while a < n_men:
        # Largest run of men whose transposed rows fit the block (at least one).
        b = int(np.searchsorted(tptr, tptr[a] + block, side="right")) - 1
        b = min(n_men, max(b, a + 1))
        size = int(tptr[b] - tptr[a])
        if tblock is None or tblock.shape[0] < size:
            tblock = np.empty(max(size, 1), np.int64)
        transpose_block(w_ptr, w_choices, wb, a, b, tptr, cursor, tblock)
        mb = a + row_bounds(m_ptr[a : b + 1] - m_ptr[a], parts)
        _mutual_block(m_ptr, m_choices, n_women, mb, tptr[a], tptr, tblock, packed, kept)
        a = b


# ------------------------------------------------------------ engine entry
def run(prefs, algorithm, *, parallel=False, parts=1):
    """The entry every stable-marriage engine offers (see
    :func:`nx_gpumatch.gpu.stable_marriage.run`): the man-optimal matching of
    prepared preferences (``prefs.ptr``, ``prefs.packed``, ``prefs.n_men``,
    ``prefs.n_women``; see :class:`nx_gpumatch.algorithms.stable_marriage.Preferences`)
    by ``algorithm`` ("mcvitie_wilson" or "gale_shapley"), sequential or on
    ``parts`` threads (``parallel``). The caller sets the thread count
    (``nx_gpumatch.cpu.run``).

    Returns (mate, proposals): the int64 man -> woman array (-1 unmatched)
    and the number of list entries the men considered.
    """
    if algorithm == "mcvitie_wilson":
        solver = mcvitie_wilson_parallel if parallel else mcvitie_wilson
    elif algorithm == "gale_shapley":
        solver = gale_shapley_parallel if parallel else gale_shapley
    else:
        raise ValueError(f"the CPU engine has no stable-marriage algorithm {algorithm!r}")
    extra = (parts,) if parallel else ()
    word, nxt = solver(prefs.ptr, prefs.packed, prefs.n_women, *extra)
    mate = mates_from_words(word, prefs.n_men)
    return mate, int((nxt - prefs.ptr[:-1]).sum())


# ------------------------------------------------------ sequential engines
@njit(cache=True)
def mcvitie_wilson(ptr, packed, n_women):
    """Sequential McVitie-Wilson: a rejected man proposes again at once (the
    stack form of Algorithm 1), before the next new man enters.

    Returns (word, nxt): each woman's final word and where each man stopped.
    """
    n = ptr.shape[0] - 1
    word = np.full(n_women, EMPTY, np.int64)
    nxt = ptr[:-1].copy()
    for u in range(n):
        cur = np.int64(u)
        while cur >= 0:
            cur = _propose_plain(cur, ptr, packed, word, nxt)
    return word, nxt


@njit(cache=True)
def gale_shapley(ptr, packed, n_women):
    """Sequential Gale-Shapley with a FIFO queue of free men (Algorithm 1)."""
    n = ptr.shape[0] - 1
    word = np.full(n_women, EMPTY, np.int64)
    nxt = ptr[:-1].copy()
    cap = max(n, 1)
    # A man is in the queue at most once, so n slots always suffice.
    queue = np.empty(cap, np.int32)
    for i in range(n):
        queue[i] = i
    head = 0
    size = n
    while size > 0:
        cur = np.int64(queue[head])
        head += 1
        if head == cap:
            head = 0
        size -= 1
        d = _propose_plain(cur, ptr, packed, word, nxt)
        if d >= 0:
            tail = head + size
            if tail >= cap:
                tail -= cap
            queue[tail] = d
            size += 1
    return word, nxt


@njit(cache=True, inline="always")
def _propose_plain(cur, ptr, packed, word, nxt):
    """cur courts his best remaining woman who prefers him to her suitor.
    Returns the man she drops (or -1: none, or cur has nobody left)."""
    e = nxt[cur]
    end = ptr[cur + 1]
    while e < end:
        pe = packed[e]
        e += 1
        w = pe & LOW
        offer = (pe & HIGH) | cur
        old = word[w]
        if offer < old:
            word[w] = offer
            nxt[cur] = e
            return np.int64(-1) if old == EMPTY else old & LOW
    nxt[cur] = end
    return np.int64(-1)


# -------------------------------------------------------- parallel engines
@njit(cache=True)
def _propose(cur, ptr, packed, word, nxt, atomic):
    """_propose_plain with a CAS on the woman's word when ``atomic`` (more
    than one thread runs).

    nxt[cur] is written before the CAS that makes cur her suitor, so whichever
    thread later displaces cur (with a CAS on the same word) sees it.
    """
    e = nxt[cur]
    end = ptr[cur + 1]
    while e < end:
        pe = packed[e]
        e += 1
        w = pe & LOW
        offer = (pe & HIGH) | cur
        seen = word[w]
        if offer < seen:
            nxt[cur] = e
            if not atomic:
                word[w] = offer
                return np.int64(-1) if seen == EMPTY else seen & LOW
            while True:
                got = cas(word, w, seen, offer)
                if got == seen:
                    return np.int64(-1) if seen == EMPTY else seen & LOW
                seen = got  # what the CAS saw, never a re-read
                if seen < offer:
                    break  # a better man got her meanwhile; she is lost for good
    nxt[cur] = end
    return np.int64(-1)


@njit(cache=True, inline="always")
def _prefetch_next(packed, nxt, m):
    e = nxt[m]
    if e < packed.shape[0]:
        prefetch(packed, e)


@njit(cache=True)
def _mw_lanes(lo, hi, ptr, packed, word, nxt, atomic):
    """McVitie-Wilson for men lo..hi-1 with LANES men in flight, visited in turn.

    A lane works on one man until a proposal displaces nobody; a man it
    displaces takes over the lane at once (the McVitie-Wilson stack, depth one
    per lane). When a man enters a lane his next entry is prefetched, so by the
    lane's next turn the load that would have stalled has landed.
    """
    cur = np.full(LANES, -1, np.int64)
    new = lo
    active = 0
    for k in range(LANES):
        if new < hi:
            cur[k] = new
            _prefetch_next(packed, nxt, new)
            new += 1
            active += 1
    k = 0
    while active > 0:
        c = cur[k]
        if c >= 0:
            d = _propose(c, ptr, packed, word, nxt, atomic)
            if d < 0:
                if new < hi:
                    d = new
                    new += 1
                else:
                    active -= 1
            if d >= 0:
                _prefetch_next(packed, nxt, d)
            cur[k] = d
        k += 1
        if k == LANES:
            k = 0


@kernel
def _mw_parallel_run(ptr, packed, word, nxt, bounds):
    atomic = bounds.shape[0] > 2
    for t in prange(bounds.shape[0] - 1):
        _mw_lanes(bounds[t], bounds[t + 1], ptr, packed, word, nxt, atomic)


def mcvitie_wilson_parallel(ptr, packed, n_women, parts):
    """Parallel McVitie-Wilson: men split across ``parts`` threads; a thread
    keeps proposing for each man it displaces until a proposal displaces
    nobody (see _mw_lanes), with a CAS on each woman's word."""
    word = np.full(n_women, EMPTY, np.int64)
    nxt = ptr[:-1].copy()
    _mw_parallel_run(ptr, packed, word, nxt, row_bounds(ptr, parts))
    return word, nxt


@njit(cache=True)
def _gs_local(lo, hi, n, ptr, packed, word, nxt, atomic):
    cap = max(n, 1)
    queue = np.empty(cap, np.int32)
    size = hi - lo
    for i in range(size):
        queue[i] = lo + i
    head = 0
    while size > 0:
        if size > LOOKAHEAD:
            j = head + LOOKAHEAD
            if j >= cap:
                j -= cap
            _prefetch_next(packed, nxt, queue[j])
        cur = np.int64(queue[head])
        head += 1
        if head == cap:
            head = 0
        size -= 1
        d = _propose(cur, ptr, packed, word, nxt, atomic)
        if d >= 0:
            tail = head + size
            if tail >= cap:
                tail -= cap
            queue[tail] = d
            size += 1


@kernel
def _gs_parallel_run(ptr, packed, word, nxt, bounds):
    n = ptr.shape[0] - 1
    atomic = bounds.shape[0] > 2
    for t in prange(bounds.shape[0] - 1):
        _gs_local(bounds[t], bounds[t + 1], n, ptr, packed, word, nxt, atomic)


def gale_shapley_parallel(ptr, packed, n_women, parts):
    """Parallel Gale-Shapley: men split across ``parts`` threads, each with its
    own FIFO queue; a man a thread displaces joins that thread's queue."""
    word = np.full(n_women, EMPTY, np.int64)
    nxt = ptr[:-1].copy()
    _gs_parallel_run(ptr, packed, word, nxt, row_bounds(ptr, parts))
    return word, nxt


@njit(cache=True)
def mates_from_words(word, n_men):
    """man -> woman array (-1 unmatched). A man is suitor of at most one woman.
    Sequential: one pass costs less than waking the thread pool."""
    mate = np.full(n_men, -1, np.int64)
    for w in range(word.shape[0]):
        s = word[w]
        if s != EMPTY:
            mate[s & LOW] = w
    return mate


# ---------------------------------------------------------------- checks
@kernel
def blocking_status(ptr, packed, mate, n_women):
    """Per man: 0 fine, 1 blocks with woman other[m], 2 married to a woman who
    is not a mutually ranked partner. ``mate`` must name distinct women."""
    n = ptr.shape[0] - 1
    status = np.zeros(n, np.int8)
    other = np.full(n, -1, np.int64)
    her = np.full(n_women, NO_RANK, np.int64)  # her rank of her husband
    stop = np.empty(n, np.int64)  # his husband entry (he prefers all before it)
    bad = 0
    for m in prange(n):
        w = mate[m]
        stop[m] = ptr[m + 1]
        if w >= 0:
            e = _find(ptr, packed, m, w)
            if e < 0:
                status[m] = 2
                bad += 1
            else:
                stop[m] = e
                her[w] = packed[e] >> 32
    if bad > 0:
        return status, other
    for m in prange(n):
        for e in range(ptr[m], stop[m]):
            pe = packed[e]
            w = pe & LOW
            if (pe >> 32) < her[w]:
                status[m] = 1
                other[m] = w
                break
    return status, other


@njit(cache=True)
def _find(ptr, packed, m, w):
    for e in range(ptr[m], ptr[m + 1]):
        if (packed[e] & LOW) == w:
            return e
    return np.int64(-1)


# ------------------------------------------------------------ generators
@njit(cache=True, inline="always")
def _below(x, n):
    """Map a random 64-bit value to [0, n) (n < 2**32)."""
    return np.int64(((x >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@kernel
def easy_lengths(n, seed):
    """List length of each man: (1 + eps) ln n with eps uniform in [0, 1],
    at least 1 and at most n."""
    k = np.empty(n + 1, np.int64)
    k[0] = 0
    ln = np.log(n) if n > 1 else 0.0
    for m in prange(n):
        eps = np.float64(counter_hash(seed, 0, m) >> np.uint64(11)) * (1.0 / 9007199254740992.0)
        km = np.int64((1.0 + eps) * ln)
        k[m + 1] = min(n, max(1, km))
    return np.cumsum(k)


@kernel
def easy_men(n, seed, ptr):
    """Each man's distinct random women, in random order (rejection sampling:
    lists are O(log n) long)."""
    choices = np.empty(ptr[n], np.int32)
    for m in prange(n):
        _easy_row(np.int64(m), n, seed, ptr, choices)
    return choices


@njit(cache=True)
def _easy_row(m, n, seed, ptr, choices):
    lo = ptr[m]
    hi = ptr[m + 1]
    j = np.int64(0)
    for e in range(lo, hi):
        while True:
            j += 1
            w = _below(counter_hash(seed, m + 1, j), n)
            dup = False
            for f in range(lo, e):
                if choices[f] == w:
                    dup = True
                    break
            if not dup:
                break
        choices[e] = w


@kernel
def shuffle_rows(ptr, choices, seed):
    """Fisher-Yates shuffle of every row, from a counter-based stream."""
    n = ptr.shape[0] - 1
    for r in prange(n):
        lo = ptr[r]
        for i in range(ptr[r + 1] - lo - 1, 0, -1):
            j = _below(counter_hash(seed, np.int64(r) + 1, i), i + 1)
            tmp = choices[lo + i]
            choices[lo + i] = choices[lo + j]
            choices[lo + j] = tmp


def easy_instance(n, seed, parts):
    """The "easy" instance of Naim et al.: man m ranks (1 + eps_m) ln n random women;
    each woman ranks, in random order, exactly the men who rank her."""
    shuffle_seed = np.uint64((int(seed) * 0x9E3779B97F4A7C15 + 0x5DEECE66D) & 0xFFFFFFFFFFFFFFFF)
    seed = np.uint64(seed)
    m_ptr = easy_lengths.run(n, n, seed)
    m_choices = easy_men.run(n, n, seed, m_ptr)
    bounds = row_bounds(m_ptr, parts)
    w_ptr, cursor = transpose_offsets(m_ptr, m_choices, n, bounds)
    w_choices = np.empty(m_choices.shape[0], np.int32)
    transpose_ids(m_ptr, m_choices, bounds, w_ptr, cursor, w_choices)
    del cursor
    shuffle_rows(w_ptr, w_choices, shuffle_seed)
    return (m_ptr, m_choices), (w_ptr, w_choices)


def hard_instance(n, seed):
    """The "hard" instance of Naim et al.: all men share one random complete ranking of
    the women, all women one of the men (n(n+1)/2 proposals)."""
    rng = np.random.default_rng(seed)
    ptr = np.arange(n + 1, dtype=np.int64) * n
    men = np.tile(rng.permutation(n).astype(np.int32), n)
    women = np.tile(rng.permutation(n).astype(np.int32), n)
    return (ptr, men), (ptr.copy(), women)
