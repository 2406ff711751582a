"""networkx's own tests of max_weight_matching / min_weight_matching and of the
functions that call them (k_factor, eulerize, christofides), run against the
gpumatch backend in networkx's test mode.

Each run happens in a subprocess (test mode is set up when networkx is imported).
A small plugin counts the calls that reach the backend and watches networkx's
dispatch log: a fallback to networkx for either function fails the test.

* test_matching runs with fallback off: the weighted-matching tests must pass
  on the backend itself (tests of functions the backend does not implement are
  xfailed by networkx with the reason "not implemented by gpumatch").
* k_factor / eulerize / christofides are networkx code that the backend does
  not implement, so they run with fallback on; their inner matching calls must
  still go to the backend.
"""

import pytest

from tests.support.nx_suite import run_networkx_suite

WATCHED = ("max_weight_matching", "min_weight_matching")


def _run(modules, keyword, fallback):
    res, out = run_networkx_suite(modules, WATCHED, fallback=fallback, keyword=keyword, timeout=600)
    # xfails that name a watched function would hide a backend failure
    res["xfail_watched"] = [
        f"{name}: {reason}"
        for name, reason, _ in res["xfailed"]
        if any(n in reason for n in WATCHED)
    ]
    return res, out


@pytest.mark.slow
def test_networkx_matching_tests_on_backend_without_fallback():
    res, out = _run(["networkx.algorithms.tests.test_matching"], None, fallback=False)
    assert res["code"] == 0 and not res["failed"], out[-4000:]
    assert not res["fallbacks"], res["fallbacks"]
    assert not res["xfail_watched"], res["xfail_watched"]
    assert res["calls"]["max_weight_matching"] >= 20
    assert res["calls"]["min_weight_matching"] >= 20


@pytest.mark.slow
def test_networkx_callers_use_backend_matching():
    modules = [
        "networkx.algorithms.tests.test_regular",
        "networkx.algorithms.tests.test_euler",
        "networkx.algorithms.approximation.tests.test_traveling_salesman",
    ]
    res, out = _run(modules, "k_factor or eulerize or christofides or TSP", fallback=True)
    assert res["code"] == 0 and not res["failed"], out[-4000:]
    assert not res["fallbacks"], res["fallbacks"]
    assert not res["xfail_watched"], res["xfail_watched"]
    # k_factor uses max_weight_matching, eulerize and christofides min_weight_matching
    assert res["calls"]["max_weight_matching"] > 0
    assert res["calls"]["min_weight_matching"] > 0
