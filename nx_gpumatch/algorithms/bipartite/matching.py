"""Maximum-cardinality bipartite matching: scipy's contract, networkx dispatch.

Every call reduces its input to a biadjacency in CSR by column (rows on one
side, columns on the other), runs an engine and proves the answer: a Konig
vertex cover of the same size as the matching, from the alternating BFS of the
final matching. A matching that fails the proof raises instead of returning.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from nx_gpumatch import cpu, files
from nx_gpumatch._input import check_compressed, check_sparse, mmread
from nx_gpumatch._validation import check_bool, check_threads
from nx_gpumatch.algorithms._compact import Compaction, compact_graph, compaction
from nx_gpumatch.algorithms._convert import input_kind, to_graph
from nx_gpumatch.algorithms._engines import engine_for, engine_module
from nx_gpumatch.algorithms._registry import networkx_algorithm

ALGORITHMS = ("auto", "hopcroft_karp", "apfb", "apsb")
# "auto" on the CPU: at most this many APFB phases, then Hopcroft-Karp, whose
# O(m sqrt(n)) bound covers what is left whatever the input's shape. After a
# Karp-Sipser start APFB scanned the fewest edges in the fewest phases on the
# random, R-MAT, hub and component generators (often one phase and the final
# search); on deep layered inputs a phase finds few paths, and Hopcroft-Karp
# takes over after the first phase with fewer than cpu.bipartite.SLOW_PHASE paths.
AUTO_APFB_PHASES = 8
INITS = ("auto", "karp_sipser", "cheap", "none")
# init="auto": Karp-Sipser from this many entries on, and while columns have fewer
# than KARP_SIPSER_DEGREE entries on average; else "cheap". Karp-Sipser's atomic
# degree updates, a pass over the edges, cost more than the phases it saves on
# small inputs (1000 x 1000 with 15 000 entries: 166 us against 79) and where
# degree-one vertices are rare (3000 x 3000 with 135 000: 1.5 ms against 0.4).
KARP_SIPSER_MIN = 1 << 15
KARP_SIPSER_DEGREE = 16
# Inputs with more rows and columns than twice their entries plus this many have
# the ones without an edge left out before the engines run.
COMPACT_ABOVE = 4096
LAYOUTS = ("ct", "mt")

__all__ = ["maximum_bipartite_matching", "bipartite_vertex_cover", "Biadjacency"]


class Biadjacency:
    """A bipartite graph as ``nrows`` x ``ncols`` with the rows of each column in
    ``crows[cptr[c]:cptr[c + 1]]`` (int64 / int32, repeated entries allowed)."""

    def __init__(self, nrows, ncols, cptr, crows, checked=False):
        self.nrows = int(nrows)
        self.ncols = int(ncols)
        if not checked:  # checked: the caller has checked this very structure
            check_compressed(cptr, crows, self.ncols, self.nrows, "biadjacency")
        self.cptr = np.ascontiguousarray(cptr, np.int64)
        self.crows = np.ascontiguousarray(crows, np.int32)

    @classmethod
    def from_scipy(cls, A):
        """(Biadjacency, swapped) for a matrix whose rows are one side and columns
        the other; every stored entry is an edge, explicit zeros included (as
        scipy). A CSR matrix is used as it is, with its rows as our columns
        (``swapped``): no copy, no transpose."""
        import scipy.sparse as sp

        if not sp.issparse(A):
            raise TypeError("graph must be a scipy sparse matrix or array")
        if A.ndim != 2:
            raise ValueError(f"graph must be 2-D, got shape {A.shape}")
        nrows, ncols = A.shape
        if max(nrows, ncols) >= 2**31 - 1:
            raise ValueError("more than 2**31 - 2 rows or columns are not supported")
        check_sparse(A, "graph")  # a CSR or CSC matrix's structure included: no second check
        if A.format == "csc":
            return cls(nrows, ncols, A.indptr, A.indices, checked=True), False
        csr = A if A.format == "csr" else A.tocsr()
        return cls(ncols, nrows, csr.indptr, csr.indices, checked=True), True

    @property
    def num_edges(self):
        return int(self.crows.shape[0])


def solve(
    bi,
    *,
    algorithm="auto",
    init="auto",
    device=None,
    threads=None,
    wr=True,
    layout="ct",
    backend="cupy",
    block=None,
    stats=None,
):
    """(rmatch, cmatch, row_cover, col_cover) for a :class:`Biadjacency`.

    rmatch/cmatch are int32 (-1 = free); the covers are boolean masks with
    row_cover.sum() + col_cover.sum() == number of matched pairs.
    """
    if algorithm is None:
        algorithm = "auto"
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    # Rows and columns without an edge cost the engines a pass or two each, and
    # compacting them away costs as much: only worth it where they outnumber the edges.
    many_empty = bi.nrows + bi.ncols > 2 * bi.num_edges + COMPACT_ABOVE
    rows = compaction(bi.nrows, ids=(bi.crows,)) if many_empty else None
    cols = compaction(bi.ncols, rows=bi.cptr) if many_empty else None
    if rows is not None or cols is not None:
        # Rows and columns without an edge stay free and out of the cover.
        rows = rows or Compaction(bi.nrows, np.arange(bi.nrows))
        cols = cols or Compaction(bi.ncols, np.arange(bi.ncols))
        cptr = np.append(bi.cptr[cols.kept], bi.cptr[-1])
        small = Biadjacency(rows.size, cols.size, cptr, rows.index(bi.crows), checked=True)
        rm, cm, rc, cc = solve(
            small,
            algorithm=algorithm,
            init=init,
            device=device,
            threads=threads,
            wr=wr,
            layout=layout,
            backend=backend,
            block=block,
            stats=stats,
        )
        return (
            rows.spread_partners(rm, cols),
            cols.spread_partners(cm, rows),
            rows.spread(rc, False),
            cols.spread(cc, False),
        )
    if algorithm == "hopcroft_karp" and (device == "gpu" or backend != "cupy"):
        raise ValueError("the GPU engine runs 'apfb' or 'apsb', not 'hopcroft_karp'")
    check_threads(threads)
    if backend == "cupy":
        name, engine = engine_for("bipartite", device, bi.num_edges)
    else:  # the GPU engine's kernels run in emulation: no device to resolve
        name, engine = "gpu", engine_module("bipartite", "gpu")
    if init == "auto":
        sparse = bi.num_edges < KARP_SIPSER_DEGREE * max(bi.ncols, 1)
        init = "karp_sipser" if bi.num_edges >= KARP_SIPSER_MIN and sparse else "cheap"
    if name == "gpu":
        options = dict(wr=wr, layout=layout, backend=backend, block=block)
    else:
        options = dict(wr=wr, threads=threads, apfb_phases=AUTO_APFB_PHASES)
    rmatch, cmatch, phases, initial, work, cover = _run(
        bi, engine, algorithm, init, threads, options
    )
    row_cover, col_cover, proved = cover
    if not proved:
        raise RuntimeError("internal error: the matching failed its optimality proof")
    if stats is not None:
        algorithm = (
            "apfb" if name == "gpu" and algorithm in ("auto", "hopcroft_karp") else algorithm
        )
        stats.update(engine=name, algorithm=algorithm, phases=int(phases), initial=int(initial))
        if work is not None:  # CPU engine: edges its searches scanned, the final one included
            stats["work"] = int(work)
    return rmatch, cmatch, row_cover, col_cover


def _run(bi, engine, algorithm, init, threads, options):
    """init -> engine.run -> proof. An engine starts from the CPU engine's
    initial matching where it has no heuristic ``init`` of its own
    (``engine.INITS``), and its matching is proved by the CPU engine's Konig
    cover where it returns none."""
    start = init
    if init not in engine.INITS:
        start = _cpu_engine().initial_matching(bi, init, threads)
    rmatch, cmatch, phases, initial, work, cover = engine.run(bi, algorithm, start, **options)
    if cover is None:
        cover = _cpu_engine().prove(bi, rmatch, cmatch, threads)
    return rmatch, cmatch, phases, initial, work, cover


def _cpu_engine():
    """The CPU engine's initial matchings and proof (Numba: imported on first use)."""
    from nx_gpumatch.cpu import bipartite_run

    return bipartite_run


