"""Stable marriage front end (SM and SMI; Naim et al.).

Input forms (men and women alike; dicts go with dicts):

* dict form: ``{person: [best, second, ...]}`` with any hashable names. The
  result is a dict man -> woman (unmatched men absent).
* array form: an ``(indptr, choices)`` tuple per side, CSR style: person i ranks
  ``choices[indptr[i]:indptr[i+1]]`` (ids of the other side), best first. The
  result is an int64 array, woman id per man or -1.
* 2-D integer array: row i is person i's complete list, best first (the
  same as an ``(indptr, choices)`` tuple with rows of equal length; the two
  array forms can be mixed). Same result as the tuple form.

Lists may be incomplete (SMI): a pair can marry only if each ranks the other;
a name ranked by one side only is ignored. The answer is the unique
man-optimal stable matching, whichever algorithm and engine computes it.
"""

import numbers
import sys
from collections.abc import Mapping
from itertools import chain

import numpy as np

from nx_gpumatch import cpu
from nx_gpumatch._constants import NO_RANK
from nx_gpumatch._validation import check_bool, check_device
from nx_gpumatch.algorithms._compact import Compaction, compact_graph, compaction
from nx_gpumatch.algorithms._convert import convert, matching_result, to_graph
from nx_gpumatch.algorithms._engines import engine_for, engine_module, resolve_device
from nx_gpumatch.config import get_config

ALGORITHMS = ("mcvitie_wilson", "gale_shapley")
ENGINES = ("sequential", "parallel", "gpu")
# parallel=None picks the threaded engine from this many acceptable pairs on:
# below it, waking threads and fighting over the same few women's words cost
# more than they save.
PARALLEL_MIN_ENTRIES = 1 << 20
KINDS = ("easy", "hard")

__all__ = [
    "stable_marriage",
    "is_stable",
    "blocking_pair",
    "prepare_preferences",
    "Preferences",
    "stable_marriage_instance",
    "smi_from_graph",
    "greedy_matching_smi",
]


class Preferences:
    """A stable-marriage instance ready to solve (see :func:`prepare_preferences`).

    Attributes
    ----------
    n_men, n_women : int
    ptr : int64 array (n_men + 1)
        Man m's usable entries are ``packed[ptr[m]:ptr[m+1]]``, best first.
    packed : int64 array
        Each entry ``(her rank of him) << 32 | woman``; only mutually ranked pairs.
    men, women : lists of names (dict form) or None (array form)
    """

    __slots__ = ("n_men", "n_women", "ptr", "packed", "men", "women")

    def __init__(self, n_men, n_women, ptr, packed, men=None, women=None):
        self.n_men = n_men
        self.n_women = n_women
        self.ptr = ptr
        self.packed = packed
        self.men = men
        self.women = women

    @property
    def num_entries(self):
        """Mutually ranked pairs (each counted once, on the men's side)."""
        return int(self.ptr[-1])

    def __repr__(self):
        return f"<Preferences: {self.n_men} men, {self.n_women} women, {self.num_entries} acceptable pairs>"


