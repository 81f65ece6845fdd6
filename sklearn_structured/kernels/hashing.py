"""The feature hash of every hashed template set in the library.

A feature is a template number and up to five integers (vocabulary ids,
counts, sentinels, distance buckets). They are mixed into one 63-bit
non-negative integer, so no feature dictionary is built and feature
extraction stays inside numba; callers reduce it to a weight row (modulo the
table size, or a mask when the size is a power of two). The mixing is the
SplitMix64 finaliser (Steele, Lea & Flood 2014) applied after absorbing each
value: every input bit affects every output bit, so template tables of any
size see few collisions. The value is the same on every platform and in
every process, which keeps fitted weight tables valid when a model is
loaded elsewhere.
"""

import numpy as np
from numba import njit

_MULT = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, nogil=True, inline="always")
def _absorb(x, v):
    x = (x ^ np.uint64(v)) * _MULT
    return x ^ (x >> np.uint64(31))


# One signature: callers pass ids of several integer types, and letting numba
# specialise on each combination compiled this function 31 times on first use.
@njit("int64(int64, int64, int64, int64, int64, int64)", cache=True, nogil=True)
def feature_hash(template, a, b, c, d, e):
    """A fixed 63-bit hash of a template number and five ints (negative ints allowed)."""
    x = np.uint64(template) * _MULT
    x = _absorb(x, a)
    x = _absorb(x, b)
    x = _absorb(x, c)
    x = _absorb(x, d)
    x = _absorb(x, e)
    x = (x ^ (x >> np.uint64(30))) * _MIX1
    x = (x ^ (x >> np.uint64(27))) * _MIX2
    x = x ^ (x >> np.uint64(31))
    return np.int64(x >> np.uint64(1))
