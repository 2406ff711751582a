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
    buffer is cut at separators into ``parts`` spans looked up in parallel.
    """
    sep = np.uint8(sep)
    slot, k_lo, k_hi, ok = _key_table(key_buf, n_keys, sep)
    fail = np.empty(0, np.int32), 2
    if not ok:
        return fail
    size = buf.shape[0]
    if size == 0 or buf[size - 1] != sep:
        return fail if total or size else (np.empty(0, np.int32), 0)
    bounds = np.zeros(parts + 1, np.int64)
    for t in range(1, parts):
        bounds[t] = max(bounds[t - 1], _after_sep(buf, (size * t) // parts, sep))
    bounds[parts] = size
    counts = np.array([np.count_nonzero(buf[a:b] == sep) for a, b in zip(bounds, bounds[1:])])
    if int(counts.sum()) != total:
        return fail
    first = np.zeros(parts, np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    out = np.empty(total, np.int32)
    missing = np.zeros(parts, np.int64)
    words = _short_keys(key_buf, k_lo, k_hi)
    if words.shape[0]:
        wslot = _word_table(words)
        _lookup_words_parts.sized(size)(buf, bounds, first, wslot, words, sep, out, missing)
    else:
        _lookup_parts.sized(size)(buf, bounds, first, slot, k_lo, k_hi, key_buf, sep, out, missing)
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


@kernel
def _lookup_words_parts(buf, bounds, first, slot, words, sep, out, missing):
    parts = bounds.shape[0] - 1
    for t in prange(parts):
        missing[t] = _lookup_words(buf, bounds[t], bounds[t + 1], first[t], slot, words, out)


# Separators are found a block of bytes at a time, branch-free, before the
# names between them are looked up: a branch on every byte mispredicts at
# every name's end, which cost more than the lookup itself.
SEP_BLOCK = 1 << 14


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


@njit(cache=True)
def _lookup_words(buf, start, stop, q, slot, words, out):
    """:func:`_lookup_span` for short keys: a name longer than 8 bytes is not a key."""
    bits = 0
    while (1 << bits) < slot.shape[0]:
        bits += 1
    mask = np.uint64(slot.shape[0] - 1)
    shift = np.uint64(64 - bits)
    size = buf.shape[0]
    ends = np.empty(SEP_BLOCK, np.int64)
    missing = 0
    lo = start  # where the current name begins
    for block in range(start, stop, SEP_BLOCK):
        k = 0
        for i in range(block, min(block + SEP_BLOCK, stop)):
            ends[k] = i
            k += buf[i] == 0
        for r in range(k):
            hi = ends[r]
            n = hi - lo
            if lo + 8 <= size:  # all 8 bytes, then the name's own
                wd = _word_at(buf, lo)
                if n < 8:
                    wd &= (np.uint64(1) << np.uint64(8 * n)) - np.uint64(1)
            else:
                wd = np.uint64(0)
                for j in range(min(n, 8)):
                    wd |= np.uint64(buf[lo + j]) << np.uint64(8 * j)
            if n > 8:
                wd = NOT_A_WORD
            s = _word_slot(wd, shift)
            found = -1
            while slot[s] >= 0:
                c = slot[s]
                if words[c] == wd:
                    found = c
                    break
                s = (s + np.uint64(1)) & mask
            out[q] = found
            missing += found < 0
            q += 1
            lo = hi + 1
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
