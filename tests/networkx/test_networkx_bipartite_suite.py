"""networkx's own bipartite matching tests, run against the gpumatch backend in
networkx's test mode (see tests/support/nx_suite.py).

With fallback off, every call of the watched functions must run on the backend;
tests of functions the backend does not implement (minimum_weight_full_matching)
are xfailed by networkx with the reason "not implemented by gpumatch".
"""

import pytest

from tests.support.nx_suite import run_networkx_suite

WATCHED = ("hopcroft_karp_matching", "eppstein_matching", "to_vertex_cover")


@pytest.mark.slow
def test_networkx_bipartite_matching_tests_on_backend_without_fallback():
    res, out = run_networkx_suite(
        ["networkx.algorithms.bipartite.tests.test_matching"], WATCHED, fallback=False, timeout=600
    )
    assert res["code"] == 0 and not res["failed"], out[-4000:]
    assert not res["fallbacks"], res["fallbacks"]
    hidden = [x for x in res["xfailed"] if any(n in x[1] for n in WATCHED)]
    assert not hidden, hidden
    assert res["calls"]["hopcroft_karp_matching"] >= 8
    assert res["calls"]["eppstein_matching"] >= 4
    assert res["calls"]["to_vertex_cover"] >= 4


@pytest.mark.slow
def test_networkx_bipartite_callers_use_backend():
    # extendability calls hopcroft_karp_matching internally; fallback covers the rest
    res, out = run_networkx_suite(
        ["networkx.algorithms.bipartite.tests.test_extendability"],
        WATCHED,
        fallback=True,
        timeout=600,
    )
    assert res["code"] == 0 and not res["failed"], out[-4000:]
    assert not res["fallbacks"], res["fallbacks"]
    assert res["calls"]["hopcroft_karp_matching"] > 0
