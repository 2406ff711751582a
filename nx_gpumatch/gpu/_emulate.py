"""Running ``kernels/*.cu`` on the CPU: the file is compiled as C++20 with
``cuda_emu.h`` force-included, and every block's threads run as real, concurrent
OS threads (see that header for what is checked).

Build products are cached by content hash in a per-user cache directory. One
copy of the shared library is loaded per block that runs at the same time
("slot"): each copy has its own ``static`` variables, which is what
``__shared__`` becomes, so concurrently running blocks never share them.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

from nx_gpumatch.gpu import _strict
from nx_gpumatch.gpu._source import (
    check_args,
    define_options,
    kernel_source,
    kernels_dir,
    pack_struct,
    parse_kernels,
    problem_defines,
    strip_comments,
    struct_values,
)

__all__ = [
    "EmulationError",
    "EmulationHang",
    "EmuModule",
    "options",
    "build",
    "sanitize_mode",
    "sanitizer_env",
]

_BUILD_VERSION = "3"  # bump when the generated wrapper changes
CXXFLAGS = (
    "-std=c++20",
    "-O1",
    "-pthread",
    "-fPIC",
    "-shared",
    "-Wall",
    "-Wextra",
    "-Wno-unused-parameter",
)
# NX_GPUMATCH_EMU_SANITIZE=thread: built for ThreadSanitizer, with CUDA's
# ordering (relaxed atomics, warp exchanges that order no memory; see
# cuda_emu.h); =address: AddressSanitizer and UBSan, any finding fatal; the
# process must have the runtime loaded (sanitizer_env). =poison: garbage in
# shared memory at each block start, blocks in reverse or random order, -O3.
SANITIZE_FLAGS = {
    "": (),
    "thread": ("-fsanitize=thread", "-g"),
    "address": (
        "-fsanitize=address,undefined",
        "-fno-sanitize-recover=all",
        "-fno-omit-frame-pointer",
        "-g",
    ),
    "poison": ("-O3", "-DNXG_EMU_POISON=1"),
}
SANITIZER_RUNTIME = {"thread": "libtsan.so", "address": "libasan.so"}
# exit status of a process whose emulated kernel a sanitizer stopped
SANITIZER_EXITCODE = 66
MAX_THREADS_PER_BLOCK = 1024
MAX_DYNAMIC_SHARED = 48 * 1024


class EmulationError(RuntimeError):
    """A kernel misbehaved in emulation (it would misbehave on the GPU too)."""


class EmulationHang(EmulationError):
    """A deadlock, or a launch that ran past its time limit."""


# ------------------------------------------------------------------ options
_OPTIONS = {
    # seconds one launch may take
    "timeout": float(os.environ.get("NX_GPUMATCH_EMU_TIMEOUT", "60")),
    # chance (in 1/1024) that a thread yields at each emulated primitive
    "chaos": int(os.environ.get("NX_GPUMATCH_EMU_CHAOS", "0")),
    # blocks that run at the same time
    "slots": int(os.environ.get("NX_GPUMATCH_EMU_SLOTS", "2")),
    "seed": 0,
    # order blocks are handed out in: forward, reverse, random, or (poison
    # mode's default) alternate, reverse and random on alternate launches
    "order": os.environ.get("NX_GPUMATCH_EMU_ORDER", ""),
}
_ORDERS = ("forward", "reverse", "random", "alternate")


@contextlib.contextmanager
def options(**kw):
    """Temporarily change emulation settings: ``timeout`` (s), ``chaos`` (0-1024),
    ``slots`` (concurrent blocks), ``seed`` (of the chaos yields, the poison
    pattern and random block orders), ``order`` (of blocks: forward, reverse,
    random, alternate; empty: forward, alternate in poison mode)."""
    bad = set(kw) - set(_OPTIONS)
    if bad:
        raise TypeError(f"unknown emulation options {sorted(bad)}")
    old = dict(_OPTIONS)
    _OPTIONS.update(kw)
    try:
        yield dict(_OPTIONS)
    finally:
        _OPTIONS.clear()
        _OPTIONS.update(old)


# ------------------------------------------------------------------ building
def cache_dir() -> Path:
    """Where built libraries go: $NX_GPUMATCH_CACHE_DIR, else the user's cache
    directory, else a per-user temporary directory."""
    candidates = []
    if os.environ.get("NX_GPUMATCH_CACHE_DIR"):
        candidates.append(Path(os.environ["NX_GPUMATCH_CACHE_DIR"]))
    xdg = os.environ.get("XDG_CACHE_HOME")
    candidates.append((Path(xdg) if xdg else Path.home() / ".cache") / "nx_gpumatch" / "emulate")
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    candidates.append(Path(tempfile.gettempdir()) / f"nx_gpumatch-{uid}" / "emulate")
    for d in candidates:
        try:
            d.mkdir(parents=True, exist_ok=True)
            probe = d / f".probe-{os.getpid()}"
            probe.write_bytes(b"")
            probe.unlink()
            return d
        except OSError:
            continue
    raise EmulationError(
        "no writable cache directory for emulation builds (set NX_GPUMATCH_CACHE_DIR)"
    )


def _compiler():
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise EmulationError(
            "CPU emulation of CUDA kernels needs a C++20 compiler (g++ >= 10); none found (set CXX)"
        )
    return cxx


@contextlib.contextmanager
def _atomic_output(path: Path):
    """A temporary name that replaces ``path`` on success (safe when several
    processes build the same thing at once)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _rewrite(src: str) -> str:
    """The few source changes C++ needs: ``extern __shared__ T x[];`` becomes a
    pointer to the slot's dynamic shared buffer (same line, so line numbers hold)."""

    def dyn(m):
        ctype = re.sub(r"__align__\s*\([^)]*\)", "", m.group(1)).strip()
        return f"{ctype}* const {m.group(2)} = reinterpret_cast<{ctype}*>(nxg_emu::g_dyn_smem);"

    return re.sub(r"extern\s+__shared__\s+([^;\[]*?)\s*\b(\w+)\s*\[\s*\]\s*;", dyn, src)


