"""Leiden on the GPU: the method of Traag, Waltman and van Eck 2019 ("From
Louvain to Leiden: guaranteeing well-connected communities", Scientific
Reports) with the CPU engine's rules (:mod:`nx_gpumatch.cpu.leiden`).

Local moving and aggregation are the GPU Louvain engine's
(:func:`nx_gpumatch.gpu.louvain.optimise` from the previous level's
partition, :func:`~nx_gpumatch.gpu.louvain.aggregate` on the refined one);
the refinement is ``refine_communities`` in kernels/leiden.cu: communities are
refined in parallel, a thread each, or a warp each for large ones and those
with a long row (:func:`refine_classes`), every community walking its members
in the vertex order as the CPU engine walks all vertices (refinement never
looks outside a community, so this is the CPU engine's result). The random choice
hashes (key, vertex, refinement count), as on the CPU: results are the seed's,
whatever the launch geometry. The loop over passes and levels is shared
with the CPU engine (:func:`nx_gpumatch.community.levels.leiden`): :class:`LeidenEngine`
runs its levels here.

Every community of the result induces a connected subgraph: a pass ends once
local moving leaves every vertex of a level alone, and the communities are
then refined sub-communities, each grown one connected vertex at a time.

Determinism. On integer weights (sums exact in any order) the partition is
the same run after run and equals the CPU engine's where the local moving
does (see :mod:`nx_gpumatch.gpu.louvain`: levels of at least SEQUENTIAL_ARCS
arcs lead with CPU-only sweeps): the refinement's random pick does not
depend on the order of a row's arcs, which the two engines' aggregations
leave in different orders. With float weights the Louvain
engine's guarantees hold (see :mod:`nx_gpumatch.gpu.louvain`): atomic sums
in local moving may differ in their last bits between runs, so a near-tie may
go the other way; the refinement itself runs the CPU's operations in the
CPU's order (on a device, ``exp`` may differ from the host's in the last
bit). Connectedness of every community holds on every run.
"""

from __future__ import annotations

import numpy as np

from nx_gpumatch.community import levels, quality
from nx_gpumatch.community import schedule as sch
from nx_gpumatch.gpu import louvain as gl
from nx_gpumatch.gpu._launch import bincount, get_module

__all__ = ["leiden_levels", "LeidenEngine", "refine", "refine_classes"]

BLOCK = gl.BLOCK
DEFINES = {"BLOCK": BLOCK}
# Communities refined by a warp rather than a thread: more members than
# this, or a member with more arcs than WIDE_DEGREE (its row is shared by the
# lanes, and a thread's walk over a giant community would hold up the launch).
WIDE_MEMBERS = 256
WIDE_DEGREE = 32


def refine_classes(xp, cptr, cc, deg):
    """The communities by the threads that refine them: [(threads,
    community ids)]; a community of more than WIDE_MEMBERS members, or with a
    member of more than WIDE_DEGREE arcs, gets a warp, the others a thread.
    ``cptr``: member offsets, ``cc``: each vertex's community, ``deg``: each
    vertex's arc count (device arrays)."""
    kc = int(cptr.shape[0] - 1)
    hubs = bincount(xp, cc[deg > WIDE_DEGREE], kc) > 0
    wide = (cptr[1:] - cptr[:-1] > WIDE_MEMBERS) | hubs
    out = []
    for width, sel in ((1, ~wide), (32, wide)):
        ids = xp.flatnonzero(sel)
        if ids.shape[0]:
            out.append((width, xp.ascontiguousarray(ids.astype(xp.int32))))
    return out


