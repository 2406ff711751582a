"""What a distributed community detection call returns on each rank."""

import numpy as np

from nx_gpumatch.distributed._comm import (
    Neighbours,
    allgather,
    allreduce,
    allreduce_max,
    gather,
)

__all__ = ["DistributedCommunities", "CommunityStats"]


def squares(x):
    """The sum of the squares of ``x``, without BLAS: its threads spin on
    after each call and take the core from the rank beside them (two ranks on
    two cores: Louvain 5.3-5.6 s with ``np.dot`` per round, 3.5-3.7 s with
    one BLAS thread, on a 200k-vertex graph)."""
    return float(np.einsum("i,i->", x, x))


COUNTS = ("ghost_updates", "aggregation_rows", "label_queries", "bytes")
PHASES = ("partition", "setup", "move", "refine", "communicate", "aggregate", "labels")


class CommunityStats:
    """Work and messages of one call.

    The attributes are this rank's: ``ghost_updates`` (community ids of
    boundary vertices sent to neighbour ranks after sweeps),
    ``aggregation_rows`` (arcs sent to the owners of coarse vertices),
    ``label_queries`` (ids asked of other ranks to carry the input vertices'
    labels to the next level), ``bytes`` (their payload), ``times`` (seconds
    per phase). ``sweeps``, ``rounds`` (of local moving and of refinement,
    each one exchange and one sum of totals), ``refinements`` (Leiden) and
    ``levels`` are the same on every rank;
    ``level_info`` has one dict per level kept (vertices, modularity, moves,
    sweeps). After the call ``total`` holds the sums over the ranks (and
    ``messages``, all three kinds together), ``time`` the slowest rank's
    seconds per phase, ``time_rank`` this rank's and ``slowest_rank`` the rank
    with the most time in all.
    """

    def __init__(self):
        for k in COUNTS:
            setattr(self, k, 0)
        self.sweeps = 0
        self.rounds = 0
        self.refinements = 0
        self.levels = 0
        self.level_info = []
        self.times = {}
        self.total = {}
        self.time = {}
        self.time_rank = {}
        self.slowest_rank = 0

    @property
    def messages(self):
        return self.ghost_updates + self.aggregation_rows + self.label_queries

    def finish(self, comm):
        """Sum the counts and take the slowest rank's times (collective)."""
        what = "the sums of the statistics"
        local = np.array([getattr(self, k) for k in COUNTS], np.int64)
        summed = allreduce(comm, local, "sum", what)
        self.total = {k: int(v) for k, v in zip(COUNTS, summed)}
        self.total["messages"] = sum(self.total[k] for k in COUNTS[:3])
        self.total["sweeps"] = self.sweeps
        self.total["rounds"] = self.rounds
        self.total["refinements"] = self.refinements
        self.total["levels"] = self.levels
        names = [k for k in PHASES if k in self.times] + sorted(set(self.times) - set(PHASES))
        t = np.array([self.times.get(k, 0.0) for k in names], np.float64)
        self.time = dict(zip(names, allreduce(comm, t, "max", what).tolist()))
        self.time_rank = dict(self.times)
        spent = allgather(comm, float(t.sum()), what)
        self.slowest_rank = int(np.argmax(spent))

    def as_dict(self):
        return {
            "total": dict(self.total),
            "time": dict(self.time),
            "slowest_rank": self.slowest_rank,
            "levels": list(self.level_info),
        }

    def __repr__(self):
        return f"CommunityStats({self.total or {k: getattr(self, k) for k in COUNTS}})"


