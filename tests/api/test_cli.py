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
    if args[0] in GRAPH_COMMANDS:  # options follow the subcommand
        cmd.append(args[0])
        args = args[1:]
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


@pytest.mark.parametrize("ext", [".MTX", ".mtx.gz", ".Mtx.GZ"])
def test_mtx_extension_any_case(tmp_path, ext):
    import gzip

    path = tmp_path / f"a{ext}"
    scipy.io.mmwrite(str(tmp_path / "a.mtx"), sp.coo_array(([2.0], ([1], [0])), shape=(3, 3)))
    data = (tmp_path / "a.mtx").read_bytes()
    path.write_bytes(gzip.compress(data) if ext.lower().endswith(".gz") else data)
    assert "3 vertices, 1 edges" in run("--input", str(path))


def _edgeless_inputs(tmp_path):
    header = tmp_path / "header.csv"
    header.write_text("source,target,weight\n")
    mtx = tmp_path / "nnz0.mtx"
    mtx.write_text("%%MatrixMarket matrix coordinate real general\n5 5 0\n")
    return {
        "generated": ["-n", "5", "-m", "0"],
        "no-vertices": ["-n", "0", "-m", "0"],
        "leiden": ["--leiden", "-n", "5", "-m", "0"],
        "header-only-csv": ["--input", str(header)],
        "nnz0-mtx": ["--input", str(mtx)],
    }


@pytest.mark.parametrize(
    "case", ["generated", "no-vertices", "leiden", "header-only-csv", "nnz0-mtx"]
)
def test_louvain_edgeless_graph(tmp_path, case):
    argv = _edgeless_inputs(tmp_path)[case]
    out = run("louvain", *argv)
    k = 0 if case in ("no-vertices", "header-only-csv") else 5
    assert f"result       {k} communities, modularity 0.000000" in out
    assert "comparison skipped: total edge weight 0" in out


def test_louvain_zero_weight_edges(edges_csv, tmp_path):
    path = tmp_path / "z.csv"
    pd.read_csv(edges_csv).assign(weight=0.0).to_csv(path, index=False)
    out = run("louvain", "--input", str(path))
    assert "4 communities, modularity 0.000000" in out and "comparison skipped" in out


def test_compare_max_edges_0_never_compares(tmp_path):
    loops = tmp_path / "loops.csv"  # no edges, but weight on self-loops
    loops.write_text("source,target,weight\n0,0,2\n1,1,3\n")
    out = run("louvain", "--input", str(loops), "--compare-max-edges", "0")
    assert "comparison skipped: --compare-max-edges 0" in out
    out = run("-n", "5", "-m", "0", "--compare-max-edges", "0")
    assert "comparison skipped: --compare-max-edges 0" in out


def test_rmat_without_edges():
    out = run("--generate", "rmat", "-n", "0", "-m", "0")
    assert "2 vertices, 0 edges" in out  # -n rounded up to a power of 2, at least 2


# ------------------------------------------------------------------ bad input
# Every subcommand answers bad input the same way: one line "error: ..." on
# stderr and exit code 2. Run in-process: these fail before any real work.
GRAPH_COMMANDS = ["match", "b-matching", "louvain"]
ALL_COMMANDS = [*GRAPH_COMMANDS, "stable-marriage"]
# Own input options (sides of a bipartite graph; per-rank reading under MPI).
FILE_COMMANDS = ["bipartite", "distributed"]


def _quiet(cmd):
    return ["--no-progress"]  # every subcommand takes it


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


@pytest.mark.parametrize("cmd", GRAPH_COMMANDS)
def test_bad_graph_sizes_and_seed(capsys, cmd):
    assert "-n must be at least 1 when -m > 0" in _error(capsys, cmd, *_quiet(cmd), "-n", "0")
    msg = _error(capsys, cmd, *_quiet(cmd), "--generate", "delaunay", "-n", "2")
    assert "--generate delaunay needs -n of at least 3" in msg
    assert "--seed" in _error(capsys, cmd, "--seed", "-3")
    if cmd != "b-matching":
        assert "--compare-max-edges" in _error(capsys, cmd, "--compare-max-edges", "-1")


