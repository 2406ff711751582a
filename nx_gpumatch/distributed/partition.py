"""From each rank's slice of edges to a 1D vertex partition with ghosts.

Each rank hands in any slice of the global edge list. Edges are sent to the
owners of both ends (one all-to-all), repeated pairs are resolved there, and
each rank keeps the edges with at least one owned end. Local vertex ids number
the owned vertices and their ghosts in global-id order, so local (min, max)
pairs order like global ones and the package's CSR :class:`Graph`, built on the
local ids, ranks local edges consistently with the global edge order.
"""

import hashlib
import numbers
import time

import numpy as np

from nx_gpumatch import cpu
from nx_gpumatch.distributed._comm import (
    agree,
    allreduce,
    allreduce_max,
    alltoallv,
    alltoallv_grouped,
    check,
    same,
)
from nx_gpumatch.distributed._split import (
    ghost_groups,
    local_ids,
    pairs,
    rows_by_owner,
    unique_pairs,
    unpack_rows,
)
from nx_gpumatch.graph import Graph, _as_weights

__all__ = ["Partition", "partition_edges", "block_size"]


def block_size(n, size):
    """Block partition by vertex id: rank r owns [r*c, (r+1)*c) with c = ceil(n/size)."""
    c = max(1, -(-int(n) // int(size)))
    return c


def int_ids(a, what="vertex ids"):
    """int64 vertex ids from an integer or integral float array. Values int64
    cannot hold are refused with the value itself: a cast would turn 2**63 + 5
    into a negative id and 1e300 into the smallest int64."""
    a = np.asarray(a)
    if a.size == 0:
        return np.zeros(a.shape, np.int64)
    if a.dtype.kind == "f":
        bad = ~np.isfinite(a) | (a != np.round(a))
        if bad.any():
            raise ValueError(f"{what} must be integers, got {a[bad][0].item()!r}")
        big = np.abs(a) >= 2.0**63
    elif a.dtype.kind == "u":
        big = a > np.uint64(2**63 - 1)
    elif a.dtype.kind == "i":
        big = np.zeros(a.shape, bool)
    else:
        raise ValueError(f"{what} must be integers, got dtype {a.dtype}")
    if big.any():
        x = a[big][0].item()
        if x < 0:
            raise ValueError(f"{what} must be >= 0, got {x!r}")
        raise ValueError(f"{what} must be below 2**31 (the most vertices a graph holds), got {x!r}")
    return a.astype(np.int64, copy=False)


def _local_checks(src, dst, weight, duplicates):
    if duplicates not in ("last", "max"):
        raise ValueError(f"duplicates must be 'last' or 'max', got {duplicates!r}")
    src = np.asarray(src)
    dst = np.asarray(dst)
    if src.ndim != 1 or src.shape != dst.shape:
        raise ValueError(
            f"src and dst must be 1-D arrays of equal length, got shapes {src.shape}, {dst.shape}"
        )
    for name, a in (("src", src), ("dst", dst)):
        if a.size and a.dtype.kind not in "iu":
            raise ValueError(f"{name} must hold integer vertex ids, got dtype {a.dtype}")
    src = int_ids(src)
    dst = int_ids(dst)
    # As the shared-memory engine: integers beyond 2**53, NaN, booleans... refused.
    w = _as_weights(weight, src.shape[0])
    if src.size and min(src.min(), dst.min()) < 0:
        raise ValueError(f"vertex ids must be >= 0, got {int(min(src.min(), dst.min()))}")
    return src, dst, w


class LocalIds:
    """Global -> local id map for ids in the local vertex set. When the owned
    ids are one contiguous range (the block partition) owned ids map by
    arithmetic and only ghosts are searched, in the short ghost list."""

    def __init__(self, gids, owned_gids):
        self.gids = gids
        k = owned_gids.shape[0]
        self.block = k > 0 and int(owned_gids[-1]) - int(owned_gids[0]) + 1 == k
        if self.block:
            self.lo, self.hi = int(owned_gids[0]), int(owned_gids[-1]) + 1
            self.ghosts = gids[(gids < self.lo) | (gids >= self.hi)]
            self.below = int(np.searchsorted(self.ghosts, self.lo))

    def __call__(self, x):
        if not self.block:
            return np.searchsorted(self.gids, x)
        out = x - (self.lo - self.below)
        far = (x < self.lo) | (x >= self.hi)
        if far.any():
            g = x[far]
            out[far] = np.searchsorted(self.ghosts, g) + np.where(
                g >= self.hi, self.hi - self.lo, 0
            )
        return out


class Partition:
    """This rank's share: owned vertices, ghosts and the local CSR graph.

    Attributes: ``num_nodes`` (global n), ``gids`` (global id of each local
    vertex, ascending), ``owned`` (bool per local vertex), ``owner`` (rank per
    local vertex), ``graph`` (:class:`nx_gpumatch.Graph` on local ids: the edges
    with at least one owned end), ``neighbours`` (ranks owning ghosts),
    ``boundary`` ({rank: local ids of owned vertices that are ghosts there,
    ascending}), ``ghosts_of`` ({rank: local ids of ghosts it owns, ascending}),
    ``times`` (this rank's seconds per step of :func:`partition_edges`),
    ``loops`` (self-loop weight per local vertex, 0 for ghosts; None unless
    the partition was built with ``loops=True``: matching ignores them).
    """

    def __init__(self, comm, num_nodes, gids, owned, owner, graph, local=None):
        self.comm = comm
        self.local = LocalIds(gids, gids[owned]) if local is None else local
        self.num_nodes = num_nodes
        self.gids = gids
        self.owned = owned
        self.owner = owner
        self.graph = graph
        self.owned_ids = np.flatnonzero(owned)
        self.times = {}
        self.loops = None
        # Ghosts by owning rank, boundary vertices by the ranks that see them.
        self.ghosts_of, self.boundary, self.cut_arcs = ghost_groups(
            comm.size, graph.indptr, graph.indices, owned, owner
        )
        self.neighbours = sorted(self.ghosts_of)


def small_call(p, family, threads=None):
    """``cpu.run(family, ...)``, with the kernels interpreted while they are
    neither compiled here nor in the disk cache, where the graph of ``p`` has
    at most ``cpu.INTERPRET_MAX[family]`` edges on all ranks together, as the
    shared-memory front ends run small inputs: a job's first call on a small
    graph then waits for no compilation. None elsewhere (the caller's own
    thread rule applies). Every rank takes the same choice (collective)."""
    g = p.graph
    arcs = g.indptr[p.owned_ids + 1] - g.indptr[p.owned_ids]
    mine = np.array([int(arcs.sum()), int(not cpu.should_interpret(family, 0))], np.int64)
    arcs, refused = allreduce(p.comm, mine, "sum", "the edge count")
    edges = int(arcs) // 2
    if refused or not cpu.should_interpret(family, edges):
        return None
    return cpu.run(family, edges, threads, True)


def partition_edges(
    src,
    dst,
    weight=None,
    *,
    num_nodes=None,
    owner=None,
    comm=None,
    duplicates="last",
    loops=False,
):
    """Redistribute this rank's slice of edges to a 1D vertex partition.

    Parameters
    ----------
    src, dst, weight : this rank's edges (global ids, any slice; weight None = 1)
    num_nodes : global number of vertices, the same on every rank (None: the
        largest id seen on any rank, plus one)
    owner : None (block partition by id) or an int array of length num_nodes
        giving each vertex's rank, the same on every rank
    duplicates : "last" (repeated pairs keep the weight that comes last in the
        concatenation of the slices in rank order, as a networkx Graph built
        from that list does) or "max" (the heaviest; the Matrix Market rule)
    loops : keep the self-loops' weights in ``Partition.loops`` (community
        detection needs them; matching drops them, as no matching uses one).
        Repeated self-loops follow ``duplicates``. The graph is the same.
    """
    from nx_gpumatch.distributed._comm import get_comm

    comm = get_comm(comm)
    P, me = comm.size, comm.rank
    times = {}
    t = time.perf_counter()
    src, dst, w = check(comm, _local_checks, src, dst, weight, duplicates)
    same(comm, "duplicates", duplicates)
    same(comm, "loops", bool(loops))
    # num_nodes: one value everywhere.
    nodes = check(comm, _num_nodes, num_nodes)
    same(comm, "num_nodes", nodes)
    local_top = int(max(src.max(initial=-1), dst.max(initial=-1)))
    top = allreduce_max(comm, local_top, "the count of the vertices")
    n = top + 1 if nodes is None else nodes
    err = None
    if n >= 2**31:
        err = f"graphs need fewer than 2**31 vertices, got {n}"
    elif local_top >= n:
        err = f"vertex ids must lie in [0, {n}), got {local_top}"
    agree(comm, err)
    # Owner of each vertex.
    same(comm, "owner=None", owner is None)
    if owner is None:
        c = block_size(n, P)

        def owner_of(x):
            return (x // c).astype(np.int64)

        lo_id, hi_id = min(n, me * c), min(n, (me + 1) * c)
        owned_gids = np.arange(lo_id, hi_id, dtype=np.int64)
        own = np.zeros(0, np.int64)
    else:
        own = check(comm, _owner_array, owner, n, P)
        # The same array everywhere: compare a digest of its values.
        digest = hashlib.blake2b(np.ascontiguousarray(own, np.int64).tobytes(), digest_size=16)
        same(comm, "the owner array (digest)", digest.hexdigest())

        def owner_of(x):
            return own[x].astype(np.int64)

        c = 0  # rows_by_owner: owners from the array

        owned_gids = np.flatnonzero(own == me).astype(np.int64)
    times["check"] = time.perf_counter() - t
    t = time.perf_counter()
    loop_rows = None
    if loops:
        at = src == dst
        loop_rows = (src[at], w[at])
    if P == 1:
        glo, ghi, gw = pairs(src, dst, w)
    else:
        # Each edge goes to the owners of both ends (once if they are one).
        rows, counts = rows_by_owner(src, dst, w, P, c, own)
        got = alltoallv_grouped(comm, rows, counts, 2)
        del rows
        glo, ghi, gw = unpack_rows(got)
        del got
    times["exchange"] = time.perf_counter() - t
    # "last": the rows of one pair arrive in the order of the global edge list
    # (senders in rank order, each in its own order, and a pair comes to this
    # rank always as the owner of the same end), so the last one seen wins.
    t = time.perf_counter()
    gids, la, lb, local = local_ids(n, owned_gids, glo, ghi)
    del glo, ghi
    times["local ids"] = time.perf_counter() - t
    t = time.perf_counter()
    nl = gids.shape[0]
    esrc, edst, ew = unique_pairs(nl, la, nl, lb, gw, duplicates)
    del la, lb
    times["unique edges"] = time.perf_counter() - t
    t = time.perf_counter()
    local = LocalIds(gids, owned_gids) if local is None else local
    owned = np.zeros(nl, bool)
    owned[local(owned_gids)] = True
    own_local = owner_of(gids).astype(np.int32) if nl else np.zeros(0, np.int32)
    graph = Graph(nl, esrc, edst, ew)
    times["graph"] = time.perf_counter() - t
    t = time.perf_counter()
    p = Partition(comm, n, gids, owned, own_local, graph, local)
    times["ghosts"] = time.perf_counter() - t
    if loop_rows is not None:
        t = time.perf_counter()
        p.loops = _loop_weights(comm, loop_rows, owner_of, local, nl, duplicates)
        times["loops"] = time.perf_counter() - t
    p.times = times
    return p


def _loop_weights(comm, rows, owner_of, local, nl, duplicates):
    """Self-loop weight per local vertex: each loop goes to its vertex's
    owner, in the order of the global edge list (as the edges do), and a
    repeated loop keeps the last weight or the largest."""
    v, w = rows
    if comm.size > 1:
        send = np.empty((v.shape[0], 2), np.int64)
        send[:, 0] = v
        send[:, 1] = np.ascontiguousarray(w, np.float64).view(np.int64)
        got = alltoallv(comm, send, owner_of(v), 2)
        v = got[:, 0]
        w = np.ascontiguousarray(got[:, 1]).view(np.float64)
    out = np.zeros(nl, np.float64)
    if v.shape[0]:
        lv = local(v)
        if duplicates == "max":
            out[lv] = -np.inf
            np.maximum.at(out, lv, w)
        else:
            out[lv] = w  # numpy writes repeated indices in order: the last wins
    return out


def _union(owned_gids, elo, ehi):
    """Sorted ids of the owned vertices and every end of a local edge. Only the
    ends that are not owned need sorting; they are few unless most edges are cut."""
    x = np.concatenate([elo, ehi])
    k = owned_gids.shape[0]
    if k and int(owned_gids[-1]) - int(owned_gids[0]) + 1 == k:  # a block: no search
        ghost = x[(x < owned_gids[0]) | (x > owned_gids[-1])]
    else:
        pos = np.minimum(np.searchsorted(owned_gids, x), max(k - 1, 0))
        ghost = x[(k == 0) | (owned_gids[pos] != x)] if x.size else x
    ghost.sort()
    if ghost.size:
        ghost = ghost[np.concatenate([[True], ghost[1:] != ghost[:-1]])]
    out = np.concatenate([owned_gids, ghost])
    out.sort(kind="stable")  # two sorted runs: a merge
    return out


def _num_nodes(num_nodes):
    if num_nodes is None:
        return None

    if isinstance(num_nodes, bool) or not isinstance(num_nodes, numbers.Integral) or num_nodes < 0:
        raise ValueError(f"num_nodes must be a non-negative integer, got {num_nodes!r}")
    return int(num_nodes)


def _owner_array(owner, n, P):
    own = np.asarray(owner)
    if own.shape != (n,):
        raise ValueError(f"owner must have one rank per vertex ({n}), got shape {own.shape}")
    if own.size and own.dtype.kind not in "iu":
        raise ValueError(f"owner must hold integer ranks, got dtype {own.dtype}")
    own = own.astype(np.int64)
    if own.size and (own.min() < 0 or own.max() >= P):
        raise ValueError(f"owner ranks must lie in [0, {P})")
    return own