def _check_device_globals(src: str, path: str):
    """Mutable ``__device__`` globals would be per slot here (not per device):
    refuse them rather than emulate them wrongly."""
    code = strip_comments(src)
    # preprocessor lines (with their continuations) are not declarations
    code = re.sub(r"(?m)^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", "", code)
    top, depth = [], 0
    for ch in code:
        if ch == "{":
            depth += 1
            if depth == 1:
                top.append(";")
        elif ch == "}":
            depth -= 1
        elif depth == 0:
            top.append(ch)
    for stmt in "".join(top).split(";"):
        s = " ".join(stmt.split())
        if (
            re.search(r"\b__device__\b", s)
            and "(" not in s.split("=")[0]
            and not re.search(r"\bconst\b", s)
        ):
            raise EmulationError(
                f"{path}: mutable __device__ global ({s!r}) cannot be emulated; pass the memory as a kernel argument"
            )


def kernel_structs(kernels):
    """{struct name: its Param} for the structs some kernel takes by value."""
    return {p.ctype: p for params in kernels.values() for p in params if p.is_struct}


def _wrappers(kernels) -> str:
    out = ["\n// ---- emulation entry points (generated)"]
    for name, p in kernel_structs(kernels).items():
        # "size,offset,offset,...": the compiler's layout, checked against
        # the one the launchers pack (Param.dtype)
        parts = ' + "," + '.join(
            [f"std::to_string(sizeof({name}))"]
            + [f"std::to_string(offsetof({name}, {f.name}))" for f in p.fields]
        )
        out.append(
            f'extern "C" const char* nxg_layout__{name}() '
            f"{{ static const std::string s = {parts}; return s.c_str(); }}"
        )
    for name in kernels:
        out.append(
            f"static void nxg_body__{name}(void** a) {{ nxg_emu::invoke(&{name}, a); }}\n"
            f'extern "C" int nxg_launch__{name}(nxg_emu::Control* c, const unsigned* d, void** a) '
            f"{{ return nxg_emu::run(c, d, &nxg_body__{name}, a); }}\n"
            f'extern "C" const char* nxg_sig__{name}() '
            f"{{ static const std::string s = nxg_emu::signature(&{name}); return s.c_str(); }}"
        )
    return "\n".join(out) + "\n"


