"""Graph generators for tests and benchmarks (nothing is downloaded).

All return :class:`nx_gpumatch.Graph`; ``.to_networkx()`` gives the networkx graph.
"""

import numpy as np

from nx_gpumatch.graph import MAX_NODES, Graph

__all__ = ["random_graph", "rmat", "random_geometric", "delaunay", "RMAT_PARAMS"]

# (a, b, c, d) quadrant probabilities used for b-matching experiments (Khan et al. 2016).
RMAT_PARAMS = {
    "g500": (0.57, 0.19, 0.19, 0.05),
    "ssca": (0.6, 0.4 / 3, 0.4 / 3, 0.4 / 3),
    "er": (0.25, 0.25, 0.25, 0.25),
}


def random_graph(n, m, seed=0, weights="uniform"):
    """The benchmark graph: m endpoint pairs drawn uniformly from n vertices with
    ``default_rng(seed)``; self-loops and repeated pairs dropped; weights uniform
    in [0, 1) (``weights="integer"``: uniform integers 1..100; None: all 1)."""
    if n < 0 or m < 0 or (n == 0 and m > 0):
        raise ValueError(f"need n >= 0 and m >= 0, and n >= 1 for m > 0; got n={n}, m={m}")
    _check_size(n, m)
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m, dtype=np.int64)
    dst = rng.integers(0, n, m, dtype=np.int64)
    w = _weights(rng, m, weights)
    keep = src != dst
    w = None if w is None else w[keep]
    return Graph.from_arrays(
        src[keep], dst[keep], w, num_nodes=n, duplicates="max" if weights is None else "last"
    )


def rmat(scale, edge_factor=8, kind="g500", seed=0, weights="uniform"):
    """R-MAT graph with 2**scale vertices and edge_factor * 2**scale drawn edges.

    kind is "g500", "ssca", "er" or an (a, b, c, d) tuple. Vertex ids are
    permuted so that high-degree vertices are not all at small ids.
    """
    a, b, c, d = RMAT_PARAMS[kind] if isinstance(kind, str) else kind
    if abs(a + b + c + d - 1) > 1e-9:
        raise ValueError("R-MAT probabilities must sum to 1")
    n = 1 << scale
    m = edge_factor * n
    _check_size(n, m)
    rng = np.random.default_rng(seed)
    src = np.zeros(m, np.int64)
    dst = np.zeros(m, np.int64)
    for bit in range(scale):
        r = rng.random(m)
        right = (r >= a) & (r < a + b) | (r >= a + b + c)  # quadrants b and d
        down = r >= a + b  # quadrants c and d
        src |= down.astype(np.int64) << bit
        dst |= right.astype(np.int64) << bit
    perm = rng.permutation(n)
    w = _weights(rng, m, weights)
    keep = src != dst  # R-MAT draws self-loops; the graphs are simple
    return Graph.from_arrays(
        perm[src[keep]], perm[dst[keep]], None if w is None else w[keep], num_nodes=n
    )


def random_geometric(n, radius=None, seed=0, weights="distance"):
    """Random geometric graph in the unit square: points closer than ``radius``
    are joined (default 0.55*sqrt(ln n / n), nearly connected, as in Birn et al. 2013).
    Weights: Euclidean distance, or "uniform" random."""
    from scipy.spatial import cKDTree

    rng = np.random.default_rng(seed)
    pts = rng.random((n, 2))
    if radius is None:
        radius = 0.55 * np.sqrt(np.log(max(n, 2)) / max(n, 1))
    pairs = cKDTree(pts).query_pairs(radius, output_type="ndarray")
    src, dst = pairs[:, 0], pairs[:, 1]
    if weights == "distance":
        w = np.linalg.norm(pts[src] - pts[dst], axis=1)
    else:
        w = _weights(rng, len(src), weights)
    return Graph.from_arrays(src, dst, w, num_nodes=n)


