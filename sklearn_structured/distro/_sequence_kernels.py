"""Numba loops of DistroSequenceSVM: first-order chains with atomic emissions and
compositional transitions ``a_i^T T a_j`` (Srikumar & Manning, 2014, section 3.1),
exact or pruned by a tag dictionary, and the hashed emission features.

The weight storage and the steps shared with the multiclass model are in ``_kernels.py``.
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from ..kernels.chain import candidate_pair_count, candidate_viterbi_into, viterbi_into
from ..kernels.hashing import feature_hash
from ._kernels import (
    SCALE,
    add_to_rows,
    begin_step,
    end_step,
    finish_label_epoch,
    label_step,
    project_z,
)


class Candidates(NamedTuple):
    """The labels a token may take (a tag dictionary), packed like CSR rows."""

    labels: np.ndarray
    """int64, the candidate labels of every token back to back, sorted per token."""
    offsets: np.ndarray
    """int64 (n_tokens + 1,): token t's candidates are ``labels[offsets[t]:offsets[t + 1]]``."""


ALL_LABELS = Candidates(np.zeros(0, np.int64), np.zeros(0, np.int64))
"""No tag dictionary: every token may take every label (exact decoding)."""


# Sequence emission templates (the paper's POS features) and sentinels.
T_WORD, T_PREFIX, T_SUFFIX, T_PREVIOUS, T_NEXT, T_SHAPE, T_CUSTOM = range(1, 8)
BEFORE = -2  # the previous word of the first token (ids are never negative)
AFTER = -3  # the next word of the last token



@njit(cache=True, nogil=True)
def emission_feature_keys(form, attributes, offsets):
    """(n_tokens, 6) hashed emission features of every token.

    The word, its prefix and suffix (``attributes[:, 0]`` and ``[:, 1]``),
    the previous and next words, and its shape (``attributes[:, 2]``); all
    are vocabulary ids, 0 for unseen ones, whose features no model keeps.
    """
    out = np.empty((form.shape[0], 6), np.int64)
    for s in range(offsets.shape[0] - 1):
        lo, hi = offsets[s], offsets[s + 1]
        for j in range(lo, hi):
            out[j, 0] = feature_hash(T_WORD, form[j], 0, 0, 0, 0)
            out[j, 1] = feature_hash(T_PREFIX, attributes[j, 0], 0, 0, 0, 0)
            out[j, 2] = feature_hash(T_SUFFIX, attributes[j, 1], 0, 0, 0, 0)
            out[j, 3] = feature_hash(T_PREVIOUS, form[j - 1] if j > lo else BEFORE, 0, 0, 0, 0)
            out[j, 4] = feature_hash(T_NEXT, form[j + 1] if j + 1 < hi else AFTER, 0, 0, 0, 0)
            out[j, 5] = feature_hash(T_SHAPE, attributes[j, 2], 0, 0, 0, 0)
    return out


@njit(cache=True, nogil=True)
def custom_feature_keys(ids):
    """Hashes of user feature strings, given as vocabulary ids."""
    out = np.empty(ids.shape[0], np.int64)
    for k in range(ids.shape[0]):
        out[k] = feature_hash(T_CUSTOM, ids[k], 0, 0, 0, 0)
    return out


@njit(cache=True, nogil=True)
def _emission_step(indptr, indices, data, lo, gold, predicted, A, V, U, direction, step,
                   scale_sum_before):
    """Move the rows of the sentence at ``lo`` towards the gold labels' vectors and away
    from the predicted ones, at the tokens where they differ (a chain's weight step)."""
    d = A.shape[0]
    for t in range(len(gold)):
        if predicted[t] != gold[t]:
            for k in range(d):
                direction[k] = A[k, gold[t]] - A[k, predicted[t]]
            add_to_rows(indptr, indices, data, lo + t, V, U, direction, step,
                        scale_sum_before)


@njit(cache=True, nogil=True)
def _transition_factor_step(A, T, UT, g0, g1, p0, p1, step, scale_sum_before):
    """T += step (a_g0 a_g1^T - a_p0 a_p1^T), with its averaging sums."""
    d = A.shape[0]
    for a in range(d):
        for b in range(d):
            delta = step * (A[a, g0] * A[b, g1] - A[a, p0] * A[b, p1])
            T[a, b] += delta
            UT[a, b] += delta * scale_sum_before


