"""The interface a community engine offers the level loops of
:mod:`nx_gpumatch.community.levels`.

An engine holds the input graph and a current level (its graph, vertex
weights and vertex order) and runs a level's kernels; the loops decide what
happens between levels. The CPU engine (``cpu/louvain``, ``cpu/leiden.py``)
and the GPU engine (``gpu/louvain.py``, ``gpu/leiden.py``) subclass
:class:`CommunityEngine` and provide exactly what it lists.
"""

import collections

import numpy as np

__all__ = ["CommunityEngine", "HostLevel"]

# The current level on the host: CSR rows (``indptr``, ``indices``, arc
# weights ``w``), self-loop weights, vertex weights ``k`` (degrees, or CPM's
# node weights) and the vertex order.
HostLevel = collections.namedtuple("HostLevel", "indptr indices w loop k order")


class CommunityEngine:
    """What the level loops need from an engine.

    Attributes: ``xp``, the array module labels are kept in between levels;
    ``m2``, the input graph's total degree; ``resolution``, R of the gains
    (see :mod:`nx_gpumatch.community.quality`); ``rule``, the run's
    :class:`~nx_gpumatch.community.schedule.SweepRule`; ``node_weighted``,
    whether vertices weigh their node weights (CPM) rather than their
    degrees; ``leaves`` (Leiden), whether local moving is followed by the
    leave walk (CPM); ``host_below_arcs``, levels with fewer arcs go on in
    the host engine (0: none).

    Louvain's methods: :meth:`start`, :attr:`n`, :attr:`arcs`, :meth:`host`,
    :meth:`host_level`, :meth:`singleton_modularity`, :meth:`move`,
    :meth:`renumber`, :meth:`aggregate`. Leiden adds :meth:`refine`.
    """

    xp = np
    m2 = 0.0
    resolution = 1.0
    rule = None
    node_weighted = False
    leaves = False
    host_below_arcs = 0

    def start(self):
        """Make the input graph the current level again."""
        raise NotImplementedError

    @property
    def n(self):
        """Vertices of the current level."""
        raise NotImplementedError

    @property
    def arcs(self):
        """Arcs (both directions of each edge) of the current level."""
        raise NotImplementedError

    def host(self, x):
        """x as a numpy array."""
        return x

    def host_level(self):
        """The current level as a :class:`HostLevel` of numpy arrays (copies
        off the device)."""
        raise NotImplementedError

    def singleton_modularity(self):
        """Modularity of the current level's vertices each alone."""
        raise NotImplementedError

    def move(self, init):
        """Local moving of the current level from the partition ``init`` (None:
        singletons): returns (comm, modularity, moves, sweeps)."""
        raise NotImplementedError

    def renumber(self, comm):
        """Consecutive ids of the non-empty communities: a tuple beginning
        (newid, K) that :meth:`aggregate` takes back."""
        raise NotImplementedError

    def aggregate(self, comm, numbering):
        """The graph of comm's communities becomes the current level, in the
        vertex order carried over from this one."""
        raise NotImplementedError

    def refine(self, comm, salt):
        """(Leiden) The refined partition of comm, drawn with the refinement
        count ``salt``."""
        raise NotImplementedError