# ----------------------------------------------------------- public function
def maximum_bipartite_matching(
    graph,
    perm_type="row",
    *,
    algorithm="auto",
    init="auto",
    return_cover=False,
    device=None,
    threads=None,
    layout="ct",
    top_nodes=None,
    source="source",
    target="target",
):
    """Maximum-cardinality bipartite matching; a drop-in for
    ``scipy.sparse.csgraph.maximum_bipartite_matching``.

    Parameters
    ----------
    graph : scipy sparse matrix/array (rows one side, columns the other; every
        stored entry is an edge), Matrix Market path, pandas/cuDF DataFrame edge
        list (``source`` nodes one side, ``target`` nodes the other) or the path
        of one (CSV, TSV/whitespace, Parquet; answered as a DataFrame), networkx
        graph or :class:`nx_gpumatch.Graph` (sides from ``top_nodes``, else
        networkx's ``bipartite.sets`` rule: a connected graph's 2-colouring; a
        top node that is not in the graph is a KeyError, as in networkx).
    perm_type : "row" or "column"
        Matrix inputs: "row" gives, per column, its matched row; "column" gives,
        per row, its matched column (-1 = unmatched), as scipy.
    algorithm : "auto" (the default: on the CPU a few APFB phases, then
        Hopcroft-Karp; on the GPU "apfb"), "hopcroft_karp" (CPU), "apfb" or
        "apsb" (Deveci et al. 2013; CPU or GPU)
    init : "auto" (the default: "karp_sipser" from ``KARP_SIPSER_MIN`` entries on
        with fewer than ``KARP_SIPSER_DEGREE`` per column, else "cheap"),
        "karp_sipser", "cheap" or "none" (the initial matching)
    return_cover : bool
        Also return a minimum vertex cover of the same size (Konig): for matrix
        inputs a pair (row indices, column indices); for a DataFrame a pair of
        label arrays (sources, targets); for a networkx graph a set of nodes;
        for a :class:`Graph` an int64 array of vertex ids.
    device : "auto", "cpu", "gpu" or None (the config's)
    layout : "ct" (a fixed grid, many columns per thread) or "mt" (one thread
        per column): the GPU kernels' thread assignment.

    Returns
    -------
    int array as scipy's for matrix inputs; DataFrame (source, target) of the
    matched pairs for a DataFrame; dict in both directions (as networkx's
    ``bipartite.maximum_matching``) for a networkx graph; int64 mate array for a
    :class:`Graph`. With ``return_cover``, a pair (matching, cover).
    """
    kw = dict(algorithm=algorithm, init=init, device=device, threads=threads, layout=layout)
    kind = input_kind(graph)
    if perm_type not in ("row", "column"):
        raise ValueError(f"perm_type must be 'row' or 'column', got {perm_type!r}")
    return_cover = check_bool(return_cover, "return_cover")
    if kind in ("networkx", "graph"):
        return _general_graph(graph, kind, top_nodes, return_cover, kw)
    if top_nodes is not None:
        raise TypeError("top_nodes applies to networkx graphs and nx_gpumatch.Graph only")
    if isinstance(graph, str) or hasattr(graph, "__fspath__"):
        if files.file_format(graph) == "mtx":
            graph = mmread(graph)
        else:  # an edge list: its rows, as a DataFrame's
            graph, kind = files.read_edge_list(graph, source, target), "pandas"
    if kind in ("pandas", "cudf"):
        return _edge_list(graph, source, target, return_cover, kw)
    bi, swapped = Biadjacency.from_scipy(graph)
    rmatch, cmatch, row_cover, col_cover = solve(bi, **kw)
    if swapped:  # our columns are the matrix's rows
        rmatch, cmatch, row_cover, col_cover = cmatch, rmatch, col_cover, row_cover
    perm = (cmatch if perm_type == "row" else rmatch).astype(np.int32)
    if return_cover:
        return perm, (np.flatnonzero(row_cover), np.flatnonzero(col_cover))
    return perm


