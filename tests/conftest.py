import os
import warnings

# The suite tests compiled kernels: no interpreted first calls (nx_gpumatch.cpu.run),
# in this process and in the processes it starts. tests/api/test_interpreted.py asks for them.
os.environ["NX_GPUMATCH_INTERPRET_SMALL"] = "0"

import networkx as nx  # noqa: E402
import pytest  # noqa: E402

# Re-using a converted graph from networkx's cache is intended in these tests.
nx.config.warnings_to_ignore.add("cache")


@pytest.fixture(params=[1, 2], ids=lambda n: f"threads{n}")
def nthreads(request):
    """Run the test body with 1 and with 2 Numba threads: answers must not change.
    With 2 threads the parallel builds of the kernels run even on small inputs."""
    from nx_gpumatch import cpu

    with cpu.threads(request.param) as n, cpu.parallel_min(0 if n > 1 else None):
        yield n


def pytest_collection_modifyitems(config, items):
    from nx_gpumatch import gpu

    reason = gpu.unavailable_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"needs a CUDA GPU: {reason}")
    for item in items:
        if item.get_closest_marker("gpu") is not None:  # keywords also hold folder names
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _compiled_kernels():
    """Compiled kernels in every test, even where an earlier test changed the
    setting and the environment variable came too late (networkx imported first)."""
    from nx_gpumatch.config import get_config

    with get_config()(interpret_small=False):
        yield


@pytest.fixture(autouse=True)
def _no_numba_warnings():
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=pytest.PytestUnraisableExceptionWarning)
        yield