def sanitize_mode() -> str:
    """The checking mode the emulation is built for: "" (none), "thread",
    "address" or "poison", from $NX_GPUMATCH_EMU_SANITIZE."""
    mode = os.environ.get("NX_GPUMATCH_EMU_SANITIZE", "").strip().lower()
    if mode not in SANITIZE_FLAGS:
        raise EmulationError(
            f"NX_GPUMATCH_EMU_SANITIZE={mode!r}: use one of {sorted(m for m in SANITIZE_FLAGS if m)}"
        )
    return mode


def sanitizer_env(mode, env=None, options=""):
    """The environment of a process that runs the emulation under ``mode``:
    the sanitizer's runtime preloaded (the library is loaded into a Python
    that was not built with it), the mode selected, and TSAN_OPTIONS naming
    kernels/tsan.supp (ASAN_OPTIONS, UBSAN_OPTIONS for "address"), followed
    by ``options``. A report makes the process exit with status 66."""
    env = dict(os.environ if env is None else env)
    if mode not in SANITIZER_RUNTIME:  # poison needs no runtime
        env["NX_GPUMATCH_EMU_SANITIZE"] = mode
        return env
    lib = subprocess.run(
        [_compiler(), f"-print-file-name={SANITIZER_RUNTIME[mode]}"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not os.path.isabs(lib) or not os.path.exists(lib):
        raise EmulationError(
            f"the compiler has no {SANITIZER_RUNTIME[mode]} (install its sanitizers)"
        )
    env["LD_PRELOAD"] = " ".join(x for x in (lib, env.get("LD_PRELOAD", "")) if x)
    env["NX_GPUMATCH_EMU_SANITIZE"] = mode
    code = SANITIZER_EXITCODE
    if mode == "address":
        # Python's own allocations are not the kernels' to answer for (leaks)
        base = f"detect_leaks=0 exitcode={code} abort_on_error=0 allocator_may_return_null=1"
        env["ASAN_OPTIONS"] = f"{base} {options}".strip()
        env["UBSAN_OPTIONS"] = f"print_stacktrace=1 halt_on_error=1 exitcode={code}"
        return env
    # the reviewed suppressions; the emulator's own lock order is not a kernel's
    base = f"suppressions={kernels_dir() / 'tsan.supp'} detect_deadlocks=0 exitcode={code}"
    env["TSAN_OPTIONS"] = f"{base} {options}".strip()
    return env


def _check_runtime_loaded(mode):
    if mode not in SANITIZER_RUNTIME:
        return
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return
    if SANITIZER_RUNTIME[mode].split(".")[0] not in maps:
        raise EmulationError(
            f"NX_GPUMATCH_EMU_SANITIZE={mode} needs {SANITIZER_RUNTIME[mode]} preloaded into "
            "this process (LD_PRELOAD=$(g++ -print-file-name="
            f"{SANITIZER_RUNTIME[mode]})); see nx_gpumatch.gpu._emulate.sanitizer_env"
        )


_build_lock = threading.Lock()


def build(problem: str, source: str | None = None, defines=None):
    """Compile ``kernels/<problem>.cu`` (or the given source text) for emulation
    with the ``-D`` defines NVRTC gets (by default the problem's; none for a
    given source).

    Returns ``(library path, kernels, compiler log)``; the library is reused
    from the cache when the same text was built before.
    """
    if defines is None:
        defines = problem_defines(problem) if source is None else {}
    dflags = define_options(defines)
    kdir = kernels_dir()
    src = kernel_source(problem) if source is None else source
    path = str(kdir / f"{problem}.cu")
    kernels = parse_kernels(src)
    _check_device_globals(src, path)
    mode = sanitize_mode()
    _check_runtime_loaded(mode)
    flags = CXXFLAGS + SANITIZE_FLAGS[mode]  # a later -O wins
    header = kdir / "cuda_emu.h"
    local_headers = sorted(p for p in kdir.iterdir() if p.suffix in (".h", ".cuh", ".hpp"))
    cxx = _compiler()
    text = f'#line 1 "{path}"\n' + _rewrite(src) + _wrappers(kernels)
    h = hashlib.sha256()
    for part in (_BUILD_VERSION, cxx, " ".join(flags + dflags), text, sys.platform):
        h.update(part.encode())
    for p in local_headers:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    stem = f"{problem}-{mode + '-' if mode else ''}{h.hexdigest()[:20]}"
    out = cache_dir()
    lib = out / f"{stem}.so"
    log_file = out / f"{stem}.log"
    with _build_lock:
        if not lib.exists():
            cpp = out / f"{stem}.cpp"
            with _atomic_output(cpp) as tmp:
                tmp.write_text(text)
            cmd = [
                cxx,
                *flags,
                *dflags,
                "-I",
                str(kdir),
                "-include",
                str(header),
                "-x",
                "c++",
                str(cpp),
            ]
            with _atomic_output(lib) as tmp:
                res = subprocess.run([*cmd, "-o", str(tmp)], capture_output=True, text=True)
                if res.returncode != 0:
                    raise EmulationError(f"emulation build of {path} failed:\n{res.stderr}")
                with _atomic_output(log_file) as tlog:
                    tlog.write_text(res.stderr)
        log = log_file.read_text() if log_file.exists() else ""
    return lib, kernels, log


# ------------------------------------------------------------------ running
class _Control(ctypes.Structure):
    # mirrors nxg_emu::Control in cuda_emu.h
    _fields_ = [
        ("abort", ctypes.c_int32),
        ("chaos", ctypes.c_int32),
        ("timeout_s", ctypes.c_double),
        ("next_block", ctypes.c_int64),
        ("num_blocks", ctypes.c_int64),
        ("seed", ctypes.c_uint64),
        ("dyn_smem", ctypes.c_int64),
        ("order", ctypes.c_void_p),
        ("msg", ctypes.c_char * 4096),
    ]


_CTYPES = {
    "i1": ctypes.c_int8,
    "u1": ctypes.c_uint8,
    "i2": ctypes.c_int16,
    "u2": ctypes.c_uint16,
    "i4": ctypes.c_int32,
    "u4": ctypes.c_uint32,
    "i8": ctypes.c_int64,
    "u8": ctypes.c_uint64,
    "f4": ctypes.c_float,
    "f8": ctypes.c_double,
    "b1": ctypes.c_bool,
}


def dim3(x, what):
    if isinstance(x, (int, np.integer)):
        x = (int(x),)
    x = tuple(int(v) for v in x)
    if not 1 <= len(x) <= 3 or any(v < 1 for v in x):
        raise ValueError(
            f"{what} must be a positive int or a tuple of 1 to 3 positive ints, got {x}"
        )
    return x + (1,) * (3 - len(x))


class EmuKernel:
    """A kernel of an :class:`EmuModule`, called like a CuPy ``RawKernel``."""

    def __init__(self, module, name, params):
        self.module = module
        self.name = name
        self.params = params

    def __call__(self, grid, block, args, shared_mem=0):
        grid = dim3(grid, "grid")
        block = dim3(block, "block")
        nthreads = block[0] * block[1] * block[2]
        if nthreads > MAX_THREADS_PER_BLOCK:
            raise ValueError(f"{nthreads} threads per block (the limit is {MAX_THREADS_PER_BLOCK})")
        if not 0 <= int(shared_mem) <= MAX_DYNAMIC_SHARED:
            raise ValueError(
                f"shared_mem={shared_mem} bytes: dynamic shared memory is limited to {MAX_DYNAMIC_SHARED}"
            )
        args = tuple(args)
        check_args(self.name, self.params, args, self.module.arrays)
        arrays = _array_args(self.params, args)
        copies = _exact_buffers(arrays) if sanitize_mode() == "address" else {}

        def host(at, a):
            return copies.get(at, (a, a))[1]

        keep = []
        ptrs = []
        for i, (p, a) in enumerate(zip(self.params, args)):
            if p.is_struct:
                values = struct_values(self.name, p, a)
                v = pack_struct(p, values, lambda f, x, i=i: host((i, f.name), x).ctypes.data)
                keep.append(v)
                ptrs.append(v.ctypes.data)
                continue
            if p.is_pointer:
                v = ctypes.c_void_p(None if a is None else host(i, a).ctypes.data)
            else:
                ct = _CTYPES.get(p.code)
                if ct is None:
                    raise TypeError(
                        f"{self.name}: parameter {p.name} has a type ({p.ctype}) the emulation cannot pass"
                    )
                v = ct(a.item() if isinstance(a, np.generic) else a)
            keep.append(v)
            ptrs.append(ctypes.addressof(v))
        argv = (ctypes.c_void_p * max(1, len(ptrs)))(*ptrs)
        dims = (ctypes.c_uint * 6)(*grid, *block)
        try:
            self.module._launch(self.name, dims, argv, grid[0] * grid[1] * grid[2], int(shared_mem))
        finally:
            for orig, copy in copies.values():
                if orig.flags.writeable:
                    orig[...] = copy


def _array_args(params, args):
    """[(where, array)] for every array a launch passes: a pointer argument
    (where: its index) or a pointer field of a struct argument (where:
    (index, field name)), so each gets the treatment of a direct one."""
    out = []
    for i, (p, a) in enumerate(zip(params, args)):
        if p.is_struct:
            values = struct_values(p.name, p, a)
            out += [
                ((i, f.name), values[f.name])
                for f in p.fields
                if f.is_pointer and isinstance(values[f.name], np.ndarray)
            ]
        elif p.is_pointer and isinstance(a, np.ndarray):
            out.append((i, a))
    return out


def _exact_buffers(arrays):
    """{where: (array, copy)} for the arrays of ``arrays`` (see
    :func:`_array_args`) that are views into larger buffers: AddressSanitizer
    sees an overrun only at the end of an allocation, so each such array
    runs on a copy of its own (copied back after the launch). Arrays that
    overlap another are left as they are (a copy would break the aliasing
    the kernel sees)."""
    out = {}
    for i, a in arrays:
        if a.base is None and a.flags.owndata:
            continue
        if any(j != i and np.may_share_memory(a, b) for j, b in arrays):
            continue
        out[i] = (a, np.array(a, copy=True, order="C"))
    return out


def _unlink(path):
    with contextlib.suppress(OSError):
        os.unlink(path)


class EmuModule:
    """The emulated counterpart of a ``cupy.RawModule`` for one kernel file."""

    def __init__(self, problem, source=None, defines=None, *, device_arrays=False):
        self.problem = problem
        # The package's host code (through _launch.get_module) must pass the
        # device arrays of nx_gpumatch.gpu._strict, as CuPy takes only its own
        # arrays (a NumPy array would go by value, as bytes); the emulator's
        # own tests launch on NumPy arrays.
        self.arrays = _strict if device_arrays else np
        self.path, self.kernels, self.compile_log = build(problem, source, defines)
        self._lock = threading.Lock()
        self._slots = []
        self._launches = 0
        self.poisoned = None

    def get_function(self, name):
        if name not in self.kernels:
            raise AttributeError(
                f"kernels/{self.problem}.cu has no kernel {name!r} (has: {', '.join(self.kernels)})"
            )
        return EmuKernel(self, name, self.kernels[name])

    def _load_slots(self, k):
        while len(self._slots) < k:
            i = len(self._slots)
            # dlopen shares one instance per file, so every slot needs its own copy
            slot = self.path.with_name(f"{self.path.stem}.slot{i}-{os.getpid()}-{id(self)}.so")
            shutil.copyfile(self.path, slot)
            try:
                lib = ctypes.CDLL(str(slot))
            finally:
                if sanitize_mode() in SANITIZER_RUNTIME:  # it reads the file to name lines
                    atexit.register(_unlink, slot)
                else:
                    os.unlink(slot)  # the mapping stays valid
            for name, params in self.kernels.items():
                getattr(lib, f"nxg_launch__{name}").restype = ctypes.c_int
                sig = getattr(lib, f"nxg_sig__{name}")
                sig.restype = ctypes.c_char_p
                if i == 0:
                    self._check_signature(name, params, sig().decode())
            if i == 0:
                for sname, p in kernel_structs(self.kernels).items():
                    self._check_layout(lib, sname, p)
            self._slots.append(lib)
        return self._slots[:k]

    def _check_signature(self, name, params, sig):
        codes = [c for c in sig.split(",") if c]
        parsed = [p.code for p in params]
        if len(codes) != len(parsed) or any(
            p is not None and p != c for p, c in zip(parsed, codes)
        ):
            raise EmulationError(
                f"kernel {name}: parameter types read from the source {parsed} disagree with the compiler's {codes}"
            )
        for p, c in zip(params, codes):
            if p.code is None:
                p.code = c

    @staticmethod
    def _compiled_layout(lib, sname):
        fn = getattr(lib, f"nxg_layout__{sname}")
        fn.restype = ctypes.c_char_p
        size, *offsets = (int(x) for x in fn().decode().split(","))
        return size, offsets

    def _check_layout(self, lib, sname, p):
        size, offsets = self._compiled_layout(lib, sname)
        packed = [p.dtype.fields[f.name][1] for f in p.fields]
        if size != p.dtype.itemsize or offsets != packed:
            raise EmulationError(
                f"struct {sname}: the compiler lays it out in {size} bytes at offsets {offsets}, "
                f"the launchers pack {p.dtype.itemsize} bytes at {packed}"
            )

    def struct_layout(self, sname):
        """(sizeof, [offsetof each field]) of kernel struct ``sname`` as the
        C++ compiler lays it out."""
        return self._compiled_layout(self._load_slots(1)[0], sname)

    def _block_order(self, opts, num_blocks):
        """The blocks' hand-out order (None: forward)."""
        order = opts["order"] or ("alternate" if sanitize_mode() == "poison" else "forward")
        if order not in _ORDERS:
            raise ValueError(f"emulation block order {order!r}: use one of {list(_ORDERS)}")
        self._launches += 1
        if order == "alternate":
            order = ("random", "reverse")[self._launches % 2]
        if order == "reverse":
            return np.arange(num_blocks - 1, -1, -1, dtype=np.int64)
        if order == "random":
            rng = np.random.default_rng((int(opts["seed"]) & 0xFFFFFFFF, self._launches))
            return rng.permutation(num_blocks).astype(np.int64)
        return None

    def _launch(self, name, dims, argv, num_blocks, shared_mem=0):
        if self.poisoned:
            raise EmulationError(f"this emulated module is unusable: {self.poisoned}")
        opts = dict(_OPTIONS)
        ctl = _Control()
        ctl.timeout_s = float(opts["timeout"])
        ctl.chaos = max(0, min(1024, int(opts["chaos"])))
        ctl.num_blocks = num_blocks
        ctl.seed = int(opts["seed"]) & 0xFFFFFFFFFFFFFFFF
        ctl.dyn_smem = shared_mem
        order = self._block_order(opts, num_blocks)
        ctl.order = None if order is None else order.ctypes.data
        with self._lock:
            slots = self._load_slots(max(1, min(int(opts["slots"]), num_blocks)))
            rcs = [None] * len(slots)

            def go(i):
                rcs[i] = getattr(slots[i], f"nxg_launch__{name}")(ctypes.byref(ctl), dims, argv)

            threads = [
                threading.Thread(target=go, args=(i,), daemon=True) for i in range(len(slots))
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join(ctl.timeout_s + 30.0)
            stuck = any(t.is_alive() for t in threads) or 2 in rcs
            if stuck:
                self.poisoned = f"threads of an earlier launch of {name} could not be stopped"
        msg = ctl.msg.decode(errors="replace")
        if stuck:
            raise EmulationHang(
                f"{name}: {msg or 'time limit reached'} (some threads could not be stopped: "
                "a loop that calls no CUDA primitive)"
            )
        if ctl.abort:
            cls = (
                EmulationHang
                if msg.startswith(("deadlock", "time limit")) or "time limit" in msg
                else EmulationError
            )
            raise cls(f"{name}: {msg}")


def main(argv=None):
    """``python -m nx_gpumatch.gpu._emulate MODE COMMAND...``: run COMMAND (a
    test run, say) with the emulation in MODE (address, thread or poison),
    the sanitizer's runtime preloaded."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2 or argv[0] not in SANITIZE_FLAGS or not argv[0]:
        modes = "|".join(m for m in SANITIZE_FLAGS if m)
        print(f"usage: python -m nx_gpumatch.gpu._emulate {modes} COMMAND...", file=sys.stderr)
        return 2
    env = sanitizer_env(argv[0])
    os.execvpe(argv[1], argv[1:], env)


if __name__ == "__main__":
    sys.exit(main())
