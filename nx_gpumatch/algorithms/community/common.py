"""What the Louvain and Leiden front ends share: the arrays an engine clusters,
the vertex order a seed gives, the wrappers of an engine's level generator
(thread count, progress display, compacted graphs), networkx's result types,
and the inputs both hand to networkx instead of clustering them."""

from __future__ import annotations

import decimal
import fractions
import math
import sys

import numpy as np

from nx_gpumatch._validation import check_finite, check_max_level, seed_key

# A MultiGraph clusters as the Graph with each pair's parallel edges summed
# (networkx's Louvain and Leiden convert it so); see Graph.from_networkx.
PARALLEL_EDGES = "sum"

__all__ = [
    "PARALLEL_EDGES",
    "check_params",
    "communities",
    "final_labels",
    "partitions",
    "refusal",
    "result",
    "spread_levels",
    "vertex_order",
    "weighted_arrays",
    "with_progress",
    "with_threads",
]

# Totals of weight (arcs both ways plus self-loops twice) the engines take as
# they are: community degrees get squared, so totals far outside this range
# would overflow or underflow (see weighted_arrays).
TOTAL_RANGE = (2.0**-400, 2.0**400)


def check_params(resolution, threshold, max_level=None):
    """The checks of Louvain's (and Leiden's) numeric parameters."""
    check_finite(resolution, "resolution")
    check_finite(threshold, "threshold")
    check_max_level(max_level)


def _total_weight(w, loop):
    with np.errstate(over="ignore"):
        return float(w.sum()) + 2.0 * float(loop.sum())


def weighted_arrays(graph, weighted):
    """(indptr, indices, arc weights, self-loop weights, shift) of the graph
    to cluster: its weights multiplied by 2**shift.

    ``shift`` is 0 unless the total weight lies outside TOTAL_RANGE; then
    it brings the largest weight into [0.5, 1). Modularity is the same for
    any scale, and a power of two scales every sum, product and quotient of
    the engines exactly, so every comparison falls as it would without
    overflow (unscaled, weights near 1e150 overflow the squared community
    degrees and weights near 1e-180 underflow them to zero). Quantities in
    units of weight (Leiden's theta) scale with them."""
    if not weighted:
        g = graph.unweighted()  # networkx counts every edge and self-loop as 1
        return g.indptr, g.indices, g.weights, g.loop_weight, 0
    w, loop = graph.weights, graph.loop_weight
    total = graph.cached("total_weight", lambda: _total_weight(w, loop))
    if total == 0.0 or TOTAL_RANGE[0] <= total <= TOTAL_RANGE[1]:
        return graph.indptr, graph.indices, w, loop, 0
    shift = -math.frexp(max(float(w.max(initial=0.0)), float(loop.max(initial=0.0))))[1]
    return graph.indptr, graph.indices, np.ldexp(w, shift), np.ldexp(loop, shift), shift


def vertex_order(n, key):
    """The vertex order of a seed's key (:func:`nx_gpumatch._validation.seed_key`):
    None for the graph's own, else a seeded permutation."""
    return None if key is None else np.random.default_rng(key).permutation(n).astype(np.int32)


def seeded_order(n, seed):
    """The vertex order of ``seed`` (an int means ``random.Random(seed)``, what
    networkx's dispatcher passes for it, so both entry points agree)."""
    return vertex_order(n, seed_key(seed))


# ------------------------------------------------------- level generators
def spread_levels(gen, c):
    """The levels of a compacted graph's run (see :func:`compact_graph`) as
    those of the whole graph: every vertex left out is a singleton community,
    numbered after the others (modularity is the same: they add nothing)."""
    extra = c.n - c.size
    for labels, info in gen:
        info = dict(info, vertices=info["vertices"] + extra)
        if "refined" in info:
            info["refined"] += extra
        yield c.spread_labels(labels), info


