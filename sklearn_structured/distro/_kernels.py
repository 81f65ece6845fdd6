"""The weight storage and the steps both DISTRO estimators' numba loops share.

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

The label-vector passes share the proximal step on A and its lazy
averaging. The loops of each estimator are in ``_multiclass_kernels.py``
(atomic labels) and ``_sequence_kernels.py`` (first-order chains).
"""

from typing import NamedTuple

import numpy as np
from numba import njit

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


def sparse_rows(X):
    """The :class:`SparseRows` of a CSR matrix."""
    return SparseRows(X.indptr, X.indices, X.data)


@njit(cache=True, nogil=True)
def shrink(state, eta, alpha, V, T):
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
def project_z(indptr, indices, data, row, V, scale, z):
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
def add_to_rows(indptr, indices, data, row, V, U, direction, step, scale_sum_before):
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
def end_step(state):
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
def begin_step(state, alpha, t0, V, T):
    """Start a weight step: its step size (Bottou's schedule for SGD on
    L2-regularised hinge losses), the scale sum before it, and whether its
    L2 shrinkage folded the scale into V and T (see :func:`shrink`)."""
    eta = 1.0 / (alpha * (t0 + state[STEP]))
    scale_sum_before = state[SCALE_SUM]
    return eta, scale_sum_before, shrink(state, eta, alpha, V, T)


@njit(cache=True, nogil=True)
def proximal_nuclear_step(A, threshold):
    """Soft-threshold the singular values of A, then give every column unit length.

    A column that the thresholding zeroes keeps its previous direction.
    """
    if threshold <= 0.0:  # nothing to shrink: renormalising is all that is left
        for l in range(A.shape[1]):
            A[:, l] /= np.sqrt(np.sum(A[:, l] ** 2))
        return
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


# A label-vector pass runs the proximal step after each sub-gradient step that
# moves A, with the thresholds of the steps that did not move it added up (soft
# thresholds compose), so examples with zero loss cost no SVD. The pass ends
# with the average of its iterates (columns renormalised), which is far less
# noisy than the last one. The passes count ``owed`` steps whose threshold is
# not applied yet and ``held`` steps after which A had its current value.


@njit(cache=True, nogil=True)
def label_step(A, grad, total, held, owed, eta, nuclear_penalty):
    """Sub-gradient step on A, then the proximal thresholds owed so far.

    A's value before the step counts ``held`` times in the running total
    of iterates.
    """
    total += held * A
    A -= eta * grad
    proximal_nuclear_step(A, owed * eta * nuclear_penalty)


@njit(cache=True, nogil=True)
def finish_label_epoch(A, total, owed, held, threshold):
    """Apply the owed thresholds, then replace A by the averaged iterate."""
    if owed > 0:
        proximal_nuclear_step(A, owed * threshold)
    total += held * A
    for l in range(A.shape[1]):
        norm = np.sqrt(np.sum(total[:, l] ** 2))
        if norm > 1e-12:
            A[:, l] = total[:, l] / norm
