import warnings

import networkx as nx
import pytest

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
def _no_numba_warnings():
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=pytest.PytestUnraisableExceptionWarning)
        yield
