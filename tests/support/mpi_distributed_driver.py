"""Cases for the distributed engine, run under ``mpiexec -n P`` by
tests/distributed/test_distributed.py (one launch runs every case of a group, so that the
Numba kernels load once per rank).

Each case compares the gathered distributed result with the shared-memory
engine on the whole graph, built on every rank from the same global edge list.
Prints ``ok <case>`` on rank 0 per passing case and ``FAIL <case>: ...`` on a
mismatch; exits non-zero if any case failed.
"""

import contextlib
import io
import os
import sys
import tempfile

import numpy as np
from mpi4py import MPI
from mpi_report import failures, report

import nx_gpumatch as gm
from nx_gpumatch import distributed as D
from nx_gpumatch.graph import Graph

comm = MPI.COMM_WORLD
P, RANK = comm.size, comm.rank


def reference(src, dst, w, n, b, duplicates="last"):
    g = Graph.from_arrays(src, dst, w, num_nodes=n, duplicates=duplicates)
    u, v = gm.b_matching(g, b)
    return g, u.astype(np.int64), v.astype(np.int64)


def same(res, ref):
    got = res.gather()
    ok = True
    if RANK == 0:
        ok = np.array_equal(got[0], ref[1]) and np.array_equal(got[1], ref[2])
        if ok:
            g = ref[0]
            eids = np.searchsorted(
                g.edge_src.astype(np.int64) * g.num_nodes + g.edge_dst,
                got[0] * g.num_nodes + got[1],
            )
            ok = np.array_equal(got[2], g.edge_weight[eids])
    return comm.bcast(ok)


def uneven_slices(src, dst, w, seed):
    """Split a global list into P uneven slices, rank 0 possibly empty; returns
    this rank's slice (the concatenation in rank order is the list)."""
    m = src.shape[0]
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.integers(0, m + 1, P - 1)) if P > 1 else np.zeros(0, np.int64)
    if P > 1:
        cuts[0] = 0  # rank 0 gets nothing
    bounds = np.concatenate([[0], cuts, [m]])
    a, b = bounds[RANK], bounds[RANK + 1]
    return src[a:b], dst[a:b], None if w is None else w[a:b]


def graphs():
    r = D.random_edges(200, 900, seed=3, comm=False, weights="integer")  # many ties
    yield "random", r["src"], r["dst"], r["weight"], 200
    r = D.rmat_edges(8, 6, "g500", seed=5, comm=False)
    yield "rmat", r["src"], r["dst"], r["weight"], 256
    # Repeated pairs with different weights, some reversed, self-loops, zero and
    # negative weights (never matched).
    rng = np.random.default_rng(7)
    s = rng.integers(0, 60, 400)
    t = rng.integers(0, 60, 400)
    w = rng.integers(-2, 6, 400).astype(float)
    s = np.concatenate([s, t[:100]])
    t = np.concatenate([t, s[:100]])
    w = np.concatenate([w, rng.integers(1, 6, 100).astype(float)])
    yield "repeats", s, t, w, 64


STRATEGIES = (
    {},
    {"ordering": "heaviest", "vertex_subsets": 3},
    {"b_subset": "half", "partial_sort": False},
    {"b_subset": 1, "ordering": "heaviest"},
)


def group_b_matching():
    for name, s, t, w, n in graphs():
        for ib, b in enumerate((1, 3, "vary")):
            if b == "vary":
                bv = (np.arange(n) * 7919) % 4  # 0..3, some vertices take nothing
                ref = reference(s, t, w, n, bv)
                b_arg = bv
            else:
                ref = reference(s, t, w, n, b)
                b_arg = b
            mine = uneven_slices(s, t, w, seed=len(name) + P)
            # Every strategy on every graph, one per b value.
            for kw in STRATEGIES[ib % 2 :: 2]:
                res = D.b_matching(mine, b_arg, num_nodes=n, **kw)
                report(f"b_matching {name} b={b} {kw}", same(res, ref))
        # A random owner array, and every edge given on every rank (a repeat
        # of an identical edge changes nothing).
        owner = np.random.default_rng(11).integers(0, P, n)
        ref = reference(s, t, w, n, 2)
        res = D.b_matching((s, t, w), 2, num_nodes=n, owner=owner)
        report(f"b_matching {name} owner array, all edges on all ranks", same(res, ref))
        # Every rank gets the reversed list too: each pair's last weight still wins
        # in the rank-order concatenation.
        rs, rt, rw = s[::-1].copy(), t[::-1].copy(), w[::-1].copy()
        full_s = np.concatenate([rs] * P)
        full_t = np.concatenate([rt] * P)
        full_w = np.concatenate([rw + k for k in range(P)])
        ref = reference(full_s, full_t, full_w, n, 1)
        res = D.b_matching((rt, rs, rw + RANK), 1, num_nodes=n)
        report(f"b_matching {name} duplicated on every rank, last wins", same(res, ref))


