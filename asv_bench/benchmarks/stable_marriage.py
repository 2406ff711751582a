"""Stable marriage on Naim et al.'s easy and hard instances (CPU engines), and the
``matching`` package on a small complete instance.

Instances are generated and packed once in ``setup_cache``; ``time_solve`` is
the algorithm alone and ``track_proposals_per_second`` the throughput measure
of Naim et al. The full-size runs (easy n = 5e6, hard n = 2e4) are in
``python -m nx_gpumatch.benchmark stable_marriage``.
"""

import sys
import time

import numpy as np

import nx_gpumatch as gm
from nx_gpumatch.benchmark.stable_marriage import solve_counting

INSTANCES = ["easy/1000000", "hard/5000"]


def _prepare(key):
    kind, n = key.split("/")
    return gm.prepare_preferences(*gm.stable_marriage_instance(kind, int(n), seed=0))


class StableMarriage:
    params = (INSTANCES, ["mcvitie_wilson", "gale_shapley"], ["parallel", "sequential"])
    param_names = ["instance", "algorithm", "engine"]
    timeout = 900

    def setup_cache(self):
        return {key: _prepare(key) for key in INSTANCES}

    def setup(self, prefs, instance, algorithm, engine):
        self.prefs = prefs[instance]
        solve_counting(self.prefs, algorithm, engine)  # load kernels

    def time_solve(self, prefs, instance, algorithm, engine):
        solve_counting(self.prefs, algorithm, engine)

    def track_proposals_per_second(self, prefs, instance, algorithm, engine):
        t = time.perf_counter()
        _, proposals = solve_counting(self.prefs, algorithm, engine)
        return proposals / (time.perf_counter() - t)

    track_proposals_per_second.unit = "proposals/s"


class Preparation:
    """Generating an instance, packing the mutual lists, checking a matching."""

    params = INSTANCES
    param_names = ["instance"]
    timeout = 900

    def setup(self, instance):
        kind, n = instance.split("/")
        self.lists = gm.stable_marriage_instance(kind, int(n), seed=0)
        small = gm.prepare_preferences(*gm.stable_marriage_instance(kind, 50, seed=0))
        gm.is_stable(gm.stable_marriage(small), small)  # loads the check's kernels
        # the check alone is timed: on packed lists, of a matching found here
        self.packed = gm.prepare_preferences(*self.lists)
        self.matching = gm.stable_marriage(self.packed)

    def time_generate(self, instance):
        kind, n = instance.split("/")
        gm.stable_marriage_instance(kind, int(n), seed=1)

    def time_prepare(self, instance):
        gm.prepare_preferences(*self.lists)

    def time_is_stable(self, instance):
        gm.is_stable(self.matching, self.packed)


class VersusMatchingPackage:
    """A complete random instance in dict form (string names), small enough for
    the ``matching`` package's recursive copy without raised limits."""

    params = [80]
    param_names = ["n"]
    timeout = 600

    def setup(self, n):
        rng = np.random.default_rng(0)
        self.men = {f"m{i}": [f"w{j}" for j in rng.permutation(n).tolist()] for i in range(n)}
        self.women = {f"w{i}": [f"m{j}" for j in rng.permutation(n).tolist()] for i in range(n)}
        gm.stable_marriage(self.men, self.women)

    def time_nx_gpumatch(self, n):
        gm.stable_marriage(self.men, self.women)

    def time_matching_package(self, n):
        from matching.games import StableMarriage

        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, 100_000))
        try:
            StableMarriage.create_from_dictionaries(self.men, self.women).solve(optimal="suitor")
        finally:
            sys.setrecursionlimit(old)