# ------------------------------------------------------------ conversion
def prepare_preferences(men_prefs, women_prefs, *, threads=None):
    """Validate both sides and build the packed mutual lists once.

    Useful when one instance is solved or checked several times: pass the
    result as the only preference argument of :func:`stable_marriage`,
    :func:`is_stable` or :func:`blocking_pair`.
    """
    from nx_gpumatch.cpu import stable_marriage as csm

    if isinstance(men_prefs, Mapping) or isinstance(women_prefs, Mapping):
        if not (isinstance(men_prefs, Mapping) and isinstance(women_prefs, Mapping)):
            raise ValueError(
                "men_prefs and women_prefs must both be dicts, or both arrays ((indptr, choices) tuples or 2-D arrays)"
            )
        size = _num_entries(men_prefs) + _num_entries(women_prefs)
        with cpu.run("stable_marriage", size, threads) as parts:
            men, women, (m_ptr, m_ch), (w_ptr, w_ch) = _from_dicts(men_prefs, women_prefs, parts)
    else:
        men = women = None
        m_ptr, m_ch = _csr_side(men_prefs, "men_prefs")
        w_ptr, w_ch = _csr_side(women_prefs, "women_prefs")
    n_men = m_ptr.shape[0] - 1
    n_women = w_ptr.shape[0] - 1
    if max(n_men, n_women) >= 2**31 - 1:
        raise ValueError("at most 2**31 - 2 men and women are supported (int32 ids)")
    sides = (m_ptr, m_ch, w_ptr, w_ch)
    mc = wc = None
    # ids made from names are in range by construction
    if men is not None or (_in_range(m_ch, n_women) and _in_range(w_ch, n_men)):
        # Only the people who rank someone or are ranked take part in the checks
        # and the mutual lists; the others are single whatever the answer.
        mc = compaction(n_men, rows=m_ptr, ids=(w_ch,))
        wc = compaction(n_women, rows=w_ptr, ids=(m_ch,))
    if mc is not None or wc is not None:
        mc = mc or Compaction(n_men, np.arange(n_men))
        wc = wc or Compaction(n_women, np.arange(n_women))
        sides = (
            np.append(m_ptr[mc.kept], m_ptr[-1]),
            wc.index(m_ch),
            np.append(w_ptr[wc.kept], w_ptr[-1]),
            mc.index(w_ch),
        )
    with cpu.run("stable_marriage", m_ch.shape[0] + w_ch.shape[0], threads) as parts:
        small = sides[0] is not m_ptr
        if small and not _all_good(csm, *sides, parts):
            sides = (m_ptr, m_ch, w_ptr, w_ch)  # name the fault in the caller's numbering
            small = False
        if not small:
            _check_side(csm, m_ptr, m_ch, n_women, parts, men, women, "man", "woman")
            _check_side(csm, w_ptr, w_ch, n_men, parts, women, men, "woman", "man")
        k_men, k_women = sides[0].shape[0] - 1, sides[2].shape[0] - 1
        ptr, packed = csm.mutual_lists(*sides, k_men, k_women, parts)
    if small:  # back to everyone's numbering
        count = np.zeros(n_men + 1, np.int64)
        count[mc.kept + 1] = np.diff(ptr)
        ptr = np.cumsum(count)
        packed = (packed & ~csm.LOW) | wc.kept[packed & csm.LOW]
    return Preferences(n_men, n_women, ptr, packed, men, women)


def _in_range(ids, n):
    return ids.size == 0 or (int(ids.min()) >= 0 and int(ids.max()) < n)


def _all_good(csm, m_ptr, m_ch, w_ptr, w_ch, parts):
    """No list of the (compacted) instance repeats a name."""
    k_men, k_women = m_ptr.shape[0] - 1, w_ptr.shape[0] - 1
    for ptr, ch, n_other in ((m_ptr, m_ch, k_women), (w_ptr, w_ch, k_men)):
        if csm.first_bad_entry(ptr, ch, n_other, csm.row_bounds(ptr, parts)) >= 0:
            return False
    return True


def _num_entries(prefs):
    """Entries of a dict of lists (for cpu.run; bad lists are reported later)."""
    try:
        return sum(map(len, prefs.values()))
    except TypeError:
        return sum(len(v) if hasattr(v, "__len__") else 0 for v in prefs.values())


def _as_prefs(men_prefs, women_prefs, threads=None):
    if isinstance(men_prefs, Preferences):
        if women_prefs is not None:
            raise ValueError("pass women_prefs=None with a prepared Preferences object")
        return men_prefs
    if women_prefs is None:
        raise ValueError(
            "women_prefs is required (unless men_prefs is a prepared Preferences object)"
        )
    return prepare_preferences(men_prefs, women_prefs, threads=threads)


_LIST_TYPES = (list, tuple)


