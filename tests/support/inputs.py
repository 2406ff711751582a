"""Inputs and views that several test files build the same way."""

import numpy as np

from nx_gpumatch.graph import Graph


def to_arrays(men, women):
    """A dict stable-marriage instance as ((indptr, choices) of the men, the same
    of the women), ids in dict order, encoded by one dict lookup per entry."""
    mi = {m: i for i, m in enumerate(men)}
    wi = {w: j for j, w in enumerate(women)}

    def side(prefs, index):
        ptr = np.zeros(len(prefs) + 1, np.int64)
        ptr[1:] = np.cumsum([len(v) for v in prefs.values()])
        ch = np.array([index[x] for v in prefs.values() for x in v], dtype=np.int32)
        return ptr, ch

    return side(men, wi), side(women, mi)


def star_forest(hubs, leaves, seed=0):
    """Hubs joined to many leaves, and a path through the hubs, with tied weights
    (1 or 2): every leaf courts a hub at once, so proposals and offers collide on
    the same words and slots."""
    rng = np.random.default_rng(seed)
    src, dst = [], []
    for h in range(hubs):
        for j in range(leaves):
            src.append(h)
            dst.append(hubs + (h * leaves + j) % (hubs * leaves // 2))
    src += list(range(hubs - 1))
    dst += list(range(1, hubs))
    w = rng.integers(1, 3, len(src)).astype(float)
    return Graph.from_arrays(np.array(src), np.array(dst), w)


def with_nonpositive(n, m, isolated, seed=5):
    """A random graph with n vertices and m edges, about 30% of its weights zero
    and 10% negative, plus ``isolated`` vertices without edges at the end."""
    from nx_gpumatch import generators as gen

    g = gen.random_graph(n, m, seed=seed)
    w = g.edge_weight.copy()
    rng = np.random.default_rng(seed)
    w[rng.random(w.shape[0]) < 0.3] = 0.0
    w[rng.random(w.shape[0]) < 0.1] = -1.0
    return Graph.from_arrays(g.edge_src, g.edge_dst, w, num_nodes=g.num_nodes + isolated)


def csr_rows(indptr, indices, w, count):
    """The first ``count`` rows of a CSR graph as sorted (column, weight) lists:
    equal for two graphs that list each row's arcs in different orders."""
    return [
        sorted(
            zip(
                indices[indptr[x] : indptr[x + 1]].tolist(),
                w[indptr[x] : indptr[x + 1]].tolist(),
            )
        )
        for x in range(count)
    ]
