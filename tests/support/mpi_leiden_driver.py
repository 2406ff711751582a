"""Cases for the distributed Leiden, run under ``mpiexec -n P`` by
tests/distributed/test_distributed_leiden.py (one launch runs every case).

Every rank builds the same global edge list and passes its slice. Checks, for
modularity and CPM: each vertex labelled once with dense labels, every
community connected (networkx on the gathered labels, and the collective
``connected()``), the objective equal to one computed here from the gathered
labels, the same labels on a second run and for another split of the edges,
the mean over seeds at most 0.5% below the shared-memory engine's; bad input
refused on every rank with the same message. Prints ``ok <case>`` on rank 0 per
passing case and ``FAIL <case>: ...`` otherwise; exits non-zero if any failed.
"""

import sys

import networkx as nx
import numpy as np
from mpi4py import MPI
from mpi_louvain_driver import even_slice, expect_error, labelled_once, last_rank_slice, nx_graph
from mpi_report import failures, report

import nx_gpumatch as gm
from nx_gpumatch import distributed as D
from nx_gpumatch import generators
from nx_gpumatch.graph import Graph

comm = MPI.COMM_WORLD
P, RANK = comm.size, comm.rank
SEEDS = (None, 1, 2, 3)
TOLERANCE = 0.005  # mean over SEEDS at most 0.5% below the shared memory's
RUNS = (("modularity", 1.0), ("cpm", 0.05))


def objective(src, dst, w, loops, labels, metric, resolution):
    """Modularity or CPM of ``labels`` from the edge list (each pair once)."""
    w = np.ones(src.shape[0]) if w is None else w
    inner = float(w[labels[src] == labels[dst]].sum()) + float(loops.sum())
    if metric == "cpm":
        sizes = np.bincount(labels).astype(np.float64)
        return inner - resolution * float(sizes @ sizes) / 2.0
    m = float(w.sum()) + float(loops.sum())
    deg = np.bincount(src, w, labels.shape[0]) + np.bincount(dst, w, labels.shape[0]) + 2 * loops
    vol = np.bincount(labels, deg)
    return inner / m - resolution * float(vol @ vol) / (4 * m * m)


def simple(src, dst, w, n):
    """The graph as networkx keeps it: each pair once (last weight), loops apart."""
    G = nx_graph(src, dst, w, n)
    loops = np.zeros(n)
    for u, _, d in nx.selfloop_edges(G, data=True):
        loops[u] = d["weight"]
    G.remove_edges_from(list(nx.selfloop_edges(G)))
    e = np.array([(u, v, d["weight"]) for u, v, d in G.edges(data=True)]).reshape(-1, 3)
    return G, e[:, 0].astype(np.int64), e[:, 1].astype(np.int64), e[:, 2], loops


