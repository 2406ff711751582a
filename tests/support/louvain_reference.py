"""A plain-Python statement of the shared-memory Louvain engine's rules, for
tests/community/test_louvain.py: degree buckets, commit batches, ties, the
singleton rule, revisiting only vertices next to a move, thresholds, undoing
a sweep that loses modularity, aggregation. It repeats the engine's float
operations in the same order, so results agree exactly."""

import numpy as np

from nx_gpumatch.community import schedule
from nx_gpumatch.cpu import louvain as cl

_M64 = (1 << 64) - 1


def _mix(x):
    z = x & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _schedule(buckets, deg, max_arcs, max_batches, sweep):
    out = []
    salt = _mix((sweep * 0x9E3779B97F4A7C15) & _M64)
    for verts in buckets:
        if not verts:
            continue
        A = sum(deg[v] for v in verts)
        cap = max_arcs if max_batches <= 0 else max(max_arcs, -(-A // max_batches))
        if sweep == 0 or cap <= 1:
            last = -1
            arcs = 0
            for v in verts:
                if arcs // cap != last:
                    out.append([])
                    last = arcs // cap
                out[-1].append(v)
                arcs += deg[v]
        else:
            nbb = min(max(1, -(-A // cap)), len(verts))
            off = salt % cl.RUN
            groups = [[] for _ in range(nbb)]
            for t, v in enumerate(verts):
                groups[_mix(((t + off) // cl.RUN) ^ salt) % nbb].append(v)
            out.extend(groups)
    return out


def _seq_sum(xs):
    s = 0.0
    for x in xs:
        s += x
    return s


def _units(x, units):
    x = x * units
    return 0 if not x > 0.0 else min(int(x), 2**40)


def _ref_level(rows, loop, k, order, prio, m2, res, thr, max_arcs, max_batches, margins):
    n = len(rows)
    # Batched sweeps wake a neighbour of a mover only once the bounds on what
    # the moves took from its margin add up to more than the margin.
    units = 2.0**40 / m2 if margins else 0.0
    slack = [0] * n
    charge = [0] * n
    # Batched levels stop at a fraction of their gain, without a full sweep to
    # confirm; levels one vertex at a time go to a local optimum.
    rel, confirm = (cl.SWEEP_REL_TOL, False) if max_arcs > 1 else (0.0, True)
    deg = [len(r) for r in rows]
    bounds = cl.MOVE_BUCKETS.tolist()
    buckets = [[] for _ in range(len(bounds) + 1)]
    for v in order:
        if deg[v]:
            buckets[sum(deg[v] > b for b in bounds)].append(v)
    comm = list(range(n))
    a = list(k)
    size = [1] * n
    active = [True] * n

    def intra_all():
        return [
            _seq_sum([wt for j, wt in rows[v] if comm[j] == comm[v]]) + 2.0 * loop[v]
            for v in range(n)
        ]

    sq = _seq_sum([x * x for x in a])
    q = _seq_sum(intra_all()) / m2 - res * sq / (m2 * m2)
    q_start = q
    r_m2 = res / m2
    total = sweeps = 0
    all_active = True
    while True:
        batches = _schedule(buckets, deg, max_arcs, max_batches, sweeps)
        batch_of = {v: i for i, b in enumerate(batches) for v in b}
        sweeps += 1
        full, all_active = all_active, False
        keep = (comm[:], a[:], size[:], sq)
        moved = 0
        for b in batches:
            new = {}
            for v in b:
                if max_arcs > 1 and margins and not active[v] and charge[v] > slack[v]:
                    active[v] = True
            for v in b:
                if not active[v]:
                    new[v] = comm[v]
                    continue
                active[v] = False
                acc, first = {}, {}
                for j, wt in rows[v]:
                    c = comm[j]
                    if c in acc:
                        acc[c] += wt
                    else:
                        acc[c] = wt
                        first[c] = j
                own = comm[v]
                scale = r_m2 * k[v]
                e_own, best, best_s = 0.0, -1, 0.0
                top1 = top2 = -np.inf
                for c, wc in acc.items():
                    if c == own:
                        e_own = wc
                        continue
                    sc = wc - a[c] * scale
                    if sc > top1:
                        top1, top2 = sc, top1
                    elif sc > top2:
                        top2 = sc
                    if best >= 0 and (sc < best_s or (sc == best_s and prio[c] > prio[best])):
                        continue
                    if (
                        size[own] == 1
                        and size[c] == 1
                        and batch_of.get(first[c]) == batch_of[v]
                        and prio[c] > prio[own]
                    ):
                        continue
                    best, best_s = c, sc
                stay = e_own - (a[own] - k[v]) * scale
                new[v] = best if best >= 0 and best_s > stay else own
                if new[v] == own:
                    margin = stay - max(top1, 0.0)
                else:
                    margin = best_s - max(stay, top2 if best_s == top1 else top1, 0.0)
                slack[v], charge[v] = _units(margin, units), 0
            for v in b:  # the movers charge their neighbours (state before the batch)
                c, o = new[v], comm[v]
                if c == o or max_arcs <= 1:
                    continue
                for j, wt in rows[v]:
                    if active[j]:
                        continue
                    if not margins or new.get(j, comm[j]) != comm[j]:
                        active[j] = True
                        continue
                    r = r_m2 * k[v] * k[j]
                    if comm[j] == o:
                        drop = 2.0 * (wt - r)
                    elif comm[j] == c:
                        drop = 2.0 * (r - wt)
                    else:
                        drop = abs(wt - r)
                    if not drop > 0.0:
                        continue
                    if drop * units >= 2**40:
                        active[j] = True
                    else:
                        charge[j] += int(drop * units) + 1
            dsq = 0.0
            for v in b:
                c, o = new[v], comm[v]
                if c != o:
                    ao, ac = a[o], a[c]
                    a[o] = ao - k[v]
                    a[c] = ac + k[v]
                    dsq += (a[o] * a[o] + a[c] * a[c]) - (ao * ao + ac * ac)
                    size[o] -= 1
                    size[c] += 1
                    comm[v] = c
                    moved += 1
                    if max_arcs <= 1:
                        for j, _ in rows[v]:
                            active[j] = True
            sq += dsq
        if moved == 0:
            if full or not confirm:
                break
            active = [True] * n  # a level ends on a sweep over every vertex
            all_active = True
            continue
        q_new = _seq_sum(intra_all()) / m2 - res * sq / (m2 * m2)
        if q_new < q:
            comm, a, size, sq = keep
            if max_arcs <= 1:
                break
            max_arcs, max_batches = 1, 0
            active = [True] * n
            all_active = True
            continue
        total += moved
        gain, q = q_new - q, q_new
        if gain <= max(thr, rel * (q - q_start)):
            if full or not confirm:
                break
            active = [True] * n
            all_active = True
    return comm, q, total


def reference_levels(
    g,
    resolution=1.0,
    threshold=1e-7,
    order=None,
    weighted=True,
    batch_fraction=None,
    max_batches=0,
    margins=True,
):
    """[(labels, modularity)] per level, by the rules above. batch_fraction=None:
    one vertex per batch, what the engine does on levels below SEQUENTIAL_ARCS."""
    n = g.num_nodes
    w = g.weights if weighted else np.ones(2 * g.num_edges)
    loop = (g.loop_weight if weighted else (g.loop_weight != 0).astype(float)).tolist()
    rows = [
        [(int(g.indices[p]), float(w[p])) for p in range(g.indptr[v], g.indptr[v + 1])]
        for v in range(n)
    ]
    k = [_seq_sum([wt for _, wt in rows[v]]) + 2.0 * loop[v] for v in range(n)]
    m2 = float(np.asarray(k).sum()) if n else 0.0
    if m2 <= 0:
        return [(list(range(n)), 0.0)]
    order = list(range(n)) if order is None else [int(x) for x in order]
    labels = list(range(n))
    comm0 = list(range(n))
    q = _seq_sum(
        [
            _seq_sum([wt for j, wt in rows[v] if comm0[j] == comm0[v]]) + 2.0 * loop[v]
            for v in range(n)
        ]
    ) / m2 - resolution * _seq_sum([x * x for x in k]) / (m2 * m2)
    out = []
    level = 0
    while True:
        prio = [0] * len(rows)
        for i, v in enumerate(order):
            prio[v] = i
        if batch_fraction is None:
            max_arcs = 1
        else:
            max_arcs = max(1, int(batch_fraction * sum(1 for r in rows if r)))
        # sweeps stop at the sweep tolerance, not at the caller's threshold
        sweep_tol = min(threshold, schedule.SWEEP_TOL)
        comm, q_new, moves = _ref_level(
            rows, loop, k, order, prio, m2, resolution, sweep_tol, max_arcs, max_batches, margins
        )
        if level > 0 and moves == 0:
            return out
        ids = sorted(set(comm))
        newid = {c: i for i, c in enumerate(ids)}
        labels = [newid[comm[x]] for x in labels]
        out.append((labels, q_new))
        if q_new - q <= threshold:
            return out
        q = q_new
        new_rows, new_loop = [], []
        for c in ids:
            x = newid[c]
            acc, lp, intra = {}, 0.0, 0.0
            for v in range(len(rows)):
                if comm[v] != c:
                    continue
                lp += loop[v]
                for j, wt in rows[v]:
                    d = newid[comm[j]]
                    if d == x:
                        intra += wt
                    else:
                        acc[d] = acc[d] + wt if d in acc else wt
            new_rows.append(list(acc.items()))
            new_loop.append(lp + 0.5 * intra)
        rows, loop = new_rows, new_loop
        k = [_seq_sum([wt for _, wt in rows[x]]) + 2.0 * loop[x] for x in range(len(rows))]
        order = [newid[c] for c in order if c in newid]
        level += 1


def communities_of(labels, nodes=None):
    """Labels (a community id per vertex) as a list of sets of vertices
    (or of ``nodes[v]``)."""
    k = max(labels) + 1 if len(labels) else 0
    parts = [set() for _ in range(k)]
    for v, c in enumerate(labels):
        parts[c].add(v if nodes is None else nodes[v])
    return parts
