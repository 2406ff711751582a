"""Distributed b-Suitor (Khan et al. 2016) on MPI.

Each rank owns a block of vertices (see :mod:`.partition`) and runs the
package's shared-memory b-Suitor on them; proposals, rejections and
annulments that cross ranks are batched per neighbour rank and sent once per
superstep with non-blocking sends, and each neighbour's batch is handled as it
arrives. The result is exactly the greedy b-matching under the package's edge
order (Khan et al., Theorem 1), for any number of ranks and any partition. A
rank alone sends nothing: it runs the shared-memory rounds
(``cpu.b_matching.suitor_rounds``) and reads its result from them as the
ranks do.

Communication-reduction strategies (Khan et al. §V), all by keyword:

- ``ordering="heaviest"``: each iteration's queue is sorted by the vertices'
  best remaining edge, so heavy offers go first and fewer are annulled.
- ``vertex_subsets=N``: an iteration's queue is processed in N supersteps,
  so bounds travel between them and fewer proposals are stale.
- ``b_subset=k`` (or ``"half"``): a vertex makes at most k (ceil(b/2))
  proposals per superstep, heaviest first.
- ``partial_sort=False``: sort whole rows on first use instead of the
  partial sorting in batches (the default).
"""

import hashlib
import numbers
import time

import numpy as np

from nx_gpumatch import cpu
from nx_gpumatch._constants import B_MAX
from nx_gpumatch._validation import check_threads

# Queues and message batches from QUEUE_PARALLEL_MIN on are handled by all threads,
# as in the CPU engine (smaller ones by one). Tests lower it in this module.
from nx_gpumatch.cpu.b_matching import QUEUE_PARALLEL_MIN
from nx_gpumatch.distributed import _kernels as K
from nx_gpumatch.distributed._comm import (
    Neighbours,
    abort_on_error,
    allreduce,
    check,
    get_comm,
    mpi,
    same,
    wait,
    wait_all,
)
from nx_gpumatch.distributed.partition import Partition, int_ids, partition_edges, small_call
from nx_gpumatch.distributed.result import DistributedMatching, Stats

__all__ = ["b_matching", "as_partition"]

FULL_SORT = 1 << 30


def as_partition(part, comm=None, *, num_nodes=None, owner=None, duplicates="last", loops=False):
    """A :class:`Partition` from this rank's edges: a Partition (returned as
    is), a tuple (src, dst) or (src, dst, weight), a dict with those keys, or a
    (k, 2) / (k, 3) array of rows (u, v[, w]). ``loops``: as in
    :func:`partition_edges`."""
    comm = get_comm(comm)
    if isinstance(part, Partition):
        return part
    if isinstance(part, dict):  # the loaders say how their files are to be read
        num_nodes = part.get("num_nodes") if num_nodes is None else num_nodes
        duplicates = part.get("duplicates", duplicates)
    src, dst, w = check(comm, _unpack, part)
    return partition_edges(
        src,
        dst,
        w,
        num_nodes=num_nodes,
        owner=owner,
        comm=comm,
        duplicates=duplicates,
        loops=loops,
    )


def _unpack(part):
    if isinstance(part, dict):
        return part["src"], part["dst"], part.get("weight")
    if isinstance(part, tuple | list) and len(part) in (2, 3):
        return part[0], part[1], part[2] if len(part) == 3 else None
    arr = np.asarray(part)
    if arr.ndim == 2 and arr.shape[1] in (2, 3):
        ids = int_ids(arr[:, :2], "vertex ids in the edge rows")
        return ids[:, 0], ids[:, 1], arr[:, 2] if arr.shape[1] == 3 else None
    raise TypeError(
        "part must be a Partition, (src, dst[, weight]), a dict or a (k, 2|3) array, "
        f"got {type(part).__name__}"
    )


