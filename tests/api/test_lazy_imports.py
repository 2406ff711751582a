"""Imports inside function bodies, read from the source: in the library (every
module but the tools) a function imports only what the module must not load
at import time, so that the dependencies of a module are at its top.

A lazy import is justified when the imported module is heavy or optional
(Numba, SciPy, pandas, CuPy, MPI, Parquet, the anchors of a comparison), or
is one of the package's modules that loads such a module at its top (the
kernel modules: ``import nx_gpumatch`` stays light), or when importing it at
the top would be a cycle (it imports the importer, through the module-level
imports of the package).
"""

import ast

import pytest

from tests import support
from tests.api.test_layers import TOOLS, package_modules

ROOT = support.ROOT
# Modules the package keeps out of `import nx_gpumatch` (heavy or optional;
# `resource` exists on Unix only).
HEAVY = frozenset(
    "numba llvmlite scipy pandas cupy cupyx cupy_backends cudf cugraph nx_cugraph "
    "networkit igraph leidenalg matching tqdm matplotlib mpi4py pyarrow pytest "
    "hypothesis asv resource".split()
)
# nx_gpumatch.cpu's decorators, which import Numba where a module applies them.
JIT_DECORATORS = frozenset(("njit", "kernel", "twin", "serial_builds"))


def _resolve(node, module, is_package, known):
    """The modules an import statement loads (``from a import b``: ``a`` and,
    where it is a module, ``a.b``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    source = node.module or ""
    if node.level:
        base = module.split(".")
        if not is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    subs = [f"{source}.{alias.name}" for alias in node.names]
    return [source] + [s for s in subs if s in known]


def _compiles(node, loads):
    """Does this import take the CPU engine's compile decorators? A module
    that applies them at its top loads Numba when imported (a kernel module)."""
    return (
        isinstance(node, ast.ImportFrom)
        and loads[0] == "nx_gpumatch.cpu"
        and any(alias.name in JIT_DECORATORS for alias in node.names)
    )


def _walk(node, in_function, found):
    """Append (import node, inside a function) for every import under node."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            _walk(child, True, found)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            found.append((child, in_function))
        else:
            _walk(child, in_function, found)
    return found


def _imports(root):
    """(module-level imports per module, [(module, line, loads)] of the
    imports inside functions)."""
    modules = package_modules(root)
    top, inner = {}, []
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        top[module] = []
        for node, in_function in _walk(ast.parse(path.read_text(), str(path)), False, []):
            loads = _resolve(node, module, is_package, modules)
            if _compiles(node, loads):
                loads.append("numba")
            if in_function:
                inner.append((module, node.lineno, loads))
            else:
                top[module].extend(loads)
    return modules, top, inner


def _closure(module, top):
    """What importing ``module`` loads through module-level imports (parents
    of a submodule included)."""
    seen, todo = set(), [module]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        if m in top:
            todo.extend(top[m])
        parent = m.rpartition(".")[0]
        if parent:
            todo.append(parent)
    return seen


def unjustified(root=ROOT):
    """['path:line importer -> imported'] for the lazy imports of the library
    that none of the reasons above covers."""
    modules, top, inner = _imports(root)
    out = []
    for module, line, loads in inner:
        if any(module == t or module.startswith(t + ".") for t in TOOLS):
            continue
        if not module.startswith("nx_gpumatch"):
            continue
        justified = False
        for name in loads:
            reach = _closure(name, top)
            if any(m.partition(".")[0] in HEAVY for m in reach) or module in reach:
                justified = True
                break
        if not justified:
            out.append(f"{modules[module].relative_to(root)}:{line} {module} -> {loads[0]}")
    return out


def test_lazy_imports_are_justified():
    found = unjustified()
    assert not found, "imports inside functions that belong at the module's top:\n  " + (
        "\n  ".join(found)
    )


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("def f():\n    import json\n", True),
        ("def f():\n    from nx_gpumatch import _constants\n", True),
        ("def f():\n    import scipy.sparse\n", False),
        ("def f():\n    from nx_gpumatch.cpu import matching\n", False),
        ("class A:\n    def f(self):\n        import numpy\n", True),
    ],
    ids=["stdlib", "light-module", "heavy", "kernel-module", "method"],
)
def test_the_checker_finds_a_lazy_import(tmp_path, source, flagged):
    """The checker itself, on a copy of the package with one import added to
    a library module."""
    for top in ("nx_gpumatch", "_nx_gpumatch"):
        for path in (ROOT / top).rglob("*.py"):
            dest = tmp_path / path.relative_to(ROOT)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(path.read_text())
    before = set(unjustified(tmp_path))
    probe = tmp_path / "nx_gpumatch" / "zz_probe.py"
    probe.write_text(source)
    new = set(unjustified(tmp_path)) - before
    assert bool(new) == flagged, new
