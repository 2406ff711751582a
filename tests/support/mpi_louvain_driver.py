"""Cases for the distributed Louvain, run under ``mpiexec -n P`` by
tests/distributed/test_distributed_louvain.py (one launch runs every case, so that the
Numba kernels load once per rank).

Every rank builds the same global edge list and passes its slice. Checks: each
vertex labelled once with dense labels, the same labels on a second run and
for another split of the edges, modularity equal to networkx's of the gathered
partition and close to the shared-memory engine's, bad input refused on every
rank with the same message. Prints ``ok <case>`` on rank 0 per passing case and
``FAIL <case>: ...`` otherwise; exits non-zero if any case failed.
"""

import sys

import networkx as nx
import numpy as np
from mpi4py import MPI
from mpi_report import failures, report

import nx_gpumatch as gm
from nx_gpumatch import distributed as D
from nx_gpumatch import generators
from nx_gpumatch.graph import Graph

comm = MPI.COMM_WORLD
P, RANK = comm.size, comm.rank
SEEDS = (None, 1, 2, 3, 4, 5)
TOLERANCE = 0.005  # mean modularity over SEEDS at most 0.5% below the shared memory's


def even_slice(src, dst, w):
    k = np.array_split(np.arange(src.shape[0]), P)[RANK]
    return src[k], dst[k], None if w is None else w[k]


def last_rank_slice(src, dst, w):
    """Every edge on the last rank, none elsewhere."""
    k = slice(None) if RANK == P - 1 else slice(0, 0)
    return src[k], dst[k], None if w is None else w[k]


def nx_graph(src, dst, w, n):
    """networkx's graph of the edge list (a repeated pair keeps its last weight)."""
    G = nx.Graph()
    G.add_nodes_from(range(n))
    w = np.ones(src.shape[0]) if w is None else w
    G.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), w.tolist()))
    return G


def nx_modularity(G, labels, resolution=1.0):
    parts = [set(np.flatnonzero(labels == c).tolist()) for c in range(int(labels.max()) + 1)]
    return nx.community.modularity(G, parts, resolution=resolution)


def labelled_once(res, n):
    """Owned vertices disjoint and covering [0, n); labels dense 0..K-1."""
    parts = comm.allgather((res.vertices, res.labels))
    v = np.concatenate([p[0] for p in parts])
    lab = np.concatenate([p[1] for p in parts])
    if v.shape[0] != n or not np.array_equal(np.sort(v), np.arange(n)):
        return False, f"owned vertices are not a partition of 0..{n - 1}"
    K = res.num_communities()
    if n and not np.array_equal(np.unique(lab), np.arange(K)):
        return False, f"labels not dense in 0..{K - 1}"
    return True, ""


