"""Leaving isolated vertices out before an engine runs, and putting them back.

A vertex without edges (or a person with an empty list) takes no part in any
matching and stays a singleton community, yet engines spend time and memory
on every declared vertex: a graph declared with 10**8 vertices and two edges
would cost as much as one with 10**8 edges. The front ends therefore run the
engines on the vertices that take part, renumbered 0..k-1 in their id order
(so every tie the engines break by id falls as before), and spread the result
back over the declared vertices. Only the result itself is per declared vertex.
"""

from __future__ import annotations

import numpy as np

# Below this many ids per vertex, the ids in use are found by sorting them
# instead of marking a flag per declared vertex.
_SORT_BELOW = 1 / 16
# Ids are mapped through an array over all n declared ids while n is at most
# this many times the ids to map; beyond, by binary search in the kept ids.
_MAP_PER_ID = 4


class Compaction:
    """The ``kept`` vertices (sorted ids) of a side of ``n`` vertices; the
    engines see kept[i] as vertex i."""

    __slots__ = ("n", "kept", "_map")

    def __init__(self, n, kept):
        self.n = int(n)
        self.kept = kept
        self._map = None

    @property
    def size(self):
        return int(self.kept.shape[0])

    def index(self, ids):
        """Engine ids (int32) of vertices that are all kept."""
        ids = np.asarray(ids)
        if self.n > _MAP_PER_ID * ids.size + (1 << 16):
            return np.searchsorted(self.kept, ids).astype(np.int32)
        # A map over all declared ids: one gather per id instead of a binary
        # search (a graph's arcs: 30x faster on a million).
        if self._map is None:
            self._map = np.zeros(self.n, np.int32)
            self._map[self.kept] = np.arange(self.kept.shape[0], dtype=np.int32)
        return self._map[ids]

    def spread(self, values, fill):
        """A per-kept-vertex array as one per declared vertex, ``fill`` elsewhere."""
        values = np.asarray(values)
        out = np.full(self.n, fill, values.dtype)
        out[self.kept] = values
        return out

    def spread_partners(self, partner, other):
        """A partner array of the engine (an engine id of side ``other`` per kept
        vertex, -1 for none) as one per declared vertex in declared ids, of the
        same dtype."""
        partner = np.asarray(partner)
        dtype = partner.dtype
        ids = np.where(partner >= 0, other.kept[np.maximum(partner, 0)], -1) if other.size else -1
        out = np.full(self.n, -1, dtype)
        out[self.kept] = ids
        return out

    def spread_labels(self, labels):
        """Community labels (0..K-1 per kept vertex) as one per declared vertex,
        each other vertex a singleton community numbered K, K+1, ... in id order."""
        from nx_gpumatch.community.levels import spread_singletons

        return spread_singletons(labels, self.kept, self.n, np.int32)


def compaction(n, rows=None, ids=(), extra=None):
    """The :class:`Compaction` of the vertices 0..n-1 that have a non-empty row
    in the CSR pointer ``rows``, appear among ``ids`` (arrays of ids in
    [0, n)) or are set in the boolean mask ``extra``; None when that is every
    vertex (nothing to leave out)."""
    ids = [np.asarray(a) for a in ids if np.asarray(a).size]
    total = sum(a.shape[0] for a in ids)
    if rows is None and extra is None and total < _SORT_BELOW * n:
        kept = np.unique(np.concatenate(ids)) if ids else np.empty(0, np.int64)
        return Compaction(n, kept.astype(np.int64, copy=False))
    if rows is not None:
        keep = rows[1:] != rows[:-1]
    else:
        keep = np.zeros(n, np.bool_)
    if extra is not None:
        keep |= extra
    full = keep.all()
    for a in ids:
        if full:
            break
        full = _mark(keep, a)
    if n == 0 or full:
        return None
    return Compaction(n, np.flatnonzero(keep))


def _mark(keep, ids):
    """keep[ids] = True, in growing chunks that stop once every vertex is kept
    (on dense inputs the first few lists name everyone: the rest is not read).
    True if every vertex is kept."""
    step = max(4 * keep.shape[0], 1 << 16)
    lo = 0
    while lo < ids.shape[0]:
        keep[ids[lo : lo + step]] = True
        lo += step
        step *= 2
        if keep.all():
            return True
    return False


# Derived data of a graph that is the same in its compaction: per edge, or per
# arc (each kept row keeps its arcs in their order).
_EDGE_DATA = ("order", "rank", "usable", "arc_rank", "total_weight", "weight_mode")


def compact_graph(graph, *, order_only=False):
    """(graph of the vertices with an edge or a self-loop, its Compaction), or
    (graph, None) when every vertex has one. Edge ids are the same in both (the
    renumbering keeps the edges' order), so edge results need no mapping back;
    kept with the graph's derived data.

    ``order_only``: the caller's engine sees vertex ids only through their
    order (the matchings ranked by the edge order) and spends O(1) on a vertex
    without edges, so its result is the same either way; the graph is then
    compacted only when the vertices left out outnumber the arcs, since the
    renumbering itself is a pass over the arcs (on a graph with a few
    isolated vertices, it took longer than the matching)."""
    if order_only and graph.cached("isolated", lambda: _isolated(graph)) <= graph.indices.shape[0]:
        return graph, None
    return graph.cached("compact", lambda: _compact_graph(graph))


def _isolated(graph):
    """Vertices with neither an edge nor a self-loop."""
    empty = graph.indptr[1:] == graph.indptr[:-1]
    return int(np.count_nonzero(empty & ~graph.has_loop & (graph.loop_weight == 0)))


def _compact_graph(graph):
    from nx_gpumatch.graph import Graph

    loops = graph.has_loop | (graph.loop_weight != 0)
    c = compaction(graph.num_nodes, rows=graph.indptr, extra=loops)
    if c is None:
        return graph, None
    kept = c.kept
    small = object.__new__(Graph)
    small.__dict__.update(graph.__dict__)  # shares the weights and the arcs' edge ids
    small.num_nodes = c.size
    small.nodes = None
    small.edge_src = c.index(graph.edge_src)
    small.edge_dst = c.index(graph.edge_dst)
    small.loop_weight = graph.loop_weight[kept]
    small.has_loop = graph.has_loop[kept]
    if graph.parallel_counts is not None:
        edges, loops = graph.parallel_counts
        small.parallel_counts = (edges, loops[kept])
    # Rows between kept vertices are empty: the kept rows' starts are the CSR.
    small.indptr = np.append(graph.indptr[kept], graph.indptr[-1])
    small.indices = c.index(graph.indices)
    small._cache = {k: graph._cache[k] for k in _EDGE_DATA if k in graph._cache}
    small.graph = {}
    return small, c
