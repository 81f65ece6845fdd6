"""Sorting and sorted lookup for kernels, cheap to compile.

numba's own ``np.argsort(kind="mergesort")`` costs one to two seconds of
compilation on first use (it brings string handling for ``kind``) and its
``np.searchsorted`` about half a second (generic comparisons for every
dtype); these plain loops cost a fraction of that.
"""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def stable_argsort(keys):
    """Indices that sort ``keys``, equal keys in input order (bottom-up merge sort)."""
    size = len(keys)
    order = np.arange(size)
    spare = np.empty(size, dtype=np.int64)
    width = 1
    while width < size:
        for lo in range(0, size, 2 * width):
            mid = min(lo + width, size)
            hi = min(lo + 2 * width, size)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if keys[order[j]] < keys[order[i]]:
                    spare[k] = order[j]
                    j += 1
                else:
                    spare[k] = order[i]
                    i += 1
                k += 1
            while i < mid:
                spare[k] = order[i]
                i += 1
                k += 1
            while j < hi:
                spare[k] = order[j]
                j += 1
                k += 1
        order, spare = spare, order
        width *= 2
    return order


@njit(cache=True, nogil=True, inline="always")
def sorted_position(table, key):
    """Index of ``key`` in the sorted array ``table``, -1 if it is absent."""
    lo, hi = 0, len(table)
    while lo < hi:
        mid = (lo + hi) // 2
        if table[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    if lo < len(table) and table[lo] == key:
        return lo
    return -1