def delaunay(n, seed=0, weights="distance"):
    """Delaunay triangulation of n random points in the unit square; weights are
    Euclidean distances (as in Birn et al. 2013) or "uniform" random."""
    from scipy.spatial import Delaunay

    if n < 3:
        raise ValueError(f"a Delaunay triangulation needs at least 3 points, got n={n}")
    rng = np.random.default_rng(seed)
    pts = rng.random((n, 2))
    tri = Delaunay(pts).simplices
    src = np.concatenate([tri[:, 0], tri[:, 1], tri[:, 2]])
    dst = np.concatenate([tri[:, 1], tri[:, 2], tri[:, 0]])
    if weights == "distance":
        w = np.linalg.norm(pts[src] - pts[dst], axis=1)
    else:
        w = _weights(rng, len(src), weights)
    return Graph.from_arrays(src, dst, w, num_nodes=n, duplicates="max")


def _check_size(n, m):
    """ValueError / MemoryError before drawing a graph that cannot be held."""
    from nx_gpumatch._input import check_memory, input_bytes

    if n >= MAX_NODES:
        raise ValueError(f"graphs need fewer than 2**31 vertices (int32 ids), got {n}")
    check_memory(input_bytes(n, n, m), f"a graph of {n} vertices and {m} drawn edges")


def _weights(rng, m, kind):
    if kind is None:
        return None
    if kind == "uniform":
        return rng.random(m)
    if kind == "integer":
        return rng.integers(1, 101, m).astype(np.float64)
    raise ValueError(f"unknown weights {kind!r}")


__all__ += ["planted_partition"]


def _capped_sizes(sizes, n):
    """``sizes`` (each at least 4, summing to more than n >= 4 * their count)
    cut down to sum n: the largest are capped at one level, the first of them
    getting one more until the sum is n."""
    lo, hi = 4, int(sizes.max())
    while lo < hi:  # the largest cap with sum(min(sizes, cap)) <= n
        mid = (lo + hi + 1) // 2
        if np.minimum(sizes, mid).sum() <= n:
            lo = mid
        else:
            hi = mid - 1
    out = np.minimum(sizes, lo)
    capped = np.flatnonzero(sizes > lo)
    out[capped[: n - int(out.sum())]] += 1
    return out


def planted_partition(n, k, d_in, d_out, seed=0, weights="uniform", skew=0.8):
    """Weighted planted-partition graph: k communities of skewed sizes (community
    i gets a share proportional to (i + 1) ** -skew, at least 4 vertices), about
    ``d_in`` neighbours per vertex inside its community and ``d_out`` drawn from
    the whole graph. Weights: "uniform" in [0.5, 1.5), "exponential" (mean 1),
    "integer" (1..9) or None (all 1). Returns (graph, community of each vertex)."""
    if k < 1 or n < 4 * k:
        raise ValueError(f"need k >= 1 and n >= 4 * k, got n={n}, k={k}")
    rng = np.random.default_rng(seed)
    share = np.arange(1, k + 1, dtype=np.float64) ** -skew
    sizes = np.maximum(4, share / share.sum() * n).astype(np.int64)
    sizes[0] += n - sizes.sum()
    if sizes[0] < 4:  # the raise to 4 took more than the first could give
        sizes = _capped_sizes(np.maximum(4, share / share.sum() * n).astype(np.int64), n)
    start = np.concatenate([[0], np.cumsum(sizes)])
    comm = np.repeat(np.arange(k), sizes)
    m_in, m_out = int(n * d_in / 2), int(n * d_out / 2)
    u = rng.integers(0, n, m_in)
    c = comm[u]
    v = start[c] + (rng.random(m_in) * sizes[c]).astype(np.int64)
    u = np.concatenate([u, rng.integers(0, n, m_out)])
    v = np.concatenate([v, rng.integers(0, n, m_out)])
    keep = u != v
    key = np.unique(np.minimum(u[keep], v[keep]) * n + np.maximum(u[keep], v[keep]))
    u, v = key // n, key % n
    if weights == "uniform":
        w = rng.uniform(0.5, 1.5, u.size)
    elif weights == "exponential":
        w = rng.exponential(1.0, u.size)
    elif weights == "integer":
        w = rng.integers(1, 10, u.size).astype(np.float64)
    elif weights is None:
        w = None
    else:
        raise ValueError(f"unknown weights {weights!r}")
    return Graph.from_arrays(u, v, w, num_nodes=n), comm
