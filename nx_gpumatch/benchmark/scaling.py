"""Time against graph size for each family and engine, with its anchor.

    python -m nx_gpumatch.benchmark scaling [--max-n N] [--repeat R]
        [--families suitor,b_suitor,exact,louvain] [--json out.json] [--plot fig.png]

Random graphs with n vertices and 8n drawn edges (exact matching: 5n edges on
smaller graphs, against networkx). Each time is the median of R runs in this
process on a prebuilt graph (and a prebuilt anchor graph); the anchor runs on
the same graph, so a ratio compares like with like. ``--plot`` draws time
against edges (ours solid, anchors dashed) and the speed-up table
(needs matplotlib, the ``bench`` extra).
"""

import argparse
import json
import platform
import sys

import numpy as np

import nx_gpumatch as gm
from nx_gpumatch.benchmark import median_time, networkit_graph

FAMILIES = ("suitor", "local_max", "b_suitor", "exact", "louvain")
ANCHORS = {
    "suitor": "NetworKit SuitorMatcher",
    "local_max": "NetworKit SuitorMatcher",
    "b_suitor": "NetworKit BSuitorMatcher (b=3)",
    "exact": "networkx max_weight_matching",
    "louvain": "NetworKit PLM",
}


def _sizes(max_n, start):
    """start, 4 start, 16 start, ... up to max_n (max_n itself included)."""
    out = []
    n = start
    while n < max_n:
        out.append(n)
        n *= 4
    out.append(max_n)
    return out


def _engines(device):
    from nx_gpumatch import gpu

    engines = ["cpu"]
    if device in ("gpu", "all") or (device == "auto" and gpu.unavailable_reason() is None):
        engines.append("gpu")
    return engines


def _ours(family, g, engine):
    if family in ("suitor", "local_max"):
        return lambda: gm.max_weight_matching(g, algorithm=family, device=engine)
    if family == "b_suitor":
        b = np.full(g.num_nodes, 3, np.int64)
        return lambda: gm.b_matching(g, b, device=engine)
    if family == "exact":
        return lambda: gm.max_weight_matching(g)
    return lambda: gm.louvain_communities(g, seed=1, device=engine, progress=False)


def _anchor(family, g):
    if family == "exact":
        import networkx as nx

        G = g.to_networkx()
        return lambda: nx.max_weight_matching(G, backend="networkx")
    import networkit as nk

    nkg = networkit_graph(g)
    if family in ("suitor", "local_max"):
        return lambda: nk.matching.SuitorMatcher(nkg, False, False).run()
    if family == "b_suitor":
        return lambda: nk.matching.BSuitorMatcher(nkg, 3).run()
    return lambda: nk.community.PLM(nkg, refine=False).run()


def run(families, max_n, repeat, device="auto", progress=print):
    """Measure; returns the result dict (rows of family, engine, impl, n, m, seconds)."""
    import numba

    from nx_gpumatch import generators

    rows = []
    engines = _engines(device)
    for family in families:
        exact = family == "exact"
        sizes = _sizes(min(max_n, 2000), 250) if exact else _sizes(max_n, 10_000)
        for n in sizes:
            g = generators.random_graph(n, (5 if exact else 8) * n, seed=0)
            for engine in ["cpu"] if exact else engines:
                t, _ = median_time(_ours(family, g, engine), repeat)
                rows.append(
                    dict(
                        family=family, impl="gpumatch", engine=engine, n=n, m=g.num_edges, seconds=t
                    )
                )
                progress(f"  {family:10s} {engine:4s} n={n:>9,d} m={g.num_edges:>10,d} {t:9.4f} s")
            # networkx's exact matching is slow: one run is enough past 1000 vertices
            t, _ = median_time(_anchor(family, g), 1 if exact and n > 1000 else repeat)
            rows.append(
                dict(
                    family=family,
                    impl=ANCHORS[family],
                    engine="anchor",
                    n=n,
                    m=g.num_edges,
                    seconds=t,
                )
            )
            progress(
                f"  {family:10s} {'anchor':6s} n={n:>7,d} {'':13s} {t:9.4f} s  ({ANCHORS[family]})"
            )
    meta = dict(
        machine=platform.machine(),
        python=platform.python_version(),
        threads=numba.get_num_threads(),
        repeat=repeat,
    )
    return dict(meta=meta, rows=rows)