def graphs():
    g, _ = generators.planted_partition(600, 8, 10, 2, seed=4)
    yield "planted", g.edge_src.astype(np.int64), g.edge_dst.astype(np.int64), g.edge_weight, 600
    r = D.random_edges(1000, 5000, seed=7, comm=False)
    yield "random", r["src"], r["dst"], r["weight"], 1000
    g, _ = generators.planted_partition(300, 5, 8, 3, seed=6, weights=None)
    yield "planted-unweighted", g.edge_src.astype(np.int64), g.edge_dst.astype(np.int64), None, 300
    # Self-loops, repeated pairs (the last weight counts), reversed pairs,
    # isolated vertices (ids 70..79).
    rng = np.random.default_rng(8)
    s = rng.integers(0, 70, 300)
    t = np.where(rng.random(300) < 0.7, s // 10 * 10 + rng.integers(0, 10, 300), s)
    t[:20] = s[:20]
    w = rng.integers(1, 5, 300).astype(float)
    s = np.concatenate([s, t[:50]])
    t = np.concatenate([t, s[:50]])
    w = np.concatenate([w, rng.integers(1, 5, 50).astype(float)])
    yield "loops", s, t, w, 80


def group_quality():
    for name, src, dst, w, n in graphs():
        G = nx_graph(src, dst, w, n)
        ref = Graph.from_arrays(src, dst, w, num_nodes=n)
        qd, qs = [], []
        for seed in SEEDS:
            res = D.louvain_communities(even_slice(src, dst, w), num_nodes=n, seed=seed)
            case = f"{name} seed={seed}"
            ok, why = labelled_once(res, n)
            report(f"{case} labelled once", ok, why)
            lab = res.gather()
            q = res.modularity()
            if RANK == 0:
                qnx = nx_modularity(G, lab)
                good = abs(q - qnx) <= 1e-9 and abs(res.modularity_found - qnx) <= 1e-9
                detail = f"modularity() {q}, found {res.modularity_found}, networkx {qnx}"
                qd.append(qnx)
                labels = gm.louvain_communities(ref, seed=seed)
                qs.append(nx_modularity(G, np.asarray(labels)))
            good = comm.bcast(good if RANK == 0 else None)
            report(f"{case} modularity equals networkx's", good, detail if RANK == 0 else "")
            again = D.louvain_communities(even_slice(src, dst, w), num_nodes=n, seed=seed)
            same = bool(np.array_equal(again.labels, res.labels))
            same = comm.allreduce(int(same), MPI.MIN) == 1
            report(f"{case} same labels on a second run", same)
            if seed == 1:
                other = D.louvain_communities(last_rank_slice(src, dst, w), num_nodes=n, seed=seed)
                got = other.gather()
                same = np.array_equal(got, lab) if RANK == 0 else None
                report(f"{case} same labels for another split", comm.bcast(same))
        if RANK == 0:
            md, ms = float(np.mean(qd)), float(np.mean(qs))
            print(f"modularity {name} P={P}: distributed {md:.6f} shared {ms:.6f}", flush=True)
            good = md >= ms - TOLERANCE * abs(ms)
            detail = f"distributed {qd} vs shared memory {qs}"
        good = comm.bcast(good if RANK == 0 else None)
        report(f"{name} modularity near the shared memory's", good, detail if RANK == 0 else "")


def worst_graphs():
    """Shapes that random graphs hide: a star, a long path, hubs on a ring,
    a grid (unit weights)."""
    n = 1500
    yield "star", np.zeros(n - 1, np.int64), np.arange(1, n, dtype=np.int64), n
    yield "path", np.arange(n - 1, dtype=np.int64), np.arange(1, n, dtype=np.int64), n
    k, leaves = 20, 60
    src = np.concatenate([np.repeat(np.arange(k), leaves), np.arange(k)])
    dst = np.concatenate([k + np.arange(k * leaves), (np.arange(k) + 1) % k])
    yield "hubs", src.astype(np.int64), dst.astype(np.int64), k + k * leaves
    side = 30
    ids = np.arange(side * side).reshape(side, side)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    yield "grid", src.astype(np.int64), dst.astype(np.int64), side * side


def group_worst():
    """Louvain and Leiden on :func:`worst_graphs`: every vertex labelled once,
    modularity at most 0.005 below the shared-memory engine's (these graphs'
    modularity is near 0 or near 1: an absolute bound), every Leiden
    community connected."""
    for name, src, dst, n in worst_graphs():
        G = nx_graph(src, dst, None, n)
        ref = Graph.from_arrays(src, dst, None, num_nodes=n)
        for method in ("louvain", "leiden"):
            res = getattr(D, f"{method}_communities")(
                even_slice(src, dst, None), num_nodes=n, seed=1
            )
            case = f"worst {name} {method}"
            ok, why = labelled_once(res, n)
            report(f"{case} labelled once", ok, why)
            lab = res.gather()
            connected = res.connected() if method == "leiden" else True
            good, detail = None, ""
            if RANK == 0:
                q = nx_modularity(G, lab)
                qs = nx_modularity(G, np.asarray(getattr(gm, f"{method}_communities")(ref, seed=1)))
                good = q >= qs - 0.005 and connected
                detail = f"modularity {q} vs shared memory {qs}, connected {connected}"
            report(f"{case} modularity near the shared memory's", comm.bcast(good), detail)


def group_edge_cases():
    # No edges: every vertex alone.
    z = np.zeros(0, np.int64)
    res = D.louvain_communities((z, z), num_nodes=5)
    lab = res.gather()
    ok = res.modularity() == 0.0 and (RANK != 0 or np.array_equal(lab, np.arange(5)))
    report("no edges", comm.bcast(ok if RANK == 0 else None) and ok)
    # Fewer vertices than ranks.
    e = (np.array([0]), np.array([1])) if RANK == 0 else (z, z)
    res = D.louvain_communities(e, num_nodes=2)
    lab = res.gather()
    report("fewer vertices than ranks", RANK != 0 or list(lab) == [0, 0], f"{lab}")
    # A Partition built with the self-loops, resolution and max_level.
    g, _ = generators.planted_partition(300, 5, 8, 1, seed=2)
    src, dst, w = g.edge_src.astype(np.int64), g.edge_dst.astype(np.int64), g.edge_weight
    part = D.partition_edges(*even_slice(src, dst, w), num_nodes=300, loops=True)
    res = D.louvain_communities(part, max_level=1, resolution=0.5)
    G = nx_graph(src, dst, w, 300)
    lab = res.gather()
    q = res.modularity()
    ok = res.stats.total["levels"] == 1
    if RANK == 0:
        ok = ok and abs(q - nx_modularity(G, lab, 0.5)) <= 1e-9
    report("max_level=1 and resolution=0.5", comm.bcast(ok if RANK == 0 else None))
    # Any owner of the input vertices (coarse levels are in blocks).
    owner = np.random.default_rng(9).integers(0, P, 300)
    res = D.louvain_communities(even_slice(src, dst, w), num_nodes=300, owner=owner, seed=2)
    ok, why = labelled_once(res, 300)
    lab = res.gather()
    q = res.modularity()
    if RANK == 0:
        ok = ok and abs(q - nx_modularity(G, lab)) <= 1e-9 and q > 0.6
        ok = ok and np.array_equal(np.sort(np.flatnonzero(owner == 0)), np.sort(res.vertices))
    report("random owners", comm.bcast(ok if RANK == 0 else None), why)
    res = D.louvain_communities(part, max_level=1, resolution=0.5)
    st = res.stats
    ok = st.total["sweeps"] >= 1 and st.time["move"] > 0 and 0 <= st.slowest_rank < P
    ok = ok and (P == 1 or st.total["messages"] > 0)
    report("statistics", ok, f"{st.as_dict()}")


def expect_error(name, text, fn):
    try:
        fn()
        msg = None
    except D.DistributedError as exc:
        msg = str(exc)
    msgs = comm.allgather(msg)
    ok = msgs[0] is not None and text in msgs[0] and all(m == msgs[0] for m in msgs)
    report(name, ok, f"{msgs}")


def group_errors():
    src, dst = np.array([0, 1, 2, 3]), np.array([1, 2, 3, 0])
    last = RANK == P - 1
    w = np.array([1.0, 2.0, np.nan if last else 1.0, 1.0])
    expect_error("NaN weight", "finite", lambda: D.louvain_communities((src, dst, w)))
    w = np.array([1.0, -2.0 if last else 2.0, 1.0, 1.0])
    expect_error("negative weight", "non-negative", lambda: D.louvain_communities((src, dst, w)))
    bad = np.array([0, -1 if last else 1, 2, 3])
    expect_error("negative id", ">= 0", lambda: D.louvain_communities((bad, dst)))
    expect_error(
        "id past num_nodes", "[0, 3)", lambda: D.louvain_communities((src, dst), num_nodes=3)
    )
    expect_error(
        "bad resolution",
        "resolution",
        lambda: D.louvain_communities((src, dst), resolution=np.nan if last else 1.0),
    )
    expect_error(
        "bad max_level", "max_level", lambda: D.louvain_communities((src, dst), max_level=0)
    )
    if P > 1:
        expect_error(
            "seed differing across ranks",
            "differs across ranks",
            lambda: D.louvain_communities((src, dst), seed=RANK),
        )
    part = D.partition_edges(src, dst)
    expect_error("Partition without loops", "loops=True", lambda: D.louvain_communities(part))


if __name__ == "__main__":
    groups = sys.argv[1:] or ["quality", "edge_cases", "errors"]
    for grp in groups:
        globals()[f"group_{grp}"]()
    comm.Barrier()
    sys.exit(1 if comm.allreduce(len(failures)) else 0)
