"""Every CUDA source compiles through NVRTC for each target architecture.

No GPU is needed: CuPy's NVRTC binding only needs the NVRTC library (the
``nvidia-cuda-nvrtc-cu12`` wheel). Each compile log is printed (run pytest with
``-s`` or look at the captured output) so CI shows the warnings.
"""

from pathlib import Path

import pytest

from nx_gpumatch.gpu._launch import ARCHITECTURES, architectures, nvrtc_options
from nx_gpumatch.gpu._source import kernel_files, kernels_dir, parse_kernels
from tests.support import ROOT

HERE = Path(__file__).parent
SOURCES = kernel_files() + sorted((HERE / "kernels").glob("*.cu"))


def _nvrtc():
    try:
        from cupy_backends.cuda.libs import nvrtc

        nvrtc.getVersion()
    except Exception as exc:  # the binding imports, but the library may be missing
        pytest.skip(
            f"NVRTC is not available ({type(exc).__name__}: {exc}); install nvidia-cuda-nvrtc-cu12"
        )
    return nvrtc


def test_there_are_kernels():
    assert kernel_files(), f"no *.cu files in {kernels_dir()}"


@pytest.mark.parametrize("arch", ARCHITECTURES)
@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_nvrtc_compile(path, arch):
    nvrtc = _nvrtc()
    if arch not in architectures(nvrtc.getVersion()):
        pytest.skip(f"NVRTC {nvrtc.getVersion()} deprecates {arch}")
    src = path.read_text()
    kernels = parse_kernels(src)  # also rejects __global__ functions without extern "C"
    # the problem's own -D defines for kernels/*.cu, none for the test kernels
    problem = path.stem if path.parent == kernels_dir() else None
    options = [f"--gpu-architecture={arch}", *nvrtc_options(problem), "-Xptxas=-warn-spills"]
    prog = nvrtc.createProgram(src, path.name, [], [])
    try:
        try:
            nvrtc.compileProgram(prog, options)
            error = None
        except nvrtc.NVRTCError as exc:
            error = exc
        log = nvrtc.getProgramLog(prog).strip()
        print(
            f"\n=== NVRTC {nvrtc.getVersion()} {path.name} --gpu-architecture={arch} ({len(kernels)} kernels)"
        )
        print(log or "(no diagnostics)")
        assert error is None, f"{path.name} does not compile for {arch}: {error}\n{log}"
        assert "warning" not in log.lower(), f"{path.name} ({arch}) compiles with warnings:\n{log}"
        cubin = nvrtc.getCUBIN(prog)
        print(f"cubin: {len(cubin)} bytes; kernels: {', '.join(kernels)}")
        assert len(cubin) > 0
        for name in kernels:
            assert name.encode() in cubin, f"kernel {name} missing from the {arch} cubin"
    finally:
        nvrtc.destroyProgram(prog)


# ------------------------------------------------------------ Louvain, Leiden
@pytest.mark.parametrize("problem", ["louvain", "leiden"])
def test_host_launches_only_kernels_the_file_has(problem):
    """Every kernel name gpu/<problem>.py fetches is defined in
    kernels/<problem>.cu (or in louvain.cu, whose kernels Leiden reuses), and
    both files build with their host module's -D defines."""
    import re

    from nx_gpumatch.gpu._source import kernel_source, problem_defines

    host = (ROOT / "nx_gpumatch" / "gpu" / f"{problem}.py").read_text()
    names = set(re.findall(r'get_function\("(\w+)"\)', host))
    assert names, f"gpu/{problem}.py launches no kernel"
    have = set(parse_kernels(kernel_source(problem))) | set(parse_kernels(kernel_source("louvain")))
    assert names <= have, sorted(names - have)
    assert problem_defines(problem).get("BLOCK", 0) % 32 == 0 and problem_defines(problem)
