"""A scaling model of the distributed community engines, fitted to the runs
of ``benchmark distributed_louvain`` and extrapolated to a larger graph and
more ranks.

Per run at P ranks the benchmark measures the slowest rank's compute time
(every phase but communication and the split), the rounds (each one
exchange with the neighbour ranks and one sum of the community totals), the
sweeps, the refinements (Leiden) and the bytes sent. The model is

    T(P) = a / P + b_round * R(P)                       (compute)
         + R(P) * (2 * 8 * t * n / beta + 2 * alpha * log2 P)   (totals)
         + bytes / P / beta                             (ghosts, arcs, labels)

``a`` is the work the ranks share (arcs swept, aggregated), ``b_round`` the
work every rank repeats per round (dense arrays over the level's vertices:
the community totals are summed over the ranks as arrays of n entries, t of
them per round), both fitted by least squares to the measured compute times
(ranks beyond the cores scaled down to the cores they had). As built, a
sweep of local moving takes two rounds whatever P, and a refinement one
round per colour of the rank graph: P on random and R-MAT graphs split in
blocks, whose ranks all neighbour one another, so R(P) = 2 * sweeps + P *
refinements. The network terms use an assumed latency ``alpha`` and
bandwidth ``beta`` per rank (a cluster's, not this machine's, whose ranks
share memory). To extrapolate, ``a`` and the bytes scale with the edges,
``b_round`` and the totals with the vertices; sweeps and refinements stay as
measured.

The second table is the same model for the design the numbers ask for:
community totals reduced by the owners of the communities (Vite's scheme:
each rank sends only the entries of communities it touches, about its arcs'
worth, and repeats no work over all n) and refinements in two rounds too
(which needs another guard of connectivity than the colours).
"""

import math
import os

import numpy as np

from nx_gpumatch.distributed.louvain import MOVE_ROUNDS

ALPHA = 2e-6  # s, latency per message step (assumed)
BETA = 10e9  # bytes/s per rank (assumed, about a 100 Gb/s link)
TOTALS_PER_ROUND = 2  # arrays of n float64 summed per round: weights and sizes
SKIP = ("communicate", "partition")  # phases that are not compute


def fit(rows, cores=None):
    """(a, b_round, sweeps, refinements, bytes sent in all at the largest P)
    from the benchmark's rows {P: row} (each with ``phases``, ``rounds``,
    ``sweeps``, ``bytes`` and, for Leiden, ``refinements``); a and b_round
    in seconds. Ranks beyond ``cores`` (None: this machine's) share them, so
    their compute time is scaled by cores / P first."""
    cores = cores or len(os.sched_getaffinity(0))
    Ps = sorted(rows)
    comp = [
        min(1.0, cores / P) * sum(v for k, v in rows[P]["phases"].items() if k not in SKIP)
        for P in Ps
    ]
    X = np.array([[1.0 / P, rows[P]["rounds"]] for P in Ps])
    coef, *_ = np.linalg.lstsq(X, np.array(comp), rcond=None)
    a, b_round = (max(0.0, float(c)) for c in coef)
    sweeps = float(np.mean([rows[P]["sweeps"] for P in Ps]))
    refinements = float(np.mean([rows[P].get("refinements", 0) for P in Ps]))
    return a, b_round, sweeps, refinements, rows[max(Ps)]["bytes"]


def rounds_at(P, sweeps, refinements, owner_totals=False):
    """Rounds of a run on P ranks (see the module notes)."""
    if P == 1:
        return sweeps + refinements
    return MOVE_ROUNDS * sweeps + (MOVE_ROUNDS if owner_totals else P) * refinements


def predict(rows, n, m, n_big, m_big, ranks, *, owner_totals=False, cores=None):
    """[(P, compute, totals, messages, total seconds)] for a graph of n_big
    vertices and m_big edges at each of ``ranks`` (a core each), from the
    runs ``rows`` on a graph of n vertices and m edges."""
    a, b_round, sweeps, refinements, nbytes = fit(rows, cores)
    grow_m, grow_n = m_big / m, n_big / n
    out = []
    for P in ranks:
        rounds = rounds_at(P, sweeps, refinements, owner_totals)
        comp = a * grow_m / P + b_round * grow_n * rounds / (P if owner_totals else 1)
        lat = 2 * ALPHA * math.log2(P) if P > 1 else 0.0
        if P == 1:
            vol = 0.0
        elif owner_totals:  # each rank sums the entries of the communities it touches
            vol = TOTALS_PER_ROUND * 8 * 2 * m_big / P
        else:  # a ring sum of n-entry arrays moves each twice
            vol = TOTALS_PER_ROUND * 8 * n_big * 2
        totals = rounds * (vol / BETA + lat)
        # the bytes sent in all stay about those measured at the largest P
        # (every rank neighbours the others), shared by P ranks
        msgs = nbytes * grow_m / P / BETA if P > 1 else 0.0
        out.append((P, comp, totals, msgs, comp + totals + msgs))
    return out


# Published strong-scaling points of Vite (Ghosh et al., IPDPS 2018; MPI +
# OpenMP on NERSC Cori), printed beside the predictions for scale.
VITE = (
    "soc-friendster (1.8B edges): about 7x faster on 4,096 processes than a "
    "shared-memory Louvain on 64 threads",
    "uk-2007 (3.3B edges): 32 s on 1,024 cores (64 nodes), a graph the shared-memory "
    "code could not hold in one 128 GB node",
)


def print_model(rows, n, m, *, m_big=1_000_000_000, ranks=(1, 4, 16, 64, 256, 1024), cores=None):
    """Print both tables for a graph of m_big edges and the same average degree."""
    n_big = int(round(n * m_big / m))
    a, b_round, sweeps, refinements, _ = fit(rows, cores)
    print(
        f"\nScaling model (fitted to P = {', '.join(map(str, sorted(rows)))}: shared compute "
        f"{a:.3f} s, {b_round * 1e3:.3f} ms per round per rank, {sweeps:.0f} sweeps, "
        f"{refinements:.0f} refinements; assumed "
        f"network {ALPHA * 1e6:g} us, {BETA / 1e9:g} GB/s per rank) for {m_big:,} edges, "
        f"{n_big:,} vertices:"
    )
    variants = (
        ("as built (dense totals; 2 rounds per sweep, P per refinement)", False),
        ("owner-reduced totals, 2 rounds per sweep and per refinement", True),
    )
    for title, owner in variants:
        print(f"  {title}")
        print("       P | compute (s) | totals (s) | messages (s) | total (s)")
        for P, comp, tot, msg, total in predict(
            rows, n, m, n_big, m_big, ranks, owner_totals=owner, cores=cores
        ):
            print(f"  {P:6d} | {comp:11.1f} | {tot:10.1f} | {msg:12.1f} | {total:9.1f}")
    print("  Vite's published figures (Ghosh et al. 2018), for scale:")
    for line in VITE:
        print(f"    {line}")
