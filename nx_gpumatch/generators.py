"""Graph generators for tests and benchmarks (nothing is downloaded).

All return :class:`nx_gpumatch.Graph`; ``.to_networkx()`` gives the networkx graph.
"""

import numpy as np

from nx_gpumatch._input import check_memory, input_bytes
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
    in [0, 1) (``weights="integer"``: uniform integers 1..100, ``"small_int"``:
    1..5, ``"unit"``: all 1.0; None: no weights, all 1)."""
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
    if n >= MAX_NODES:
        raise ValueError(f"graphs need fewer than 2**31 vertices (int32 ids), got {n}")
    check_memory(input_bytes(n, n, m), f"a graph of {n} vertices and {m} drawn edges")


WEIGHTS = ("uniform", "integer", "small_int", "unit", None)


def _weights(rng, m, kind):
    """m edge weights of one kind: "uniform" in [0, 1), "integer" 1..100,
    "small_int" 1..5 (many ties), "unit" all 1.0, None (no weights: all 1).
    "unit" draws nothing, so it leaves ``rng`` where it was."""
    if kind is None:
        return None
    if isinstance(kind, str):
        if kind == "uniform":
            return rng.random(m)
        if kind == "integer":
            return rng.integers(1, 101, m).astype(np.float64)
        if kind == "small_int":
            return rng.integers(1, 6, m).astype(np.float64)
        if kind == "unit":
            return np.ones(m)
    raise ValueError(f"unknown weights {kind!r}; expected one of {WEIGHTS}")


__all__ += ["planted_partition", "planted_sizes"]


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


def planted_sizes(n, k, skew=0.8):
    """The community sizes of :func:`planted_partition` (community i of the k
    in id order): shares proportional to (i + 1) ** -skew, each at least 4,
    summing to n."""
    if k < 1 or n < 4 * k:
        raise ValueError(f"need k >= 1 and n >= 4 * k, got n={n}, k={k}")
    share = np.arange(1, k + 1, dtype=np.float64) ** -skew
    sizes = np.maximum(4, share / share.sum() * n).astype(np.int64)
    sizes[0] += n - sizes.sum()
    if sizes[0] < 4:  # the raise to 4 took more than the first could give
        sizes = _capped_sizes(np.maximum(4, share / share.sum() * n).astype(np.int64), n)
    return sizes


def planted_partition(n, k, d_in, d_out, seed=0, weights="uniform", skew=0.8):
    """Weighted planted-partition graph: k communities of skewed sizes (community
    i gets a share proportional to (i + 1) ** -skew, at least 4 vertices), about
    ``d_in`` neighbours per vertex inside its community and ``d_out`` drawn from
    the whole graph. Weights: "uniform" in [0.5, 1.5), "exponential" (mean 1),
    "integer" (1..9) or None (all 1). Returns (graph, community of each vertex)."""
    rng = np.random.default_rng(seed)
    sizes = planted_sizes(n, k, skew)
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


# ---------------------------------------------------------------- stand-ins for real graphs
# Power-law degrees, preferential attachment and small worlds: the shapes of
# social, web and road-like graphs, generated here so that benchmarks and tests
# need no downloads. Each has the weights of :func:`_weights` ("unit" and
# "small_int" give the ties of unweighted real graphs).

__all__ += ["chung_lu", "barabasi_albert", "watts_strogatz"]


def chung_lu_weights(n, avg_degree, exponent):
    """Expected degrees of :func:`chung_lu`: w_i proportional to
    (i + 1) ** (-1 / (exponent - 1)), scaled to average ``avg_degree``."""
    w = np.arange(1, n + 1, dtype=np.float64) ** (-1.0 / (exponent - 1.0))
    return w * (avg_degree * n / w.sum())


def chung_lu(n, avg_degree=10.0, exponent=2.5, seed=0, weights="uniform"):
    """Power-law graph (Chung-Lu): n * avg_degree / 2 endpoint pairs, each
    endpoint drawn with probability proportional to its expected degree
    (:func:`chung_lu_weights`, a power law with ``exponent`` > 2); self-loops and
    repeated pairs dropped, so a few hubs end up a little below their expected
    degree. Vertex ids are permuted so that hubs are not all at small ids."""
    if n < 2 or not avg_degree > 0 or avg_degree > n - 1:
        raise ValueError(
            f"need n >= 2 and 0 < avg_degree <= n - 1, got n={n}, avg_degree={avg_degree}"
        )
    if not exponent > 2:
        raise ValueError(f"the power-law exponent must be > 2 (finite mean degree), got {exponent}")
    m = int(round(n * avg_degree / 2))
    _check_size(n, m)
    rng = np.random.default_rng(seed)
    cum = np.cumsum(chung_lu_weights(n, avg_degree, exponent))
    ends = np.searchsorted(cum, rng.random(2 * m) * cum[-1], side="right")
    ends = np.minimum(ends, n - 1)  # a draw of exactly the total (rounding)
    perm = rng.permutation(n)
    src, dst = perm[ends[:m]], perm[ends[m:]]
    w = _weights(rng, m, weights)
    keep = src != dst
    return Graph.from_arrays(src[keep], dst[keep], None if w is None else w[keep], num_nodes=n)


def barabasi_albert(n, m=4, seed=0, weights="uniform"):
    """Preferential attachment (Barabasi-Albert): a clique on m + 1 vertices,
    then each new vertex joins m distinct earlier vertices drawn by degree, so
    every degree is at least m and the graph has m(m+1)/2 + (n-m-1)m edges.
    Vertex ids are permuted so that the oldest vertices (the hubs) are not all
    at small ids."""
    if m < 1 or n <= m:
        raise ValueError(f"need m >= 1 and n > m, got n={n}, m={m}")
    edges = m * (m + 1) // 2 + (n - m - 1) * m
    _check_size(n, edges)
    from nx_gpumatch.cpu.generate import barabasi_albert_edges  # a kernel: Numba

    rng = np.random.default_rng(seed)
    src, dst = barabasi_albert_edges(n, m, int(rng.integers(0, 2**63)))
    perm = rng.permutation(n)
    return Graph.from_arrays(perm[src], perm[dst], _weights(rng, edges, weights), num_nodes=n)


def watts_strogatz(n, k=6, p=0.1, seed=0, weights="uniform"):
    """Small world (Watts-Strogatz): a ring where each vertex joins its k / 2
    nearest vertices on each side; then, with probability p, the far end of each
    ring edge (u, u + j) moves to a uniformly drawn vertex. A moved edge never
    lands on u, on a ring edge or on another moved edge (it is drawn again, up
    to 64 times, then keeps its place), so the graph has exactly n * k / 2 edges."""
    if k < 2 or k % 2 or k >= n:
        raise ValueError(f"need an even k with 2 <= k < n, got n={n}, k={k}")
    if not 0 <= p <= 1:
        raise ValueError(f"the rewiring probability must be in [0, 1], got {p}")
    _check_size(n, n * k // 2)
    rng = np.random.default_rng(seed)
    u = np.repeat(np.arange(n, dtype=np.int64), k // 2)
    v = (u + np.tile(np.arange(1, k // 2 + 1), n)) % n
    ring = np.sort(np.minimum(u, v) * n + np.maximum(u, v))
    moving = np.flatnonzero(rng.random(u.size) < p)
    new_v = v.copy()
    for _ in range(64):
        if moving.size == 0:
            break
        new_v[moving] = rng.integers(0, n, moving.size)
        key = np.minimum(u, new_v) * n + np.maximum(u, new_v)
        on_ring = ring[np.minimum(np.searchsorted(ring, key[moving]), ring.size - 1)] == key[moving]
        bad = (u[moving] == new_v[moving]) | on_ring
        # Moved edges landing on one pair: one placed in an earlier round keeps
        # it, else the first by position.
        this_round = np.zeros(u.size, bool)
        this_round[moving] = True
        placed = np.flatnonzero(new_v != v)
        placed = placed[np.argsort(this_round[placed], kind="stable")]
        _, first = np.unique(key[placed], return_index=True)
        kept = np.zeros(u.size, bool)
        kept[placed[first]] = True
        bad |= ~kept[moving]
        new_v[moving[bad]] = v[moving[bad]]
        moving = moving[bad]
    return Graph.from_arrays(u, new_v, _weights(rng, u.size, weights), num_nodes=n)


__all__ += ["GRAPH_KINDS", "generate"]

# Graph kinds of :func:`generate`, as benchmarks name them.
GRAPH_KINDS = ("random", "chung_lu", "barabasi_albert", "watts_strogatz")


def generate(kind, n, m, seed=0, weights="uniform"):
    """A graph of ``kind`` (:data:`GRAPH_KINDS`) with n vertices and about m
    edges: the random graph draws m pairs; Chung-Lu has average degree 2m / n
    (exponent 2.5); Barabasi-Albert joins each vertex to round(m / n) earlier
    ones; Watts-Strogatz has ring degree 2 round(m / n) and rewires 10%."""
    if kind == "random":
        return random_graph(n, m, seed=seed, weights=weights)
    per_vertex = max(1, int(round(m / max(n, 1))))
    if kind == "chung_lu":
        return chung_lu(n, 2 * m / max(n, 1), 2.5, seed=seed, weights=weights)
    if kind == "barabasi_albert":
        return barabasi_albert(n, per_vertex, seed=seed, weights=weights)
    if kind == "watts_strogatz":
        return watts_strogatz(n, 2 * per_vertex, 0.1, seed=seed, weights=weights)
    raise ValueError(f"unknown graph kind {kind!r}; expected one of {GRAPH_KINDS}")
