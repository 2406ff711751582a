"""Graph files by their format: Matrix Market, CSV, tab- or whitespace-separated
edge lists and Parquet. The format comes from the file's first bytes (Parquet's
magic number, a Matrix Market banner, the delimiter of the first data line), the
name deciding only where the content cannot (``.csv`` is read as CSV whatever its
first line holds).

An edge list has one edge per row: source, target and optionally a weight. Its
first row is a header when it holds the ``source`` and ``target`` names asked
for, or when some of its fields are not numbers where the next row's are;
otherwise the columns are named by position: ``source``, ``target``, ``weight``,
then ``column4``... Lines that start with ``#`` or ``%`` are comments. Text
files may be gzip-compressed.
"""

import csv
import gzip
import io
import mmap
import os

import numpy as np

FORMATS = (
    "Matrix Market (.mtx, .mtx.gz), CSV (.csv), tab- or whitespace-separated edge lists "
    "(.tsv, .txt, .edges, ...; these three also gzip-compressed) and Parquet (.parquet, needs "
    "pyarrow)"
)
PARQUET_EXTRA = 'pip install "nx-gpumatch[parquet]" (from a checkout: pip install ".[parquet]")'
POSITIONAL = ("source", "target", "weight")
COMMENTS = (b"#", b"%")
_SAMPLE = 1 << 16


GZIP = b"\x1f\x8b"


def _gzipped(path):
    with open(path, "rb") as f:
        return f.read(2) == GZIP


def _open(path):
    """The file's bytes, decompressed when it is gzip-compressed."""
    return gzip.open(path, "rb") if _gzipped(path) else open(path, "rb")


def _sample(path):
    with _open(path) as f:
        return f.read(_SAMPLE)


def _data_lines(text, limit=2):
    """The first ``limit`` lines that are neither blank nor comments, and how many
    lines precede the first of them."""
    lines, skipped = [], 0
    for line in text.split("\n"):
        if not line.strip() or line.lstrip().startswith(("#", "%")):
            if not lines:
                skipped += 1
            continue
        lines.append(line)
        if len(lines) == limit:
            break
    return lines, skipped


def file_format(path):
    """``"mtx"``, ``"parquet"``, ``"csv"`` or ``"text"`` (tab- or whitespace-
    separated); ValueError naming the supported formats for anything else."""
    name = os.fspath(path).lower()
    if name.endswith((".mtx", ".mtx.gz")):
        return "mtx"
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic == b"PAR1":
        return "parquet"
    if name.endswith((".parquet", ".pq")):
        raise ValueError(f"{path}: not a Parquet file (no Parquet magic number)")
    try:
        head = _sample(path)
    except (OSError, EOFError) as exc:  # a damaged gzip stream
        raise ValueError(f"{path}: cannot read it: {exc}") from None
    if head[:14].lower() == b"%%matrixmarket":
        return "mtx"
    name = name.removesuffix(".gz")
    cut = head.rfind(b"\n") if len(head) == _SAMPLE else len(head)
    try:
        text = head[: cut if cut > 0 else len(head)].decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or "\x00" in text:
        raise ValueError(f"{path}: cannot tell its format (not text). Supported: {FORMATS}")
    if name.endswith(".csv"):
        return "csv"
    if name.endswith(".tsv"):
        return "text"
    lines, _ = _data_lines(text, 1)
    return "csv" if lines and "," in lines[0] else "text"


def _is_number(field):
    try:
        float(field)
    except ValueError:
        return False
    return True


def _fields(line, fmt):
    if fmt == "csv":
        return next(csv.reader([line]), [])
    return line.split("\t") if "\t" in line else line.split()


def _has_header(lines, fmt, names):
    if not lines:
        return False
    first = [f.strip() for f in _fields(lines[0], fmt)]
    if names <= set(first):
        return True
    if len(lines) < 2:
        return False
    second = [f.strip() for f in _fields(lines[1], fmt)]
    return any(not _is_number(a) and _is_number(b) for a, b in zip(first, second))


class _WithoutComments(io.RawIOBase):
    """A binary file read without its comment lines (``#`` or ``%`` first); used only
    when a comment follows data, where pandas' own comment option would also cut
    labels that contain the character."""

    def __init__(self, f):
        self._lines = iter(f)
        self._rest = b""

    def readable(self):
        return True

    def readinto(self, b):
        while len(self._rest) < len(b):
            line = next(self._lines, None)
            if line is None:
                break
            if not line.lstrip().startswith(COMMENTS):
                self._rest += line
        data, self._rest = self._rest[: len(b)], self._rest[len(b) :]
        b[: len(data)] = data
        return len(data)


def _comment_after_data(path, skipped):
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return False
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            start = 0
            for _ in range(skipped):  # past the leading comment lines
                start = m.find(b"\n", start) + 1
            return any(m.find(b"\n" + c, start) >= 0 for c in COMMENTS)


def read_edge_list(path, source="source", target="target"):
    """A pandas DataFrame of the edge list in ``path`` (CSV, tab- or whitespace-
    separated, or Parquet; see the module notes for headers and comments)."""
    import pandas as pd

    fmt = file_format(path)
    if fmt == "mtx":
        raise ValueError(f"{path}: a Matrix Market file, not an edge list")
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ImportError(f"reading Parquet ({path}) needs pyarrow: {PARQUET_EXTRA}") from None
        return pd.read_parquet(path)
    text = _sample(path).decode("utf-8", errors="replace")
    lines, skipped = _data_lines(text)
    header = _has_header(lines, fmt, {source, target})
    if not lines:
        return pd.DataFrame({c: pd.Series(dtype=np.int64) for c in POSITIONAL[:2]})
    width = len(_fields(lines[0], fmt))
    names = None
    if not header:
        names = [*POSITIONAL, *(f"column{i + 1}" for i in range(3, width))][:width]
    kw = dict(header=0 if header else None, names=names)
    if fmt == "csv":
        kw["sep"] = ","
    else:
        kw["sep"] = "\t" if "\t" in lines[0] else r"\s+"
    if _gzipped(path) or _comment_after_data(path, skipped):
        with _open(path) as f:
            return pd.read_csv(io.BufferedReader(_WithoutComments(f)), **kw)
    return pd.read_csv(path, skiprows=skipped, **kw)