def _edge_list(df, source, target, return_cover, kw):
    import pandas as pd

    lib = "cudf" if type(df).__module__.startswith("cudf") else "pandas"
    if lib == "cudf":
        df = df.to_pandas()
    for col in (source, target):
        if col not in df.columns:
            raise ValueError(f"column {col!r} not in DataFrame (columns: {list(df.columns)})")
    if source == target:
        raise ValueError(f"source and target name the same column {source!r}: a side each")
    rows, row_labels = pd.factorize(df[source], sort=False)
    cols, col_labels = pd.factorize(df[target], sort=False)
    if np.any(rows < 0) or np.any(cols < 0):
        raise ValueError(f"columns {source!r} and {target!r} must not hold missing values")
    import scipy.sparse as sp

    nr, nc = len(row_labels), len(col_labels)
    A = sp.csc_array(
        (np.ones(len(rows), np.int8), (rows.astype(np.int64), cols.astype(np.int64))),
        shape=(nr, nc),
    )
    rmatch, cmatch, row_cover, col_cover = solve(Biadjacency.from_scipy(A)[0], **kw)
    r = np.flatnonzero(rmatch >= 0)
    out = pd.DataFrame(
        {source: row_labels.take(r), target: col_labels.take(rmatch[r].astype(np.int64))}
    )
    if lib == "cudf":
        import cudf

        out = cudf.from_pandas(out)
    if return_cover:
        return out, (
            np.asarray(row_labels.take(np.flatnonzero(row_cover))),
            np.asarray(col_labels.take(np.flatnonzero(col_cover))),
        )
    return out