@njit(cache=True, nogil=True)
def _wrong_transitions(gold, predicted):
    """The positions t >= 1 whose predicted label pair (t - 1, t) is not the gold pair."""
    out = np.empty(max(gold.shape[0] - 1, 0), np.int64)
    k = 0
    for t in range(1, gold.shape[0]):
        if predicted[t - 1] != gold[t - 1] or predicted[t] != gold[t]:
            out[k] = t
            k += 1
    return out[:k]


@njit(cache=True, nogil=True)
def _chain_weight_step(indptr, indices, data, lo, gold, predicted, A, iterates, direction, step,
                       scale_sum_before, onehot):
    """One sub-gradient step of a chain's weights (emissions, then transitions) towards
    the gold labels of the sentence at ``lo`` and away from the predicted ones.

    ``onehot`` (A the identity) moves single entries of T. Returns the
    positions of the wrong transitions, for the callers' caches of T's products.
    """
    V, U, T, UT, _ = iterates
    _emission_step(indptr, indices, data, lo, gold, predicted, A, V, U, direction, step,
                   scale_sum_before)
    wrong = _wrong_transitions(gold, predicted)
    for t in wrong:
        p0, p1 = predicted[t - 1], predicted[t]
        g0, g1 = gold[t - 1], gold[t]
        if onehot:
            T[g0, g1] += step
            UT[g0, g1] += step * scale_sum_before
            T[p0, p1] -= step
            UT[p0, p1] -= step * scale_sum_before
        else:
            _transition_factor_step(A, T, UT, g0, g1, p0, p1, step, scale_sum_before)
    return wrong


@njit(cache=True, nogil=True)
def _augmented_loss(E, transitions, zeros, gold, predicted):
    """Structured hinge loss (Hamming cost) of one sentence from its label scores ``E``;
    the loss-augmented labels go to ``predicted``."""
    augmented = viterbi_into(E, transitions, zeros, zeros, gold, 1.0, predicted)
    gold_score = E[0, gold[0]]
    for t in range(1, gold.shape[0]):
        gold_score += E[t, gold[t]] + transitions[gold[t - 1], gold[t]]
    return augmented - gold_score


# first-order chains: atomic emissions, compositional transitions a^T T a'


@njit(cache=True, nogil=True)
def _sentence_emissions(indptr, indices, data, lo, hi, V, scale, A, Z, E):
    """Fill Z[:n] (token d-vectors) and E[:n] (token label scores) for tokens lo..hi."""
    d, n_labels = A.shape
    for t in range(hi - lo):
        project_z(indptr, indices, data, lo + t, V, scale, Z[t])
        for l in range(n_labels):
            acc = 0.0
            for k in range(d):
                acc += A[k, l] * Z[t, k]
            E[t, l] = acc


@njit(cache=True, nogil=True)
def label_transition_scores(A, T):
    """The M x M chain transition matrix A^T T A."""
    return A.T @ (T @ A)


@njit(cache=True, nogil=True, inline="always")
def _exact_loss(rows, lo, hi, V, scale, A, transitions_v, Z, E, transitions, zeros, gold,
                predicted):
    """Structured hinge loss of the sentence at lo..hi over every label, from the
    unscaled A^T T A ``transitions_v``; the loss-augmented labels go to ``predicted``
    (``Z``, ``E`` and ``transitions`` are scratch)."""
    indptr, indices, data = rows
    _sentence_emissions(indptr, indices, data, lo, hi, V, scale, A, Z, E)
    for i in range(transitions.shape[0]):
        for j in range(transitions.shape[1]):
            transitions[i, j] = scale * transitions_v[i, j]
    return _augmented_loss(E[:hi - lo], transitions, zeros, gold, predicted)


@njit(cache=True, nogil=True, inline="always")
def _move_label_transitions(transitions_v, gram, gold, predicted, wrong, step):
    """Follow T's step on the wrong transitions in A^T T A (``gram`` is A^T A)."""
    n_labels = transitions_v.shape[0]
    for t in wrong:
        p0, p1 = predicted[t - 1], predicted[t]
        g0, g1 = gold[t - 1], gold[t]
        for i in range(n_labels):
            for j in range(n_labels):
                transitions_v[i, j] += step * (
                    gram[i, g0] * gram[g1, j] - gram[i, p0] * gram[p1, j]
                )


@njit(cache=True, nogil=True)
def sequence_hinge_losses(E, offsets, y, transitions):
    """Structured hinge loss (Hamming cost) of every sentence, given its label scores."""
    n_sentences = offsets.shape[0] - 1
    n_labels = transitions.shape[0]
    losses = np.empty(n_sentences)
    zeros = np.zeros(n_labels)
    predicted = np.empty(E.shape[0], dtype=np.int64)
    for s in range(n_sentences):
        lo, hi = offsets[s], offsets[s + 1]
        losses[s] = _augmented_loss(E[lo:hi], transitions, zeros, y[lo:hi], predicted[lo:hi])
    return losses


