"""Bad inputs and faults for the distributed engine, run under ``mpiexec -n P``
by tests/distributed/test_distributed_probe.py.

``probe``: malformed files and arguments, each given on the last rank only (the
others pass good ones). Every rank must raise the same DistributedError, with
the expected words, within the case's time limit; a hang in a collective ends
the job through the engine's timeout. Rank 0 prints ``ok <case>`` or
``FAIL <case>: ...`` per case and ``cases <n>`` at the end.

The other groups are faults, one per launch: a rank that raises or exits
outside the engine, a rank that dies while writing, a rank that waits too long.
"""

import gzip
import os
import sys
import tempfile
import time

import numpy as np
from mpi4py import MPI
from mpi_report import failures, report

from nx_gpumatch import distributed as D
from nx_gpumatch.graph import Graph

comm = MPI.COMM_WORLD
P, RANK = comm.size, comm.rank
LAST = RANK == P - 1
CASE_LIMIT = 30.0  # seconds per case, on an oversubscribed machine
MEMORY_LIMIT = 6 << 30  # address space per rank


def outcome(fn):
    try:
        fn()
    except D.DistributedError as exc:
        return "DistributedError", str(exc)
    except Exception as exc:  # noqa: BLE001 - reported as a failure below
        return type(exc).__name__, str(exc)
    return None, ""


def expect(name, fn, text):
    """fn raises the same DistributedError containing ``text`` on every rank."""
    t = time.perf_counter()
    got = comm.allgather(outcome(fn))
    took = comm.allreduce(time.perf_counter() - t, op=MPI.MAX)
    kind, msg = got[0]
    ok = (
        all(g == got[0] for g in got)
        and kind == "DistributedError"
        and text in msg
        and len(msg) < 400  # a short message, not a file's worth of bytes
        and took < CASE_LIMIT
    )
    report(name, ok, f"{took:.1f} s, {got!r}"[:1500])


