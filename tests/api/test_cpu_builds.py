"""Second builds of CPU kernels (a Kernel's parallel build, serial_builds'
twins) come from one function, each under a name of its own: Numba's disk
cache is keyed by the qualified name, so two builds sharing one would load
each other's code."""

import importlib

from nx_gpumatch import cpu

MODULES = [
    "nx_gpumatch.cpu.b_matching",
    "nx_gpumatch.cpu.b_suitor_blocks",
    "nx_gpumatch.cpu.bipartite",
    "nx_gpumatch.cpu.bipartite_run",
    "nx_gpumatch.cpu.blossom.events",
    "nx_gpumatch.cpu.blossom.search",
    "nx_gpumatch.cpu.blossom.structure",
    "nx_gpumatch.cpu.csr",
    "nx_gpumatch.cpu.leiden",
    "nx_gpumatch.cpu.louvain.aggregation",
    "nx_gpumatch.cpu.louvain.moves",
    "nx_gpumatch.cpu.louvain.sparse",
    "nx_gpumatch.cpu.louvain.sweeps",
    "nx_gpumatch.cpu.matching",
    "nx_gpumatch.cpu.stable_marriage",
]


def _builds():
    from numba.core.registry import CPUDispatcher

    seen = {}
    for name in MODULES:
        mod = importlib.import_module(name)
        for value in vars(mod).values():
            disps = [value.serial, value.parallel] if isinstance(value, cpu.Kernel) else [value]
            for d in disps:
                if isinstance(d, CPUDispatcher):
                    seen[id(d)] = d
    return list(seen.values())


def test_every_build_has_its_own_cache_name():
    builds = _builds()
    names = [(d.py_func.__module__, d.py_func.__qualname__) for d in builds]
    assert len(builds) > 50
    assert len(set(names)) == len(names), sorted(n for n in names if names.count(n) > 1)


def test_kernel_and_serial_builds_make_twins_the_same_way():
    from nx_gpumatch.cpu import b_matching as cb
    from nx_gpumatch.cpu import bipartite_run as br

    k = cb.sorted_rows
    assert k.serial.py_func.__code__ is k.parallel.py_func.__code__
    assert k.parallel.py_func.__qualname__ == k.serial.py_func.__qualname__ + "_parallel"
    assert k.parallel.targetoptions.get("parallel") and not k.serial.targetoptions.get("parallel")
    # serial twins call each other's twins, never the parallel originals
    fn = br.solve_serial.py_func
    assert fn.__qualname__ == "solve_serial" and fn.__code__ is br.solve.py_func.__code__
    assert fn.__globals__["hopcroft_karp"].py_func.__qualname__ == "hopcroft_karp_serial"
    assert not br.solve_serial.targetoptions.get("parallel")


def test_twin_reads_the_globals_it_is_given():
    def f(x):
        return x * 2 + y  # noqa: F821 - y comes from the twin's globals

    t = cpu.twin(f, "_other", {"y": 3})
    assert t.py_func.__name__ == "f_other" and t.py_func.__qualname__.endswith("f_other")
    assert t.py_func(4) == 11


def test_serial_builds_make_one_twin_per_function():
    """A function given to serial_builds again keeps its twin: Louvain's move
    kernels have one serial build, which every serial caller reaches."""
    from nx_gpumatch.cpu.louvain import moves, sweeps

    for name in ("_compute_moves", "_scan_moves"):
        par, seq = getattr(moves, name), getattr(moves, name + "_seq")
        assert cpu.serial_builds(par) == [seq]
        assert seq.py_func.__code__ is par.py_func.__code__
        assert seq.py_func.__qualname__ == name + "_serial"
        assert par.targetoptions.get("parallel") and not seq.targetoptions.get("parallel")
        # small graphs' optimiser: its batched sweep calls the serial builds only
        batched = sweeps.optimise_1.py_func.__globals__["_batched_sweep"]
        assert batched is not sweeps._batched_sweep
        assert batched.py_func.__globals__[name] is seq