def _b_local(b, part):
    """b(v) of the owned vertices (in global-id order) from an int, an array
    over all vertices, an array over this rank's owned vertices, or a callable
    taking the owned global ids."""
    gids = part.gids[part.owned_ids]
    k = gids.shape[0]
    if isinstance(b, numbers.Integral) and not isinstance(b, bool):
        if b < 0:
            raise ValueError(f"b must be a non-negative integer, got {b}")
        arr = np.full(k, min(int(b), B_MAX), np.int64)
    else:
        if callable(b):
            arr = np.asarray(b(gids))
            if arr.shape != (k,):
                raise ValueError(f"b(ids) must return one value per id ({k}), got {arr.shape}")
        else:
            arr = np.asarray(b)
            if arr.ndim != 1:
                raise ValueError(f"b must be an int or a 1-D array, got shape {arr.shape}")
            if arr.shape[0] == part.num_nodes:
                arr = arr[gids]
            elif arr.shape[0] != k:
                raise ValueError(
                    f"b must have one value per vertex ({part.num_nodes}) or per owned "
                    f"vertex of this rank ({k}), got {arr.shape[0]}"
                )
        if arr.size and arr.dtype.kind not in "iu":
            if (
                arr.dtype.kind != "f"
                or np.any(arr != np.round(arr))
                or not np.all(np.isfinite(arr))
            ):
                raise ValueError("b values must be non-negative integers")
        if arr.dtype.kind in "uf":
            arr = np.minimum(arr, B_MAX)  # (past int64 they would wrap negative)
        arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        i = int(np.argmin(arr))
        raise ValueError(f"b values must be non-negative integers; b({int(gids[i])}) = {arr[i]}")
    return np.minimum(arr, B_MAX)


def _b_shared(b, num_nodes):
    """The part of b that must be the same on every rank (each rank reads its
    own vertices' values from it): an int, or an array over all vertices (by
    digest). None for the forms that are per rank by design (an array over the
    owned vertices, a callable)."""
    if isinstance(b, numbers.Integral) and not isinstance(b, bool):
        return int(b)
    if callable(b):
        return None
    arr = np.asarray(b)
    if arr.ndim != 1 or arr.shape[0] != num_nodes:
        return None
    if arr.dtype.kind not in "iuf":
        raise ValueError("b values must be non-negative integers")
    # by value, so that [1, 2] and [1.0, 2.0] agree (past B_MAX, b is B_MAX)
    values = np.minimum(arr.astype(np.float64), B_MAX)
    digest = hashlib.blake2b(np.ascontiguousarray(values).tobytes(), digest_size=16)
    return f"an array over all vertices with digest {digest.hexdigest()}"


