"""Every Python example in README.md runs as written."""

import re

import pytest

from tests.support import ROOT

README = ROOT / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code, capsys, tmp_path, monkeypatch):
    import networkx as nx

    monkeypatch.chdir(tmp_path)  # examples that write files (res.write) write them here

    threads = nx.config.backends.gpumatch.threads
    try:
        exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})
    finally:
        nx.config.backends.gpumatch.threads = threads


TEXT = README.read_text(encoding="utf-8")


def test_readme_installs_from_the_checkout():
    # the package is installed from this repository: a bare "nx-gpumatch[...]"
    # names a package index entry the reader may not find
    for line in re.findall(r"pip install [^\n`]*", TEXT):
        assert re.match(r'pip install "?\.', line), line


def test_readme_figures_exist():
    root = README.parent
    for path in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", TEXT):
        assert (root / path).is_file(), path
    if re.search(r"README\s+figure|figure\s+below", TEXT):
        assert re.search(r"!\[[^\]]*\]\(", TEXT), "the README promises a figure it does not show"


def test_readme_leiden_errors_are_the_ones_raised():
    import networkx as nx

    import nx_gpumatch as gm

    section = TEXT[TEXT.index("### Leiden communities") : TEXT.index("### Bipartite matching")]
    with pytest.raises(nx.NetworkXNotImplemented):
        gm.leiden_communities(nx.gn_graph(20, seed=1), seed=1)
    assert "NetworkXNotImplemented" in section
    assert not re.search(r"directed graphs,?\s[^.]*raise a `ValueError`", section)
