"""The objectives the community engines optimise: modularity and the Constant
Potts Model (CPM), written once for the CPU and GPU engines.

Both engines' move, margin and refinement kernels compute one gain, in
edge-weight units: moving vertex v (weight k_v) into community C (summed
weight a_C) gains

    e_vC - (R / m2) * k_v * a_C

and track the objective, from the inner weight (arcs both ways) and the
squared community weights, as

    q = inner / m2 - R * sum_C a_C**2 / m2**2.

The objective is a choice of the vertex weights k, of R and of m2:

* modularity (networkx's ``modularity``): k_v is v's weighted degree, m2
  their sum, R the resolution; q is the modularity.
* CPM (networkx's ``constant_potts_model``, with ``resolution`` as its
  gamma): k_v is v's node weight, 1 for every vertex as networkx's Leiden
  counts them, summed into the new vertices of each aggregated level; m2
  stays the total weighted degree and R = gamma * m2, so the gain is
  networkx's e_vC - gamma * n_v * n_C and q = 2 * CPM / m2. Keeping m2 as
  the normaliser leaves every tolerance of the engines (sweep and pass
  gains, margins in units of m2) at the scale it has for modularity.

The refinement's well-connectedness test, E(v, C - v) >= (R / m2) k_v
(a_C - k_v), becomes the paper's CPM test E(v, C - v) >= gamma n_v (n_C -
n_v) the same way.

This module imports no engine: engines import it.
"""

import numpy as np

METRICS = ("modularity", "cpm")


def check_metric(metric):
    """``metric`` if it names an objective here, else ValueError."""
    if not isinstance(metric, str) or metric not in METRICS:
        raise ValueError(f"metric must be 'modularity' or 'cpm', got {metric!r}")
    return metric


def node_weights(metric, n):
    """The vertex weights of the null model for a graph of n vertices: None
    for modularity (the engines take the weighted degrees), ones for CPM."""
    return np.ones(n, np.float64) if check_metric(metric) == "cpm" else None


def engine_resolution(metric, resolution, m2):
    """R, the resolution the engines' kernels take (see the module notes)."""
    return float(resolution) * m2 if check_metric(metric) == "cpm" else float(resolution)


def quality(metric, q, m2, resolution, n, shift=0):
    """The value of the objective from the engines' q on a graph of n
    vertices of node weight 1 whose weights were scaled by 2**shift (see
    ``algorithms.community.common.weighted_arrays``; ``resolution`` unscaled). Modularity is q;
    CPM is q * m2 / 2 in scaled weights. With no edge weight at all (m2 0)
    every vertex stays alone: CPM is then -gamma * n / 2."""
    if check_metric(metric) == "modularity":
        return float(q)
    if m2 <= 0.0:
        return -float(resolution) * n / 2.0
    return float(np.ldexp(float(q) * m2 / 2.0, -int(shift)))


def cpm(indptr, indices, w, loop, labels, resolution):
    """networkx's ``constant_potts_model`` of the partition ``labels`` of a
    symmetric CSR graph (arc weights ``w``, self-loop weights ``loop``), every
    node of weight 1: the inner edge weight (self-loops included) less
    gamma * n_C**2 / 2 for each community C."""
    labels = np.asarray(labels, np.int64)
    n = labels.shape[0]
    tail = np.repeat(np.arange(n), np.diff(indptr))
    inner = float(w[labels[tail] == labels[indices]].sum()) / 2.0 + float(loop.sum())
    sizes = np.bincount(labels, minlength=1).astype(np.float64)
    return inner - float(resolution) * float((sizes * sizes).sum()) / 2.0


def singleton_modularity(loop, k, m2, resolution):
    """networkx's modularity of the partition into single vertices: only
    self-loops are inner (each counted twice, as in the degrees). Both sums
    run left to right (``add.accumulate``), as the engines' kernels sum."""
    inner = _running_sum(2.0 * np.asarray(loop, np.float64))
    k = np.asarray(k, np.float64)
    return inner / m2 - resolution * _running_sum(k * k) / (m2 * m2)


def _running_sum(x):
    """The sum of x taken element by element from the front (numpy's ``sum``
    adds pairwise, which can differ in the last bits)."""
    return float(np.add.accumulate(x)[-1]) if x.shape[0] else 0.0


def modularity(graph, labels, resolution=1.0):
    """networkx's modularity of integer ``labels`` on an
    :class:`nx_gpumatch.Graph` (self-loops included), from its edge arrays:
    a check on any engine's result."""
    labels = np.asarray(labels, np.int64)
    w = graph.edge_weight.astype(np.float64)
    loops = graph.loop_weight.astype(np.float64)
    m = float(w.sum() + loops.sum())
    if m == 0:
        return 0.0
    inner = float(w[labels[graph.edge_src] == labels[graph.edge_dst]].sum() + loops.sum())
    deg = (
        np.bincount(graph.edge_src, w, graph.num_nodes)
        + np.bincount(graph.edge_dst, w, graph.num_nodes)
        + 2 * loops
    )
    vol = np.bincount(labels, deg)
    return inner / m - float(resolution) * float((vol * vol).sum()) / (4 * m * m)