def test_negative_seed_of_red_blue(capsys):
    msg = _error(capsys, "match", "-a", "red_blue", "--seed", "-3", "-n", "30", "-m", "60")
    assert "--seed" in msg and "non-negative" in msg


@pytest.mark.parametrize("cmd", ["bipartite", "stable-marriage"])
def test_negative_seed_of_generated_instances(capsys, cmd):
    msg = _error(capsys, cmd, "--seed", "-3")
    assert "--seed" in msg and "non-negative" in msg


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


def test_distributed_without_mpi_is_an_error_not_a_traceback(capsys, monkeypatch):
    from nx_gpumatch.distributed import _comm

    def no_mpi(comm=None):
        raise ImportError("the distributed engine needs mpi4py")

    monkeypatch.setattr(_comm, "get_comm", no_mpi)
    assert "--b-subset" in _error(capsys, "distributed", "--b-subset", "x")
    assert "needs mpi4py" in _error(capsys, "distributed", "-n", "8", "-m", "16")


def test_distributed_refuses_generator_options_with_an_input(capsys, tmp_path):
    path = tmp_path / "g.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.0\n2 3 2.0\n")
    for opt in (["-n", "5"], ["-m", "5"], ["--generate", "random"], ["--rmat-kind", "er"]):
        msg = _error(capsys, "distributed", "-i", str(path), *opt)
        assert f"{opt[0]} acts on a generated graph" in msg
    for opt in (["--communities", "5"], ["--mixing", "0.1"]):
        msg = _error(capsys, "distributed", "-i", str(path), *opt)
        assert f"{opt[0]} acts on --generate planted only" in msg
    assert "--partition random only" in _error(
        capsys, "distributed", "-i", str(path), "--seed", "3"
    )
    from nx_gpumatch.cli import main

    pytest.importorskip("mpi4py")  # the checks above need no MPI; the run does
    assert main(["distributed", "-i", str(path), "--seed", "3", "--partition", "random"]) == 0