def group_matching():
    for name, s, t, w, n in graphs():
        g = Graph.from_arrays(s, t, w, num_nodes=n)
        mate_ref = gm.max_weight_matching(g, algorithm="suitor")
        mine = uneven_slices(s, t, w, seed=3 * P + len(name))
        for algorithm in ("suitor", "local_max"):
            res = D.max_weight_matching(mine, algorithm=algorithm, num_nodes=n)
            mate = res.gather_mate()
            ok = comm.bcast(bool(np.array_equal(mate, mate_ref)) if RANK == 0 else None)
            report(f"matching {name} {algorithm}", ok)
            # Stats are the same on every rank once summed.
            tot = comm.allgather(res.stats.total)
            report(f"matching {name} {algorithm} stats agree", all(x == tot[0] for x in tot))


def group_tie_chains():
    """Unit weights chain the locally dominant edges (a path: one edge per
    synchronous round); each rank settles its own part of a chain in one
    superstep, so supersteps grow with the ranks a chain crosses, not its
    length."""
    n = 20_001
    chains = {
        "path": (np.arange(n - 1), np.arange(1, n)),
        "ring lattice": (
            np.repeat(np.arange(n), 3),
            (np.repeat(np.arange(n), 3) + np.tile([1, 2, 3], n)) % n,
        ),
    }
    for name, (s, t) in chains.items():
        w = np.ones(s.shape[0])
        ref = gm.max_weight_matching(Graph.from_arrays(s, t, w, num_nodes=n), algorithm="greedy")
        lo, hi = RANK * s.shape[0] // P, (RANK + 1) * s.shape[0] // P
        res = D.max_weight_matching(
            (s[lo:hi], t[lo:hi], w[lo:hi]), algorithm="local_max", num_nodes=n
        )
        mate = res.gather_mate()
        ok = comm.bcast(bool(np.array_equal(mate, ref)) if RANK == 0 else None)
        report(f"tie chain {name} local_max", ok)
        rounds = res.stats.rounds
        report(f"tie chain {name} supersteps {rounds}", rounds <= 4 * P + 2, f"{rounds} rounds")


