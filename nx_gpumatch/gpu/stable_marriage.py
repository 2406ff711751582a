"""Stable marriage on the GPU: host side of kernels/stable_marriage.cu.

Written against ``array_module``/``get_module`` only, so the same code runs on
a CUDA device (``backend="cupy"``) and on the CPU in emulation
(``backend="emulate"``). It returns the CPU engines' man-optimal matching.
"""

from __future__ import annotations

import math

import numpy as np

from nx_gpumatch.gpu._launch import EMPTY_WORD, MAX_GRID, array_module, get_module, to_host

__all__ = ["run"]

BLOCK = 128


def run(prefs, algorithm="mcvitie_wilson", *, backend="cupy", block=BLOCK):
    """The entry every stable-marriage engine offers (see
    :func:`nx_gpumatch.cpu.stable_marriage.run`): McVitie-Wilson with one
    thread per man on prepared preferences (``prefs.ptr``, ``prefs.packed``,
    ``prefs.n_women``; see
    :class:`nx_gpumatch.algorithms.stable_marriage.Preferences`).

    Returns (mate, proposals): the int64 NumPy man -> woman array (-1
    unmatched) and the number of list entries the men considered.
    """
    if algorithm != "mcvitie_wilson":
        raise ValueError("the GPU engine runs McVitie-Wilson only; use algorithm='mcvitie_wilson'")
    return _mcvitie_wilson(prefs.ptr, prefs.packed, prefs.n_women, backend, block)


def _mcvitie_wilson(ptr, packed, n_women, backend, block):
    xp = array_module(backend)
    n_men = int(ptr.shape[0]) - 1
    d_ptr = xp.asarray(ptr, dtype=xp.int64)
    d_packed = xp.ascontiguousarray(xp.asarray(packed, dtype=xp.int64))
    word = xp.full(max(int(n_women), 1), EMPTY_WORD, xp.uint64)
    nxt = d_ptr[:-1].copy()
    mate = xp.full(n_men, -1, xp.int64)
    mod = get_module("stable_marriage", backend)
    if n_men > 0:
        mod.get_function("sm_mcvitie_wilson")(
            (math.ceil(n_men / block),), (block,), (np.int32(n_men), d_ptr, d_packed, word, nxt)
        )
    if n_women > 0:
        grid = max(1, min(MAX_GRID, math.ceil(n_women / block)))
        mod.get_function("sm_mates")((grid,), (block,), (np.int32(n_women), word, mate))
    proposals = int((nxt - d_ptr[:-1]).sum()) if n_men else 0
    return to_host(mate).astype(np.int64, copy=False), proposals
