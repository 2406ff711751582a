"""The level loops of Louvain and Leiden, written once for both engines.

A level is local moving, then aggregation of the level's graph on its
communities (Leiden: on their refinement). The loops here decide what happens
between levels; an engine object runs the levels:
:class:`nx_gpumatch.cpu.louvain.LouvainEngine` (Numba) or
:class:`nx_gpumatch.gpu.louvain.LouvainEngine` (CuPy, or its CPU emulation),
and for Leiden their subclasses in ``cpu/leiden.py`` and ``gpu/leiden.py``.
The engines then differ only in their kernels.

An engine holds the input graph and a current level (its graph and vertex
order) and has:

* ``xp``: its array module, in which labels are kept between levels;
* ``n``, ``arcs``: vertices and arcs of the current level; ``m2``: the input
  graph's total degree;
* ``start()``: make the input graph the current level again;
* ``singleton_modularity()``: modularity of the current level's vertices
  each alone;
* ``move(init)``: local moving of the current level from the partition
  ``init`` (None: singletons); returns (comm, modularity, moves, sweeps);
* ``renumber(comm)``: consecutive ids of the non-empty communities, a tuple
  beginning (newid, K) that ``aggregate`` takes back;
* ``aggregate(comm, numbering)``: the graph of comm's communities becomes the
  current level, in the vertex order carried over from this one;
* ``host(x)``: x as a numpy array;
* ``engine_for_level()`` (Louvain): the engine that runs the current level,
  itself or one it hands the level to (the GPU engine hands small levels to
  the CPU engine);
* ``refine(comm, salt)`` (Leiden): the refined partition of comm, drawn with
  the refinement count ``salt``;
* ``split(comm)`` (Leiden): comm with every community cut into the connected
  parts of the subgraph it induces (ids below ``n``);
* ``leaves`` (Leiden): whether local moving is followed by ``leave(comm)``,
  which returns (comm with every vertex that gains by being alone moved out,
  the number of those).

This module imports no engine: engines import it.
"""

import numpy as np

# Safety cap on levels of one Leiden pass (each level that goes on merges
# something, or cuts a community, which raises modularity).
MAX_LEVELS = 10_000


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
    yields what :func:`nx_gpumatch.cpu.louvain.louvain_levels` yields.

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
        runner = engine.engine_for_level()
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
    :func:`nx_gpumatch.cpu.leiden.leiden_levels` yields.

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
    moved out (``engine.leave``), local moving again from there, until no
    vertex leaves: each round raises the objective, so this ends."""
    for _ in range(MAX_LEVELS):
        alone, left = engine.leave(comm)
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
            pieces = engine.split(comm)
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
