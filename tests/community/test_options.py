"""One options object for every community engine: the front ends build a
CommunityOptions once, both engines' entry points take it (settings by name
change it), and an unknown setting is an error on every engine."""

import inspect

import numpy as np
import pytest

import nx_gpumatch as nxg
from nx_gpumatch import Graph
from nx_gpumatch.community.schedule import (
    LEIDEN_SWEEP_REL_TOL,
    SWEEP_REL_TOL,
    CommunityOptions,
    SweepRule,
    community_options,
)
from nx_gpumatch.cpu import leiden as cle
from nx_gpumatch.cpu import louvain as cl
from nx_gpumatch.gpu import leiden as gle
from nx_gpumatch.gpu import louvain as gl

ENGINES = [cl.louvain_levels, cle.leiden_levels, gl.louvain_levels, gle.leiden_levels]


def graph():
    rng = np.random.default_rng(3)
    src = rng.integers(0, 120, 500)
    dst = (src + rng.integers(1, 6, 500)) % 120
    return Graph.from_arrays(src, dst, rng.integers(1, 4, 500).astype(float), num_nodes=120)


def labels(gen):
    return [lab.tolist() for lab, _ in gen]


@pytest.mark.parametrize("engine", ENGINES, ids=lambda f: f.__module__)
def test_entry_points_take_options_not_settings(engine):
    params = inspect.signature(engine).parameters
    assert "options" in params
    settings = {f for f in CommunityOptions.__dataclass_fields__}
    assert not settings & set(params), "a setting has a parameter of its own"


@pytest.mark.parametrize("engine", ENGINES, ids=lambda f: f.__module__)
def test_unknown_setting_is_an_error(engine):
    g = graph()
    with pytest.raises(TypeError, match="bogus"):
        next(
            iter(engine(g.indptr, g.indices, g.weights, g.loop_weight, bogus=1, backend="emulate"))
        )
    with pytest.raises(TypeError, match="CommunityOptions"):
        next(iter(engine(g.indptr, g.indices, g.weights, g.loop_weight, {"resolution": 2.0})))


def test_settings_by_name_equal_an_options_object():
    g = graph()
    args = (g.indptr, g.indices, g.weights, g.loop_weight)
    order = np.random.default_rng(1).permutation(g.num_nodes)
    opts = CommunityOptions(resolution=0.7, key=5, max_sweeps=3)
    for engine in (cl.louvain_levels, cle.leiden_levels):
        want = labels(engine(*args, resolution=0.7, key=5, max_sweeps=3, order=order))
        assert labels(engine(*args, opts, order=order)) == want
        base = CommunityOptions(resolution=0.2)
        assert labels(engine(*args, base, order=order, resolution=0.7, key=5, max_sweeps=3)) == want


def test_sweep_rule_defaults_by_method():
    opts = CommunityOptions()
    assert opts.sweep_rule() == SweepRule()
    assert opts.sweep_rule().rel_tol == SWEEP_REL_TOL
    assert opts.sweep_rule(leiden=True).rel_tol == LEIDEN_SWEEP_REL_TOL
    assert opts.sweep_rule(margins=False).margins is False
    assert community_options(opts) is opts
    assert community_options(opts, rel_tol=0.0).sweep_rule(leiden=True).rel_tol == 0.0


@pytest.mark.parametrize("method", ["louvain", "leiden"])
def test_front_end_builds_one_options_object(monkeypatch, method):
    seen = []
    real = getattr(cl if method == "louvain" else cle, f"{method}_levels")

    def spy(indptr, indices, w, loop, options=None, **kw):
        seen.append(options)
        return real(indptr, indices, w, loop, options, **kw)

    monkeypatch.setattr(cl if method == "louvain" else cle, f"{method}_levels", spy)
    run = nxg.louvain_communities if method == "louvain" else nxg.leiden_communities
    run(graph(), resolution=0.5, seed=2, device="cpu")
    assert len(seen) == 1 and isinstance(seen[0], CommunityOptions)
    assert seen[0].resolution == 0.5
