"""The feature hash of every hashed template set in the library.

A feature is a template number and up to five integers (vocabulary ids,
counts, sentinels, distance buckets). They are mixed into one 63-bit
non-negative integer, so no feature dictionary is built and feature
extraction stays inside numba; callers reduce it to a weight row (modulo the
table size, or a mask when the size is a power of two).

Each value is XORed in and multiplied by the 64-bit golden-ratio constant
(the multiply-xor scheme of FNV, with a multiplier whose bits are spread
evenly); a final fold brings the well-mixed high bits down to the low bits
that a mask keeps. Estimators that keep only the features seen in training
look the full hashes up instead (:func:`kept_positions`). Feature extraction is dominated by this function, so it
is kept to one multiplication per value: a SplitMix-style finaliser per
value halved the easy-first parser's feature throughput for no measurable
gain in collisions. The value is the same on every platform and in every
process, so a fitted weight table stays valid when the model is loaded
elsewhere.
"""

import weakref

import numpy as np
from numba import njit

_MULT = np.uint64(0x9E3779B97F4A7C15)


# The two halves of feature_hash, for templates whose first three values recur over
# many features: the head is mixed once and finished per feature, with the same value
# as feature_hash(template, a, b, c, d, e) == hash_tail(hash_head(template, a, b), c, d, e).
@njit(cache=True, nogil=True, inline="always")
def hash_head(template, a, b):
    """The hash state (uint64) after the template number and the first two ints."""
    x = (np.uint64(template) + _MULT) * _MULT
    x = (x ^ np.uint64(a)) * _MULT
    return (x ^ np.uint64(b)) * _MULT


@njit(cache=True, nogil=True, inline="always")
def hash_tail(x, c, d, e):
    """The :func:`feature_hash` of a :func:`hash_head` state and the last three ints."""
    x = (x ^ np.uint64(c)) * _MULT
    x = (x ^ np.uint64(d)) * _MULT
    x = (x ^ np.uint64(e)) * _MULT
    x ^= x >> np.uint64(32)
    return np.int64(x >> np.uint64(1))


# One signature: callers pass ids of several integer types, and letting numba
# specialise on each combination compiled this function 31 times on first use.
@njit("int64(int64, int64, int64, int64, int64, int64)", cache=True, nogil=True)
def feature_hash(template, a, b, c, d, e):
    """A fixed 63-bit hash of a template number and five ints (negative ints allowed)."""
    return hash_tail(hash_head(template, a, b), c, d, e)


@njit(cache=True, nogil=True, inline="always")
def table_row(key, size):
    """The row of a table of ``size`` rows that the hash ``key`` (not negative) falls
    in: ``key % size``, by a mask when ``size`` is a power of two (the usual table
    size), which saves a 64-bit division per feature."""
    mask = size - 1
    if size & mask == 0:
        return key & mask
    return key % size


def kept_positions(keys, kept):
    """Position of each hash of ``keys`` in the sorted array ``kept``, -1 where it is absent.

    For template sets that keep only the features seen (often enough) in
    training: the full 63-bit hashes are looked up, so kept features never
    collide, and negative keys (absent features) are never found.
    """
    starts, shift = _bucket_starts(kept)
    out = np.empty(keys.size, np.int64)
    _look_up(np.ascontiguousarray(keys).ravel(), kept, starts, shift, out)
    return out.reshape(keys.shape)


# kept arrays are fitted attributes, never changed in place: their bucket starts are
# made once per array (id, with a weak reference to tell a new array from a dead one's id)
_BUCKETS = {}


def _bucket_starts(kept):
    """Where each bucket of ``kept`` begins, a bucket being the hashes that share their
    top bits (about one hash each: the hashes are spread evenly), and the shift that
    gives a hash's bucket."""
    entry = _BUCKETS.get(id(kept))
    if entry is not None and entry[0]() is kept:
        return entry[1]
    bits = max(1, min(24, int(len(kept)).bit_length()))
    shift = 63 - bits
    starts = np.searchsorted(kept >> shift, np.arange((1 << bits) + 1)).astype(np.int64)
    made = (starts, shift)
    _BUCKETS[id(kept)] = (weakref.ref(kept), made)
    weakref.finalize(kept, _BUCKETS.pop, id(kept), None)
    return made


@njit(cache=True, nogil=True)
def _look_up(keys, kept, starts, shift, out):
    # a bucket holds about one hash, so this costs a few comparisons per key, where
    # sorting the keys for np.searchsorted cost most of a tagger's feature extraction
    for i in range(keys.size):
        key = keys[i]
        out[i] = -1
        if key < 0:
            continue
        bucket = key >> shift
        for p in range(starts[bucket], starts[bucket + 1]):
            if kept[p] >= key:
                if kept[p] == key:
                    out[i] = p
                break
