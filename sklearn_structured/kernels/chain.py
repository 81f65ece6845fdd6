"""First-order chain decoding: Viterbi and loss-augmented Viterbi.

The library's one chain decoder. A labelled sequence ``y`` of length ``T``
over ``M`` labels scores

    start[y_0] + sum_t emissions[t, y_t] + sum_t transitions[y_t, y_{t+1}] + end[y_{T-1}]

and loss-augmented decoding adds ``cost`` for every position where ``y``
differs from a gold sequence (a scaled Hamming distance), which is the
inference step of structural SVM training.

All functions are ``@njit(cache=True, nogil=True)`` on numpy arrays, so other
numba code can call them directly and Python threads can decode in parallel.
Callers without start or end scores pass ``np.zeros(M)``.
"""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def viterbi_into(emissions, transitions, start, end, gold, cost, out):
    """Allocation-light form for numba callers: best sequence written into ``out``.

    ``out`` is an int64 array (T,). ``gold`` of length 0 means plain
    Viterbi; otherwise every label that differs from ``gold[t]`` at position
    ``t`` earns ``cost`` (loss-augmented decoding). Returns the score of the
    sequence, cost included.
    """
    n_steps, n_labels = emissions.shape
    augmented = gold.shape[0] > 0
    backpointers = np.empty((n_steps, n_labels), dtype=np.int32)
    previous = np.empty(n_labels)
    current = np.empty(n_labels)
    for j in range(n_labels):
        previous[j] = start[j] + emissions[0, j]
        if augmented and j != gold[0]:
            previous[j] += cost
    for t in range(1, n_steps):
        for j in range(n_labels):
            best = previous[0] + transitions[0, j]
            best_i = 0
            for i in range(1, n_labels):
                candidate = previous[i] + transitions[i, j]
                if candidate > best:
                    best = candidate
                    best_i = i
            current[j] = best + emissions[t, j]
            if augmented and j != gold[t]:
                current[j] += cost
            backpointers[t, j] = best_i
        previous, current = current, previous
    best = previous[0] + end[0]
    best_j = 0
    for j in range(1, n_labels):
        candidate = previous[j] + end[j]
        if candidate > best:
            best = candidate
            best_j = j
    out[n_steps - 1] = best_j
    for t in range(n_steps - 1, 0, -1):
        best_j = backpointers[t, best_j]
        out[t - 1] = best_j
    return best


@njit(cache=True, nogil=True)
def viterbi(emissions, transitions, start, end):
    """Highest-scoring label sequence of a first-order chain.

    Parameters
    ----------
    emissions : float array (T, M)
        ``emissions[t, j]``: score of label ``j`` at position ``t``; ``T >= 1``.
    transitions : float array (M, M)
        ``transitions[i, j]``: score of label ``i`` followed by label ``j``.
    start, end : float arrays (M,)
        Scores of the first and of the last label.

    Returns
    -------
    labels : int64 array (T,)
    score : float
        Score of ``labels``. Ties go to the lowest label index.
    """
    labels = np.empty(emissions.shape[0], dtype=np.int64)
    no_gold = np.empty(0, dtype=np.int64)
    score = viterbi_into(emissions, transitions, start, end, no_gold, 0.0, labels)
    return labels, score


@njit(cache=True, nogil=True)
def loss_augmented_viterbi(emissions, transitions, start, end, gold, cost):
    """``argmax_y score(y) + cost * hamming(y, gold)`` for a first-order chain.

    Arguments as in :func:`viterbi`, plus ``gold`` (int64 array (T,)) and the
    per-position ``cost`` of a wrong label. Returns ``(labels, augmented
    score)``; the structured hinge loss of ``gold`` is the augmented score
    minus the score of ``gold`` (see :func:`sequence_score`).
    """
    labels = np.empty(emissions.shape[0], dtype=np.int64)
    score = viterbi_into(emissions, transitions, start, end, gold, cost, labels)
    return labels, score


