"""The CSR graph every engine works on, and its constructors.

A :class:`Graph` is undirected and simple: each undirected edge {u, v} is stored
once in the edge arrays (``edge_src < edge_dst``, sorted by (src, dst)) and twice
as arcs in the symmetric CSR (``indptr``, ``indices``, with ``arc_edge`` giving the
edge id of each arc, so per-edge data is never duplicated). Vertex ids are
0..n-1 in the order of the input's nodes; ``nodes`` maps them back to labels.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["Graph"]

# Rank given to edges that no approximate algorithm may use (weight <= 0). It is
# the largest value of the 31-bit rank field of the packed Suitor words, so such an
# edge never beats an empty slot.
NO_RANK = np.int32(0x7FFFFFFF)


def _as_weights(w, m, what="weight"):
    """Float64 weights with a clear error for non-numeric, NaN and infinite values."""
    if w is None:
        return np.ones(m, np.float64)
    try:
        arr = np.asarray(w)
        if arr.dtype == object or arr.dtype.kind not in "biuf":
            arr = np.array([_number(x, what) for x in arr.ravel()], np.float64)
        else:
            arr = arr.astype(np.float64, copy=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} values must be numbers: {exc}") from None
    if arr.shape != (m,):
        raise ValueError(f"expected {m} {what} values, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{what} values must be finite; edge #{i} has {arr[i]!r}")
    return arr


def _number(x, what):
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise ValueError(f"{what} values must be real numbers, got {x!r} ({type(x).__name__})")
    return float(x)


class Graph:
    """Undirected weighted graph in symmetric CSR form.

    Build one with :meth:`from_networkx`, :meth:`from_pandas`, :meth:`from_scipy`,
    :meth:`from_mtx` or :meth:`from_arrays`. It is also the object networkx's
    dispatcher caches when a networkx graph is handed to the ``gpumatch`` backend.
    """

    __networkx_backend__ = "gpumatch"

    def __init__(
        self,
        num_nodes,
        edge_src,
        edge_dst,
        edge_weight,
        nodes=None,
        *,
        weight_attr="weight",
        loop_weight=None,
        has_loop=None,
    ):
        # Internal: edges must already be unique, canonical (src < dst) and sorted.
        from nx_gpumatch.cpu.csr import build_csr

        if num_nodes >= 2**31 or edge_src.shape[0] >= NO_RANK:
            raise ValueError(
                "graphs need fewer than 2**31 vertices and 2**31 - 1 edges (int32 ids)"
            )
        self.num_nodes = int(num_nodes)
        self.edge_src = edge_src
        self.edge_dst = edge_dst
        self.edge_weight = edge_weight
        self.nodes = nodes
        self.weight_attr = weight_attr
        # Self-loops are not arcs (no matching can use one) but clustering counts
        # them, so their weights are kept per vertex.
        self.loop_weight = np.zeros(self.num_nodes) if loop_weight is None else loop_weight
        self.has_loop = (self.loop_weight != 0) if has_loop is None else has_loop
        # weights: the weight of each arc, so kernels scanning a row read it in place.
        self.indptr, self.indices, self.arc_edge, self.weights = build_csr(
            self.num_nodes, edge_src, edge_dst, edge_weight
        )
        self._cache = {}
        self.graph = {}  # networkx reads graph attributes from dispatched graphs

    # ------------------------------------------------------------------ build
    @classmethod
    def from_arrays(cls, src, dst, weights=None, num_nodes=None, nodes=None, *, duplicates="last"):
        """Graph from parallel arrays of edge endpoints (ids 0..num_nodes-1).

        Self-loops are kept apart in ``loop_weight`` (no matching can use them;
        clustering counts them). Repeated undirected
        pairs keep the last weight, as building a networkx Graph from the same
        edge list does (``duplicates="max"`` keeps the heaviest instead).
        """
        src = np.asarray(src)
        dst = np.asarray(dst)
        if src.shape != dst.shape or src.ndim != 1:
            raise ValueError("src and dst must be 1-D arrays of equal length")
        for name, a in (("src", src), ("dst", dst)):
            if a.size and a.dtype.kind not in "iu":
                raise ValueError(f"{name} must hold integer vertex ids, got dtype {a.dtype}")
        src = src.astype(np.int64, copy=False)
        dst = dst.astype(np.int64, copy=False)
        w = _as_weights(weights, src.shape[0])
        if num_nodes is None:
            num_nodes = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
            if nodes is not None:
                num_nodes = max(num_nodes, len(nodes))
        n = int(num_nodes)
        if src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
            raise ValueError(f"vertex ids must lie in [0, {n})")
        if nodes is not None and len(nodes) != n:
            raise ValueError(f"nodes has {len(nodes)} labels for {n} vertices")
        lo = np.minimum(src, dst)
        hi = np.maximum(src, dst)
        keep = lo != hi
        loop_weight = np.zeros(n)
        has_loop = np.zeros(n, bool)
        if not keep.all():
            loops = np.flatnonzero(~keep)
            has_loop[lo[loops]] = True
            if duplicates == "last":
                loop_weight[lo[loops]] = w[loops]  # fancy assignment keeps the last write
            else:
                loop_weight[:] = -np.inf
                np.maximum.at(loop_weight, lo[loops], w[loops])
                loop_weight[np.isneginf(loop_weight)] = 0.0
        lo, hi, w = lo[keep], hi[keep], w[keep]
        key = lo * n + hi
        if duplicates == "last":
            # np.unique keeps the first occurrence; reversing makes that the last one.
            ukey, first = np.unique(key[::-1], return_index=True)
            w = w[::-1][first]
        elif duplicates == "max":
            order = np.lexsort((w, key))  # by key, then weight ascending
            key, w = key[order], w[order]
            last = np.ones(key.shape[0], bool)
            last[:-1] = key[1:] != key[:-1]
            ukey, w = key[last], w[last]
        else:
            raise ValueError("duplicates must be 'last' or 'max'")
        esrc = (ukey // n).astype(np.int32) if n else ukey.astype(np.int32)
        edst = (ukey % n).astype(np.int32) if n else ukey.astype(np.int32)
        return cls(
            n,
            esrc,
            edst,
            np.ascontiguousarray(w, np.float64),
            nodes,
            loop_weight=loop_weight,
            has_loop=has_loop,
        )

    @classmethod
    def from_networkx(cls, G, weight="weight", default=1):
        """Graph from an undirected networkx graph; missing weights take ``default``.

        ``weight=None`` gives every edge weight 1, as networkx does.
        """
        import networkx as nx

        if G.is_directed():
            raise nx.NetworkXNotImplemented("not implemented for directed type")
        if G.is_multigraph():
            raise nx.NetworkXNotImplemented("not implemented for multigraph type")
        nodes = list(G)
        index = {v: i for i, v in enumerate(nodes)}
        m = G.number_of_edges()
        src = np.empty(m, np.int64)
        dst = np.empty(m, np.int64)
        if weight is None:
            for k, (u, v) in enumerate(G.edges()):
                src[k] = index[u]
                dst[k] = index[v]
            w = None
        else:
            w = np.empty(m, np.float64)
            what = f"edge attribute {weight!r}"
            for k, (u, v, d) in enumerate(G.edges(data=weight, default=default)):
                src[k] = index[u]
                dst[k] = index[v]
                w[k] = d if type(d) is float or type(d) is int else _number(d, what)
            w = _as_weights(w, m, what)
        g = cls.from_arrays(src, dst, w, num_nodes=len(nodes), nodes=nodes)
        g.weight_attr = weight
        return g

    @classmethod
    def from_pandas(cls, df, source="source", target="target", weight="weight"):
        """Graph from a DataFrame edge list; node order is order of first appearance."""
        import pandas as pd

        for col in (source, target) + ((weight,) if weight is not None else ()):
            if col not in df.columns:
                raise ValueError(f"column {col!r} not in DataFrame (columns: {list(df.columns)})")
        s = df[source].to_numpy()
        t = df[target].to_numpy()
        inter = np.empty(
            2 * len(s),
            dtype=np.result_type(s.dtype, t.dtype) if s.dtype.kind == t.dtype.kind else object,
        )
        inter[0::2] = s
        inter[1::2] = t
        codes, uniques = pd.factorize(inter, sort=False)
        nodes = uniques.tolist() if hasattr(uniques, "tolist") else list(uniques)
        w = (
            None
            if weight is None
            else _as_weights(df[weight].to_numpy(), len(df), f"column {weight!r}")
        )
        g = cls.from_arrays(codes[0::2], codes[1::2], w, num_nodes=len(nodes), nodes=nodes)
        g.weight_attr = weight
        g._cache["label_array"] = pd.Index(uniques)
        return g

    @classmethod
    def from_scipy(cls, A, *, absolute=False):
        """Graph from a square scipy sparse matrix: a_ij != 0 off the diagonal is an edge.

        The pattern is symmetrized; when a_ij and a_ji differ the heavier is kept.
        """
        import scipy.sparse as sp

        if not sp.issparse(A):
            raise ValueError("expected a scipy sparse matrix or array")
        if A.shape[0] != A.shape[1]:
            raise ValueError(f"adjacency matrix must be square, got shape {A.shape}")
        coo = A.tocoo()
        data = np.abs(coo.data) if absolute else coo.data
        return cls.from_arrays(coo.row, coo.col, data, num_nodes=A.shape[0], duplicates="max")

    @classmethod
    def from_mtx(cls, path):
        """Graph from a Matrix Market file, as the SuiteSparse inputs are used for
        matching: the diagonal is ignored and |a_ij| is the weight."""
        return cls.from_scipy(_mmread(path), absolute=True)

    @classmethod
    def from_any(cls, obj, weight="weight"):
        """Graph from any supported input (used by the public functions)."""
        import networkx as nx

        if isinstance(obj, Graph):
            return obj
        if isinstance(obj, nx.Graph):
            return cls.from_networkx(obj, weight=weight)
        import scipy.sparse as sp

        if sp.issparse(obj):
            return cls.from_scipy(obj)
        if isinstance(obj, (str,)) or hasattr(obj, "__fspath__"):
            return cls.from_mtx(obj)
        raise TypeError(f"cannot build a graph from {type(obj).__name__}")

    # ------------------------------------------------------------ properties
    @property
    def num_edges(self):
        return int(self.edge_src.shape[0])

    def number_of_nodes(self):
        return self.num_nodes

    def number_of_edges(self):
        return self.num_edges

    def is_directed(self):
        return False

    def is_multigraph(self):
        return False

    def __len__(self):
        return self.num_nodes

    def __repr__(self):
        return f"<nx_gpumatch.Graph n={self.num_nodes} m={self.num_edges}>"

    def label(self, i):
        return i if self.nodes is None else self.nodes[i]

    def labels(self):
        return list(range(self.num_nodes)) if self.nodes is None else self.nodes

    # ------------------------------------------------------- the edge order
    def edge_order(self):
        """Edge ids from best to worst under the package's one edge order:
        heavier first, ties by the smaller (min id, max id) pair."""
        if "order" not in self._cache:
            from nx_gpumatch.cpu.csr import edge_order

            # Edges are stored sorted by (src, dst), so ordering by -weight with
            # ties by edge id is exactly the package's edge order.
            self._cache["order"] = edge_order(self.edge_weight)
        return self._cache["order"]

    def edge_rank(self):
        """int32 rank of each edge (0 = best); NO_RANK for weight <= 0.

        Edges that cannot add weight are never used by the approximate algorithms.
        """
        if "rank" not in self._cache:
            from nx_gpumatch.cpu.csr import inverse_permutation

            positive = int(np.count_nonzero(self.edge_weight > 0))
            self._cache["rank"] = inverse_permutation(self.edge_order(), positive, NO_RANK)
        return self._cache["rank"]

    def arc_rank(self):
        """Rank of each arc's edge, in CSR order (what the matching kernels scan)."""
        if "arc_rank" not in self._cache:
            from nx_gpumatch.cpu.csr import gather_int32

            self._cache["arc_rank"] = gather_int32(self.edge_rank(), self.arc_edge)
        return self._cache["arc_rank"]

    def with_weights(self, edge_weight, weight_attr=None, loop_weight=None):
        """The same structure with other per-edge (and self-loop) weights; the
        structure arrays are shared."""
        g = object.__new__(Graph)
        g.__dict__.update(self.__dict__)
        if loop_weight is not None:
            g.loop_weight = loop_weight
        g.edge_weight = np.ascontiguousarray(edge_weight, np.float64)
        g.weights = g.edge_weight[self.arc_edge]
        g.weight_attr = weight_attr
        g._cache = {k: self._cache[k] for k in ("label_array",) if k in self._cache}
        return g

    def unweighted(self):
        """This graph with every weight 1.

        networkx may hand a cached weighted conversion to a function that ignores
        weights, so such functions ask for this view.
        """
        if "unweighted" not in self._cache:
            unit = bool((self.edge_weight == 1).all())
            unit = unit and bool((self.loop_weight == self.has_loop).all())
            self._cache["unweighted"] = (
                self
                if unit
                else self.with_weights(
                    np.ones(self.num_edges), loop_weight=self.has_loop.astype(np.float64)
                )
            )
        return self._cache["unweighted"]

    # --------------------------------------------------------------- export
    def to_networkx(self):
        import networkx as nx

        G = nx.Graph()
        labels = self.labels()
        G.add_nodes_from(labels)
        attr = self.weight_attr or "weight"
        G.add_weighted_edges_from(
            (
                (labels[u], labels[v], w)
                for u, v, w in zip(
                    self.edge_src.tolist(), self.edge_dst.tolist(), self.edge_weight.tolist()
                )
            ),
            weight=attr,
        )
        loops = np.flatnonzero(self.has_loop).tolist()
        G.add_weighted_edges_from(
            ((labels[v], labels[v], float(self.loop_weight[v])) for v in loops), weight=attr
        )
        return G


def _mmread(path):
    import scipy.io
    import scipy.sparse as sp

    A = scipy.io.mmread(path)
    if not sp.issparse(A):
        A = sp.coo_array(A)
    return A
