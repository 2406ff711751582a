"""Graphs as device arrays (CuPy on the GPU, NumPy in emulation).

Written with ``xp`` array operations only, so the same code prepares the
kernels' inputs on a GPU and in CI. Derived arrays are built on the device:
nothing is copied back to the host to compute the edge order.
"""

from __future__ import annotations

from nx_gpumatch._constants import NO_RANK
from nx_gpumatch.gpu._launch import array_module, bincount

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
        as :meth:`nx_gpumatch.Graph.from_arrays` does).

        Memory: pairs are sorted as packed int64 keys ``lo << 32 | hi``, with
        no permutation; weights and edge ids are found by binary search in
        chunks of ``CHUNK`` entries, so transients stay a few bytes per edge
        (the README gives the measured bytes per edge)."""
        xp = array_module(backend)
        n = int(num_nodes)
        if n >= 2**31:
            raise ValueError(f"at most 2**31 - 1 vertices on the GPU, got {n}")
        src = xp.asarray(src)
        dst = xp.asarray(dst)
        if src.shape[0] >= 2**32:
            raise ValueError(f"at most 2**32 - 1 input pairs on the GPU, got {src.shape[0]}")
        w = None if weight is None else xp.asarray(weight).astype(xp.float64, copy=False)
        if w is not None and src.shape[0] and not bool(xp.isfinite(w).all()):
            raise ValueError("weight values must be finite")
        key, keep = _pair_keys(xp, src, dst)
        if w is not None:
            w = w[keep]
        del keep
        # sorted distinct pairs: the edges, in (src, dst) order
        ekey = xp.sort(key)
        if ekey.shape[0]:
            distinct = xp.ones(ekey.shape[0], dtype=bool)
            distinct[1:] = ekey[1:] != ekey[:-1]
            ekey = ekey[distinct]
            del distinct
        m = int(ekey.shape[0])
        if w is None:
            del key
            ew = xp.ones(m, xp.float64)
        else:
            ew = _last_weights(xp, ekey, key, w)
            del key, w
        # arcs, both ways, sorted by (row, column): rows list columns in
        # ascending order, as the host CSR does
        arcs = xp.empty(2 * m, xp.int64)
        arcs[:m] = ekey
        for lo, hi in _chunks(m):
            t = ekey[lo:hi] & 0xFFFFFFFF
            t <<= 32
            t |= ekey[lo:hi] >> 32
            arcs[m + lo : m + hi] = t
            del t
        arcs = xp.sort(arcs)
        esrc = (ekey >> 32).astype(xp.int32)
        edst = ekey.astype(xp.int32)  # the low 32 bits
        indices = arcs.astype(xp.int32)
        arc_edge = xp.empty(2 * m, xp.int32)
        for lo, hi in _chunks(2 * m):
            r = arcs[lo:hi] >> 32
            c = arcs[lo:hi] & 0xFFFFFFFF
            k = xp.minimum(r, c)
            k <<= 32
            k |= xp.maximum(r, c)
            del r, c
            arc_edge[lo:hi] = xp.searchsorted(ekey, k)
            del k
        del arcs, ekey
        indptr = xp.zeros(n + 1, xp.int64)
        indptr[1:] = xp.cumsum(bincount(xp, esrc, n) + bincount(xp, edst, n))
        return cls(backend, n, esrc, edst, ew, indptr, indices, arc_edge)

    # ------------------------------------------------------------ edge order
    def edge_order(self):
        """Edge ids best-first (heavier first, ties by (src, dst)), and the
        number of usable (positive-weight) edges."""
        if "order" not in self._cache:
            xp = self.xp
            w = self.edge_weight
            # One sort of packed keys (dense weight rank, heaviest first) << 32
            # | edge id, rather than an argsort, which holds an int64
            # permutation of the edges. Edge ids follow (src, dst), so the ids
            # in the low bits break ties as the edge order does.
            distinct = xp.unique(w)
            top = distinct.shape[0] - 1
            key = xp.empty(w.shape[0], xp.int64)
            for lo, hi in _chunks(w.shape[0]):
                k = xp.searchsorted(distinct, w[lo:hi]).astype(xp.int64)
                k = top - k
                k <<= 32
                k |= xp.arange(lo, hi, dtype=xp.int64)
                key[lo:hi] = k
                del k
            del distinct
            key = xp.sort(key)
            order = key.astype(xp.int32)  # the low 32 bits: edge ids < 2**31
            del key
            usable = int((w > 0).sum())
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
        (sptr int64, snbr int32, srank int32): one device sort of packed
        ``row << 32 | rank`` arc keys, with no permutation."""
        if "sorted_adj" not in self._cache:
            xp = self.xp
            n = self.num_nodes
            order, usable = self.edge_order()
            top = order[:usable]
            arcs = xp.empty(2 * usable, xp.int64)
            for half, ends in ((0, self.edge_src), (usable, self.edge_dst)):
                for lo, hi in _chunks(usable):
                    k = ends[top[lo:hi]].astype(xp.int64)
                    k <<= 32
                    k |= xp.arange(lo, hi, dtype=xp.int64)
                    arcs[half + lo : half + hi] = k
                    del k
            arcs = xp.sort(arcs)
            srank = arcs.astype(xp.int32)  # the low 32 bits
            snbr = xp.empty(2 * usable, xp.int32)
            for lo, hi in _chunks(2 * usable):
                e = top[srank[lo:hi]]
                # the neighbour is the end of the edge that is not the row
                nbr = self.edge_src[e] ^ self.edge_dst[e]
                del e
                nbr ^= (arcs[lo:hi] >> 32).astype(xp.int32)
                snbr[lo:hi] = nbr
                del nbr
            del arcs
            sptr = xp.zeros(n + 1, xp.int64)
            sptr[1:] = xp.cumsum(
                bincount(xp, self.edge_src[top], n) + bincount(xp, self.edge_dst[top], n)
            )
            self._cache["sorted_adj"] = (sptr, snbr, srank)
        return self._cache["sorted_adj"]


