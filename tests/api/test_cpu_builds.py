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
