"""Graphs as device arrays (CuPy on the GPU, NumPy in emulation).

Written with ``xp`` array operations only, so the same code prepares the
kernels' inputs on a GPU and in CI. Derived arrays are built on the device:
nothing is copied back to the host to compute the edge order.
"""

from __future__ import annotations

from nx_gpumatch.gpu._launch import array_module

NO_RANK = 0x7FFFFFFF

__all__ = ["DeviceGraph", "device_graph"]


class DeviceGraph:
    """Symmetric CSR on the device, laid out exactly as :class:`nx_gpumatch.Graph`
    (so vertex ids, and therefore results, agree with the CPU engine).

    Fields: ``num_nodes``, ``edge_src``/``edge_dst`` (int32, src < dst, sorted),
    ``edge_weight`` (float64), ``indptr`` (int64), ``indices``/``arc_edge``
    (int32). Derived data is cached per instance.
    """

    def __init__(
        self, backend, num_nodes, edge_src, edge_dst, edge_weight, indptr, indices, arc_edge
    ):
        self.backend = backend
        self.xp = array_module(backend)
        self.num_nodes = int(num_nodes)
        self.edge_src = edge_src
        self.edge_dst = edge_dst
        self.edge_weight = edge_weight
        self.indptr = indptr
        self.indices = indices
        self.arc_edge = arc_edge
        self._cache = {}

    @property
    def num_edges(self):
        return int(self.edge_src.shape[0])

    # ------------------------------------------------------------ building
    @classmethod
    def from_graph(cls, graph, backend):
        """Upload a host :class:`nx_gpumatch.Graph` (no copy in emulation)."""
        xp = array_module(backend)
        return cls(
            backend,
            graph.num_nodes,
            xp.asarray(graph.edge_src),
            xp.asarray(graph.edge_dst),
            xp.asarray(graph.edge_weight),
            xp.asarray(graph.indptr),
            xp.asarray(graph.indices),
            xp.asarray(graph.arc_edge),
        )

    @classmethod
    def from_coo(cls, backend, num_nodes, src, dst, weight=None):
        """From device arrays of edge endpoints (either or both directions of
        each edge; self-loops dropped; a repeated pair keeps its last weight,
        as :meth:`nx_gpumatch.Graph.from_arrays` does)."""
        xp = array_module(backend)
        n = int(num_nodes)
        src = xp.asarray(src).astype(xp.int64, copy=False)
        dst = xp.asarray(dst).astype(xp.int64, copy=False)
        w = (
            xp.ones(src.shape[0], xp.float64)
            if weight is None
            else xp.asarray(weight).astype(xp.float64, copy=False)
        )
        if src.shape[0] and not bool(xp.isfinite(w).all()):
            raise ValueError("weight values must be finite")
        lo = xp.minimum(src, dst)
        hi = xp.maximum(src, dst)
        keep = lo != hi
        lo, hi, w = lo[keep], hi[keep], w[keep]
        key = lo * n + hi
        # stable sort by key; the last of each run of equal keys wins
        order = xp.argsort(key, kind="stable")
        key, w = key[order], w[order]
        last = xp.ones(key.shape[0], dtype=bool)
        if key.shape[0]:
            last[:-1] = key[1:] != key[:-1]
        key, w = key[last], w[last]
        esrc = (key // max(n, 1)).astype(xp.int32)
        edst = (key % max(n, 1)).astype(xp.int32)
        m = int(esrc.shape[0])
        eid = xp.arange(m, dtype=xp.int32)
        # Rows list columns in ascending order, as the host CSR does.
        rows = xp.concatenate([esrc, edst]).astype(xp.int64)
        cols = xp.concatenate([edst, esrc]).astype(xp.int64)
        arcs = xp.argsort(rows * n + cols)
        indices = cols[arcs].astype(xp.int32)
        arc_edge = xp.concatenate([eid, eid])[arcs]
        indptr = xp.zeros(n + 1, xp.int64)
        if m:
            indptr[1:] = xp.cumsum(xp.bincount(rows, minlength=n))
        return cls(backend, n, esrc, edst, w, indptr, indices, arc_edge)

    # ------------------------------------------------------------ edge order
    def edge_order(self):
        """Edge ids best-first (heavier first, ties by (src, dst)), and the
        number of usable (positive-weight) edges."""
        if "order" not in self._cache:
            xp = self.xp
            # edges are sorted by (src, dst), so a stable sort breaks ties right
            order = xp.argsort(-self.edge_weight, kind="stable").astype(xp.int32)
            usable = int((self.edge_weight > 0).sum())
            self._cache["order"] = (order, usable)
        return self._cache["order"]

    def arc_rank(self):
        """Rank of each arc's edge (NO_RANK for weight <= 0), int32."""
        if "arc_rank" not in self._cache:
            xp = self.xp
            order, usable = self.edge_order()
            rank = xp.full(self.num_edges, NO_RANK, xp.int32)
            rank[order[:usable]] = xp.arange(usable, dtype=xp.int32)
            self._cache["arc_rank"] = rank[self.arc_edge]
        return self._cache["arc_rank"]

    def sorted_adjacency(self):
        """Each row's usable neighbours best-first, as (sptr int64, snbr int32)."""
        sptr, snbr, _ = self.sorted_ranked_adjacency()
        return sptr, snbr

    def sorted_ranked_adjacency(self):
        """Each row's usable neighbours best-first with their edge ranks, as
        (sptr int64, snbr int32, srank int32): one device sort of all arcs."""
        if "sorted_adj" not in self._cache:
            xp = self.xp
            n = self.num_nodes
            order, usable = self.edge_order()
            top = order[:usable]
            rows = xp.concatenate([self.edge_src[top], self.edge_dst[top]]).astype(xp.int64)
            cols = xp.concatenate([self.edge_dst[top], self.edge_src[top]])
            rank = xp.arange(usable, dtype=xp.int64)
            ranks = xp.concatenate([rank, rank])
            arcs = xp.argsort(rows * max(usable, 1) + ranks)
            snbr = cols[arcs].astype(xp.int32)
            srank = ranks[arcs].astype(xp.int32)
            sptr = xp.zeros(n + 1, xp.int64)
            if usable:
                sptr[1:] = xp.cumsum(xp.bincount(rows, minlength=n))
            self._cache["sorted_adj"] = (sptr, snbr, srank)
        return self._cache["sorted_adj"]


def device_graph(graph, backend):
    """The device form of a host Graph, cached on it (an interop input may have
    put one there already, built from the caller's device arrays)."""
    if isinstance(graph, DeviceGraph):
        if graph.backend != backend:
            raise ValueError(f"graph lives on backend {graph.backend!r}, not {backend!r}")
        return graph

    def build():
        factory = graph.cached("device_graph_factory", lambda: None)
        return factory(backend) if factory is not None else DeviceGraph.from_graph(graph, backend)

    return graph.cached(("device_graph", backend), build)