def _b_subset(b_subset, cap):
    if b_subset is None:
        return np.full(cap.shape[0], K.UNLIMITED, np.int64)
    if b_subset == "half":
        return np.maximum(1, (cap.astype(np.int64) + 1) // 2)
    if isinstance(b_subset, int) and not isinstance(b_subset, bool) and b_subset >= 1:
        return np.full(cap.shape[0], b_subset, np.int64)
    raise ValueError(f"b_subset must be None, a positive int or 'half', got {b_subset!r}")


def _check_options(ordering, vertex_subsets, b_subset, partial_sort, threads):
    check_threads(threads)  # here, so that a bad value on one rank fails on all
    if ordering not in ("id", "heaviest"):
        raise ValueError(f"ordering must be 'id' or 'heaviest', got {ordering!r}")
    if (
        isinstance(vertex_subsets, bool)
        or not isinstance(vertex_subsets, int)
        or vertex_subsets < 1
    ):
        raise ValueError(f"vertex_subsets must be a positive int, got {vertex_subsets!r}")
    _b_subset(b_subset, np.zeros(0, np.int32))
    if not isinstance(partial_sort, bool):
        raise ValueError(f"partial_sort must be True or False, got {partial_sort!r}")


def b_matching(
    part,
    b,
    *,
    comm=None,
    num_nodes=None,
    owner=None,
    duplicates="last",
    ordering="id",
    vertex_subsets=1,
    b_subset=None,
    partial_sort=True,
    threads=None,
):
    """½-approximate b-matching of a graph spread over the ranks of ``comm``.

    Collective: every rank calls it with its own share of the edges (see
    :func:`as_partition`; any slice, uneven or empty, edges repeated or on the
    "wrong" rank). Returns a :class:`DistributedMatching` holding the partners
    of this rank's owned vertices (global ids) and the message statistics.
    The b-matching equals ``nx_gpumatch.b_matching`` of the whole graph.

    b: int, array over all vertices, array over this rank's owned vertices
    (ascending id), or a callable taking the owned ids. Strategy keywords: see
    the module docstring. threads: Numba threads per rank.
    """
    comm = get_comm(comm)
    t0 = time.perf_counter()
    check(comm, _check_options, ordering, vertex_subsets, b_subset, partial_sort, threads)
    same(comm, "the strategy", (ordering, vertex_subsets, b_subset, partial_sort))
    p = abort_on_error(
        comm, as_partition, part, comm, num_nodes=num_nodes, owner=owner, duplicates=duplicates
    )
    t_part = time.perf_counter() - t0
    bl = check(comm, _b_local, b, p)
    same(comm, "b", check(comm, _b_shared, b, p.num_nodes), unless_none=True)
    with small_call(p, "b_matching", threads) or cpu.threads(threads):
        res = abort_on_error(
            comm, _run, p, bl, comm, ordering, vertex_subsets, b_subset, partial_sort
        )
    res.stats.times["partition"] = t_part
    res.stats.finish(comm)
    return res


def _exchange_ghost_values(p, nb, values):
    """values (per local vertex) of each owned boundary vertex, sent to the
    ranks where it is a ghost; returns the array with ghosts' values filled in."""
    out = values.copy()
    got = nb.exchange({r: values[p.boundary[r]].astype(np.int64) for r in p.neighbours})
    for r in p.neighbours:
        if got[r].shape[0] != p.ghosts_of[r].shape[0]:
            raise RuntimeError(f"ghost lists of ranks {p.comm.rank} and {r} disagree")
        out[p.ghosts_of[r]] = got[r]
    return out


def _run(p, b_owned, comm, ordering, vertex_subsets, b_subset, partial_sort):
    from nx_gpumatch.cpu import b_matching as cb
    from nx_gpumatch.cpu.b_suitor_blocks import suitor_state

    MPI = mpi()
    stats = Stats()
    t_setup = time.perf_counter()
    g = p.graph
    nl = g.num_nodes
    arc_rank = g.arc_rank()
    order = g.edge_order()
    # Derived from the partition alone: kept with its graph for the next call.
    deg = g.cached("b_matching_usable_degree", lambda: cb.usable_degree(nl, g.indptr, arc_rank))
    b_all = np.zeros(nl, np.int64)
    b_all[p.owned_ids] = b_owned
    cap = cb.capacities(b_all, deg)
    cap[~p.owned] = 0
    batch, min_batch = (cb.BATCH, cb.MIN_BATCH) if partial_sort else (FULL_SORT, FULL_SORT)
    if comm.size == 1:
        # A rank alone has no ghost to message: the shared-memory rounds (its
        # parallel kernel), whose records the result reads as below.
        stats.times["setup"] = time.perf_counter() - t_setup
        t = time.perf_counter()
        st = cb.suitor_rounds(nl, g.indptr, g.indices, arc_rank, cap, batch, min_batch)
        stats.times["compute"] = time.perf_counter() - t
        return _result(p, st, g, comm, stats)
    nb = Neighbours(comm, p.neighbours)
    cap_seen = _exchange_ghost_values(p, nb, cap.astype(np.int64))  # ghosts' capacities
    # Records: owned vertices header, cap, heap of cap slots; ghosts (cap 0)
    # use only the header, which holds the bound their owner last reported.
    stride, hptr, size = cb.record_layout(cap)
    base = np.arange(nl, dtype=np.int64) * stride if stride else hptr[:-1]
    rec = np.zeros(size, np.int64)
    rec[base] = np.where(cap_seen > 0, np.int64(K.NO_RANK) << 32, 0)
    rec[base + 1] = cap
    need = cap.astype(np.int64)
    owned = p.owned.astype(np.bool_)
    bsub = _b_subset(b_subset, cap)
    nextq = np.empty(max(nl, 1), np.int32)
    qtail = np.zeros(1, np.int64)
    ob = np.empty((3 * p.cut_arcs + 1, 4), np.int64)
    out_n = np.zeros(1, np.int64)
    granks = K.ghost_ranks(g.indptr, arc_rank, owned)
    # Records with offsets (stride 0): owned vertices and ghosts differ in size.
    st = suitor_state(
        g.indptr, g.indices, arc_rank, cap, need, rec, stride, hptr, nextq, qtail, batch, min_batch
    )
    out = K.Outbox(owned, bsub, ob, out_n)
    bounds = K.GhostBounds(granks, order, g.edge_weight, g.edge_src, g.edge_dst, p.gids)
    # Iteration queue: the owned vertices with room, all marked QUEUED.
    queue = np.flatnonzero(owned & (cap > 0)).astype(np.int32)
    need[queue] |= K.QUEUED
    stats.times["setup"] = time.perf_counter() - t_setup

    def ordered(q):
        if ordering == "heaviest" and q.shape[0]:
            return q[np.argsort(K.heaviest_remaining(q, st), kind="stable")]
        return q

    queue = ordered(queue)
    qpos = 0
    chunk = max(1, -(-queue.shape[0] // vertex_subsets))
    stats.iterations = 1
    tot = np.zeros(1, np.int64)
    act = np.zeros(1, np.int64)
    req = None
    t_comp = t_comm = t_handle = 0.0
    while True:
        t = time.perf_counter()
        if qpos == queue.shape[0] and qtail[0] > 0:
            queue = np.sort(nextq[: qtail[0]])
            qtail[0] = 0
            queue = ordered(queue)
            qpos = 0
            chunk = max(1, -(-queue.shape[0] // vertex_subsets))
            stats.iterations += 1
        q = queue[qpos : qpos + chunk]
        qpos += q.shape[0]
        if q.shape[0]:
            K.compute_phase(q, st, out, QUEUE_PARALLEL_MIN)
        t_comp += time.perf_counter() - t
        t = time.perf_counter()
        if req is not None:
            # the count of the previous superstep, reduced meanwhile
            wait(req, comm, "a superstep's count of pending work")
            if tot[0] == 0:
                t_comm += time.perf_counter() - t
                break
        batches = _pack(p, ob, out_n, cap, order, g, stats)
        reqs = nb.post(batches)
        t_comm += time.perf_counter() - t
        for _r, buf in nb.arrivals():
            th = time.perf_counter()
            if buf.shape[0]:
                m = buf.reshape(-1, 5)
                to = p.local(m[:, 1])
                frm = p.local(m[:, 2])
                msg = K.Messages(
                    m[:, 0].copy(),
                    to,
                    frm,
                    m[:, 3].copy(),
                    m[:, 4].copy().view(np.float64),
                    m[:, 2].copy(),
                )
                K.handle_messages(msg, st, bounds, out, QUEUE_PARALLEL_MIN)
            t_handle += time.perf_counter() - th
        t = time.perf_counter()
        wait_all(reqs, comm)
        stats.supersteps += 1
        act[0] = (queue.shape[0] - qpos) + int(qtail[0]) + int(out_n[0])
        req = comm.Iallreduce(act, tot, op=MPI.SUM)
        t_comm += time.perf_counter() - t
    stats.times["compute"] = t_comp
    stats.times["communicate"] = t_comm
    stats.times["messages"] = t_handle
    return _result(p, st, g, comm, stats)


def _pack(p, ob, out_n, cap, order, g, stats):
    """The outbox as one int64 batch per neighbour: rows (kind, to, from, s, w)
    in global ids; for REJ/ANL (s, from) is the edge holding from's bound
    (s = -1: from takes no offers; -2: it has room)."""
    k = int(out_n[0])
    if k > ob.shape[0]:
        raise RuntimeError("outbox overflow: more messages than cut arcs allow")
    o = ob[:k]
    out_n[0] = 0
    kind = o[:, 0]
    msg = np.zeros((k, 5), np.int64)
    msg[:, 0] = kind
    msg[:, 1] = p.gids[o[:, 1]]
    msg[:, 2] = p.gids[o[:, 2]]
    back = kind != K.PROP
    if back.any():
        frm = o[back, 2]
        thr = o[back, 3]
        s = np.full(frm.shape[0], -2, np.int64)
        w = np.zeros(frm.shape[0], np.float64)
        real = thr < K.NO_RANK
        e = order[np.minimum(thr[real], max(order.shape[0] - 1, 0))]
        other = g.edge_src[e].astype(np.int64) + g.edge_dst[e] - frm[real]
        s[real] = p.gids[other]
        w[real] = g.edge_weight[e]
        s[cap[frm] == 0] = -1
        msg[back, 3] = s
        msg[back, 4] = w.view(np.int64)
    counts = np.bincount(kind, minlength=3)
    stats.proposals += int(counts[K.PROP])
    stats.rejections += int(counts[K.REJ])
    stats.annulments += int(counts[K.ANL])
    dest = p.owner[o[:, 1]]
    srt = np.argsort(dest, kind="stable")
    msg = msg[srt]
    dest = dest[srt]
    cuts = np.searchsorted(dest, p.neighbours + [p.comm.size])
    out = {}
    for i, r in enumerate(p.neighbours):
        out[r] = np.ascontiguousarray(msg[cuts[i] : cuts[i + 1]]).ravel()
    if len(p.neighbours) and cuts[-1] != k:
        raise RuntimeError("a message is addressed to a rank that is not a neighbour")
    return out


def _result(p, st, g, comm, stats):
    ov, w = p.owned_ids, g.weights
    indptr, partner, weight, upper = K.suitors_of(ov, st, p.gids, w, QUEUE_PARALLEL_MIN)
    total = int(indptr[-1])
    vert = p.gids[p.owned_ids]
    # Every suitor relation must be mutual at the end (Khan et al. §III).
    tot = allreduce(comm, np.array([total, upper], np.int64), "sum", "the final check")
    if tot[0] != 2 * tot[1]:  # the same sums on every rank: all raise together
        raise RuntimeError("b-Suitor ended with a suitor relation that is not mutual")
    return DistributedMatching(p.num_nodes, vert, indptr, partner, weight, stats, comm)
