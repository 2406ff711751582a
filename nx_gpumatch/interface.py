"""networkx dispatch interface of the ``gpumatch`` backend.

networkx converts graph arguments with :meth:`BackendInterface.convert_from_nx`
(caching the :class:`Graph` in ``G.__networkx_cache__``), then calls the method
of the same name here. ``_nx_gpumatch.FUNCTIONS`` names each dispatched function
and the ``algorithms/<problem>.py`` module whose ``DISPATCH`` dict implements
it; they become methods below.
In networkx's test mode results pass through :meth:`convert_to_nx`; they are
plain Python objects already.
"""

import importlib

from _nx_gpumatch import FUNCTIONS
from nx_gpumatch.graph import Graph

# Modules under nx_gpumatch.algorithms that dispatch networkx functions.
_PROBLEMS = tuple(dict.fromkeys(info["module"] for info in FUNCTIONS.values()))


class BackendInterface:
    @staticmethod
    def convert_from_nx(
        G,
        edge_attrs=None,
        node_attrs=None,
        preserve_edge_attrs=False,
        preserve_node_attrs=False,
        preserve_graph_attrs=False,
        name=None,
        graph_name=None,
    ):
        weight, default = None, 1
        if isinstance(edge_attrs, dict) and len(edge_attrs) == 1:
            ((weight, default),) = edge_attrs.items()
            default = 1 if default is None else default
        elif preserve_edge_attrs:
            weight = "weight"
        return Graph.from_networkx(G, weight=weight, default=default)

    @staticmethod
    def convert_to_nx(obj, *, name=None):
        if isinstance(obj, Graph):
            return obj.to_networkx()
        return obj

    @staticmethod
    def can_run(name, args, kwargs):
        """A module may refuse inputs it cannot handle (networkx then falls back)
        with ``can_run(name, args, kwargs)`` returning a reason string."""
        check = _CAN_RUN.get(name)
        return True if check is None else check(name, args, kwargs)

    @staticmethod
    def should_run(name, args, kwargs):
        return True

    @staticmethod
    def on_start_tests(items):
        """Mark networkx tests that cannot pass here, each with its written reason."""
        for problem in _PROBLEMS:
            mod = importlib.import_module(f"nx_gpumatch.algorithms.{problem}")
            hook = getattr(mod, "on_start_tests", None)
            if hook is not None:
                hook(items)


_CAN_RUN = {}
for _name, _info in FUNCTIONS.items():
    _mod = importlib.import_module(f"nx_gpumatch.algorithms.{_info['module']}")
    setattr(BackendInterface, _name, staticmethod(_mod.DISPATCH[_name]))
    if hasattr(_mod, "can_run"):
        _CAN_RUN[_name] = _mod.can_run
del _name, _info, _mod
