"""Distributed ½-approximate matching: Suitor (b-Suitor with b = 1) and
local max (Birn et al. 2013: rounds of locally dominant edges)."""

import time

import numpy as np

from nx_gpumatch import cpu
from nx_gpumatch._validation import check_threads
from nx_gpumatch.cpu import matching as cm
from nx_gpumatch.distributed._comm import (
    Neighbours,
    abort_on_error,
    allreduce_sum,
    check,
    get_comm,
    same,
)
from nx_gpumatch.distributed.b_matching import as_partition, b_matching
from nx_gpumatch.distributed.partition import small_call
from nx_gpumatch.distributed.result import DistributedMatching, Stats

__all__ = ["max_weight_matching"]

ALGORITHMS = ("suitor", "local_max")


def _check_algorithm(algorithm):
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")


def max_weight_matching(
    part,
    *,
    algorithm="suitor",
    comm=None,
    num_nodes=None,
    owner=None,
    duplicates="last",
    threads=None,
    **strategy,
):
    """½-approximate maximum-weight matching of a graph spread over the ranks.

    Collective; ``part`` is this rank's share of the edges (see
    :func:`nx_gpumatch.distributed.as_partition`). Both algorithms return the
    greedy matching under the package's edge order, equal to
    ``nx_gpumatch.max_weight_matching(G, algorithm="suitor")``. Suitor accepts
    b-Suitor's strategy keywords (``ordering``, ``vertex_subsets``,
    ``partial_sort``). ``result.mate`` gives each owned vertex's partner.
    """
    comm = get_comm(comm)
    check(comm, _check_algorithm, algorithm)
    same(comm, "algorithm", algorithm)
    if algorithm == "suitor":
        return b_matching(
            part,
            1,
            comm=comm,
            num_nodes=num_nodes,
            owner=owner,
            duplicates=duplicates,
            threads=threads,
            **strategy,
        )
    check(comm, _no_strategy, strategy, threads)
    t0 = time.perf_counter()
    p = abort_on_error(
        comm, as_partition, part, comm, num_nodes=num_nodes, owner=owner, duplicates=duplicates
    )
    t_part = time.perf_counter() - t0

    with small_call(p, "matching", threads) or cpu.threads(threads):
        res = abort_on_error(comm, _local_max, p, comm)
    res.stats.times["partition"] = t_part
    res.stats.finish(comm)
    return res


def _no_strategy(strategy, threads):
    check_threads(threads)  # here, so that a bad value on one rank fails on all
    if strategy:
        raise TypeError(f"local_max takes no strategy keywords, got {sorted(strategy)}")


def _local_max(p, comm):
    from nx_gpumatch.distributed import _local_max as L

    stats = Stats()
    t = time.perf_counter()
    g = p.graph
    nl = g.num_nodes
    usable = int(np.count_nonzero(g.edge_weight > 0))
    sptr, snbr = cm.sorted_adjacency(nl, g.edge_src, g.edge_dst, g.edge_order(), usable)
    mate = np.full(nl, -1, np.int64)  # ghosts: -1 free, -2 matched elsewhere or here
    head = sptr[:-1].copy()
    cand = np.full(nl, -1, np.int64)
    owned = p.owned
    active = p.owned_ids.astype(np.int64)
    active = active[sptr[active + 1] > sptr[active]]
    nb = Neighbours(comm, p.neighbours)
    stats.times["setup"] = time.perf_counter() - t
    t_comp = t_comm = 0.0
    carried = np.zeros(nl, np.bool_)  # candidates changed by settle, not yet sent
    while True:
        t = time.perf_counter()
        changed = L.candidates(active, sptr, snbr, mate, head, cand)
        changed |= carried & (mate == -1)
        active = active[cand[active] >= 0]
        t_comp += time.perf_counter() - t
        t = time.perf_counter()
        n_active = allreduce_sum(comm, int(active.shape[0]))
        if n_active == 0:
            t_comm += time.perf_counter() - t
            break
        stats.rounds += 1
        # Candidates of boundary vertices that changed, to the ranks where they are ghosts.
        out = {}
        for r in p.neighbours:
            bnd = p.boundary[r]
            sel = bnd[changed[bnd]]
            c = cand[sel]
            out[r] = np.stack(
                [p.gids[sel], np.where(c >= 0, p.gids[np.maximum(c, 0)], -1)], 1
            ).ravel()
            stats.candidate_updates += sel.shape[0]
        got = nb.exchange(out)
        for r, buf in got.items():
            m = buf.reshape(-1, 2)
            gv = p.local(m[:, 0])
            cg = m[:, 1]
            loc = np.minimum(p.local(cg), nl - 1)
            known = (cg >= 0) & (p.gids[loc] == cg)
            cand[gv] = np.where(known, loc, np.where(cg >= 0, -2, -1))
        t_comm += time.perf_counter() - t
        t = time.perf_counter()
        newly = L.match_mutual(active, cand, mate, owned)
        carried[:] = False
        L.settle(active, sptr, snbr, head, cand, mate, owned, newly, carried)
        t_comp += time.perf_counter() - t
        t = time.perf_counter()
        # Newly matched boundary vertices, so that neighbours stop pointing at them.
        out = {}
        for r in p.neighbours:
            bnd = p.boundary[r]
            sel = bnd[newly[bnd]]
            out[r] = p.gids[sel].astype(np.int64)
            stats.matched_updates += sel.shape[0]
        got = nb.exchange(out)
        for r, buf in got.items():
            gv = p.local(buf)
            mate[gv] = np.where(mate[gv] >= 0, mate[gv], -2)
        t_comm += time.perf_counter() - t
        active = active[mate[active] < 0]
    stats.supersteps = stats.rounds
    stats.times["compute"] = t_comp
    stats.times["communicate"] = t_comm
    ov = p.owned_ids
    m = mate[ov]
    has = m >= 0
    indptr = np.zeros(ov.shape[0] + 1, np.int64)
    np.cumsum(has, out=indptr[1:])
    partner_local = m[has]
    a = ov[has]
    # weight of edge (a, partner): binary search in a's CSR row
    pos = L.arc_positions(g.indptr, g.indices, a, partner_local)
    weights = g.weights[pos] if pos.size else np.zeros(0)
    return DistributedMatching(
        p.num_nodes, p.gids[ov], indptr, p.gids[partner_local], weights, stats, comm
    )
