"""Leiden community detection front end (Traag, Waltman, van Eck 2019), with
the signatures of ``networkx.community.leiden_communities`` and
``leiden_partitions`` (networkx >= 3.5 declares them and leaves the work to a
backend).

The engine is :mod:`nx_gpumatch.cpu.leiden`, built on the Louvain engine's
local moving and aggregation. Every community of a finished run induces a
connected subgraph. ``seed`` sets the vertex order and the refinement's
random choices; ``seed=None`` keeps the graph's order and a fixed key.
``device="gpu"`` runs :mod:`nx_gpumatch.gpu.leiden`; ``device="auto"`` takes
the GPU when one is usable and the graph is large enough, as Louvain does.

networkx has no Leiden of its own to fall back to, so inputs the engine cannot
cluster as asked (directed graphs, negative or exact-number weights) raise
an error that says why instead of being handed back. A MultiGraph clusters as
networkx's Leiden would: as the Graph with its parallel edges summed.
"""

from __future__ import annotations

import math

import numpy as np

from nx_gpumatch.algorithms import louvain as lv
from nx_gpumatch.algorithms._compact import compact_graph
from nx_gpumatch.algorithms._convert import to_graph
from nx_gpumatch.algorithms.louvain import PARALLEL_EDGES
from nx_gpumatch.config import get_config, resolve_device

__all__ = ["leiden_communities", "leiden_partitions"]

# Fixed key of the refinement's random choices when no seed is given.
_DEFAULT_KEY = 0x5EED_1E1D


def _check_params(resolution, theta, max_level=None):
    lv._check_params(resolution, 0.0, max_level)
    if (
        isinstance(theta, bool)
        or not isinstance(theta, (int, float, np.integer, np.floating))
        or not np.isfinite(theta)
        or theta <= 0
    ):
        raise ValueError(f"theta must be a positive finite number, got {theta!r}")


def _scaled_theta(theta, shift):
    """theta in the units of weights scaled by 2**shift (see
    louvain._arrays): gains scale with them. Kept within (0, inf], where
    the choice stays greedy or uniform as it would have been."""
    with np.errstate(over="ignore", under="ignore"):
        return max(float(np.ldexp(float(theta), shift)), math.ulp(0.0))


def _engine(device, num_edges=0):
    dev = get_config().device if device is None else device
    if dev not in ("auto", "cpu", "gpu"):
        raise ValueError(f"device must be one of ('auto', 'cpu', 'gpu'), got {device!r}")
    return resolve_device(dev, num_edges)  # gpu: nx_gpumatch.gpu.leiden


def levels(
    graph,
    *,
    weighted=True,
    resolution=1,
    seed=None,
    theta=0.01,
    passes=None,
    device=None,
    threads=None,
    progress=None,
):
    """Generator of ``(labels, info)`` per level for a :class:`~nx_gpumatch.Graph`,
    as :func:`nx_gpumatch.algorithms.louvain.levels` (``info`` also has
    ``refined``: the number of refined sub-communities of the level, and
    ``pass``). ``passes``: at most this many passes (None: until a pass gains
    under 2.5% of the modularity, see :mod:`nx_gpumatch.cpu.leiden`)."""
    _check_params(resolution, theta)
    if passes is not None and (
        isinstance(passes, bool) or not isinstance(passes, (int, np.integer)) or passes < 1
    ):
        raise ValueError(f"passes must be a positive integer or None, got {passes!r}")
    lv._check_weights(graph)
    small, c = compact_graph(graph)
    if c is not None:
        gen = levels(
            small,
            weighted=weighted,
            resolution=resolution,
            seed=seed,
            theta=theta,
            passes=passes,
            device=device,
            threads=threads,
            progress=progress,
        )
        return lv.spread_levels(gen, c)
    engine = _engine(device, graph.num_edges)
    cfg = get_config()
    indptr, indices, w, loop, shift = lv._arrays(graph, weighted)
    key = lv._seed_key(seed)
    order = None if key is None else lv._permutation(graph.num_nodes, key)
    from nx_gpumatch import cpu

    if engine == "gpu":
        from nx_gpumatch.gpu import leiden as engine_mod
    else:
        from nx_gpumatch.cpu import leiden as engine_mod

    def make(indptr, indices, w, loop, order):
        return engine_mod.leiden_levels(
            indptr,
            indices,
            w,
            loop,
            order=order,
            resolution=float(resolution),
            theta=_scaled_theta(theta, shift),
            key=_DEFAULT_KEY if key is None else key,
            coarse_threshold=float(cfg.louvain_coarse_threshold),
            fine_below=int(cfg.louvain_fine_below),
            max_passes=engine_mod.MAX_PASSES if passes is None else int(passes),
        )

    gen = lv.in_order(make, indptr, indices, w, loop, order)
    return lv._with_progress(
        lv._with_threads(cpu, threads, gen, "leiden", graph.num_edges), engine, progress, "Leiden"
    )


def _final(
    graph, weighted, resolution, max_level, seed, theta, device, threads, progress, passes=None
):
    labels = None
    gen = levels(
        graph,
        weighted=weighted,
        resolution=resolution,
        seed=seed,
        theta=theta,
        passes=passes,
        device=device,
        threads=threads,
        progress=progress,
    )
    for level, (labels, _info) in enumerate(gen, 1):
        if max_level is not None and level >= max_level:
            break
    return labels


