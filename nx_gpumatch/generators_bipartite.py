"""Bipartite test graphs as scipy CSR biadjacency matrices (rows x columns).

Besides random and R-MAT-like power-law graphs, the adversarial shapes that
make matching codes slow: long augmenting paths, deep layered searches with
dead ends, many small components, one giant hub, empty rows and columns.
Each is cheap to build at millions of edges (numpy only) and deterministic for
a seed.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from nx_gpumatch._input import check_memory, input_bytes

__all__ = ["GENERATORS", "bipartite_graph"]


def _csr(rows, cols, nrows, ncols):
    """CSR with the entries in the given order inside each row (a stable sort), so
    the order of a column's rows, which initial matchings follow, is chosen here."""
    rows = np.asarray(rows, np.int64)
    cols = np.asarray(cols, np.int64)
    A = sp.csr_array(
        (np.ones(rows.shape[0], np.int8), (rows, cols)), shape=(int(nrows), int(ncols))
    )
    A.sum_duplicates()
    return A


def _csc_ordered(rows, cols, nrows, ncols):
    """CSC keeping, inside each column, the rows in the order given (duplicates kept)."""
    rows = np.asarray(rows, np.int64)
    cols = np.asarray(cols, np.int64)
    order = np.argsort(cols, kind="stable")
    indptr = np.zeros(int(ncols) + 1, np.int64)
    np.cumsum(np.bincount(cols, minlength=int(ncols)), out=indptr[1:])
    return sp.csc_array(
        (np.ones(rows.shape[0], np.int8), rows[order].astype(np.int32), indptr),
        shape=(int(nrows), int(ncols)),
    )


def random_bipartite(nrows, ncols, m, seed=0):
    """m edges with uniformly random ends (repeats merged)."""
    rng = np.random.default_rng(seed)
    return _csr(rng.integers(0, nrows, m), rng.integers(0, ncols, m), nrows, ncols)


def rmat_bipartite(scale, m, seed=0, probs=(0.57, 0.19, 0.19, 0.05)):
    """R-MAT-like power-law graph on 2**scale rows and columns: each edge picks a
    quadrant per bit with ``probs``, then ids are shuffled so degree and id are
    unrelated."""
    rng = np.random.default_rng(seed)
    a, b, c, _ = probs
    r = np.zeros(m, np.int64)
    col = np.zeros(m, np.int64)
    for _bit in range(scale):
        u = rng.random(m)
        down = u >= a + b  # quadrants c, d: row bit 1
        right = ((u >= a) & (u < a + b)) | (u >= a + b + c)  # quadrants b, d: column bit 1
        r = 2 * r + down
        col = 2 * col + right
    n = 1 << scale
    return _csr(rng.permutation(n)[r], rng.permutation(n)[col], n, n)


def long_path(k, seed=0):
    """One augmenting path through all 2k vertices: column i lists row i + 1
    before row i, so a first-free-row start matches column i to row i + 1 and
    leaves column k - 1 and row 0 free; the only augmentation flips everything."""
    i = np.arange(k - 1)
    rows = np.empty(2 * (k - 1) + 1, np.int64)
    cols = np.empty_like(rows)
    rows[0 : 2 * (k - 1) : 2] = i + 1
    rows[1 : 2 * (k - 1) : 2] = i
    cols[0 : 2 * (k - 1)] = np.repeat(i, 2)
    rows[-1], cols[-1] = k - 1, k - 1
    return _csc_ordered(rows, cols, k, k)


def layered(depth, width, seed=0):
    """Deep layered search with dead ends. Layer l has ``width`` columns, ``width``
    rows that lead on and ``width // 2`` trap rows. In a first-free-row start
    each column of layer l > 0 takes row j of layer l - 1 (it lists it first)
    and each trap row is taken by a dead-end column with no other edge. Layer
    0's columns stay free, the last layer's rows stay free, and every column
    has 3 random edges down into its own layer's rows, traps included: the
    shortest augmenting paths cross all layers and searches keep entering
    branches that end nowhere."""
    rng = np.random.default_rng(seed)
    w, t, L = width, width // 2, depth
    per = w + t  # rows per layer: w leading on, then t traps
    # column ids: layers 1..L-1, then dead ends, then layer 0 (free, so processed last)
    dead0 = (L - 1) * w
    first0 = dead0 + L * t
    ncols = first0 + w
    rows, cols = [], []
    for lev in range(L):
        own = first0 + np.arange(w) if lev == 0 else (lev - 1) * w + np.arange(w)
        if lev > 0:
            rows.append((lev - 1) * per + np.arange(w))
            cols.append(own)
        for _ in range(3):
            rows.append(lev * per + rng.integers(0, per, w))
            cols.append(own)
        rows.append(lev * per + w + np.arange(t))
        cols.append(dead0 + lev * t + np.arange(t))
    return _csc_ordered(np.concatenate(rows), np.concatenate(cols), L * per, ncols)


def components(count, size, seed=0):
    """``count`` disjoint random components, each ``size`` rows and columns with
    3 * size edges: many small searches."""
    rng = np.random.default_rng(seed)
    m = 3 * size
    base = np.repeat(np.arange(count, dtype=np.int64) * size, m)
    r = base + rng.integers(0, size, count * m)
    c = base + rng.integers(0, size, count * m)
    return _csr(r, c, count * size, count * size)


def hub(n, m, seed=0):
    """A random graph plus one row adjacent to every column and one column
    adjacent to every row."""
    rng = np.random.default_rng(seed)
    r = np.concatenate([rng.integers(0, n, m), np.zeros(n, np.int64), np.arange(n)])
    c = np.concatenate([rng.integers(0, n, m), np.arange(n), np.zeros(n, np.int64)])
    return _csr(r, c, n, n)


def empty_sides(n, m, seed=0):
    """A random graph in which only every third row and every second column has edges."""
    rng = np.random.default_rng(seed)
    r = 3 * rng.integers(0, (n + 2) // 3, m)
    c = 2 * rng.integers(0, (n + 1) // 2, m)
    return _csr(r, c, n, n)


GENERATORS = {
    "random": lambda size, seed: random_bipartite(size, size, 8 * size, seed),
    "rmat": lambda size, seed: rmat_bipartite(max(1, int(size).bit_length() - 1), 8 * size, seed),
    "long_path": lambda size, seed: long_path(size, seed),
    "layered": lambda size, seed: layered(max(2, size // 64), 64, seed),
    "components": lambda size, seed: components(max(1, size // 8), 8, seed),
    "hub": lambda size, seed: hub(size, 4 * size, seed),
    "empty_sides": lambda size, seed: empty_sides(size, 4 * size, seed),
}


def bipartite_graph(kind, size, seed=0):
    """A generated biadjacency of about ``size`` rows and columns; ``kind`` is one of
    :data:`GENERATORS`."""
    if kind not in GENERATORS:
        raise ValueError(f"kind must be one of {sorted(GENERATORS)}, got {kind!r}")
    if int(size) < 1:
        raise ValueError(f"size must be at least 1, got {size!r}")
    if int(size) >= 2**31 - 1:
        raise ValueError(f"more than 2**31 - 2 rows or columns are not supported, got {size}")

    # The densest generators draw 8 entries a row.
    check_memory(input_bytes(size, size, 8 * size), f"a {size} x {size} biadjacency")
    return GENERATORS[kind](int(size), seed)
