"""The emulation in its strict modes. NX_GPUMATCH_EMU_SANITIZE=address builds
it with AddressSanitizer and UBSan, so an out-of-bounds access of a global
array or of `__shared__` or dynamic shared memory is a failure naming the
kernel's line; =poison fills shared memory with garbage at each block start,
hands blocks out in reverse and random order and builds at -O3. Every kernel
family runs one small case under each mode, in a child process (the
sanitizer's runtime preloaded, see nx_gpumatch.gpu._emulate.sanitizer_env),
and must equal the CPU engine."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from nx_gpumatch._validation import seed_key
from nx_gpumatch.gpu._emulate import (
    SANITIZER_EXITCODE,
    EmulationError,
    EmuModule,
    options,
    sanitizer_env,
)
from tests.support import ROOT, sanitize_cases

MODES = ("address", "poison")


def _run(mode, code):
    try:
        env = sanitizer_env(mode)
    except EmulationError as exc:
        pytest.skip(str(exc))
    path = (str(ROOT), env.get("PYTHONPATH", ""))
    env["PYTHONPATH"] = os.pathsep.join(p for p in path if p)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="module")
def cpu():
    want = sanitize_cases.results("cpu")
    # red-blue: the default emulation's result (its equality with the CPU
    # engine is test_kernels_emulation.py's to judge)
    from nx_gpumatch.gpu import matching as gm

    g = sanitize_cases.gen.rmat(7, 6, kind="g500", seed=5)
    mate = gm.run(g, "red_blue", seed=seed_key(77), select="weighted", backend="emulate")
    want["red_blue"] = mate.tolist()
    return want


@pytest.mark.parametrize("mode", MODES)
def test_every_kernel_family_equals_cpu(mode, cpu):
    """Matching (Suitor, locally dominant, red-blue), b-Suitor, stable
    marriage, bipartite (APFB, APsB), Louvain with its move kernels' global
    tables, Leiden with its refinement: no sanitizer report, same results."""
    res = _run(
        mode,
        """
        import json
        from tests.support import sanitize_cases
        print(json.dumps(sanitize_cases.results("emulate")))
        """,
    )
    assert res.returncode == 0, res.stderr[-6000:]
    got = json.loads(res.stdout.splitlines()[-1])
    assert sorted(got) == sorted(cpu)
    for case, want in cpu.items():
        assert got[case] == want, f"{case} under {mode}"


SYNTHETIC = """
extern "C" __global__ void overrun(const int* in, int* out, int n, int extra)
{
    __shared__ int buf[64];
    const int t = threadIdx.x;
    if (t < n) buf[t] = in[t];
    __syncthreads();
    if (t == 0) {
        int s = 0;
        for (int i = 0; i < n + extra; ++i) s += buf[i];  // OVERRUN_SHARED
        out[blockIdx.x] = s;
    }
}
extern "C" __global__ void read_past(const int* in, int* out, int n)
{
    if (threadIdx.x == 0) out[blockIdx.x] = in[n];  // OVERRUN_GLOBAL
}
extern "C" __global__ void uninit(unsigned* out, int dyn_written)
{
    __shared__ unsigned acc[32];
    extern __shared__ unsigned dyn[];
    const int t = threadIdx.x;
    if (t < 16) acc[t] = t;
    if (t < dyn_written) dyn[t] = 1;
    __syncthreads();
    if (t == 0) {
        unsigned s = 0;
        for (int i = 0; i < 32; ++i) s += acc[i] + dyn[i];  // READ_DYN
        out[blockIdx.x] = s;
    }
}
struct Span {
    const int* in;
    int* out;
    int n;
};
extern "C" __global__ void write_past(Span s)
{
    if (threadIdx.x == 0) s.out[s.n] = s.in[0];  // OVERRUN_FIELD
}
extern "C" __global__ void record_order(int* counter, int* order)
{
    if (threadIdx.x == 0) order[atomicAdd(counter, 1)] = blockIdx.x;
}
"""


def _line(tag):
    return next(i for i, s in enumerate(SYNTHETIC.splitlines(), 1) if tag in s)


SYNTH_CHILD = f"""
import sys
import numpy as np
from nx_gpumatch.gpu._emulate import EmuModule
m = EmuModule("synthetic", source={SYNTHETIC!r})
case = sys.argv[1]
out = np.zeros(2, np.int32)
if case == "shared":
    inp = np.arange(64, dtype=np.int32)
    m.get_function("overrun")((2,), (64,), (inp, out, np.int32(64), np.int32(EXTRA)))
