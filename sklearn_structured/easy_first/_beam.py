"""Beam search pieces shared by the parser and tagger kernels: the arrays of the beam
items and their extension by one action, the top-k candidate list of a step, and the
bookkeeping of Ma et al.'s valid early update. Each kernel adds the state of its own
structure (partial trees, or tags) beside these."""

from typing import NamedTuple

import numpy as np
from numba import njit

from ..kernels.hashing import feature_hash

_DECISION_TEMPLATE = 1


class Perceptron(NamedTuple):
    """The weights a kernel reads and, in training, updates in place: the arrays of a
    :func:`~sklearn_structured.utils._training.perceptron_state`."""

    weights: np.ndarray
    """(rows, n_actions) weight table; a row is a feature, a column an action type."""
    sums: np.ndarray
    """Running sums for the average (utils._training.averaged_weights); read in training only."""
    count: np.ndarray
    """Length-1 float array: sentences trained on so far, the averaging counter."""


class Search(NamedTuple):
    """How the beam search runs."""

    beam_size: int
    merge: bool
    """Sequences reaching the same state share one beam slot."""


def predicting(weights):
    """A :class:`Perceptron` for prediction: nothing is updated, so no running sums."""
    return Perceptron(weights, weights, np.zeros(1))


# a plain inlined function, not a numba generator: a cached generator fails to load
# in the next process (numba looks its implementation up in a registry it never refills)
@njit(cache=True, nogil=True, inline="always")
def next_sentence(offsets, i, count, train):
    """Word bounds of sentence ``i`` of a batch and the averaging counter ``count[0]``,
    which training advances by one before each sentence."""
    if train:
        count[0] += 1.0
    return offsets[i], offsets[i + 1], count[0]


@njit(cache=True, nogil=True, inline="always")
def action_key(position, value):
    """A pseudo-random 63-bit key of one decision (an arc, or a word's tag).

    A state's signature is the XOR of the keys of its decisions, so two action
    sequences that make the same decisions in different orders (spurious
    ambiguity) have the same signature.
    """
    return feature_hash(_DECISION_TEMPLATE, position, value, 0, 0, 0)


@njit(cache=True, nogil=True, inline="always")
def new_candidates(size):
    """Empty top-``size`` candidate arrays of one beam step, best first: score, state
    signature, and the extended beam item, position and action of each."""
    return (np.empty(size), np.empty(size, np.int64), np.empty(size, np.int64),
            np.empty(size, np.int64), np.empty(size, np.int64))


# The innermost call of the search (once per beam item, word and action):
# plain arrays, which the compiler sees are distinct allocations.
@njit(cache=True, nogil=True)
def offer_candidate(score, signature, b, j, a, top_score, top_sig, top_b, top_j, top_a, count,
                    size, merge):
    """Insert a candidate into the descending top-``size`` list; ties keep the earlier one.

    With ``merge``, a candidate whose signature is already listed keeps only
    the better-scoring of the two, so the beam holds distinct states.
    """
    if merge:
        for k in range(count):
            if top_sig[k] == signature:
                if top_score[k] >= score:
                    return count
                for m in range(k, count - 1):  # drop the worse duplicate
                    top_score[m] = top_score[m + 1]
                    top_sig[m] = top_sig[m + 1]
                    top_b[m] = top_b[m + 1]
                    top_j[m] = top_j[m + 1]
                    top_a[m] = top_a[m + 1]
                count -= 1
                break
    if count == size and score <= top_score[size - 1]:
        return count
    pos = count if count < size else size - 1
    while pos > 0 and top_score[pos - 1] < score:
        top_score[pos] = top_score[pos - 1]
        top_sig[pos] = top_sig[pos - 1]
        top_b[pos] = top_b[pos - 1]
        top_j[pos] = top_j[pos - 1]
        top_a[pos] = top_a[pos - 1]
        pos -= 1
    top_score[pos] = score
    top_sig[pos] = signature
    top_b[pos] = b
    top_j[pos] = j
    top_a[pos] = a
    return count + 1 if count < size else size


@njit(cache=True, nogil=True)
def early_update(record, correct_history, history, step, correct_action, correct_score,
                 predicted_score, final):
    """Prepare Ma et al.'s valid update at ``step``: the correct sequence and the record.

    ``correct_history`` receives the best correct extension (``history`` of
    its beam item, then ``correct_action``); ``record`` gets ``(updated,
    score_correct, score_predicted, early, length)``. Returns the length of
    both sequences to update on.
    """
    correct_history[:step] = history[:step]
    correct_history[step] = correct_action
    record[0] = 1.0
    record[1] = correct_score
    record[2] = predicted_score
    record[3] = 0.0 if final else 1.0
    record[4] = step + 1
    return step + 1


@njit(cache=True, nogil=True)
def new_beam(size, n, n_actions):
    """The arrays every beam item has, for the current and the next step (first index
    0 or 1, swapped each step): the step at which each of the ``n`` words got its
    decision (``n - 1`` until it does), the actions taken, the cached scores of each
    word's ``n_actions`` actions, and the sequence's score, state signature and
    correctness (training only)."""
    return (np.full((2, size, n), n - 1, np.int64), np.empty((2, size, n), np.int64),
            np.empty((2, size, n, n_actions)), np.zeros((2, size)),
            np.zeros((2, size), np.int64), np.zeros((2, size), np.bool_))


@njit(cache=True, nogil=True)
def extend_item(order, hist, cache, score, signature, cur, b, nxt, k, step, word, action,
                new_score, new_signature):
    """Item ``k`` of the next step becomes item ``b`` of the current one (arrays of
    :func:`new_beam`) extended by ``action``, the decision on ``word``. The caller
    copies and updates its own state and refreshes the cached scores it changes."""
    order[nxt, k] = order[cur, b]
    order[nxt, k, word] = step
    hist[nxt, k, :step] = hist[cur, b, :step]
    hist[nxt, k, step] = action
    cache[nxt, k] = cache[cur, b]
    score[nxt, k] = new_score
    signature[nxt, k] = new_signature
