"""Numba training loops of DISTRO (Srikumar & Manning, 2014, Algorithm 1).

The weights are ``W`` (d x n_features, plus an intercept row) and, for
chains, the d x d transition matrix ``T``. Label ``l`` scores
``a_l^T W phi(x)``, so a token costs O(nnz(phi) d + d M): the d-vector
``z = W phi(x)`` is computed once and then multiplied by the label matrix.

Weights are stored transposed and scaled, ``W^T = scale * V`` (``V`` is
n_features+1 x d, one contiguous row per feature), so that the L2 shrinkage
of every stochastic step is one multiplication of ``scale``. The iterates of
a weight phase are averaged with the same trick: the running sum of iterates
is ``S * V - U`` where ``S`` is the sum of the scales so far and ``U``
collects each sparse update times the ``S`` before it.

``state`` holds the scalars shared across calls:
``[scale, S, global step t, steps in this phase]``.
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from ..kernels.chain import viterbi_into
from ..kernels.hashing import feature_hash

SCALE, SCALE_SUM, STEP, PHASE_STEPS = 0, 1, 2, 3


class Iterates(NamedTuple):
    """What a weight phase updates in place (see the module docstring)."""

    V: np.ndarray
    """Scaled weights, one row per feature and a last row for the intercept."""
    U: np.ndarray
    """Averaging sums of ``V``."""
    T: np.ndarray
    """Scaled d x d transitions (0 x 0 for the multiclass model)."""
    UT: np.ndarray
    """Averaging sums of ``T``."""
    state: np.ndarray
    """``[scale, S, global step t, steps in this phase]``."""


class SparseRows(NamedTuple):
    """Feature vectors as the arrays of a CSR matrix, one row per example or token."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray

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
def _shrink(state, eta, alpha, V, T):
    """Apply the L2 step to ``scale``; fold a tiny scale back into V and T.

    Returns True when the storage was rescaled.
    """
    state[SCALE] *= 1.0 - eta * alpha
    if state[SCALE] < 1e-9:
        V *= state[SCALE]
        T *= state[SCALE]
        state[SCALE_SUM] /= state[SCALE]
        state[SCALE] = 1.0
        return True
    return False


@njit(cache=True, nogil=True)
def _project_z(indptr, indices, data, row, V, scale, z):
    """z = W phi(x_row) + intercept, the d-vector of one example or token."""
    n_features = V.shape[0] - 1
    d = V.shape[1]
    for k in range(d):
        z[k] = V[n_features, k]
    for p in range(indptr[row], indptr[row + 1]):
        j = indices[p]
        v = data[p]
        for k in range(d):
            z[k] += v * V[j, k]
    for k in range(d):
        z[k] *= scale


@njit(cache=True, nogil=True)
def _add_to_rows(indptr, indices, data, row, V, U, direction, step, scale_sum_before):
    """V[features of row] += step * value * direction, and the matching U update."""
    n_features = V.shape[0] - 1
    d = V.shape[1]
    for k in range(d):
        V[n_features, k] += step * direction[k]
        U[n_features, k] += step * direction[k] * scale_sum_before
    for p in range(indptr[row], indptr[row + 1]):
        j = indices[p]
        s = step * data[p]
        for k in range(d):
            V[j, k] += s * direction[k]
            U[j, k] += s * direction[k] * scale_sum_before


@njit(cache=True, nogil=True)
def _end_step(state):
    state[SCALE_SUM] += state[SCALE]
    state[STEP] += 1.0
    state[PHASE_STEPS] += 1.0


@njit(cache=True, nogil=True)
def average_iterates(iterates):
    """Replace V and T by the average iterates of the phase (scale reset to 1)."""
    V, U, T, UT, state = iterates
    n = state[PHASE_STEPS]
    for weights, accumulated in ((V, U), (T, UT)):
        if n > 0:
            weights *= state[SCALE_SUM]
            weights -= accumulated
            weights /= n
        else:
            weights *= state[SCALE]
        accumulated[:] = 0.0
    state[SCALE] = 1.0
    state[SCALE_SUM] = 0.0
    state[PHASE_STEPS] = 0.0


@njit(cache=True, nogil=True)
def _learning_rate(state, alpha, t0):
    # Bottou's schedule for SGD on L2-regularised hinge losses
    return 1.0 / (alpha * (t0 + state[STEP]))


# ---------------------------------------------------------------------------
# multiclass: atomic parts, 0/1 cost


@njit(cache=True, nogil=True)
def _most_violating_class(scores, gold):
    best = -np.inf
    best_l = 0
    for l in range(scores.shape[0]):
        s = scores[l] + (0.0 if l == gold else 1.0)
        if s > best:
            best = s
            best_l = l
    return best_l, best - scores[gold]