elif case == "global":
    big = np.arange(100, dtype=np.int32)
    m.get_function("read_past")((2,), (32,), (big[:64], out, np.int32(64 + EXTRA - 1)))
elif case == "field":
    big = np.zeros(100, dtype=np.int32)
    span = dict(zip(("in", "out", "n"), (out, big[:64], np.int32(64 + EXTRA - 1))))
    m.get_function("write_past")((1,), (32,), (span,))
else:
    out = np.zeros(2, np.uint32)
    m.get_function("uninit")((2,), (32,), (out, np.int32(32 - EXTRA)), shared_mem=(32 - EXTRA) * 4)
print(out.tolist())
"""


@pytest.mark.parametrize(
    "case,tag",
    [
        ("shared", "OVERRUN_SHARED"),
        ("global", "OVERRUN_GLOBAL"),
        ("field", "OVERRUN_FIELD"),
        ("dynamic", "READ_DYN"),
    ],
)
def test_address_mode_reports_an_overrun_with_its_line(case, tag):
    """One element past a `__shared__` array, past a global array that is a
    view into a larger buffer (the argument runs on a copy of its own size),
    a write past such a view passed as a field of a struct argument (the
    same copy), past the launch's dynamic shared memory: each is reported
    with the line; the same launch in bounds runs clean."""
    code = SYNTH_CHILD.replace("sys.argv[1]", repr(case))
    res = _run("address", code.replace("EXTRA", "1"))
    assert res.returncode == SANITIZER_EXITCODE, res.stderr[-4000:]
    assert f"synthetic.cu:{_line(tag)}" in res.stderr, res.stderr[-4000:]
    clean = _run("address", code.replace("EXTRA", "0"))
    assert clean.returncode == 0, clean.stderr[-4000:]


def _uninit(monkeypatch, mode, seed=0):
    monkeypatch.setenv("NX_GPUMATCH_EMU_SANITIZE", mode)
    out = np.zeros(3, np.uint32)
    k = EmuModule("synthetic", source=SYNTHETIC).get_function("uninit")
    with options(seed=seed):
        # dyn[16..31] and acc[16..31] are never written
        k((3,), (32,), (out, np.int32(16)), shared_mem=32 * 4)
    return out.tolist()


def test_poison_mode_changes_what_uninitialised_shared_memory_reads(monkeypatch):
    written = sum(range(16)) + 16
    assert _uninit(monkeypatch, "") == [written] * 3  # zeros: the bug stays hidden
    first = _uninit(monkeypatch, "poison")
    assert all(v != written for v in first) and len(set(first)) == 3  # garbage per block
    assert _uninit(monkeypatch, "poison", seed=1) != first
    assert _uninit(monkeypatch, "poison") == first  # seeded: repeatable


def test_poison_mode_hands_blocks_out_in_reverse_and_random_order(monkeypatch):
    def orders(mode, launches):
        monkeypatch.setenv("NX_GPUMATCH_EMU_SANITIZE", mode)
        k = EmuModule("synthetic", source=SYNTHETIC).get_function("record_order")
        out = []
        with options(slots=1):
            for _ in range(launches):
                counter, order = np.zeros(1, np.int32), np.full(40, -1, np.int32)
                k((40,), (32,), (counter, order))
                out.append(order.tolist())
        return out

    forward = list(range(40))
    assert orders("", 1) == [forward]
    rev, rnd, rev2 = orders("poison", 3)
    assert rev == rev2 == forward[::-1]
    assert sorted(rnd) == forward and rnd not in (forward, rev)