def group_io():
    tmp = comm.bcast(tempfile.mkdtemp() if RANK == 0 else None)
    r = D.random_edges(120, 500, seed=9, comm=False)
    s, t, w = r["src"], r["dst"], r["weight"]
    if RANK == 0:
        np.save(os.path.join(tmp, "e.npy"), np.stack([s, t, w], 1))
        with open(os.path.join(tmp, "g.mtx"), "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n% comment\n")
            f.write(f"120 120 {len(s)}\n")
            for a, c, x in zip(s.tolist(), t.tolist(), w.tolist()):
                f.write(f"{a + 1} {c + 1} {-x!r}\n")  # |a_ij| is the weight
    comm.Barrier()
    part = D.read_edges_npy(os.path.join(tmp, "e.npy"))
    sizes = comm.allgather(part["src"].shape[0])
    report("npy rows split", sum(sizes) == len(s) and max(sizes) - min(sizes) <= 1)
    res = D.b_matching(part, 2, num_nodes=120)
    report("npy b_matching", same(res, reference(s, t, w, 120, 2)))
    part = D.read_mtx(os.path.join(tmp, "g.mtx"))
    sizes = comm.allgather(part["src"].shape[0])
    report("mtx lines split", sum(sizes) == len(s))
    ref_g = Graph.from_mtx(os.path.join(tmp, "g.mtx"))
    u, v = gm.b_matching(ref_g, 2)
    res = D.b_matching(part, 2)
    report("mtx b_matching", same(res, (ref_g, u.astype(np.int64), v.astype(np.int64))))
    # CRLF, blank and whitespace-only lines, trailing blanks, comments between
    # entries, no final newline; and a pattern file (two numbers a line).
    body = ["1 2 3.5 \t", "", "   ", "% note", "2 3 -1e0", "\t3 4 2"] * 20 + ["4 1 7"]
    variants = {
        "real": ("real", "\r\n".join(body), [0, 1, 2, 3], [1, 2, 3, 0], [3.5, 1, 2, 7]),
        "pattern": ("pattern", "\n\n".join(["1 2", "2 3 ", "3 4"] * 20), [0, 1, 2], [1, 2, 3], 1),
    }
    for name, (field, text, es, ed, ew) in variants.items():
        path = os.path.join(tmp, f"{name}.mtx")
        nnz = sum(1 for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("%"))
        if RANK == 0:
            with open(path, "w", newline="") as f:
                f.write(f"%%MatrixMarket matrix coordinate {field} general\n4 4 {nnz}\n{text}")
        comm.Barrier()
        part = D.read_mtx(path)
        got = comm.allgather(part)
        s_, d_, w_ = (np.concatenate([x[k] for x in got]) for k in ("src", "dst", "weight"))
        ok = sorted(set(zip(s_.tolist(), d_.tolist(), w_.tolist()))) == sorted(
            zip(es, ed, np.broadcast_to(ew, len(es)).tolist())
        )
        report(f"mtx {name}: blank lines, comments, CRLF", ok and len(s_) == nnz)
    # Generators: the same global graph for any number of ranks.
    mine = D.rmat_edges(7, 4, seed=2)
    allr = D.rmat_edges(7, 4, seed=2, comm=False)
    got = comm.allgather(mine)
    ok = all(
        np.array_equal(np.concatenate([x[k] for x in got]), allr[k])
        for k in ("src", "dst", "weight")
    )
    report("rmat blocks independent of ranks", ok)
    res = D.b_matching(D.random_edges(300, 70000, seed=1), 1)  # more than one block
    ref_r = D.random_edges(300, 70000, seed=1, comm=False)
    report(
        "random generator b_matching",
        same(res, reference(ref_r["src"], ref_r["dst"], ref_r["weight"], 300, 1)),
    )
    # One file per rank.
    res = D.b_matching(mine, 1)
    name = res.write(os.path.join(tmp, "out.{rank}.csv"))
    lines = open(name).read().splitlines()
    report(
        "write per rank",
        lines[0] == "vertex,partner,weight" and len(lines) - 1 == res.partners.shape[0],
    )
    braces = os.path.join(tmp, "{x}")  # only {rank} is replaced
    if RANK == 0:
        os.makedirs(braces, exist_ok=True)
    comm.Barrier()
    name = res.write(os.path.join(braces, "out.{rank}.csv"))
    report("write keeps other braces", name == os.path.join(braces, f"out.{RANK}.csv"))


def expect_error(name, fn, text):
    try:
        fn()
    except D.DistributedError as exc:
        ok = text in str(exc)
        report(name, ok, f"message {exc!s} lacks {text!r}")
        return
    except Exception as exc:  # noqa: BLE001
        report(name, False, f"{type(exc).__name__}: {exc}")
        return
    report(name, False, "no error")