@njit(cache=True, nogil=True)
def multiclass_weight_epoch(rows, y, order, A, iterates, alpha, t0):
    """One SGD pass over the examples in ``order`` for the weights, A fixed.

    ``rows`` holds the examples' feature vectors. Returns the sum of the
    hinge losses met on the way.
    """
    indptr, indices, data = rows
    V, U, _, _, state = iterates
    d, n_labels = A.shape
    label_rows = np.ascontiguousarray(A.T)
    z = np.empty(d)
    direction = np.empty(d)
    no_transitions = np.zeros((0, 0))
    total_loss = 0.0
    for i in order:
        _project_z(indptr, indices, data, i, V, state[SCALE], z)
        scores = label_rows @ z
        predicted, loss = _most_violating_class(scores, y[i])
        eta = _learning_rate(state, alpha, t0)
        scale_sum_before = state[SCALE_SUM]
        _shrink(state, eta, alpha, V, no_transitions)
        if loss > 0.0:
            total_loss += loss
            for k in range(d):
                direction[k] = A[k, y[i]] - A[k, predicted]
            _add_to_rows(indptr, indices, data, i, V, U, direction,
                         eta / state[SCALE], scale_sum_before)
        _end_step(state)
    return total_loss


@njit(cache=True, nogil=True)
def proximal_nuclear_step(A, threshold):
    """Soft-threshold the singular values of A, then give every column unit length.

    A column that the thresholding zeroes keeps its previous direction.
    """
    u, sigma, vt = np.linalg.svd(A, full_matrices=False)
    sigma = np.maximum(sigma - threshold, 0.0)
    shrunk = (u * sigma) @ vt
    for l in range(A.shape[1]):
        norm = np.sqrt(np.sum(shrunk[:, l] ** 2))
        if norm > 1e-12:
            A[:, l] = shrunk[:, l] / norm
        else:
            norm = np.sqrt(np.sum(A[:, l] ** 2))
            A[:, l] /= norm


@njit(cache=True, nogil=True)
def multiclass_label_epoch(Z, y, order, A, eta, nuclear_penalty):
    """One stochastic proximal pass over the label matrix A, weights fixed.

    ``Z[i] = W phi(x_i) + intercept`` is precomputed because W does not move;
    ``eta`` is the step size of the sub-gradient and of the proximal step.
    """
    # The proximal step runs after each sub-gradient step that moves A, with
    # the thresholds of the steps that did not move it added up (soft
    # thresholds compose), so examples with zero loss cost no SVD. The pass
    # returns the average of its iterates (columns renormalised), which is
    # far less noisy than the last one.
    total = np.zeros_like(A)
    grad = np.zeros_like(A)
    owed = 0  # steps whose threshold is not applied yet
    held = 0  # steps after which A had its current value
    for i in order:
        z = Z[i]
        scores = z @ A
        predicted, loss = _most_violating_class(scores, y[i])
        owed += 1
        if loss > 0.0:
            grad[:] = 0.0
            grad[:, predicted] = z
            grad[:, y[i]] = -z
            _label_step(A, grad, total, held, owed, eta, nuclear_penalty)
            owed = held = 0
        held += 1
    _finish_label_epoch(A, total, owed, held, eta * nuclear_penalty)


@njit(cache=True, nogil=True)
def _label_step(A, grad, total, held, owed, eta, nuclear_penalty):
    """Sub-gradient step on A, then the proximal thresholds owed so far.

    A's value before the step counts ``held`` times in the running total
    of iterates.
    """
    total += held * A
    A -= eta * grad
    proximal_nuclear_step(A, owed * eta * nuclear_penalty)


@njit(cache=True, nogil=True)
def _finish_label_epoch(A, total, owed, held, threshold):
    """Apply the owed thresholds, then replace A by the averaged iterate."""
    if owed > 0:
        proximal_nuclear_step(A, owed * threshold)
    total += held * A
    for l in range(A.shape[1]):
        norm = np.sqrt(np.sum(total[:, l] ** 2))
        if norm > 1e-12:
            A[:, l] = total[:, l] / norm


# ---------------------------------------------------------------------------
# first-order chains: atomic emissions, compositional transitions a^T T a'


@njit(cache=True, nogil=True)
def _sentence_emissions(indptr, indices, data, lo, hi, V, scale, A, Z, E):
    """Fill Z[:n] (token d-vectors) and E[:n] (token label scores) for tokens lo..hi."""
    d, n_labels = A.shape
    for t in range(hi - lo):
        _project_z(indptr, indices, data, lo + t, V, scale, Z[t])
        for l in range(n_labels):
            acc = 0.0
            for k in range(d):
                acc += A[k, l] * Z[t, k]
            E[t, l] = acc


@njit(cache=True, nogil=True)
def label_transition_scores(A, T):
    """The M x M chain transition matrix A^T T A."""
    return A.T @ (T @ A)


