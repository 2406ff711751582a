"""The level loops of Louvain and Leiden, written once for every engine.

A level is local moving, then aggregation of the level's graph on its
communities (Leiden: on their refinement). The loops here decide what happens
between levels; an engine object (see :class:`nx_gpumatch.community.engine.CommunityEngine`)
runs the levels: :class:`nx_gpumatch.cpu.louvain.LouvainEngine` (Numba) or
:class:`nx_gpumatch.gpu.louvain.LouvainEngine` (CuPy, or its CPU emulation),
and for Leiden their subclasses in ``cpu/leiden.py`` and ``gpu/leiden.py``.
The engines then differ only in their kernels.

Two steps run on the host whatever the engine, on the host copy of the level
an engine hands over (:meth:`~nx_gpumatch.community.engine.CommunityEngine.host_level`):
a level smaller than the engine's ``host_below_arcs`` goes on in the host
engine (the CPU engine, which sweeps such levels one vertex at a time
anyway), and CPM's serial leave walk (:func:`_settle`). This module imports
that host engine at run time only, in those two steps; engines never import
one another.
"""

import numpy as np

# Safety cap on levels of one Leiden pass (each level that goes on merges
# something, or cuts a community, which raises modularity).
MAX_LEVELS = 10_000


def spread_singletons(labels, kept, n, dtype=np.int64):
    """Community labels (0..K-1) of the vertices ``kept`` (ascending ids) as
    labels of all ``n`` vertices: each other vertex a community of its own,
    numbered K, K+1, ... in id order. (Vertices without an edge never move:
    the front ends and the one-rank distributed engine leave them out.)"""
    labels = np.asarray(labels)
    top = int(labels.max()) + 1 if labels.shape[0] else 0
    out = np.ones(n, dtype)
    out[kept] = 0
    np.cumsum(out, out=out)  # left-out vertices up to each vertex
    out += top - 1
    out[kept] = labels
    return out


def _info(vertices, edges, q, moves, sweeps):
    return {
        "vertices": int(vertices),
        "edges": int(edges),
        "modularity": float(q),
        "moves": int(moves),
        "sweeps": int(sweeps),
    }


