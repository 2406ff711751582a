"""networkx dispatch interface of the ``gpumatch`` backend.

networkx converts graph arguments with :meth:`BackendInterface.convert_from_nx`
(caching the :class:`Graph` in ``G.__networkx_cache__``), calls the method of the
same name here, and in its test mode passes results through
:meth:`convert_to_nx`. Results are plain Python objects already.
"""

import networkx as nx

from nx_gpumatch.algorithms import matching as _matching
from nx_gpumatch.graph import Graph


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
        return True

    @staticmethod
    def should_run(name, args, kwargs):
        return True

    @staticmethod
    def on_start_tests(items):
        """Mark networkx tests that cannot pass here, each with its reason."""


def _result(graph, mate):
    return _matching.matching_result(graph, "networkx", mate)


def max_weight_matching(G, maxcardinality=False, weight="weight", *, algorithm=None, device=None, seed=None, select="weighted"):
    mate = _matching.mate_array(G, algorithm, maxcardinality=maxcardinality, device=device, seed=seed, select=select)
    return _result(G, mate)


def maximal_matching(G):
    return _result(G, _matching.mate_array(_unit(G), "suitor"))


def _unit(G):
    """The same graph with every weight 1 (maximal matching ignores weights)."""
    import numpy as np

    if (G.edge_weight == 1).all():
        return G
    u = G._cache.get("unit")
    if u is None:
        u = Graph(G.num_nodes, G.edge_src, G.edge_dst, np.ones(G.num_edges), G.nodes)
        G._cache["unit"] = u
    return u


for _f in (max_weight_matching, maximal_matching):
    setattr(BackendInterface, _f.__name__, staticmethod(_f))
del _f
