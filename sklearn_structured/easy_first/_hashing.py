"""Token ids and feature slots for the easy-first parser kernels.

A feature is a template id plus up to four integer values (hashed word or tag
ids, counts, sentinels), hashed by :func:`sklearn_structured.kernels.hashing.feature_hash`
and masked into the weight table, so no feature dictionary is ever built and
the whole search stays in numba.
"""

import zlib

import numpy as np
from numba import njit

from ..kernels.hashing import feature_hash

# Sentinel values (token ids are crc32 values, so never negative).
OUTSIDE = -2  # the neighbour does not exist (before the first / after the last)
NO_CHILD = -3  # the partial tree has no child on that side
MISSING = -5  # the token has no value in that field (e.g. a str token has no POS)


@njit(cache=True, nogil=True, inline="always")
def feature_index(template, a, b, c, d, mask):
    """Slot of feature ``(template, a, b, c, d)`` in a weight table of ``mask + 1`` rows."""
    return feature_hash(template, a, b, c, d, 0) & mask


def string_id(s):
    """A stable non-negative id for a string (crc32; the same in every process)."""
    return zlib.crc32(s.encode("utf-8"))


def encode_strings(values, memo):
    """Ids of ``values`` (``None`` maps to ``MISSING``), memoised in the dict ``memo``."""
    out = np.empty(len(values), dtype=np.int64)
    for k, v in enumerate(values):
        if v is None:
            out[k] = MISSING
            continue
        code = memo.get(v)
        if code is None:
            code = memo[v] = string_id(v)
        out[k] = code
    return out