def _from_dicts(men_prefs, women_prefs, parts=1):
    men = list(men_prefs)
    women = list(women_prefs)
    m_index = {m: i for i, m in enumerate(men)}
    w_index = {w: j for j, w in enumerate(women)}
    m_side = _encode(men_prefs, w_index, "man", "women", parts)
    w_side = _encode(women_prefs, m_index, "woman", "men", parts)
    return men, women, m_side, w_side


def _encode(prefs, index, who, other, parts=1):
    lists = list(prefs.values())
    for name, lst in zip(prefs, lists):
        if not isinstance(lst, _LIST_TYPES) and not (isinstance(lst, np.ndarray) and lst.ndim == 1):
            raise ValueError(
                f"preferences of {who} {name!r} must be a list (best first), got {type(lst).__name__}"
            )
    lengths = np.fromiter(map(len, lists), np.int64, len(lists))
    ptr = np.zeros(len(lists) + 1, np.int64)
    np.cumsum(lengths, out=ptr[1:])
    total = int(ptr[-1])
    choices = _encode_int_names(lists, index, total)
    if choices is None:
        choices = _encode_str_names(lists, index, total, parts)
    if choices is not None:
        return ptr, choices
    try:
        choices = np.fromiter(map(index.__getitem__, chain.from_iterable(lists)), np.int32, total)
    except (KeyError, TypeError):
        for name, lst in zip(prefs, lists):
            for x in lst:
                try:
                    index[x]
                except (KeyError, TypeError):
                    raise ValueError(
                        f"{who} {name!r} ranks {x!r}, who is not among the {other}"
                    ) from None
        raise
    return ptr, choices


_INT64 = (-(2**63), 2**63 - 1)


def _encode_int_names(lists, index, total):
    """Vectorized encoding when the other side's names are integers over a
    compact range (the common programmatic case): one lookup table instead of a
    dict lookup per entry. None when it does not apply or an entry is not a
    known name (the general path then reports the error)."""
    if not index or total == 0:
        return None
    keys = np.fromiter(index, dtype=object, count=len(index))
    # bools, floats, numpy scalars, ints beyond int64: general path
    if not all(type(k) is int and _INT64[0] <= k <= _INT64[1] for k in keys.tolist()):
        return None
    keys = keys.astype(np.int64)
    lo = int(keys.min())
    span = int(keys.max()) - lo + 1
    if span > 4 * len(keys) + 1024:
        return None
    try:
        if all(isinstance(v, np.ndarray) for v in lists):
            flat = np.concatenate(lists) if lists else np.empty(0, np.int64)
        else:
            flat = np.array(list(chain.from_iterable(lists)))
    except (ValueError, TypeError):  # ragged or odd entries: the general path names them
        return None
    # Integer entries only: a float or string must go through the dict, whose
    # equality rules (1.0 == 1) and error messages are the reference.
    if flat.ndim != 1 or flat.shape[0] != total or flat.dtype.kind not in "iu":
        return None
    # range first: uint64 entries past int64 would wrap in the subtraction
    if flat.size and (int(flat.min()) < lo or int(flat.max()) >= lo + span):
        return None
    flat = flat.astype(np.int64, copy=False) - lo
    lut = np.full(span, -1, np.int32)
    lut[keys - lo] = np.arange(len(keys), dtype=np.int32)
    choices = lut[flat]
    if choices.size and choices.min() < 0:
        return None
    return choices


