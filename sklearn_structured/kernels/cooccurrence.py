"""Word co-occurrence counts within a window, for distributional word vectors."""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def window_pairs(ids, offsets, window):
    """Every (word, context) pair of the same sentence at most ``window`` positions
    apart, in both directions, weighted by one over their distance.

    ``ids`` holds a vocabulary id per token (-1 for a word outside the
    vocabulary, which still takes its position but makes no pair) and
    ``offsets`` the sentence boundaries. Returns the words, the contexts and
    the weights, one entry per pair (duplicates are summed by the caller).
    """
    n_pairs = 0
    for s in range(len(offsets) - 1):
        for i in range(offsets[s], offsets[s + 1]):
            if ids[i] < 0:
                continue
            for j in range(max(offsets[s], i - window), min(offsets[s + 1], i + window + 1)):
                if j != i and ids[j] >= 0:
                    n_pairs += 1
    words = np.empty(n_pairs, np.int32)
    contexts = np.empty(n_pairs, np.int32)
    weights = np.empty(n_pairs, np.float32)
    k = 0
    for s in range(len(offsets) - 1):
        for i in range(offsets[s], offsets[s + 1]):
            if ids[i] < 0:
                continue
            for j in range(max(offsets[s], i - window), min(offsets[s + 1], i + window + 1)):
                if j != i and ids[j] >= 0:
                    words[k] = ids[i]
                    contexts[k] = ids[j]
                    weights[k] = 1.0 / abs(j - i)
                    k += 1
    return words, contexts, weights