def refine(xp, kernels, g, comm, prio, res_over_m2, theta, key, salt):
    """The refined partition of ``comm`` (device community ids) on level
    ``g``: device int32 sub-community ids, each named after one of its
    members. ``kernels`` = (louvain module, leiden module); ``prio`` (host)
    orders each community's members."""
    lmod, mod = kernels
    n = g.n
    cc, kc = gl.renumber(xp, comm)
    cc = xp.ascontiguousarray(cc[comm])
    members = xp.argsort(cc.astype(xp.int64) * n + xp.asarray(prio, xp.int64))
    members = xp.ascontiguousarray(members.astype(xp.int32))
    cptr = xp.zeros(kc + 1, xp.int64)
    xp.cumsum(bincount(xp, cc, kc), out=cptr[1:])
    a = gl.group_sums(xp, lmod, cc, g.k, kc)
    ext = xp.empty(n, xp.float64)
    launch = lmod.get_function("intra_weights")
    no_loop = xp.zeros(n, xp.float64)
    gl.launch_rows(
        launch, g.classes(), (g.indptr, g.indices, g.w, no_loop, cc, xp.ones(n, xp.uint8), ext)
    )
    ref = xp.arange(n, dtype=xp.int32)
    ra = g.k.copy()
    rsize = xp.ones(n, xp.int32)
    pos = xp.full(n, -1, xp.int32)
    # candidate scratch: community c uses slots cptr[c]:cptr[c + 1]
    buf_r = xp.empty(n, xp.int32)
    buf_w = xp.empty(n, xp.float64)
    buf_g = xp.empty(n, xp.float64)
    kernel = mod.get_function("refine_communities")
    # kernels/leiden.cu's Communities and Refined
    cs = dict(cptr=cptr, members=members, comm=cc, a=a)
    rf = dict(ref=ref, ra=ra, rsize=rsize, ext=ext, pos=pos, buf_r=buf_r, buf_w=buf_w, buf_g=buf_g)
    draw = (np.float64(theta), np.uint64(key), np.int64(salt))
    for width, comms in refine_classes(xp, cptr, cc, g.indptr[1:] - g.indptr[:-1]):
        count = int(comms.shape[0])
        kernel(
            gl._grid(count, BLOCK // width),
            (BLOCK,),
            (np.int32(count), comms, np.int32(width), g.bundle(res_over_m2), cs, rf, *draw),
        )
    return ref


class LeidenEngine(gl.LouvainEngine):
    """The GPU engine of the Leiden loop (:func:`nx_gpumatch.community.levels.leiden`):
    the GPU Louvain engine, which keeps every level on the device, plus
    :meth:`refine`. ``theta`` and ``key`` as in
    :func:`nx_gpumatch.cpu.leiden.leiden_levels`."""

    def __init__(
        self,
        indptr,
        indices,
        w,
        loop,
        rule,
        *,
        resolution,
        order,
        theta,
        key,
        table_bytes,
        backend,
        metric="modularity",
    ):
        self.theta = sch.checked_theta(theta)
        super().__init__(
            indptr,
            indices,
            w,
            loop,
            rule,
            resolution=resolution,
            order=order,
            table_bytes=table_bytes,
            backend=backend,
            node_weights=quality.node_weights(metric, indptr.shape[0] - 1),
        )
        self.resolution = quality.engine_resolution(metric, resolution, self.m2)
        self.drawn_order = metric == "cpm"  # see sch.CPM_PASS_REL_TOL
        self.leaves = metric == "cpm" and sch.CPM_LEAVE
        self.kernels = (self.mod, get_module("leiden", backend))
        self.key = int(key) & (2**64 - 1)

    def refine(self, comm, salt):
        prio = self.prio
        if self.drawn_order:
            order = sch.refinement_order(self.key, salt, self.n)
            prio = sch.vertex_order(order, self.n)[1]
        return refine(
            self.xp,
            self.kernels,
            self.g,
            comm,
            prio,
            self.resolution / self.m2,
            self.theta,
            self.key,
            salt,
        )


def leiden_levels(indptr, indices, w, loop, options=None, *, order=None, **changes):
    """The GPU engine's version of :func:`nx_gpumatch.cpu.leiden.leiden_levels`
    (same arguments and yields; ``table_bytes`` and ``backend`` of the
    :class:`~nx_gpumatch.community.schedule.CommunityOptions` as in
    :func:`nx_gpumatch.gpu.louvain.louvain_levels`)."""
    opts = sch.community_options(options, **changes)
    engine = LeidenEngine(
        indptr,
        indices,
        w,
        loop,
        # the device kernels wake every neighbour of a mover
        opts.sweep_rule(leiden=True, margins=False),
        resolution=opts.resolution,
        order=order,
        theta=opts.theta,
        key=opts.key,
        table_bytes=opts.table_bytes,
        backend=opts.backend,
        metric=opts.metric,
    )
    yield from levels.leiden(engine, *opts.pass_ends())