@njit(cache=True, nogil=True)
def sequence_weight_epoch(rows, offsets, y, order, A, iterates, alpha, t0, max_length):
    """One SGD pass over sentences for emission weights V and transitions T, A fixed.

    Token rows are packed by sentence (``offsets``) and ``y`` holds the gold
    label ids in the same packing. ``T`` is stored in the same scale as
    ``V``. Returns the sum of the structured hinge losses.
    """
    indptr, indices, data = rows
    V, U, T, UT, state = iterates
    d, n_labels = A.shape
    gram = A.T @ A
    # A^T T A in the unscaled storage, kept up to date incrementally
    transitions_v = label_transition_scores(A, T)
    transitions = np.empty((n_labels, n_labels))
    Z = np.empty((max_length, d))
    E = np.empty((max_length, n_labels))
    predicted = np.empty(max_length, dtype=np.int64)
    direction = np.empty(d)
    zeros = np.zeros(n_labels)
    total_loss = 0.0
    for s in order:
        lo, hi = offsets[s], offsets[s + 1]
        n = hi - lo
        gold = y[lo:hi]
        scale = state[SCALE]
        _sentence_emissions(indptr, indices, data, lo, hi, V, scale, A, Z, E)
        for i in range(n_labels):
            for j in range(n_labels):
                transitions[i, j] = scale * transitions_v[i, j]
        augmented = viterbi_into(E[:n], transitions, zeros, zeros, gold, 1.0, predicted[:n])
        gold_score = E[0, gold[0]]
        for t in range(1, n):
            gold_score += E[t, gold[t]] + transitions[gold[t - 1], gold[t]]
        loss = augmented - gold_score
        eta = _learning_rate(state, alpha, t0)
        scale_sum_before = state[SCALE_SUM]
        if _shrink(state, eta, alpha, V, T):
            transitions_v = label_transition_scores(A, T)
        if loss > 1e-12:
            total_loss += loss
            step = eta / state[SCALE]
            for t in range(n):
                if predicted[t] != gold[t]:
                    for k in range(d):
                        direction[k] = A[k, gold[t]] - A[k, predicted[t]]
                    _add_to_rows(indptr, indices, data, lo + t, V, U, direction,
                                 step, scale_sum_before)
            for t in range(1, n):
                p0, p1 = predicted[t - 1], predicted[t]
                g0, g1 = gold[t - 1], gold[t]
                if p0 == g0 and p1 == g1:
                    continue
                for a in range(d):
                    for b in range(d):
                        delta = step * (A[a, g0] * A[b, g1] - A[a, p0] * A[b, p1])
                        T[a, b] += delta
                        UT[a, b] += delta * scale_sum_before
                for i in range(n_labels):
                    for j in range(n_labels):
                        transitions_v[i, j] += step * (
                            gram[i, g0] * gram[g1, j] - gram[i, p0] * gram[p1, j]
                        )
        _end_step(state)
    return total_loss


@njit(cache=True, nogil=True)
def sequence_label_epoch(Z, offsets, y, order, A, T, eta, nuclear_penalty, max_length):
    """One stochastic proximal pass over A for the chain model, weights fixed.

    ``Z`` holds every token's d-vector ``W phi(x_t) + intercept``; ``T`` is
    the (unscaled) d x d transition matrix.
    """
    d, n_labels = A.shape
    E = np.empty((max_length, n_labels))
    predicted = np.empty(max_length, dtype=np.int64)
    grad = np.empty((d, n_labels))
    zeros = np.zeros(n_labels)
    total = np.zeros_like(A)
    owed = 0  # lazy thresholds and averaging as in multiclass_label_epoch
    held = 0
    for s in order:
        lo, hi = offsets[s], offsets[s + 1]
        n = hi - lo
        gold = y[lo:hi]
        Zs = Z[lo:hi]
        E[:n] = Zs @ A
        transitions = label_transition_scores(A, T)
        augmented = viterbi_into(E[:n], transitions, zeros, zeros, gold, 1.0, predicted[:n])
        gold_score = E[0, gold[0]]
        for t in range(1, n):
            gold_score += E[t, gold[t]] + transitions[gold[t - 1], gold[t]]
        owed += 1
        if augmented - gold_score > 1e-12:
            grad[:] = 0.0
            for t in range(n):
                if predicted[t] != gold[t]:
                    grad[:, predicted[t]] += Zs[t]
                    grad[:, gold[t]] -= Zs[t]
            # d(a_i^T T a_j)/da_i = T a_j and /da_j = T^T a_i
            TA = T @ A
            TtA = T.T @ A
            for t in range(1, n):
                p0, p1 = predicted[t - 1], predicted[t]
                g0, g1 = gold[t - 1], gold[t]
                if p0 == g0 and p1 == g1:
                    continue
                grad[:, p0] += TA[:, p1]
                grad[:, p1] += TtA[:, p0]
                grad[:, g0] -= TA[:, g1]
                grad[:, g1] -= TtA[:, g0]
            _label_step(A, grad, total, held, owed, eta, nuclear_penalty)
            owed = held = 0
        held += 1
    _finish_label_epoch(A, total, owed, held, eta * nuclear_penalty)


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
        gold = y[lo:hi]
        augmented = viterbi_into(E[lo:hi], transitions, zeros, zeros, gold, 1.0, predicted[lo:hi])
        gold_score = E[lo, gold[0]]
        for t in range(lo + 1, hi):
            gold_score += E[t, y[t]] + transitions[y[t - 1], y[t]]
        losses[s] = augmented - gold_score
    return losses
