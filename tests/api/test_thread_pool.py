"""Threads on shared cores: Numba's thread pool starts with idle OpenMP
workers that sleep at once, so that on a core shared with another process a
finished worker does not keep spinning there (the wait policy is set only for
the start, and a user's own setting wins); a call whose thread count nobody
chose takes only the cores no other task is running on."""

import os
import subprocess
import sys
import textwrap

import pytest

PROBE = textwrap.dedent(
    """
    import glob, os, sys, time
    import numpy as np
    import numba
    from numba import prange
    from nx_gpumatch import cpu

    cpu.num_threads()  # first: the pool starts here
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    print("env=" + str(os.environ.get("OMP_WAIT_POLICY")))

    @numba.njit(parallel=True)
    def work(x):
        s = 0.0
        for i in prange(x.shape[0]):
            s += x[i] ** 0.5
        return s

    x = np.ones(1 << 20)
    work(x)
    print("layer=" + numba.threading_layer())
    print("threads=" + str(numba.get_num_threads()))
    me = str(__import__("threading").get_native_id())
    quiet = False
    for _ in range(5):  # a worker briefly runnable on a busy machine: try again
        work(x)
        time.sleep(0.002)
        states = []
        for f in glob.glob("/proc/self/task/*/stat"):
            if f.split("/")[-2] != me:
                states.append(open(f).read().rsplit(") ", 1)[1][0])
        if "R" not in states:
            quiet = True
            break
    print("asleep=" + str(quiet))
    """
)


def _probe(env):
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env.update(extra)
    return env


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_idle_workers_sleep_and_the_setting_is_not_left_behind():
    got = _probe(_env())
    assert got["env"] == "None"  # subprocesses and later libraries never see it
    if got["layer"] != "omp" or got["threads"] == "1":
        pytest.skip(f"no OpenMP workers here ({got['layer']}, {got['threads']} thread)")
    assert got["asleep"] == "True"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_users_wait_policy_is_kept():
    got = _probe(_env(OMP_WAIT_POLICY="ACTIVE"))
    assert got["env"] == "ACTIVE"
    if got["layer"] == "omp" and got["threads"] != "1":  # spinning, as the user asked
        assert got["asleep"] == "False"


def test_an_unchosen_count_takes_only_the_free_cores(monkeypatch):
    import numba

    from nx_gpumatch import cpu
    from nx_gpumatch.config import get_config

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one thread only")
    monkeypatch.setattr(get_config(), "threads", None)
    monkeypatch.setattr(cpu, "free_cores", lambda: 1)
    with cpu.threads() as n:
        assert n == 1 == numba.get_num_threads()
    with cpu.threads(size=cpu.PARALLEL_MIN) as n:
        assert n == 1
    with cpu.threads(size=cpu.PARALLEL_MIN - 1) as n:  # serial builds: no need to ask
        assert n == cpu.num_threads() > 1
    with cpu.threads(2) as n:  # chosen: kept, here and by the calls inside
        assert n == 2
        with cpu.threads() as m:
            assert m == 2 == numba.get_num_threads()
    monkeypatch.setattr(get_config(), "threads", 2)
    with cpu.threads() as n:
        assert n == 2
    monkeypatch.setattr(get_config(), "threads", None)
    monkeypatch.setattr(cpu, "free_cores", lambda: None)  # unknown: all threads
    with cpu.threads() as n:
        assert n == cpu.num_threads()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_free_cores_counts_other_processes_tasks(monkeypatch):
    from nx_gpumatch import cpu

    running, own = cpu._runnable()  # the real files parse
    assert running >= 1 and own >= 1
    cores = len(os.sched_getaffinity(0))
    if cores != os.cpu_count():
        assert cpu.free_cores() is None  # a CPU set: the machine-wide count says nothing
        return
    for (running, own), free in [
        ((1, 1), cores),  # only the asking thread
        ((cores + 7, 1), 1),
        ((2, 1), max(1, cores - 1)),  # one other process's task
        ((3, 3), cores),  # this process's own spinning workers do not count
    ]:
        monkeypatch.setattr(cpu, "_runnable", lambda r=running, o=own: (r, o))
        monkeypatch.setattr(cpu, "_LAST", [-1.0, None])  # no reading to reuse
        assert cpu.free_cores() == free
    # A task runnable for one reading only (a kernel thread) is not a busy core.
    readings = iter([(2, 1), (1, 1), (2, 1)])
    monkeypatch.setattr(cpu, "_runnable", lambda: next(readings))
    monkeypatch.setattr(cpu, "_LAST", [-1.0, None])
    assert cpu.free_cores() == cores
    assert cpu.free_cores() == cores  # reused: no reading left to take
    monkeypatch.setattr(cpu, "_LAST", [-1.0, None])
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    if os.cpu_count() > 1:
        assert cpu.free_cores() is None