# ------------------------------------------------- general graphs: the sides
def _sides(G, top_nodes, labels=None):
    """Boolean mask of the top side of a :class:`Graph`, by networkx's rules;
    ``labels``: those of G's vertices (default: G's own)."""
    from nx_gpumatch.cpu import bipartite as cb  # Numba: imported on first use

    n = G.num_nodes
    if top_nodes is None:
        if n == 0:
            raise nx.NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
        if n > 1 and compact_graph(G)[1] is not None:  # a vertex without edges: a component
            raise nx.AmbiguousSolution("Disconnected graph: Ambiguous solution for bipartite sets.")
        with cpu.run("bipartite", G.num_edges, cpu.threads_for(G.num_edges)):
            colour, comps, conflict = cb.two_colour(n, G.indptr, G.indices)
        if comps > 1:
            raise nx.AmbiguousSolution("Disconnected graph: Ambiguous solution for bipartite sets.")
        if conflict >= 0 or G.has_loop.any():
            raise nx.NetworkXError("Graph is not bipartite.")
        return colour == 1
    labels = G.labels() if labels is None else labels
    top = top_nodes if isinstance(top_nodes, (set, frozenset, dict)) else set(top_nodes)
    is_top = np.fromiter((v in top for v in labels), np.bool_, count=n)
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(G.indptr))
    same = is_top[src] == is_top[G.indices]
    if same.any() or G.has_loop.any():
        if same.any():
            k = int(np.flatnonzero(same)[0])
            u, v = labels[int(src[k])], labels[int(G.indices[k])]
        else:
            u = v = labels[int(np.flatnonzero(G.has_loop)[0])]
        raise nx.NetworkXError(
            f"Graph is not bipartite with the given top_nodes: edge ({u!r}, {v!r}) "
            "joins two nodes of the same side"
        )
    return is_top


def _split(G, is_top):
    """(Biadjacency with the top side as columns, top ids, bottom ids)."""
    n = G.num_nodes
    tops = np.flatnonzero(is_top)
    bottoms = np.flatnonzero(~is_top)
    row_id = np.full(n, -1, np.int64)
    row_id[bottoms] = np.arange(bottoms.shape[0])
    deg = np.diff(G.indptr)
    cptr = np.zeros(tops.shape[0] + 1, np.int64)
    np.cumsum(deg[tops], out=cptr[1:])
    arc_top = np.repeat(is_top, deg)
    crows = row_id[G.indices[arc_top]]
    return Biadjacency(bottoms.shape[0], tops.shape[0], cptr, crows), tops, bottoms


def graph_matching(G, top_nodes=None, **kw):
    """(mate over G's vertices, cover mask over them) for a :class:`Graph`."""
    small, c = compact_graph(G)
    if c is not None and top_nodes is not None:  # vertices without edges stay free
        labels = [G.label(v) for v in c.kept.tolist()]
        mate, cover = _side_matching(small, _sides(small, top_nodes, labels), kw)
        return c.spread_partners(mate, c), c.spread(cover, False)
    return _side_matching(G, _sides(G, top_nodes), kw)


def _side_matching(G, is_top, kw):
    bi, tops, bottoms = _split(G, is_top)
    rmatch, cmatch, row_cover, col_cover = solve(bi, **kw)
    mate = np.full(G.num_nodes, -1, np.int64)
    mc = np.flatnonzero(cmatch >= 0)
    mate[tops[mc]] = bottoms[cmatch[mc]]
    mate[bottoms[cmatch[mc]]] = tops[mc]
    cover = np.zeros(G.num_nodes, np.bool_)
    cover[tops[col_cover]] = True
    cover[bottoms[row_cover]] = True
    return mate, cover


def _as_dict(G, mate):
    labels = G.labels()
    idx = np.flatnonzero(mate >= 0)
    return {labels[u]: labels[v] for u, v in zip(idx.tolist(), mate[idx].tolist())}


