"""Graph files in and out: the formats read (CSV, TSV/whitespace edge lists,
Parquet, Matrix Market) by the command line and the Python API alike; output
that keeps the input's names and states the id base; an output written whole
or not at all, never over the input."""

import os
import subprocess
import sys

import pandas as pd
import pytest
import scipy.io
import scipy.sparse as sp

import nx_gpumatch as gm
from nx_gpumatch.cli import main

EDGES = pd.DataFrame(
    {"a": ["x", "y", "z", "w", "x"], "b": ["y", "z", "w", "v", "v"], "c": [1.0, 4.0, 2.0, 3.0, 5.0]}
)


def _formats(tmp_path):
    """The same edge list in every edge-list format (names a, b, c where there is a header)."""
    csv = tmp_path / "e.csv"
    EDGES.to_csv(csv, index=False)
    tsv = tmp_path / "e.tsv"
    EDGES.to_csv(tsv, index=False, sep="\t")
    rows = [f"{a} {b} {c}" for a, b, c in EDGES.itertuples(index=False)]
    txt = tmp_path / "e.txt"  # no header; comments, some after data
    txt.write_text("# a SNAP-style comment\n% a KONECT-style one\n" + "\n".join(rows[:2]))
    txt.write_text(txt.read_text() + "\n# between\n" + "\n".join(rows[2:]) + "\n")
    edges = tmp_path / "e.edges"  # tabs, no header, no extension a reader knows
    edges.write_text("".join(r.replace(" ", "\t") + "\n" for r in rows))
    pq = tmp_path / "e.parquet"
    EDGES.to_parquet(pq)
    named = ["--source", "a", "--target", "b", "--weight", "c"]
    return {csv: named, tsv: named, txt: [], edges: [], pq: named}


def test_every_edge_list_format_gives_the_same_answer(capsys, tmp_path):
    for path, names in _formats(tmp_path).items():
        assert main(["--no-progress", "--input", str(path), *names]) == 0, path
        out = capsys.readouterr().out
        assert "5 vertices, 5 edges" in out, (path, out)
        assert "2 edges, weight 9" in out, (path, out)  # y-z (4) and x-v (5)


def test_the_api_reads_edge_list_files(tmp_path):
    ref = gm.max_weight_matching(EDGES, source="a", target="b", weight="c")
    for path, names in _formats(tmp_path).items():
        kw = {} if not names else dict(source="a", target="b", weight="c")
        got = gm.max_weight_matching(path, **kw)  # the file's matched rows, as for a DataFrame
        assert got.to_numpy().tolist() == ref.to_numpy().tolist(), path
        g = gm.Graph.from_file(str(path), **kw)
        assert (g.num_nodes, g.num_edges) == (5, 5)
        assert sorted(g.labels()) == ["v", "w", "x", "y", "z"]
    csv = tmp_path / "e.csv"
    parts = gm.louvain_communities(csv, source="a", target="b", weight="c", seed=1)
    assert sorted(parts.vertex) == ["v", "w", "x", "y", "z"]  # a DataFrame's answer
    pairs = gm.maximum_bipartite_matching(csv, source="a", target="b")
    assert len(pairs) == 4


def test_header_recognised_by_names_or_numbers(tmp_path):
    from nx_gpumatch.files import read_edge_list

    path = tmp_path / "h.txt"
    path.write_text("from to w\n1 2 0.5\n2 3 1.5\n")  # numbers below words: a header
    assert list(read_edge_list(path).columns) == ["from", "to", "w"]
    path.write_text("u v\nalice bob\n")  # the names asked for: a header
    assert read_edge_list(path, "u", "v").to_numpy().tolist() == [["alice", "bob"]]
    path.write_text("alice bob 1\nbob carol 2\n")  # words over words: data
    df = read_edge_list(path)
    assert list(df.columns) == ["source", "target", "weight"] and len(df) == 2


