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
    pytest.importorskip("networkit")  # without the anchor the command says so first
    with pytest.raises(SystemExit) as exc:
        main(["benchmark", "matching", "--graph", "random,lattice"])
    assert exc.value.code == 2
    assert "lattice" in capsys.readouterr().err


def _graph_folder(path):
    """Three graph files (Matrix Market with weights, an unweighted tab-separated
    list, a CSV with a header and weights) and a file that is not a graph."""
    import numpy as np
    import pandas as pd
    import scipy.io
    import scipy.sparse as sp

    from nx_gpumatch import generators

    g = generators.barabasi_albert(300, 3, seed=1, weights="small_int")
    A = sp.coo_matrix((g.edge_weight, (g.edge_src, g.edge_dst)), shape=(g.num_nodes,) * 2)
    scipy.io.mmwrite(str(path / "ba.mtx"), A)
    g = generators.chung_lu(400, 6, seed=2)
    np.savetxt(path / "cl.tsv", np.c_[g.edge_src, g.edge_dst], fmt="%d", delimiter="\t")
    g = generators.watts_strogatz(300, 4, 0.2, seed=3, weights="uniform")
    frame = {"source": g.edge_src, "target": g.edge_dst, "weight": g.edge_weight}
    pd.DataFrame(frame).to_csv(path / "ws.csv", index=False)
    (path / "notes.md").write_text("# where these graphs come from\n")


def _tables(out):
    """{title: [row lines]} of the realgraphs output."""
    tables, rows = {}, None
    for line in out.splitlines():
        if not line.startswith(" "):
            rows = tables.setdefault(line.split(" (")[0], []) if ": n=" in line else None
        elif rows is not None and not line.lstrip().startswith("family"):
            rows.append(line.strip())
    return tables


def test_realgraphs_benchmark(tmp_path, capsys):
    # Every family on every file, unit and file weights; the results agree with
    # the anchors (timings are not checked).
    pytest.importorskip("networkit")
    pytest.importorskip("igraph")
    _graph_folder(tmp_path)
    assert main(["benchmark", "realgraphs", str(tmp_path), "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "skipped notes.md" in out
    tables = _tables(out)
    names = {t.split(":")[0] + "/" + t.split(", ")[-1] for t in tables}
    assert names == {
        "ba.mtx/unit weights",
        "ba.mtx/the file's weights",
        "cl.tsv/unit weights",
        "ws.csv/unit weights",
        "ws.csv/the file's weights",
    }
    for title, rows in tables.items():
        families = [r.split()[0] for r in rows]
        assert families == ["suitor", "local_max", "b_suitor", "exact"] + ["louvain"] * 4, title
        for r in rows:
            if r.startswith(("suitor", "local_max", "b_suitor")):
                assert r.endswith("same weight"), (title, r)
            if r.startswith("exact"):
                assert r.endswith("same optimum"), (title, r)
            if "Q ours/anchor" in r:
                assert float(r.split()[-1]) > 0.9, (title, r)


def test_realgraphs_without_anchors(tmp_path, capsys, monkeypatch):
    from nx_gpumatch.benchmark import realgraphs

    _graph_folder(tmp_path)
    monkeypatch.setattr(realgraphs, "installed", lambda name: name == "networkx")
    argv = [str(tmp_path), "--repeat", "1", "--weights", "file", "--families", "suitor,louvain"]
    assert realgraphs.main(argv) == 0
    out = capsys.readouterr().out
    assert "anchors not installed (their rows say so): networkit, igraph" in out
    tables = _tables(out)
    assert len(tables) == 3  # cl.tsv has no weights: it runs once, as unit
    assert [t.split(":")[0] for t in tables if t.endswith("unit weights")] == ["cl.tsv"]
    assert "unit weights (the file has none)" in out
    for rows in tables.values():
        assert rows[0].startswith("suitor") and "SuitorMatcher: not installed" in rows[0]
        assert any("igraph: not installed" in r for r in rows)
        assert rows[-1].startswith("louvain") and "networkx louvain_communities" in rows[-1]


def test_realgraphs_bad_folder(tmp_path, capsys):
    from nx_gpumatch.benchmark import realgraphs

    with pytest.raises(SystemExit) as exc:
        realgraphs.main([str(tmp_path / "absent")])
    assert exc.value.code == 2
    assert realgraphs.main([str(tmp_path)]) == 1
    assert "no graph files" in capsys.readouterr().out
