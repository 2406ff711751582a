"""Weighted matching front end: exact (blossom) and ½-approximate algorithms."""

import os
import random
import sys
import warnings

import numpy as np

from nx_gpumatch._validation import (
    check_bool,
    check_choice,
    check_device,
    check_threads,
    seed_key,
)
from nx_gpumatch.algorithms._compact import compact_graph
from nx_gpumatch.algorithms._convert import (
    convert,
    edge_weights,
    matched_pairs,
    matching_result,
    mate_from_result,
)
from nx_gpumatch.algorithms._engines import engine_for
from nx_gpumatch.algorithms._registry import networkx_algorithm
from nx_gpumatch.config import get_config

APPROXIMATE = ("suitor", "local_max", "greedy", "red_blue")
EXACT = ("blossom",)
ALGORITHMS = EXACT + APPROXIMATE

__all__ = [
    "max_weight_matching",
    "min_weight_matching",
    "maximal_matching",
    "is_matching",
    "matching_weight",
]


def _caller_level():
    """The ``stacklevel`` that points a warning from the function calling this
    at the user's line: the first frame outside this package and networkx,
    whose dispatch adds frames of its own between them."""
    frame = sys._getframe(2)  # the caller's caller: stacklevel 2
    level = 2
    while frame is not None:
        path = frame.f_code.co_filename
        if not any(p in path for p in _OWN_PATHS):
            return level
        frame = frame.f_back
        level += 1
    return 2


_OWN_PATHS = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,  # nx_gpumatch
    f"{os.sep}networkx{os.sep}",
    "<class 'networkx.",  # functions networkx's argmap compiles
)


def check_options(
    algorithm, *, maxcardinality=False, device=None, seed=None, select=None, threads=None
):
    """The engine options of a matching call, checked: an option that would have no
    effect is an error, not silently ignored. Returns (algorithm, select)."""
    if algorithm is None:
        algorithm = "blossom"
    if algorithm not in ALGORITHMS:
        raise ValueError(
            f"algorithm must be one of {ALGORITHMS} (or None for exact), got {algorithm!r}"
        )
    if algorithm != "red_blue" and (seed is not None or select is not None):
        # A warning, not an error: code that passes one seed to every algorithm keeps working.
        warnings.warn(
            f"seed and select act on algorithm='red_blue' only; {algorithm!r} is "
            "deterministic and ignores them",
            UserWarning,
            stacklevel=_caller_level(),
        )
    if select is None:
        select = "weighted"
    check_choice(select, "select", ("weighted", "random"))
    if algorithm in APPROXIMATE and maxcardinality:
        raise ValueError(f"maxcardinality=True needs the exact algorithm, not {algorithm!r}")
    check_threads(threads)
    if algorithm == "blossom":
        wanted = get_config().device if device is None else device
        if wanted == "gpu":
            raise ValueError(
                "the exact (blossom) algorithm has no GPU engine; use device='cpu' or 'auto', "
                "or an approximate algorithm ('suitor', 'local_max', 'greedy', 'red_blue')"
            )
        check_device(wanted)
    return algorithm, select


def mate_array(
    graph,
    algorithm,
    *,
    maxcardinality=False,
    device=None,
    seed=None,
    select=None,
    threads=None,
):
    """Run a matching algorithm on a :class:`Graph`; returns the mate array."""
    algorithm, select = check_options(
        algorithm,
        maxcardinality=maxcardinality,
        device=device,
        seed=seed,
        select=select,
        threads=threads,
    )
    return _run(graph, algorithm, maxcardinality, device, seed, select, threads)


def _run(graph, algorithm, maxcardinality, device, seed, select, threads):
    """mate_array after check_options."""
    if algorithm != "blossom":
        # red_blue draws per vertex id: its result depends on the numbering.
        small, c = compact_graph(graph, order_only=algorithm != "red_blue")
        if c is not None:
            mate = _run(small, algorithm, maxcardinality, device, seed, select, threads)
            return c.spread_partners(mate, c)
    if algorithm == "blossom":
        from nx_gpumatch import cpu

        with cpu.run("exact", graph.num_edges, threads):
            return _exact(graph, maxcardinality)
    engine, engine_mod = engine_for("matching", device, graph.num_edges)
    # Only red_blue draws from the seed; None: a fresh random one per call.
    key = seed_key(seed) if algorithm == "red_blue" else 0
    if key is None:
        key = random.getrandbits(64)
    if engine == "gpu":
        return engine_mod.run(graph, algorithm, seed=key, select=select)
    from nx_gpumatch import cpu

    with cpu.run("matching", graph.num_edges, threads):
        return engine_mod.run(graph, algorithm, seed=key, select=select)