class DistributedCommunities:
    """This rank's part of a partition into communities.

    ``vertices``: the global ids this rank owns, ascending; ``labels[i]``
    the community of ``vertices[i]`` (dense ids 0..K-1 over all ranks).
    ``metric``: the objective optimised, "modularity" or "cpm" (Leiden's
    Constant Potts Model, ``resolution`` its gamma); ``quality_found``: the
    method's own value of it for the result, and for modularity also
    ``modularity_found`` (the same on every rank). ``stats``: a
    :class:`CommunityStats`. Methods marked collective must be called on every
    rank.
    """

    def __init__(
        self,
        part,
        vertices,
        labels,
        q,
        resolution,
        stats,
        comm,
        metric="modularity",
        quality_found=None,
    ):
        self._part = part
        self.num_nodes = part.num_nodes
        self.vertices = vertices
        self.labels = labels
        self.metric = metric
        self.modularity_found = float(q) if metric == "modularity" else None
        self.quality_found = float(q) if quality_found is None else float(quality_found)
        self.resolution = float(resolution)
        self.stats = stats
        self.comm = comm

    def num_communities(self):
        """K, the number of communities (collective)."""
        top = int(self.labels.max()) if self.labels.size else -1
        return allreduce_max(self.comm, top, "num_communities()") + 1

    def modularity(self, resolution=None):
        """networkx's modularity of the labels on the input graph, self-loops
        included (collective; ``resolution`` None: the call's, or 1 after a
        CPM run). Computed from the input edges, as a check on
        :attr:`modularity_found`."""
        inner, m, vol, _ = self._sums()
        if resolution is None:
            resolution = self.resolution if self.metric == "modularity" else 1.0
        if m == 0:
            return 0.0
        return float(inner / m - float(resolution) * squares(vol) / (4 * m * m))

    def cpm(self, resolution=None):
        """networkx's ``constant_potts_model`` of the labels on the input
        graph, every vertex of weight 1 (collective; ``resolution``, gamma,
        None: the call's): the inner edge weight, self-loops included, less
        gamma * n_C**2 / 2 for each community C."""
        inner, _, _, sizes = self._sums()
        gamma = self.resolution if resolution is None else float(resolution)
        return float(inner - gamma * squares(sizes) / 2.0)

    def connected(self):
        """True if every community induces a connected subgraph of the input
        graph (collective; the parts are found across the ranks)."""
        from nx_gpumatch.distributed.leiden import communities_connected

        return communities_connected(self._part, self.labels, self.comm)

    def _sums(self):
        """(inner weight, total weight, weighted degree and size of each
        community), over the ranks (collective)."""
        p, comm = self._part, self.comm
        nl = p.gids.shape[0]
        lab = np.full(nl, -1, np.int64)
        lab[p.owned_ids] = self.labels
        got = Neighbours(comm, p.neighbours).exchange({r: lab[p.boundary[r]] for r in p.neighbours})
        for r, buf in got.items():
            lab[p.ghosts_of[r]] = buf
        g = p.graph
        a, b, w = g.edge_src, g.edge_dst, g.edge_weight.astype(np.float64)
        # Each edge once over the ranks: where its smaller end is owned.
        lo_end = np.where(p.gids[a] < p.gids[b], a, b)
        mine = p.owned[lo_end]
        a, b, w = a[mine], b[mine], w[mine]
        loops = p.loops[p.owned_ids]
        K = self.num_communities()
        vol = np.zeros(K, np.float64)  # (bincount of nothing is int64)
        vol += np.bincount(lab[a], w, K) + np.bincount(lab[b], w, K)
        vol += np.bincount(self.labels, 2.0 * loops, K)
        local = np.concatenate(
            [
                [float(w[lab[a] == lab[b]].sum()) + float(loops.sum())],
                [float(w.sum()) + float(loops.sum())],
                vol,
                np.bincount(self.labels, minlength=K).astype(np.float64),
            ]
        )
        out = allreduce(comm, local, "sum", "the sums of the communities")
        return out[0], out[1], out[2 : 2 + K], out[2 + K :]

    def write(self, path):
        """Write this rank's owned vertices and their communities, one row
        ``vertex, community`` each (collective; returns this rank's file
        name): ``*.parquet`` a dataset directory of one part per rank, else a
        file per rank (``{rank}`` replaced, else ``.<rank>`` added), ``.npy``
        int64 rows or CSV. All or nothing, as
        :meth:`DistributedMatching.write <nx_gpumatch.distributed.DistributedMatching.write>`."""
        from nx_gpumatch.distributed.result import write_table

        cols = {"vertex": np.asarray(self.vertices, np.int64), "community": self.labels}
        return write_table(self.comm, path, cols)

    def gather(self, root=0):
        """The label of every vertex (int64 array of length num_nodes) on
        ``root``; None elsewhere (collective)."""
        parts = gather(self.comm, (self.vertices, self.labels), root, "gather()")
        if self.comm.rank != root:
            return None
        out = np.full(self.num_nodes, -1, np.int64)
        for v, lab in parts:
            out[v] = lab
        return out

    def __repr__(self):
        return (
            f"<DistributedCommunities rank {self.comm.rank}/{self.comm.size}: "
            f"{self.vertices.shape[0]} owned vertices, {self.metric} {self.quality_found:.6f}>"
        )