# ---------------------------------------------------------------------------
# first-order chains pruned by a tag dictionary (Candidates)
#
# With M ~ 1,000 labels neither the M x M transition matrix A^T T A nor
# M^2 Viterbi steps per token are affordable, so scores are computed for the
# candidate labels (and the pairs of candidates of neighbouring tokens) only.
# ``TAt`` (M x d) holds the rows (T a_j)^T, so that a pair costs one d-dot;
# one-hot vectors (``onehot``) read W phi and T directly instead.


@njit(cache=True, nogil=True)
def _pair_score(i, j, label_rows, TAt, T, onehot):
    if onehot:
        return T[i, j]
    acc = 0.0
    for k in range(label_rows.shape[1]):
        acc += label_rows[i, k] * TAt[j, k]
    return acc


@njit(cache=True, nogil=True)
def _emission_score(c, z, label_rows, onehot):
    if onehot:
        return z[c]
    acc = 0.0
    for k in range(z.shape[0]):
        acc += label_rows[c, k] * z[k]
    return acc


@njit(cache=True, nogil=True)
def _candidate_scores(Z, lo, hi, candidates, label_rows, TAt, T, scale, onehot, emissions):
    """Emission scores of the candidates of tokens lo..hi (Z[t] is token lo + t's
    d-vector) into ``emissions`` at the candidates' indices, and the pair
    scores (``scale`` times the transitions in storage) as a new array."""
    labels, offsets = candidates
    for t in range(hi - lo):
        for k in range(offsets[lo + t], offsets[lo + t + 1]):
            emissions[k] = _emission_score(labels[k], Z[t], label_rows, onehot)
    pairs = np.empty(candidate_pair_count(offsets[lo:hi + 1]))
    p = 0
    for t in range(lo + 1, hi):
        for i in range(offsets[t - 1], offsets[t]):
            for k in range(offsets[t], offsets[t + 1]):
                pairs[p] = scale * _pair_score(labels[i], labels[k], label_rows, TAt, T, onehot)
                p += 1
    return pairs


@njit(cache=True, nogil=True)
def _gold_score(Z, gold, label_rows, TAt, T, scale, onehot):
    total = 0.0
    for t in range(gold.shape[0]):
        total += _emission_score(gold[t], Z[t], label_rows, onehot)
        if t > 0:
            total += scale * _pair_score(gold[t - 1], gold[t], label_rows, TAt, T, onehot)
    return total


@njit(cache=True, nogil=True)
def _transition_rows(A, T):
    """TAt, the M x d matrix of rows (T a_j)^T."""
    return np.ascontiguousarray((T @ A).T)


@njit(cache=True, nogil=True, inline="always")
def _candidate_loss(rows, lo, hi, V, scale, candidates, label_rows, TAt, T, onehot, Z, emissions,
                    gold, predicted):
    """Structured hinge loss (Hamming cost) of the sentence at lo..hi over its tokens'
    candidates; its token d-vectors go to ``Z``, the loss-augmented labels to ``predicted``."""
    indptr, indices, data = rows
    for t in range(hi - lo):
        project_z(indptr, indices, data, lo + t, V, scale, Z[t])
    pairs = _candidate_scores(Z, lo, hi, candidates, label_rows, TAt, T, scale, onehot, emissions)
    augmented = candidate_viterbi_into(candidates.labels, candidates.offsets[lo:hi + 1],
                                       emissions, pairs, gold, 1.0, predicted)
    return augmented - _gold_score(Z, gold, label_rows, TAt, T, scale, onehot)


@njit(cache=True, nogil=True, inline="always")
def _move_transition_rows(TAt, gram, A, gold, predicted, wrong, step):
    """Follow T's step on the wrong transitions in TAt, the rows (T a_j)^T."""
    d, n_labels = A.shape
    for t in wrong:
        p0, p1 = predicted[t - 1], predicted[t]
        g0, g1 = gold[t - 1], gold[t]
        # T += s (a_g0 a_g1^T - a_p0 a_p1^T) moves (T a_j)^T
        # by s (gram[g1, j] a_g0 - gram[p1, j] a_p0)
        for j in range(n_labels):
            cg = step * gram[g1, j]
            cp = step * gram[p1, j]
            for a in range(d):
                TAt[j, a] += cg * A[a, g0] - cp * A[a, p0]


