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
