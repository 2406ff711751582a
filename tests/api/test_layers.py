"""The package's import layers, read from the source: every import of every
module counts, at module level and inside functions alike (a lazy import is
still a dependency), and so does ``importlib.import_module("...")`` with a
literal module path.

The layers: ``_nx_gpumatch`` (networkx's view) knows nothing of the package;
the library (engines ``cpu/``, ``gpu/``, ``distributed/``, ``community/``, the
front ends ``algorithms/`` and the top-level modules) knows nothing of the tools
(``cli/``, ``benchmark/``, ``selfcheck``); the GPU engine does not borrow from
the CPU engine; the engines sit below the front ends; the settings module does
not reach into an engine.
"""

import ast

import pytest

from tests import support

ROOT = support.ROOT
TOOLS = ("nx_gpumatch.cli", "nx_gpumatch.benchmark", "nx_gpumatch.selfcheck")
ENGINES = ("nx_gpumatch.cpu", "nx_gpumatch.gpu", "nx_gpumatch.distributed")


def _within(name, *prefixes):
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _is_tool(module):
    return _within(module, *TOOLS)


# (what is wrong, importer -> imported -> bool)
RULES = (
    (
        "the GPU engine imports the CPU engine",
        lambda src, dst: _within(src, "nx_gpumatch.gpu") and _within(dst, "nx_gpumatch.cpu"),
    ),
    (
        "the library imports a tool",
        lambda src, dst: _within(src, "nx_gpumatch") and not _is_tool(src) and _is_tool(dst),
    ),
    (
        "the settings module imports an engine",
        lambda src, dst: src == "nx_gpumatch.config" and _within(dst, *ENGINES),
    ),
    (
        "networkx's backend info imports the package",
        lambda src, dst: _within(src, "_nx_gpumatch") and _within(dst, "nx_gpumatch"),
    ),
    (
        "an engine imports the front ends",
        lambda src, dst: (
            _within(src, "nx_gpumatch.cpu", "nx_gpumatch.gpu")
            and _within(dst, "nx_gpumatch.algorithms")
        ),
    ),
)


def package_modules(root=ROOT):
    """{dotted module name: path} of every module of both packages."""
    out = {}
    for top in ("nx_gpumatch", "_nx_gpumatch"):
        for path in sorted((root / top).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def imports_of(module, path, known):
    """[(imported module, line)] of one module. ``from a import b`` counts as
    ``a.b`` where that is a module of ``known``, else as ``a``."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                out.append((sub if sub in known else source, node.lineno))
        elif isinstance(node, ast.Call) and _is_import_module(node.func) and node.args:
            name = _literal_prefix(node.args[0])
            if name:
                out.append((name, node.lineno))
    return out


def _is_import_module(func):
    return (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id == "import_module"
    )


def _literal_prefix(arg):
    """The module an import_module argument names: the whole string if literal,
    the package before the first placeholder of an f-string."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        return arg.values[0].value.rpartition(".")[0] or None
    return None


def violations(root=ROOT):
    """{(importer, imported): [(rule, 'path:line'), ...]} over the package."""
    modules = package_modules(root)
    found = {}
    for module, path in modules.items():
        for imported, line in imports_of(module, path, modules):
            for rule, broken in RULES:
                if broken(module, imported):
                    where = f"{path.relative_to(root)}:{line}"
                    seen = found.setdefault((module, imported), [])
                    if (rule, where) not in seen:  # `from a import b, c`: once
                        seen.append((rule, where))
    return found


def _report(pairs, found):
    return "\n".join(
        f"  {src} -> {dst}  ({rule}; {where})"
        for src, dst in sorted(pairs)
        for rule, where in found[(src, dst)]
    )


def test_import_layers():
    found = violations()
    assert not found, "imports across the package's layers:\n" + _report(set(found), found)


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("nx_gpumatch.gpu.zz_probe", "def f():\n    from ..cpu import matching\n"),
        ("nx_gpumatch.cpu.zz_probe", "from nx_gpumatch import cli\n"),
        ("nx_gpumatch.zz_probe", "import nx_gpumatch.selfcheck\n"),
        ("nx_gpumatch.gpu.zz_probe", "from nx_gpumatch.algorithms import matching\n"),
        ("nx_gpumatch.config", "def f():\n    from nx_gpumatch.distributed import io\n"),
        ("_nx_gpumatch.zz_probe", "def f():\n    import nx_gpumatch\n"),
        (
            "nx_gpumatch.zz_probe",
            "import importlib\nimportlib.import_module(f'nx_gpumatch.benchmark.{x}')\n",
        ),
    ],
    ids=["gpu-cpu", "cpu-cli", "selfcheck", "gpu-algorithms", "config", "info", "dynamic"],
)
def test_a_forbidden_import_is_found(tmp_path, module, source):
    """The checker itself: a copy of the package with one forbidden import
    added (at module level, in a function, relative, dynamic) fails on it."""
    for top in ("nx_gpumatch", "_nx_gpumatch"):
        for path in (ROOT / top).rglob("*.py"):
            dest = tmp_path / path.relative_to(ROOT)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(path.read_text())
    before = set(violations(tmp_path))
    assert before == set(violations())
    target = tmp_path / (module.replace(".", "/") + ".py")
    target.write_text((target.read_text() if target.exists() else "") + "\n" + source)
    new = set(violations(tmp_path)) - before
    assert [src for src, _ in new] == [module], new
