"""Checks on input that numpy and scipy take on trust: the structure of a scipy
sparse matrix, the sizes a Matrix Market file declares, and the memory an input
would need. scipy's conversions (``tocoo``, ``tocsr``) index with the arrays
they are given, so a malformed matrix can crash the process there; a
Matrix Market reader allocates what the header declares before reading a line.
Both are checked here first, so bad input is a ValueError (an input too large
for the memory a MemoryError), never a crash.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib

import numpy as np

__all__ = ["check_compressed", "check_memory", "check_sparse", "mmread"]

# Estimated bytes to read a sparse input and build the package's structures,
# per row/column and per stored entry (the COO triples, the canonical edges, the
# symmetric CSR and its per-arc data). A floor, not a forecast: it only refuses
# an input that cannot fit.
BYTES_PER_VERTEX = 16
BYTES_PER_ENTRY = 64

# The shortest line of a coordinate entry ("1 1\n") and of a dense one ("1\n").
MIN_ENTRY_BYTES = {"coordinate": 4, "array": 2}
# The longest line a compressed file may spend on one entry: two 10-digit ids and
# two 25-character numbers (complex) take 74; the rest is room for blanks.
MAX_ENTRY_BYTES = 256
# deflate compresses at most about 1032:1, so a .gz file of k bytes holds at
# most 1032 k bytes of text.
MAX_GZIP_RATIO = 1032


def _int_array(a, what):
    a = np.asarray(a)
    if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
        raise ValueError(f"{what} must be a 1-D integer array, got {a.dtype} {a.shape}")
    return a


def check_compressed(indptr, indices, n_major, n_minor, what="matrix"):
    """ValueError unless ``indptr``/``indices`` are a well-formed compressed
    (CSR/CSC) structure of ``n_major`` rows over ``n_minor`` columns: ``indptr``
    has n_major + 1 entries, starts at 0, never decreases and ends at
    ``len(indices)``, whose entries lie in [0, n_minor). Returns the number of
    stored entries."""
    indptr = _int_array(indptr, f"{what}: indptr")
    indices = _int_array(indices, f"{what}: indices")
    if indptr.shape[0] != n_major + 1:
        raise ValueError(f"{what}: indptr has {indptr.shape[0]} entries, expected {n_major + 1}")
    if indptr[0] != 0:
        raise ValueError(f"{what}: indptr must start at 0, got {indptr[0]}")
    if np.any(indptr[1:] < indptr[:-1]):
        raise ValueError(f"{what}: indptr must never decrease")
    nnz = int(indptr[-1])
    if nnz != indices.shape[0]:
        raise ValueError(f"{what}: indptr ends at {nnz}, but there are {indices.shape[0]} indices")
    if nnz and (indices.min() < 0 or indices.max() >= n_minor):
        raise ValueError(f"{what}: indices must lie in [0, {n_minor})")
    return nnz


def check_sparse(A, what="matrix"):
    """ValueError unless scipy sparse matrix ``A`` is well formed, checked
    without scipy converting it (a conversion trusts the arrays)."""
    shape = A.shape
    if len(shape) != 2:
        raise ValueError(f"{what} must be 2-D, got shape {shape}")
    if min(shape) < 0:
        raise ValueError(f"{what} has a negative dimension: {shape}")
    fmt = A.format
    if fmt in ("csr", "csc", "bsr"):
        rows, cols = shape
        if fmt == "bsr":
            br, bc = A.blocksize
            if br < 1 or bc < 1 or rows % br or cols % bc:
                raise ValueError(f"{what}: blocksize {A.blocksize} does not divide {shape}")
            rows, cols = rows // br, cols // bc
        major, minor = (cols, rows) if fmt == "csc" else (rows, cols)
        nnz = check_compressed(A.indptr, A.indices, major, minor, what)
        data = np.asarray(A.data)
        if data.ndim != (3 if fmt == "bsr" else 1) or data.shape[0] != nnz:
            raise ValueError(f"{what}: data has shape {data.shape} for {nnz} stored entries")
    elif fmt == "coo":
        data = np.asarray(A.data)
        coords = A.coords if hasattr(A, "coords") else (A.row, A.col)
        if len(coords) != 2 or data.ndim != 1:
            raise ValueError(f"{what}: COO data must be 1-D with a row and a column array")
        for axis, (c, size) in enumerate(zip(coords, shape)):
            c = _int_array(c, f"{what}: COO {('row', 'col')[axis]}")
            if c.shape != data.shape:
                raise ValueError(f"{what}: COO coordinates and data differ in length")
            if c.size and (c.min() < 0 or c.max() >= size):
                raise ValueError(f"{what}: COO {('row', 'col')[axis]} ids must lie in [0, {size})")
    elif fmt == "dia":
        offsets = _int_array(A.offsets, f"{what}: DIA offsets")
        data = np.asarray(A.data)
        if data.ndim != 2 or data.shape[0] != offsets.shape[0]:
            raise ValueError(
                f"{what}: DIA data {data.shape} does not match {offsets.shape[0]} offsets"
            )
        if np.unique(offsets).shape[0] != offsets.shape[0]:
            raise ValueError(f"{what}: DIA offsets repeat")
    # lil and dok keep Python lists and dicts that scipy checks on every write.
    return A


# ------------------------------------------------------------------ memory
def available_memory():
    """Bytes this process can still allocate: the system's available memory,
    within the address-space limit (``ulimit -v``) if one is set; None if unknown."""
    avail = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if avail is None:
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            pass
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/statm") as f:
                used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            room = max(0, soft - used)
            avail = room if avail is None else min(avail, room)
    except (ImportError, OSError, ValueError, IndexError):
        pass
    return avail


def _gib(nbytes):
    return f"{nbytes / 2**30:.3g} GiB"


def check_memory(nbytes, what):
    """MemoryError (a clear one, before anything is allocated) when ``what``
    needs about ``nbytes`` and this process cannot have that much."""
    avail = available_memory()
    if avail is not None and nbytes > avail:
        raise MemoryError(f"{what} needs about {_gib(nbytes)}; only {_gib(avail)} is available")


def input_bytes(rows, cols, entries):
    """Lower estimate of the memory to read and build an input of this size."""
    return (rows + cols) * BYTES_PER_VERTEX + entries * BYTES_PER_ENTRY


# ----------------------------------------------------------- Matrix Market
_BANNER = re.compile(rb"%%matrixmarket\s+matrix\s+(\w+)\s+(\w+)\s+([\w-]+)", re.IGNORECASE)
# The header holds a banner, comments and a size line; a line longer than this
# is not one of them (scipy would read it whole).
_MAX_HEADER_LINE = 1 << 16


def _header(f, name):
    """(format, field, symmetry, sizes, header bytes) of a Matrix Market stream,
    or None where it is not one (scipy then says what is wrong)."""
    first = f.readline(_MAX_HEADER_LINE)
    m = _BANNER.match(first.strip())
    if m is None:
        return None
    fmt, field, symmetry = (x.decode("ascii", "replace").lower() for x in m.groups())
    used = len(first)
    while True:
        line = f.readline(_MAX_HEADER_LINE)
        used += len(line)
        if not line:
            return None
        if len(line) >= _MAX_HEADER_LINE and not line.endswith(b"\n"):
            raise ValueError(f"{name}: a header line is longer than {_MAX_HEADER_LINE} bytes")
        text = line.strip()
        if text and not text.startswith(b"%"):
            break
    try:
        sizes = [int(x) for x in text.split()]
    except ValueError:
        return None
    return fmt, field, symmetry, sizes, used


def _declared(name, head, capacity):
    """Check a parsed header against what the file can hold and what memory
    allows; the number of text bytes its entries may take (for a bound on
    decompression)."""
    fmt, field, symmetry, sizes, used = head
    if fmt not in MIN_ENTRY_BYTES or len(sizes) != (3 if fmt == "coordinate" else 2):
        return None
    if min(sizes) < 0:
        raise ValueError(f"{name}: the size line declares negative sizes {sizes}")
    rows, cols = sizes[:2]
    lines = sizes[2] if fmt == "coordinate" else rows * cols
    if fmt == "array" and symmetry != "general":  # one triangle, without the diagonal if skew
        lines = (rows * (rows - 1 if symmetry == "skew-symmetric" else rows + 1)) // 2
    need = lines * MIN_ENTRY_BYTES[fmt]
    if capacity is not None and need > capacity - used:
        raise ValueError(
            f"{name}: declares {rows} x {cols} with {lines} entries, which need at least "
            f"{need} bytes; the file can hold {max(0, capacity - used)} after its header"
        )
    # A symmetric file stores one triangle; the other is built from it.
    stored = lines * (2 if symmetry != "general" else 1)
    dense = rows * cols if fmt == "array" else 0
    check_memory(
        input_bytes(rows, cols, stored) + 8 * dense, f"{name} ({rows} x {cols}, {lines} entries)"
    )
    return used + lines * MAX_ENTRY_BYTES + _MAX_HEADER_LINE


class _Bounded(io.RawIOBase):
    """A binary stream that raises ValueError once more than ``limit`` bytes were
    read from it (a decompressed stream that grows past what its header allows),
    and that ends in a newline: scipy's reader (1.17) crashes the process on a
    last line with trailing blanks or a comment and no newline."""

    def __init__(self, f, limit, name):
        self._f = f
        self._limit = limit
        self._name = name
        self._read = 0
        self._last = b"\n"

    def readable(self):
        return True

    def readinto(self, b):
        try:
            data = self._f.read(len(b))
        except (EOFError, OSError, zlib.error) as exc:  # a truncated or corrupt .gz
            raise ValueError(f"{self._name}: not a readable gzip file ({exc})") from None
        self._read += len(data)
        if self._limit is not None and self._read > self._limit:
            raise ValueError(
                f"{self._name}: decompresses to more than {self._limit} bytes, more than "
                f"its declared size allows ({MAX_ENTRY_BYTES} bytes per entry)"
            )
        if data:
            self._last = data[-1:]
        elif self._last != b"\n":
            data = self._last = b"\n"
        b[: len(data)] = data
        return len(data)

    def close(self):
        self._f.close()
        super().close()


def _ends_in_newline(path):
    try:
        with open(path, "rb") as f:
            if f.seek(0, os.SEEK_END) == 0:
                return True
            f.seek(-1, os.SEEK_END)
            return f.read(1) == b"\n"
    except OSError:
        return True  # scipy reports the file's problem


def _checked_source(path):
    """The stream scipy should read ``path`` from (after checking its header),
    or ``path`` itself."""
    name = os.fspath(path)
    gz = name.lower().endswith(".gz")
    opener = (lambda: gzip.open(path, "rb")) if gz else (lambda: open(path, "rb"))
    try:
        size = os.path.getsize(path)
        with opener() as f:
            head = _header(f, name)
    except (OSError, EOFError, zlib.error) as exc:
        if gz and not isinstance(exc, FileNotFoundError):
            raise ValueError(f"{name}: not a readable gzip file ({exc})") from None
        return path  # scipy reports a missing or unreadable file
    limit = None
    if head is not None:
        limit = _declared(name, head, size * MAX_GZIP_RATIO if gz else size)
    if gz:
        return io.BufferedReader(_Bounded(opener(), limit, name))
    if not _ends_in_newline(path):
        return io.BufferedReader(_Bounded(open(path, "rb"), None, name))
    return path


def mmread(path):
    """A Matrix Market file (a path, ".gz" in any case, or an open file) as a
    scipy sparse array; its declared sizes are checked first against what the
    file can hold and the memory available, and a compressed file is
    decompressed with a bound."""
    import scipy.io
    import scipy.sparse as sp

    source = path
    if isinstance(path, str | os.PathLike):
        source = _checked_source(path)
    try:
        try:  # a sparse array: scipy's coming default, and no deprecation warning
            A = scipy.io.mmread(source, spmatrix=False)
        except TypeError:  # scipy before the keyword
            A = scipy.io.mmread(source)
    except OverflowError as exc:  # an integer beyond int64
        raise ValueError(f"{path}: {exc}") from None
    finally:
        if source is not path:
            source.close()
    if not sp.issparse(A):
        A = sp.coo_array(A)
    return A
