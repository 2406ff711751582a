"""Each rank reads or generates only its share of the edges.

- :func:`read_mtx`: a Matrix Market coordinate file, split in byte ranges.
- :func:`read_edges_npy`: a ``.npy`` array of rows (u, v[, w]), rows split by
  offset through a memory map.
- :func:`random_edges`, :func:`rmat_edges`, :func:`planted_edges`: generators whose global graph
  depends on the seed only, not on the number of ranks: edges are drawn in
  fixed blocks, block k from its own stream ``default_rng([seed, k])``, and
  each rank draws a contiguous range of blocks.

All return ``(src, dst, weight)`` arrays of global ids for
:func:`nx_gpumatch.distributed.b_matching`; pass ``duplicates="max"`` with
:func:`read_mtx` (the returned dict says so) to match ``Graph.from_mtx``.
"""

import io
import os
import warnings

import numpy as np

from nx_gpumatch.distributed._comm import (
    DistributedError,
    allreduce_sum,
    check,
    get_comm,
    same,
)
from nx_gpumatch.distributed.partition import int_ids
from nx_gpumatch.generators import RMAT_PARAMS, planted_sizes
from nx_gpumatch.graph import _as_weights

__all__ = [
    "read_mtx",
    "read_edges_npy",
    "random_edges",
    "rmat_edges",
    "planted_edges",
    "BLOCK_EDGES",
]

BLOCK_EDGES = 1 << 16


def _share(total, comm):
    """[lo, hi) of this rank's share of ``total`` items, as even as possible."""
    P, r = comm.size, comm.rank
    return total * r // P, total * (r + 1) // P


