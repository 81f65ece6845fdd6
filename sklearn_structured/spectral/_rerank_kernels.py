"""Numba kernels of the n-best reranker: the paper's two baseline POS
templates and an averaged perceptron over candidate lists, one epoch a call.

Candidates are packed in a :class:`CandidateLists`: ``heads`` holds every
candidate's heads one after the other, candidate c of sentence s spans
``heads[start[c]:start[c] + n_s]`` and sentence s owns candidates
``of_sentence[s]:of_sentence[s + 1]``; ``tags`` holds each sentence's tag ids
at ``token_offsets[s]:token_offsets[s + 1]``. Tag ids are < ``n_tags``;
``n_tags`` itself stands for the root and ``n_tags + 1`` for "no such
modifier".
"""

from typing import NamedTuple

import numpy as np
from numba import njit


class CandidateLists(NamedTuple):
    """The n-best lists of a batch of sentences, packed (see the module docstring)."""

    heads: np.ndarray
    start: np.ndarray
    of_sentence: np.ndarray
    tags: np.ndarray
    token_offsets: np.ndarray
    dense: np.ndarray
    """(n_candidates, n_dense) standardised dense features of the candidates."""


@njit(cache=True, nogil=True)
def tree_features(heads, tags, n_tags, out):
    """Write the template ids of one tree into ``out``; return how many.

    Template 1 (Dhillon et al. 2012, Section 4.3): for every head with
    modifiers, POS of its nearest left modifier + POS of the head + POS of
    its nearest right modifier. Template 2: POS of a modifier + POS of its
    head + POS of the grandparent, with the direction of the arc.
    """
    n = heads.shape[0]
    width = n_tags + 2
    root, none = n_tags, n_tags + 1
    nearest_left = np.zeros(n + 1, dtype=np.int64)
    nearest_right = np.full(n + 1, n + 1, dtype=np.int64)
    written = 0
    for m in range(1, n + 1):
        h = heads[m - 1]
        if m < h:
            nearest_left[h] = max(nearest_left[h], m)
        else:
            nearest_right[h] = min(nearest_right[h], m)
        tag_h = root if h == 0 else tags[h - 1]
        if h == 0:
            tag_g = none
        else:
            g = heads[h - 1]
            tag_g = root if g == 0 else tags[g - 1]
        out[written] = width ** 3 + ((tags[m - 1] * width + tag_h) * width + tag_g) * 2 + (m < h)
        written += 1
    for h in range(n + 1):
        has_left, has_right = nearest_left[h] > 0, nearest_right[h] <= n
        if not (has_left or has_right):
            continue
        tag_l = tags[nearest_left[h] - 1] if has_left else none
        tag_r = tags[nearest_right[h] - 1] if has_right else none
        tag_h = root if h == 0 else tags[h - 1]
        out[written] = (tag_l * width + tag_h) * width + tag_r
        written += 1
    return written


def n_template_features(n_tags):
    return 3 * (n_tags + 2) ** 3


@njit(cache=True, nogil=True)
def _candidate_features(c, length, lists, tags_s, n_tags, ids):
    """Template ids of candidate ``c`` into ``ids``; returns how many."""
    return tree_features(lists.heads[lists.start[c]:lists.start[c] + length], tags_s, n_tags, ids)


@njit(cache=True, nogil=True)
def _candidate_score(weights, c, length, lists, tags_s, n_tags, ids):
    # float64 accumulation whatever the dtype of the weights
    dense = lists.dense
    n_sparse = weights.shape[0] - dense.shape[1]
    n_ids = _candidate_features(c, length, lists, tags_s, n_tags, ids)
    total = 0.0
    for i in range(n_ids):
        total += weights[ids[i]]
    for f in range(dense.shape[1]):
        total += weights[n_sparse + f] * dense[c, f]
    return total


@njit(cache=True, nogil=True)
def _best_candidate(weights, s, lists, n_tags, ids):
    lo, hi = lists.token_offsets[s], lists.token_offsets[s + 1]
    tags_s = lists.tags[lo:hi]
    best, best_score = lists.of_sentence[s], -np.inf
    for c in range(lists.of_sentence[s], lists.of_sentence[s + 1]):
        score = _candidate_score(weights, c, hi - lo, lists, tags_s, n_tags, ids)
        if score > best_score:
            best, best_score = c, score
    return best


@njit(cache=True, nogil=True)
def _update(weights, accumulated, step, sign, c, length, lists, tags_s, n_tags, ids):
    dense = lists.dense
    n_sparse = weights.shape[0] - dense.shape[1]
    n_ids = _candidate_features(c, length, lists, tags_s, n_tags, ids)
    for i in range(n_ids):
        weights[ids[i]] += sign
        accumulated[ids[i]] += sign * step
    for f in range(dense.shape[1]):
        weights[n_sparse + f] += sign * dense[c, f]
        accumulated[n_sparse + f] += sign * step * dense[c, f]


@njit(cache=True, nogil=True)
def _feature_buffer(token_offsets):
    return np.empty(2 * (token_offsets[1:] - token_offsets[:-1]).max() + 2, dtype=np.int64)


@njit(cache=True, nogil=True)
def epoch_orders(seed, n_sentences, n_epochs):
    """The order of the sentences in each perceptron epoch, row by row: numba's
    generator seeded with ``seed``, one permutation per epoch."""
    np.random.seed(seed)
    orders = np.empty((n_epochs, n_sentences), dtype=np.int64)
    for epoch in range(n_epochs):
        orders[epoch] = np.random.permutation(n_sentences)
    return orders


@njit(cache=True, nogil=True)
def perceptron_epoch(lists, n_tags, correct, order, weights, sums, count):
    """One pass of the averaged perceptron (Collins 2002) over the lists, in
    ``order``: it moves towards the candidate with the most correct heads
    whenever the current best has fewer.

    ``weights`` (template weights, then one per dense column), ``sums`` and
    ``count`` are a :func:`~sklearn_structured.utils.perceptron_state`'s
    float64 arrays, updated in place; ``count`` goes up by one per list with
    candidates. Returns the number of updates.
    """
    token_offsets, of_sentence = lists.token_offsets, lists.of_sentence
    ids = _feature_buffer(token_offsets)
    n_updates = 0
    for s in order:
        if of_sentence[s + 1] == of_sentence[s]:
            continue
        oracle = of_sentence[s]
        for c in range(of_sentence[s], of_sentence[s + 1]):
            if correct[c] > correct[oracle]:
                oracle = c
        guess = _best_candidate(weights, s, lists, n_tags, ids)
        if correct[guess] < correct[oracle]:
            lo, hi = token_offsets[s], token_offsets[s + 1]
            tags_s = lists.tags[lo:hi]
            _update(weights, sums, count[0], 1.0, oracle, hi - lo, lists, tags_s, n_tags, ids)
            _update(weights, sums, count[0], -1.0, guess, hi - lo, lists, tags_s, n_tags, ids)
            n_updates += 1
        count[0] += 1.0
    return n_updates


@njit(cache=True, nogil=True)
def rerank(weights, lists, n_tags):
    """Index of the highest-scoring candidate of every sentence (-1 when none).

    ``weights`` may be float32 (a fitted model's): scores are summed in float64.
    """
    of_sentence = lists.of_sentence
    n_sent = of_sentence.shape[0] - 1
    out = np.full(n_sent, -1, dtype=np.int64)
    ids = _feature_buffer(lists.token_offsets)
    for s in range(n_sent):
        if of_sentence[s + 1] > of_sentence[s]:
            out[s] = _best_candidate(weights, s, lists, n_tags, ids)
    return out
