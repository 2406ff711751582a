"""Names to ids for stable marriage: the preference lists of a dict input,
given as names, become int32 ids in one pass over their bytes (instead of one
dict lookup per entry). Short names (at most 8 bytes) are looked up as 64-bit
words in an open-addressing table; longer ones by FNV-1a hash. Used by
:mod:`nx_gpumatch.algorithms.stable_marriage`."""

import numpy as np
from numba import prange

from nx_gpumatch.cpu import kernel, njit

FNV_OFFSET = np.uint64(0xCBF29CE484222325)
FNV_PRIME = np.uint64(0x100000001B3)


def encode_names(buf, key_buf, n_keys, total, sep, parts=1):
    """Ids of the names in ``buf`` by the names in ``key_buf``.

    Both buffers hold names as bytes, each name followed by the byte ``sep``
    (names that contain it show up as extra names). Key i is the i-th name of
    ``key_buf``. Returns (choices int32, status): status 0 when every one of the
    ``total`` names is a key (equal bytes); 1 when a name is not a key (its
    entry is -1); 2 when either buffer holds a different number of names than
    expected. An open-addressing table keyed by FNV-1a hashes; every hit is
    confirmed byte by byte, so a hash collision cannot give a wrong id. The
    buffer is cut at separators into ``parts`` spans looked up in parallel
    (short names: each cut again into LANES spans walked side by side).
    """
    sep = np.uint8(sep)
    slot, k_lo, k_hi, ok = _key_table(key_buf, n_keys, sep)
    fail = np.empty(0, np.int32), 2
    if not ok:
        return fail
    size = buf.shape[0]
    if size == 0 or buf[size - 1] != sep:
        return fail if total or size else (np.empty(0, np.int32), 0)
    words = _short_keys(key_buf, k_lo, k_hi)
    spans = parts * LANES if words.shape[0] else parts  # a thread's part: LANES spans
    bounds = np.zeros(spans + 1, np.int64)
    for t in range(1, spans):
        bounds[t] = max(bounds[t - 1], _after_sep(buf, (size * t) // spans, sep))
    bounds[spans] = size
    counts = np.array([np.count_nonzero(buf[a:b] == sep) for a, b in zip(bounds, bounds[1:])])
    if int(counts.sum()) != total:
        return fail
    first = np.zeros(spans, np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    out = np.empty(total, np.int32)
    missing = np.zeros(parts, np.int64)
    if words.shape[0]:
        wslot = _word_table(words)
        _lookup_words_parts.run(size, buf, bounds, first, wslot, words, out, missing)
    else:
        _lookup_parts.run(size, buf, bounds, first, slot, k_lo, k_hi, key_buf, sep, out, missing)
    return out, 1 if missing.any() else 0


# Names of at most 8 bytes (most names in practice) are compared as one 64-bit
# word: bytes packed little-endian, zero-padded. Names hold no separator byte and
# the separator is the zero byte when this path is used, so the padding cannot
# make two different names equal.
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def _short_keys(key_buf, k_lo, k_hi):
    """Each key as one word, or an empty array when a key is longer than 8
    bytes or the separator is not the zero byte (then the general path runs)."""
    n = k_lo.shape[0]
    words = np.zeros(n, np.uint64)
    for c in range(n):
        lo = k_lo[c]
        hi = k_hi[c]
        if hi - lo > 8 or (hi < key_buf.shape[0] and key_buf[hi] != 0):
            return np.empty(0, np.uint64)
        wd = np.uint64(0)
        for j in range(hi - lo):
            wd |= np.uint64(key_buf[lo + j]) << np.uint64(8 * j)
        words[c] = wd
    return words


@njit(cache=True, inline="always")
def _word_slot(wd, shift):
    return (wd * GOLDEN) >> shift


@njit(cache=True)
def _word_table(words):
    # At most 1/8 full while the table stays small (64K slots, in L2): a name
    # then almost always sits in its first slot and the probe loop predicts well.
    bits = 4
    while (1 << bits) < 2 * words.shape[0] or (
        (1 << bits) < 8 * words.shape[0] and (1 << bits) < (1 << 16)
    ):
        bits += 1
    slot = np.full(1 << bits, -1, np.int32)
    mask = np.uint64((1 << bits) - 1)
    shift = np.uint64(64 - bits)
    for c in range(words.shape[0]):
        s = _word_slot(words[c], shift)
        while slot[s] >= 0:  # keys are distinct names
            s = (s + np.uint64(1)) & mask
        slot[s] = c
    return slot


# The short-name lookup walks LANES spans of a part at once: finding where a
# name ends needs the name's bytes, so one span is a chain of dependent steps
# (about 20 cycles a name); independent spans overlap in the core.
LANES = 4


@kernel
def _lookup_words_parts(buf, bounds, first, slot, words, out, missing):
    parts = (bounds.shape[0] - 1) // LANES
    for t in prange(parts):
        missing[t] = _lookup_words(buf, bounds, first, t * LANES, slot, words, out)


# A name's end is found a word at a time: the zero bytes of the 8 bytes at the
# name's start, without a branch per byte (which mispredicts at every name's
# end); only names of more than 8 bytes, never keys here, are walked byte by byte.
ONES = np.uint64(0x0101010101010101)
HIGHS = np.uint64(0x8080808080808080)


@njit(cache=True, inline="always")
def _word_at(buf, lo):
    """The 8 bytes from buf[lo] as one little-endian word. Unsigned indices
    (no negative-index wraparound) let the compiler merge the loads into one."""
    u = np.uint64(lo)
    one = np.uint64(1)
    wd = np.uint64(buf[u]) | np.uint64(buf[u + one]) << np.uint64(8)
    wd |= np.uint64(buf[u + np.uint64(2)]) << np.uint64(16)
    wd |= np.uint64(buf[u + np.uint64(3)]) << np.uint64(24)
    wd |= np.uint64(buf[u + np.uint64(4)]) << np.uint64(32)
    wd |= np.uint64(buf[u + np.uint64(5)]) << np.uint64(40)
    wd |= np.uint64(buf[u + np.uint64(6)]) << np.uint64(48)
    return wd | np.uint64(buf[u + np.uint64(7)]) << np.uint64(56)


# No key's word: a zero byte (the end of a name) followed by a non-zero one.
NOT_A_WORD = np.uint64(0x100)


@njit(cache=True, inline="always")
def _zero_bytes_below(wd):
    """How many bytes of ``wd`` (little-endian) come before its first zero
    byte, 8 if none. The lowest flag of (wd - ONES) & ~wd & HIGHS marks the
    first zero byte exactly (a false flag needs a borrow from a zero byte
    below it)."""
    z = (wd - ONES) & ~wd & HIGHS
    if z == 0:
        return 8
    below = ((z & (~z + np.uint64(1))) >> np.uint64(7)) - np.uint64(1)  # the bytes before it
    return np.int64(((below & ONES) * ONES) >> np.uint64(56))


@njit(cache=True, inline="always")
def _short_name(buf, lo):
    """(word, length) of the name at buf[lo]: its bytes as one word, or
    NOT_A_WORD when it is longer than 8 bytes (the buffer ends with a zero byte)."""
    size = buf.shape[0]
    if lo + 8 <= size:  # all 8 bytes, then the name's own
        wd = _word_at(buf, lo)
        n = _zero_bytes_below(wd)
        if n < 8:
            return wd & ((np.uint64(1) << np.uint64(8 * n)) - np.uint64(1)), n
    else:
        wd = np.uint64(0)
        n = 0
        while buf[lo + n] != 0:
            wd |= np.uint64(buf[lo + n]) << np.uint64(8 * n)
            n += 1
        return wd, n
    while buf[lo + n] != 0:
        n += 1
    return (wd if n == 8 else NOT_A_WORD), n


@njit(cache=True, inline="always")
def _word_id(wd, slot, words, shift, mask):
    """The key whose word is ``wd``, -1 if none."""
    s = _word_slot(wd, shift)
    while slot[s] >= 0:
        c = slot[s]
        if words[c] == wd:
            return c
        s = (s + np.uint64(1)) & mask
    return -1


@njit(cache=True)
def _lookup_words(buf, bounds, first, a, slot, words, out):
    """:func:`_lookup_span` for short keys on the LANES spans from span ``a``,
    buf[bounds[j]:bounds[j + 1]] (names from out[first[j]]), walked side by
    side: a name longer than 8 bytes is not a key."""
    bits = 0
    while (1 << bits) < slot.shape[0]:
        bits += 1
    mask = np.uint64(slot.shape[0] - 1)
    shift = np.uint64(64 - bits)
    lo0, lo1, lo2, lo3 = bounds[a], bounds[a + 1], bounds[a + 2], bounds[a + 3]
    hi0, hi1, hi2, hi3 = lo1, lo2, lo3, bounds[a + 4]
    q0, q1, q2, q3 = first[a], first[a + 1], first[a + 2], first[a + 3]
    missing = 0
    while lo0 < hi0 and lo1 < hi1 and lo2 < hi2 and lo3 < hi3:
        w0, n0 = _short_name(buf, lo0)
        w1, n1 = _short_name(buf, lo1)
        w2, n2 = _short_name(buf, lo2)
        w3, n3 = _short_name(buf, lo3)
        f0 = _word_id(w0, slot, words, shift, mask)
        f1 = _word_id(w1, slot, words, shift, mask)
        f2 = _word_id(w2, slot, words, shift, mask)
        f3 = _word_id(w3, slot, words, shift, mask)
        out[q0] = f0
        out[q1] = f1
        out[q2] = f2
        out[q3] = f3
        missing += (f0 < 0) + (f1 < 0) + (f2 < 0) + (f3 < 0)
        q0 += 1
        q1 += 1
        q2 += 1
        q3 += 1
        lo0 += n0 + 1
        lo1 += n1 + 1
        lo2 += n2 + 1
        lo3 += n3 + 1
    # the lanes' rest, one at a time
    los = (lo0, lo1, lo2, lo3)
    his = (hi0, hi1, hi2, hi3)
    qs = (q0, q1, q2, q3)
    for j in range(LANES):
        lo = los[j]
        q = qs[j]
        while lo < his[j]:
            wd, n = _short_name(buf, lo)
            f = _word_id(wd, slot, words, shift, mask)
            out[q] = f
            missing += f < 0
            q += 1
            lo += n + 1
    return missing


@njit(cache=True, inline="always")
def _fnv1a(buf, lo, hi):
    h = FNV_OFFSET
    for i in range(lo, hi):
        h = (h ^ np.uint64(buf[i])) * FNV_PRIME
    return h


@njit(cache=True)
def _key_table(key_buf, n_keys, sep):
    """(slot, k_lo, k_hi, ok): key i is key_buf[k_lo[i]:k_hi[i]], found from its
    hash by linear probing in ``slot`` (a power of two, at most half full)."""
    size = 16
    while size < 2 * n_keys:
        size *= 2
    mask = np.uint64(size - 1)
    slot = np.full(size, -1, np.int32)
    k_lo = np.empty(n_keys, np.int64)
    k_hi = np.empty(n_keys, np.int64)
    k = 0
    lo = 0
    for i in range(key_buf.shape[0]):
        if key_buf[i] != sep:
            continue
        if k == n_keys:
            return slot, k_lo, k_hi, False
        k_lo[k] = lo
        k_hi[k] = i
        s = _fnv1a(key_buf, lo, i) & mask
        while slot[s] >= 0:  # keys are distinct names: no equality test needed
            s = (s + np.uint64(1)) & mask
        slot[s] = k
        k += 1
        lo = i + 1
    return slot, k_lo, k_hi, k == n_keys and lo == key_buf.shape[0]


@njit(cache=True)
def _after_sep(buf, pos, sep):
    """Index just after the first separator at or after ``pos`` (len(buf) if none)."""
    for i in range(pos, buf.shape[0]):
        if buf[i] == sep:
            return i + 1
    return buf.shape[0]


@kernel
def _lookup_parts(buf, bounds, first, slot, k_lo, k_hi, key_buf, sep, out, missing):
    parts = bounds.shape[0] - 1
    for t in prange(parts):
        missing[t] = _lookup_span(
            buf, bounds[t], bounds[t + 1], first[t], slot, k_lo, k_hi, key_buf, sep, out
        )


@njit(cache=True)
def _lookup_span(buf, start, stop, q, slot, k_lo, k_hi, key_buf, sep, out):
    """Look up the names of buf[start:stop] (which ends with a separator) into
    out[q:]; returns how many are not keys."""
    mask = np.uint64(slot.shape[0] - 1)
    missing = 0
    lo = start
    h = FNV_OFFSET
    for i in range(start, stop):
        b = buf[i]
        if b != sep:  # hashed in the same pass that finds the separators
            h = (h ^ np.uint64(b)) * FNV_PRIME
            continue
        n = i - lo
        s = h & mask
        found = -1
        while slot[s] >= 0:
            c = slot[s]
            a = k_lo[c]
            if k_hi[c] - a == n:
                same = True
                for j in range(n):
                    if key_buf[a + j] != buf[lo + j]:
                        same = False
                        break
                if same:
                    found = c
                    break
            s = (s + np.uint64(1)) & mask
        out[q] = found
        if found < 0:
            missing += 1
        q += 1
        lo = i + 1
        h = FNV_OFFSET
    return missing
