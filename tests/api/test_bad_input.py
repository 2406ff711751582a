"""Malformed input that numpy and scipy take on trust (sparse structures, the
sizes a Matrix Market header declares, compressed files) and switches that
are not understood: a clear error, never a crash, a hang or a silent answer.

Cases that could crash or exhaust memory on a faulty build run in a child
process with a time and an address-space limit."""

import gzip
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import nx_gpumatch as gm
from tests import support

ROOT = str(support.ROOT)


THREADS_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "2"}


def run_child(code, *, memory_gib=3, timeout=120, env=None):
    """(returncode, stdout, stderr) of ``code`` run by a fresh interpreter
    limited to ``memory_gib`` of address space."""
    prelude = textwrap.dedent(
        f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, ({memory_gib} << 30, {memory_gib} << 30))
        """
    )
    # Few threads: each reserves address space, which the limit counts.
    full_env = dict(os.environ, PYTHONPATH=ROOT, **THREADS_ENV, **(env or {}))
    out = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=ROOT,
    )
    return out.returncode, out.stdout, out.stderr


# ------------------------------------------------------------ scipy sparse
MALFORMED = {
    "indptr_end_beyond_nnz": "A.indptr[-1] = 50",
    "indptr_negative": "A.indptr[1] = -3",
    "indptr_decreasing": "A.indptr[1] = 3; A.indptr[2] = 1",
    "indptr_not_from_zero": "A.indptr[0] = 1",
    "index_too_large": "A.indices[0] = 7",
    "index_negative": "A.indices[0] = -1",
    "indptr_too_short": "A.indptr = A.indptr[:-1]",
    "data_too_short": "A.data = A.data[:1]",
    "indices_past_indptr_end": "A.indices = np.append(A.indices, 99); A.data = np.append(A.data, 1.0)",
    "csc_index_too_large": "A = A.tocsc(); A.indices[1] = 9",
    "coo_row_too_large": "A = A.tocoo(); A.row[0] = 9",
    "coo_col_negative": "A = A.tocoo(); A.col[0] = -2",
    "coo_lengths_differ": "A = A.tocoo(); A.data = A.data[:2]",
    "dia_offsets_and_data_differ": "A = A.todia(); A.offsets = np.array([1, 2, 3, 4])",
}

# Every entry point that takes a scipy matrix.
SPARSE_CALLS = {
    "Graph.from_scipy": "gm.Graph.from_scipy(A)",
    "max_weight_matching": "gm.max_weight_matching(A)",
    "b_matching": "gm.b_matching(A, 1)",
    "louvain_communities": "gm.louvain_communities(A)",
    "leiden_communities": "gm.leiden_communities(A)",
    "maximum_bipartite_matching": "gm.maximum_bipartite_matching(A)",
}


def test_malformed_scipy_matrices_are_refused_before_scipy_reads_them():
    # One child runs them all; a crash ends it early and names the case it was in.
    code = f"""
    import numpy as np, scipy.sparse as sp
    import nx_gpumatch as gm
    MALFORMED = {MALFORMED!r}
    CALLS = {SPARSE_CALLS!r}
    for case, spoil in MALFORMED.items():
        for name, call in CALLS.items():
            A = sp.csr_array(np.array([[0, 1, 0], [1, 0, 2], [0, 2, 0]], float))
            exec(spoil)
            print("START", case, name, flush=True)
            try:
                eval(call)
                print("ACCEPTED", case, name, flush=True)
            except ValueError as exc:
                print("REFUSED", case, name, exc, flush=True)
    print("DONE")
    """
    rc, out, err = run_child(code, env={"NX_GPUMATCH_INTERPRET_SMALL": "1"})
    lines = out.splitlines()
    assert rc == 0 and lines[-1] == "DONE", (
        f"child died (rc {rc}) after {lines[-1:]}: {err[-2000:]}"
    )
    accepted = [line for line in lines if line.startswith("ACCEPTED")]
    assert not accepted
    refused = [line for line in lines if line.startswith("REFUSED")]
    assert len(refused) == len(MALFORMED) * len(SPARSE_CALLS)


def test_check_compressed_is_the_one_check_of_the_biadjacency():
    from nx_gpumatch.algorithms.bipartite.matching import Biadjacency

    with pytest.raises(ValueError, match="indptr must never decrease"):
        Biadjacency(2, 2, np.array([0, 2, 1]), np.array([0, 1]))
    with pytest.raises(ValueError, match=r"indices must lie in \[0, 2\)"):
        Biadjacency(2, 2, np.array([0, 1, 2]), np.array([0, 2]))


# ------------------------------------------------------- Matrix Market sizes
BANNER = "%%MatrixMarket matrix coordinate real general\n"


def test_a_tiny_mtx_declaring_a_billion_vertices_is_refused_before_allocating(tmp_path):
    path = tmp_path / "huge.mtx"
    path.write_text(BANNER + "1000000000 1000000000 1\n1 2 3.0\n")
    assert path.stat().st_size < 100
    code = f"""
    import nx_gpumatch as gm
    for call in (gm.Graph.from_mtx, gm.maximum_bipartite_matching):
        try:
            call({str(path)!r})
            print("ACCEPTED")
        except MemoryError as exc:
            print("REFUSED", exc)
    """
    rc, out, err = run_child(code)
    assert rc == 0, err[-2000:]
    assert out.count("REFUSED") == 2 and "needs about" in out, out


@pytest.mark.parametrize(
    "header, body, match",
    [
        ("10 10 1000000000000\n", "1 2 3.0\n", "can hold"),
        ("10 10 -1\n", "", "negative"),
    ],
)
def test_mtx_declaring_more_entries_than_the_file_holds_is_refused(tmp_path, header, body, match):
    path = tmp_path / "a.mtx"
    path.write_text(BANNER + header + body)
    with pytest.raises(ValueError, match=match):
        gm.Graph.from_mtx(path)


def test_dense_mtx_declaring_more_values_than_the_file_holds_is_refused(tmp_path):
    path = tmp_path / "dense.mtx"
    path.write_text("%%MatrixMarket matrix array real general\n100000 100000\n1\n")
    with pytest.raises(ValueError, match="can hold"):
        gm.Graph.from_mtx(path)


@pytest.mark.parametrize(
    "symmetry, values, weights",
    [("skew-symmetric", "1\n2\n3\n", [1.0, 2.0, 3.0]), ("symmetric", "1\n2\n3\n", [2.0])],
)
def test_dense_triangle_files_of_the_smallest_size_are_read(tmp_path, symmetry, values, weights):
    # A skew-symmetric file stores no diagonal: 3 values for 3 x 3, 2 bytes each.
    path = tmp_path / "t.mtx"
    n = 3 if symmetry == "skew-symmetric" else 2
    path.write_text(f"%%MatrixMarket matrix array real {symmetry}\n{n} {n}\n{values}")
    assert sorted(gm.Graph.from_mtx(path).edge_weight.tolist()) == weights


def test_gzip_bomb_is_decompressed_with_a_bound(tmp_path):
    path = tmp_path / "bomb.mtx.gz"
    with gzip.open(path, "wb") as f:
        f.write((BANNER + "3 3 2\n1 2 ").encode())
        blank = b" " * (1 << 20)
        for _ in range(64):  # 64 MiB of blanks in one line, ~64 KiB compressed
            f.write(blank)
        f.write(b"1.0\n2 3 1.0\n")
    assert path.stat().st_size < 1 << 20
    code = f"""
    import nx_gpumatch as gm
    try:
        gm.Graph.from_mtx({str(path)!r})
        print("ACCEPTED")
    except ValueError as exc:
        print("REFUSED", exc)
    """
    # Unbounded, the reader takes in the whole 64 MiB line (and answers).
    rc, out, err = run_child(code)
    assert rc == 0, err[-2000:]
    assert out.startswith("REFUSED") and "decompresses to more than" in out, out


def test_gzip_mtx_within_its_bound_reads_as_before(tmp_path):
    path = tmp_path / "ok.mtx.gz"
    path.write_bytes(gzip.compress((BANNER + "3 3 2\n1 2 1.5\n2 3 -2.0\n").encode()))
    g = gm.Graph.from_mtx(path)
    assert g.edge_weight.tolist() == [1.5, 2.0]


@pytest.mark.parametrize("keep", [12, 0.5, -4, "corrupt"])
def test_truncated_or_corrupt_gzip_is_a_value_error(tmp_path, keep):
    path = tmp_path / "cut.mtx.gz"
    lines = "".join(f"{i % 300 + 1} {i * 7 % 300 + 1} 1.5\n" for i in range(200))
    data = gzip.compress((BANNER + "300 300 200\n" + lines).encode())
    if keep == "corrupt":
        data = data[:40] + bytes(b ^ 0x5A for b in data[40:80]) + data[80:]
    else:
        data = data[: int(len(data) * keep) if isinstance(keep, float) else keep]
    path.write_bytes(data)
    with pytest.raises(ValueError, match="not a readable gzip file"):
        gm.Graph.from_mtx(path)


def _cli(*args, memory_gib=3):
    code = f"""
    import sys
    from nx_gpumatch.cli import main
    sys.exit(main({list(args)!r}))
    """
    return run_child(code, memory_gib=memory_gib)


def test_cli_reports_out_of_memory_inputs_as_errors(tmp_path):
    path = tmp_path / "huge.mtx"
    path.write_text(BANNER + "1000000000 1000000000 1\n1 2 3.0\n")
    for args in (
        ("match", "-i", str(path), "--no-progress"),
        ("bipartite", "-i", str(path), "--no-scipy"),
        ("bipartite", "-n", str(2**31)),
        ("bipartite", "-n", str(300_000_000)),
        ("match", "-n", str(1_000_000), "-m", str(10**9), "--no-progress"),
    ):
        rc, out, err = _cli(*args)
        assert rc == 2, (args, err[-2000:])
        assert err.strip().splitlines()[-1].startswith("error: "), (args, err[-2000:])
        assert "Traceback" not in err, (args, err[-2000:])


# ------------------------------------------------------ switches and flags
@pytest.mark.parametrize(
    "value, expected",
    [("0", "False"), (" no ", "False"), ("OFF", "False"), ("yes", "True"), ("", "True")],
)
def test_interpret_small_environment_values(value, expected):
    code = """
    import nx_gpumatch, networkx as nx
    print(nx.config.backends.gpumatch.interpret_small)
    """
    rc, out, err = run_child(code, env={"NX_GPUMATCH_INTERPRET_SMALL": value})
    assert rc == 0, err[-2000:]
    assert out.strip() == expected


@pytest.mark.parametrize("value", ["maybe", "2", "nope"])
def test_interpret_small_environment_value_not_understood_is_refused(value):
    code = """
    import warnings
    warnings.simplefilter("ignore")  # networkx warns that the backend did not load
    try:
        import nx_gpumatch
        print("ACCEPTED")
    except ValueError as exc:
        print("REFUSED", exc)
    """
    rc, out, err = run_child(code, env={"NX_GPUMATCH_INTERPRET_SMALL": value})
    assert rc == 0, err[-2000:]
    assert out.startswith("REFUSED") and "NX_GPUMATCH_INTERPRET_SMALL" in out, out


@pytest.mark.parametrize(
    "call",
    [
        lambda: gm.stable_marriage({0: [0]}, {0: [0]}, parallel="yes"),
        lambda: gm.stable_marriage({0: [0]}, {0: [0]}, parallel=1),
        lambda: gm.max_weight_matching(_path(), maxcardinality="no"),
        lambda: gm.is_matching(_path(), set(), maximal="yes"),
        lambda: gm.maximum_bipartite_matching(_biadjacency(), return_cover="no"),
        lambda: gm.louvain_communities(_path(), progress="no"),
        lambda: gm.leiden_communities(_path(), progress="no"),
        lambda: gm.warmup([], progress="no"),
        lambda: gm.Graph.from_scipy(_biadjacency(), absolute="no"),
    ],
    ids=[
        "stable_marriage-parallel-str",
        "stable_marriage-parallel-int",
        "max_weight_matching-maxcardinality",
        "is_matching-maximal",
        "maximum_bipartite_matching-return_cover",
        "louvain-progress",
        "leiden-progress",
        "warmup-progress",
        "Graph.from_scipy-absolute",
    ],
)
def test_flags_that_are_not_bools_are_refused(call):
    with pytest.raises(ValueError, match="must be True"):
        call()


def test_flags_take_numpy_bools():
    assert gm.stable_marriage({0: [0]}, {0: [0]}, parallel=np.bool_(False)) == {0: 0}
    assert len(gm.max_weight_matching(_path(), maxcardinality=np.True_)) == 1


def _path():
    import networkx as nx

    return nx.path_graph(3)


def _biadjacency():
    import scipy.sparse as sp

    return sp.csr_array(np.eye(2))


# ------------------------------------------------------- networkx contract
@pytest.mark.parametrize("name", ["maximum_matching", "hopcroft_karp_matching"])
def test_unknown_top_node_is_a_key_error_as_in_networkx(name):
    import networkx as nx

    G = nx.complete_bipartite_graph(2, 2)
    func = getattr(nx.bipartite, name)
    with pytest.raises(KeyError):
        func(G, top_nodes=[0, 1, 99])  # networkx's own answer
    with pytest.raises(KeyError):
        func(G, top_nodes=[0, 1, 99], backend="gpumatch")
    with pytest.raises(KeyError):
        gm.maximum_bipartite_matching(G, top_nodes=[0, 1, 99])
    assert len(func(G, top_nodes=[0, 1], backend="gpumatch")) == 4


@pytest.mark.parametrize("bad", ["nan", "inf"])
@pytest.mark.parametrize(
    "call",
    [
        lambda nx, G: nx.max_weight_matching(G),
        lambda nx, G: nx.min_weight_matching(G),
        lambda nx, G: nx.community.louvain_communities(G, seed=1),
    ],
    ids=["max_weight_matching", "min_weight_matching", "louvain_communities"],
)
def test_non_finite_long_double_weight_is_an_error_not_a_fallback(call, bad):
    import networkx as nx

    G = nx.Graph()
    G.add_edge(0, 1, weight=np.longdouble(bad))
    G.add_edge(1, 2, weight=1.0)
    with nx.config(backend_priority=["gpumatch"]):
        with pytest.raises(ValueError, match="must be finite"):
            call(nx, G)