def _encode_str_names(lists, index, total, parts=1):
    """Vectorized encoding when the other side's names are all ``str``: every
    list is joined into one UTF-8 buffer (names separated by NUL) and looked up
    in one pass by :func:`encode_names` instead of one dict lookup per entry
    from Python. None when it does not apply or an entry is not a known name
    (the general path then reports the error): a non-string entry makes the
    join fail, and a name holding NUL changes the count of names."""
    from nx_gpumatch.cpu import stable_marriage_names as cnames

    if not index or total == 0 or not all(type(k) is str for k in index):
        return None
    try:
        # Joined and encoded list by list: no flat list of every entry, and
        # each list's text is copied while it is in cache, not in one more
        # pass over the whole text.
        buf = np.frombuffer(
            b"".join([("\0".join(lst) + "\0").encode("utf-8") for lst in lists if len(lst)]),
            np.uint8,
        )
        keys = _utf8(index)
    except (TypeError, UnicodeEncodeError):  # not all strings; lone surrogates
        return None
    choices, status = cnames.encode_names(buf, keys, len(index), total, 0, parts)
    return choices if status == 0 else None


def _utf8(names):
    """Names as UTF-8 bytes, each followed by a NUL byte."""
    names = list(names)
    names.append("")  # the last NUL, without copying the joined text again
    return np.frombuffer("\0".join(names).encode("utf-8"), np.uint8)


def _csr_side(side, argname):
    if isinstance(side, (np.ndarray, list)):
        return _dense_side(side, argname)
    if not isinstance(side, tuple) or len(side) != 2:
        raise ValueError(
            f"{argname} must be a dict of preference lists, an (indptr, choices) tuple or a 2-D integer array (one list per row), got {type(side).__name__}"
        )
    indptr = np.asarray(side[0])
    choices = np.asarray(side[1])
    if indptr.ndim != 1 or indptr.shape[0] < 1 or (indptr.size and indptr.dtype.kind not in "iu"):
        raise ValueError(f"{argname}: indptr must be a non-empty 1-D integer array")
    if choices.ndim != 1 or (choices.size and choices.dtype.kind not in "iu"):
        raise ValueError(f"{argname}: choices must be a 1-D integer array")
    indptr = indptr.astype(np.int64, copy=False)
    if indptr[0] != 0 or indptr[-1] != choices.shape[0] or np.any(np.diff(indptr) < 0):
        raise ValueError(
            f"{argname}: indptr must start at 0, never decrease and end at len(choices) = {choices.shape[0]}"
        )
    if choices.dtype != np.int32:
        if choices.size and (choices.min() < -(2**31) or choices.max() >= 2**31):
            raise ValueError(f"{argname}: choices must be ids that fit in int32")
        choices = choices.astype(np.int32)
    return indptr, np.ascontiguousarray(choices)


def _dense_side(side, argname):
    """A 2-D array, row i = person i's complete list (ids of the other side), as CSR."""
    arr = np.asarray(side)
    if arr.ndim != 2:
        raise ValueError(
            f"{argname}: an array of preferences must be 2-D (one list per row), or pass an (indptr, choices) tuple; got {arr.ndim}-D"
        )
    if arr.size and arr.dtype.kind not in "iu":
        raise ValueError(
            f"{argname}: a 2-D preference array must hold integer ids, got {arr.dtype}"
        )
    rows, k = arr.shape
    choices = arr.reshape(-1)
    if choices.dtype != np.int32:
        if choices.size and (choices.min() < -(2**31) or choices.max() >= 2**31):
            raise ValueError(f"{argname}: choices must be ids that fit in int32")
        choices = choices.astype(np.int32)
    return np.arange(rows + 1, dtype=np.int64) * k, np.ascontiguousarray(choices)


_PLURAL = {"man": "men", "woman": "women"}


def _check_side(csm, ptr, choices, n_other, parts, names, other_names, who, other):
    q = int(csm.first_bad_entry(ptr, choices, n_other, csm.row_bounds(ptr, parts)))
    if q < 0:
        return
    row = int(np.searchsorted(ptr, q, side="right")) - 1
    x = int(choices[q])
    person = row if names is None else names[row]
    if x < 0 or x >= n_other:
        raise ValueError(
            f"{who} {person!r} ranks {other} {x}, but the {_PLURAL[other]} are numbered "
            f"0..{n_other - 1}"
        )
    target = x if other_names is None else other_names[x]
    raise ValueError(f"{who} {person!r} ranks {target!r} twice")


