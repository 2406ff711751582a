"""Every family on the graph files of a folder, against the anchors installed.

    python -m nx_gpumatch.benchmark realgraphs DIR [--repeat R] [--threads T]
        [--weights unit,file] [--b 3] [--exact-max 5000] [--networkx-max 50000]
        [--families suitor,local_max,b_suitor,exact,louvain]

Each file of DIR named as a graph file (:data:`SUFFIXES`, also with ".gz") and
read by :mod:`nx_gpumatch.files` (Matrix Market, CSV, tab- or whitespace-separated
edge lists, Parquet) is one graph; anything else is listed as skipped. Each graph runs with every weight 1 ("unit": the common networkx
input, all ties) and with the file's own weights ("file"; a file without
weights runs once, as unit).

Families and their anchors (an anchor package that is not installed gives a
"not installed" row; the families run regardless):

- suitor: NetworKit ``SuitorMatcher(sortSuitor=False)``, as the matching benchmark.
- local_max: the same NetworKit Suitor run (NetworKit's Python API has no
  locally-dominant matcher); ours reuses the edge ranking the Graph caches
  after the warm-up run.
- b_suitor (b = ``--b`` at every vertex): NetworKit ``BSuitorMatcher``.
- exact, on graphs of at most ``--exact-max`` edges: networkx ``max_weight_matching``.
- louvain: igraph ``community_multilevel``, NetworKit ``PLM(refine=False)``,
  and networkx ``louvain_communities`` on graphs of at most ``--networkx-max`` edges.

Every time is the median of R runs after one untimed warm-up run on the same
input, ours and the anchor timed in this process one after the other; the
ratio is ours / anchor. The check column compares the results: the matching
weight (equal for Suitor, local max and b-Suitor, which compute the same greedy
matching as NetworKit), the exact optimum, or the modularity ratio for Louvain.
"""

import argparse
import importlib.util
import os

import numpy as np

import nx_gpumatch as gm
from nx_gpumatch.benchmark import choice_list, median_time, networkit_graph

FAMILIES = ("suitor", "local_max", "b_suitor", "exact", "louvain")
# Names of graph files (also gzip-compressed: + ".gz"); others are skipped.
SUFFIXES = (".mtx", ".csv", ".tsv", ".txt", ".edges", ".el", ".parquet", ".pq")
WEIGHTS = ("unit", "file")


def installed(name):
    """Whether the anchor package ``name`` can be imported."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def graph_files(folder):
    """([(name, Graph)], [(name, why skipped)]) of the files in ``folder``, by name."""
    from nx_gpumatch import Graph

    graphs, skipped = [], []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            continue
        if not name.lower().removesuffix(".gz").endswith(SUFFIXES):
            skipped.append(
                (name, f"not a graph file name (ends with none of {', '.join(SUFFIXES)})")
            )
            continue
        try:
            graphs.append((name, Graph.from_file(path)))
        except (ValueError, ImportError, OSError, UnicodeDecodeError) as exc:
            skipped.append((name, f"{type(exc).__name__}: {str(exc).splitlines()[0][:100]}"))
        except Exception as exc:  # a parser's own error on a file that is not a graph
            skipped.append((name, f"not read: {type(exc).__name__}"))
    return graphs, skipped


def _same(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


class _Table:
    """Rows of one (graph, weights) table: family, anchor, times, check."""

    def __init__(self, repeat):
        self.repeat = repeat
        self.rows = []

    def time(self, fn):
        return median_time(fn, self.repeat, warmup=1)

    def add(self, family, anchor, t_anchor, t_ours, check):
        self.rows.append((family, anchor, t_anchor, t_ours, check))

    def print(self):
        print(
            f"  {'family':13s} {'anchor':36s} {'anchor [s]':>10s} {'ours [s]':>9s} "
            f"{'ours/anchor':>11s}  check"
        )
        for family, anchor, t_a, t_o, check in self.rows:
            ta = f"{t_a:10.4f}" if t_a is not None else f"{'-':>10s}"
            to = f"{t_o:9.4f}" if t_o is not None else f"{'-':>9s}"
            ratio = f"{t_o / t_a:10.2f}x" if t_a and t_o is not None else f"{'-':>11s}"
            print(f"  {family:13s} {anchor:36s} {ta} {to} {ratio}  {check}")


def _matchings(g, t, families, nkg, threads):
    """Suitor and local max against NetworKit's Suitor."""
    ours = {}
    for algo in ("suitor", "local_max"):
        if algo in families:
            ours[algo] = t.time(
                lambda algo=algo: gm.max_weight_matching(g, algorithm=algo, threads=threads)
            )
    if not ours:
        return
    anchor = "NetworKit SuitorMatcher"
    if nkg is None:
        for algo, (t_ours, _) in ours.items():
            t.add(algo, f"{anchor}: not installed", None, t_ours, "")
        return
    import networkit as nk

    def nk_suitor():
        m = nk.matching.SuitorMatcher(nkg, sortSuitor=False, checkSortedEdges=False)
        m.run()
        return m.getMatching()

    t_nk, m_nk = t.time(nk_suitor)
    w_nk = m_nk.weight(nkg)
    for algo, (t_ours, mate) in ours.items():
        w = gm.matching_weight(g, mate)
        same = "same weight" if _same(w, w_nk) else f"weight {w:.6g} vs {w_nk:.6g}"
        t.add(algo, anchor, t_nk, t_ours, same)


