"""Weighted matching front end: exact (blossom) and ½-approximate algorithms."""

import random

import numpy as np

from nx_gpumatch.algorithms._convert import matching_result, to_graph
from nx_gpumatch.config import resolve_device

APPROXIMATE = ("suitor", "local_max", "greedy", "red_blue")
EXACT = ("blossom",)
ALGORITHMS = EXACT + APPROXIMATE

__all__ = [
    "max_weight_matching",
    "min_weight_matching",
    "maximal_matching",
    "is_matching",
    "matching_weight",
]


def _seed_int(seed):
    """A 64-bit seed from None, an int or a random.Random (as networkx passes it)."""
    if seed is None:
        return random.getrandbits(64)
    if isinstance(seed, random.Random):
        return seed.getrandbits(64)
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63))
    if isinstance(seed, np.random.RandomState):
        return int(seed.randint(0, 2**62))
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return int(seed) & 0xFFFFFFFFFFFFFFFF
    raise ValueError(f"seed must be None, an int or a random.Random, got {seed!r}")


def mate_array(
    graph,
    algorithm,
    *,
    maxcardinality=False,
    device=None,
    seed=None,
    select="weighted",
    threads=None,
):
    """Run a matching algorithm on a :class:`Graph`; returns the mate array."""
    if algorithm is None:
        algorithm = "blossom"
    if algorithm not in ALGORITHMS:
        raise ValueError(
            f"algorithm must be one of {ALGORITHMS} (or None for exact), got {algorithm!r}"
        )
    if select not in ("weighted", "random"):
        raise ValueError(f"select must be 'weighted' or 'random', got {select!r}")
    if algorithm in APPROXIMATE and maxcardinality:
        raise ValueError(f"maxcardinality=True needs the exact algorithm, not {algorithm!r}")
    if algorithm == "blossom":
        if device == "gpu":
            raise ValueError(
                "the exact (blossom) algorithm has no GPU engine; use device='cpu' or 'auto'"
            )
        return _exact(graph, maxcardinality)
    engine = resolve_device(device, graph.num_edges)
    if engine == "gpu":
        from nx_gpumatch.gpu import matching as gpu_matching

        return gpu_matching.run(
            graph, algorithm, seed=_seed_int(seed) if algorithm == "red_blue" else 0, select=select
        )
    from nx_gpumatch import cpu
    from nx_gpumatch.cpu import matching as cm

    n = graph.num_nodes
    with cpu.threads(threads):
        if algorithm == "suitor":
            return cm.suitor(n, graph.indptr, graph.indices, graph.weights)
        usable = int(np.count_nonzero(graph.edge_weight > 0))
        if algorithm == "greedy":
            return cm.greedy(n, graph.edge_src, graph.edge_dst, graph.edge_order(), usable)
        if algorithm == "local_max":
            if "sorted_adjacency" not in graph._cache:
                graph._cache["sorted_adjacency"] = cm.sorted_adjacency(
                    n, graph.edge_src, graph.edge_dst, graph.edge_order(), usable
                )
            return cm.local_max_rounds(n, *graph._cache["sorted_adjacency"])
        mate, _rounds = cm.red_blue(
            n, graph.indptr, graph.indices, graph.arc_rank(), _seed_int(seed), select == "weighted"
        )
        return mate


def _exact(graph, maxcardinality):
    """Exact maximum-weight matching (weighted blossom method, Numba)."""
    from nx_gpumatch.cpu import blossom

    return blossom.max_weight_matching(
        graph.num_nodes,
        graph.indptr,
        graph.indices,
        graph.arc_edge,
        graph.edge_src,
        graph.edge_dst,
        graph.edge_weight,
        maxcardinality=bool(maxcardinality),
    )


def max_weight_matching(
    G,
    weight="weight",
    *,
    maxcardinality=False,
    algorithm=None,
    device=None,
    seed=None,
    select="weighted",
    threads=None,
    source="source",
    target="target",
):
    """Maximum-weight matching, exact or ½-approximate.

    Parameters
    ----------
    G : networkx.Graph, pandas/cuDF DataFrame edge list, nx_gpumatch.Graph,
        scipy sparse matrix or Matrix Market path
    weight : str or None
        Edge attribute / column holding the weights (missing weights are 1).
    maxcardinality : bool
        Exact only: maximum weight among maximum-cardinality matchings.
    algorithm : None, "blossom", "suitor", "local_max", "greedy" or "red_blue"
        None and "blossom" are exact. "suitor", "local_max" and "greedy" return the
        same matching (the greedy matching under the package's edge order), a
        ½-approximation that uses only positive-weight edges. "red_blue" is
        randomized (``seed``, ``select`` = "weighted" or "random") and maximal.
    device : "auto", "cpu", "gpu" or None (the config's)
    threads : int or None
        Numba threads (None: the config's).

    Returns
    -------
    set of (u, v) label pairs for a networkx graph; DataFrame (source, target,
    weight) of the same library for a DataFrame; otherwise an int64 ``mate``
    array (mate[v] = partner, -1 = unmatched).
    """
    graph, kind = to_graph(G, weight=weight, source=source, target=target)
    mate = mate_array(
        graph,
        algorithm,
        maxcardinality=maxcardinality,
        device=device,
        seed=seed,
        select=select,
        threads=threads,
    )
    return matching_result(graph, kind, mate, weight=weight, source=source, target=target)