def _exact(graph, maxcardinality):
    """Exact maximum-weight matching (weighted blossom method, Numba)."""
    from nx_gpumatch.cpu import blossom

    small, c = compact_graph(graph)
    if c is not None:
        return c.spread_partners(_exact(small, maxcardinality), c)

    return blossom.max_weight_matching(
        graph.num_nodes,
        graph.indptr,
        graph.indices,
        graph.arc_edge,
        graph.edge_src,
        graph.edge_dst,
        graph.edge_weight,
        maxcardinality=bool(maxcardinality),
    )


def max_weight_matching(
    G,
    maxcardinality=False,
    weight="weight",
    *,
    algorithm=None,
    device=None,
    seed=None,
    select=None,
    threads=None,
    source="source",
    target="target",
):
    """Maximum-weight matching, exact or ½-approximate.

    The first three parameters are networkx's, in networkx's order.

    Parameters
    ----------
    G : networkx.Graph, pandas/cuDF DataFrame edge list, nx_gpumatch.Graph,
        scipy sparse matrix or Matrix Market path
    maxcardinality : bool
        Exact only: maximum weight among maximum-cardinality matchings.
    weight : str or None
        Edge attribute / column holding the weights (missing weights are 1).
    algorithm : None, "blossom", "suitor", "local_max", "greedy" or "red_blue"
        None and "blossom" are exact. "suitor", "local_max" and "greedy" return the
        same matching (the greedy matching under the package's edge order), a
        ½-approximation that uses only positive-weight edges. "red_blue" is
        randomized (``seed``, ``select`` = "weighted" or "random") and maximal.
    device : "auto", "cpu", "gpu" or None (the config's)
        The exact algorithm has no GPU engine: "gpu" raises ValueError for it.
    seed, select : red_blue only (the other algorithms warn that they ignore them)
    threads : int or None
        Numba threads (None: the config's).
    source, target : column names of a DataFrame edge list

    Returns
    -------
    set of (u, v) label pairs for a networkx graph; for a DataFrame, the rows of
    the matched edges (the caller's columns, orientation and dtypes; the same
    library); otherwise an int64 ``mate`` array (mate[v] = partner, -1 = unmatched).
    """
    # networkx's own function takes any truthy value; this one asks for a bool.
    maxcardinality = check_bool(maxcardinality, "maxcardinality")
    algorithm, select = check_options(
        algorithm,
        maxcardinality=maxcardinality,
        device=device,
        seed=seed,
        select=select,
        threads=threads,
    )
    inp = convert(G, weight=weight, source=source, target=target)
    mate = _run(inp.graph, algorithm, maxcardinality, device, seed, select, threads)
    return matching_result(inp.graph, inp.kind, mate, weight=weight, inp=inp)


def _min_weight_mate(graph):
    # networkx's transformation: w' = (1 + max w) - w over all edges (self-loops
    # included), then the heaviest maximum-cardinality matching. The shift does not
    # change the answer; reproducing it keeps float rounding (and ties) the same.
    if graph.num_edges == 0:
        return np.full(graph.num_nodes, -1, np.int64)
    top = float(graph.edge_weight.max())
    loops = graph.loop_weight[graph.has_loop]
    if loops.size:
        top = max(top, float(loops.max()))
    return _exact(graph.with_weights((top + 1.0) - graph.edge_weight), True)


def min_weight_matching(
    G, weight="weight", *, device=None, threads=None, source="source", target="target"
):
    """Minimum-weight maximum-cardinality matching (exact), as networkx defines it.

    Result types as for :func:`max_weight_matching`; ``device="gpu"`` raises
    ValueError (the exact algorithm has no GPU engine)."""
    check_options(None, device=device, threads=threads)
    inp = convert(G, weight=weight, source=source, target=target)
    from nx_gpumatch import cpu

    with cpu.run("exact", inp.graph.num_edges, threads):
        mate = _min_weight_mate(inp.graph)
    return matching_result(inp.graph, inp.kind, mate, weight=weight, inp=inp)