# ------------------------------------------------------------- solving
def solve(prefs, *, algorithm="mcvitie_wilson", engine="parallel", threads=None, backend="cupy"):
    """Run one engine on prepared preferences; returns (mate, proposals).

    ``mate`` is the man -> woman id array (-1 unmatched); ``proposals`` is the
    number of list entries the men considered (for each man, his list up to and
    including his wife, or all of it), the proposal count Naim et al. report.
    ``engine`` is "sequential", "parallel" (CPU threads) or "gpu" (McVitie-
    Wilson only; ``backend`` "cupy", or "emulate" to run the kernel on the CPU).
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    from nx_gpumatch.cpu.stable_marriage import LOW

    mc = compaction(prefs.n_men, rows=prefs.ptr)
    wc = compaction(prefs.n_women, ids=(_women_of(prefs.packed),))
    if mc is not None or wc is not None:
        # People without a mutually ranked partner stay single.
        mc = mc or Compaction(prefs.n_men, np.arange(prefs.n_men))
        wc = wc or Compaction(prefs.n_women, np.arange(prefs.n_women))
        small = Preferences(
            mc.size,
            wc.size,
            np.append(prefs.ptr[mc.kept], prefs.ptr[-1]),
            (prefs.packed & ~LOW) | wc.index(prefs.packed & LOW),
        )
        mate, proposals = solve(
            small, algorithm=algorithm, engine=engine, threads=threads, backend=backend
        )
        return mc.spread_partners(mate, wc), proposals
    if engine == "gpu":
        if backend == "cupy":
            _, gpu_engine = engine_for("stable_marriage", "gpu", prefs.num_entries)
        else:  # the GPU engine's kernel runs in emulation: no device to resolve
            gpu_engine = engine_module("stable_marriage", "gpu")
        return gpu_engine.run(prefs, algorithm, backend=backend)
    cpu_engine = engine_module("stable_marriage", "cpu")  # chosen already: nothing to resolve
    with cpu.run("stable_marriage", prefs.num_entries, threads) as parts:
        return cpu_engine.run(prefs, algorithm, parallel=engine == "parallel", parts=parts)


def _women_of(packed):
    """The woman of each packed entry: a strided view of the words' low halves
    (no masked copy of the whole array)."""
    low = 0 if sys.byteorder == "little" else 1
    return packed.view(np.int32)[low::2]


def _choose_engine(prefs, algorithm, device, parallel, threads):
    requested = check_device(get_config().device if device is None else device)
    if requested == "gpu" and algorithm != "mcvitie_wilson":
        raise ValueError(
            "device='gpu' runs McVitie-Wilson only; use algorithm='mcvitie_wilson' or the CPU"
        )
    if algorithm == "mcvitie_wilson" and resolve_device(device, prefs.num_entries) == "gpu":
        return "gpu"
    if parallel is None:
        # as cpu.run("stable_marriage", ...) will count the threads
        with cpu.threads(threads, prefs.num_entries, shared_core=True) as parts:
            parallel = parts > 1 and prefs.num_entries >= PARALLEL_MIN_ENTRIES
    return "parallel" if parallel else "sequential"


def stable_marriage(
    men_prefs,
    women_prefs=None,
    *,
    algorithm="mcvitie_wilson",
    device=None,
    parallel=None,
    threads=None,
):
    """Man-optimal stable matching (Gale-Shapley / McVitie-Wilson).

    Parameters
    ----------
    men_prefs, women_prefs : dicts of lists, (indptr, choices) tuples or 2-D arrays
        Preference lists, best first (see the module docs). Lists may be
        incomplete or empty; counts of men and women may differ.
        ``men_prefs`` may instead be a :class:`Preferences` from
        :func:`prepare_preferences` (then leave ``women_prefs`` out).
    algorithm : "mcvitie_wilson" or "gale_shapley"
        Order of proposals: a rejected man proposes again at once (stack) or
        waits his turn (queue). Both give the same matching.
    device : "auto", "cpu", "gpu" or None (the config's)
        The GPU runs McVitie-Wilson, one thread per man.
    parallel : bool or None
        CPU only: threads with a CAS per woman (True) or the sequential
        algorithm (False); None picks parallel when more than one thread runs
        and there are at least ``PARALLEL_MIN_ENTRIES`` acceptable pairs.
    threads : int or None
        Numba threads (None: the config's).

    Returns
    -------
    dict man -> woman (dict form; unmatched men absent), or an int64 array of
    woman ids per man, -1 for unmatched (array form).

    Raises
    ------
    ValueError
        Preferences that are not lists, a name ranked twice in one list, or a
        name that is not on the other side.
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
    parallel = check_bool(parallel, "parallel", none=True)
    prefs = _as_prefs(men_prefs, women_prefs, threads)
    engine = _choose_engine(prefs, algorithm, device, parallel, threads)
    mate, _ = solve(prefs, algorithm=algorithm, engine=engine, threads=threads)
    return _result(prefs, mate)


def _result(prefs, mate):
    if prefs.men is None:
        return mate
    men, women = prefs.men, prefs.women
    return {men[m]: women[w] for m, w in enumerate(mate.tolist()) if w >= 0}


# ------------------------------------------------------------- checking
class _NotAMatching(ValueError):
    pass


def _among(name, index):
    try:
        return name in index
    except TypeError:  # unhashable: no one's name
        return False


def _mate_array(prefs, matching):
    n_men, n_women = prefs.n_men, prefs.n_women
    if prefs.men is None:
        mate = np.asarray(matching)
        if mate.shape != (n_men,) or (mate.size and mate.dtype.kind not in "iu"):
            raise ValueError(
                f"matching must be an integer array of length {n_men} (woman id or -1 per man)"
            )
        mate = mate.astype(np.int64)
        if np.any((mate < -1) | (mate >= n_women)):
            raise ValueError(f"matching names a woman outside 0..{n_women - 1}")
        mate[mate < 0] = -1
    else:
        if not isinstance(matching, Mapping):
            raise ValueError("matching must be a dict man -> woman")
        m_index = {m: i for i, m in enumerate(prefs.men)}
        w_index = {w: j for j, w in enumerate(prefs.women)}
        mate = np.full(n_men, -1, np.int64)
        for m, w in matching.items():
            if not _among(m, m_index):
                raise ValueError(f"matching names {m!r}, who is not among the men")
            if not _among(w, w_index):
                raise ValueError(f"matching names {w!r}, who is not among the women")
            mate[m_index[m]] = w_index[w]
    used = mate[mate >= 0]
    if used.size and np.bincount(used, minlength=n_women).max() > 1:
        w = int(np.flatnonzero(np.bincount(used, minlength=n_women) > 1)[0])
        raise _NotAMatching(f"woman {_name(prefs.women, w)!r} is married to two men")
    return mate


def _name(names, i):
    return i if names is None else names[i]


def blocking_pair(matching, men_prefs, women_prefs=None):
    """A pair (man, woman) who rank each other and both prefer each other to
    their partners (or are unmatched), or None when the matching is stable.

    Raises ValueError if ``matching`` is not a matching of the instance: a man
    or woman who does not exist, a woman married twice, or a couple who do not
    both rank each other.
    """
    prefs = _as_prefs(men_prefs, women_prefs)
    from nx_gpumatch.cpu import stable_marriage as csm

    mate = _mate_array(prefs, matching)
    with cpu.run("stable_marriage", prefs.num_entries):
        status, other = csm.blocking_status(prefs.ptr, prefs.packed, mate, prefs.n_women)
    bad = np.flatnonzero(status == 2)
    if bad.size:
        m = int(bad[0])
        raise _NotAMatching(
            f"{_name(prefs.men, m)!r} and {_name(prefs.women, int(mate[m]))!r} are married "
            "but do not both rank each other"
        )
    hit = np.flatnonzero(status == 1)
    if hit.size == 0:
        return None
    m = int(hit[0])
    return _name(prefs.men, m), _name(prefs.women, int(other[m]))


def is_stable(matching, men_prefs, women_prefs=None):
    """True if ``matching`` is a matching of mutually ranked pairs with no
    blocking pair. A woman married twice, or a couple who do not both rank
    each other, gives False; unknown names, or a matching of the wrong type
    or shape, raise ValueError."""
    try:
        return blocking_pair(matching, men_prefs, women_prefs) is None
    except _NotAMatching:
        return False


# ----------------------------------------------------------- generators
def stable_marriage_instance(kind, n, seed=0, *, threads=None):
    """The random instances of Naim et al., in array form: ``(men, women)`` with each
    side an ``(indptr, choices)`` tuple (int64, int32).

    kind="easy": man m ranks (1 + eps_m) ln n distinct random women (eps_m
    uniform in [0, 1]; at least one), and each woman ranks exactly the men who
    rank her, in random order. kind="hard": all men share one random complete
    ranking of the women and all women one of the men; n(n+1)/2 proposals.
    The same (kind, n, seed) gives the same instance on any thread count.
    """
    from nx_gpumatch.cpu import stable_marriage as csm

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0 or n >= 2**31 - 1:
        raise ValueError(f"n must be an int in [0, 2**31 - 1), got {n!r}")
    n = int(n)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    seed = int(seed) & 0xFFFFFFFFFFFFFFFF
    if kind == "hard":
        return csm.hard_instance(n, seed)
    with cpu.threads(threads) as parts:
        return csm.easy_instance(n, seed, parts)


# ------------------------------------------------------- graph bridge
def _graph_smi(graph):
    n = graph.num_nodes
    rank = graph.arc_rank()
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(graph.indptr))
    usable = rank != NO_RANK
    rows, rank, nbr = rows[usable], rank[usable], graph.indices[usable]
    order = np.lexsort((rank, rows))  # by vertex, then heaviest edge first
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=ptr[1:])
    choices = np.ascontiguousarray(nbr[order], dtype=np.int32)
    return (ptr, choices), (ptr.copy(), choices.copy())