def _b_suitor(g, t, b, nkg, threads):
    from nx_gpumatch.algorithms.b_matching import b_matching_edges

    bv = np.full(g.num_nodes, b)
    t_ours, edges = t.time(lambda: b_matching_edges(g, bv, "b_suitor", threads=threads))
    w = float(g.edge_weight[edges].sum())
    if nkg is None:
        t.add(f"b_suitor b={b}", "NetworKit BSuitorMatcher: not installed", None, t_ours, "")
        return
    import networkit as nk

    def nk_b():
        m = nk.matching.BSuitorMatcher(nkg, b)
        m.run()
        return m.getBMatching()

    t_nk, bm = t.time(nk_b)
    w_nk = bm.weight()
    same = "same weight" if _same(w, w_nk) else f"weight {w:.6g} vs {w_nk:.6g}"
    t.add(f"b_suitor b={b}", "NetworKit BSuitorMatcher", t_nk, t_ours, same)


def _exact(g, t, limit):
    if g.num_edges > limit:
        t.add("exact", f"skipped: {g.num_edges:,} edges > --exact-max", None, None, "")
        return
    import networkx as nx

    t_ours, mate = t.time(lambda: gm.max_weight_matching(g))
    w = gm.matching_weight(g, mate)
    G = g.to_networkx()
    t_nx, m_nx = t.time(lambda: nx.max_weight_matching(G, backend="networkx"))
    w_nx = sum(G[u][v]["weight"] for u, v in m_nx)
    same = "same optimum" if _same(w, w_nx) else f"weight {w:.6g} vs {w_nx:.6g}"
    t.add("exact", "networkx max_weight_matching", t_nx, t_ours, same)