def _general_graph(graph, kind, top_nodes, return_cover, kw):
    G, _ = to_graph(graph, weight=None)
    _check_top_nodes(G, top_nodes)
    mate, cover = graph_matching(G, top_nodes, **kw)
    if kind == "graph":
        return (mate, np.flatnonzero(cover)) if return_cover else mate
    result = _as_dict(G, mate)
    if return_cover:
        labels = G.labels()
        return result, {labels[v] for v in np.flatnonzero(cover).tolist()}
    return result


def bipartite_vertex_cover(graph, top_nodes=None, **kw):
    """A minimum vertex cover of a bipartite graph (Konig), with the inputs and
    the cover types of :func:`maximum_bipartite_matching` (``return_cover``)."""
    return maximum_bipartite_matching(graph, top_nodes=top_nodes, return_cover=True, **kw)[1]


# ------------------------------------------------------- networkx dispatch
# These receive the Graph networkx converted and return networkx's types.


def _check_top_nodes(G, top_nodes):
    """KeyError for a top node that is not a node of G, as networkx's
    Hopcroft-Karp raises when it looks the node up (rather than answering
    for a graph the caller did not mean)."""
    if top_nodes is None:
        return
    known = G.cached("node_set", lambda: set(G.labels()))
    for v in top_nodes:
        if v not in known:
            raise KeyError(v)


def _can_run(G, top_nodes=None):
    if G is None or not hasattr(G, "is_directed"):
        return True
    if G.is_directed():
        return "directed graphs: networkx's own code handles them"
    if G.is_multigraph():
        return "multigraphs: networkx's own code handles them"
    return True


def _can_run_cover(G, matching, top_nodes=None):
    return _can_run(G, top_nodes)


@networkx_algorithm(
    "hopcroft_karp_matching",
    docs=(
        "Also serves bipartite.maximum_matching. Karp-Sipser start, then Hopcroft-Karp with a "
        "parallel level-synchronous BFS (Numba); every answer is proved by a Konig vertex cover "
        "of the same size. Directed graphs and multigraphs fall back to networkx."
    ),
    can_run=_can_run,
)
def _nx_hopcroft_karp_matching(G, top_nodes=None):
    _check_top_nodes(G, top_nodes)
    return _as_dict(G, graph_matching(G, top_nodes)[0])


@networkx_algorithm(
    "eppstein_matching",
    docs="Same engine as hopcroft_karp_matching (any maximum matching is a valid answer).",
    can_run=_can_run,
)
def _nx_eppstein_matching(G, top_nodes=None):
    return _as_dict(G, graph_matching(G, top_nodes)[0])


@networkx_algorithm(
    "to_vertex_cover",
    docs=(
        "Konig's cover from one parallel alternating BFS; raises NetworkXError if the matching "
        "is not maximum."
    ),
    can_run=_can_run_cover,
)
def _nx_to_vertex_cover(G, matching, top_nodes=None):
    """Konig's cover from the given maximum matching: the top nodes not reached
    and the bottom nodes reached by alternating paths from free top nodes."""
    from nx_gpumatch.cpu import bipartite_cover  # Numba: imported on first use

    bi, tops, bottoms = _split(G, _sides(G, top_nodes))
    index = {v: i for i, v in enumerate(G.labels())}
    col_of = np.full(G.num_nodes, -1, np.int64)
    col_of[tops] = np.arange(tops.shape[0])
    row_of = np.full(G.num_nodes, -1, np.int64)
    row_of[bottoms] = np.arange(bottoms.shape[0])
    rmatch = np.full(bi.nrows, -1, np.int32)
    cmatch = np.full(bi.ncols, -1, np.int32)
    for u, v in matching.items():
        i, j = index.get(u, -1), index.get(v, -1)
        if i < 0 or j < 0:
            raise nx.NetworkXError(f"matching names a node not in G: {u!r} or {v!r}")
        if col_of[i] < 0:
            i, j = j, i  # a pair given bottom -> top
        if col_of[i] >= 0 and row_of[j] >= 0:
            cmatch[col_of[i]] = row_of[j]
            rmatch[row_of[j]] = col_of[i]
    with cpu.run("bipartite", bi.num_edges, cpu.threads_for(bi.num_edges)):
        row_cover, col_cover, ok = bipartite_cover.konig_cover(
            bi.nrows, bi.ncols, bi.cptr, bi.crows, rmatch, cmatch
        )
    if not ok:
        raise nx.NetworkXError("matching is not a maximum matching of G")
    labels = G.labels()
    ids = np.concatenate([tops[col_cover], bottoms[row_cover]])
    return {labels[v] for v in ids.tolist()}
