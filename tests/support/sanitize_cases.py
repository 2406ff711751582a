"""One small case of every kernel family, run by the emulated GPU engine
(``results("emulate")``, in a child process under a checking mode of the
emulation, see test_emulation_sanitize.py) or by the CPU engine
(``results("cpu")``). Both return the same JSON-able dict, to compare. Integer
weights, so Louvain's and Leiden's sums are exact and results must be equal."""

import numpy as np
import scipy.sparse as sp

import nx_gpumatch
from nx_gpumatch import Graph
from nx_gpumatch import generators as gen
from nx_gpumatch._validation import seed_key
from nx_gpumatch.algorithms import stable_marriage as sm
from nx_gpumatch.algorithms.b_matching import b_matching_edges
from nx_gpumatch.algorithms.bipartite.matching import Biadjacency, solve
from nx_gpumatch.algorithms.matching import mate_array
from nx_gpumatch.cpu import leiden as cle
from nx_gpumatch.cpu import louvain as cl


def _hub_graph(d=120, taken=90):
    """A hub of d leaves whose b-Suitor search spans several candidate batches
    (the best ``taken`` leaves have better partners elsewhere)."""
    rng = np.random.default_rng(0)
    leaves = np.arange(1, d + 1)
    w_hub = 1.0 + rng.permutation(d) / d
    best = leaves[np.argsort(-w_hub)[:taken]]
    src = np.concatenate([np.zeros(d, np.int64), best])
    dst = np.concatenate([leaves, d + 1 + np.arange(taken)])
    w = np.concatenate([w_hub, np.full(taken, 10.0)])
    return Graph.from_arrays(src, dst, w)


def _wide_rows_graph():
    """Rows for every thread count of the matching kernels: a hub of 600
    arcs (a block), vertices of 20 to 60 (a warp), short ones (a thread),
    whose leaves also court each other. A path through every vertex leaves
    none isolated, so red-blue draws for the same vertex ids as the CPU
    engine, which the front end hands a graph without isolated vertices."""
    rng = np.random.default_rng(1)
    n = 700
    src = [np.zeros(600, np.int64), np.repeat(np.arange(1, 6), 40), rng.integers(6, n, 2 * n)]
    dst = [rng.choice(np.arange(1, n), 600, replace=False), rng.integers(6, n, 200)]
    dst.append(rng.integers(6, n, 2 * n))
    src.append(np.arange(n - 1))
    dst.append(np.arange(1, n))
    src, dst = np.concatenate(src), np.concatenate(dst)
    keep = src != dst
    w = rng.integers(1, 30, keep.sum()).astype(np.float64)
    return Graph.from_arrays(src[keep], dst[keep], w, num_nodes=n)


def _refinement(backend):
    """One refinement of a planted graph's coarse partition with the hub's
    community and the large ones on warps, the others on threads."""
    p = _planted(600, 4, 2, hub=80)
    n = p.num_nodes
    rng = np.random.default_rng(3)
    comm = rng.integers(0, 12, n).astype(np.int32)
    comm[:300] = 12  # 300 members: a warp's community
    order = rng.permutation(n).astype(np.int32)
    k = cl.weighted_degrees(p.indptr, p.weights, p.loop_weight)
    res = 1.0 / float(k.sum())
    if backend == "cpu":
        a = np.bincount(comm, weights=k, minlength=n)
        args = (k, comm, a, order, res, 0.01, np.uint64(31), np.int64(1))
        return cle.refine(p.indptr, p.indices, p.weights, *args).tolist()
    from nx_gpumatch.gpu import _strict
    from nx_gpumatch.gpu import leiden as gle
    from nx_gpumatch.gpu import louvain as gl
    from nx_gpumatch.gpu._launch import get_module, to_host

    lev = gl._Level(
        _strict, *map(_strict.asarray, (p.indptr, p.indices, p.weights, p.loop_weight, k))
    )
    kernels = (get_module("louvain", backend), get_module("leiden", backend))
    prio = cl.vertex_order(order, n)[1]
    got = gle.refine(_strict, kernels, lev, *map(_strict.asarray, (comm, prio)), res, 0.01, 31, 1)
    return to_host(got).tolist()