def test_first_use_rents_the_serial_build(monkeypatch):
    """While interpret_small is on, a parallel build that is neither compiled
    nor cached gives way to its serial twin until the family's serial runs
    have taken PARALLEL_RENT seconds (or the call is expected to); a thread
    count the caller chose, warmup (interpreted(False)) and interpret_small off
    compile at once, and so does a build compiled already."""
    import numpy as np

    from nx_gpumatch.config import get_config

    @cpu.njit(cache=False)  # in no disk cache
    def plus_one(a):
        return a + 1

    fam, args = "test-rent", (np.arange(3),)
    monkeypatch.setitem(cpu._RENTED, fam, 0.0)
    with get_config()(interpret_small=True):
        assert cpu.serial_first(fam, plus_one, args)
        assert not cpu.serial_first(fam, plus_one, args, expect=cpu.PARALLEL_RENT)
        with cpu.threads(1):  # chosen by the caller
            assert not cpu.serial_first(fam, plus_one, args)
        with cpu.interpreted(False):
            assert not cpu.serial_first(fam, plus_one, args)
        with cpu.renting(fam):
            plus_one.py_func(args[0])
        assert 0.0 < cpu._RENTED[fam] < 1.0
        cpu._RENTED[fam] = cpu.PARALLEL_RENT  # the rent is paid
        assert not cpu.serial_first(fam, plus_one, args)
        cpu._RENTED[fam] = 0.0
        assert not plus_one.signatures  # asking compiled nothing
        plus_one(*args)
        assert not cpu.serial_first(fam, plus_one, args)  # compiled now
    with get_config()(interpret_small=False):
        assert not cpu.serial_first(fam, plus_one, args)


def test_kernels_rent_their_serial_build(monkeypatch):
    """A Kernel's call on an input large enough for threads runs the serial
    build while its parallel one is not at hand and the rent is not paid."""
    import numba
    import numpy as np
    import pytest

    from nx_gpumatch.config import get_config
    from nx_gpumatch.cpu import csr

    k = csr.gather_int32
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 Numba threads")
    ran = []
    serial = k.serial
    monkeypatch.setattr(k, "serial", lambda *a: ran.append(1) or serial(*a))
    at_hand = cpu.at_hand
    monkeypatch.setattr(cpu, "at_hand", lambda b, a: b is not k.parallel and at_hand(b, a))
    monkeypatch.setitem(cpu._RENTED, k.__module__, 0.0)
    src = np.arange(10, dtype=np.int32)
    idx = np.arange(10)[::-1].copy()
    old = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        with get_config()(interpret_small=True), cpu.parallel_min(1):
            assert k(src, idx).tolist() == src[idx].tolist() and ran == [1]
            assert k.run(10, src, idx, floor=100).tolist() == src[idx].tolist()
            assert ran == [1, 1] and cpu._RENTED[k.__module__] > 0.0
            cpu._RENTED[k.__module__] = cpu.PARALLEL_RENT
            assert k(src, idx).tolist() == src[idx].tolist() and ran == [1, 1]
    finally:
        numba.set_num_threads(old)


def _levels(gen):
    return [(labels.tolist(), info) for labels, info in gen]


