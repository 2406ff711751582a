"""Finding the CUDA sources and reading kernel signatures out of them.

Shared by the CuPy loader, the CPU emulation and the NVRTC compile test, so all
three see the same files and agree on every kernel's parameter types.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

__all__ = [
    "kernels_dir",
    "kernel_files",
    "kernel_source",
    "parse_kernels",
    "Param",
    "strip_comments",
]


@functools.cache
def kernels_dir() -> Path:
    """Directory of the shipped ``*.cu`` files: the ``nx_gpumatch.kernels``
    package data in an installed wheel, else the source tree's ``kernels/``."""
    try:
        from importlib.resources import files

        d = Path(str(files("nx_gpumatch.kernels")))
        if d.is_dir() and any(d.glob("*.cu")):
            return d
    except Exception:  # not installed as a package (source tree, editable install)
        pass
    d = Path(__file__).resolve().parents[2] / "kernels"
    if d.is_dir():
        return d
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
    """One kernel parameter: ``code`` is the type code ("i4", "f8", ...; "p" in
    front for a pointer, None when the type is not one of the known ones)."""

    __slots__ = ("name", "ctype", "code")

    def __init__(self, name, ctype, code):
        self.name = name
        self.ctype = ctype
        self.code = code

    @property
    def is_pointer(self):
        return self.code is not None and self.code.startswith("p")

    def __repr__(self):
        return f"Param({self.name!r}, {self.ctype!r}, {self.code!r})"


_KERNEL = re.compile(
    r'extern\s+"C"\s+__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+'
    r"(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(([^)]*)\)\s*\{"
)


def _param(text):
    text = " ".join(text.replace("*", " * ").replace("&", " & ").split())
    words = text.split(" ")
    name = words[-1]
    stars = words.count("*")
    base = " ".join(w for w in words[:-1] if w not in _QUALIFIERS and w != "*")
    code = _SCALARS.get(base)
    if stars == 1 and code is not None:
        code = "p" + code
    elif stars > 1:
        code = "pp8"
    return Param(name, text[: -len(name)].strip(), code)


def parse_kernels(src: str) -> dict[str, list[Param]]:
    """``{kernel name: [Param, ...]}`` for every ``extern "C" __global__``
    definition. A ``__global__`` function without ``extern "C"`` is an error:
    its name would be mangled and the launcher could not find it."""
    code = strip_comments(src)
    kernels = {}
    for m in _KERNEL.finditer(code):
        body = m.group(2).strip()
        params = [] if body in ("", "void") else [_param(p) for p in body.split(",")]
        kernels[m.group(1)] = params
    n_global = len(re.findall(r"\b__global__\b", code))
    if n_global != len(kernels):
        raise ValueError(
            f'{n_global} __global__ functions but {len(kernels)} parsed as extern "C" kernel definitions: '
            'write each kernel as extern "C" __global__ void name(...) { ... }'
        )
    return kernels