def graphs():
    g, _ = generators.planted_partition(600, 12, 8, 3, seed=4)
    yield "planted", g.edge_src.astype(np.int64), g.edge_dst.astype(np.int64), g.edge_weight, 600
    r = D.random_edges(800, 3200, seed=7, comm=False)
    yield "random", r["src"], r["dst"], r["weight"], 800
    g = generators.chung_lu(800, 6.0, 2.3, seed=5)
    yield "power-law", g.edge_src.astype(np.int64), g.edge_dst.astype(np.int64), g.edge_weight, 800
    # Self-loops, repeated and reversed pairs, isolated vertices (70..79).
    rng = np.random.default_rng(8)
    s = rng.integers(0, 70, 300)
    t = np.where(rng.random(300) < 0.7, s // 10 * 10 + rng.integers(0, 10, 300), s)
    t[:20] = s[:20]
    w = rng.integers(1, 5, 300).astype(float)
    s, t = np.concatenate([s, t[:50]]), np.concatenate([t, s[:50]])
    w = np.concatenate([w, rng.integers(1, 5, 50).astype(float)])
    yield "loops", s, t, w, 80


def group_quality():
    for name, src, dst, w, n in graphs():
        G, es, ed, ew, loops = simple(src, dst, w, n)
        ref = Graph.from_arrays(src, dst, w, num_nodes=n)
        for metric, res in RUNS:
            qd, qs = [], []
            for seed in SEEDS:
                case = f"{name} {metric} seed={seed}"
                kw = {"num_nodes": n, "seed": seed, "metric": metric, "resolution": res}
                out = D.leiden_communities(even_slice(src, dst, w), **kw)
                ok, why = labelled_once(out, n)
                report(f"{case} labelled once", ok, why)
                lab = out.gather()
                value = out.modularity() if metric == "modularity" else out.cpm()
                conn = out.connected()
                good = detail = None
                if RANK == 0:
                    mine = objective(es, ed, ew, loops, lab, metric, res)
                    good = abs(value - mine) <= 1e-9 * max(1.0, abs(mine))
                    good = good and abs(out.quality_found - mine) <= 1e-7 * max(1.0, abs(mine))
                    detail = f"computed {value}, found {out.quality_found}, here {mine}"
                    parts = [np.flatnonzero(lab == c) for c in range(int(lab.max()) + 1)]
                    nx_conn = all(nx.is_connected(G.subgraph(c.tolist())) for c in parts)
                    conn = conn and nx_conn
                    qd.append(mine)
                    shared = np.asarray(gm.leiden_communities(ref, seed=seed, **kw_shared(kw)))
                    qs.append(objective(es, ed, ew, loops, shared, metric, res))
                report(f"{case} objective", comm.bcast(good), comm.bcast(detail))
                report(f"{case} every community connected", comm.bcast(conn))
                again = D.leiden_communities(even_slice(src, dst, w), **kw)
                same = comm.allreduce(int(np.array_equal(again.labels, out.labels)), MPI.MIN)
                report(f"{case} same labels on a second run", same == 1)
                if seed == 1:
                    other = D.leiden_communities(last_rank_slice(src, dst, w), **kw).gather()
                    report(
                        f"{case} same labels for another split",
                        comm.bcast(np.array_equal(other, lab) if RANK == 0 else None),
                    )
            good = detail = None
            if RANK == 0:
                md, ms = float(np.mean(qd)), float(np.mean(qs))
                print(f"{metric} {name} P={P}: distributed {md:.6f} shared {ms:.6f}", flush=True)
                good = md >= ms - TOLERANCE * abs(ms)
                detail = f"distributed {qd} vs shared memory {qs}"
            report(
                f"{name} {metric} near the shared memory's", comm.bcast(good), comm.bcast(detail)
            )


def kw_shared(kw):
    return {"metric": kw["metric"], "resolution": kw["resolution"]}


def group_edge_cases():
    z = np.zeros(0, np.int64)
    for metric in ("modularity", "cpm"):
        out = D.leiden_communities((z, z), num_nodes=5, metric=metric, resolution=0.5)
        lab = out.gather()
        ok = RANK != 0 or np.array_equal(lab, np.arange(5))
        if metric == "cpm":
            ok = ok and out.quality_found == -0.5 * 5 / 2 and out.cpm() == -0.5 * 5 / 2
        report(f"no edges ({metric})", comm.bcast(ok if RANK == 0 else None) and ok)
    e = (np.array([0]), np.array([1])) if RANK == 0 else (z, z)
    lab = D.leiden_communities(e, num_nodes=2).gather()
    report("fewer vertices than ranks", RANK != 0 or list(lab) == [0, 0], f"{lab}")
    g, _ = generators.planted_partition(300, 5, 8, 1, seed=2)
    src, dst, w = g.edge_src.astype(np.int64), g.edge_dst.astype(np.int64), g.edge_weight
    out = D.leiden_communities(even_slice(src, dst, w), num_nodes=300, max_level=1)
    report("max_level=1", out.stats.total["levels"] == 1 and len(out.stats.level_info) == 1)
    out = D.leiden_communities(even_slice(src, dst, w), num_nodes=300, passes=1, seed=3)
    info = out.stats.level_info
    ok = all(i["modularity"] <= j["modularity"] + 1e-12 for i, j in zip(info, info[1:]))
    ok = ok and abs(info[-1]["modularity"] - out.modularity()) <= 1e-9 and out.modularity() > 0.6
    report("passes=1: levels rise to the result", ok, f"{info}")
    owner = np.random.default_rng(9).integers(0, P, 300)
    out = D.leiden_communities(even_slice(src, dst, w), num_nodes=300, owner=owner, seed=2)
    ok, why = labelled_once(out, 300)
    ok = ok and out.connected() and out.modularity() > 0.6
    ok = ok and np.array_equal(np.flatnonzero(owner == RANK), np.sort(out.vertices))
    report("random owners", comm.allreduce(int(ok), MPI.MIN) == 1, why)
    st = out.stats
    ok = st.total["sweeps"] >= 1 and st.time["refine"] > 0 and 0 <= st.slowest_rank < P
    report("statistics", ok and (P == 1 or st.total["messages"] > 0), f"{st.as_dict()}")
    # connected() sees a community in two pieces: two cliques put in one.
    cl = [(u, v) for c in (0, 5) for u in range(c, c + 5) for v in range(u + 1, c + 5)]
    s, t = np.array(cl).T
    out = D.leiden_communities(even_slice(s, t, None), num_nodes=10)
    ok = out.connected() and out.num_communities() == 2
    out.labels[:] = 0
    report("connected() finds a split community", ok and not out.connected())


def group_exchange():
    """Two Neighbours objects exchange back to back (the same tag): rank 1
    waits for ranks 0 and 2, rank 2 is late, and rank 0 is done with the
    first exchange and posts its second batch before rank 2's first arrives.
    Rank 1 must take rank 0's first batch in the first exchange."""
    import time

    from nx_gpumatch.distributed._comm import Neighbours

    if P < 3:
        return
    near = {0: [1], 1: [0, 2], 2: [1]}.get(RANK, [])
    got = []
    for step in (1, 2):
        if RANK == 2 and step == 1:
            time.sleep(0.3)
        nb = Neighbours(comm, near)
        got.append(nb.exchange({r: np.array([step, RANK], np.int64) for r in near}))
    ok = all(int(g[r][0]) == s and int(g[r][1]) == r for s, g in zip((1, 2), got) for r in near)
    report("back-to-back exchanges keep their batches apart", comm.allreduce(int(ok), MPI.MIN) == 1)


def group_totals():
    """The sub-community totals a refinement keeps up to date round by round
    (each rank adds its own moves' changes) equal those recomputed from the
    arcs at its end."""
    from nx_gpumatch.distributed import leiden as L
    from nx_gpumatch.distributed._levels import intra_weights

    run_cls, seen = L._LeidenRun, []
    refine, round_totals = run_cls.refine, run_cls.round_totals

    def kept(self, Ur, totals, rs):
        out = round_totals(self, Ur, totals, rs)
        self.last_ext = out[2]
        return out

    def checked(self, lvl, level, comm_g, a, salt):
        self.last_ext = None
        ref_g, ra, rsize = refine(self, lvl, level, comm_g, a, salt)
        if self.last_ext is None:  # no round after the singletons
            return ref_g, ra, rsize
        own, n = lvl.owned_ids, lvl.n
        ext = intra_weights(lvl, comm_g)[own] - intra_weights(lvl, ref_g)[own]
        local = np.concatenate(
            [np.bincount(ref_g[own], x, minlength=n) for x in (lvl.k[own], None, ext)]
        )
        want = comm.allreduce(local)
        got = np.concatenate([ra, rsize, self.last_ext])
        seen.append(float(np.abs(got - want).max() / max(1.0, np.abs(want).max())))
        return ref_g, ra, rsize

    run_cls.refine, run_cls.round_totals = checked, kept
    try:
        g, _ = generators.planted_partition(600, 12, 8, 3, seed=4)
        src, dst, w = g.edge_src.astype(np.int64), g.edge_dst.astype(np.int64), g.edge_weight
        for metric, res in RUNS:
            D.leiden_communities(
                even_slice(src, dst, w), num_nodes=600, metric=metric, resolution=res
            )
    finally:
        run_cls.refine, run_cls.round_totals = refine, round_totals
    worst = comm.allreduce(max(seen, default=0.0), MPI.MAX)
    rounds = comm.allreduce(len(seen))
    report(
        "refinement totals kept round by round",
        worst <= 1e-12 and (P == 1 or rounds > 0),
        f"{rounds} refinements, largest relative difference {worst}",
    )


def group_errors():
    src, dst = np.array([0, 1, 2, 3]), np.array([1, 2, 3, 0])
    last = RANK == P - 1
    w = np.array([1.0, 2.0, np.nan if last else 1.0, 1.0])
    expect_error("NaN weight", "finite", lambda: D.leiden_communities((src, dst, w)))
    w = np.array([1.0, -2.0 if last else 2.0, 1.0, 1.0])
    expect_error("negative weight", "non-negative", lambda: D.leiden_communities((src, dst, w)))
    expect_error("bad theta", "theta", lambda: D.leiden_communities((src, dst), theta=0.0))
    expect_error("bad metric", "metric", lambda: D.leiden_communities((src, dst), metric="x"))
    expect_error("bad passes", "passes", lambda: D.leiden_communities((src, dst), passes=0))
    if P > 1:
        expect_error(
            "metric differing across ranks",
            "differs across ranks",
            lambda: D.leiden_communities((src, dst), metric="cpm" if last else "modularity"),
        )


if __name__ == "__main__":
    groups = sys.argv[1:] or ["quality", "edge_cases", "totals", "exchange", "errors"]
    for grp in groups:
        globals()[f"group_{grp}"]()
    comm.Barrier()
    sys.exit(1 if comm.allreduce(len(failures)) else 0)