# ----------------------------------------------------------- Matrix Market
def _excerpt(text, limit=60):
    """A line of a file for an error message: bytes escaped, long lines cut."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "backslashreplace")
    text = text.strip()
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _mtx_header(path):
    with open(path, "rb") as f:
        first = f.readline(4096)
        if first.startswith(b"\x1f\x8b"):
            raise ValueError(
                f"{path}: gzip-compressed files cannot be read by the distributed reader "
                "(each rank reads a byte range of the file): decompress it first "
                "(gunzip), or read it whole with Graph.from_mtx"
            )
        parts = first.decode("ascii", "replace").lower().split()
        if len(parts) != 5 or parts[0] != "%%matrixmarket" or parts[1] != "matrix":
            raise ValueError(
                f"{path}: not a Matrix Market matrix file (first line {_excerpt(first)})"
            )
        fmt, field, symmetry = parts[2:]
        if fmt != "coordinate":
            raise ValueError(
                f"{path}: only the coordinate format can be read in parts, not {fmt!r}"
            )
        if field not in ("real", "integer", "pattern", "double"):
            raise ValueError(f"{path}: field {field!r} is not supported (real, integer or pattern)")
        while True:
            line = f.readline()
            if not line:
                raise ValueError(f"{path}: no size line")
            if line.strip() and not line.lstrip().startswith(b"%"):
                break
        size = line.split()
        try:
            rows, cols, nnz = (int(x) for x in size)
            if min(rows, cols, nnz) < 0:
                raise ValueError
        except ValueError:
            raise ValueError(
                f"{path}: bad size line {_excerpt(line)} (expected rows, columns, entries)"
            ) from None
        if rows != cols:
            raise ValueError(f"{path}: adjacency matrix must be square, got {rows} x {cols}")
        return rows, nnz, field, f.tell()


def _parse_lines(data, field, path):
    width = 2 if field == "pattern" else 3
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a share without entries
            # C parser; it also checks that every line has as many numbers as the first
            # integer files read exactly, so that values float64 would round are found
            dtype = np.int64 if field == "integer" else np.float64
            arr = np.loadtxt(io.BytesIO(data), comments="%", ndmin=2, dtype=dtype)
    except ValueError as exc:
        _bad_line(data, width, path)
        raise ValueError(f"{path}: unreadable entry ({_excerpt(str(exc), 120)[1:-1]})") from None
    if arr.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    if arr.shape[1] != width:
        _bad_line(data, width, path)  # raises: every line is too wide or too narrow
    ids = arr[:, :2]
    if np.any(ids != np.round(ids)):
        raise ValueError(f"{path}: row and column indices must be integers")
    if width == 2:
        w = np.ones(arr.shape[0])
    else:
        w = np.abs(_as_weights(arr[:, 2], arr.shape[0], f"{path}: weight"))
    return ids[:, 0].astype(np.int64) - 1, ids[:, 1].astype(np.int64) - 1, w


def _bad_line(data, width, path):
    """Name the first malformed entry line (the parser's row numbers count from
    this rank's share, not from the file's start)."""
    for line in data.split(b"\n"):
        nums = line.split(b"%", 1)[0].split()
        if nums and len(nums) != width:
            raise ValueError(
                f"{path}: entry line {_excerpt(line)} has {len(nums)} numbers, expected {width}"
            )
        try:
            [float(x) for x in nums]
        except ValueError:
            raise ValueError(f"{path}: unreadable entry line {_excerpt(line)}") from None


def _read_mtx_range(path, comm):
    n, nnz, field, start = _mtx_header(path)
    end = os.path.getsize(path)
    a, b = _share(end - start, comm)
    a += start
    b += start
    with open(path, "rb") as f:
        # This rank takes the lines that start in [a, b).
        if a > start:
            f.seek(a - 1)
            if f.read(1) != b"\n":
                f.readline()  # the line in progress belongs to the previous rank
        else:
            f.seek(a)
        pos = f.tell()
        data = f.read(max(0, b - pos)) if pos < b else b""
        if data and not data.endswith(b"\n"):
            data += f.readline()
    src, dst, w = _parse_lines(data, field, path)
    if src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
        raise ValueError(f"{path}: indices must lie in [1, {n}]")
    return src, dst, w, n, nnz


def read_mtx(path, comm=None):
    """This rank's entries of a Matrix Market coordinate file: the bytes after
    the header are cut into equal ranges and each rank parses the lines that
    start in its range. As ``Graph.from_mtx``: |a_ij| is the weight, the
    diagonal is ignored, and a_ij, a_ji are one edge that keeps the larger
    value. Returns a dict (src, dst, weight, num_nodes, duplicates="max") to
    unpack into :func:`nx_gpumatch.distributed.b_matching`."""
    comm = get_comm(comm)
    path = os.fspath(path)
    src, dst, w, n, nnz = check(comm, _read_mtx_range, path, comm)
    # one file for all: ranks that read different size lines would disagree below
    same(comm, "the size line (vertices, entries)", (n, nnz))
    total = allreduce_sum(comm, src.shape[0])
    if total != nnz:  # a truncated file, or entries past the announced ones
        raise DistributedError(
            f"{path}: the size line announces {nnz} entries, the file has {total}"
        )
    return {"src": src, "dst": dst, "weight": w, "num_nodes": n, "duplicates": "max"}


# ------------------------------------------------------------ .npy edges
def _read_npy_range(path, comm):
    arr = np.load(path, mmap_mode="r")
    if arr.ndim != 2 or arr.shape[1] not in (2, 3):
        raise ValueError(f"{path}: expected an array of shape (m, 2) or (m, 3), got {arr.shape}")
    a, b = _share(arr.shape[0], comm)
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{path}: unsupported dtype {arr.dtype} (integers or floats)")
    rows = np.array(arr[a:b])
    ids = int_ids(rows[:, :2], f"{path}: vertex ids")
    # Weights as the shared-memory engine reads them: an integer float64 would
    # round (beyond 2**53) is refused, not rounded into a different matching.
    w = _as_weights(rows[:, 2], rows.shape[0], f"{path}: weight") if rows.shape[1] == 3 else None
    return ids[:, 0], ids[:, 1], w


def read_edges_npy(path, comm=None):
    """This rank's rows of a ``.npy`` edge list (shape (m, 3): u, v, w; or
    (m, 2) unweighted), read through a memory map at this rank's offset."""
    comm = get_comm(comm)
    src, dst, w = check(comm, _read_npy_range, os.fspath(path), comm)
    return {"src": src, "dst": dst, "weight": w}