def test_unknown_formats_are_named(capsys, tmp_path):
    import gzip

    binary = tmp_path / "g.bin"
    binary.write_bytes(b"\x00\x01\x02\xff" * 100)
    gz = tmp_path / "g.gz"
    gz.write_bytes(gzip.compress(b"\x00\x01" * 100))
    fake = tmp_path / "g.parquet"
    fake.write_text("source,target\n1,2\n")
    for path in (binary, gz, fake):
        assert main(["--no-progress", "--input", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and "Traceback" not in err
        if path is not fake:
            assert "Parquet" in err and "Matrix Market" in err and "CSV" in err, err
        with pytest.raises(ValueError):
            gm.max_weight_matching(path)


def test_gzip_compressed_edge_lists(capsys, tmp_path):
    import gzip

    for name, body in (("e.csv.gz", "a,b,c\nx,y,1\ny,z,4\n"), ("e.gz", "# c\nx y 1\ny z 4\n")):
        path = tmp_path / name
        path.write_bytes(gzip.compress(body.encode()))
        names = ["--source", "a", "--target", "b", "--weight", "c"] if "csv" in name else []
        assert main(["--no-progress", "--input", str(path), *names]) == 0
        assert "3 vertices, 2 edges" in capsys.readouterr().out


def test_parquet_without_pyarrow_names_the_extra(capsys, tmp_path, monkeypatch):
    path = tmp_path / "e.parquet"
    EDGES.to_parquet(path)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    assert main(["--no-progress", "--input", str(path), "--source", "a", "--target", "b"]) == 2
    assert 'pip install "nx-gpumatch[parquet]"' in capsys.readouterr().err
    with pytest.raises(ImportError, match=r"nx-gpumatch\[parquet\]"):
        gm.max_weight_matching(path, source="a", target="b")


# ------------------------------------------------------------------ output
def _mtx(tmp_path):
    """Edges 1-2 (weight 5) and 3-4 (weight 7) in the file's 1-based ids."""
    path = tmp_path / "g.mtx"
    A = sp.coo_array(([5.0, 7.0], ([0, 2], [1, 3])), shape=(4, 4))
    scipy.io.mmwrite(str(path), A)
    return path


def test_output_keeps_the_input_names(tmp_path):
    csv = tmp_path / "e.csv"
    EDGES.to_csv(csv, index=False)
    names = ["--source", "a", "--target", "b", "--weight", "c"]
    for cmd in ([], ["b-matching", "-b", "1"]):
        out = tmp_path / "m.csv"
        assert main([*cmd, "--no-progress", "--input", str(csv), *names, "-o", str(out)]) == 0
        df = pd.read_csv(out)
        assert list(df.columns) == ["a", "b", "c"], cmd
        assert sorted(df.c) == [4.0, 5.0]
    out = tmp_path / "p.csv"
    assert main(["bipartite", "--no-progress", "-i", str(csv), *names[:4], "-o", str(out)]) == 0
    assert list(pd.read_csv(out).columns) == ["a", "b"]


def test_mtx_output_ids_are_the_files_and_say_so(capsys, tmp_path):
    mtx = _mtx(tmp_path)
    out = tmp_path / "m.csv"
    for cmd in ([], ["b-matching", "-b", "1"]):
        assert main([*cmd, "--no-progress", "--input", str(mtx), "-o", str(out)]) == 0
        assert "vertex ids 1-based, as in the .mtx file" in capsys.readouterr().out
        got = sorted(map(tuple, pd.read_csv(out)[["source", "target"]].to_numpy().tolist()))
        assert got == [(1, 2), (3, 4)]
    argv = ["--no-progress", "--input", str(mtx), "-o", str(out), "--id-base", "0"]
    assert main(argv) == 0
    assert "vertex ids 0-based" in capsys.readouterr().out
    got = sorted(map(tuple, pd.read_csv(out)[["source", "target"]].to_numpy().tolist()))
    assert got == [(0, 1), (2, 3)]
    argv = ["louvain", "--no-progress", "--input", str(mtx), "-o", str(out)]
    assert main(argv) == 0
    assert sorted(pd.read_csv(out).vertex) == [1, 2, 3, 4]
    assert main(["bipartite", "--no-progress", "-i", str(mtx), "-o", str(out)]) == 0
    assert sorted(map(tuple, pd.read_csv(out).to_numpy().tolist())) == [(1, 2), (3, 4)]
    csv = tmp_path / "e.csv"
    EDGES.to_csv(csv, index=False)
    argv = ["--no-progress", "-i", str(csv), "--source", "a", "--target", "b", "--id-base", "1"]
    assert main(argv) == 2
    assert "--id-base acts on .mtx files" in capsys.readouterr().err


@pytest.fixture
def edges_csv(tmp_path):
    path = tmp_path / "e.csv"
    EDGES.rename(columns={"a": "source", "b": "target", "c": "weight"}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("how", ["same", "relative", "symlink"])
def test_output_that_is_the_input_is_refused(capsys, tmp_path, monkeypatch, edges_csv, how):
    before = edges_csv.read_bytes()
    out = str(edges_csv)
    if how == "relative":
        monkeypatch.chdir(tmp_path)
        out = os.path.join(".", "sub", "..", "e.csv")
        (tmp_path / "sub").mkdir()
    elif how == "symlink":
        out = str(tmp_path / "link.csv")
        os.symlink(edges_csv, out)
    for cmd in ([], ["louvain"], ["bipartite"]):
        assert main([*cmd, "--no-progress", "--input", str(edges_csv), "-o", out]) == 2
        assert "is the input file" in capsys.readouterr().err
        assert edges_csv.read_bytes() == before


FULL_DISK = """
import resource, signal, sys
from nx_gpumatch.cli import main
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead
resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("cmd", [[], ["bipartite"]])
def test_a_failed_write_keeps_the_old_file_and_leaves_no_partial_one(tmp_path, cmd):
    target = tmp_path / "out.csv"
    target.write_text("precious\n")
    size = ["-n", "500", "-m", "1000"] if not cmd else ["-n", "500"]
    argv = [*cmd, "--no-progress", *size, "-o", str(target)]
    argv += ["--no-scipy"] if cmd else ["--compare-max-edges", "0"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    env.pop("NX_GPUMATCH_INTERPRET_SMALL", None)  # no compiled cache written under the limit
    res = subprocess.run(
        [sys.executable, "-c", FULL_DISK, *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert res.returncode == 2, res.stderr
    assert "error: cannot write" in res.stderr and "Traceback" not in res.stderr
    assert target.read_text() == "precious\n"
    assert sorted(os.listdir(tmp_path)) == ["out.csv"]


def test_a_new_output_has_ordinary_permissions(tmp_path):
    out = tmp_path / "new.csv"
    assert main(["--no-progress", "-n", "20", "-m", "40", "-o", str(out)]) == 0
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(out).st_mode & 0o777 == 0o666 & ~umask
    assert sorted(os.listdir(tmp_path)) == ["new.csv"]


def test_an_unwritable_place_fails_before_any_work(capsys, monkeypatch, tmp_path):
    # As root, os.access says /proc is writable; only creating a file tells.
    def computed(*args, **kw):
        raise AssertionError("computed before finding the output unwritable")

    monkeypatch.setattr(gm, "max_weight_matching", computed)
    assert main(["--no-progress", "-n", "10", "-m", "20", "-o", "/proc/x.csv"]) == 2
    assert "cannot write /proc/x.csv" in capsys.readouterr().err


def test_no_temporary_file_is_left_after_an_error(capsys, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("source,target,weight\n0,1,1.0\n1,2,nan\n")
    assert main(["--no-progress", "--input", str(bad), "-o", str(tmp_path / "o.csv")]) == 2
    assert "finite" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["bad.csv"]
