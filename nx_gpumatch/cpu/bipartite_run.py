"""A whole CPU bipartite matching in one compiled call: initial matching,
augmenting phases, Konig cover and its check; and the code of the CPU
engine's entries (:func:`nx_gpumatch.cpu.bipartite.run`, whose module this
one builds on, and the initial matching and the proof it lends other engines).

``solve`` runs the parallel kernels of :mod:`nx_gpumatch.cpu.bipartite`;
``solve_serial`` (and ``konig_cover_serial``) the same code with every
``prange`` a plain loop, for calls on one thread: no thread team is started,
and the caller leaves Numba's thread count alone. On a small input both of
those cost more than the matching itself.
"""

import numpy as np

from nx_gpumatch import cpu
from nx_gpumatch.config import get_config
from nx_gpumatch.cpu import bipartite as cb
from nx_gpumatch.cpu import njit, serial_builds
from nx_gpumatch.cpu.bipartite import (
    augment_bfs,
    hopcroft_karp,
    init_cheap,
    init_karp_sipser,
    transpose,
)
from nx_gpumatch.cpu.bipartite_cover import cover_from_levels, konig_cover, verify

# A serial solve's seconds per stored entry (random 1M x 1M, 4M entries: 1.1-1.3 s
# on one thread, 0.7 s on two), the expectation that decides whether a first
# call rents the serial build (see _serial_or_parallel).
SERIAL_SECONDS_PER_ENTRY = 0.3e-6

INIT_CODES = {name: code for code, name in enumerate(cb.INITS)}
ALGORITHM_CODES = {"auto": 0, "hopcroft_karp": 1, "apfb": 2, "apsb": 3}


@njit(cache=True)
def solve(nrows, ncols, cptr, crows, init, algorithm, wr, apfb_phases):
    """(rmatch, cmatch, row_cover, col_cover, phases, initial, work, proved).

    ``init`` and ``algorithm`` are codes of :data:`INIT_CODES` and
    :data:`ALGORITHM_CODES`; "auto" runs at most ``apfb_phases`` APFB phases,
    then Hopcroft-Karp. ``initial`` is the size of the initial matching,
    ``work`` the edges the searches scanned, ``proved`` whether the cover
    checked out (a matching and a cover of its size)."""
    rmatch = np.full(nrows, -1, np.int32)
    cmatch = np.full(ncols, -1, np.int32)
    if init == 1:
        init_cheap(ncols, cptr, crows, rmatch, cmatch)
    elif init == 2:
        rptr, rcols = transpose(nrows, ncols, cptr, crows)
        init_karp_sipser(nrows, ncols, cptr, crows, rptr, rcols, rmatch, cmatch)
    initial = 0
    for c in range(ncols):
        if cmatch[c] >= 0:
            initial += 1
    if algorithm == 1:
        phases, levels, work = hopcroft_karp(nrows, ncols, cptr, crows, rmatch, cmatch)
    else:
        limit = apfb_phases if algorithm == 0 else -1
        phases, levels, work, done = augment_bfs(
            nrows, ncols, cptr, crows, rmatch, cmatch, algorithm != 3, wr, limit
        )
        if not done:
            more, levels, w = hopcroft_karp(nrows, ncols, cptr, crows, rmatch, cmatch)
            phases += more
            work += w
    # the engines' last search found nothing and ran to its end: levels mark what it reached
    row_cover, col_cover = cover_from_levels(nrows, rmatch, levels)
    proved = verify(nrows, ncols, cptr, crows, rmatch, cmatch, row_cover, col_cover)
    return rmatch, cmatch, row_cover, col_cover, phases, initial, work, proved


@njit(cache=True)
def check_cover(nrows, ncols, cptr, crows, rmatch, cmatch):
    """:func:`konig_cover` of a given matching and its check: (row_cover,
    col_cover, proved)."""
    row_cover, col_cover, ok = konig_cover(nrows, ncols, cptr, crows, rmatch, cmatch)
    proved = ok and verify(nrows, ncols, cptr, crows, rmatch, cmatch, row_cover, col_cover)
    return row_cover, col_cover, proved


