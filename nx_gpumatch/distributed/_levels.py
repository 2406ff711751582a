"""One level's graph in the distributed community engines: this rank's owned
rows with their ghosts (:class:`_Level`), and the kernels that build a level
(level 0 from a partition, a coarse level from communities: each rank merges
its arcs per pair of communities, sends them to the owners of their tails,
and the owners merge what they receive)."""

import collections

import numpy as np

from nx_gpumatch.cpu import njit, serial_builds
from nx_gpumatch.cpu.csr import inverse_permutation, permute_rows
from nx_gpumatch.cpu.leiden import _intra_weights
from nx_gpumatch.cpu.louvain.moves import weighted_degrees

(_intra_serial,) = serial_builds(_intra_weights)  # one rank, one thread

# The arcs of owned rows into each ghost: arc positions ``arc[ptr[g]:ptr[g + 1]]``
# of ghost g (local ids) and the tail of each of those arcs (``tail[q]`` of
# ``arc[q]``).
GhostArcs = collections.namedtuple("GhostArcs", "ptr arc tail")

# A level's rows relabelled for the sweeps (see sweep_view): CSR, self-loops
# and vertex weights in the new ids; ``perm`` the local id of each new id,
# ``rank`` its inverse; the owned vertices are new ids [0, n_own).
SweepView = collections.namedtuple("SweepView", "indptr indices w loop k perm rank n_own")


# ---------------------------------------------------------------- kernels
@njit(cache=True)
def _community_rows(indptr, indices, w, loop, verts, cid, K):
    """The rows of the owned vertices ``verts`` merged per pair of
    communities (dense ids ``cid`` per local vertex, K of them): CSR over
    the K communities (ptr, heads, summed weights) and each community's
    self-loop weight (an inner arc counts half, a self-loop whole). Members
    are taken in the order of ``verts``, arcs in row order, heads in order
    of first appearance in their community: the same sums on every run."""
    n = verts.shape[0]
    cnt = np.zeros(K + 1, np.int64)
    for i in range(n):
        cnt[cid[verts[i]] + 1] += 1
    for x in range(K):
        cnt[x + 1] += cnt[x]
    members = np.empty(n, np.int64)
    fill = cnt[:K].copy()
    for i in range(n):
        x = cid[verts[i]]
        members[fill[x]] = verts[i]
        fill[x] += 1
    pos = np.full(K, -1, np.int64)
    heads = np.empty(indices.shape[0], np.int64)
    ws = np.empty(indices.shape[0], np.float64)
    ptr = np.zeros(K + 1, np.int64)
    loops = np.zeros(K, np.float64)
    k = 0
    for x in range(K):
        start = k
        for q in range(cnt[x], cnt[x + 1]):
            v = members[q]
            loops[x] += loop[v]
            for p in range(indptr[v], indptr[v + 1]):
                y = cid[indices[p]]
                if y == x:
                    loops[x] += 0.5 * w[p]
                elif pos[y] < start:
                    pos[y] = k
                    heads[k] = y
                    ws[k] = w[p]
                    k += 1
                else:
                    ws[pos[y]] += w[p]
        ptr[x + 1] = k
    return ptr, heads[:k], ws[:k], loops


