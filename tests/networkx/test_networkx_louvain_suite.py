"""networkx's own Louvain tests, run against the gpumatch backend in networkx's
test mode (in a subprocess: test mode is set up when networkx is imported).

Fallback to networkx is on, because directed graphs are left to networkx on
purpose (``can_run`` refuses them; see algorithms/community/louvain.py). A small plugin
counts the calls that reach the backend and records every fallback: only
directed graphs may fall back (multigraphs are clustered here), and the only
xfails allowed are the written-reason ones of ``on_start_tests`` (tests that
demand the one exact partition networkx's own visiting order gives).
"""

import pytest

from tests.support.nx_suite import run_networkx_suite


@pytest.mark.slow
def test_networkx_louvain_tests_on_backend():
    res, out = run_networkx_suite(
        ["networkx.algorithms.community.tests.test_louvain"],
        ("louvain_communities", "louvain_partitions"),
        fallback=True,
    )
    out = out[-4000:]
    assert res["code"] == 0 and not res["failed"], out

    from nx_gpumatch.algorithms.community.louvain import NX_TESTS_XFAIL

    for name, reason, _outcome in res["xfailed"]:
        assert name in NX_TESTS_XFAIL[2] and reason.startswith("gpumatch Louvain:"), (name, reason)
    # Fallbacks only for the directed graphs can_run refuses.
    assert res["fallbacks"], "expected the directed cases to fall back"
    for msg in res["fallbacks"]:
        assert any(s in msg.lower() for s in ("digraph", "directed")), msg
    assert res["calls"]["louvain_communities"] >= 15
    assert res["calls"]["louvain_partitions"] >= 2
    assert res["passed"] >= 10