def maximal_matching(G, *, device=None, threads=None, source="source", target="target"):
    """A maximal matching: the greedy matching with all edges weighing 1, i.e. edges
    taken in (min id, max id) order. Accepts the inputs of :func:`max_weight_matching`
    (weights are ignored; a DataFrame result has the source and target columns).
    Greedy on one weight is a single pass over the rows on the CPU (no ranking),
    Suitor on the GPU."""
    check_options("greedy", device=device, threads=threads)
    inp = convert(G, weight=None, source=source, target=target)
    mate = mate_array(inp.graph.unweighted(), "greedy", device=device, threads=threads)
    return matching_result(inp.graph, inp.kind, mate, weight=None, inp=inp)


def is_matching(G, result, *, maximal=False, weight="weight", source="source", target="target"):
    """True if ``result`` (in any of the result types) is a matching of G (and
    maximal, if asked): every pair an edge of G, no vertex twice. A result that
    names a node or vertex id not in G, or has the wrong shape, gives False."""
    maximal = check_bool(maximal, "maximal")
    inp = convert(G, weight=None, source=source, target=target)
    try:
        mate = mate_from_result(inp, result)
    except ValueError:
        return False
    if maximal:
        graph = inp.graph
        free = mate < 0
        rows = np.repeat(np.arange(graph.num_nodes), np.diff(graph.indptr))
        if np.any(free[rows] & free[graph.indices]):
            return False
    return True


def matching_weight(G, result, weight="weight", source="source", target="target"):
    """Total weight of a matching given in any of the result types.

    Raises ValueError naming the problem when ``result`` is not a matching of G
    (a pair that is not an edge, an unknown node, a vertex matched twice)."""
    inp = convert(G, weight=weight, source=source, target=target)
    mate = mate_from_result(inp, result)
    u, v = matched_pairs(mate)
    return float(edge_weights(inp.graph, u, v).sum())


# ------------------------------------------------------- networkx dispatch
# These receive the Graph networkx converted (weights already taken from the
# ``weight`` attribute) and return networkx's result types.


@networkx_algorithm(
    "max_weight_matching",
    docs=(
        "Exact (Numba weighted blossom) unless an approximate ``algorithm`` is named: 'suitor', "
        "'local_max', 'greedy' (all equal the greedy matching) or 'red_blue' (randomized, "
        "maximal)."
    ),
    parameters={
        "algorithm : str, optional": (
            "None or 'blossom' (exact), 'suitor', 'local_max', 'greedy', 'red_blue'."
        ),
        "device : str, optional": (
            "'auto', 'cpu' or 'gpu'; default from the config. The exact algorithm has no GPU "
            "engine."
        ),
        "seed : int or random.Random, optional": "'red_blue' only.",
        "select : str, optional": "'red_blue' only: 'weighted' (default) or 'random'.",
    },
)
def _nx_max_weight_matching(
    G,
    maxcardinality=False,
    weight="weight",
    *,
    algorithm=None,
    device=None,
    seed=None,
    select=None,
):
    if weight is None:
        G = G.unweighted()  # networkx may hand over a weighted conversion it cached
    mate = mate_array(
        G, algorithm, maxcardinality=maxcardinality, device=device, seed=seed, select=select
    )
    return matching_result(G, "networkx", mate)


@networkx_algorithm(
    "maximal_matching",
    docs="Greedy matching under the package's edge order (Suitor on the CPU).",
    parameters={"device : str, optional": "'auto', 'cpu' or 'gpu'; default from the config."},
)
def _nx_maximal_matching(G, *, device=None):
    return matching_result(G, "networkx", mate_array(G.unweighted(), "suitor", device=device))


@networkx_algorithm(
    "min_weight_matching",
    docs="Exact: the Numba weighted blossom method on networkx's transformed weights.",
    parameters={
        "device : str, optional": (
            "'auto' or 'cpu'; 'gpu' raises ValueError (no GPU engine for exact matching)."
        ),
    },
)
def _nx_min_weight_matching(G, weight="weight", *, device=None):
    check_options(None, device=device)  # "gpu" (keyword or config): exact has no GPU engine
    if G.num_edges == 0:
        return set()
    if weight is None:
        G = G.unweighted()
    from nx_gpumatch import cpu

    with cpu.run("exact", G.num_edges, None):  # interpreted while small, as every call
        mate = _min_weight_mate(G)
    return matching_result(G, "networkx", mate)