def _louvain(g, t, nkg, threads, nx_limit):
    from nx_gpumatch.community.quality import modularity

    if g.num_edges and g.edge_weight.min() < 0:
        t.add("louvain", "skipped: negative weights", None, None, "")
        return
    t_ours, labels = t.time(
        lambda: gm.louvain_communities(g, seed=0, threads=threads, progress=False)
    )
    q = modularity(g, np.asarray(labels))
    t.add("louvain", "(ours)", None, t_ours, f"Q={q:.5f}")

    def q_ratio(other):
        return f"Q ours/anchor {q / other:.4f}" if other else f"anchor Q={other:.5f}"

    if installed("igraph"):
        import igraph as ig

        igG = ig.Graph(n=g.num_nodes, edges=np.c_[g.edge_src, g.edge_dst])
        w = g.edge_weight.tolist()
        t_ig, part = t.time(lambda: igG.community_multilevel(weights=w))
        q_ig = modularity(g, np.asarray(part.membership, np.int64))
        t.add("louvain", "igraph community_multilevel", t_ig, t_ours, q_ratio(q_ig))
    else:
        t.add("louvain", "igraph: not installed", None, t_ours, "")
    if nkg is not None:
        import networkit as nk

        def plm():
            algo = nk.community.PLM(nkg, refine=False)
            algo.run()
            return algo.getPartition()

        t_plm, part = t.time(plm)
        q_plm = modularity(g, np.asarray(part.getVector(), np.int64))
        t.add("louvain", "NetworKit PLM(refine=False)", t_plm, t_ours, q_ratio(q_plm))
    if g.num_edges <= nx_limit:
        import networkx as nx

        G = g.to_networkx()
        t_nx, parts = t.time(
            lambda: nx.community.louvain_communities(G, seed=0, backend="networkx")
        )
        q_nx = nx.community.modularity(G, parts)
        t.add("louvain", "networkx louvain_communities", t_nx, t_ours, q_ratio(q_nx))


def run_graph(name, g, label, args, families):
    """Print the table of one graph with one kind of weights."""
    w = g.edge_weight
    span = f"weights {w.min():.4g}..{w.max():.4g}" if w.size else "no edges"
    print(
        f"{name}: n={g.num_nodes:,} m={g.num_edges:,}, {label} ({span}), "
        f"median of {args.repeat} runs after a warm-up, {args.threads} threads"
    )
    nkg = None
    if installed("networkit"):
        import networkit as nk

        nk.setNumberOfThreads(args.threads)
        nkg = networkit_graph(g)
    t = _Table(args.repeat)
    _matchings(g, t, families, nkg, args.threads)
    if "b_suitor" in families:
        _b_suitor(g, t, args.b, nkg, args.threads)
    if "exact" in families:
        _exact(g, t, args.exact_max)
    if "louvain" in families:
        _louvain(g, t, nkg, args.threads, args.networkx_max)
    t.print()


def main(argv):
    ap = argparse.ArgumentParser(prog="python -m nx_gpumatch.benchmark realgraphs")
    ap.add_argument("folder", help="folder of graph files (edge lists, Matrix Market)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None, help="threads on both sides")
    ap.add_argument("--weights", default="unit,file", help="comma-separated: unit, file")
    ap.add_argument("--b", type=int, default=3, help="b of every vertex for b-Suitor")
    ap.add_argument("--exact-max", type=int, default=5000, help="most edges for exact")
    ap.add_argument(
        "--networkx-max", type=int, default=50_000, help="most edges for networkx's Louvain"
    )
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated families")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.folder):
        ap.error(f"{args.folder} is not a folder")
    if args.repeat < 1 or args.b < 1:
        ap.error("--repeat and --b must be at least 1")
    families = choice_list(ap, "--families", args.families, FAMILIES)
    weights = choice_list(ap, "--weights", args.weights, WEIGHTS)

    from nx_gpumatch import cpu

    graphs, skipped = graph_files(args.folder)
    for name, why in skipped:
        print(f"skipped {name}: {why}")
    if not graphs:
        print(f"no graph files in {args.folder}")
        return 1
    lacking = [p for p in ("networkit", "networkx", "igraph") if not installed(p)]
    if lacking:
        print(f"anchors not installed (their rows say so): {', '.join(lacking)}")
    with cpu.threads(args.threads) as nthreads:
        args.threads = nthreads
        for name, g in graphs:
            unit = g.unweighted()
            has_weights = not np.array_equal(g.edge_weight, unit.edge_weight)
            if "unit" in weights:
                run_graph(name, unit, "unit weights", args, families)
            if "file" in weights and has_weights:
                run_graph(name, g, "the file's weights", args, families)
            elif "file" in weights and "unit" not in weights:
                run_graph(name, unit, "unit weights (the file has none)", args, families)
    return 0
