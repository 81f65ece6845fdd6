"""Numba kernels of the spectral tree model: tree traversal, moment counting,
bottom-up scoring with observable operators, and the exact hidden-state model.

Sentences arrive packed: ``words`` (int64 word ids), ``heads`` (1-based heads
with 0 for the root, one per token) and ``offsets`` (sentence i is
``offsets[i]:offsets[i + 1]``). Side index 0 is a left child (the child
precedes its head), 1 a right child. No Python objects cross this boundary.
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
def count_moments(words, heads, offsets, embedding):
    """Sum the moments the operators are built from (see ``_scorer``).

    For every triple (p, j, v) where j is a side-d child of p and v is
    another tree neighbour of p, the third view is phi_v placed in one of
    three blocks by v's relation to p (its head, a left child, a right
    child), a 3k-vector psi_v. Returns ``root_sum`` (k,), the sum of
    root-word embeddings; ``pairs[d]`` (k, 3k), the sum of phi_p psi_v^T;
    and ``triples[d]`` (k, k, 3k), the sum of phi_j (x) phi_p (x) psi_v.
    The neighbours of p are summed once per block, so the cost is O(k^3)
    per arc rather than per (arc, neighbour).
    """
    k = embedding.shape[1]
    root_sum = np.zeros(k)
    pairs = np.zeros((2, k, 3 * k))
    triples = np.zeros((2, k, k, 3 * k))
    neighbour_sum = np.zeros(3 * k)
    other = np.zeros(3 * k)
    for s in range(offsets.shape[0] - 1):
        lo = offsets[s]
        n = offsets[s + 1] - lo
        sent_heads = heads[lo:lo + n]
        start, kids = children_table(sent_heads)
        for p in range(1, n + 1):
            phi_p = embedding[words[lo + p - 1]]
            head = sent_heads[p - 1]
            n_neighbours = start[p + 1] - start[p]
            neighbour_sum[:] = 0.0
            if head == 0:
                root_sum += phi_p
            else:
                neighbour_sum[:k] += embedding[words[lo + head - 1]]
                n_neighbours += 1
            if n_neighbours < 2:
                continue
            for t in range(start[p], start[p + 1]):
                j = kids[t]
                block = (1 + LEFT if j < p else 1 + RIGHT) * k
                neighbour_sum[block:block + k] += embedding[words[lo + j - 1]]
            for t in range(start[p], start[p + 1]):
                j = kids[t]
                side = LEFT if j < p else RIGHT
                block = (1 + side) * k
                phi_j = embedding[words[lo + j - 1]]
                other[:] = neighbour_sum
                other[block:block + k] -= phi_j
                for b in range(k):
                    for c in range(3 * k):
                        pc = phi_p[b] * other[c]
                        pairs[side, b, c] += pc
                        for a in range(k):
                            triples[side, a, b, c] += phi_j[a] * pc
    return root_sum, pairs, triples


@njit(cache=True, nogil=True)
def spectral_log_probs(words, heads, offsets, embedding, root_vector, operators):
    """log |p_hat| and sign(p_hat) of each packed (sentence, tree) pair.

    Bottom-up: u_p = prod_j A_{d_j}(u_j, .) applied to phi(x_p), where
    ``A_d(u, w)[c] = sum_{a, b} u[a] w[b] operators[d, a, b, c]``; then
    p_hat = prod over roots of root_vector . u_root. Each u is rescaled to
    unit max-norm and the scale kept in log space, so long sentences neither
    underflow nor overflow.
    """
    k = embedding.shape[1]
    n_sent = offsets.shape[0] - 1
    log_abs = np.zeros(n_sent)
    sign = np.ones(n_sent, dtype=np.int8)
    w = np.zeros(k)
    for s in range(n_sent):
        lo, n, start, kids, order = sentence_tree(heads, offsets, s)
        u = np.zeros((n + 1, k))
        log_scale = 0.0
        negative = False
        for t in range(n):
            p = order[t]
            u[p] = embedding[words[lo + p - 1]]
            for q in range(start[p], start[p + 1]):
                j = kids[q]
                side = LEFT if j < p else RIGHT
                w[:] = 0.0
                for a in range(k):
                    ua = u[j, a]
                    if ua == 0.0:
                        continue
                    for b in range(k):
                        coef = ua * u[p, b]
                        for c in range(k):
                            w[c] += coef * operators[side, a, b, c]
                u[p] = w
            norm = 0.0
            for c in range(k):
                norm = max(norm, abs(u[p, c]))
            if norm == 0.0 or not np.isfinite(norm):
                log_scale = -np.inf
                break
            u[p] /= norm
            log_scale += np.log(norm)
        if log_scale == -np.inf:
            log_abs[s] = -np.inf
            sign[s] = 0
            continue
        for r in range(start[0], start[1]):
            value = 0.0
            for c in range(k):
                value += root_vector[c] * u[kids[r], c]
            if value < 0.0:
                negative = not negative
            log_scale += np.log(abs(value))
        log_abs[s] = log_scale
        if log_scale == -np.inf:
            sign[s] = 0
        elif negative:
            sign[s] = -1
    return log_abs, sign


@njit(cache=True, nogil=True)
def exact_log_probs(words, heads, offsets, start_probs, transitions, emissions):
    """log p(words | tree) under the hidden-state model (the paper's Eq. 2).

    ``transitions[d, h_child, h_parent]`` and ``emissions[word, h]`` are
    column-stochastic. Computes the inside vectors
    beta_p(h) = o(x_p | h) prod_j sum_h' T_d[h', h] beta_j(h') bottom up
    (Eq. 3-4), rescaling each to sum one.
    """
    k = start_probs.shape[0]
    n_sent = offsets.shape[0] - 1
    out = np.zeros(n_sent)
    for s in range(n_sent):
        lo, n, start, kids, order = sentence_tree(heads, offsets, s)
        beta = np.zeros((n + 1, k))
        log_scale = 0.0
        for t in range(n):
            p = order[t]
            for h in range(k):
                beta[p, h] = emissions[words[lo + p - 1], h]
            for q in range(start[p], start[p + 1]):
                j = kids[q]
                side = LEFT if j < p else RIGHT
                for h in range(k):
                    message = 0.0
                    for h2 in range(k):
                        message += transitions[side, h2, h] * beta[j, h2]
                    beta[p, h] *= message
            total = beta[p].sum()
            beta[p] /= total
            log_scale += np.log(total)
        for r in range(start[0], start[1]):
            log_scale += np.log(np.dot(start_probs, beta[kids[r]]))
        out[s] = log_scale
    return out
