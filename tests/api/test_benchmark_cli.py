"""The benchmark command and its figure (from stored measurements: no timing
runs in tests)."""

import json

import pytest

from nx_gpumatch.benchmark import scaling
from nx_gpumatch.cli import main

RESULT = {
    "meta": {"threads": 2, "repeat": 3},
    "rows": [
        {"family": "suitor", "impl": "gpumatch", "engine": "cpu", "n": 10, "m": 80, "seconds": 0.5},
        {
            "family": "suitor",
            "impl": "NetworKit SuitorMatcher",
            "engine": "anchor",
            "n": 10,
            "m": 80,
            "seconds": 1.0,
        },
        {
            "family": "suitor",
            "impl": "gpumatch",
            "engine": "cpu",
            "n": 40,
            "m": 320,
            "seconds": 1.0,
        },
        {
            "family": "suitor",
            "impl": "NetworKit SuitorMatcher",
            "engine": "anchor",
            "n": 40,
            "m": 320,
            "seconds": 4.0,
        },
        {"family": "exact", "impl": "gpumatch", "engine": "cpu", "n": 10, "m": 50, "seconds": 0.01},
        {
            "family": "exact",
            "impl": "networkx max_weight_matching",
            "engine": "anchor",
            "n": 10,
            "m": 50,
            "seconds": 2.0,
        },
    ],
}


def test_speedups():
    rows = scaling.speedups(RESULT)
    assert [(r[0], r[2], r[6]) for r in rows] == [
        ("suitor", 10, 2.0),
        ("suitor", 40, 4.0),
        ("exact", 10, 200.0),
    ]


def test_plot_from_json_through_the_cli(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    src = tmp_path / "scaling.json"
    src.write_text(json.dumps(RESULT))
    fig = tmp_path / "fig.png"
    assert main(["benchmark", "scaling", "--from-json", str(src), "--plot", str(fig)]) == 0
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = capsys.readouterr().out
    assert "4.0x" in out and "200.0x" in out


def test_sizes():
    assert scaling._sizes(160_000, 10_000) == [10_000, 40_000, 160_000]
    assert scaling._sizes(50_000, 10_000) == [10_000, 40_000, 50_000]
    assert scaling._sizes(10_000, 10_000) == [10_000]


def test_unknown_benchmark_is_a_usage_error(capsys):
    assert main(["benchmark", "quantum"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "quantum" in err[0]


def test_matching_benchmark_graph_kinds(capsys):
    # One table per (graph, weights) pair, each with the same matching as NetworKit's.
    pytest.importorskip("networkit")
    argv = ["--n", "400", "--m", "1600", "--repeat", "1", "--suitor-only"]
    argv += ["--graph", "chung_lu,watts_strogatz", "--weights", "unit,small_int"]
    assert main(["benchmark", "matching", *argv]) == 0
    out = capsys.readouterr().out
    titles = [line for line in out.splitlines() if " graph n=400 " in line]
    pairs = [(t.split()[0], t.split(", ")[1]) for t in titles]
    assert pairs == [
        (kind, f"{weights} weights")
        for kind in ("chung_lu", "watts_strogatz")
        for weights in ("unit", "small_int")
    ]
    for line in out.splitlines():
        if line.startswith("weight "):
            ours, theirs = line.split()[1], line.split()[-1]
            assert ours == theirs


def test_matching_benchmark_unknown_graph_kind(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["benchmark", "matching", "--graph", "random,lattice"])
    assert exc.value.code == 2
    assert "lattice" in capsys.readouterr().err