def louvain(engine, threshold, q=None, level=0):
    """The levels of the Louvain method on ``engine`` (networkx's semantics);
    yields what the engines' ``louvain_levels`` yield.

    The first level is always yielded, later ones only if they moved
    something; the method stops once a level gains at most ``threshold``.
    ``q`` and ``level`` continue a run begun elsewhere: the modularity so far
    and the number of levels done.
    """
    if engine.m2 <= 0.0:  # no edges (or only zero weights): nothing to optimise
        yield np.arange(engine.n, dtype=np.int32), _info(engine.n, engine.arcs // 2, 0.0, 0, 0)
        return
    if q is None:
        q = engine.singleton_modularity()
    labels = engine.xp.arange(engine.n, dtype=np.int32)  # input vertex -> vertex of this level
    while True:
        runner = _engine_for_level(engine)
        if runner is not engine:
            labels = runner.xp.asarray(engine.host(labels))
            engine = runner
        comm, q_new, moves, sweeps = engine.move(None)
        if level > 0 and moves == 0:
            return
        numbering = engine.renumber(comm)
        labels = numbering[0][comm[labels]]  # input vertices follow their community
        yield engine.host(labels), _info(engine.n, engine.arcs // 2, q_new, moves, sweeps)
        if q_new - q <= threshold:
            return
        q = q_new
        engine.aggregate(comm, numbering)
        level += 1


def leiden(engine, max_passes, pass_tol, pass_rel_tol):
    """The levels of the Leiden method on ``engine``; yields what
    the engines' ``leiden_levels`` yield.

    Each pass runs the method from the partition the pass before ended with
    (the first from singletons: ``move(None)``). The first pass yields its
    levels (a level cut into connected parts is yielded again, cut, and
    counts as a level); a later pass yields its result only, and only when
    it gained.
    Passes end after
    ``max_passes``, or once one gains at most max(``pass_tol``,
    ``pass_rel_tol`` * the modularity reached).
    """
    n, edges = engine.n, engine.arcs // 2
    if engine.m2 <= 0.0:  # no edges (or only zero weights): every vertex alone
        info = _info(n, edges, 0.0, 0, 0)
        info["refined"] = n
        info["pass"] = 1
        yield np.arange(n, dtype=np.int32), info
        return
    part = None  # singletons
    q_part = None
    salt = 0
    for p in range(max(1, int(max_passes))):
        step = _leiden_pass(engine, part, salt, p == 0)
        moves = sweeps = 0
        while True:
            try:
                labels, info = next(step)
            except StopIteration as stop:
                part, q_end, salt = stop.value
                break
            info["pass"] = p + 1
            if p == 0:
                yield labels, info
            else:
                moves += info["moves"]
                sweeps += info["sweeps"]
        if q_part is not None:
            if q_end <= q_part:
                return
            info = _info(n, edges, q_end, moves, sweeps)
            info["refined"] = int(part.max()) + 1
            info["pass"] = p + 1
            yield part, info
            if q_end - q_part <= max(float(pass_tol), float(pass_rel_tol) * abs(q_end)):
                return  # the gain is kept; another pass would gain less
        q_part = q_end


def _settle(engine, comm, q, moves, sweeps):
    """Local moving's result with every vertex that gains by being alone
    moved out (:func:`_leave`), local moving again from there, until no
    vertex leaves: each round raises the objective, so this ends."""
    for _ in range(MAX_LEVELS):
        alone, left = _leave(engine, comm)
        if not left:
            break
        comm, q, more, extra = engine.move(alone)
        moves += left + more
        sweeps += extra
    return comm, q, moves, sweeps


def _leiden_pass(engine, init, salt, first):
    """One run of the method on the input graph from its partition ``init``
    (host; None: singletons): yields the levels that moved something or were
    cut (and the first level if ``first``); returns (final partition, its
    modularity, next salt).

    A level's communities P are refined, and the graph aggregated on the
    refinement; each new vertex starts the next level in the community of P
    that holds it. The pass ends once local moving leaves every vertex alone:
    the communities are then refined sub-communities, each connected.
    """
    engine.start()
    xp = engine.xp
    labels = xp.arange(engine.n, dtype=np.int32)  # input vertex -> vertex of this level
    last = init
    q_last = None
    cut = False  # the level goes on from its partition cut into connected parts
    for _ in range(MAX_LEVELS):
        nv = engine.n
        comm, q, moves, sweeps = engine.move(init)
        if engine.leaves:
            comm, q, moves, sweeps = _settle(engine, comm, q, moves, sweeps)
        parts = engine.renumber(comm)
        pid, kp = parts[0], parts[1]
        if kp == nv:
            ref = comm  # every vertex alone: nothing to refine
        else:
            ref = engine.refine(comm, salt)
            salt += 1
        subs = engine.renumber(ref)
        rid, K = subs[0], subs[1]
        if q_last is None or moves or cut:
            last = engine.host(pid[comm[labels]])
            q_last = float(q)
            if moves or first or cut:
                info = _info(nv, engine.arcs // 2, q_last, moves, sweeps)
                info["refined"] = int(K)
                yield last, info
            first = False
        cut = False
        if kp == nv:
            break  # the communities are the refined ones of the level before
        if K == nv:
            # Refinement merged nothing, so the level would repeat. Local
            # moving never moves a vertex to an empty community, so a community
            # of P can be disconnected here (its parts are not well connected,
            # so refinement never joins them): cut P into connected parts, which
            # never lowers modularity, and move on this level from there.
            # Otherwise aggregate on P itself (Louvain's step): its communities
            # are connected, so the new vertices are too.
            pieces = _split(engine, comm)
            if int(engine.renumber(pieces)[1]) > kp:
                init = pieces
                cut = True
                continue
            ref, rid, K, subs = comm, pid, kp, parts
        nxt = xp.empty(K, np.int32)
        nxt[rid[ref]] = pid[comm]
        labels = rid[ref[labels]]
        engine.aggregate(ref, subs)
        init = nxt
    return last, q_last, salt


def _engine_for_level(engine):
    """The engine that runs the current level: ``engine``, or the host engine
    on the level ``engine`` hands over when it has fewer than
    ``engine.host_below_arcs`` arcs (launches would cost more than the work)."""
    if engine.arcs >= engine.host_below_arcs:
        return engine
    from nx_gpumatch.cpu.louvain import LouvainEngine  # the host engine, at run time

    lv = engine.host_level()
    return LouvainEngine(
        lv.indptr,
        lv.indices,
        lv.w,
        lv.loop,
        engine.rule,
        resolution=engine.resolution,
        order=lv.order,
        m2=engine.m2,
        node_weights=lv.k if engine.node_weighted else None,
    )


def _leave(engine, comm):
    """(comm with every vertex that gains by being alone moved out, the number
    of those): the host engine's serial walk (``cpu.leiden.leave``) over the
    level's vertices in their order, on the host copy of the level, so every
    engine gets the same result."""
    from nx_gpumatch.cpu import leiden  # the host engine, at run time

    lv = engine.host_level()
    out, left = leiden.leave(
        lv.indptr,
        lv.indices,
        lv.w,
        lv.k,
        engine.host(comm),
        lv.order,
        engine.resolution / engine.m2,
    )
    return engine.xp.asarray(out), left


def _split(engine, comm):
    """comm with every community cut into the connected parts of the subgraph
    it induces (:func:`connected_parts` on the host copy of the level)."""
    lv = engine.host_level()
    return engine.xp.asarray(connected_parts(lv.indptr, lv.indices, engine.host(comm)))


def connected_parts(indptr, indices, comm):
    """comm with every community cut into the connected parts of the
    subgraph it induces: int32 ids below n. Rarely needed (see
    :func:`_leiden_pass`), so scipy's components do it."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    n = indptr.shape[0] - 1
    tail = np.repeat(np.arange(n, dtype=np.int32), np.diff(indptr))
    inside = comm[tail] == comm[indices]
    A = sp.csr_array(
        (np.ones(int(inside.sum()), np.int8), (tail[inside], indices[inside])), shape=(n, n)
    )
    return connected_components(A, directed=False)[1].astype(np.int32)
