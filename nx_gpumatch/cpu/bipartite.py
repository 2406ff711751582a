"""Maximum-cardinality bipartite matching on the CPU (Numba).

The graph is a biadjacency in CSR by column: the rows adjacent to column c are
``crows[cptr[c]:cptr[c + 1]]``. Searches start from free columns. Matchings are
``rmatch`` (row -> column) and ``cmatch`` (column -> row), int32, -1 = free.

* ``transpose``: the CSR by row, column ranges counted and placed in parallel.
* ``init_cheap`` / ``init_karp_sipser``: initial matchings (Deveci et al. 2013);
  Karp-Sipser on all threads (Azad et al. 2012).
* ``hopcroft_karp``: level-synchronous BFS from all free columns on all
  threads, then sequential DFS along the layers for a maximal set of shortest
  augmenting paths: O(m sqrt(n)) whatever the input's shape. After deep phases,
  plain DFS passes (alternating scan directions) within twice the phase's work;
  a failed search retires the columns it reached for good (``dead``).
* ``augment_bfs``: APFB / APsB of Deveci et al. 2013 (the GPU algorithm, here
  with a frontier queue instead of a scan of all columns per level).
* ``alternating_bfs`` also serves :mod:`nx_gpumatch.cpu.bipartite_cover`: from
  the free columns on the final matching it proves the matching maximum (no
  free row reached) and gives a vertex cover of the same size (Konig's theorem).

On one thread the matching is a function of the input. With more threads CAS
races decide which tree, or which Karp-Sipser thread, claims a vertex, so the
matching may change from call to call; its cardinality never does. The front
end runs inputs below ``PARALLEL_MIN`` entries on one thread (``threads_for``),
through the serial builds of :mod:`nx_gpumatch.cpu.bipartite_run`.
"""

import collections

import numpy as np
from numba import prange

from nx_gpumatch._constants import ENDPOINT, UNSEEN
from nx_gpumatch.cpu import njit
from nx_gpumatch.cpu.atomics import atomic_add, atomic_store, cas

# BFS level of a dead column (see _dfs_pass): never entered by a search, never a
# layer (no level + 1 equals it), and inside the cover's reached set (not UNSEEN)
DEAD = np.int32(-1)


# ------------------------------------------------------------ preprocessing
# Column ranges the transpose splits the edges into, whatever the thread count:
# each range counts and places its own edges, so the result never depends on it.
TRANSPOSE_PARTS = 4