@njit(cache=True, nogil=True)
def candidate_decode(rows, V, offsets, y, candidates, A, T, onehot, max_length):
    """Best labels of every sentence over the candidates (unscaled V, T), flat.

    With ``y`` (gold labels, same packing) the decoding is loss-augmented
    and the second result holds every sentence's structured hinge loss.
    """
    indptr, indices, data = rows
    d, n_labels = A.shape
    label_rows = np.ascontiguousarray(A.T)
    TAt = np.zeros((0, 0)) if onehot else _transition_rows(A, T)
    emissions = np.empty(candidates.labels.shape[0])
    Z = np.empty((max_length, d))
    n_sentences = offsets.shape[0] - 1
    out = np.empty(offsets[n_sentences], dtype=np.int64)
    losses = np.zeros(n_sentences)
    with_gold = y.shape[0] > 0
    for s in range(n_sentences):
        lo, hi = offsets[s], offsets[s + 1]
        if hi == lo:
            continue
        for t in range(hi - lo):
            project_z(indptr, indices, data, lo + t, V, 1.0, Z[t])
        pairs = _candidate_scores(Z, lo, hi, candidates, label_rows, TAt, T, 1.0, onehot,
                                  emissions)
        gold = y[lo:hi] if with_gold else y
        score = candidate_viterbi_into(candidates.labels, candidates.offsets[lo:hi + 1],
                                       emissions, pairs, gold, 1.0, out[lo:hi])
        if with_gold:
            losses[s] = score - _gold_score(Z, gold, label_rows, TAt, T, 1.0, onehot)
    return out, losses


# ---------------------------------------------------------------------------
# the passes of the alternation, over every label or over candidates
#
# The helpers that score a sentence or move T's products are inlined (called,
# they made the one-hot weight pass over candidates about 30% slower), but not
# _emission_gradient: inlined, it made the candidate label pass ten times slower.


@njit(cache=True, nogil=True)
def chain_weight_epoch(rows, offsets, y, candidates, order, A, onehot, iterates, alpha, t0,
                       max_length):
    """One SGD pass over sentences for emission weights V and transitions T, A fixed.

    Token rows are packed by sentence (``offsets``) and ``y`` holds the gold
    label ids in the same packing. ``T`` is stored in the same scale as
    ``V``. The loss-augmented Viterbi runs over every label when
    ``candidates`` is :data:`ALL_LABELS`, else over each token's candidates,
    among which its gold label must be; there ``onehot`` says that A is the
    identity (the baseline), whose scores are read directly. Returns the sum
    of the structured hinge losses.
    """
    indptr, indices, data = rows
    V, U, T, UT, state = iterates
    d, n_labels = A.shape
    exact = candidates.offsets.shape[0] == 0
    direct = onehot and not exact
    none = np.zeros((0, 0))
    gram = none if direct else A.T @ A
    # the product of T that the scores read, kept up to date as T moves: over every
    # label A^T T A (M x M), over candidates TAt (M x d, see _transition_rows); the
    # direct scores read T itself
    if exact:
        product = label_transition_scores(A, T)
    else:
        product = none if direct else _transition_rows(A, T)
    label_rows = none if exact else np.ascontiguousarray(A.T)
    emissions = np.empty(candidates.labels.shape[0])
    transitions = np.empty((n_labels, n_labels)) if exact else none
    E = np.empty((max_length, n_labels)) if exact else none
    zeros = np.zeros(n_labels if exact else 0)
    Z = np.empty((max_length, d))
    predicted = np.empty(max_length, dtype=np.int64)
    direction = np.empty(d)
    total_loss = 0.0
    for s in order:
        lo, hi = offsets[s], offsets[s + 1]
        n = hi - lo
        gold = y[lo:hi]
        scale = state[SCALE]
        if exact:
            loss = _exact_loss(rows, lo, hi, V, scale, A, product, Z, E, transitions, zeros,
                               gold, predicted[:n])
        else:
            loss = _candidate_loss(rows, lo, hi, V, scale, candidates, label_rows, product, T,
                                   onehot, Z, emissions, gold, predicted[:n])
        eta, scale_sum_before, rescaled = begin_step(state, alpha, t0, V, T)
        if rescaled and not direct:
            product = label_transition_scores(A, T) if exact else _transition_rows(A, T)
        if loss > 1e-12:
            total_loss += loss
            step = eta / state[SCALE]
            wrong = _chain_weight_step(indptr, indices, data, lo, gold, predicted[:n], A,
                                       iterates, direction, step, scale_sum_before, direct)
            if exact:
                _move_label_transitions(product, gram, gold, predicted, wrong, step)
            elif not direct:
                _move_transition_rows(product, gram, A, gold, predicted, wrong, step)
        end_step(state)
    return total_loss