def test_community_engines_rent_serial_builds(monkeypatch):
    """A threaded Louvain or Leiden run whose parallel builds are not at hand
    runs the serial ones, with the same levels, and charges their run time to
    the family's rent; a run that starts after that is paid runs the parallel
    builds."""
    import numba
    import pytest

    from nx_gpumatch import generators
    from nx_gpumatch.config import get_config
    from nx_gpumatch.cpu import leiden as cle
    from nx_gpumatch.cpu import louvain as cl
    from nx_gpumatch.cpu.louvain import constants
    from nx_gpumatch.cpu.louvain import engine as eng

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 Numba threads")
    g = generators.random_graph(20000, 60000, seed=3)  # batched sweeps, threads
    arrays = (g.indptr, g.indices, g.weights, g.loop_weight)
    runs = {
        "louvain": lambda: _levels(cl.louvain_levels(*arrays)),
        "leiden": lambda: _levels(cle.leiden_levels(*arrays)),
    }

    class Log(list):  # the serial builds run; with ``pay`` set, each pays the rent
        pay = None

        def append(self, name):
            super().append(name)
            if self.pay:
                cpu._RENTED[self.pay] = constants.PARALLEL_RENT

    ran = Log()
    for name, fn in [("optimise_1", eng.optimise_1), ("aggregate_1", eng.aggregate_1)]:
        monkeypatch.setattr(eng, name, lambda *a, _f=fn, _n=name: ran.append(_n) or _f(*a))
    refine_1 = cle._refine_1
    monkeypatch.setattr(cle, "_refine_1", lambda *a: ran.append("refine_1") or refine_1(*a))
    at_hand = cpu.at_hand
    parallel = (eng.optimise, eng.aggregate, cle._refine)  # as on an empty cache:
    monkeypatch.setattr(cpu, "at_hand", lambda b, a: b not in parallel and at_hand(b, a))
    old = numba.get_num_threads()
    numba.set_num_threads(2)  # not chosen through cpu.threads: the engine decides
    try:
        for family, run in runs.items():
            ran.clear()
            with get_config()(interpret_small=False):
                ref = run()
            assert ran == []  # parallel builds only
            monkeypatch.setitem(cpu._RENTED, family, 0.0)
            expect = g.indices.shape[0] * constants.SERIAL_SECONDS_PER_ARC
            with get_config()(interpret_small=True):
                cpu._RENTED[family] = constants.PARALLEL_RENT - expect  # too late to rent
                assert run() == ref and ran == []
                cpu._RENTED[family] = 0.0
                got = run()
                assert {"optimise_1", "aggregate_1"} <= set(ran), (family, ran)
                assert family == "louvain" or "refine_1" in ran
                assert cpu._RENTED[family] > 0.0
                # a run that starts on the serial builds keeps to them when
                # its first steps pay the rent: it never compiles both builds
                rented = list(ran)
                ran.clear()
                ran.pay = family
                assert run() == got and ran == rented
                ran.pay = None
                assert cpu._RENTED[family] >= constants.PARALLEL_RENT
                ran.clear()
                assert run() == got and ran == []  # paid: the parallel builds
            assert got == ref
    finally:
        numba.set_num_threads(old)


def test_bipartite_rents_its_serial_solve(monkeypatch):
    """A bipartite matching large enough for threads, with no count chosen,
    runs the serial solve while the parallel one is not at hand and the
    family's rent is not paid; a chosen count, or the rent paid, runs the
    parallel one."""
    import numba
    import numpy as np
    import pytest
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_matching

    import nx_gpumatch as gm
    from nx_gpumatch.config import get_config
    from nx_gpumatch.cpu import bipartite_run as br

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 Numba threads")
    ran = []
    serial = br.solve_serial
    monkeypatch.setattr(br, "solve_serial", lambda *a: ran.append("serial") or serial(*a))
    # the parallel solve as if compiled elsewhere: its result is any maximum matching
    monkeypatch.setattr(br, "solve", lambda *a: ran.append("parallel") or serial(*a))
    at_hand = cpu.at_hand
    monkeypatch.setattr(cpu, "at_hand", lambda b, a: b is not br.solve and at_hand(b, a))
    monkeypatch.setitem(cpu._RENTED, "bipartite", 0.0)
    n, m = 40_000, 100_000  # past the interpreted limit, wide enough for threads
    rng = np.random.default_rng(4)
    A = sp.csr_array((np.ones(m), (rng.integers(0, n, m), rng.integers(0, n, m))), shape=(n, n))
    size = int((scipy_matching(A) >= 0).sum())
    with get_config()(interpret_small=True):
        assert (gm.maximum_bipartite_matching(A) >= 0).sum() == size and ran == ["serial"]
        assert cpu._RENTED["bipartite"] > 0.0
        assert (gm.maximum_bipartite_matching(A, threads=2) >= 0).sum() == size
        assert ran[-1] == "parallel"  # a count the caller chose
        cpu._RENTED["bipartite"] = cpu.PARALLEL_RENT
        gm.maximum_bipartite_matching(A)
        assert ran[-1] == "parallel"  # the rent is paid
    with get_config()(interpret_small=False):
        cpu._RENTED["bipartite"] = 0.0
        gm.maximum_bipartite_matching(A)
        assert ran[-1] == "parallel"
