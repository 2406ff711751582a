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

import pytest

from nx_gpumatch.gpu._emulate import EmulationError, sanitizer_env
from tests.support import ROOT


def _env():
    try:
        env = sanitizer_env("thread", options="report_signal_unsafe=0")
    except EmulationError as exc:
        pytest.skip(str(exc))
    path = (str(ROOT), env.get("PYTHONPATH", ""))
    env["PYTHONPATH"] = os.pathsep.join(p for p in path if p)
    return env


def _run(code):
    """(exit status, race summaries, stdout) of ``code`` run under the sanitizer
    (the summaries end with the first full report, to read on a failure)."""
    res = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    races = sorted(set(re.findall(r"SUMMARY: ThreadSanitizer: (.*)", res.stderr)))
    assert res.returncode in (0, 66), res.stderr[-4000:]
    first = res.stderr.find("WARNING: ThreadSanitizer")
    if races and first >= 0:
        races.append(res.stderr[first : first + 3000])
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
        assert rc == 66 and races and all("in handoff" in r for r in races[:-1]), races


def test_b_suitor_has_no_race_between_its_lanes():
    """bs_round on a hub whose search spans several candidate batches in one
    round: u's cursor and batch bounds (cpos/cend, clo/cnext) and the batch
    itself (cbuf) are handed between the lanes of u's warp; before each hand-
    off was ordered (or kept in lane 0), lanes could read stale values and run
    FULL_MASK collectives divergently. The result equals the CPU engine's."""
    rc, races, out = _run(
        """
        import numpy as np
        from nx_gpumatch.algorithms.b_matching import b_matching_edges
        from nx_gpumatch.gpu import b_matching as gbm
        from tests.support import sanitize_cases

        g = sanitize_cases._hub_graph(200, 150)
        for hub_b in (1, 4):
            b = np.ones(g.num_nodes, np.int64)
            b[0] = hub_b
            want = b_matching_edges(g, b, "greedy", device="cpu")
            stats = {}
            got = gbm.run(g, b, backend="emulate", stats=stats)
            print(np.array_equal(got, want), stats["rounds"])
        """
    )
    assert rc == 0 and not races, races
    assert [line.split()[0] for line in out.splitlines()] == ["True", "True"]


def test_other_kernel_families_have_no_race():
    """Every other family on a small R-MAT graph: maximal matching (Suitor,
    locally dominant, red-blue; and locally dominant and red-blue on rows
    for a thread, a warp and a block), stable marriage, bipartite augmenting
    paths, Louvain's inner weights in every row width and a Leiden
    refinement on threads and warps. Coherent loads and stores
    (load_*/store_* of common.cuh) are relaxed atomics here; what remains
    accepted is listed, with its reason, in kernels/tsan.supp."""
    rc, races, out = _run(
        """
        import numpy as np
        import nx_gpumatch
        from nx_gpumatch import generators as gen
        from nx_gpumatch.algorithms import stable_marriage as sm
        from nx_gpumatch.algorithms.bipartite.matching import Biadjacency
        from nx_gpumatch.gpu import bipartite as gbp
        from nx_gpumatch.gpu import louvain as gl
        from nx_gpumatch.gpu import matching as gm
        from nx_gpumatch.gpu import stable_marriage as gsm
        from nx_gpumatch.gpu import _strict
        from nx_gpumatch.gpu._launch import get_module

        g = gen.rmat(7, 6, kind="g500", seed=5)
        for alg in ("suitor", "local_max", "red_blue"):
            print(alg, gm.run(g, alg, backend="emulate").shape[0])
        from tests.support import sanitize_cases
        wide = sanitize_cases._wide_rows_graph()
        for alg in ("local_max", "red_blue"):
            print(alg, "wide", gm.run(wide, alg, backend="emulate").shape[0])
        print("refine", len(sanitize_cases._refinement("emulate")))
        prefs = sm.prepare_preferences(*nx_gpumatch.stable_marriage_instance("hard", 60, seed=1))
        print("stable", gsm.run(prefs, backend="emulate")[1])
        n = g.num_nodes
        bi = Biadjacency(n, n, g.indptr, g.indices)
        free = np.full(n, -1, np.int32)
        print("bipartite", np.count_nonzero(gbp.run(bi, "apfb", (free, free), backend="emulate")[0] >= 0))
        deg = np.diff(g.indptr)
        comm = (np.arange(n) % 5).astype(np.int32)
        dirty = _strict.ones(n, np.uint8)
        k = get_module("louvain", "emulate").get_function("intra_weights")
        rows = (g.indptr, g.indices, g.weights, g.loop_weight, comm)
        args = (*map(_strict.asarray, rows), dirty, _strict.zeros(n, np.float64))
        gl.launch_rows(k, gl.width_classes(_strict, _strict.asarray(deg)), args)
        print("intra", int(dirty.sum()), sorted({w for w, _ in gl.width_classes(np, deg)}))
        """
    )
    assert rc == 0 and not races, races
    assert len(out.splitlines()) == 9