# ------------------------------------------------------------- generators
def _blocks(m, comm, blocks):
    nblocks = -(-m // BLOCK_EDGES)
    if blocks is None:
        a, b = _share(nblocks, comm) if comm is not None else (0, nblocks)
    else:
        a, b = blocks
    return range(a, b)


def _block_size(m, k):
    return min(BLOCK_EDGES, m - k * BLOCK_EDGES)


def random_edges(n, m, seed=0, comm=None, *, weights="uniform", blocks=None):
    """This rank's share of m endpoint pairs drawn uniformly from n vertices
    (self-loops kept; the engine drops them; repeats keep the last weight).
    Weights uniform in [0, 1), or "integer" 1..100. The global edge list is
    the same for any number of ranks; ``comm=False`` draws all of it here."""
    src, dst, w = [], [], []
    comm = None if comm is False else get_comm(comm)
    for k in _blocks(m, comm, blocks):
        rng = np.random.default_rng([seed, k])
        c = _block_size(m, k)
        src.append(rng.integers(0, n, c, dtype=np.int64))
        dst.append(rng.integers(0, n, c, dtype=np.int64))
        w.append(_weights(rng, c, weights))
    return _cat(src, dst, w, n)


def rmat_edges(
    scale, edge_factor=8, kind="g500", seed=0, comm=None, *, weights="uniform", blocks=None
):
    """This rank's share of an R-MAT graph with 2**scale vertices and
    edge_factor * 2**scale drawn edges (quadrant probabilities as in
    ``nx_gpumatch.generators.RMAT_PARAMS``). Vertex ids are scrambled by a
    seeded bijection of [0, 2**scale), so no rank needs a permutation table.
    The same global graph for any number of ranks; ``comm=False``: all here."""
    a, b, c, d = RMAT_PARAMS[kind] if isinstance(kind, str) else kind
    if abs(a + b + c + d - 1) > 1e-9:
        raise ValueError("R-MAT probabilities must sum to 1")
    n = 1 << scale
    m = edge_factor * n
    comm = None if comm is False else get_comm(comm)
    src, dst, w = [], [], []
    for k in _blocks(m, comm, blocks):
        rng = np.random.default_rng([seed, k])
        cnt = _block_size(m, k)
        s = np.zeros(cnt, np.int64)
        t = np.zeros(cnt, np.int64)
        for bit in range(scale):
            r = rng.random(cnt)
            right = (r >= a) & (r < a + b) | (r >= a + b + c)
            down = r >= a + b
            s |= down.astype(np.int64) << bit
            t |= right.astype(np.int64) << bit
        src.append(_scramble(s, scale, seed))
        dst.append(_scramble(t, scale, seed))
        w.append(_weights(rng, cnt, weights))
    return _cat(src, dst, w, n)


def planted_edges(
    n, k, d_in, d_out, seed=0, comm=None, *, skew=0.8, weights="uniform", blocks=None
):
    """This rank's share of a planted-partition graph: k communities of skewed
    sizes (:func:`nx_gpumatch.generators.planted_sizes`), each a range of
    consecutive ids, community 0 first; n * d_in / 2 pairs drawn inside the
    community of a uniform first end, then n * d_out / 2 pairs drawn from the
    whole graph; self-loops dropped, repeated pairs kept (the last weight
    wins, see :func:`~nx_gpumatch.distributed.partition_edges`). Weights as
    :func:`random_edges`. The planted community of vertex v is
    ``np.searchsorted(np.cumsum(planted_sizes(n, k, skew)), v, side="right")``.
    As the ids follow the communities, a block partition cuts few edges when
    d_out is small. The same global graph for any number of ranks;
    ``comm=False``: all here."""
    if not 0 <= n < 2**31:
        raise ValueError(f"n must lie in [0, 2**31), got {n}")
    if not (0 <= d_in < np.inf and 0 <= d_out < np.inf):  # NaN fails too
        raise ValueError(f"d_in and d_out must be finite and >= 0, got {d_in}, {d_out}")
    sizes = planted_sizes(n, k, skew)
    start = np.concatenate([[0], np.cumsum(sizes)])
    m_in, m_out = int(n * d_in / 2), int(n * d_out / 2)
    comm = None if comm is False else get_comm(comm)
    src, dst, w = [], [], []
    for b in _blocks(m_in + m_out, comm, blocks):
        rng = np.random.default_rng([seed, b])
        cnt = _block_size(m_in + m_out, b)
        u = rng.integers(0, n, cnt, dtype=np.int64)
        at = rng.random(cnt)
        v = rng.integers(0, n, cnt, dtype=np.int64)
        inside = min(cnt, max(0, m_in - b * BLOCK_EDGES))  # the block's first pairs
        c = np.searchsorted(start, u[:inside], side="right") - 1
        v[:inside] = start[c] + (at[:inside] * sizes[c]).astype(np.int64)
        wb = _weights(rng, cnt, weights)
        keep = u != v
        src.append(u[keep])
        dst.append(v[keep])
        w.append(wb[keep])
    return _cat(src, dst, w, n)


def _scramble(x, scale, seed):
    """A seeded bijection of [0, 2**scale): odd multiplications, additions and
    xor-shifts modulo 2**scale, each invertible."""
    if scale == 0:
        return x
    mask = np.uint64((1 << scale) - 1)
    keys = np.random.default_rng([seed, 0x5CA]).integers(0, 2**62, 6, dtype=np.uint64)
    y = x.astype(np.uint64)
    sh = np.uint64(max(1, scale // 2))
    for i in range(3):
        y = (y * (keys[2 * i] | np.uint64(1))) & mask
        y = (y + keys[2 * i + 1]) & mask
        y ^= y >> sh
    return y.astype(np.int64)


def _weights(rng, m, kind):
    if kind is None:
        return np.ones(m)
    if kind == "uniform":
        return rng.random(m)
    if kind == "integer":
        return rng.integers(1, 101, m).astype(np.float64)
    raise ValueError(f"unknown weights {kind!r}")


def _cat(src, dst, w, n):
    if not src:
        z = np.zeros(0, np.int64)
        return {"src": z, "dst": z.copy(), "weight": np.zeros(0), "num_nodes": n}
    return {
        "src": np.concatenate(src),
        "dst": np.concatenate(dst),
        "weight": np.concatenate(w),
        "num_nodes": n,
    }