@njit(cache=True, nogil=True)
def _emission_gradient(grad, Z, gold, predicted, touched):
    """Add the emission part of the hinge loss's sub-gradient in A (``Z[t]`` is token
    t's d-vector) and mark the labels it moves."""
    for t in range(gold.shape[0]):
        if predicted[t] != gold[t]:
            grad[:, predicted[t]] += Z[t]
            grad[:, gold[t]] -= Z[t]
            touched[predicted[t]] = touched[gold[t]] = True


@njit(cache=True, nogil=True)
def chain_label_epoch(rows, V, Z, offsets, y, candidates, order, A, T, eta, nuclear_penalty,
                      max_length):
    """One stochastic proximal pass over A for the chain model, weights fixed.

    ``T`` is the unscaled d x d transition matrix. Over every label
    (``candidates`` is :data:`ALL_LABELS`), ``Z`` holds every token's
    d-vector ``W phi(x_t) + intercept``. Over candidates the d-vectors are
    projected from ``rows`` and the unscaled ``V`` a sentence at a time, and
    ``Z`` is not read.
    """
    d, n_labels = A.shape
    exact = candidates.offsets.shape[0] == 0
    none = np.zeros((0, 0))
    # what the candidate scores read, kept in step with A (see chain_weight_epoch)
    label_rows = none if exact else np.ascontiguousarray(A.T)
    TAt = none if exact else _transition_rows(A, T)
    emissions = np.empty(candidates.labels.shape[0])
    projected = none if exact else np.empty((max_length, d))
    E = np.empty((max_length, n_labels)) if exact else none
    zeros = np.zeros(n_labels if exact else 0)
    predicted = np.empty(max_length, dtype=np.int64)
    grad = np.zeros((d, n_labels))
    touched = np.zeros(n_labels, dtype=np.bool_)
    total = np.zeros_like(A)
    owed = 0  # lazy thresholds and averaging: see label_step
    held = 0
    for s in order:
        lo, hi = offsets[s], offsets[s + 1]
        n = hi - lo
        gold = y[lo:hi]
        if exact:
            E[:n] = Z[lo:hi] @ A
            loss = _augmented_loss(E[:n], label_transition_scores(A, T), zeros, gold,
                                   predicted[:n])
        else:
            loss = _candidate_loss(rows, lo, hi, V, 1.0, candidates, label_rows, TAt, T, False,
                                   projected, emissions, gold, predicted[:n])
        owed += 1
        if loss > 1e-12:
            grad[:] = 0.0
            touched[:] = False
            wrong = _wrong_transitions(gold, predicted[:n])
            # d(a_i^T T a_j)/da_i = T a_j and /da_j = T^T a_i
            if exact:
                _emission_gradient(grad, Z[lo:hi], gold, predicted, touched)
                TA = T @ A
                TtA = T.T @ A
                for t in wrong:
                    p0, p1 = predicted[t - 1], predicted[t]
                    g0, g1 = gold[t - 1], gold[t]
                    grad[:, p0] += TA[:, p1]
                    grad[:, p1] += TtA[:, p0]
                    grad[:, g0] -= TA[:, g1]
                    grad[:, g1] -= TtA[:, g0]
            else:
                _emission_gradient(grad, projected, gold, predicted, touched)
                for t in wrong:
                    p0, p1 = predicted[t - 1], predicted[t]
                    g0, g1 = gold[t - 1], gold[t]
                    grad[:, p0] += TAt[p1]
                    grad[:, p1] += T.T @ label_rows[p0]
                    grad[:, g0] -= TAt[g1]
                    grad[:, g1] -= T.T @ label_rows[g0]
                    touched[p0] = touched[p1] = touched[g0] = touched[g1] = True
            label_step(A, grad, total, held, owed, eta, nuclear_penalty)
            owed = held = 0
            if not exact:
                if nuclear_penalty > 0.0:  # the proximal step moved every column
                    label_rows[:] = A.T
                    TAt = _transition_rows(A, T)
                else:
                    for l in range(n_labels):
                        if touched[l]:
                            label_rows[l] = A[:, l]
                            TAt[l] = T @ label_rows[l]
        held += 1
    finish_label_epoch(A, total, owed, held, eta * nuclear_penalty)