def with_threads(threads, gen, family, size):
    """``gen``'s levels, each computed under the requested thread count (and
    interpreted or compiled, see cpu.run), even when the caller interleaves
    other work."""
    from nx_gpumatch import cpu

    interpret = cpu.should_interpret(family, size)  # once for the whole call
    while True:
        with cpu.run(family, size, threads, interpret):
            try:
                item = next(gen)
            except StopIteration:
                return
        yield item


def with_progress(gen, engine, progress, desc="Louvain"):
    """``gen``'s levels with ``level`` and ``engine`` in their info, shown per
    level on stderr (``progress``: None on a terminal for runs over a second,
    True always, False never)."""
    bar = None
    if progress is not False:
        from tqdm import tqdm

        bar = tqdm(
            desc=desc,
            unit="level",
            file=sys.stderr,
            disable=None if progress is None else False,
            delay=1.0 if progress is None else 0.0,
            leave=False,
        )
    try:
        for level, (labels, info) in enumerate(gen, 1):
            info = dict(info, level=level, engine=engine)
            if bar is not None:
                bar.set_postfix(
                    vertices=info["vertices"],
                    edges=info["edges"],
                    Q=f"{info.get('quality', info.get('modularity')):.5f}",
                    sweeps=info["sweeps"],
                )
                bar.update(1)
            yield labels, info
    finally:
        if bar is not None:
            bar.close()


# ----------------------------------------------------------------- results
def communities(graph, labels):
    """networkx's result: list of sets of node labels, by community id."""
    k = int(labels.max()) + 1 if labels.shape[0] else 0
    if k == 0:
        return []
    order = np.argsort(labels, kind="stable")
    cuts = np.cumsum(np.bincount(labels, minlength=k))[:-1]
    nodes = graph.nodes
    out = []
    for part in np.split(order, cuts):
        ids = part.tolist()
        out.append(set(ids) if nodes is None else {nodes[i] for i in ids})
    return out


def result(graph, kind, labels):
    """The labels in the caller's types (see louvain_communities' Returns)."""
    if kind == "networkx":
        return communities(graph, labels)
    if kind in ("graph", "array"):
        return labels.astype(np.int64)
    import pandas as pd

    lab = graph.label_index()
    vertex = np.arange(graph.num_nodes) if lab is None else lab
    df = pd.DataFrame({"vertex": vertex, "community": labels.astype(np.int64)})
    if kind == "cudf":
        import cudf

        return cudf.from_pandas(df)
    return df


def final_labels(gen, max_level):
    """The labels of ``gen``'s last level, or of level ``max_level`` (None: the
    last); the generator stops there."""
    labels = None
    for level, (labels, _info) in enumerate(gen, 1):
        if max_level is not None and level >= max_level:
            break
    return labels


def partitions(graph, kind, gen):
    """Each level's partition of ``gen`` in the caller's types."""
    for labels, _info in gen:
        yield result(graph, kind, labels)


# ------------------------------------------------------- networkx dispatch
def _param_refusal(value, what):
    if isinstance(value, decimal.Decimal | fractions.Fraction):
        return f"{what} is a {type(value).__name__}: networkx computes with it exactly"
    return None


def refusal(G, resolution, threshold, scan):
    """Why gpumatch cannot cluster networkx graph G as networkx would, or None:
    directed graphs (directed modularity), exact number types (Decimal,
    Fraction) as parameters, and negative weights (``scan``: the call's walk of
    G's edges, :func:`nx_gpumatch._validation.scan_edges`, or None for
    ``weight=None``). Weights float64 cannot hold are refused for every
    function by the interface, before this."""
    if G.is_directed():
        return (
            "directed graphs use networkx's directed modularity, which gpumatch does not implement"
        )
    for key, value in (("resolution", resolution), ("threshold", threshold)):
        why = _param_refusal(value, key)
        if why:
            return why
    if scan is not None and scan.negative is not None:
        u, v, x = scan.negative
        return (
            f"negative weight {x!r} on edge ({u!r}, {v!r}): the modularity gains need weights >= 0"
        )
    return None
