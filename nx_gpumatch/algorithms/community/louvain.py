"""Louvain community detection front end, with networkx's semantics.

Levels, ``max_level``, ``resolution`` and ``threshold`` (the gain below which
the method stops) behave as in ``networkx.community.louvain_communities``; the
engines are the GPU Louvain of Naim et al. 2017 and its CPU counterpart (see
:mod:`nx_gpumatch.cpu.louvain`). ``threshold`` only decides whether another
level follows; a level's sweeps run until they gain almost nothing: small
levels to a local optimum, large ones (swept in parallel batches after a
first sweep one vertex at a time, where the clusters form) until a
sweep gains under 1e-4 of what the level has gained (levels with at least
``louvain_fine_below`` vertices, config, may stop earlier at
``louvain_coarse_threshold``).

``seed`` sets the vertex order (a permutation of the vertices), which orders
each degree bucket and breaks ties between equally good moves; ``seed=None``
keeps the graph's own order (networkx's dispatcher always passes a
``random.Random``, so dispatched calls without a seed get a random order, as
networkx's own do).
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from nx_gpumatch import _validation as check
from nx_gpumatch.algorithms._compact import compact_graph
from nx_gpumatch.algorithms._convert import to_graph
from nx_gpumatch.algorithms._engines import engine_for
from nx_gpumatch.algorithms._registry import networkx_algorithm, networkx_tests_xfail
from nx_gpumatch.algorithms.community.common import (
    PARALLEL_EDGES,
    check_params,
    communities,
    final_labels,
    partitions,
    refusal,
    result,
    seeded_order,
    spread_levels,
    weighted_arrays,
    with_progress,
    with_threads,
)
from nx_gpumatch.community.schedule import CommunityOptions
from nx_gpumatch.config import get_config

__all__ = ["louvain_communities", "louvain_partitions"]


def in_order(make, indptr, indices, w, loop, order):
    """The levels ``make(indptr, indices, w, loop, order)`` yields (an
    engine's levels generator). On a graph of at least ``SEQUENTIAL_ARCS``
    arcs it runs relabelled so that vertex ``order[i]`` becomes vertex i (each
    row's arcs kept in their order, then ``order=None``), and the labels are
    mapped back to the graph's own vertices.

    The engines visit the vertices of a degree bucket in id order: relabelled,
    they read rows front to back instead of at random, where every row start
    was a cache miss (level 1 of a 300k-vertex random graph: 40% less time).
    Ties fall as under ``order``, since ids now follow it, so the partitions
    are the same. Their ids are not: they come numbered in order of their
    first vertex. Smaller graphs, which fit in cache, keep their ids and the
    engine's numbering (communities in the order of the vertices they are
    named after, as networkx lists them).
    """
    from nx_gpumatch.community.schedule import SEQUENTIAL_ARCS

    if order is None or indices.shape[0] < SEQUENTIAL_ARCS:
        yield from make(indptr, indices, w, loop, order)
        return
    from nx_gpumatch.cpu.csr import by_first_appearance, inverse_permutation, permute_rows

    n = order.shape[0]
    rank = inverse_permutation(order, n, 0)
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.diff(indptr)[order], out=ptr[1:])
    indices, w = permute_rows(indptr, indices, w, rank, ptr)
    for labels, info in make(ptr, indices, w, loop[order], None):
        yield by_first_appearance(labels[rank]), info


# ----------------------------------------------------------------- levels
def levels(
    graph,
    *,
    weighted=True,
    resolution=1,
    threshold=1e-7,
    seed=None,
    device=None,
    threads=None,
    progress=None,
):
    """Generator of ``(labels, info)`` per level for a :class:`~nx_gpumatch.Graph`.

    ``labels`` is an int32 array (community of each vertex, 0..k-1) and
    ``info`` a dict: ``level``, ``vertices``, ``edges``, ``modularity``,
    ``moves``, ``sweeps``, ``engine``. ``progress``: None shows a per-level
    display on a terminal for runs longer than a second, True always, False
    never.
    """
    check_params(resolution, threshold)
    check.check_bool(progress, "progress", none=True)
    return _levels(graph, weighted, resolution, threshold, seed, device, threads, progress)


def _levels(graph, weighted, resolution, threshold, seed, device, threads, progress):
    """:func:`levels` after its parameters were checked."""
    check.check_nonnegative_weights(graph)
    small, c = compact_graph(graph)
    if c is not None:
        gen = _levels(small, weighted, resolution, threshold, seed, device, threads, progress)
        return spread_levels(gen, c)
    cfg = get_config()
    indptr, indices, w, loop, _shift = weighted_arrays(graph, weighted)  # (Q does not depend on it)
    engine, engine_mod = engine_for("louvain", device, graph.num_edges)
    order = seeded_order(graph.num_nodes, seed)
    options = CommunityOptions(
        resolution=float(resolution),
        threshold=float(threshold),
        coarse_threshold=float(cfg.louvain_coarse_threshold),
        fine_below=int(cfg.louvain_fine_below),
    )

    def make(indptr, indices, w, loop, order):
        return engine_mod.louvain_levels(indptr, indices, w, loop, options, order=order)

    gen = in_order(make, indptr, indices, w, loop, order)
    if engine != "gpu":
        gen = with_threads(threads, gen, "louvain", graph.num_edges)
    return with_progress(gen, engine, progress)


# ------------------------------------------------------------- public API
def louvain_partitions(
    G,
    weight="weight",
    resolution=1,
    threshold=1e-7,
    seed=None,
    *,
    device=None,
    threads=None,
    progress=None,
    source="source",
    target="target",
):
    """Yield the partition after each level of the Louvain method.

    Parameters are those of :func:`louvain_communities`, less ``max_level``.
    Each partition comes in the caller's types: a list of sets of nodes for a
    networkx graph, a DataFrame (``vertex``, ``community``) for a DataFrame, an
    int64 array of community ids (one per vertex) otherwise.
    """
    graph, kind, gen = _graph_levels(
        G, weight, resolution, threshold, None, seed, device, threads, progress, source, target
    )
    return partitions(graph, kind, gen)


def louvain_communities(
    G,
    weight="weight",
    resolution=1,
    threshold=1e-7,
    max_level=None,
    seed=None,
    *,
    device=None,
    threads=None,
    progress=None,
    source="source",
    target="target",
):
    """Communities of G by the Louvain method (networkx's semantics).

    Parameters
    ----------
    G : networkx.Graph or MultiGraph (parallel edges summed, as networkx does),
        pandas/cuDF DataFrame edge list, nx_gpumatch.Graph,
        scipy sparse matrix or Matrix Market path
    weight : str or None
        Edge attribute / column of non-negative weights (None: all 1).
    resolution : float
        Below 1 favours larger communities, above 1 smaller ones.
    threshold : float
        The method stops once a level gains at most this much modularity; it
        also ends the sweeps of levels with fewer than ``louvain_fine_below``
        vertices (config).
    max_level : int or None
        At most this many levels.
    seed : None, int, random.Random or numpy generator
        Vertex order (see the module docstring); None keeps the graph's order.
    device : "auto", "cpu", "gpu" or None (the config's)
    threads : int or None
        Numba threads (None: the config's).
    progress : None, True or False
        Per-level display on stderr: None shows it on a terminal for runs
        longer than a second.

    Returns
    -------
    list of sets of nodes for a networkx graph; DataFrame with columns
    ``vertex`` and ``community`` (same library as the input) for a DataFrame;
    otherwise an int64 array with the community id of each vertex.
    """
    graph, kind, gen = _graph_levels(
        G, weight, resolution, threshold, max_level, seed, device, threads, progress, source, target
    )
    return result(graph, kind, final_labels(gen, max_level))


def _graph_levels(
    G, weight, resolution, threshold, max_level, seed, device, threads, progress, source, target
):
    """(graph, kind, levels) of a public call: its parameters checked, then G
    converted and its levels generator set up."""
    check_params(resolution, threshold, max_level)
    check.check_bool(progress, "progress", none=True)
    graph, kind = to_graph(G, weight=weight, source=source, target=target, parallel=PARALLEL_EDGES)
    gen = _levels(graph, weight is not None, resolution, threshold, seed, device, threads, progress)
    return graph, kind, gen


# ------------------------------------------------------- networkx dispatch
# These receive the Graph networkx converted (weights taken from ``weight``).


def _can_run(
    G, weight="weight", resolution=1, threshold=0.0000001, max_level=None, seed=None, *, device=None
):
    """Inputs gpumatch cannot cluster as networkx would go to networkx, with
    the reason (see :func:`~nx_gpumatch.algorithms.community.common.refusal`)."""
    if not isinstance(G, nx.Graph):  # a package Graph holds what it can cluster
        return True
    scan = None if weight is None else check.edge_summary(G, weight)
    why = refusal(G, resolution, threshold, scan)
    return True if why is None else why


def _can_run_partitions(
    G, weight="weight", resolution=1, threshold=0.0000001, seed=None, *, device=None
):
    return _can_run(G, weight, resolution, threshold, None, seed, device=device)


_DEVICE = {"device : str, optional": "'auto', 'cpu' or 'gpu'; default from the config."}


@networkx_algorithm(
    "louvain_communities",
    docs=(
        "Parallel degree-bucketed Louvain (CPU, or CUDA kernels on a GPU); the partition does "
        "not depend on the thread count. Levels sweep to a local optimum (config "
        "louvain_coarse_threshold may stop large ones earlier). A MultiGraph clusters with its "
        "parallel edges summed, as networkx does."
    ),
    parameters=_DEVICE,
    can_run=_can_run,
    parallel_edges=PARALLEL_EDGES,
)
def _nx_louvain_communities(
    G, weight="weight", resolution=1, threshold=0.0000001, max_level=None, seed=None, *, device=None
):
    check_params(resolution, threshold, max_level)
    gen = _levels(G, weight is not None, resolution, threshold, seed, device, None, None)
    return communities(G, final_labels(gen, max_level))


@networkx_algorithm(
    "louvain_partitions",
    docs="Partitions level by level, as louvain_communities computes them.",
    can_run=_can_run_partitions,
    parallel_edges=PARALLEL_EDGES,
)
def _nx_louvain_partitions(
    G, weight="weight", resolution=1, threshold=0.0000001, seed=None, *, device=None
):
    gen = levels(
        G,
        weighted=weight is not None,
        resolution=resolution,
        threshold=threshold,
        seed=seed,
        device=device,
    )
    return (communities(G, labels) for labels, _info in gen)


# networkx tests that demand one exact partition, the one networkx's own
# visiting order gives, which this algorithm does not follow. (The karate
# tests with seed=2 happen to pass and are not marked.) Marked xfail in
# networkx's suite by the backend's on_start_tests.
NX_TESTS_XFAIL = networkx_tests_xfail(
    "test_louvain.py",
    "Louvain",
    {
        "test_multigraph": (
            "compares the partitions of two graphs with different weights (edge 0-1 weighs 10 in "
            "the Graph, 4 + 9 in the MultiGraph): equal only under networkx's own visiting order"
        ),
        # networkx 3.7
        "test_petersen": (
            "asserts the one partition networkx's own node visiting order gives for a fixed seed; "
            "the parallel bucketed order finds another partition of the Petersen graph"
        ),
    },
)