def _planted(n, groups, seed, hub):
    """Planted groups, integer weights 1..3, one hub joined to ``hub`` vertices."""
    rng = np.random.default_rng(seed)
    block = rng.integers(0, groups, n)
    src = rng.integers(0, n, 3 * n)
    same = rng.random(src.shape[0]) < 0.85
    other = rng.integers(0, n, src.shape[0])
    members = [np.flatnonzero(block == b) for b in range(groups)]
    dst = np.where(same, [rng.choice(members[block[u]]) for u in src], other)
    src = np.concatenate([src, np.zeros(hub, np.int64)])
    dst = np.concatenate([dst, rng.choice(n, hub, replace=False)])
    w = rng.integers(1, 4, src.shape[0]).astype(np.float64)
    return Graph.from_arrays(src, dst, w, num_nodes=n)


def _levels(engine, g, **kw):
    return [
        [lab.tolist(), float(info["modularity"])]
        for lab, info in engine(g.indptr, g.indices, g.weights, g.loop_weight, **kw)
    ]


def _engine_seed(kw):
    """An engine's options for the front end's ``kw``: the key the front end
    draws from its seed."""
    return dict(kw, seed=seed_key(kw["seed"])) if "seed" in kw else kw


def results(backend):
    """{case: result} of the GPU engine in emulation (backend "emulate") or of
    the CPU engine (backend "cpu")."""
    gpu = backend != "cpu"
    out = {}
    g = gen.rmat(7, 6, kind="g500", seed=5)
    for alg, kw in (
        ("suitor", {}),
        ("local_max", {}),
        ("red_blue", {"seed": 77, "select": "weighted"}),
    ):
        if gpu:
            from nx_gpumatch.gpu import matching as gm

            mate = gm.run(g, alg, backend=backend, **_engine_seed(kw))
        else:
            mate = mate_array(g, "greedy" if alg != "red_blue" else alg, device="cpu", **kw)
        out[alg] = np.asarray(mate).tolist()

    wide = _wide_rows_graph()
    for alg, kw in (("local_max", {}), ("red_blue", {"seed": 5, "select": "random"})):
        if gpu:
            from nx_gpumatch.gpu import matching as gm

            mate = gm.run(wide, alg, backend=backend, **_engine_seed(kw))
        else:
            mate = mate_array(wide, "greedy" if alg == "local_max" else alg, device="cpu", **kw)
        out[f"{alg} wide rows"] = np.asarray(mate).tolist()

    h = _hub_graph()
    for hub_b in (1, 4):
        b = np.ones(h.num_nodes, np.int64)
        b[0] = hub_b
        if gpu:
            from nx_gpumatch.gpu import b_matching as gbm

            edges = gbm.run(h, b, backend=backend)
        else:
            edges = b_matching_edges(h, b, "greedy", device="cpu")
        out[f"b_matching b={hub_b}"] = np.asarray(edges).tolist()

    prefs = sm.prepare_preferences(*nx_gpumatch.stable_marriage_instance("hard", 40, seed=1))
    kw = {"engine": "gpu", "backend": backend} if gpu else {"engine": "sequential"}
    wives, props = sm.solve(prefs, **kw)
    out["stable_marriage"] = [np.asarray(wives).tolist(), int(props)]

    A = sp.random(60, 50, density=0.06, random_state=3, format="csc")
    bi = Biadjacency.from_scipy(sp.csc_array(A))[0]
    for algo, wr, layout in (("apfb", True, "ct"), ("apsb", False, "mt")):
        if gpu:
            kw = dict(algorithm=algo, wr=wr, layout=layout, backend=backend, block=32)
        else:
            kw = dict(algorithm="hopcroft_karp", device="cpu")
        _, cmatch, _, _ = solve(bi, init="none", **kw)
        out[f"bipartite {algo}"] = int((cmatch >= 0).sum())

    p = _planted(160, 4, 5, hub=100)
    kw = dict(
        order=np.random.default_rng(4).permutation(p.num_nodes),
        sequential_arcs=0,
        max_batches=3,
        batch_fraction=2.0,
        max_sweeps=3,
        margins=False,
    )
    if gpu:
        from nx_gpumatch.gpu import louvain as gl

        # every level on the device; a small table budget takes the hub's
        # row through the move kernels' global hash tables
        kw.update(backend=backend, cpu_below_arcs=0, table_bytes=1024 * 16)
    out["louvain"] = _levels(gl.louvain_levels if gpu else cl.louvain_levels, p, **kw)

    kw = dict(
        key=99,
        order=np.random.default_rng(8).permutation(p.num_nodes),
        sequential_arcs=0,
        max_sweeps=3,
        max_passes=2,
        margins=False,
    )
    if gpu:
        from nx_gpumatch.gpu import leiden as gle

        kw.update(backend=backend)
    out["leiden"] = _levels(gle.leiden_levels if gpu else cle.leiden_levels, p, **kw)
    out["leiden refinement"] = _refinement(backend)
    return out