def group_errors():
    last = P - 1
    s = np.array([0, 1, 2], np.int64)
    t = np.array([1, 2, 3], np.int64)
    w = np.array([1.0, 2.0, 3.0])
    expect_error(
        "id out of range on one rank",
        lambda: D.b_matching((s, t + (9 if RANK == last else 0), w), 1, num_nodes=6),
        "vertex ids must lie in [0, 6)",
    )
    expect_error(
        "negative id",
        lambda: D.b_matching((s - (5 if RANK == last else 0), t, w), 1),
        "vertex ids must be >= 0",
    )
    bad = w.copy()
    if RANK == last:
        bad[1] = np.nan
    expect_error("NaN weight", lambda: D.b_matching((s, t, bad), 1), "weight values must be finite")
    expect_error(
        "negative b",
        lambda: D.b_matching((s, t, w), -1 if RANK == last else 1),
        "non-negative",
    )
    if P > 1:
        expect_error(
            "num_nodes differs",
            lambda: D.b_matching((s, t, w), 1, num_nodes=10 + (RANK == last)),
            "num_nodes differs",
        )
    expect_error(
        "bad algorithm",
        lambda: D.max_weight_matching((s, t, w), algorithm="blossom"),
        "algorithm must be one of",
    )
    expect_error(
        "owner out of range",
        lambda: D.b_matching((s, t, w), 1, num_nodes=4, owner=np.array([0, 1, 2, P])),
        "owner ranks",
    )
    expect_error("bad strategy", lambda: D.b_matching((s, t, w), 1, ordering="x"), "ordering")

    def b_of(ids):
        if RANK == last:
            raise KeyError("no b for these ids")
        return np.ones(len(ids), np.int64)

    expect_error("exception in a b callable", lambda: D.b_matching((s, t, w), b_of), "KeyError")
    expect_error(
        "bad duplicates rule",
        lambda: D.b_matching((s, t, w), 1, duplicates="first" if RANK == last else "last"),
        "duplicates must be",
    )
    expect_error(
        "bad threads on one rank",
        lambda: D.b_matching((s, t, w), 1, threads=0 if RANK == last else None),
        "threads must be",
    )
    expect_error(
        "bad threads on one rank, local max",
        lambda: D.max_weight_matching(
            (s, t, w), algorithm="local_max", threads=-1 if RANK == last else None
        ),
        "threads must be",
    )
    if P > 1:
        # Collective arguments that differ across ranks: an error on every rank,
        # never ranks waiting on each other or computing different graphs.
        swapped = np.array([0, 1, 0, 1]) if RANK == 0 else np.array([1, 0, 1, 0])  # same sum
        expect_error(
            "owner arrays differ",
            lambda: D.b_matching((s, t, w), 1, num_nodes=4, owner=swapped % P),
            "owner array (digest) differs",
        )
        expect_error(
            "owner on some ranks only",
            lambda: D.b_matching(
                (s, t, w), 1, num_nodes=4, owner=None if RANK == last else np.zeros(4, np.int64)
            ),
            "owner=None differs",
        )
        expect_error(
            "duplicates rule differs",
            lambda: D.b_matching((s, t, w), 1, duplicates="max" if RANK == last else "last"),
            "duplicates differs",
        )
        expect_error(
            "algorithm differs",
            lambda: D.max_weight_matching(
                (s, t, w), algorithm="local_max" if RANK == last else "suitor"
            ),
            "algorithm differs",
        )
        expect_error(
            "strategy differs",
            lambda: D.b_matching((s, t, w), 1, ordering="heaviest" if RANK == last else "id"),
            "strategy differs",
        )
    star = (np.array([0, 0]), np.array([1, 2])) if RANK == 0 else (s[:0], t[:0])
    expect_error(
        "gather_mate of a b-matching",
        lambda: D.b_matching(star, 2, num_nodes=8).gather_mate(),
        "mate needs a matching",
    )
    # Malformed Matrix Market files: rejected whatever the number of ranks, so
    # whichever rank holds the bad line.
    tmp = comm.bcast(tempfile.mkdtemp() if RANK == 0 else None)
    good = ["1 2 1.0", "2 3 2.0", "3 4 3.0"] * 10
    ints = ["1 2 1", "2 3 2", "3 4 3"] * 10
    files = {  # lines, the size line's entry count, the message[, field]
        "short line": (good + ["1 2", "3 4 5 1"] + good, 62, "has 2 numbers, expected 3"),
        "short line alone": (["1 2", "3 4 5 1"], 2, "has 2 numbers, expected 3"),
        "every line wide": (["1 2 3 4"] * 9, 9, "has 4 numbers, expected 3"),
        "truncated": (good, 40, "announces 40 entries, the file has 30"),
        "extra entry": (good, 29, "announces 29 entries, the file has 30"),
        "nan weight": (good + ["4 5 nan"] + good, 61, "must be finite"),
        # 2**53 + 1: float64 would read 2**53 (Graph.from_mtx refuses it too)
        "integer float64 rounds": (
            ints + ["4 5 9007199254740993"],
            31,
            "no exact float64",
            "integer",
        ),
    }
    for name, (lines, nnz, text, *field) in files.items():
        path = os.path.join(tmp, name.replace(" ", "_") + ".mtx")
        if RANK == 0:
            with open(path, "w") as f:
                kind = field[0] if field else "real"
                f.write(f"%%MatrixMarket matrix coordinate {kind} general\n5 5 {nnz}\n")
                f.write("\n".join(lines) + "\n")
        comm.Barrier()
        expect_error(f"mtx {name}", lambda p=path: D.read_mtx(p), text)
    # Integers float64 holds exactly are read exactly.
    path = os.path.join(tmp, "big_integers.mtx")
    if RANK == 0:
        with open(path, "w") as f:
            f.write("%%MatrixMarket matrix coordinate integer general\n5 5 31\n")
            f.write("\n".join([*ints, f"4 5 {-(2**60)}"]) + "\n")
    comm.Barrier()
    part = D.read_mtx(path)
    heavy = comm.allreduce(float(part["weight"].max(initial=0.0)), op=D._comm.mpi().MAX)
    report("mtx exact big integer", heavy == 2.0**60)
    # After all those errors the ranks still work together.
    res = D.b_matching((s, t, w), 1, num_nodes=4)
    report("usable after errors", res.size() == 2)