def test_distributed_planted_graph(capsys):
    cmd = ["distributed", "louvain", "--generate", "planted", "-n", "4000", "-m", "24000"]
    assert "--communities acts on --generate planted only" in _error(
        capsys, "distributed", "--communities", "3"
    )
    msg = _error(capsys, *cmd, "--communities", "1001")
    assert "needs -n of at least 4 per community, got -n 4000 for 1001 communities" in msg
    assert "--mixing must lie in [0, 1]" in _error(capsys, *cmd, "--mixing", "1.5")
    pytest.importorskip("mpi4py")
    from nx_gpumatch.cli import main

    assert main([*cmd, "--communities", "12", "--mixing", "0.1", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "planted n=4,000 m=24,000, 12 communities, mixing 0.1, seed 2" in out
    # about the planted ones (modularity may split the largest)
    assert 12 <= int(out.split("communities  ")[1].split()[0]) <= 14
    assert float(out.split("modularity   ")[1].split()[0]) > 0.75


def test_b_past_int64_means_no_limit():
    out = run("b-matching", "-n", "50", "-m", "100", "-b", str(10**20))
    assert "valid: True" in out and "0 vertices full" in out


def test_bipartite_reads_mtx_in_any_case_and_refuses_generator_options(capsys, tmp_path):
    import gzip

    from nx_gpumatch.cli import main

    A = sp.coo_array(([1, 1, 1], ([0, 1, 2], [1, 2, 0])), shape=(3, 4))
    scipy.io.mmwrite(str(tmp_path / "a.mtx"), A)
    data = (tmp_path / "a.mtx").read_bytes()
    for name, body in (("A.MTX", data), ("A.MTX.GZ", gzip.compress(data))):
        (tmp_path / name).write_bytes(body)
        assert main(["bipartite", "-i", str(tmp_path / name)]) == 0
        assert "3 rows, 4 columns, 3 edges" in capsys.readouterr().out
    for opt in (["-n", "5"], ["--seed", "3"], ["--generate", "random"]):
        msg = _error(capsys, "bipartite", "--no-progress", "-i", str(tmp_path / "A.MTX"), *opt)
        assert f"{opt[0]} acts on a generated graph" in msg


def test_louvain_max_level_past_sys_maxsize():
    out = run("louvain", "-n", "200", "-m", "800", "--max-level", str(10**20))
    assert "ours by networkx" in out


# ------------------------------------------------------------ Leiden's metric
@pytest.fixture
def planted_csv(tmp_path):
    from nx_gpumatch.generators import planted_partition

    g, _ = planted_partition(300, 6, 4, 1.5, seed=2)
    path = tmp_path / "planted.csv"
    pd.DataFrame({"source": g.edge_src, "target": g.edge_dst, "weight": g.edge_weight}).to_csv(
        path, index=False
    )
    return path


def _cpm_of(edges, labels, gamma):
    """networkx's constant_potts_model, node weights 1, counted by hand."""
    com = dict(zip(labels.vertex, labels.community))
    inner = sum(w for s, t, w in edges.itertuples(index=False) if com[s] == com[t])
    sizes = labels.community.value_counts().to_numpy()
    return inner - gamma * float((sizes * sizes).sum()) / 2.0


@pytest.mark.parametrize("theta", [None, "0.5"])
def test_leiden_metric_cpm_and_theta(planted_csv, tmp_path, theta):
    import nx_gpumatch as gm

    out_csv = tmp_path / "c.csv"
    argv = ["--input", str(planted_csv), "--leiden", "--metric", "cpm", "--resolution", "0.02"]
    argv += ["-o", str(out_csv)] + ([] if theta is None else ["--theta", theta])
    out = run("louvain", *argv)
    assert "Leiden, cpm," in out
    assert out.splitlines()[2].split()[-3:] == ["cpm", "time", "(s)"]  # the per-level column
    result = next(line for line in out.splitlines() if line.startswith("result"))
    assert "modularity" not in result
    reported = float(result.split(", cpm ")[1].split(",")[0])
    edges = pd.read_csv(planted_csv)
    labels = pd.read_csv(out_csv)
    assert reported == pytest.approx(_cpm_of(edges, labels, 0.02), abs=1e-5)
    # the same partition as the library's, with the same theta
    kw = {} if theta is None else {"theta": float(theta)}
    lib = gm.leiden_communities(edges, metric="cpm", resolution=0.02, **kw)
    both = labels.merge(lib, on="vertex", suffixes=("_cli", "_lib"))
    assert len(both) == len(labels) == len(lib)
    assert (both.community_cli == both.community_lib).all()


def test_leiden_theta_reaches_the_engine(planted_csv, tmp_path):
    parts = []
    for theta in ("0.01", "100"):
        out_csv = tmp_path / f"c{theta}.csv"
        run(
            "louvain", "--input", str(planted_csv), "--leiden", "--theta", theta, "-o", str(out_csv)
        )
        parts.append(pd.read_csv(out_csv).community.tolist())
    assert parts[0] != parts[1]  # a refinement this random picks other sub-communities


def test_leiden_metric_modularity_is_the_default(planted_csv):
    default = run("louvain", "--input", str(planted_csv), "--leiden")
    named = run("louvain", "--input", str(planted_csv), "--leiden", "--metric", "modularity")
    assert "Leiden, modularity," in default and "communities, modularity " in default
    result = [next(x for x in o.splitlines() if x.startswith("result")) for o in (default, named)]
    assert (
        result[0].split(" s ")[0].rsplit(",", 1)[0] == result[1].split(" s ")[0].rsplit(",", 1)[0]
    )


def test_leiden_options_need_leiden(capsys):
    for opt in (["--metric", "cpm"], ["--metric", "modularity"], ["--theta", "0.1"]):
        msg = _error(capsys, "louvain", "-n", "10", "-m", "20", *opt)
        assert f"{opt[0]} needs --leiden" in msg
    assert "theta" in _error(
        capsys, "louvain", "--no-progress", "-n", "10", "--leiden", "--theta", "0"
    )
    assert "invalid choice" in _error(capsys, "louvain", "--leiden", "--metric", "CPM")


def test_louvain_help_explains_the_metric():
    from nx_gpumatch.cli import build_parser

    sub = build_parser()._subparsers._group_actions[0].choices["louvain"]
    text = " ".join(sub.format_help().split())
    assert "--metric {modularity,cpm}" in text and "(default: modularity)" in text
    assert "gamma per pair of nodes" in text and "much smaller than 1" in text
    assert "--theta" in text
