"""Alternating minimisation shared by the multiclass and chain estimators.

Algorithm 1 of Srikumar & Manning (2014): start from random unit label
vectors A, fit the weights for that A, then for ``n_rounds`` rounds take a
pass of stochastic proximal steps on A (weights fixed) followed by a pass of
stochastic sub-gradient steps on the weights (A fixed). One-hot label
vectors skip the A phases, which leaves a plain structural SVM trained for
the same number of weight epochs.
"""

import time

import numpy as np

from . import _kernels


class Problem:
    """What the driver needs from a task (multiclass or chain).

    Subclasses hold the encoded training data and implement the three
    methods below; none of it is stored on the fitted estimator.
    """

    n_examples = 0
    n_features = 0
    mean_squared_norm = 1.0  # of an example's feature vector, intercept included
    has_transitions = False

    def weight_epoch(self, order, A, V, U, T, UT, state, alpha, t0):
        raise NotImplementedError

    def label_epoch(self, order, A, V, T, eta, nuclear_penalty):
        raise NotImplementedError

    def mean_hinge_loss(self, A, V, T):
        raise NotImplementedError


def objective(problem, A, V, T, alpha, nuclear_penalty):
    """lambda_1/2 ||w||^2 + lambda_2 ||A||_* + mean structured hinge loss (eq. 5)."""
    nuclear = np.linalg.svd(A, compute_uv=False).sum()
    squared = np.sum(V**2) + np.sum(T**2)
    return 0.5 * alpha * squared + nuclear_penalty * nuclear + problem.mean_hinge_loss(A, V, T)


def random_label_vectors(n_components, n_labels, rng):
    A = rng.standard_normal((n_components, n_labels))
    return A / np.linalg.norm(A, axis=0, keepdims=True)


def fit_alternating(problem, n_labels, *, n_components, learned, init_onehot, alpha,
                    nuclear_penalty, label_learning_rate, n_rounds, n_epochs, n_init, rng,
                    verbose, name):
    """Run ``n_init`` initialisations and keep the one with the lowest objective.

    Returns ``(A, V, T, objective_curve)`` where V is (n_features+1, d) with
    the intercept in its last row and the curve has the objective after every
    phase of the kept run.
    """
    # Step eta_t = eta0 / (1 + eta0 alpha t): eta0 is the step after which one
    # sub-gradient step moves a violated margin by about one unit
    eta0 = 1.0 / (2.0 * problem.mean_squared_norm)
    t0 = 1.0 / (alpha * eta0)
    best = None
    for init in range(n_init):
        if init_onehot:
            A = np.eye(n_labels)
        else:
            A = random_label_vectors(n_components, n_labels, rng)
        d = A.shape[0]
        V = np.zeros((problem.n_features + 1, d))
        U = np.zeros_like(V)
        size = d if problem.has_transitions else 0
        T = np.zeros((size, size))
        UT = np.zeros_like(T)
        state = np.array([1.0, 0.0, 0.0, 0.0])
        curve = []
        label_epochs_done = 0
        start = time.perf_counter()

        def report(phase, epoch, loss):
            if verbose:
                print(f"[{name}] init {init + 1}/{n_init} {phase} epoch {epoch}: "
                      f"mean hinge loss during epoch {loss:.4f}, "
                      f"{time.perf_counter() - start:.1f} s")

        def end_phase(phase):
            value = objective(problem, A, V, T, alpha, nuclear_penalty)
            curve.append(value)
            if verbose:
                print(f"[{name}] init {init + 1}/{n_init} after {phase}: "
                      f"training objective {value:.5f}")

        for round_ in range(n_rounds + 1):
            if round_ > 0 and learned:
                # keep the best A met in the phase, so the phase never
                # raises the objective it is minimising
                best_A, best_value = A.copy(), curve[-1]
                for epoch in range(n_epochs):
                    rate = label_learning_rate / np.sqrt(1.0 + label_epochs_done)
                    order = rng.permutation(problem.n_examples)
                    problem.label_epoch(order, A, V, T, rate, nuclear_penalty)
                    label_epochs_done += 1
                    value = objective(problem, A, V, T, alpha, nuclear_penalty)
                    if value < best_value:
                        best_A, best_value = A.copy(), value
                    if verbose > 1:
                        print(f"[{name}] init {init + 1}/{n_init} round {round_} labels "
                              f"epoch {epoch + 1}: training objective {value:.5f}")
                A[:] = best_A
                end_phase(f"round {round_} label vectors")
            for epoch in range(n_epochs):
                order = rng.permutation(problem.n_examples)
                loss = problem.weight_epoch(order, A, V, U, T, UT, state, alpha, t0)
                report(f"round {round_} weights", epoch + 1, loss / problem.n_examples)
            _kernels.average_iterates(V, U, T, UT, state)
            end_phase(f"round {round_} weights")
        if best is None or curve[-1] < best[3][-1]:
            best = (A, V, T, curve)
    return best