# Entries per step of the chunked passes: bounds their transients (a few
# int64 arrays of CHUNK entries) whatever the graph's size.
CHUNK = 1 << 22


def _chunks(total):
    step = max(int(CHUNK), 1)
    return ((lo, min(lo + step, total)) for lo in range(0, total, step))


def _pair_keys(xp, src, dst):
    """Packed ``lo << 32 | hi`` int64 keys of the pairs that are not
    self-loops, and the mask of those pairs in the input."""
    keep = src != dst
    s = src[keep].astype(xp.int64)
    d = dst[keep].astype(xp.int64)
    key = xp.minimum(s, d)
    key <<= 32
    key |= xp.maximum(s, d)
    return key, keep


def _last_weights(xp, ekey, key, w):
    """Weight of each edge (ekey, sorted, distinct) from its last pair in
    ``key``/``w``, input order."""
    m, total = int(ekey.shape[0]), int(key.shape[0])
    eid = xp.empty(total, xp.int32)
    for lo, hi in _chunks(total):
        eid[lo:hi] = xp.searchsorted(ekey, key[lo:hi])
    ew = xp.empty(m, xp.float64)
    if m == total:  # no repeated pair: each edge is written once
        ew[eid] = w
        return ew
    # sort (edge, input position) packed; the last of each run is the last pair
    last = xp.empty(total, xp.int64)
    for lo, hi in _chunks(total):
        k = eid[lo:hi].astype(xp.int64)
        k <<= 32
        k |= xp.arange(lo, hi, dtype=xp.int64)
        last[lo:hi] = k
        del k
    del eid
    last = xp.sort(last)
    ends = xp.ones(total, dtype=bool)
    ends[:-1] = (last[1:] >> 32) != (last[:-1] >> 32)
    last = last[ends] & 0xFFFFFFFF
    del ends
    ew[:] = w[last]
    return ew


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