def _min_weight_mate(graph):
    # networkx's transformation: w' = (1 + max w) - w over all edges (self-loops
    # included), then the heaviest maximum-cardinality matching. The shift does not
    # change the answer; reproducing it keeps float rounding (and ties) the same.
    if graph.num_edges == 0:
        return np.full(graph.num_nodes, -1, np.int64)
    top = float(graph.edge_weight.max())
    loops = graph.loop_weight[graph.has_loop]
    if loops.size:
        top = max(top, float(loops.max()))
    return _exact(graph.with_weights((top + 1.0) - graph.edge_weight), True)


def min_weight_matching(G, weight="weight", *, source="source", target="target"):
    """Minimum-weight maximum-cardinality matching (exact), as networkx defines it.

    Result types as for :func:`max_weight_matching`."""
    graph, kind = to_graph(G, weight=weight, source=source, target=target)
    return matching_result(
        graph, kind, _min_weight_mate(graph), weight=weight, source=source, target=target
    )


def maximal_matching(G, *, device=None, threads=None):
    """A maximal matching: the greedy matching with all edges weighing 1, i.e. edges
    taken in (min id, max id) order."""
    graph, kind = to_graph(G, weight=None)
    mate = mate_array(graph.unweighted(), "suitor", device=device, threads=threads)
    return matching_result(graph, kind, mate, weight=None)


def is_matching(G, result, *, maximal=False, weight="weight", source="source", target="target"):
    """True if ``result`` (in any of the result types) is a matching of G (and
    maximal, if asked). Raises nothing for a wrong result: returns False."""
    graph, kind = to_graph(G, weight=weight, source=source, target=target)
    mate = _as_mate(graph, kind, result, source, target)
    if mate is None:
        return False
    n = graph.num_nodes
    idx = np.arange(n)
    m = mate >= 0
    if np.any(mate[m] >= n) or np.any(mate[mate[m]] != idx[m]):
        return False
    u = idx[m]
    v = mate[m]
    if u.size:
        keys = graph.edge_src.astype(np.int64) * n + graph.edge_dst
        k = np.minimum(u, v).astype(np.int64) * n + np.maximum(u, v)
        pos = np.searchsorted(keys, k)
        if np.any(pos >= keys.shape[0]) or np.any(keys[np.minimum(pos, keys.shape[0] - 1)] != k):
            return False
    if maximal:
        free = mate < 0
        rows = np.repeat(idx, np.diff(graph.indptr))
        if np.any(free[rows] & free[graph.indices]):
            return False
    return True


def matching_weight(G, result, weight="weight", source="source", target="target"):
    """Total weight of a matching given in any of the result types."""
    from nx_gpumatch.algorithms._convert import edge_weights, matched_pairs

    graph, kind = to_graph(G, weight=weight, source=source, target=target)
    mate = _as_mate(graph, kind, result, source, target)
    if mate is None:
        raise ValueError("result is not a matching of G")
    u, v = matched_pairs(mate)
    return float(edge_weights(graph, u, v).sum())


def _as_mate(graph, kind, result, source, target):
    n = graph.num_nodes
    mate = np.full(n, -1, np.int64)
    if kind in ("graph", "array"):
        r = np.asarray(result)
        return r.astype(np.int64) if r.shape == (n,) else None
    if kind == "networkx":
        pairs = list(result)
    else:
        if hasattr(result, "to_pandas"):
            result = result.to_pandas()
        pairs = list(zip(result[source].tolist(), result[target].tolist()))
    index = {v: i for i, v in enumerate(graph.labels())}
    for a, b in pairs:
        if a not in index or b not in index:
            return None
        i, j = index[a], index[b]
        if i == j or mate[i] >= 0 or mate[j] >= 0:
            return None
        mate[i] = j
        mate[j] = i
    return mate


# ------------------------------------------------------- networkx dispatch
# These receive the Graph networkx converted (weights already taken from the
# ``weight`` attribute) and return networkx's result types.


def _nx_max_weight_matching(
    G,
    maxcardinality=False,
    weight="weight",
    *,
    algorithm=None,
    device=None,
    seed=None,
    select="weighted",
):
    mate = mate_array(
        G, algorithm, maxcardinality=maxcardinality, device=device, seed=seed, select=select
    )
    return matching_result(G, "networkx", mate)


def _nx_maximal_matching(G):
    return matching_result(G, "networkx", mate_array(G.unweighted(), "suitor"))


def _nx_min_weight_matching(G, weight="weight"):
    if G.num_edges == 0:
        return set()
    return matching_result(G, "networkx", _min_weight_mate(G))


DISPATCH = {
    "max_weight_matching": _nx_max_weight_matching,
    "min_weight_matching": _nx_min_weight_matching,
    "maximal_matching": _nx_maximal_matching,
}
