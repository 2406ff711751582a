"""The command line's options: every one documented, --version, --no-progress on
every subcommand, the networkx comparison opt-in for files, and the benchmark
command's check for its extra."""

import argparse
import os
import subprocess
import sys

import pandas as pd
import pytest

from nx_gpumatch.cli import build_parser, main


def _subparsers():
    parser = build_parser()
    return parser, parser._subparsers._group_actions[0].choices


def test_every_option_and_subcommand_has_help():
    parser, subs = _subparsers()
    missing = []
    for name, p in [("nx-gpumatch", parser), *subs.items()]:
        if not p.description:
            missing.append(f"{name} (description)")
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert not missing, f"options without help: {missing}"


def test_leiden_help_names_both_engines():
    _, subs = _subparsers()
    (leiden,) = [a for a in subs["louvain"]._actions if "--leiden" in a.option_strings]
    assert "GPU" in leiden.help and "CPU" in leiden.help


def test_no_progress_on_every_subcommand():
    parser, subs = _subparsers()
    for name in subs:
        argv = [name, "--no-progress"] + (["scaling"] if name == "benchmark" else [])
        assert parser.parse_args(argv).no_progress is True, name


def test_version(capsys):
    from nx_gpumatch import __version__

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"nx-gpumatch {__version__}"


@pytest.fixture
def small_csv(tmp_path):
    from nx_gpumatch import generators

    g = generators.random_graph(200, 600, seed=3)
    path = tmp_path / "g.csv"
    pd.DataFrame({"source": g.edge_src, "target": g.edge_dst, "weight": g.edge_weight}).to_csv(
        path, index=False
    )
    return str(path)


def test_networkx_comparison_is_opt_in_for_files(capsys, small_csv):
    # networkx's exact matching is pure Python: minutes on a 20,000-edge file
    assert main(["--no-progress", "--input", small_csv]) == 0
    out = capsys.readouterr().out
    assert "exact comparison skipped: pass --compare" in out and "weight ratio" not in out
    assert main(["--no-progress", "--input", small_csv, "--compare"]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.startswith("comparison")]
    # the speed-up names what is compared: a ½-approximation, warm and on its first call
    assert "½-approximate" in line and "exact" in line
    assert "warm" in line and "first call" in line


def test_generated_graphs_compare_within_the_bound(capsys):
    assert main(["--no-progress", "-n", "100", "-m", "300"]) == 0
    assert "weight ratio" in capsys.readouterr().out
    assert main(["--no-progress", "-n", "100", "-m", "300", "--no-compare"]) == 0
    assert "skipped: --no-compare" in capsys.readouterr().out
    assert main(["--no-progress", "-n", "3000", "-m", "6000"]) == 0
    assert "> --compare-max-edges 5,000" in capsys.readouterr().out


BENCH = """
import sys
sys.modules[{name!r}] = None  # as if the 'bench' extra were not installed
{call}
"""


@pytest.mark.parametrize(
    "name, call",
    [
        (
            "networkit",
            "from nx_gpumatch.cli import main; sys.exit(main(['benchmark', 'matching']))",
        ),
        (
            "igraph",
            "from nx_gpumatch.benchmark.__main__ import main; sys.exit(main(['bipartite']))",
        ),
        (
            "matplotlib",
            "from nx_gpumatch.cli import main; "
            "sys.exit(main(['benchmark', 'scaling', '--plot', 'x.png']))",
        ),
    ],
)
def test_benchmark_without_the_bench_extra_stops_before_measuring(tmp_path, name, call):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run(
        [sys.executable, "-c", BENCH.format(name=name, call=call)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )
    assert out.returncode == 2, out.stderr
    assert out.stdout == ""  # nothing measured
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("error: ") and name in line
    assert 'pip install "nx-gpumatch[bench]"' in line and 'pip install ".[bench]"' in line
