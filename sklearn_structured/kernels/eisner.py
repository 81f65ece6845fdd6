"""Eisner's first-order projective decoder: argmax and inside-outside.

Conventions (shared by every decoder kernel): ``scores`` is a float64 array of
shape (n + 1, n + 1) with ``scores[h, m]`` the score of head ``h`` for
modifier ``m``, position 0 is the root; a tree is an int64 heads array of
length n with the head of token ``m`` at index ``m - 1``. Column 0 and the
diagonal are never read.

The chart (Eisner 1996; notation of McDonald et al. 2005) holds four kinds of
spans over tokens ``s <= t``, all restricted to tokens 1..n:

- ``complete_right[s, t]``: ``s`` heads a finished subtree covering s..t,
- ``complete_left[s, t]``: ``t`` heads a finished subtree covering s..t,
- ``incomplete_right[s, t]``: arc s -> t plus material between them,
- ``incomplete_left[s, t]``: arc t -> s plus material between them.

The root is attached in a final step: it takes exactly one child ``r`` whose
subtree is ``complete_left[1, r] + complete_right[r, n]``. That is what makes
every tree single-rooted, the constraint of Universal Dependencies.
"""

import numpy as np
from numba import njit

# span kinds, used by the back-pointer walk here and by the k-best kernel
COMPLETE_RIGHT = 0
COMPLETE_LEFT = 1
INCOMPLETE_RIGHT = 2
INCOMPLETE_LEFT = 3


# inlined: it runs three times per span, and a call costs as much as a short loop
@njit(cache=True, nogil=True, inline="always")
def _best_split(first, second, lo, hi, shift):
    """The max over r in lo..hi-1 of ``first[r] + second[r + shift]`` and its r (the
    first on ties): the best split point of a span."""
    best = first[lo] + second[lo + shift]
    arg = lo
    for r in range(lo + 1, hi):
        value = first[r] + second[r + shift]
        if value > best:
            best = value
            arg = r
    return best, arg


@njit(cache=True, nogil=True)
def eisner_viterbi_chart(scores):
    """Max-score Eisner chart over tokens 1..n and the best root child.

    Returns ``(chart, split, root_child)``: ``chart[kind, s, t]`` is the best
    score of span (kind, s, t), ``split[kind, s, t]`` its best split point and
    ``root_child`` the root's child in the best tree. Every value is formed as
    ``(left + right) + arc`` so that the k-best kernel, which re-adds scores
    the same way, reproduces these numbers exactly.
    """
    n = scores.shape[0] - 1
    chart = np.full((4, n + 1, n + 1), -np.inf)
    split = np.zeros((4, n + 1, n + 1), dtype=np.int64)
    # transposed copies keep the inner split loops on contiguous memory
    left_t = np.full((n + 1, n + 1), -np.inf)  # left_t[t, s] = complete_left[s, t]
    incl_t = np.full((n + 1, n + 1), -np.inf)  # incl_t[t, s] = incomplete_left[s, t]
    right_t = np.full((n + 1, n + 1), -np.inf)  # right_t[t, s] = complete_right[s, t]
    for s in range(1, n + 1):
        chart[COMPLETE_RIGHT, s, s] = 0.0
        chart[COMPLETE_LEFT, s, s] = 0.0
        left_t[s, s] = 0.0
        right_t[s, s] = 0.0
    for width in range(1, n):
        for s in range(1, n + 1 - width):
            t = s + width
            # both incomplete spans share the best split; only the arc differs
            best, arg = _best_split(chart[COMPLETE_RIGHT, s], left_t[t], s, t, 1)
            chart[INCOMPLETE_RIGHT, s, t] = best + scores[s, t]
            chart[INCOMPLETE_LEFT, s, t] = best + scores[t, s]
            incl_t[t, s] = chart[INCOMPLETE_LEFT, s, t]
            split[INCOMPLETE_RIGHT, s, t] = arg
            split[INCOMPLETE_LEFT, s, t] = arg
            # s heads s..t: last arc s -> r, then r's right subtree
            best, arg = _best_split(chart[INCOMPLETE_RIGHT, s], right_t[t], s + 1, t + 1, 0)
            chart[COMPLETE_RIGHT, s, t] = best
            right_t[t, s] = best
            split[COMPLETE_RIGHT, s, t] = arg
            # t heads s..t: r's left subtree, then arc t -> r
            best, arg = _best_split(chart[COMPLETE_LEFT, s], incl_t[t], s, t, 0)
            chart[COMPLETE_LEFT, s, t] = best
            left_t[t, s] = best
            split[COMPLETE_LEFT, s, t] = arg
    root_child = 1
    best = (chart[COMPLETE_LEFT, 1, 1] + chart[COMPLETE_RIGHT, 1, n]) + scores[0, 1]
    for r in range(2, n + 1):
        value = (chart[COMPLETE_LEFT, 1, r] + chart[COMPLETE_RIGHT, r, n]) + scores[0, r]
        if value > best:
            best = value
            root_child = r
    return chart, split, root_child