def files(tmp):
    """Malformed inputs (written by rank 0): name -> (path, expected words)."""
    out = {}

    def npy(name, arr, text):
        out[name] = (os.path.join(tmp, name.replace(" ", "_") + ".npy"), text)
        if RANK == 0:
            np.save(out[name][0], arr)

    def raw(name, data, text, ext=".mtx"):
        out[name] = (os.path.join(tmp, name.replace(" ", "_") + ext), text)
        if RANK == 0:
            with open(out[name][0], "wb") as f:
                f.write(data)

    exact = "has no exact float64 value"
    npy("npy int64 weight 2**53+1", np.array([[0, 1, 2**53], [1, 2, 2**53 + 1]]), exact)
    npy("npy uint64 weight 2**64-1", np.array([[0, 1, 5], [1, 2, 2**64 - 1]], np.uint64), exact)
    npy("npy uint64 id 2**63+5", np.array([[0, 2**63 + 5]], np.uint64), "got 9223372036854775813")
    npy("npy float id 1e300", np.array([[0.0, 1e300, 1.0]]), "got 1e+300")
    npy("npy float id -1e300", np.array([[-1e300, 1.0, 1.0]]), "must be >= 0, got -1e+300")
    npy("npy float id nan", np.array([[0.0, np.nan, 1.0]]), "must be integers, got nan")
    npy("npy float id 1.5", np.array([[0.0, 1.5, 1.0]]), "must be integers, got 1.5")
    npy("npy nan weight", np.array([[0.0, 1.0, np.nan]]), "must be finite")
    npy("npy 1-D", np.arange(6), "expected an array of shape")
    npy("npy 4 columns", np.zeros((3, 4)), "expected an array of shape")
    npy("npy strings", np.array([["a", "b"]]), "unsupported dtype")
    npy("npy booleans", np.ones((2, 3), bool), "unsupported dtype")
    npy("npy id beyond 2**31", np.array([[0, 2**40]]), "2**31")
    raw("npy garbage", b"\x93NUMPY garbage" * 10, "", ".npy")
    head = b"%%MatrixMarket matrix coordinate real general\n"
    binary = bytes(range(256)) * 16  # 4 KB, newlines included
    line4k = binary.replace(b"\n", b" ")
    raw("mtx 4 KB binary entry line", head + b"4 4 2\n1 2 3\n" + line4k + b"\n", "...")
    raw("mtx 4 KB binary first line", line4k + b"\n1 1 1\n", "not a Matrix Market")
    raw("mtx 4 KB binary size line", head + line4k + b"\n", "bad size line")
    raw("mtx binary everywhere", binary, "")
    raw("mtx empty file", b"", "not a Matrix Market")
    raw("mtx no size line", head + b"% only a comment\n", "no size line")
    raw("mtx not square", head + b"3 4 1\n1 2 1\n", "must be square")
    raw("mtx negative size", head + b"-3 -3 1\n1 2 1\n", "bad size line")
    raw("mtx index 0", head + b"3 3 1\n0 2 1\n", "indices must lie in [1, 3]")
    raw("mtx index past n", head + b"3 3 1\n1 9 1\n", "indices must lie in [1, 3]")
    raw("mtx fractional index", head + b"3 3 1\n1.5 2 1\n", "must be integers")
    raw("mtx word entry", head + b"3 3 1\n1 2 heavy\n", "unreadable entry")
    raw("mtx array format", b"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "")
    raw("mtx complex", b"%%MatrixMarket matrix coordinate complex general\n2 2 0\n", "complex")
    raw("mtx integer 2**53+1", b"%%MatrixMarket matrix coordinate integer general\n"
        b"3 3 2\n1 2 9007199254740992\n2 3 9007199254740993\n", exact)  # fmt: skip
    raw("mtx gzip", gzip.compress(head + b"3 3 1\n1 2 1\n"), "gzip-compressed", ".mtx.gz")
    raw("mtx gzip named .mtx", gzip.compress(head + b"3 3 1\n1 2 1\n"), "gzip-compressed")
    out["missing file"] = (os.path.join(tmp, "none.mtx"), "No such file")
    return out


def group_probe():
    import resource

    D.set_timeout(60)  # a hang in a collective ends the job with a message
    # and a case that would allocate without bound fails instead of taking the machine
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = MEMORY_LIMIT if hard == resource.RLIM_INFINITY else min(MEMORY_LIMIT, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    tmp = comm.bcast(tempfile.mkdtemp() if RANK == 0 else None)
    cases = files(tmp)
    comm.Barrier()
    good = {".mtx": os.path.join(tmp, "good.mtx"), ".npy": os.path.join(tmp, "good.npy")}
    if RANK == 0:
        with open(good[".mtx"], "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 1\n")
        np.save(good[".npy"], np.array([[0, 1, 1]]))
    comm.Barrier()
    for name, (path, text) in cases.items():
        # one file for all ranks; the bad part lies in any rank's share
        read = D.read_edges_npy if path.endswith(".npy") else D.read_mtx
        expect(f"file: {name}", lambda p=path, r=read: D.b_matching(r(p), 1), text)
    if P > 1:  # ranks given different files: the reader must not leave them waiting
        cases["mtx differs across ranks"] = None
        mine = os.path.join(tmp, "other.mtx") if LAST else good[".mtx"]
        if LAST:
            with open(mine, "w") as f:
                f.write("%%MatrixMarket matrix coordinate real general\n4 4 2\n1 2 1\n2 3 1\n")
        expect("file: mtx differs across ranks", lambda: D.read_mtx(mine), "differs across")
    # The shared-memory engine refuses the same rows with the same words.
    rows = np.array([[0, 1, 2**53], [1, 2, 2**53 + 1]])
    try:
        Graph.from_arrays(rows[:, 0], rows[:, 1], rows[:, 2])
        shared = ""
    except ValueError as exc:
        shared = str(exc)
    report("shared memory refuses 2**53+1 alike", "has no exact float64 value" in shared, shared)

    s = np.array([0, 1, 2], np.int64)
    t = np.array([1, 2, 3], np.int64)
    w = np.array([1.0, 2.0, 3.0])

    def bad(good, wrong):
        return wrong if LAST else good

    big = np.array([1, 2, 2**53 + 1], np.int64)
    args = {  # name -> (call, expected words); the bad value on the last rank only
        "int64 weight 2**53+1": (lambda: D.b_matching((s, t, bad(w, big)), 1), "no exact float64"),
        "uint64 weight 2**63+1": (
            lambda: D.b_matching((s, t, bad(w, np.array([1, 2, 2**63 + 1], np.uint64))), 1),
            "no exact float64",
        ),
        "bool weights": (
            lambda: D.b_matching((s, t, bad(w, np.ones(3, bool))), 1),
            "got booleans",
        ),
        "string weights": (
            lambda: D.b_matching((s, t, bad(w, np.array(["a", "b", "c"]))), 1),
            "must be",
        ),
        "inf weight": (
            lambda: D.b_matching((s, t, bad(w, np.array([1, np.inf, 1]))), 1),
            "finite",
        ),
        "weights too few": (lambda: D.b_matching((s, t, bad(w, w[:2])), 1), "expected 3"),
        "uint64 id 2**63+5": (
            lambda: D.b_matching((bad(s, np.array([0, 1, 2**63 + 5], np.uint64)), t, w), 1),
            "got 9223372036854775813",
        ),
        "float rows id 1e300": (
            lambda: D.b_matching(bad(np.array([[0.0, 1, 1]]), np.array([[1e300, 1, 1]])), 1),
            "got 1e+300",
        ),
        "float id arrays": (lambda: D.b_matching((bad(s, s + 0.5), t, w), 1), "integer"),
        "string ids": (lambda: D.b_matching((bad(s, s.astype(str)), t, w), 1), "integer"),
        "negative id": (lambda: D.b_matching((bad(s, s - 5), t, w), 1), ">= 0"),
        "id beyond 2**31": (lambda: D.b_matching((bad(s, s + 2**40), t, w), 1), "2**31"),
        "shapes differ": (lambda: D.b_matching((bad(s, s[:2]), t, w), 1), "equal length"),
        "part a string": (lambda: D.b_matching(bad((s, t, w), "edges"), 1), "part must be"),
        "part dict without src": (lambda: D.b_matching(bad((s, t), {"dst": t}), 1), "src"),
        "num_nodes negative": (lambda: D.b_matching((s, t, w), 1, num_nodes=bad(4, -1)), "num_n"),
        "num_nodes float": (lambda: D.b_matching((s, t, w), 1, num_nodes=bad(4, 4.5)), "num_n"),
        "num_nodes too small": (
            lambda: D.b_matching((bad(s, s + 1), t, w), 1, num_nodes=3),
            "must lie in [0, 3)",
        ),
        "b negative": (lambda: D.b_matching((s, t, w), bad(1, -1)), "non-negative"),
        "b fraction": (lambda: D.b_matching((s, t, w), bad(1, 1.5)), "b "),
        "b string": (lambda: D.b_matching((s, t, w), bad(1, "2")), "b "),
        "b nan array": (lambda: D.b_matching((s, t, w), bad(1, np.full(4, np.nan))), "b "),
        "b wrong length": (lambda: D.b_matching((s, t, w), bad(1, np.ones(7, int))), "b must"),
        "ordering": (lambda: D.b_matching((s, t, w), 1, ordering=bad("id", "x")), "ordering"),
        "vertex_subsets 0": (
            lambda: D.b_matching((s, t, w), 1, vertex_subsets=bad(1, 0)),
            "vertex_subsets",
        ),
        "b_subset 0": (lambda: D.b_matching((s, t, w), 1, b_subset=bad(None, 0)), "b_subset"),
        "partial_sort yes": (
            lambda: D.b_matching((s, t, w), 1, partial_sort=bad(True, "yes")),
            "partial_sort",
        ),
        "threads 0": (lambda: D.b_matching((s, t, w), 1, threads=bad(None, 0)), "threads"),
        "algorithm": (
            lambda: D.max_weight_matching((s, t, w), algorithm=bad("suitor", "blossom")),
            "algorithm",
        ),
        "owner short": (
            lambda: D.b_matching((s, t, w), 1, num_nodes=4, owner=bad(np.zeros(4, int), [0])),
            "owner",
        ),
        "owner floats": (
            lambda: D.b_matching((s, t, w), 1, num_nodes=4, owner=bad(np.zeros(4, int), [0.5] * 4)),
            "owner",
        ),
        "duplicates": (lambda: D.b_matching((s, t, w), 1, duplicates=bad("last", "x")), "dupl"),
    }
    if P > 1:  # collective arguments that differ across ranks
        full = np.array([1, 2, 1, 2])
        args.update(
            {
                "b differs": (lambda: D.b_matching((s, t, w), bad(2, 3)), "b differs across"),
                "b array differs": (
                    lambda: D.b_matching((s, t, w), bad(full, full + 1), num_nodes=4),
                    "b differs across",
                ),
                "b int and array": (
                    lambda: D.b_matching((s, t, w), bad(1, np.ones(4, int)), num_nodes=4),
                    "b differs across",
                ),
                "b differs, matching": (
                    lambda: D.b_matching((s, t, w), bad(1, 2), num_nodes=4, ordering="heaviest"),
                    "b differs across",
                ),
            }
        )
    for name, (fn, text) in args.items():
        expect(f"argument: {name}", fn, text)
    # Forms of b that are per rank by design are still accepted, and an array
    # over all vertices given as floats equals the same integers.
    mine = np.full(D.as_partition((s, t, w), num_nodes=4).owned_ids.shape[0], 1)
    res = D.b_matching((s, t, w), mine, num_nodes=4)
    same = D.b_matching((s, t, w), np.ones(4) if LAST else np.ones(4, int), num_nodes=4)
    report("b per rank accepted", res.size() == 2 and same.size() == 2)
    n_cases = len(cases) + len(args)
    if RANK == 0:
        print(f"cases {n_cases} on {P} ranks", flush=True)


def group_end():
    """A normal end: every rank leaves at about the same time."""
    res = D.b_matching((np.array([0, 1, 2]), np.array([1, 2, 3]), None), 1, num_nodes=4)
    print(f"rank {RANK} matched {res.size()}", flush=True)


def group_raise():
    """A rank raises before the collective call."""
    if LAST:
        raise RuntimeError("injected error before the call")
    D.b_matching((np.array([0]), np.array([1]), None), 1)
    print(f"rank {RANK} returned", flush=True)


def group_exit():
    """A rank calls sys.exit(0) before the collective call."""
    if LAST:
        sys.exit(0)
    D.b_matching((np.array([0]), np.array([1]), None), 1)
    print(f"rank {RANK} returned", flush=True)


def group_exit_between():
    """A rank leaves after one call; the others make another."""
    res = D.b_matching((np.array([0]), np.array([1]), None), 1, num_nodes=2)
    if LAST:
        sys.exit(0)
    res.size()
    print(f"rank {RANK} returned", flush=True)


def group_exit_early_legit():
    """A rank leaves early while the others go on without the engine: no abort."""
    res = D.b_matching((np.array([0]), np.array([1]), None), 1, num_nodes=2)
    if not LAST:
        time.sleep(3)
        print(f"rank {RANK} done, {res.vertices.shape[0]} vertices", flush=True)


def group_slow():
    """A rank stuck outside the engine: the others stop at the timeout."""
    D.set_timeout(3)
    if LAST:
        time.sleep(120)
    D.b_matching((np.array([0]), np.array([1]), None), 1)


def group_killed():
    """The last rank ends between two calls without an exit notice."""
    r = D.random_edges(200, 1000, seed=2, comm=False)
    D.b_matching((r["src"], r["dst"], r["weight"]), 1)
    if LAST:
        os._exit(9)  # as if killed: no exit notice
    D.b_matching((r["src"], r["dst"], r["weight"]), 2)
    print(f"rank {RANK} returned", flush=True)


def group_write_dies(folder, fmt="csv"):
    """The last rank dies after writing part of its file (``fmt``: csv, npy or
    parquet, the last a dataset directory)."""
    import builtins

    r = D.random_edges(200, 1000, seed=2, comm=False)
    res = D.b_matching((r["src"], r["dst"], r["weight"]), 1)
    if LAST and fmt == "parquet":
        from nx_gpumatch.distributed import parquet

        def dying_part(name, columns):
            with open(name, "wb") as f:
                f.write(b"PAR1 and some of the data")
                f.flush()
            os._exit(9)  # as if killed

        parquet.write_part = dying_part
    elif LAST:
        real_open = builtins.open

        class Dying:
            def __init__(self, f):
                self.f, self.writes = f, 0

            def write(self, text):
                self.writes += 1
                if self.writes == 2:  # after the header (CSV) or the array header (npy)
                    self.f.flush()
                    os._exit(9)  # as if killed
                return self.f.write(text)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return self.f.__exit__(*exc)

        def dying_open(name, mode="r", *a, **k):
            f = real_open(name, mode, *a, **k)
            return Dying(f) if "w" in mode else f

        builtins.open = dying_open
    target = "m.parquet" if fmt == "parquet" else "m.{rank}." + fmt
    res.write(os.path.join(folder, target))
    print(f"rank {RANK} wrote", flush=True)


if __name__ == "__main__":
    group, *rest = sys.argv[1:]
    globals()[f"group_{group}"](*rest)
    if group == "probe":
        comm.Barrier()
        sys.exit(1 if comm.allreduce(len(failures)) else 0)
