"""Distributed matching, b-matching and Louvain on MPI (mpi4py), one process per rank.

Run under ``mpiexec -n P``; every function here is collective over ``comm``
(default ``MPI.COMM_WORLD``). Each rank passes only its own share of the edges
(any slice); the engine redistributes them to a 1D vertex partition with
ghosts, runs the package's CPU engine inside each rank, and returns on every
rank the partners of the vertices it owns. Results equal the shared-memory
``nx_gpumatch.b_matching`` / ``max_weight_matching(algorithm="suitor")``
exactly, for any number of ranks and any partition. ``louvain_communities``
and ``leiden_communities`` return each owned vertex's community (see
:mod:`.louvain` and :mod:`.leiden`).

Importing this package does not import mpi4py; the first call does. Inside an
MPI job, an uncaught exception on a rank aborts the job, and a rank that waits
in a call for a peer that has exited aborts it too, with a message, rather
than waiting forever; :func:`set_timeout` bounds any wait (see ``_faults``).
"""

from nx_gpumatch.distributed import _faults
from nx_gpumatch.distributed._comm import DistributedError
from nx_gpumatch.distributed._faults import get_timeout, set_timeout
from nx_gpumatch.distributed.b_matching import as_partition, b_matching
from nx_gpumatch.distributed.communities import CommunityStats, DistributedCommunities
from nx_gpumatch.distributed.io import (
    planted_edges,
    random_edges,
    read_edges_npy,
    read_mtx,
    rmat_edges,
)
from nx_gpumatch.distributed.leiden import leiden_communities
from nx_gpumatch.distributed.louvain import louvain_communities
from nx_gpumatch.distributed.matching import max_weight_matching
from nx_gpumatch.distributed.parquet import read_parquet
from nx_gpumatch.distributed.partition import Partition, partition_edges
from nx_gpumatch.distributed.result import DistributedMatching, Stats

__all__ = [
    "b_matching",
    "max_weight_matching",
    "louvain_communities",
    "leiden_communities",
    "partition_edges",
    "as_partition",
    "Partition",
    "DistributedMatching",
    "Stats",
    "DistributedCommunities",
    "CommunityStats",
    "DistributedError",
    "read_mtx",
    "read_edges_npy",
    "read_parquet",
    "random_edges",
    "rmat_edges",
    "planted_edges",
    "set_timeout",
    "get_timeout",
]

_faults.install()