# Every function on the way from these two to a prange loop.
solve_serial, check_cover_serial, *_ = serial_builds(
    solve,
    check_cover,
    transpose,
    init_karp_sipser,
    cb._ks_round,
    hopcroft_karp,
    augment_bfs,
    cb._ap_level,
    cb._alternate_all,
    konig_cover,
    cb.alternating_bfs,
    cb._start,
    cb._expand_level,
    cover_from_levels,
    verify,
)


# ------------------------------------------------------------ engine entries
def threads_for(bi, threads=None):
    """Numba threads for a call on the biadjacency ``bi`` (``threads``: the
    caller's count, None: the config's)."""
    nthreads = cpu.threads_for(bi.num_edges, threads)
    if bi.ncols < min(cb.SMALL_LEVEL, cpu.PARALLEL_MIN):
        # no search level is wide enough to split: threads would only start teams
        nthreads = 1
    return nthreads


def run(bi, algorithm, start, *, wr=True, threads=None, apfb_phases=8):
    """See :func:`nx_gpumatch.cpu.bipartite.run`."""
    if not isinstance(start, str) or start not in INIT_CODES:
        raise ValueError(f"the CPU engine starts from one of {cb.INITS}, got {start!r}")
    args = (
        bi.nrows,
        bi.ncols,
        bi.cptr,
        bi.crows,
        INIT_CODES[start],
        ALGORITHM_CODES[algorithm],
        bool(wr),
        apfb_phases,
    )
    out = _serial_or_parallel(bi.num_edges, threads_for(bi, threads), solve_serial, solve, args)
    rmatch, cmatch, row_cover, col_cover, phases, initial, work, proved = out
    return rmatch, cmatch, phases, initial, work, (row_cover, col_cover, proved)


def initial_matching(bi, init, threads=None):
    """(rmatch, cmatch): the initial matching ``init`` ("none", "cheap" or
    "karp_sipser"), for an engine that has no heuristic of its own."""
    rmatch = np.full(bi.nrows, -1, np.int32)
    cmatch = np.full(bi.ncols, -1, np.int32)
    with cpu.run("bipartite", bi.num_edges, threads_for(bi, threads)):
        if init == "cheap":
            init_cheap(bi.ncols, bi.cptr, bi.crows, rmatch, cmatch)
        elif init == "karp_sipser":
            rptr, rcols = transpose(bi.nrows, bi.ncols, bi.cptr, bi.crows)
            init_karp_sipser(bi.nrows, bi.ncols, bi.cptr, bi.crows, rptr, rcols, rmatch, cmatch)
        elif init != "none":
            raise ValueError(f"init must be one of {cb.INITS}, got {init!r}")
    return rmatch, cmatch


def prove(bi, rmatch, cmatch, threads=None):
    """(row_cover, col_cover, proved): Konig's cover of a matching found by
    any engine, and whether it proves the matching maximum."""
    args = (bi.nrows, bi.ncols, bi.cptr, bi.crows, rmatch, cmatch)
    return _serial_or_parallel(
        bi.num_edges, threads_for(bi, threads), check_cover_serial, check_cover, args
    )


def _serial_or_parallel(size, nthreads, serial, parallel, args):
    """``serial(*args)`` when the call runs on one thread: it starts no thread
    team, so Numba's thread count is left as it is (setting and restoring it,
    and each one-thread team, cost a small call's whole budget); else
    ``parallel(*args)`` on ``nthreads`` threads (None: as the load allows),
    unless no count was chosen (here or in the config), the parallel build is
    neither compiled nor cached and the family's rent is not paid: its compile
    costs more than the serial build's (a first call on 100k entries, 2
    cores: 17 s against 10), so the serial one runs (see
    ``cpu.PARALLEL_RENT``; on several threads the matching may be any maximum
    one). Either may run interpreted (see
    :func:`nx_gpumatch.cpu.run`)."""
    compiled = not cpu.should_interpret("bipartite", size)
    rent = (
        nthreads is None
        and get_config().threads is None
        and compiled
        and cpu.serial_first("bipartite", parallel, args, size * SERIAL_SECONDS_PER_ENTRY)
    )
    if rent:
        with cpu.renting("bipartite"):
            return serial(*args)
    if nthreads == 1:
        if compiled:
            return serial(*args)
        with cpu.run("bipartite", size):
            return serial(*args)
    with cpu.run("bipartite", size, nthreads):
        return parallel(*args)
