"""Every Python example in README.md runs as written."""

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
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