@njit(cache=True)
def _pack_coarse(rptr, heads, aw, loops, block, nranks):
    """The merged rows of :func:`_community_rows` as rows to send to the
    owners of their tails' communities (``x // block``): ((k, 2) int64 rows,
    ``x << 32 | y`` and the weight's bits; the rows per rank). Community by
    community, so grouped by owner; each self-loop as an arc x -> x of
    twice its weight (which the owner counts half)."""
    K = loops.shape[0]
    counts = np.zeros(nranks, np.int64)
    for x in range(K):
        counts[x // block] += rptr[x + 1] - rptr[x] + (loops[x] != 0.0)
    rows = np.empty((rptr[K] + np.count_nonzero(loops), 2), np.int64)
    wv = rows.view(np.float64)
    i = 0
    for x in range(K):
        for p in range(rptr[x], rptr[x + 1]):
            rows[i, 0] = (np.int64(x) << 32) | heads[p]
            wv[i, 1] = aw[p]
            i += 1
        if loops[x] != 0.0:
            rows[i, 0] = (np.int64(x) << 32) | x
            wv[i, 1] = 2.0 * loops[x]
            i += 1
    return rows, counts


@njit(cache=True)
def _merge_coarse(rows, lo, hi, K):
    """The rows of the coarse vertices [lo, hi) from the received ``rows``
    (:func:`_pack_coarse`'s, x in [lo, hi)) merged as :func:`_community_rows`
    merges arcs: (indptr, heads, summed weights, self-loop weight per row),
    each row's arcs in the order received (a counting sort by tail), heads
    in order of first appearance; an arc x -> x counts half."""
    nrow = hi - lo
    m = rows.shape[0]
    wv = rows.view(np.float64)
    cnt = np.zeros(nrow + 1, np.int64)
    for i in range(m):
        cnt[(rows[i, 0] >> 32) - lo + 1] += 1
    for x in range(nrow):
        cnt[x + 1] += cnt[x]
    fill = cnt[:nrow].copy()
    order = np.empty(m, np.int64)
    for i in range(m):
        x = (rows[i, 0] >> 32) - lo
        order[fill[x]] = i
        fill[x] += 1
    pos = np.full(K, -1, np.int64)
    heads = np.empty(m, np.int64)
    ws = np.empty(m, np.float64)
    ptr = np.zeros(nrow + 1, np.int64)
    loops = np.zeros(nrow, np.float64)
    k = 0
    for x in range(nrow):
        start = k
        for q in range(cnt[x], cnt[x + 1]):
            i = order[q]
            y = rows[i, 0] & 0xFFFFFFFF
            if y == x + lo:
                loops[x] += 0.5 * wv[i, 1]
            elif pos[y] < start:
                pos[y] = k
                heads[k] = y
                ws[k] = wv[i, 1]
                k += 1
            else:
                ws[pos[y]] += wv[i, 1]
        ptr[x + 1] = k
    return ptr, heads[:k], ws[:k], loops


@njit(cache=True)
def _ghost_arcs(indptr, indices, owned):
    """The arcs of owned rows into ghosts, by ghost: (ptr over the local
    vertices, arc positions ascending per ghost, each one's tail as int32)."""
    nl = indptr.shape[0] - 1
    ptr = np.zeros(nl + 1, np.int64)
    for v in range(nl):
        for p in range(indptr[v], indptr[v + 1]):
            if not owned[indices[p]]:
                ptr[indices[p] + 1] += 1
    for v in range(nl):
        ptr[v + 1] += ptr[v]
    fill = ptr[:nl].copy()
    arc = np.empty(ptr[nl], np.int64)
    tail = np.empty(ptr[nl], np.int32)
    for v in range(nl):
        for p in range(indptr[v], indptr[v + 1]):
            j = indices[p]
            if not owned[j]:
                arc[fill[j]] = p
                tail[fill[j]] = v
                fill[j] += 1
    return ptr, arc, tail


@njit(cache=True)
def _owned_rows(indptr, indices, weights, owned):
    """The rows of the owned vertices (arcs of other rows dropped): (indptr,
    indices as int32, weights)."""
    nl = indptr.shape[0] - 1
    out = np.zeros(nl + 1, np.int64)
    for v in range(nl):
        out[v + 1] = out[v] + (indptr[v + 1] - indptr[v] if owned[v] else 0)
    idx = np.empty(out[nl], np.int32)
    w = np.empty(out[nl], np.float64)
    for v in range(nl):
        if owned[v]:
            q = out[v]
            for p in range(indptr[v], indptr[v + 1]):
                idx[q] = indices[p]
                w[q] = weights[p]
                q += 1
    return out, idx, w


@njit(cache=True)
def _boundary_pairs(indptr, indices, owner, owned, nranks):
    """(rank, vertex) for each owned vertex with a neighbour owned by another
    rank, once per such rank: by vertex, the ranks in order of first
    appearance in its row (one pass over the rows, a mark per rank)."""
    n = indptr.shape[0] - 1
    last = np.full(nranks, -1, np.int64)
    ranks = np.empty(indices.shape[0], np.int64)
    verts = np.empty(indices.shape[0], np.int64)
    k = 0
    for v in range(n):
        for p in range(indptr[v], indptr[v + 1]):
            j = indices[p]
            if owned[j]:
                continue
            r = owner[j]
            if last[r] != v:
                last[r] = v
                ranks[k] = r
                verts[k] = v
                k += 1
    return ranks[:k], verts[:k]


def intra_weights(lvl, comm_g):
    """Each local vertex's arc weight into its own community of ``comm_g``
    (ghosts: 0), in one pass over the rows."""
    out = np.empty(lvl.gids.shape[0], np.float64)
    _intra_serial(lvl.indptr, lvl.indices, lvl.w, comm_g, out)
    return out


def compact_ids(values, n):
    """(the distinct values, sorted; each value's index among them as int32)
    of integers in [0, n): a mark per id, O(n + len(values)), where a sort
    or hash of the values costs more (they run to millions per round)."""
    mark = np.zeros(n, bool)
    mark[values] = True
    pos = np.cumsum(mark, dtype=np.int32)
    pos -= 1
    return np.flatnonzero(mark), pos[values]


# ---------------------------------------------------------------- levels
class _Level:
    """This rank's share of one level's graph: local vertices (owned and
    ghosts) by global id ascending, CSR rows of the owned ones (ghost rows
    are empty), self-loops and vertex weights ``k`` (owned; None: the
    weighted degrees), each local vertex's owner, the neighbour ranks and the
    boundary vertices each one sees. ``block``: the block size of the level's
    partition (None: level 0, whose partition may be any)."""

    def __init__(self, n, gids, owned_ids, owner, indptr, indices, w, loop, block=None, k=None):
        self.n = int(n)
        self.gids = gids
        self.owned_ids = owned_ids.astype(np.int32, copy=False)
        self.owner = owner.astype(np.int64, copy=False)
        self.indptr = indptr.astype(np.int64, copy=False)
        self.indices = indices.astype(np.int32, copy=False)
        self.w = np.ascontiguousarray(w, np.float64)
        self.loop = np.ascontiguousarray(loop, np.float64)
        self.degrees = weighted_degrees(self.indptr, self.w, self.loop)
        self.k = self.degrees if k is None else np.ascontiguousarray(k, np.float64)
        self.block = block
        nl = gids.shape[0]
        owned = np.zeros(nl, bool)
        owned[self.owned_ids] = True
        self.owned = owned
        self.ghost_ids = np.flatnonzero(~owned).astype(np.int32)
        self.neighbours = sorted(set(self.owner[~owned].tolist()))
        self.boundary = {}
        if self.neighbours:  # else no ghost: no boundary, no arc into a ghost
            top = int(self.owner.max()) + 1
            ranks, verts = _boundary_pairs(self.indptr, self.indices, self.owner, owned, top)
            # each rank's vertices ascending: a stable sort by rank of pairs in vertex order
            o = np.argsort(ranks, kind="stable")
            ranks, verts = ranks[o], verts[o]
            cuts = np.searchsorted(ranks, self.neighbours + [top])
            self.boundary = {r: verts[cuts[i] : cuts[i + 1]] for i, r in enumerate(self.neighbours)}
            self.ghost_arcs = GhostArcs(*_ghost_arcs(self.indptr, self.indices, owned))
        else:
            none = np.zeros(0, np.int64)
            self.ghost_arcs = GhostArcs(np.zeros(nl + 1, np.int64), none, none.astype(np.int32))

    def tails(self):
        """Each arc's tail (local ids; built on demand: an int per arc)."""
        nl = self.gids.shape[0]
        return np.repeat(np.arange(nl, dtype=np.int32), np.diff(self.indptr))

    @property
    def arcs(self):
        return int(self.indices.shape[0])

    @classmethod
    def from_partition(cls, p, k=None):
        """Level 0 from a :class:`Partition`: its owned rows (both arcs of an
        edge between owned vertices, one of a cut edge); ``k`` as in the
        constructor."""
        g = p.graph
        indptr, indices, w = _owned_rows(g.indptr, g.indices, g.weights, p.owned)
        loop = np.where(p.owned, p.loops, 0.0)
        return cls(p.num_nodes, p.gids, p.owned_ids, p.owner, indptr, indices, w, loop, k=k)


def without_isolated(lvl):
    """``lvl``, level 0 on a rank alone (every vertex owned, local ids the
    ids, vertex weights the degrees), without the vertices that have neither
    an arc nor a self-loop, the others renumbered 0..k-1 in id order; and
    their ids (None, with ``lvl`` itself, where no vertex is isolated). An
    isolated vertex never moves, yet every level would order, refine and
    aggregate it as a singleton: half the vertices of a 1M R-MAT graph."""
    alone = (lvl.indptr[1:] == lvl.indptr[:-1]) & (lvl.loop == 0)
    if not alone.any():
        return lvl, None
    kept = np.flatnonzero(~alone)
    new = np.cumsum(~alone, dtype=np.int32) - 1  # the new id of each kept vertex
    k = kept.shape[0]
    ids = np.arange(k, dtype=np.int64)
    indptr = np.append(lvl.indptr[kept], lvl.indptr[-1])  # the rows left out are empty
    return _Level(
        k, ids, ids, np.zeros(k, np.int64), indptr, new[lvl.indices], lvl.w, lvl.loop[kept]
    ), kept


def sweep_view(lvl, verts):
    """``lvl`` relabelled so that the sweep over the owned vertices ``verts``
    (local ids, in sweep order) reads their rows and states front to back:
    new id i is ``verts[i]``, then the owned vertices not in ``verts``
    (isolated ones), then the ghosts. Each row keeps its arcs in order, so
    sums and ties fall as in the local ids. In rows read in a hashed order
    the sweep spent a quarter to a third more time per arc (two ranks, 1M
    vertices); this costs one pass over the arcs per level."""
    nl = lvl.gids.shape[0]
    own = lvl.owned_ids
    mark = np.zeros(nl, bool)
    mark[verts] = True
    perm = np.concatenate([verts, own[~mark[own]], np.flatnonzero(~lvl.owned)])
    perm = perm.astype(np.int32, copy=False)
    rank = inverse_permutation.serial(perm, nl, 0)
    ptr = np.zeros(nl + 1, np.int64)
    np.cumsum(np.diff(lvl.indptr)[perm], out=ptr[1:])
    indices, w = permute_rows.serial(lvl.indptr, lvl.indices, lvl.w, rank, ptr)
    return SweepView(ptr, indices, w, lvl.loop[perm], lvl.k[perm], perm, rank, own.shape[0])