def run_cli(argv):
    """``nx-gpumatch distributed ...`` in this process: (exit code, stdout, stderr)."""
    from nx_gpumatch.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["distributed", *argv])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def group_cli():
    """A bad command line or input: one line on stderr (rank 0's, whichever rank
    found it), exit code 2 on every rank."""
    tmp = comm.bcast(tempfile.mkdtemp() if RANK == 0 else None)
    mixed = os.path.join(tmp, "mixed.mtx")
    flat = os.path.join(tmp, "flat.npy")
    out = os.path.join(tmp, "out.csv")
    if RANK == 0:
        with open(mixed, "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n5 5 2\n1 2\n3 4 5 1\n")
        np.save(flat, np.arange(3))
        os.mkdir(f"{out}.{P - 1}")  # the last rank cannot write its file
    comm.Barrier()
    small = ["-n", "200", "-m", "800"]
    cases = [
        (["-i", mixed], "has 2 numbers, expected 3"),
        (["-i", flat], "expected an array of shape"),
        (["-i", os.path.join(tmp, "none.mtx")], "input file not found"),
        (["--no-such-option"], "unrecognized arguments: --no-such-option"),
        (["-a", "blossom"], "invalid choice"),
        ([*small, "--seed", "-1"], "must be a non-negative integer"),
        (["-a", "local_max", "-b", "3"], "-b acts on -a b_suitor only"),
        (["-a", "suitor", "-b", "1"], "-b acts on -a b_suitor only"),
        (["-a", "local_max", "--ordering", "heaviest"], "--ordering acts on"),
        (["-a", "local_max", "--vertex-subsets", "4"], "--vertex-subsets acts on"),
        (["-a", "local_max", "--b-subset", "2"], "--b-subset acts on"),
        (["-a", "local_max", "--full-sort"], "--full-sort acts on"),
        ([*small, "-o", out], f"out.csv.{P - 1}"),
    ]
    for argv, text in cases:
        got = comm.gather(run_cli(argv))
        ok, detail = True, ""
        if RANK == 0:
            lines = got[0][2].splitlines()
            ok = (
                all(code == 2 for code, _, _ in got)
                and all(err == "" for _, _, err in got[1:])
                and len(lines) == 1
                and lines[0].startswith("error: ")
                and text in lines[0]
            )
            detail = repr([(code, err) for code, _, err in got])
        report(f"cli {' '.join(argv)}", comm.bcast(ok), detail)
    # local_max takes no strategy options, and the summary names none.
    got = comm.gather(run_cli(["-a", "local_max", *small]))
    ok = RANK != 0 or (
        all(code == 0 for code, _, _ in got)
        and "algorithm    local_max; block partition" in got[0][1]
        and "ordering" not in got[0][1]
    )
    report("cli local_max summary", comm.bcast(ok), repr(got))


def group_threads():
    """The parallel paths (prange over blocks of the queue and over message
    batches) with 2 threads per rank, forced on a small graph."""
    import importlib

    DB = importlib.import_module(
        "nx_gpumatch.distributed.b_matching"
    )  # the module, not the function

    r = D.random_edges(3000, 24000, seed=8, comm=False)
    s, t, w = r["src"], r["dst"], r["weight"]
    ref = reference(s, t, w, 3000, 3)
    mine = uneven_slices(s, t, w, seed=P)
    old = DB.QUEUE_PARALLEL_MIN
    DB.QUEUE_PARALLEL_MIN = 1
    try:
        for threads in (1, 2):
            res = D.b_matching(mine, 3, num_nodes=3000, threads=threads)
            report(f"b_matching parallel paths, {threads} threads", same(res, ref))
    finally:
        DB.QUEUE_PARALLEL_MIN = old


def group_abort():
    """An unexpected failure on one rank must end the whole job, not hang it."""
    from nx_gpumatch.distributed import _kernels as K

    if RANK == P - 1:

        def broken(*args):
            raise RuntimeError("injected failure")

        K.compute_phase = broken
    r = D.random_edges(100, 400, seed=1)
    D.b_matching(r, 1)
    report("abort", False, "the call returned")


if __name__ == "__main__":
    groups = sys.argv[1:] or [
        "b_matching",
        "matching",
        "tie_chains",
        "io",
        "errors",
        "cli",
        "threads",
    ]
    for grp in groups:
        globals()[f"group_{grp}"]()
    comm.Barrier()
    sys.exit(1 if comm.allreduce(len(failures)) else 0)