@njit(cache=True, parallel=True)
def transpose(nrows, ncols, cptr, crows):
    """CSR by row (rptr, rcols) of the same graph, each row's columns in
    increasing order: a counting sort, with TRANSPOSE_PARTS column ranges
    counted and placed in parallel."""
    parts = TRANSPOSE_PARTS
    m = crows.shape[0]
    # column ranges of about m / parts edges each
    bounds = np.searchsorted(cptr, np.arange(parts + 1) * (m // parts), side="left")
    bounds[0] = 0
    bounds[parts] = ncols
    for k in range(1, parts):
        bounds[k] = min(max(bounds[k], bounds[k - 1]), ncols)
    cnt = np.zeros((parts, nrows), np.int64)
    for k in prange(parts):
        for e in range(cptr[bounds[k]], cptr[bounds[k + 1]]):
            cnt[k, crows[e]] += 1
    rptr = np.zeros(nrows + 1, np.int64)
    for r in prange(nrows):
        t = 0
        for k in range(parts):
            t += cnt[k, r]
        rptr[r + 1] = t
    for r in range(nrows):
        rptr[r + 1] += rptr[r]
    for r in prange(nrows):  # cnt becomes each range's first slot in row r
        off = rptr[r]
        for k in range(parts):
            t = cnt[k, r]
            cnt[k, r] = off
            off += t
    rcols = np.empty(m, np.int32)
    for k in prange(parts):
        for c in range(bounds[k], bounds[k + 1]):
            for e in range(cptr[c], cptr[c + 1]):
                r = crows[e]
                rcols[cnt[k, r]] = c
                cnt[k, r] += 1
    return rptr, rcols


# --------------------------------------------------------- initial matchings
@njit(cache=True)
def init_cheap(ncols, cptr, crows, rmatch, cmatch):
    """Each free column takes its first free row (one pass, O(m))."""
    for c in range(ncols):
        if cmatch[c] >= 0:
            continue
        for k in range(cptr[c], cptr[c + 1]):
            r = crows[k]
            if rmatch[r] < 0:
                rmatch[r] = c
                cmatch[c] = r
                break


BUSY = np.int32(-3)  # mate of a vertex being claimed: taken, for every other thread
KS_STACK = 1 << 15  # a thread's own list of degree-one vertices; beyond it, the shared queue


@njit(cache=True)
def _claim(v, ptr, adj, own, other):
    """Match free vertex v (mates in ``own``) with the first vertex of its list
    still free (mates in ``other``); that vertex (or -1). v first, then its
    mate, each by CAS: two threads never share one. Columns call it with
    (cmatch, rmatch), rows with (rmatch, cmatch)."""
    if own[v] != -1 or cas(own, v, -1, BUSY) != -1:
        return -1
    for k in range(ptr[v], ptr[v + 1]):
        u = adj[k]
        if other[u] == -1 and cas(other, u, -1, v) == -1:
            atomic_store(own, v, u)
            return u
    atomic_store(own, v, -1)
    return -1


@njit(cache=True)
def _push(v, fifo, end, queue, tail):
    if end < fifo.shape[0]:
        fifo[end] = v
        return end + 1
    queue[atomic_add(tail, 0, 1)] = v
    return end


@njit(cache=True)
def _ks_matched(c, r, cptr, crows, rptr, rcols, rmatch, cmatch, cdeg, rdeg, fifo, end, queue, tail):
    """(c, r) were just matched: their free neighbours lose a degree; those
    left with one (the thread whose decrement made it one, exactly once) join
    the thread's list. Entries are columns as c and rows as ~r."""
    for k in range(cptr[c], cptr[c + 1]):
        r2 = crows[k]
        if rmatch[r2] == -1 and atomic_add(rdeg, r2, -1) == 2:
            end = _push(~np.int64(r2), fifo, end, queue, tail)
    for k in range(rptr[r], rptr[r + 1]):
        c2 = rcols[k]
        if cmatch[c2] == -1 and atomic_add(cdeg, c2, -1) == 2:
            end = _push(np.int64(c2), fifo, end, queue, tail)
    return end


@njit(cache=True)
def _ks_chunk(
    lo, hi, greedy, items, cptr, crows, rptr, rcols, rmatch, cmatch, cdeg, rdeg, queue, tail
):
    """Match items[lo:hi] (greedy: the columns lo..hi-1), each followed at once,
    as in the sequential method, by the degree-one vertices its match creates
    (first in, first out: one thread repeats the sequential method's choices)."""
    # a vertex is queued at most once: no more than the queue's size is needed
    # (small inputs then skip allocating, and touching, KS_STACK entries per round)
    fifo = np.empty(min(KS_STACK, queue.shape[0]), np.int64)
    for i in range(lo, hi):
        if greedy:
            if cmatch[i] != -1 or cdeg[i] <= 0:
                continue
            end = _push(np.int64(i), fifo, 0, queue, tail)
        else:
            end = _push(items[i], fifo, 0, queue, tail)
        head = 0
        while head < end:
            v = fifo[head]
            head += 1
            if v >= 0:
                c = v
                r = _claim(c, cptr, crows, cmatch, rmatch)
                if r < 0:
                    continue
            else:
                r = ~v
                c = _claim(r, rptr, rcols, rmatch, cmatch)
                if c < 0:
                    continue
            end = _ks_matched(
                c, r, cptr, crows, rptr, rcols, rmatch, cmatch, cdeg, rdeg, fifo, end, queue, tail
            )


@njit(cache=True, parallel=True)
def _ks_round(n, greedy, items, cptr, crows, rptr, rcols, rmatch, cmatch, cdeg, rdeg, queue, tail):
    chunks = max(1, min(n // 2048, 4096))
    if chunks == 1:  # no thread team for one chunk (small inputs): it costs more than the work
        _ks_chunk(
            0, n, greedy, items, cptr, crows, rptr, rcols, rmatch, cmatch, cdeg, rdeg, queue, tail
        )
        return
    counter = np.zeros(1, np.int64)
    for _ in prange(_workers(chunks)):
        while True:
            j = atomic_add(counter, 0, 1)
            if j >= chunks:
                break
            lo = j * n // chunks
            hi = (j + 1) * n // chunks
            _ks_chunk(
                lo, hi, greedy, items, cptr, crows, rptr, rcols, rmatch, cmatch, cdeg, rdeg,
                queue, tail,
            )  # fmt: skip


@njit(cache=True)
def init_karp_sipser(nrows, ncols, cptr, crows, rptr, rcols, rmatch, cmatch):
    """Karp-Sipser: match a vertex of degree one (in the graph of free vertices)
    with its only neighbour while there is one, else a free column with its
    first free row. Degree-one choices are always part of some maximum
    matching, which leaves the augmenting phase little to do. O(m).

    Parallel in the manner of Azad et al. (IPDPS 2012): the vertices of degree
    one, then all columns, are split among the threads; each match claims its
    two vertices by CAS, and the degree-one vertices it creates are matched by
    the same thread before its next choice. Which pairs are chosen depends on
    the thread count (the augmenting phase's cardinality does not)."""
    # From an empty matching the degrees are the list lengths: no pass over the edges.
    empty = True
    for c in range(ncols):
        if cmatch[c] >= 0:
            empty = False
            break
    cdeg = np.diff(cptr)
    rdeg = np.diff(rptr)
    if not empty:
        for c in range(ncols):
            cdeg[c] = 0
            if cmatch[c] < 0:
                for k in range(cptr[c], cptr[c + 1]):
                    if rmatch[crows[k]] < 0:
                        cdeg[c] += 1
        for r in range(nrows):
            rdeg[r] = 0
            if rmatch[r] < 0:
                for k in range(rptr[r], rptr[r + 1]):
                    if cmatch[rcols[k]] < 0:
                        rdeg[r] += 1
    # a vertex is queued at most once: at the start or when its degree drops to 1
    queue = np.empty(nrows + ncols + 1, np.int64)
    tail = np.zeros(1, np.int64)
    for c in range(ncols):
        if cmatch[c] < 0 and cdeg[c] == 1:
            queue[tail[0]] = c
            tail[0] += 1
    for r in range(nrows):
        if rmatch[r] < 0 and rdeg[r] == 1:
            queue[tail[0]] = ~np.int64(r)
            tail[0] += 1
    head = 0
    greedy_done = False
    while True:
        end = tail[0]
        if end > head:  # degree-one vertices first; matching them may queue more
            items = queue[head:end]
            _ks_round(
                end - head, False, items, cptr, crows, rptr, rcols, rmatch, cmatch, cdeg, rdeg,
                queue, tail,
            )  # fmt: skip
            head = end
        elif greedy_done:
            return
        else:  # one pass over the columns: a column left free then has no free row
            _ks_round(
                ncols, True, queue, cptr, crows, rptr, rcols, rmatch, cmatch, cdeg, rdeg,
                queue, tail,
            )  # fmt: skip
            greedy_done = True


# ------------------------------------------------------------ parallel BFS
@njit(cache=True)
def _expand(c, level, cptr, crows, rmatch, dist, nxt, count, found):
    """Put the unseen mates of c's rows on the next level; returns the edges scanned."""
    for k in range(cptr[c], cptr[c + 1]):
        c2 = rmatch[crows[k]]
        if c2 < 0:
            found[0] = 1
        elif dist[c2] == UNSEEN and cas(dist, c2, UNSEEN, level + 1) == UNSEEN:
            nxt[atomic_add(count, 0, 1)] = c2
    return cptr[c + 1] - cptr[c]


# A level with fewer columns than this is expanded on one thread: starting the
# thread team costs more (on a loaded machine, up to a scheduler time slice for
# a thread that is not running), and deep thin searches (long paths) have many
# such levels.
SMALL_LEVEL = 16384
# Parallel loops hand out their items in chunks of this many, each taken by the
# first free thread (an atomic counter): a thread that shares its core with
# another process takes fewer chunks instead of holding up the other one with
# a fixed half (Numba's own prange splits statically).
CHUNK = 1024


# Iterations of a prange whose bodies take chunks from a counter until none is
# left: at least one per thread (the first of a thread's iterations takes its
# share, the others end at once). Numba's thread count in jitted code would be a
# ctypes call, which keeps the kernels out of the disk cache.
WORKERS = 256


@njit(cache=True)
def _workers(nchunks):
    return max(1, min(WORKERS, nchunks))


@njit(cache=True, parallel=True)
def _expand_level(front, nfront, level, cptr, crows, rmatch, dist, nxt, count, found):
    """Expand one level; returns the edges scanned."""
    work = 0
    if nfront < SMALL_LEVEL:
        for i in range(nfront):
            work += _expand(front[i], level, cptr, crows, rmatch, dist, nxt, count, found)
        return work
    chunks = (nfront + CHUNK - 1) // CHUNK
    counter = np.zeros(1, np.int64)
    for _ in prange(_workers(chunks)):
        w = 0
        while True:
            j = atomic_add(counter, 0, 1)
            if j >= chunks:
                break
            for i in range(j * CHUNK, min((j + 1) * CHUNK, nfront)):
                w += _expand(front[i], level, cptr, crows, rmatch, dist, nxt, count, found)
        work += w
    return work


@njit(cache=True, parallel=True)
def _start(ncols, cmatch, dist, front, dead):
    """dist = DEAD at dead columns, 0 at the other free columns, UNSEEN
    elsewhere; front = the free columns that are not dead."""
    for c in prange(ncols):
        if dead[c]:
            dist[c] = DEAD
        else:
            dist[c] = 0 if cmatch[c] < 0 else UNSEEN
    n = 0
    for c in range(ncols):
        if dist[c] == 0:
            front[n] = c
            n += 1
    return n


@njit(cache=True)
def alternating_bfs(ncols, cptr, crows, rmatch, cmatch, dist, front, nxt, stop_at_free, dead):
    """Layers of the alternating BFS from all free columns (level-synchronous,
    each level on all threads). dist[c] = level of column c (UNSEEN if not
    reached, DEAD for the columns marked in ``dead``, which the search skips:
    no augmenting path enters them, see :func:`_dfs_pass`). Returns (hit, work): hit is the level whose expansion met a free
    row (the length, in columns, of the shortest augmenting paths), or -1;
    work is the number of edges scanned. With ``stop_at_free`` the search ends
    at that level; otherwise it runs to the end."""
    count = np.zeros(1, np.int64)
    found = np.zeros(1, np.int64)
    nfront = _start(ncols, cmatch, dist, front, dead)
    level = 0
    hit = -1
    work = 0
    while nfront > 0:
        count[0] = 0
        work += _expand_level(front, nfront, level, cptr, crows, rmatch, dist, nxt, count, found)
        if found[0] and hit < 0:
            hit = level
            if stop_at_free:
                break
        front, nxt = nxt, front
        nfront = count[0]
        level += 1
    return hit, work


# ----------------------------------------------------------- Hopcroft-Karp
@njit(cache=True)
def _dfs_phase(ncols, cptr, crows, rmatch, cmatch, dist, limit, it, stack, via):
    """Augment along a maximal set of vertex-disjoint shortest augmenting paths,
    walking only layer to layer (dist + 1). ``it`` keeps each column's scan
    position, so the phase is O(m); a column with no way down is retired.
    Returns (augmented, edges scanned)."""
    for c in range(ncols):
        it[c] = cptr[c]
    augmented = 0
    work = 0
    for c0 in range(ncols):
        if cmatch[c0] >= 0 or dist[c0] != 0:
            continue
        top = 0
        stack[0] = c0
        while top >= 0:
            c = stack[top]
            d = dist[c]
            moved = False
            done = False
            while it[c] < cptr[c + 1]:
                r = crows[it[c]]
                it[c] += 1
                work += 1
                c2 = rmatch[r]
                if c2 < 0:
                    if d == limit:
                        via[top] = r
                        done = True
                        break
                elif d < limit and dist[c2] == d + 1:
                    via[top] = r
                    top += 1
                    stack[top] = c2
                    moved = True
                    break
            if done:
                for i in range(top, -1, -1):
                    rmatch[via[i]] = stack[i]
                    cmatch[stack[i]] = via[i]
                augmented += 1
                break
            if not moved:
                dist[c] = UNSEEN
                top -= 1
    return augmented, work


@njit(cache=True)
def _dfs_pass(
    ncols, cptr, crows, rmatch, cmatch, seen, stamp, it, stack, via, reached, dead, budget, backward
):
    """One pass of plain DFS augmentation (no layers) from each free column in
    turn, a row entered at most once per pass, stopping once ``budget`` edges
    are scanned. It finds long augmenting paths that shortest-path phases would
    take one per phase (deep layered inputs). Each search has its own stamp in
    ``seen`` (rows with a stamp above the pass's first were entered in the pass).

    A failed search that skipped no row entered by another search of the pass
    proves its columns dead for good: every row next to a column it reached was
    entered by it (its mate reached) or has a dead mate, so the reached set is
    closed under alternating steps and holds no free row. An augmenting path
    entering it could never leave it, so none ever does, its matching never
    changes and it stays closed (the Hungarian-tree argument; dead vertices as
    in Duff, Kaya and Ucar 2011). Later searches, the BFS phases and the final
    search skip dead columns: unmatchable free columns stop re-exploring the
    same region in every phase (deep layered inputs). A search that did skip
    such a row proves nothing (that row's search may have changed the matching).

    ``backward`` scans each column's rows last to first. Passes alternate
    directions (the fairness of Duff, Kaya and Ucar's PF+): a search that
    keeps taking the same first rows keeps running into the same dead ends;
    on deep layered inputs alternating halved the edges scanned.

    The caller's budget (twice the phase's own work) keeps the passes of a
    phase within a constant factor of it: the O(m sqrt(n)) bound holds.
    Returns (augmented, edges scanned, last stamp used)."""
    augmented = 0
    work = 0
    base = stamp  # rows with seen > base were entered in this pass
    for c0 in range(ncols):
        if cmatch[c0] >= 0 or dead[c0]:
            continue
        stamp += 1
        proven = True  # no row skipped because another search of the pass entered it
        it[c0] = cptr[c0]
        top = 0
        stack[0] = c0
        reached[0] = c0  # every column the search enters, to mark them if it fails
        nreached = 1
        done = False
        while top >= 0:
            c = stack[top]
            moved = False
            while it[c] < cptr[c + 1]:
                if work >= budget:  # no path is half flipped: stopping leaves a matching
                    return augmented, work, stamp
                k = cptr[c] + cptr[c + 1] - 1 - it[c] if backward else it[c]
                r = crows[k]
                it[c] += 1
                work += 1
                c2 = rmatch[r]
                if c2 >= 0 and dead[c2]:  # before `seen`: a dead search's rows spoil no proof
                    continue
                if seen[r] > base:
                    if seen[r] != stamp:
                        proven = False
                    continue
                seen[r] = stamp
                via[top] = r
                if c2 < 0:
                    done = True
                else:
                    top += 1
                    stack[top] = c2
                    it[c2] = cptr[c2]
                    reached[nreached] = c2
                    nreached += 1
                    moved = True
                break
            if done:
                for i in range(top, -1, -1):
                    rmatch[via[i]] = stack[i]
                    cmatch[stack[i]] = via[i]
                augmented += 1
                break
            if not moved:
                top -= 1
        if not done and proven:
            for i in range(nreached):
                dead[reached[i]] = 1
    return augmented, work, stamp


# Shortest augmenting paths of at least this many columns make a phase deep:
# only then does a plain DFS pass follow it. After short phases the pass only
# breaks Hopcroft-Karp's rule that path lengths grow from phase to phase (its
# paths create new short ones): a random graph from a cheap start took 80
# phases with it, 9 without.
DEEP_PHASE = 16


@njit(cache=True)
def hopcroft_karp(nrows, ncols, cptr, crows, rmatch, cmatch):
    """Hopcroft-Karp from the given matching (in place). Returns (phases, dist,
    work): dist != UNSEEN marks the columns reachable from the free columns by
    alternating paths (those the final, fruitless search reached, and the dead
    ones, reachable from the dead free columns: the cover's set); work counts
    the edges scanned by all searches (the cover's search included)."""
    dist = np.empty(ncols, np.int32)
    front = np.empty(ncols, np.int32)
    nxt = np.empty(ncols, np.int32)
    it = np.empty(ncols, np.int64)
    stack = np.empty(ncols + 1, np.int32)
    via = np.empty(ncols + 1, np.int32)
    reached = np.empty(ncols + 1, np.int32)
    seen = np.zeros(nrows, np.int64)
    dead = np.zeros(ncols, np.uint8)
    stamp = 0
    passes = 0
    phases = 0
    work = 0
    while True:
        limit, w = alternating_bfs(ncols, cptr, crows, rmatch, cmatch, dist, front, nxt, True, dead)
        work += w
        if limit < 0:  # this search ran to its end: dist marks the columns it reached
            return phases, dist, work
        phases += 1
        _, w2 = _dfs_phase(ncols, cptr, crows, rmatch, cmatch, dist, limit, it, stack, via)
        work += w2
        if limit >= DEEP_PHASE:  # passes while they find paths, within twice the phase's work
            # (a pass found a path for about a third of a phase's work on deep layered inputs)
            budget = 2 * (w + w2)
            while budget > 0:
                passes += 1
                got, w3, stamp = _dfs_pass(
                    ncols, cptr, crows, rmatch, cmatch, seen, stamp, it, stack, via, reached,
                    dead, budget, passes % 2 == 0,
                )  # fmt: skip
                work += w3
                budget -= w3
                if got == 0:
                    break


# ------------------------------------------------------------- APFB / APsB
# The search forest of a phase: each column's BFS level, parent column and
# tree root, each endpoint row's column, whether a tree found a path, and the
# counters of the next frontier (``count``) and of the endpoints found
# (``ends``, ``nends``), one-entry arrays bumped atomically.
APForest = collections.namedtuple("APForest", "level_of parent root pred found count ends nends")


@njit(cache=True)
def _ap_expand(c, level, cptr, crows, rmatch, f, nxt, wr):
    """Grow c's tree (forest ``f``) by one level into the frontier ``nxt``;
    returns the edges scanned."""
    level_of, parent, root, pred, found = f.level_of, f.parent, f.root, f.pred, f.found
    rt = root[c]
    if wr and found[rt]:
        return 0
    for k in range(cptr[c], cptr[c + 1]):
        r = crows[k]
        c2 = rmatch[r]
        if c2 >= 0:
            if level_of[c2] == UNSEEN and cas(level_of, c2, UNSEEN, level + 1) == UNSEEN:
                parent[c2] = c
                root[c2] = rt
                nxt[atomic_add(f.count, 0, 1)] = c2
        elif c2 == -1 and cas(rmatch, r, -1, ENDPOINT) == -1:
            pred[r] = c
            found[rt] = 1
            f.ends[atomic_add(f.nends, 0, 1)] = r
            if wr:
                return k + 1 - cptr[c]
    return cptr[c + 1] - cptr[c]


@njit(cache=True, parallel=True)
def _ap_level(front, nfront, level, nxt, cptr, crows, rmatch, f, wr):
    """Grow the trees of front[:nfront] by one level (see _ap_expand);
    returns the edges scanned."""
    work = 0
    if nfront < SMALL_LEVEL:
        for i in range(nfront):
            work += _ap_expand(front[i], level, cptr, crows, rmatch, f, nxt, wr)
        return work
    chunks = (nfront + CHUNK - 1) // CHUNK
    counter = np.zeros(1, np.int64)
    for _ in prange(_workers(chunks)):
        w = 0
        while True:
            j = atomic_add(counter, 0, 1)
            if j >= chunks:
                break
            for i in range(j * CHUNK, min((j + 1) * CHUNK, nfront)):
                w += _ap_expand(front[i], level, cptr, crows, rmatch, f, nxt, wr)
        work += w
    return work


@njit(cache=True)
def _alternate(r, rmatch, cmatch, parent, root, pred, owner):
    """Flip the path that ends at row r if it is the first of its tree to claim
    the root. Trees are disjoint (every column has one parent, claimed by CAS),
    so claimed paths are vertex-disjoint and the flips never collide."""
    c = pred[r]
    if cas(owner, root[c], -1, r) != -1:
        return
    while True:
        nr = cmatch[c]
        cmatch[c] = r
        rmatch[r] = c
        if parent[c] < 0:
            return
        r = nr
        c = parent[c]


@njit(cache=True, parallel=True)
def _alternate_all(ends, nends, rmatch, cmatch, parent, root, pred, owner):
    if nends < SMALL_LEVEL:  # few paths: no thread team
        for i in range(nends):
            _alternate(ends[i], rmatch, cmatch, parent, root, pred, owner)
        return
    chunks = (nends + CHUNK - 1) // CHUNK
    counter = np.zeros(1, np.int64)
    for _ in prange(_workers(chunks)):
        while True:
            j = atomic_add(counter, 0, 1)
            if j >= chunks:
                break
            for i in range(j * CHUNK, min((j + 1) * CHUNK, nends)):
                _alternate(ends[i], rmatch, cmatch, parent, root, pred, owner)


@njit(cache=True)
def _fix_ends(ends, nends, rmatch):
    """Endpoints whose path lost the claim of its root are free again (one
    read per path: not worth a thread team)."""
    for i in range(nends):
        r = ends[i]
        if rmatch[r] == ENDPOINT:
            rmatch[r] = -1


SLOW_PHASE = 8


@njit(cache=True)
def augment_bfs(nrows, ncols, cptr, crows, rmatch, cmatch, full, wr, max_phases=-1):
    """APFB (``full``: the BFS runs to its end) or APsB (it stops at the first
    level that meets a free row), with GPUBFS-WR's early exit (``wr``): a tree
    that found a path stops growing. One path per tree is flipped per phase.
    Returns (phases, levels, work, done) with (phases, levels, work) as
    :func:`hopcroft_karp`'s. With ``max_phases`` >= 0 it stops with done False
    (levels then prove nothing) after that many phases, or after a phase that
    matched fewer than SLOW_PHASE columns: few long paths per phase (deep
    layered inputs) are Hopcroft-Karp's work. (Not a fraction of the free
    columns: most of them may be unmatchable, as in a random graph.)"""
    level_of = np.empty(ncols, np.int32)
    parent = np.empty(ncols, np.int32)
    root = np.empty(ncols, np.int32)
    found = np.empty(ncols, np.uint8)
    owner = np.empty(ncols, np.int32)
    front = np.empty(ncols, np.int32)
    nxt = np.empty(ncols, np.int32)
    pred = np.empty(nrows, np.int32)
    ends = np.empty(nrows, np.int32)
    count = np.zeros(1, np.int64)
    nends = np.zeros(1, np.int64)
    forest = APForest(level_of, parent, root, pred, found, count, ends, nends)
    phases = 0
    work = 0
    free_before = -1
    while True:
        nfront = 0
        for c in range(ncols):
            parent[c] = -1
            found[c] = 0
            owner[c] = -1
            if cmatch[c] < 0:
                level_of[c] = 0
                root[c] = c
                front[nfront] = c
                nfront += 1
            else:
                level_of[c] = UNSEEN
                root[c] = -1
        if max_phases >= 0 and (
            phases >= max_phases or (phases > 0 and free_before - nfront < SLOW_PHASE)
        ):
            return phases, level_of, work, False
        free_before = nfront
        nends[0] = 0
        level = 0
        while nfront > 0:
            count[0] = 0
            work += _ap_level(front, nfront, level, nxt, cptr, crows, rmatch, forest, wr)
            if not full and nends[0] > 0:
                break
            front, nxt = nxt, front
            nfront = count[0]
            level += 1
        if nends[0] == 0:  # the search ran to its end: level_of marks what it reached
            return phases, level_of, work, True
        phases += 1
        _alternate_all(ends, nends[0], rmatch, cmatch, parent, root, pred, owner)
        _fix_ends(ends, nends[0], rmatch)


# ------------------------------------------------------------ bipartite sides
@njit(cache=True)
def two_colour(n, indptr, indices):
    """Colour 1 for the first vertex of each component, alternating by BFS.

    Returns (colour int8, components, conflict): conflict is the first vertex
    found with a neighbour of its own colour, or -1 (the graph is bipartite).
    Every component is walked, conflict or not: networkx reports a
    disconnected graph before an odd cycle."""
    colour = np.full(n, -1, np.int8)
    queue = np.empty(n, np.int64)
    comps = 0
    conflict = -1
    for s in range(n):
        if colour[s] >= 0:
            continue
        comps += 1
        colour[s] = 1
        queue[0] = s
        head = 0
        tail = 1
        while head < tail:
            v = queue[head]
            head += 1
            for k in range(indptr[v], indptr[v + 1]):
                u = indices[k]
                if colour[u] < 0:
                    colour[u] = 1 - colour[v]
                    queue[tail] = u
                    tail += 1
                elif colour[u] == colour[v] and conflict < 0:
                    conflict = v
    return colour, comps, conflict


# ------------------------------------------------------------ engine entry
INITS = ("none", "cheap", "karp_sipser")  # the initial matchings run computes itself


def run(bi, algorithm, start, *, wr=True, threads=None, apfb_phases=8):
    """The entry every bipartite engine offers (see :mod:`nx_gpumatch.gpu.bipartite`):
    a maximum matching of the biadjacency ``bi``, found by ``algorithm``
    ("auto": at most ``apfb_phases`` APFB phases, then Hopcroft-Karp;
    "hopcroft_karp", "apfb" or "apsb") from the initial matching ``start``
    (a name of :data:`INITS`, computed in the same compiled call), on
    ``threads`` Numba threads (None: the config's).

    Returns (rmatch, cmatch, phases, initial, work, cover): int32 matchings,
    the phases that augmented, the initial matching's size, the edges the
    searches scanned and (row_cover, col_cover, proved), Konig's cover from
    the last search and whether it proves the matching maximum."""
    # bipartite_run compiles this module's kernels into one call: it imports this module
    from nx_gpumatch.cpu import bipartite_run

    return bipartite_run.run(bi, algorithm, start, wr=wr, threads=threads, apfb_phases=apfb_phases)
