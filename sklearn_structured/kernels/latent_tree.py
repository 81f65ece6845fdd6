"""The hidden-state dependency tree model (Dhillon et al. 2012, Eq. 2): tree traversal
and the exact log-probability of words given a tree.

Used by the spectral estimator's kernels and by the synthetic corpus sampler,
which needs the true model's probabilities. Sentences arrive packed:
``words`` (int64 word ids), ``heads`` (1-based heads with 0 for the root, one
per token) and ``offsets`` (sentence i is ``offsets[i]:offsets[i + 1]``).
Side index 0 is a left child (the child precedes its head), 1 a right child.
"""

import numpy as np
from numba import njit

LEFT, RIGHT = 0, 1


@njit(cache=True, nogil=True)
def children_table(heads):
    """Children of each node as CSR arrays over nodes 0..n (0 = virtual root).

    The children of node v are ``kids[start[v]:start[v + 1]]`` (1-based token
    positions, increasing).
    """
    n = heads.shape[0]
    start = np.zeros(n + 2, dtype=np.int64)
    for m in range(n):
        start[heads[m] + 1] += 1
    for v in range(n + 1):
        start[v + 1] += start[v]
    fill = start.copy()
    kids = np.empty(n, dtype=np.int64)
    for m in range(n):
        h = heads[m]
        kids[fill[h]] = m + 1
        fill[h] += 1
    return start, kids


@njit(cache=True, nogil=True)
def bottom_up_order(start, kids, n):
    """Token positions (1-based) ordered so that every child precedes its head."""
    preorder = np.empty(n, dtype=np.int64)
    stack = np.empty(n + 1, dtype=np.int64)
    top = 0
    stack[0] = 0
    written = 0
    while top >= 0:
        v = stack[top]
        top -= 1
        if v > 0:
            preorder[written] = v
            written += 1
        for t in range(start[v], start[v + 1]):
            top += 1
            stack[top] = kids[t]
    return preorder[::-1].copy()


@njit(cache=True, nogil=True)
def sentence_tree(heads, offsets, s):
    """Sentence ``s`` of a packed corpus: its first token's index, its length,
    its children table and a bottom-up order of its tokens."""
    lo = offsets[s]
    n = offsets[s + 1] - lo
    start, kids = children_table(heads[lo:lo + n])
    return lo, n, start, kids, bottom_up_order(start, kids, n)


@njit(cache=True, nogil=True)
def _normalise(vector):
    """Divide ``vector`` by its sum in place; return the sum."""
    total = vector.sum()
    vector /= total
    return total


@njit(cache=True, nogil=True)
def _inside(words, lo, n, start, kids, order, start_probs, transitions, emissions):
    """Inside vectors of one sentence, bottom up, each rescaled to sum one.

    beta_p(h) = o(x_p | h) prod_j sum_h' T_d[h', h] beta_j(h') (the paper's
    Eq. 3-4); ``message[j](h) = sum_h' T_d[h', h] beta_j(h')``. Returns
    ``(beta, message, log p(words | tree))``.
    """
    k = start_probs.shape[0]
    beta = np.zeros((n + 1, k))
    message = np.zeros((n + 1, k))
    log_lik = 0.0
    for t in range(n):
        p = order[t]
        for h in range(k):
            beta[p, h] = emissions[words[lo + p - 1], h]
        for q in range(start[p], start[p + 1]):
            j = kids[q]
            side = LEFT if j < p else RIGHT
            for h in range(k):
                total = 0.0
                for h2 in range(k):
                    total += transitions[side, h2, h] * beta[j, h2]
                message[j, h] = total
                beta[p, h] *= total
        log_lik += np.log(_normalise(beta[p]))
    for r in range(start[0], start[1]):
        log_lik += np.log(np.dot(start_probs, beta[kids[r]]))
    return beta, message, log_lik


@njit(cache=True, nogil=True)
def exact_log_probs(words, heads, offsets, start_probs, transitions, emissions):
    """log p(words | tree) under the hidden-state model (the paper's Eq. 2).

    ``transitions[d, h_child, h_parent]`` and ``emissions[word, h]`` are
    column-stochastic; the inside pass is :func:`_inside`.
    """
    n_sent = offsets.shape[0] - 1
    out = np.zeros(n_sent)
    for s in range(n_sent):
        lo, n, start, kids, order = sentence_tree(heads, offsets, s)
        out[s] = _inside(words, lo, n, start, kids, order, start_probs, transitions,
                         emissions)[2]
    return out


@njit(cache=True, nogil=True)
def expected_counts(words, heads, offsets, first, last, start_probs, transitions, emissions):
    """E-step of EM for the hidden-state model on the given trees (inside-outside).

    Sentences ``first..last-1`` of a packed corpus. Returns the summed
    log p(words | tree), and the expected counts of root states (k,), of
    (side, child state, head state) transitions (2, k, k) and of
    (word, state) emissions (n_words, k). Inside vectors are those of
    :func:`_inside`; the outside vector of a child j of p is
    a_j(h') = sum_h T_d[h', h] a_p(h) e_pj(h), where e_pj is p's emission
    times the messages of p's other children (prefix and suffix products,
    so no division). Every inside, outside and pair table is rescaled to sum
    one, since a posterior only needs them up to a constant: O(n k^2) per
    sentence.
    """
    k = start_probs.shape[0]
    log_lik = 0.0
    root_counts = np.zeros(k)
    transition_counts = np.zeros((2, k, k))
    emission_counts = np.zeros((emissions.shape[0], k))
    pair = np.zeros((k, k))
    for s in range(first, last):
        lo, n, start, kids, order = sentence_tree(heads, offsets, s)
        beta, message, sentence_log_lik = _inside(words, lo, n, start, kids, order, start_probs,
                                                  transitions, emissions)
        log_lik += sentence_log_lik
        outside = np.zeros((n + 1, k))
        for r in range(start[0], start[1]):
            root = kids[r]
            outside[root] = start_probs
        # top-down: every head is finished before its children
        for t in range(n - 1, -1, -1):
            p = order[t]
            posterior = outside[p] * beta[p]
            _normalise(posterior)
            emission_counts[words[lo + p - 1]] += posterior
            if heads[lo + p - 1] == 0:
                root_counts += posterior
            n_kids = start[p + 1] - start[p]
            if n_kids == 0:
                continue
            # suffix[q] = product of the messages of children q.. (emission first)
            suffix = np.ones((n_kids + 1, k))
            for q in range(n_kids - 1, -1, -1):
                suffix[q] = suffix[q + 1] * message[kids[start[p] + q]]
            prefix = outside[p].copy()
            for h in range(k):
                prefix[h] *= emissions[words[lo + p - 1], h]
            for q in range(n_kids):
                j = kids[start[p] + q]
                side = LEFT if j < p else RIGHT
                rest = prefix * suffix[q + 1]
                _normalise(rest)
                for h2 in range(k):
                    for h in range(k):
                        pair[h2, h] = transitions[side, h2, h] * rest[h] * beta[j, h2]
                pair /= pair.sum()
                transition_counts[side] += pair
                for h2 in range(k):
                    total = 0.0
                    for h in range(k):
                        total += transitions[side, h2, h] * rest[h]
                    outside[j, h2] = total
                _normalise(outside[j])
                prefix *= message[j]
                _normalise(prefix)
    return log_lik, root_counts, transition_counts, emission_counts
