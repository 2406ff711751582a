"""The nx-gpumatch command line."""

import shutil
import subprocess
import sys

import pandas as pd
import pytest
import scipy.io
import scipy.sparse as sp


def run(*args):
    exe = shutil.which("nx-gpumatch")
    cmd = [exe] if exe else [sys.executable, "-m", "nx_gpumatch.cli"]
    out = subprocess.run(
        cmd + ["--no-progress", *args], capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_default_job_compares_with_networkx():
    out = run("-n", "300", "-m", "900")
    assert "300 vertices" in out and "suitor on cpu" in out
    assert "valid: True" in out
    assert "weight ratio" in out  # small graph: compared with networkx's exact answer


@pytest.mark.parametrize("algo", ["local_max", "greedy", "red_blue", "blossom"])
def test_algorithms_and_generators(algo):
    out = run("-a", algo, "--generate", "geometric", "-n", "500", "--threads", "1")
    assert "valid: True" in out
    if algo == "blossom":
        assert "weight ratio 1.0000" in out


def test_mtx_input_and_csv_output(tmp_path):
    A = sp.random(60, 60, density=0.1, random_state=1, format="coo")
    A = A + A.T
    mtx = tmp_path / "a.mtx"
    scipy.io.mmwrite(str(mtx), A)
    out_csv = tmp_path / "m.csv"
    out = run("--input", str(mtx), "-o", str(out_csv), "--compare-max-edges", "0")
    assert "comparison skipped" in out
    df = pd.read_csv(out_csv)
    assert list(df.columns) == ["source", "target", "weight"]
    assert len(set(df.source) | set(df.target)) == 2 * len(df)


def test_csv_edge_list_input(tmp_path):
    path = tmp_path / "e.csv"
    pd.DataFrame({"a": ["x", "y", "z"], "b": ["y", "z", "w"], "c": [1.0, 3.0, 1.0]}).to_csv(
        path, index=False
    )
    out = run("--input", str(path), "--source", "a", "--target", "b", "--weight", "c")
    assert "1 edges, weight 3" in out


# ------------------------------------------------------------------ bad input
# Every subcommand answers bad input the same way: one line "error: ..." on
# stderr and exit code 2. Run in-process: these fail before any real work.
GRAPH_COMMANDS = ["match", "b-matching", "louvain"]
ALL_COMMANDS = [*GRAPH_COMMANDS, "stable-marriage"]
# Own input options (sides of a bipartite graph; per-rank reading under MPI).
FILE_COMMANDS = ["bipartite", "distributed"]
# bipartite and distributed print no progress display, so have no --no-progress.
NO_PROGRESS_OPTION = {"bipartite", "distributed"}


def _quiet(cmd):
    return [] if cmd in NO_PROGRESS_OPTION else ["--no-progress"]


# Subcommands without graph options: only argparse's own errors apply.
OTHER_COMMANDS = ["warmup", "benchmark"]


def _error(capsys, *argv):
    from nx_gpumatch.cli import main

    known = ALL_COMMANDS + FILE_COMMANDS + OTHER_COMMANDS
    code = main(["--no-progress", *argv] if argv[0] not in known else list(argv))
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


def _subcommands():
    from nx_gpumatch.cli import build_parser

    parser = build_parser()
    return set(parser._subparsers._group_actions[0].choices)


def test_every_subcommand_is_covered_here():
    assert _subcommands() == set(ALL_COMMANDS + FILE_COMMANDS + OTHER_COMMANDS)


@pytest.mark.parametrize("cmd", FILE_COMMANDS)
def test_bad_input_of_file_commands(capsys, cmd, tmp_path):
    assert "not found" in _error(capsys, cmd, "--input", str(tmp_path / "nope.mtx"))
    assert "cannot write" in _error(capsys, cmd, "-o", str(tmp_path / "no/dir/x.csv"))
    assert "positive" in _error(capsys, cmd, "--threads", "0")
    assert "unrecognized" in _error(capsys, cmd, "--no-such-option")


@pytest.mark.parametrize("cmd", OTHER_COMMANDS)
def test_unknown_option_of_other_commands(capsys, cmd):
    msg = _error(capsys, cmd, "--no-such-option")
    assert "unrecognized" in msg or "required" in msg or "invalid choice" in msg


@pytest.fixture
def edges_csv(tmp_path):
    path = tmp_path / "e.csv"
    pd.DataFrame({"source": [0, 1, 2], "target": [1, 2, 3], "weight": [1.0, 2.0, 1.0]}).to_csv(
        path, index=False
    )
    return str(path)


@pytest.mark.parametrize("cmd", GRAPH_COMMANDS)
def test_missing_input_file(capsys, cmd, tmp_path):
    msg = _error(capsys, cmd, *_quiet(cmd), "--input", str(tmp_path / "nope.csv"))
    assert "not found" in msg


@pytest.mark.parametrize("cmd", GRAPH_COMMANDS)
def test_unwritable_output(capsys, cmd, tmp_path):
    msg = _error(capsys, cmd, *_quiet(cmd), "-n", "10", "-o", str(tmp_path / "no/dir/x.csv"))
    assert "cannot write" in msg
    assert "cannot write" in _error(capsys, cmd, *_quiet(cmd), "-n", "10", "-o", str(tmp_path))


@pytest.mark.parametrize("cmd", GRAPH_COMMANDS)
def test_unknown_weight_and_id_columns(capsys, cmd, edges_csv):
    assert "--weight 'w'" in _error(
        capsys, cmd, *_quiet(cmd), "--input", edges_csv, "--weight", "w"
    )
    assert "--source 'a'" in _error(
        capsys, cmd, *_quiet(cmd), "--input", edges_csv, "--source", "a"
    )


@pytest.mark.parametrize("cmd", ALL_COMMANDS)
@pytest.mark.parametrize(
    "argv, words",
    [
        (["-n", "-5"], "non-negative"),
        (["--threads", "0"], "positive"),
        (["--device", "gpux"], "invalid choice"),
        (["--no-such-option"], "unrecognized"),
    ],
    ids=["n-negative", "threads-0", "device-typo", "unknown-option"],
)
def test_bad_option_values(capsys, cmd, argv, words):
    assert words in _error(capsys, cmd, *argv)


@pytest.mark.parametrize("cmd", GRAPH_COMMANDS)
def test_bad_generator_options(capsys, cmd):
    assert "invalid choice" in _error(capsys, cmd, "--generate", "rndom")
    msg = _error(capsys, cmd, *_quiet(cmd), "--generate", "geometric", "-n", "20", "-m", "50")
    assert "-m does not apply" in msg


def test_stable_marriage_repeat_and_kind(capsys):
    assert "positive" in _error(capsys, "stable-marriage", "--repeat", "0")
    assert "invalid choice" in _error(capsys, "stable-marriage", "--kind", "eassy")


@pytest.mark.parametrize("cmd", ALL_COMMANDS)
def test_gpu_without_a_gpu(capsys, cmd):
    from nx_gpumatch import gpu

    if gpu.available():
        pytest.skip("a GPU is present")
    msg = _error(capsys, cmd, "-n", "10", "--device", "gpu")
    assert "no GPU" in msg


def test_seed_that_would_not_act(capsys, edges_csv):
    msg = _error(capsys, "match", "--no-progress", "--input", edges_csv, "--seed", "3")
    assert "--seed" in msg
    msg = _error(capsys, "b-matching", "--no-progress", "--input", edges_csv, "--seed", "3")
    assert "--seed" in msg


def test_library_errors_become_one_line(capsys, tmp_path):
    path = tmp_path / "bad.csv"
    pd.DataFrame({"source": [0, 1], "target": [1, 2], "weight": [1.0, float("nan")]}).to_csv(
        path, index=False
    )
    assert "finite" in _error(capsys, "match", "--no-progress", "--input", str(path))
