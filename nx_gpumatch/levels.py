"""The level loop of Louvain, written once for both engines.

A level is local moving, then aggregation of the level's graph on its
communities. The loop here decides what happens between levels; an engine
object runs the levels: :class:`nx_gpumatch.cpu.louvain.LouvainEngine`
(Numba) or :class:`nx_gpumatch.gpu.louvain.LouvainEngine` (CuPy, or its CPU
emulation). The engines then differ only in their kernels.

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
* ``engine_for_level()``: the engine that runs the current level, itself
  or one it hands the level to (the GPU engine hands small levels to the CPU
  engine).

This module imports no engine: engines import it.
"""

import numpy as np


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
