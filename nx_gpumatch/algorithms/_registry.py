"""The networkx functions this backend implements, each registered next to its
definition with :func:`networkx_algorithm`.

networkx reads the backend's description (``_nx_gpumatch.get_info``) at the end
of its own import, before this package may be imported, so the names, notes and
extra parameters it needs are written out to ``_nx_gpumatch/_info.py`` from the
registrations here::

    python -m nx_gpumatch.algorithms --write

and a test fails when that file and the registrations differ.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
from dataclasses import dataclass

import _nx_gpumatch

__all__ = ["REGISTRY", "Dispatched", "dispatched", "networkx_algorithm", "networkx_tests_xfail"]


@dataclass(frozen=True)
class Dispatched:
    """One dispatched networkx function.

    ``func`` takes networkx's arguments (the graph converted to a
    :class:`~nx_gpumatch.Graph`) plus the backend's keywords.
    ``can_run``: None, or a function of the same parameters as ``func``
    returning True or a sentence saying why networkx should run the call.
    ``fallback``: whether networkx has an implementation of its own to hand a
    refused call to (a bool, or a function of no arguments answering it);
    where it has none, a refusal raises ValueError with the reason.
    ``parallel_edges``: what the function makes of a MultiGraph's parallel
    edges ("sum"; None: it takes no multigraphs), see Graph.from_networkx.
    ``docs``, ``parameters``: the notes networkx adds to its docs.
    """

    name: str
    func: object
    can_run: object
    fallback: object
    parallel_edges: str | None
    docs: str
    parameters: dict
    signature: inspect.Signature

    @property
    def module(self):
        return self.func.__module__

    def has_fallback(self):
        return self.fallback() if callable(self.fallback) else bool(self.fallback)


# networkx name -> Dispatched, in registration order.
REGISTRY = {}
# (test file name, label, {test name: reason}) of networkx tests that cannot pass here.
NX_TESTS_XFAIL = []


def networkx_algorithm(
    name, *, docs, parameters=None, can_run=None, fallback=True, parallel_edges=None
):
    """Register the decorated function as the backend's ``name`` (see :class:`Dispatched`)."""

    def register(func):
        if name in REGISTRY:
            raise ValueError(f"{name} is registered twice")
        if can_run is not None:
            own = list(inspect.signature(func).parameters)
            theirs = list(inspect.signature(can_run).parameters)
            if own != theirs:
                raise TypeError(f"can_run of {name} takes {theirs}, the function {own}")
        REGISTRY[name] = Dispatched(
            name,
            func,
            can_run,
            fallback,
            parallel_edges,
            docs,
            dict(parameters or {}),
            inspect.signature(func),
        )
        return func

    return register


def networkx_tests_xfail(filename, label, reasons):
    """Mark the tests ``reasons`` names in networkx's file ``filename`` as
    expected to fail here (by networkx's suite run with this backend), each
    with its reason. Returns the entry."""
    entry = (filename, label, dict(reasons))
    NX_TESTS_XFAIL.append(entry)
    return entry


def dispatched():
    """REGISTRY, with every module that registers into it imported."""
    from nx_gpumatch.algorithms import matching  # noqa: F401
    from nx_gpumatch.algorithms.bipartite import matching as _bipartite  # noqa: F401
    from nx_gpumatch.algorithms.community import leiden, louvain  # noqa: F401

    return REGISTRY


# ---------------------------------------------------------- the info file
INFO_PATH = ("_nx_gpumatch", "_info.py")

_HEADER = '''"""The functions networkx dispatches to gpumatch, with the notes networkx adds
to their docs. Generated from the registrations in nx_gpumatch.algorithms
(``python -m nx_gpumatch.algorithms --write``); do not edit.
"""

'''


def info_text():
    """The text of ``_nx_gpumatch/_info.py`` for the registrations."""
    functions = {}
    for name, entry in sorted(dispatched().items()):
        info = {"additional_docs": entry.docs}
        if entry.parameters:
            info["additional_parameters"] = entry.parameters
        functions[name] = info
    return f"{_HEADER}FUNCTIONS = {_literal(functions, 0)}\n"


def _literal(value, depth):
    """``value`` (dicts of strings) as Python source in the formatter's style:
    one item a line, trailing commas, double quotes."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    pad = "    " * (depth + 1)
    items = "".join(
        f"{pad}{_literal(k, depth + 1)}: {_literal(v, depth + 1)},\n" for k, v in value.items()
    )
    return "{\n" + items + "    " * depth + "}"


def info_path():
    return os.path.join(os.path.dirname(_nx_gpumatch.__file__), INFO_PATH[1])


def main(argv=None):
    parser = argparse.ArgumentParser(description="Write or check _nx_gpumatch/_info.py.")
    parser.add_argument("--write", action="store_true", help="rewrite the file")
    args = parser.parse_args(argv)
    text = info_text()
    path = info_path()
    with open(path, encoding="utf-8") as f:
        same = f.read() == text
    if args.write and not same:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {path}")
        return 0
    if not same:
        print(f"{path} differs from the registrations; run with --write")
        return 1
    return 0