def smi_from_graph(G, weight="weight"):
    """The SMI instance of Naim et al. (Lemma 3.1) for a weighted graph.

    Man i and woman i both stand for vertex i (the order of ``G.nodes``); each
    ranks the other side's copies of its neighbours by the package's edge
    order (heavier first, ties by smaller (min id, max id)), using only
    positive-weight edges. Returns ``(men, women)`` in array form.
    """
    graph, _ = to_graph(G, weight=weight)
    return _graph_smi(graph)


def greedy_matching_smi(
    G, weight="weight", *, algorithm="mcvitie_wilson", device=None, parallel=None, threads=None
):
    """The greedy matching of a weighted graph, computed as a stable marriage.

    By Lemma 3.1 of Naim et al. the stable matching of :func:`smi_from_graph`'s
    instance pairs man i with woman j exactly when edge (i, j) is in the greedy
    matching, so this equals ``max_weight_matching(G, algorithm="greedy")``.
    Returns the same result types as that function.
    """
    inp = convert(G, weight=weight)
    graph = inp.graph
    small, c = compact_graph(graph)
    men, women = _graph_smi(small)
    mate = stable_marriage(
        men, women, algorithm=algorithm, device=device, parallel=parallel, threads=threads
    )
    if c is not None:
        mate = c.spread_partners(mate, c)
    matched = mate >= 0
    if np.any(mate[mate[matched]] != np.flatnonzero(matched)):
        raise RuntimeError("stable matching of the graph's SMI instance is not symmetric")
    return matching_result(graph, inp.kind, mate, weight=weight, inp=inp)