def speedups(result):
    """Rows (family, engine, n, m, ours, anchor, anchor / ours) at each measured size."""
    anchor = {(r["family"], r["n"]): r for r in result["rows"] if r["engine"] == "anchor"}
    out = []
    for r in result["rows"]:
        a = anchor.get((r["family"], r["n"]))
        if r["engine"] != "anchor" and a is not None:
            out.append(
                (
                    r["family"],
                    r["engine"],
                    r["n"],
                    r["m"],
                    r["seconds"],
                    a["seconds"],
                    a["seconds"] / r["seconds"],
                )
            )
    return out


def plot(result, path):
    """Time against edges per family and engine (anchors dashed) and the speed-up
    table at each family's largest size, written to ``path`` (png, svg, pdf)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["rows"]
    families = list(dict.fromkeys(r["family"] for r in rows))
    fig, (ax, tab) = plt.subplots(1, 2, figsize=(13, 5.5), gridspec_kw={"width_ratios": [1.25, 1]})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, fam in enumerate(families):
        c = colors[i % len(colors)]
        for engine in dict.fromkeys(r["engine"] for r in rows if r["family"] == fam):
            pts = sorted(
                (r["m"], r["seconds"], r["impl"])
                for r in rows
                if r["family"] == fam and r["engine"] == engine
            )
            anchor = engine == "anchor"
            label = f"{fam}: {pts[0][2]}" if anchor else f"{fam}: gpumatch {engine}"
            ax.plot(
                [p[0] for p in pts],
                [p[1] for p in pts],
                linestyle="--" if anchor else ("-" if engine == "cpu" else "-."),
                marker="s" if anchor else "o",
                color=c,
                label=label,
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("edges")
    ax.set_ylabel("time [s] (median)")
    meta = result.get("meta", {})
    ax.set_title(f"time vs graph size ({meta.get('threads', '?')} threads)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    largest = {}
    for s in speedups(result):
        if (s[0], s[1]) not in largest or s[2] > largest[(s[0], s[1])][2]:
            largest[(s[0], s[1])] = s
    cells = [
        [f, e, f"{m:,}", f"{ours:.4f}", f"{anc:.4f}", f"{x:,.1f}x"]
        for (f, e, n, m, ours, anc, x) in largest.values()
    ]
    tab.axis("off")
    if cells:
        t = tab.table(
            cellText=cells,
            colLabels=["family", "engine", "edges", "ours [s]", "anchor [s]", "speed-up"],
            loc="center",
        )
        t.auto_set_font_size(False)
        t.set_fontsize(8)
        t.scale(1, 1.4)
    tab.set_title("speed-up over the anchor at the largest size")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv):
    ap = argparse.ArgumentParser(prog="python -m nx_gpumatch.benchmark scaling")
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated")
    ap.add_argument("--max-n", type=int, default=160_000, help="largest graph (vertices)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--device", choices=("auto", "cpu", "gpu"), default="auto")
    ap.add_argument("--json", help="write the measurements to this file")
    ap.add_argument("--from-json", help="plot earlier measurements instead of measuring")
    ap.add_argument("--plot", help="write the figure to this file (png/svg/pdf)")
    args = ap.parse_args(argv)
    families = [f for f in args.families.split(",") if f]
    bad = [f for f in families if f not in FAMILIES]
    if bad:
        print(f"unknown families {bad}; choose from {list(FAMILIES)}", file=sys.stderr)
        return 2
    if args.from_json:
        with open(args.from_json) as f:
            result = json.load(f)
    else:
        print(
            f"scaling: random graphs, median of {args.repeat} runs; the machine's load shows in the times"
        )
        result = run(families, args.max_n, args.repeat, args.device)
    print(
        f"{'family':10s} {'engine':6s} {'edges':>11s} {'ours [s]':>9s} {'anchor [s]':>10s} {'speed-up':>9s}"
    )
    for f, e, n, m, ours, anc, x in speedups(result):
        print(f"{f:10s} {e:6s} {m:11,d} {ours:9.4f} {anc:10.4f} {x:8.1f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    if args.plot:
        plot(result, args.plot)
        print(f"figure written to {args.plot}")
    return 0
