"""The per-case report of the scripts run under mpiexec (mpi_distributed_*.py),
imported from their folder: Python puts a script's folder first on its path."""

from mpi4py import MPI

failures = []


def report(name, ok, detail=""):
    """Rank 0 prints ``ok <name>`` or ``FAIL <name>: <detail>``; every rank
    keeps the names of its failed cases in ``failures``."""
    if MPI.COMM_WORLD.rank == 0:
        print(("ok " if ok else "FAIL ") + name + ("" if ok else f": {detail}"), flush=True)
    if not ok:
        failures.append(name)
