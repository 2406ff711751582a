"""Packaging: the version is written once, as ``nx_gpumatch.__version__``
(pyproject reads it from there statically, without importing the package, and an
installed copy reports the same); the ``test`` extra stays apart from ``gpu`` and
``mpi``, and ``dev``, the whole suite, is what README and CI install."""

import ast
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

import nx_gpumatch
from tests import support

ROOT = support.ROOT
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_pyproject_reads_the_package_version():
    pyproject = PYPROJECT
    assert "version" not in pyproject["project"]
    assert "version" in pyproject["project"]["dynamic"]
    attr = pyproject["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    module, _, name = attr.rpartition(".")
    assert (module, name) == ("nx_gpumatch", "__version__")


def test_version_is_a_literal():
    """setuptools reads a literal assignment without importing the package
    (whose import needs networkx, absent from the build environment)."""
    tree = ast.parse((ROOT / "nx_gpumatch" / "__init__.py").read_text())
    literals = [
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and [getattr(t, "id", None) for t in node.targets] == ["__version__"]
        and isinstance(node.value, ast.Constant)
    ]
    assert literals == [nx_gpumatch.__version__]
    assert all(part.isdigit() for part in nx_gpumatch.__version__.split(".")[:3])


def test_installed_metadata_agrees():
    try:
        dist = metadata.distribution("nx-gpumatch")
    except metadata.PackageNotFoundError:
        pytest.skip("nx-gpumatch is not installed")
    installed = Path(dist.locate_file("nx_gpumatch/__init__.py")).resolve()
    if installed != Path(nx_gpumatch.__file__).resolve():
        pytest.skip("the imported package is a checkout, not the installed copy")
    assert dist.version == nx_gpumatch.__version__


def _names(requirements):
    return {re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower() for r in requirements}


def test_test_extra_is_apart_from_gpu_and_mpi():
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert not _names(extras["test"]) & (_names(extras["gpu"]) | _names(extras["mpi"]))
    (dev,) = extras["dev"]
    name, _, rest = dev.partition("[")
    assert name == PYPROJECT["project"]["name"]
    assert set(rest.rstrip("]").split(",")) == {"test", "gpu", "mpi"}


def test_readme_and_ci_install_the_whole_suite():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install ".[dev]" && pytest' in readme
    installs = re.findall(r'pip install (?:--quiet )?"\.\[(\w+)\]"', ci)
    assert installs and set(installs) == {"dev"}


def test_every_package_ships():
    """pyproject lists the packages by hand (the kernels need their own
    package-dir), so a new subpackage left out of the list would be missing
    from the wheel while every test run from the checkout still passes."""
    found = {
        path.parent.relative_to(ROOT).as_posix().replace("/", ".")
        for top in ("nx_gpumatch", "_nx_gpumatch")
        for path in (ROOT / top).rglob("__init__.py")
    }
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert found <= listed, f"missing from pyproject's packages: {sorted(found - listed)}"