@njit(cache=True, nogil=True)
def span_tails(kind, s, t, r):
    """The two sub-spans a span (kind, s, t) splits into at ``r``, as (kind, s, t) triples."""
    if kind == COMPLETE_RIGHT:
        return INCOMPLETE_RIGHT, s, r, COMPLETE_RIGHT, r, t
    if kind == COMPLETE_LEFT:
        return COMPLETE_LEFT, s, r, INCOMPLETE_LEFT, r, t
    return COMPLETE_RIGHT, s, r, COMPLETE_LEFT, r + 1, t


@njit(cache=True, nogil=True)
def eisner_argmax(scores):
    """Best projective single-root tree: int64 heads of length n (O(n^3) time, O(n^2) memory)."""
    n = scores.shape[0] - 1
    heads = np.zeros(n, dtype=np.int64)
    if n <= 1:
        return heads
    chart, split, root_child = eisner_viterbi_chart(scores)
    stack = np.empty((2 * n + 2, 3), dtype=np.int64)
    stack[0, 0], stack[0, 1], stack[0, 2] = COMPLETE_LEFT, 1, root_child
    stack[1, 0], stack[1, 1], stack[1, 2] = COMPLETE_RIGHT, root_child, n
    size = 2
    while size > 0:
        size -= 1
        kind, s, t = stack[size, 0], stack[size, 1], stack[size, 2]
        if s == t:
            continue
        if kind == INCOMPLETE_RIGHT:
            heads[t - 1] = s
        elif kind == INCOMPLETE_LEFT:
            heads[s - 1] = t
        k1, s1, t1, k2, s2, t2 = span_tails(kind, s, t, split[kind, s, t])
        stack[size, 0], stack[size, 1], stack[size, 2] = k1, s1, t1
        stack[size + 1, 0], stack[size + 1, 1], stack[size + 1, 2] = k2, s2, t2
        size += 2
    return heads


@njit(cache=True, nogil=True)
def _logaddexp(a, b):
    high = max(a, b)
    if high == -np.inf:
        return -np.inf
    return high + np.log1p(np.exp(min(a, b) - high))


@njit(cache=True, nogil=True)
def _logsumexp(values, size):
    high = -np.inf
    for i in range(size):
        high = max(high, values[i])
    if high == -np.inf:
        return -np.inf
    total = 0.0
    for i in range(size):
        total += np.exp(values[i] - high)
    return high + np.log(total)


