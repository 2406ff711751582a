"""The exact matching's tables: the columns of the node and float tables, the
labels and event kinds, and :class:`Search`, the bundle of arrays that the
search's kernels share (see the package's doc for the layout)."""

from collections import namedtuple

from numba import types

from nx_gpumatch.cpu import njit

# Argument types of small helpers called with constants and with int32 or int64
# ids: one explicit signature each, instead of one compiled copy per literal
# value and integer width. Helpers are built with no_cpython_wrapper: they are
# only called from jitted code, so no Python entry point is compiled for them.
# The search's larger steps are such helpers too (compiled without reference
# counting, as the search is), not inlined by Numba: inlining copied and typed
# each one again at every call site, which made the first call's compile
# longer, and LLVM still inlines where it pays.
i8, f8 = types.int64, types.float64
I1, I2, F2 = types.int32[::1], types.int32[:, ::1], types.float64[:, ::1]

# columns of the int32 node table (rows are vertex ids 0..n-1 and blossom ids n..2n-1)
(
    PARENT,
    NEXT,
    PREV,
    EA,
    EB,
    LABEL,
    TROOT,
    LFROM,
    LTO,
    BASE,
    BCHILD,
    ARGMIN,
    TNEXT,
    TPREV,
    VFIRST,
    VLAST,
    OWNER,
    BNAME,
    BSIZE,
) = range(19)
NROWS = 19
# Duals and slacks add a few weights (times 4): larger weights are scaled down
# by a power of two first, which leaves every comparison as it was.
SCALE_ABOVE_EXP = 1000
# columns of the float table (rows 0..n-1, one 64-byte line each): Y (vertex key), A (offset of the
# vertex-set name), B2 (a free vertex's earliest pushed S-edge time), hi and lo parts; NLAB (label of
# the top-level blossom owning the name) and VNM (the vertex's name), mirrored here so that scanning
# an edge touches one line per endpoint
YH, YL, AH, AL, B2H, B2L, NLAB, VNM = range(8)
NFCOLS = 8
# blossom rows (ids >= n) hold only the blossom dual, in the first two columns
ZH, ZL = 0, 1
# labels
FREE, SLAB, TLAB = 0, 1, 2
# heap entry kinds (low two bits of the payload); ties pop in this order
EV_DUAL, EV_EDGE, EV_BLOSSOM = 0, 1, 2
# heap meta slots
HSIZE, HCAP, HOVER = 0, 1, 2

Search = namedtuple(
    "Search",
    [
        "n",  # vertices (blossom ids are n..2n-1)
        "g",  # (indptr, indices, arc_edge, awl): CSR with each arc's weight (times 4)
        "esrc",  # edge list: first end,
        "edst",  # second end,
        "wl",  # weight (times 4, the lo part of the pair)
        "c",  # hi part of every edge's weight: 4 with maxcardinality, else 0
        "nd",  # int32 node table (columns PARENT..BSIZE)
        "fd",  # float table (columns YH..VNM; blossom rows ZH, ZL)
        "vname",  # each vertex's name (the set it is renamed with)
        "vnext",  # chain through the vertices of each blossom
        "mate",
        "head",  # first blossom of each tree (by root)
        "freeids",  # unused blossom ids (a stack)
        "pv",  # scratch of form_blossom: the path from v's side,
        "pu",  # from u's side,
        "cyc",  # and the cycle of children
        "buf",  # T-children that must be rescanned
        "chain",  # scratch of the augmentation: nesting chain,
        "stk",  # and stack of (blossom, vertex) pairs
        "mark",  # stamps of the common-ancestor search
        "best",  # scratch of rebuild
        "meta",  # heap size, capacity, overflow flag
        "H",  # the event heap
    ],
)
Search.__doc__ = """The arrays (and sizes) of one blossom search, as one argument of its kernels."""


@njit(cache=True, inline="always")
def sign(label):
    if label == SLAB:
        return -1.0
    if label == TLAB:
        return 1.0
    return 0.0


@njit(cache=True, inline="always")
def before(ah, al, ak, bh, bl, bk):
    if ah != bh:
        return ah < bh
    if al != bl:
        return al < bl
    return ak < bk