@njit(cache=True, nogil=True)
def sequence_score(emissions, transitions, start, end, labels):
    """Score of one given label sequence under the chain model."""
    n_steps = emissions.shape[0]
    total = start[labels[0]] + end[labels[n_steps - 1]] + emissions[0, labels[0]]
    for t in range(1, n_steps):
        total += transitions[labels[t - 1], labels[t]] + emissions[t, labels[t]]
    return total


@njit(cache=True, nogil=True)
def viterbi_batch(emissions, offsets, transitions, start, end):
    """Viterbi over many sequences packed into one array.

    ``emissions`` is (sum of lengths, M); sequence ``s`` owns rows
    ``offsets[s]:offsets[s + 1]``. Returns the flat int64 label array in the
    same packing.
    """
    labels = np.empty(emissions.shape[0], dtype=np.int64)
    no_gold = np.empty(0, dtype=np.int64)
    for s in range(offsets.shape[0] - 1):
        lo, hi = offsets[s], offsets[s + 1]
        if hi > lo:
            viterbi_into(emissions[lo:hi], transitions, start, end, no_gold, 0.0, labels[lo:hi])
    return labels


@njit(cache=True, nogil=True)
def candidate_viterbi_into(candidates, offsets, emissions, pair_scores, gold, cost, out):
    """Viterbi restricted to candidate labels per position (a pruned chain).

    Position ``t`` of the sequence may take the labels
    ``candidates[offsets[t]:offsets[t + 1]]`` (at least one), whose emission
    scores are ``emissions`` at the same indices; ``offsets`` has one more
    entry than the sequence and may start anywhere in the arrays.
    ``pair_scores`` holds the transition scores between the candidates of
    consecutive positions, one row-major block (n_{t-1} x n_t) per
    ``t = 1, 2, ...``, blocks back to back (see
    :func:`candidate_pair_count`). ``gold`` and ``cost`` as in
    :func:`viterbi_into` (a gold label need not be a candidate). Writes the
    best labels (not candidate indices) into ``out`` and returns the score,
    cost included. With every label a candidate at every position this is
    :func:`viterbi_into` with zero start and end scores, at a cost of
    sum_t n_{t-1} n_t instead of T M^2.
    """
    n_steps = offsets.shape[0] - 1
    base = offsets[0]
    augmented = gold.shape[0] > 0
    values = np.empty(offsets[n_steps] - base)
    backpointers = np.empty(offsets[n_steps] - base, dtype=np.int64)
    for k in range(offsets[0], offsets[1]):
        values[k - base] = emissions[k]
        if augmented and candidates[k] != gold[0]:
            values[k - base] += cost
    block = 0
    for t in range(1, n_steps):
        lo_prev, hi_prev = offsets[t - 1], offsets[t]
        width = offsets[t + 1] - offsets[t]
        for c, k in enumerate(range(offsets[t], offsets[t + 1])):
            best = -np.inf
            best_i = lo_prev
            for r, i in enumerate(range(lo_prev, hi_prev)):
                candidate = values[i - base] + pair_scores[block + r * width + c]
                if candidate > best:
                    best = candidate
                    best_i = i
            values[k - base] = best + emissions[k]
            if augmented and candidates[k] != gold[t]:
                values[k - base] += cost
            backpointers[k - base] = best_i
        block += (hi_prev - lo_prev) * width
    best_k = offsets[n_steps - 1]
    for k in range(offsets[n_steps - 1] + 1, offsets[n_steps]):
        if values[k - base] > values[best_k - base]:
            best_k = k
    best = values[best_k - base]
    for t in range(n_steps - 1, -1, -1):
        out[t] = candidates[best_k]
        best_k = backpointers[best_k - base]
    return best


@njit(cache=True, nogil=True)
def candidate_pair_count(offsets):
    """Length of the ``pair_scores`` of :func:`candidate_viterbi_into` for these ``offsets``."""
    total = 0
    for t in range(1, offsets.shape[0] - 1):
        total += (offsets[t] - offsets[t - 1]) * (offsets[t + 1] - offsets[t])
    return total
