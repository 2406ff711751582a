"""Compile the distributed engine's kernels ahead of a job's first call.

Small inputs run the kernels interpreted while they are not compiled (as the
shared-memory functions do), but a job's first call on a larger graph with
an empty Numba cache waits for compilation (about 15 s for ``b_matching`` on
2 ranks). :func:`run` calls every distributed function compiled on a small
graph and, with ``large``, on one past the thresholds for threads, which
compiles and caches what real calls use on this many ranks. Some
kernels run only where ranks exchange messages, so a warm-up for jobs of
several ranks must itself run on at least two: ``nx-gpumatch warmup
distributed`` runs it in this process (one rank) and then, where an mpiexec
is found, under ``mpiexec -n 2`` (``python -m nx_gpumatch.distributed.warm``).
"""

import sys

from nx_gpumatch import cpu

__all__ = ["run", "on_two_ranks", "main"]


def _calls(edges, comm):
    from nx_gpumatch import distributed as D

    return {
        "b_matching": lambda: D.b_matching(edges, 3, comm=comm),
        "suitor": lambda: D.max_weight_matching(edges, comm=comm),
        "local_max": lambda: D.max_weight_matching(edges, algorithm="local_max", comm=comm),
        "louvain": lambda: D.louvain_communities(edges, seed=1, comm=comm),
        "leiden": lambda: D.leiden_communities(edges, seed=1, comm=comm),
        "leiden_cpm": lambda: D.leiden_communities(
            edges, seed=1, metric="cpm", resolution=0.05, comm=comm
        ),
    }


def run(comm, large=False):
    """Call every distributed function once on ``comm`` (collective): on 1,000
    vertices and 8,000 edges, or with ``large`` on 40,000 and 120,000 (past
    the engine's thresholds for threads)."""
    from nx_gpumatch.distributed.io import random_edges

    n, m = (40_000, 120_000) if large else (1_000, 8_000)
    edges = random_edges(n, m, seed=1, comm=comm)
    with cpu.interpreted(False):  # compile, even where small calls run interpreted
        for call in _calls(edges, comm).values():
            call()


def on_two_ranks(timeout=900, env=None):
    """:func:`run` under ``mpiexec -n 2`` (small inputs); nothing where no
    mpiexec is found. ``env``: the job's environment (default: this
    process's). A failed run raises RuntimeError with its messages."""
    from nx_gpumatch.distributed.launch import find_mpiexec, run_mpi

    if find_mpiexec() is None:
        return False
    out = run_mpi(2, ["-m", "nx_gpumatch.distributed.warm"], timeout=timeout, env=env)
    if out.returncode != 0:
        tail = (out.stderr or out.stdout).strip()[-2000:]
        raise RuntimeError(f"the distributed warm-up on 2 ranks failed:\n{tail}")
    return True


def main(argv=None):
    """``mpiexec -n P python -m nx_gpumatch.distributed.warm [--large]``."""
    from nx_gpumatch.distributed._comm import get_comm

    argv = sys.argv[1:] if argv is None else argv
    run(get_comm(), large="--large" in argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
