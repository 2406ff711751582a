"""The emulation under ThreadSanitizer (NX_GPUMATCH_EMU_SANITIZE=thread): CUDA's
ordering, not the emulator's, so a value one lane hands another through memory
with only a shuffle, ballot or atomic in between is a reported race, as it is a
race on the GPU. Each case runs in a child process with the sanitizer's runtime
preloaded (see nx_gpumatch.gpu._emulate.sanitizer_env)."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nx_gpumatch.gpu._emulate import EmulationError, sanitizer_env

ROOT = Path(__file__).resolve().parents[1]


def _env():
    try:
        env = sanitizer_env("thread", options="report_signal_unsafe=0")
    except EmulationError as exc:
        pytest.skip(str(exc))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def _run(code):
    """(exit status, race summaries, stdout) of ``code`` run under the sanitizer."""
    res = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    races = sorted(set(re.findall(r"SUMMARY: ThreadSanitizer: (.*)", res.stderr)))
    assert res.returncode in (0, 66), res.stderr[-4000:]
    return res.returncode, races, res.stdout


HANDOFF = """
import numpy as np
from nx_gpumatch.gpu._emulate import EmuModule

SRC = '''
extern "C" __global__ void handoff(int* box, int* out, int fence)
{
    const int lane = threadIdx.x & 31;
    if (lane == 0) box[0] = 42;
    if (fence)
        __syncwarp();
    else
        (void)__shfl_sync(0xFFFFFFFFu, lane, 0);
    if (lane == 1) out[0] = box[0];
}
'''
box, out = np.zeros(1, np.int32), np.zeros(1, np.int32)
EmuModule("handoff", source=SRC).get_function("handoff")((1,), (32,), (box, out, np.int32(FENCE)))
print(int(out[0]))
"""


@pytest.mark.parametrize("fence", [0, 1])
def test_only_syncwarp_orders_a_handoff_between_lanes(fence):
    """Lane 0 writes, lane 1 reads: after __syncwarp a clean run, after a
    shuffle alone a race report naming the two lines."""
    rc, races, out = _run(HANDOFF.replace("FENCE", str(fence)))
    assert out.split() == ["42"]  # the emulation runs it either way
    if fence:
        assert rc == 0 and not races, races
    else:
        assert rc == 66 and races and all("in handoff" in r for r in races), races