@njit(cache=True, nogil=True)
def eisner_inside_outside(scores):
    """Arc marginals and log-partition over projective single-root trees.

    ``scores`` are log-potentials: a tree's weight is ``exp(sum of its arc
    scores)``. Returns ``(marginals, log_z)`` with ``marginals[h, m]`` the
    probability that arc h -> m is in a tree drawn from that distribution (so
    every column 1..n sums to 1) and ``log_z`` the log of the total weight.
    Inside and outside are both run in log space.
    """
    n = scores.shape[0] - 1
    marginals = np.zeros((n + 1, n + 1))
    if n == 0:
        return marginals, 0.0
    inside = np.full((4, n + 1, n + 1), -np.inf)
    terms = np.empty(2 * n + 2)
    for s in range(1, n + 1):
        inside[COMPLETE_RIGHT, s, s] = 0.0
        inside[COMPLETE_LEFT, s, s] = 0.0
    for width in range(1, n):
        for s in range(1, n + 1 - width):
            t = s + width
            for r in range(s, t):
                terms[r - s] = inside[COMPLETE_RIGHT, s, r] + inside[COMPLETE_LEFT, r + 1, t]
            between = _logsumexp(terms, width)  # shared by both incomplete spans
            inside[INCOMPLETE_RIGHT, s, t] = between + scores[s, t]
            inside[INCOMPLETE_LEFT, s, t] = between + scores[t, s]
            for r in range(s + 1, t + 1):
                terms[r - s - 1] = inside[INCOMPLETE_RIGHT, s, r] + inside[COMPLETE_RIGHT, r, t]
            inside[COMPLETE_RIGHT, s, t] = _logsumexp(terms, width)
            for r in range(s, t):
                terms[r - s] = inside[COMPLETE_LEFT, s, r] + inside[INCOMPLETE_LEFT, r, t]
            inside[COMPLETE_LEFT, s, t] = _logsumexp(terms, width)
    for r in range(1, n + 1):
        terms[r - 1] = inside[COMPLETE_LEFT, 1, r] + inside[COMPLETE_RIGHT, r, n] + scores[0, r]
    log_z = _logsumexp(terms, n)

    # outside scores, gathered from every span that uses a span (one exp per
    # term); spans of a width only feed smaller spans, except that a complete
    # span feeds the incomplete span of the same width, so those go second
    outside = np.full((4, n + 1, n + 1), -np.inf)
    outside_between = np.full((n + 1, n + 1), -np.inf)
    for r in range(1, n + 1):
        marginals[0, r] = np.exp(scores[0, r] + inside[COMPLETE_LEFT, 1, r] + inside[COMPLETE_RIGHT, r, n] - log_z)
    for width in range(n - 1, 0, -1):
        for s in range(1, n + 1 - width):
            t = s + width
            count = 0
            for outer in range(1, s):  # complete_right[outer, t] = incomplete_right[outer, s] + this
                terms[count] = outside[COMPLETE_RIGHT, outer, t] + inside[INCOMPLETE_RIGHT, outer, s]
                count += 1
            for end in range(t + 1, n + 1):  # split sums of (s, end) pair this with complete_left[t + 1, end]
                terms[count] = outside_between[s, end] + inside[COMPLETE_LEFT, t + 1, end]
                count += 1
            if t == n:
                terms[count] = scores[0, s] + inside[COMPLETE_LEFT, 1, s]
                count += 1
            outside[COMPLETE_RIGHT, s, t] = _logsumexp(terms, count)
            count = 0
            for end in range(t + 1, n + 1):  # complete_left[s, end] = this + incomplete_left[t, end]
                terms[count] = outside[COMPLETE_LEFT, s, end] + inside[INCOMPLETE_LEFT, t, end]
                count += 1
            for outer in range(1, s):  # split sums of (outer, t) pair this with complete_right[outer, s - 1]
                terms[count] = outside_between[outer, t] + inside[COMPLETE_RIGHT, outer, s - 1]
                count += 1
            if s == 1:
                terms[count] = scores[0, t] + inside[COMPLETE_RIGHT, t, n]
                count += 1
            outside[COMPLETE_LEFT, s, t] = _logsumexp(terms, count)
        for s in range(1, n + 1 - width):
            t = s + width
            count = 0
            for end in range(t, n + 1):  # complete_right[s, end] = this + complete_right[t, end]
                terms[count] = outside[COMPLETE_RIGHT, s, end] + inside[COMPLETE_RIGHT, t, end]
                count += 1
            outside[INCOMPLETE_RIGHT, s, t] = _logsumexp(terms, count)
            count = 0
            for outer in range(1, s + 1):  # complete_left[outer, t] = complete_left[outer, s] + this
                terms[count] = outside[COMPLETE_LEFT, outer, t] + inside[COMPLETE_LEFT, outer, s]
                count += 1
            outside[INCOMPLETE_LEFT, s, t] = _logsumexp(terms, count)
            outside_between[s, t] = _logaddexp(
                outside[INCOMPLETE_RIGHT, s, t] + scores[s, t], outside[INCOMPLETE_LEFT, s, t] + scores[t, s]
            )
            marginals[s, t] = np.exp(inside[INCOMPLETE_RIGHT, s, t] + outside[INCOMPLETE_RIGHT, s, t] - log_z)
            marginals[t, s] = np.exp(inside[INCOMPLETE_LEFT, s, t] + outside[INCOMPLETE_LEFT, s, t] - log_z)
    return marginals, log_z


@njit(cache=True, nogil=True)
def eisner_argmax_batch(flat_scores, score_offsets, lengths):
    """Decode many sentences: sentence i has ``lengths[i]`` tokens and its
    (n_i + 1) x (n_i + 1) scores, row-major, at
    ``flat_scores[score_offsets[i]:score_offsets[i + 1]]``. Returns the heads
    concatenated; sentence i's are at ``cumsum(lengths)`` offsets."""
    heads = np.empty(lengths.sum(), dtype=np.int64)
    start = 0
    for i in range(lengths.shape[0]):
        size = lengths[i] + 1
        block = flat_scores[score_offsets[i]:score_offsets[i] + size * size].reshape((size, size))
        heads[start:start + lengths[i]] = eisner_argmax(block)
        start += lengths[i]
    return heads


@njit(cache=True, nogil=True)
def nonprojective_arc_count(heads, offsets):
    """Arcs that no projective tree has, over trees laid end to end.

    Tree ``i`` is ``heads[offsets[i]:offsets[i + 1]]`` (1-based, 0 = root).
    An arc ``h -> m`` is projective when ``h`` dominates every word between
    them; arcs from the root always are.
    """
    count = 0
    for i in range(len(offsets) - 1):
        lo = offsets[i]
        n = offsets[i + 1] - lo
        for m in range(1, n + 1):
            h = heads[lo + m - 1]
            if h == 0:
                continue
            for k in range(min(h, m) + 1, max(h, m)):
                a, steps = k, 0
                while a != 0 and a != h and steps <= n:  # steps: a cycle cannot hang us
                    a = heads[lo + a - 1]
                    steps += 1
                if a != h:
                    count += 1
                    break
    return count
