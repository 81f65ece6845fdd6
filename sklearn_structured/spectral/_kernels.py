"""Numba kernels of the spectral tree model: moment counting and bottom-up
scoring with observable operators (tree traversal and the exact model are in
:mod:`sklearn_structured.kernels.latent_tree`).

Sentences arrive packed: ``words`` (int64 word ids), ``heads`` (1-based heads
with 0 for the root, one per token) and ``offsets`` (sentence i is
``offsets[i]:offsets[i + 1]``). Side index 0 is a left child (the child
precedes its head), 1 a right child. No Python objects cross this boundary.
"""

import numpy as np
from numba import njit

from ..kernels.latent_tree import LEFT, RIGHT, children_table, sentence_tree


@njit(cache=True, nogil=True)
def count_moments(words, heads, offsets, embedding):
    """Sum the moments the operators are built from (see ``_scorer``).

    For every triple (p, j, v) where j is a side-d child of p and v is
    another tree neighbour of p, the third view is phi_v placed in one of
    three blocks by v's relation to p (its head, a left child, a right
    child), a 3k-vector psi_v. Returns ``root_sum`` (k,), the sum of
    root-word embeddings; ``pairs[d]`` (k, 3k), the sum of phi_p psi_v^T;
    ``triples[d]`` (k, k, 3k), the sum of phi_j (x) phi_p (x) psi_v; and the
    second moments of the two views of the pairs, ``head_second[d]`` (k, k),
    the sum of phi_p phi_p^T, and ``view_second[d]`` (3k, 3k), the sum of
    psi_v psi_v^T (block diagonal), which whiten the pairs before they are
    inverted. The neighbours of p are summed once per block, so the cost is
    O(k^3) per arc rather than per (arc, neighbour).
    """
    k = embedding.shape[1]
    root_sum = np.zeros(k)
    pairs = np.zeros((2, k, 3 * k))
    triples = np.zeros((2, k, k, 3 * k))
    head_second = np.zeros((2, k, k))
    view_second = np.zeros((2, 3 * k, 3 * k))
    neighbour_sum = np.zeros(3 * k)
    neighbour_second = np.zeros((3 * k, 3 * k))
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
            if head == 0:
                root_sum += phi_p
            elif n_neighbours == 0:
                continue
            else:
                n_neighbours += 1
            if n_neighbours < 2:
                continue
            neighbour_sum[:] = 0.0
            neighbour_second[:, :] = 0.0
            if head != 0:
                phi_h = embedding[words[lo + head - 1]]
                neighbour_sum[:k] += phi_h
                neighbour_second[:k, :k] += np.outer(phi_h, phi_h)
            for t in range(start[p], start[p + 1]):
                j = kids[t]
                block = (1 + LEFT if j < p else 1 + RIGHT) * k
                phi_j = embedding[words[lo + j - 1]]
                neighbour_sum[block:block + k] += phi_j
                neighbour_second[block:block + k, block:block + k] += np.outer(phi_j, phi_j)
            outer_p = np.outer(phi_p, phi_p)
            for t in range(start[p], start[p + 1]):
                j = kids[t]
                side = LEFT if j < p else RIGHT
                block = (1 + side) * k
                phi_j = embedding[words[lo + j - 1]]
                other[:] = neighbour_sum
                other[block:block + k] -= phi_j
                head_second[side] += (n_neighbours - 1) * outer_p
                view_second[side] += neighbour_second
                view_second[side, block:block + k, block:block + k] -= np.outer(phi_j, phi_j)
                for b in range(k):
                    for c in range(3 * k):
                        pc = phi_p[b] * other[c]
                        pairs[side, b, c] += pc
                        for a in range(k):
                            triples[side, a, b, c] += phi_j[a] * pc
    return root_sum, pairs, triples, head_second, view_second


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
