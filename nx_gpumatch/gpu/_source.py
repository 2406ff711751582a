"""Finding the CUDA sources, their compile-time defines, and reading kernel
signatures out of them.

Shared by the CuPy loader, the CPU emulation and the NVRTC compile test, so all
three see the same files and defines and agree on every kernel's parameter
types. Nothing here imports CuPy or the emulation.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import re
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path

import numpy as np

__all__ = [
    "kernels_dir",
    "kernel_files",
    "kernel_source",
    "included_headers",
    "keyed_source",
    "problem_defines",
    "define_options",
    "parse_kernels",
    "Param",
    "strip_comments",
    "check_args",
    "struct_values",
    "pack_struct",
]


@functools.cache
def kernels_dir() -> Path:
    """Directory of the ``*.cu`` files: the source tree's ``kernels/`` when this
    package runs from a source checkout (so an editable install elsewhere never
    shadows the sources next to this file), else the ``nx_gpumatch.kernels``
    package data of an installed wheel."""
    root = Path(__file__).resolve().parents[2]
    d = root / "kernels"
    if (root / "pyproject.toml").is_file() and (d / "cuda_emu.h").is_file():
        return d
    try:
        d = Path(str(files("nx_gpumatch.kernels")))
        if d.is_dir() and any(d.glob("*.cu")):
            return d
    except Exception:  # nx_gpumatch.kernels is not importable: nothing installed
        pass
    raise FileNotFoundError(
        "cannot find the CUDA kernel sources (package nx_gpumatch.kernels or <repo>/kernels)"
    )


def kernel_files() -> list[Path]:
    """Every ``kernels/*.cu``, sorted by name."""
    return sorted(kernels_dir().glob("*.cu"))


def kernel_source(problem: str) -> str:
    path = kernels_dir() / f"{problem}.cu"
    if not path.is_file():
        have = ", ".join(p.stem for p in kernel_files()) or "none"
        raise FileNotFoundError(f"no kernel file {path.name} (available: {have})")
    return path.read_text()


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def included_headers(src: str) -> list[Path]:
    """The headers of ``kernels/`` that ``src`` includes, directly or through
    another one, each once, in the order they are first met."""
    out, todo = [], [src]
    while todo:
        for name in _INCLUDE.findall(strip_comments(todo.pop())):
            path = kernels_dir() / name
            if path.is_file() and path not in out:
                out.append(path)
                todo.append(path.read_text())
    return out


def keyed_source(src: str) -> str:
    """``src`` with a closing comment naming the SHA-256 of every header it
    includes. CuPy's on-disk cache keys a ``RawModule`` on its code text (and
    options), not on the files it includes: without this an edited
    ``common.cuh``, or a new package version with one, would reuse cubins built
    from the old header. The comment comes last, so line numbers hold."""
    tags = [f"{p.name} {hashlib.sha256(p.read_bytes()).hexdigest()}" for p in included_headers(src)]
    if not tags:
        return src
    return src + ("" if src.endswith("\n") else "\n") + "// headers: " + "; ".join(tags) + "\n"


def problem_defines(problem: str) -> dict[str, int]:
    """The ``-D`` defines ``kernels/<problem>.cu`` is compiled with: the
    ``DEFINES`` dict of its host module ``nx_gpumatch.gpu.<problem>`` (empty
    when there is none), so the numbers the host code launches with and the
    ones the kernels are built with are the same objects."""
    try:
        mod = importlib.import_module(f"nx_gpumatch.gpu.{problem}")
    except ModuleNotFoundError as exc:
        if exc.name != f"nx_gpumatch.gpu.{problem}":
            raise
        return {}
    return dict(getattr(mod, "DEFINES", {}))


def define_options(defines) -> tuple[str, ...]:
    """``("-DNAME=value", ...)`` in name order (NVRTC and g++ take the same form)."""
    out = []
    for name, value in sorted(dict(defines).items()):
        if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name):
            raise ValueError(f"define names are upper-case C identifiers, got {name!r}")
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"define {name} must be an int, got {value!r}")
        out.append(f"-D{name}={int(value)}")
    return tuple(out)


def strip_comments(src: str) -> str:
    """Source with comments blanked (newlines kept, so line numbers hold)."""

    def blank(m):
        s = m.group(0)
        if s.startswith("/"):
            return re.sub(r"[^\n]", " ", s)
        return s  # a string literal: keep

    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', blank, src, flags=re.S)


# Type codes: kind letter (i signed, u unsigned, f float, b bool, v void) and size.
_SCALARS = {
    "bool": "b1",
    "char": "i1",
    "signed char": "i1",
    "unsigned char": "u1",
    "short": "i2",
    "short int": "i2",
    "signed short": "i2",
    "unsigned short": "u2",
    "unsigned short int": "u2",
    "int": "i4",
    "signed": "i4",
    "signed int": "i4",
    "unsigned": "u4",
    "unsigned int": "u4",
    "long": "i8",
    "long int": "i8",
    "unsigned long": "u8",
    "unsigned long int": "u8",
    "long long": "i8",
    "long long int": "i8",
    "signed long long": "i8",
    "unsigned long long": "u8",
    "unsigned long long int": "u8",
    "float": "f4",
    "double": "f8",
    "void": "v0",
    "int8_t": "i1",
    "uint8_t": "u1",
    "int16_t": "i2",
    "uint16_t": "u2",
    "int32_t": "i4",
    "uint32_t": "u4",
    "int64_t": "i8",
    "uint64_t": "u8",
    "size_t": "u8",
    "ptrdiff_t": "i8",
}
_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict"}


class Param:
    """One kernel parameter (or one field of a struct parameter): ``code`` is
    the type code ("i4", "f8", ...; "p" in front for a pointer; "s" and the
    size for a struct; None when the type is not one of the known ones).
    A struct parameter has ``fields``, a Param per field, and ``dtype``, the
    NumPy structured dtype of its layout (pointers as uint64)."""

    __slots__ = ("name", "ctype", "code", "fields", "dtype")

    def __init__(self, name, ctype, code, fields=None):
        self.name = name
        self.ctype = ctype
        self.code = code
        self.fields = fields
        self.dtype = None
        if fields is not None:
            self.dtype = _struct_dtype(ctype, fields)
            self.code = f"s{self.dtype.itemsize}"

    @property
    def is_pointer(self):
        return self.code is not None and self.code.startswith("p")

    @property
    def is_struct(self):
        return self.fields is not None

    def __repr__(self):
        return f"Param({self.name!r}, {self.ctype!r}, {self.code!r})"


def _struct_dtype(ctype, fields):
    """The layout of a struct with ``fields`` under the C rules (each field at
    its natural alignment, the size a multiple of the largest): NumPy's
    ``align=True`` layout, which nvcc and g++ share for these types."""
    formats = []
    for f in fields:
        if f.code is None or f.code[0] in "sv":
            raise ValueError(
                f"struct {ctype}: field {f.ctype} {f.name} is not a pointer or a plain scalar "
                "(a kernel struct holds only those)"
            )
        formats.append(np.uint64 if f.is_pointer else np.dtype(f.code))
    return np.dtype({"names": [f.name for f in fields], "formats": formats}, align=True)


_KERNEL = re.compile(
    r'extern\s+"C"\s+__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+'
    r"(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(([^)]*)\)\s*\{"
)
_STRUCT = re.compile(r"\bstruct\s+(\w+)\s*\{([^{}]*)\}\s*;")


def _param(text, structs=None):
    text = " ".join(text.replace("*", " * ").replace("&", " & ").split())
    words = text.split(" ")
    name = words[-1]
    stars = words.count("*")
    base = " ".join(w for w in words[:-1] if w not in _QUALIFIERS and w != "*")
    ctype = text[: -len(name)].strip()
    base = base[len("struct ") :] if base.startswith("struct ") else base
    if structs and stars == 0 and base in structs:
        return Param(name, base, None, fields=structs[base])
    code = _SCALARS.get(base)
    if stars == 1 and code is not None:
        code = "p" + code
    elif stars > 1:
        code = "pp8"
    return Param(name, ctype, code)


def _struct_fields(body):
    """The fields of a struct body, a Param each; None when one is not a
    plain ``type name;`` declaration (such a struct cannot be a kernel
    parameter)."""
    fields = []
    for decl in body.split(";"):
        decl = decl.strip()
        if not decl:
            continue
        if re.search(r"[,\[\]:=(){}]", decl) or not re.search(r"\w\s*$", decl):
            return None
        fields.append(_param(decl))
    return fields


def parse_structs(src: str) -> dict[str, list[Param]]:
    """``{struct name: [Param, ...]}`` for the structs declared in ``src`` and
    in the headers of ``kernels/`` it includes, those made of plain
    ``type name;`` fields only (the kind a kernel may take by value)."""
    out = {}
    for text in [src] + [h.read_text() for h in included_headers(src)]:
        for m in _STRUCT.finditer(strip_comments(text)):
            fields = _struct_fields(m.group(2))
            if fields is not None:
                out[m.group(1)] = fields
    return out


def parse_kernels(src: str) -> dict[str, list[Param]]:
    """``{kernel name: [Param, ...]}`` for every ``extern "C" __global__``
    definition. A ``__global__`` function without ``extern "C"`` is an error:
    its name would be mangled and the launcher could not find it. A parameter
    whose type is a struct declared in the file or its headers (see
    :func:`parse_structs`) has that struct's fields, read from the source."""
    code = strip_comments(src)
    structs = parse_structs(src)
    kernels = {}
    for m in _KERNEL.finditer(code):
        body = m.group(2).strip()
        params = [] if body in ("", "void") else [_param(p, structs) for p in body.split(",")]
        kernels[m.group(1)] = params
    n_global = len(re.findall(r"\b__global__\b", code))
    if n_global != len(kernels):
        raise ValueError(
            f'{n_global} __global__ functions but {len(kernels)} parsed as extern "C" kernel definitions: '
            'write each kernel as extern "C" __global__ void name(...) { ... }'
        )
    return kernels


# ------------------------------------------------------------ argument checks
def _dtype_fits(code, dtype):
    """Does an array of ``dtype`` fit a pointer to type ``code``?"""
    kind, size = code[0], int(code[1:])
    if kind == "v":
        return True
    if kind == "b":
        return dtype == np.bool_
    if kind == "u" and size == 1 and dtype == np.bool_:
        return True
    return dtype.kind == kind and dtype.itemsize == size


def struct_values(where, p, a):
    """The values of struct parameter ``p`` from ``a``, a mapping (or a
    namedtuple) of exactly its field names: {field name: value}."""
    if hasattr(a, "_asdict"):
        a = a._asdict()
    if not isinstance(a, Mapping):
        raise TypeError(
            f"{where}: a struct is passed as a mapping of its fields by name, got {type(a).__name__}"
        )
    names = [f.name for f in p.fields]
    missing = [n for n in names if n not in a]
    extra = sorted(str(k) for k in a if k not in names)
    if missing or extra:
        raise TypeError(
            f"{where}: fields are ({', '.join(names)})"
            + (f"; missing {', '.join(missing)}" if missing else "")
            + (f"; unknown {', '.join(extra)}" if extra else "")
        )
    return a


def check_args(name, params, args, xp):
    """Raise TypeError unless ``args`` match the kernel's parameters: arrays of
    ``xp`` (C-contiguous, of the declared element type; None for a null
    pointer) and scalars as NumPy scalars of the declared type (a Python int
    may stand for a 64-bit integer, a float for a double, a bool for a bool, as
    CuPy passes them). A struct parameter is a mapping of its fields by name,
    each held to the same rules. A mismatch would be silent corruption on the
    GPU."""
    if len(args) != len(params):
        raise TypeError(
            f"kernel {name} takes {len(params)} arguments ({', '.join(p.name for p in params)}), got {len(args)}"
        )
    for i, (p, a) in enumerate(zip(params, args)):
        where = f"kernel {name}, argument {i} ({p.ctype} {p.name})"
        if not p.is_struct:
            _check_value(where, p, a, xp)
            continue
        values = struct_values(where, p, a)
        for f in p.fields:
            _check_value(
                f"{where}, field {p.name}.{f.name} ({f.ctype} {f.name})", f, values[f.name], xp
            )


def _check_value(where, p, a, xp):
    if p.code is None:
        return  # a type the parser does not know: passed through unchecked
    if p.is_pointer:
        if a is None:
            return
        if not isinstance(a, xp.ndarray):
            got = f"{type(a).__module__.split('.')[0]}.{type(a).__name__}"
            raise TypeError(f"{where}: expected a device array ({xp.__name__}), got {got}")
        if not a.flags.c_contiguous:
            raise TypeError(f"{where}: array must be C-contiguous")
        if p.code != "pp8" and not _dtype_fits(p.code[1:], a.dtype):
            raise TypeError(f"{where}: array dtype {a.dtype} does not match the parameter type")
        return
    kind, size = p.code[0], int(p.code[1:])
    if isinstance(a, np.generic):
        dt = a.dtype
        if dt.kind != kind or dt.itemsize != size:
            raise TypeError(
                f"{where}: got a numpy {dt}, expected a numpy scalar matching {p.ctype}"
            )
    elif isinstance(a, bool):
        if kind != "b":
            raise TypeError(f"{where}: got a bool")
    elif isinstance(a, int):
        # CuPy passes a Python int as a 64-bit signed integer
        if not (kind in "iu" and size == 8):
            np_name = {"i": "int", "u": "uint", "f": "float"}.get(kind, "?") + str(8 * size)
            raise TypeError(
                f"{where}: a Python int is passed as 64 bits; pass numpy.{np_name}(...) instead"
            )
        if not -(2**63) <= a < 2**63:
            raise TypeError(f"{where}: {a} does not fit in 64 bits")
    elif isinstance(a, float):
        if not (kind == "f" and size == 8):
            raise TypeError(
                f"{where}: a Python float is passed as a double; pass numpy.float32(...) instead"
            )
    else:
        raise TypeError(f"{where}: unsupported argument type {type(a).__name__}")


def pack_struct(p, values, address):
    """Struct parameter ``p`` packed as the kernel receives it: a NumPy
    array of one record of ``p.dtype`` (the bytes a by-value argument
    copies). ``values`` as :func:`check_args` accepted them; a pointer field
    holds ``address(field, array)`` (0 for None)."""
    rec = np.zeros(1, p.dtype)
    for f in p.fields:
        v = values[f.name]
        if f.is_pointer:
            rec[f.name] = 0 if v is None else address(f, v)
        else:
            # same bits as a direct argument: a Python int is 64 bits two's complement
            rec[f.name] = np.asarray(v).astype(p.dtype.fields[f.name][0])
    return rec