# ------------------------------------------------------------- public API
def leiden_partitions(
    G,
    weight="weight",
    resolution=1,
    seed=None,
    *,
    theta=0.01,
    passes=None,
    device=None,
    threads=None,
    progress=None,
    source="source",
    target="target",
):
    """Yield the partition after each level of the Leiden method.

    Parameters are those of :func:`leiden_communities`, less ``max_level``;
    partitions come in the caller's types (see there).
    """
    graph, kind = to_graph(G, weight=weight, source=source, target=target, parallel=PARALLEL_EDGES)
    gen = levels(
        graph,
        weighted=weight is not None,
        resolution=resolution,
        seed=seed,
        theta=theta,
        passes=passes,
        device=device,
        threads=threads,
        progress=progress,
    )
    return lv._partitions(graph, kind, gen)


def leiden_communities(
    G,
    weight="weight",
    resolution=1,
    max_level=None,
    seed=None,
    *,
    theta=0.01,
    passes=None,
    device=None,
    threads=None,
    progress=None,
    source="source",
    target="target",
):
    """Communities of G by the Leiden method (Traag et al. 2019).

    Parameters
    ----------
    G : networkx.Graph or MultiGraph (parallel edges summed), pandas/cuDF
        DataFrame edge list, nx_gpumatch.Graph, scipy sparse matrix or Matrix
        Market path
    weight : str or None
        Edge attribute / column of non-negative weights (None: all 1).
    resolution : float
        Below 1 favours larger communities, above 1 smaller ones.
    max_level : int or None
        At most this many levels (the connectivity guarantee holds for runs
        that end by themselves).
    seed : None, int, random.Random or numpy generator
        Vertex order and the refinement's random choices; None: the graph's
        order and a fixed key.
    theta : float
        Randomness of the refinement (the paper's theta, in units of edge
        weight): a sub-community is chosen with probability proportional to
        exp(gain / theta).
    passes : int or None
        At most this many passes; each pass after the first runs the method
        again from the partition found so far (None: until one gains under
        2.5% of the modularity, usually three). The first pass alone is the method of the paper.
    device : "auto", "cpu", "gpu" or None (the config's)
    threads : int or None
        Numba threads (None: the config's); results do not depend on it.
    progress : None, True or False
        Per-level display on stderr (None: on a terminal, runs over a second).

    Returns
    -------
    list of sets of nodes for a networkx graph; DataFrame with columns
    ``vertex`` and ``community`` for a DataFrame; otherwise an int64 array
    with the community id of each vertex.
    """
    _check_params(resolution, theta, max_level)
    graph, kind = to_graph(G, weight=weight, source=source, target=target, parallel=PARALLEL_EDGES)
    labels = _final(
        graph,
        weight is not None,
        resolution,
        max_level,
        seed,
        theta,
        device,
        threads,
        progress,
        passes,
    )
    return lv._result(graph, kind, labels)


# ------------------------------------------------------- networkx dispatch
def _nx_leiden_communities(
    G, weight="weight", resolution=1, max_level=None, seed=None, *, device=None
):
    _check_params(resolution, 0.01, max_level)
    labels = _final(G, weight is not None, resolution, max_level, seed, 0.01, device, None, None)
    return lv._communities(G, labels)


def _nx_leiden_partitions(G, weight="weight", resolution=1, seed=None, *, device=None):
    gen = levels(G, weighted=weight is not None, resolution=resolution, seed=seed, device=device)
    return (lv._communities(G, labels) for labels, _info in gen)


DISPATCH = {
    "leiden_communities": _nx_leiden_communities,
    "leiden_partitions": _nx_leiden_partitions,
}

_PARAMS = {
    "leiden_communities": ("G", "weight", "resolution", "max_level", "seed"),
    "leiden_partitions": ("G", "weight", "resolution", "seed"),
}


def networkx_implements_leiden():
    """True from networkx 3.7 on: it has a Leiden of its own (CPM by default,
    ``metric=`` and further parameters this engine does not take)."""
    import inspect

    from networkx.utils.backends import _registered_algorithms

    func = _registered_algorithms.get("leiden_communities")
    return func is not None and "metric" in inspect.signature(func.orig_func).parameters


def without_fallback(name):
    """networkx before 3.7 has no Leiden to hand a refused call to."""
    return not networkx_implements_leiden()


def can_run(name, args, kwargs):
    """Where networkx has its own Leiden (3.7+), every call stays with it.
    Before that networkx has no Leiden to hand inputs to, so those the engine
    cannot cluster raise here with the reason Louvain gives for handing them to
    networkx. (networkx itself refuses directed graphs first.)"""
    import networkx as nx

    if networkx_implements_leiden():
        return (
            f"networkx {nx.__version__} implements {name} itself (metric=, CPM by default), "
            "which gpumatch's modularity Leiden does not take"
        )
    G = args[0] if args else kwargs.get("G")
    if not isinstance(G, nx.Graph):  # a package Graph holds what it can cluster
        return True
    pos = {k: i for i, k in enumerate(_PARAMS[name])}

    def arg(key, default):
        i = pos.get(key, len(args))
        return args[i] if i < len(args) else kwargs.get(key, default)

    why = lv.refusal(G, arg)
    if why is not None:
        raise ValueError(f"gpumatch cannot run {name} on this input: {why}")
    return True
