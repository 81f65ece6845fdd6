"""CKY over span scores: the binary tree with the largest sum of span scores.

Minimum Bayes-risk parsing (Goodman 1996) with span marginals as scores:
the tree that maximises the expected number of correct spans. Used by
:class:`~sklearn_structured.RankSpacePCFG` and by any model that produces
span scores.
"""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def cky_max_span_sum(scores):
    """Best binary bracketing of ``n`` words under additive span scores.

    ``scores`` is an ``(n + 1, n + 1)`` array; ``scores[i, j]`` (``i < j``,
    fence-post positions) is added for every span of width >= 2 in the tree.
    Width-1 spans are in every tree and score nothing. Ties go to the smallest
    split point. Returns ``(best, spans)``: the best total and an
    ``(2n - 1, 2)`` int64 array of the tree's spans in pre-order (parent before
    children, left child first), the whole sentence and the single words
    included.
    """
    n = scores.shape[0] - 1
    best = np.zeros((n + 1, n + 1))
    split = np.zeros((n + 1, n + 1), np.int64)
    for width in range(2, n + 1):
        for i in range(n - width + 1):
            j = i + width
            top = -np.inf
            arg = i + 1
            for k in range(i + 1, j):
                value = best[i, k] + best[k, j]
                if value > top:  # strict: the first (smallest) split wins ties
                    top = value
                    arg = k
            best[i, j] = top + scores[i, j]
            split[i, j] = arg
    spans = np.zeros((2 * n - 1, 2), np.int64)
    stack = np.zeros((2 * n, 2), np.int64)
    stack[0, 0] = 0
    stack[0, 1] = n
    top_of_stack = 1
    count = 0
    while top_of_stack > 0:
        top_of_stack -= 1
        i = stack[top_of_stack, 0]
        j = stack[top_of_stack, 1]
        spans[count, 0] = i
        spans[count, 1] = j
        count += 1
        if j - i > 1:
            k = split[i, j]
            # push the right child first so that the left one is emitted first
            stack[top_of_stack, 0] = k
            stack[top_of_stack, 1] = j
            stack[top_of_stack + 1, 0] = i
            stack[top_of_stack + 1, 1] = k
            top_of_stack += 2
    return best[0, n], spans
