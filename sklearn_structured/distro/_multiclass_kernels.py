"""Numba loops of DistroSVM: atomic labels, 0/1 cost (Srikumar & Manning, 2014, Algorithm 1).

The weight storage and the steps shared with the chain model are in ``_kernels.py``.
"""

import numpy as np
from numba import njit

from ._kernels import (
    SCALE,
    add_to_rows,
    begin_step,
    end_step,
    finish_label_epoch,
    label_step,
    project_z,
)


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
        project_z(indptr, indices, data, i, V, state[SCALE], z)
        scores = label_rows @ z
        predicted, loss = _most_violating_class(scores, y[i])
        eta, scale_sum_before, _ = begin_step(state, alpha, t0, V, no_transitions)
        if loss > 0.0:
            total_loss += loss
            for k in range(d):
                direction[k] = A[k, y[i]] - A[k, predicted]
            add_to_rows(indptr, indices, data, i, V, U, direction,
                        eta / state[SCALE], scale_sum_before)
        end_step(state)
    return total_loss


@njit(cache=True, nogil=True)
def multiclass_label_epoch(Z, y, order, A, eta, nuclear_penalty):
    """One stochastic proximal pass over the label matrix A, weights fixed.

    ``Z[i] = W phi(x_i) + intercept`` is precomputed because W does not move;
    ``eta`` is the step size of the sub-gradient and of the proximal step.
    """
    # lazy thresholds and averaging: see label_step
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
            label_step(A, grad, total, held, owed, eta, nuclear_penalty)
            owed = held = 0
        held += 1
    finish_label_epoch(A, total, owed, held, eta * nuclear_penalty)
