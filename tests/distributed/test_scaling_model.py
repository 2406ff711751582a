"""The scaling model of the distributed community benchmark: it recovers the
costs it was fitted to, and extrapolates as its formula says."""

import pytest

from nx_gpumatch.benchmark import distributed_model as dm


def _rows(a, b_round, sweeps, refinements, cores):
    """Runs at P = 1, 2, 4 whose compute is a / P + b_round * rounds, as the
    slowest rank measures it with P ranks on ``cores`` cores."""
    rows = {}
    for P in (1, 2, 4):
        rounds = dm.rounds_at(P, sweeps, refinements)
        comp = (a / P + b_round * rounds) / min(1.0, cores / P)
        phases = {"move": 0.75 * comp, "aggregate": 0.25 * comp, "communicate": 9.0}
        rows[P] = {"phases": phases, "sweeps": sweeps, "rounds": rounds, "bytes": 1e6 * P}
        rows[P]["refinements"] = refinements
    return rows


@pytest.mark.parametrize("cores", [2, 4])
def test_fit_recovers_the_costs(cores):
    a, b_round, sweeps, refinements, nbytes = dm.fit(_rows(60.0, 0.05, 40, 6, cores), cores)
    assert a == pytest.approx(60.0) and b_round == pytest.approx(0.05)
    assert (sweeps, refinements, nbytes) == (40, 6, 4e6)


def test_rounds():
    assert dm.rounds_at(1, 40, 6) == 46
    assert dm.rounds_at(8, 40, 6) == 2 * 40 + 8 * 6  # a round per colour in refinement
    assert dm.rounds_at(8, 40, 6, owner_totals=True) == 2 * 40 + 2 * 6


def test_predict_scales_edges_vertices_and_rounds():
    rows = _rows(60.0, 0.05, 40, 6, 2)
    n, m = 1000, 8000
    (one,) = dm.predict(rows, n, m, 10 * n, 100 * m, [1], cores=2)
    assert one == pytest.approx((1, 6000.0 + 0.05 * 10 * 46, 0.0, 0.0, 6023.0))
    built = dm.predict(rows, n, m, 10 * n, 100 * m, [64, 1024], cores=2)
    owner = dm.predict(rows, n, m, 10 * n, 100 * m, [64, 1024], owner_totals=True, cores=2)
    # As built, each refinement takes P rounds of dense totals: time grows with P.
    assert built[1][4] > built[0][4]
    rounds = 2 * 40 + 1024 * 6
    assert built[1][1] == pytest.approx(6000.0 / 1024 + 0.05 * 10 * rounds)
    # Owner-reduced totals in a fixed number of rounds: time falls with P.
    assert owner[1][4] < owner[0][4] < built[0][4]
    assert owner[1][3] == pytest.approx(4e6 * 100 / 1024 / dm.BETA)


def test_print_model_shows_both_designs_and_vite(capsys):
    dm.print_model(_rows(60.0, 0.05, 40, 6, 2), 1000, 8000, ranks=(1, 1024), cores=2)
    out = capsys.readouterr().out
    assert "as built" in out and "owner-reduced" in out
    assert out.count("|") >= 4 * 6  # header and two rows per table
    assert "Ghosh et al. 2018" in out and "uk-2007 (3.3B edges): 32 s on 1,024 cores" in out
