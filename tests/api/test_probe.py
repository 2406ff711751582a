"""A bounded probe of every public entry point with malformed input.

Each public function of ``nx_gpumatch`` (``__all__``), each networkx function
dispatched to the backend, and the CLI are called on malformed graphs (NaN,
infinite, negative, string, complex, bool, object weights, self-loops, directed
graphs, multigraphs, huge ids, empty graphs, broken scipy matrices and files)
and with bad parameters (wrong types, out of range, unknown choices); the cases
are in ``probe_cases.py``. A case passes when the call returns a result the
package's validators accept or raises a clear error of an expected type (see
``probe_cases._expected``); a case that must be refused passes only by raising.

The cases run in a child process under an address-space limit; a case that
crashes the child or runs past its time limit fails alone, and the child
starts again after it.
"""

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from tests import support
from tests.support.probe_cases import DISPATCH_ENTRIES, GRAPH_ENTRIES

HERE = str(support.SUPPORT)  # probe_cases.py
ROOT = str(support.ROOT)
CASE_SECONDS = 30  # the first case of a family may load its kernels
MEMORY_BYTES = 3 << 30
START_SECONDS = 120  # a loaded machine may take long to import numba
TOTAL_SECONDS = 600


def _limit_memory():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def _child(first, extra_env):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, HERE]), **extra_env)
    env["NX_GPUMATCH_INTERPRET_SMALL"] = "1"  # tiny inputs: no compiles
    # Few threads: each reserves address space, which the limit counts.
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="2")
    # stderr goes to a file: a pipe nobody reads could fill up and stall the child.
    err = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(
        [sys.executable, os.path.join(HERE, "probe_cases.py"), str(first)],
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
        env=env,
        cwd=ROOT,
        preexec_fn=_limit_memory,
    )
    lines = queue.Queue()

    def pump():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    proc.err = err
    return proc, lines


def _stderr(proc):
    proc.err.seek(0)
    text = proc.err.read()[-1500:]
    proc.err.close()
    return text


def run_probe(case_seconds=CASE_SECONDS, extra_env=None):
    """{index: result} for every case, and the number of cases."""
    with tempfile.TemporaryDirectory(prefix="nx_gpumatch_probe_") as tmp:
        return _run_probe(case_seconds, dict(extra_env or {}, NX_GPUMATCH_PROBE_TMP=tmp))


def _run_probe(case_seconds, extra_env):
    results, total, first = {}, None, 0
    deadline = time.monotonic() + TOTAL_SECONDS
    while total is None or first < total:
        proc, lines = _child(first, extra_env)
        current, ready = None, False
        while True:
            try:
                # Starting the child (imports) is not part of any case's time.
                line = lines.get(timeout=case_seconds if ready else START_SECONDS)
            except queue.Empty:
                proc.kill()
                proc.wait()
                detail = f"no answer within {case_seconds} s (hang) {_stderr(proc)[-300:]}"
                break
            if line is None:  # the child ended
                rc = proc.wait()
                detail = f"the process died (exit {rc}): {_stderr(proc)}"
                break
            msg = json.loads(line)
            ready = True
            if "total" in msg:
                total = msg["total"]
            elif "start" in msg:
                current = msg["start"]
            else:
                results[msg["index"]] = msg
                current = None
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                raise AssertionError(f"the probe ran past {TOTAL_SECONDS} s")
        if current is None:
            if total is not None and len(results) == total:
                break
            raise AssertionError(f"the probe's child failed outside any case: {detail}")
        results[current] = {"status": "fail", "detail": detail, "index": current}
        first = current + 1
    return results, total


def test_runner_survives_a_crash_and_a_hang_and_blames_each():
    results, total = run_probe(case_seconds=3, extra_env={"NX_GPUMATCH_PROBE_SELFTEST": "1"})
    assert total == 4
    status = [results[i]["status"] for i in range(4)]
    assert status == ["ok", "fail", "fail", "ok"], results
    assert "died" in results[1]["detail"] and "hang" in results[2]["detail"]


@pytest.fixture(scope="module")
def probe():
    from tests.support.probe_cases import cases

    all_cases = cases()
    t0 = time.monotonic()
    results, total = run_probe()
    assert total == len(all_cases)
    by_entry = {}
    for i, (entry, name, kind, _payload) in enumerate(all_cases):
        by_entry.setdefault(entry, []).append((name, kind, results[i]))
    return by_entry, time.monotonic() - t0


ENTRIES = (
    list(GRAPH_ENTRIES)
    + list(DISPATCH_ENTRIES)
    + [f"{e} (priority)" for e in DISPATCH_ENTRIES]
    + [
        "stable_marriage",
        "is_stable",
        "blocking_pair",
        "prepare_preferences",
        "stable_marriage_instance",
        "warmup",
        "is_b_matching",
        "Graph.from_arrays",
        "Graph.from_scipy",
        "Graph.from_pandas",
        "Graph.from_mtx",
        "nx.bipartite.maximum_matching",
        "cli match",
        "cli louvain",
        "cli b-matching",
        "cli bipartite",
        "cli stable-marriage",
    ]
)


@pytest.mark.parametrize("entry", ENTRIES)
def test_probe_entry_point(probe, entry):
    by_entry, _seconds = probe
    assert entry in by_entry, f"no probe case for {entry}"
    failures = []
    for name, _kind, res in by_entry[entry]:
        if res["status"] != "ok":
            failures.append(f"{entry} / {name}: {res['detail']}")
    assert not failures, "\n".join(failures)


def test_probe_covers_every_public_function(probe):
    import nx_gpumatch as gm

    by_entry, seconds = probe
    covered = {e.split("[")[0].split(".")[0] for e in by_entry}
    covered |= {e.split(".")[0] for e in by_entry if e.startswith("Graph")}
    missing = [name for name in gm.__all__ if name not in covered]
    assert not missing, f"public functions the probe never calls: {missing}"
    cases = sum(len(v) for v in by_entry.values())
    print(f"\nprobe: {cases} cases over {len(by_entry)} entry points in {seconds:.1f} s")
