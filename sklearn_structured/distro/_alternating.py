"""Alternating minimisation shared by the multiclass and chain estimators, and their
common parameters.

Algorithm 1 of Srikumar & Manning (2014): start from random unit label
vectors A, fit the weights for that A, then for ``n_rounds`` rounds take a
pass of stochastic proximal steps on A (weights fixed) followed by a pass of
stochastic sub-gradient steps on the weights (A fixed). One-hot label
vectors skip the A phases, which leaves a plain structural SVM trained for
the same number of weight epochs.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from ..utils import EpochResult, EpochTrainer
from ..utils._compat import Interval, StrOptions
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

    def weight_epoch(self, order, A, iterates, alpha, t0):
        """One pass on the weights (a :class:`~._kernels.Iterates`, in place); summed loss."""
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


class _PhaseEpochs(EpochTrainer):
    """The epochs of one phase of one initialisation, run by the shared epoch loop.

    ``A`` and ``iterates`` (:class:`~._kernels.Iterates`) are updated in
    place. The validation score is that of the model as it would be if the
    phase ended now: the weight iterates averaged so far (on copies) with the
    current A.
    """

    def __init__(self, problem, A, iterates, label):
        self.problem, self.A, self.iterates, self.label = problem, A, iterates, label
        self.epoch = 0

    def validation_score(self, score):
        averaged = _kernels.Iterates(*(a.copy() for a in self.iterates))
        _kernels.average_iterates(averaged)
        return score(self.A.copy(), averaged.V, averaged.T)


class _WeightEpochs(_PhaseEpochs):
    """Averaged stochastic sub-gradient passes on the weights (W, b, T), A fixed."""

    def __init__(self, problem, A, iterates, label, rng, alpha, t0):
        super().__init__(problem, A, iterates, label)
        self.rng, self.alpha, self.t0 = rng, alpha, t0

    def train_epoch(self):
        self.epoch += 1
        order = self.rng.permutation(self.problem.n_examples)
        loss = self.problem.weight_epoch(order, self.A, self.iterates, self.alpha, self.t0)
        return EpochResult(f"{self.label} epoch {self.epoch}", loss / self.problem.n_examples)


class _LabelEpochs(_PhaseEpochs):
    """Stochastic proximal passes on the label vectors A, weights fixed.

    Remembers the A with the lowest training objective met since the start
    of the phase (``best_A``); the loss of an epoch is that objective.
    """

    def __init__(self, problem, A, iterates, label, rng, alpha, nuclear_penalty,
                 label_learning_rate, epochs_done, start_value):
        super().__init__(problem, A, iterates, label)
        self.rng, self.alpha, self.nuclear_penalty = rng, alpha, nuclear_penalty
        self.label_learning_rate, self.epochs_done = label_learning_rate, epochs_done
        self.best_A, self.best_value = A.copy(), start_value

    def train_epoch(self):
        A, V, T = self.A, self.iterates.V, self.iterates.T
        self.epoch += 1
        rate = self.label_learning_rate / np.sqrt(1.0 + self.epochs_done)
        order = self.rng.permutation(self.problem.n_examples)
        self.problem.label_epoch(order, A, V, T, rate, self.nuclear_penalty)
        self.epochs_done += 1
        value = objective(self.problem, A, V, T, self.alpha, self.nuclear_penalty)
        if value < self.best_value:
            self.best_A, self.best_value = A.copy(), value
        return EpochResult(f"{self.label} epoch {self.epoch}", value)


def fit_alternating(problem, n_labels, *, n_components, learned, init_onehot, alpha,
                    nuclear_penalty, label_learning_rate, n_rounds, n_epochs, n_init, rng,
                    verbose, name, validation=None):
    """Run ``n_init`` initialisations and keep the one with the lowest objective.

    Returns ``(A, V, T, objective_curve)`` where V is (n_features+1, d) with
    the intercept in its last row and the curve has the objective after every
    phase of the kept run. Every epoch goes through the shared epoch loop:
    ``verbose`` prints a progress line per weight epoch (and, above 1, per
    label epoch) and the objective after every phase. ``validation``, a
    function ``score(A, V, T)`` of the averaged model, is scored for the
    progress lines only.
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
        iterates = _kernels.Iterates(V, U, T, UT, np.array([1.0, 0.0, 0.0, 0.0]))
        curve = []
        label_epochs_done = 0
        prefix = f"init {init + 1}/{n_init}"

        def end_phase(phase):
            value = objective(problem, A, V, T, alpha, nuclear_penalty)
            curve.append(value)
            if verbose:
                print(f"[{name}] {prefix} after {phase}: training objective {value:.5f}",
                      flush=True)

        for round_ in range(n_rounds + 1):
            if round_ > 0 and learned:
                # keep the best A met in the phase, so the phase never
                # raises the objective it is minimising
                labels = _LabelEpochs(problem, A, iterates, f"{prefix} round {round_} labels",
                                      rng, alpha, nuclear_penalty, label_learning_rate,
                                      label_epochs_done, curve[-1])
                labels.run(n_epochs, name=name, verbose=verbose if verbose > 1 else 0,
                           validation=validation)
                label_epochs_done = labels.epochs_done
                A[:] = labels.best_A
                end_phase(f"round {round_} label vectors")
            _WeightEpochs(problem, A, iterates, f"{prefix} round {round_} weights", rng, alpha,
                          t0).run(n_epochs, name=name, verbose=verbose, validation=validation)
            _kernels.average_iterates(iterates)
            end_phase(f"round {round_} weights")
        if best is None or curve[-1] < best[3][-1]:
            best = (A, V, T, curve)
    return best


DISTRO_PARAMETER_CONSTRAINTS = {
    "n_components": [Interval(Integral, 1, None, closed="left"), None],
    "label_vectors": [StrOptions({"learned", "onehot"})],
    "alpha": [Interval(Real, 0, None, closed="neither")],
    "nuclear_penalty": [Interval(Real, 0, None, closed="left")],
    "label_learning_rate": [Interval(Real, 0, None, closed="neither")],
    "init": [StrOptions({"random", "onehot"})],
    "n_rounds": [Interval(Integral, 0, None, closed="left")],
    "n_epochs": [Interval(Integral, 1, None, closed="left")],
    "n_init": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
}


def _resolve_n_components(estimator, n_labels):
    """d: the number of labels for one-hot vectors or when None, else n_components."""
    n_components = estimator.n_components
    if estimator.label_vectors == "onehot" or n_components is None:
        return n_labels
    if estimator.init == "onehot" and n_components != n_labels:
        raise ValueError(
            f"init='onehot' needs n_components=None or {n_labels} "
            f"(the number of labels), got {n_components}"
        )
    return n_components


def fit_label_model(estimator, problem, n_labels, validation=None):
    """Run Algorithm 1 with ``estimator``'s parameters and store the fitted attributes.

    Sets ``label_vectors_``, ``coef_``, ``intercept_`` and ``objective_curve_``;
    returns the transition matrix (unused by atomic problems). ``validation``
    is an optional ``score(A, V, T)`` for the progress lines.
    """
    A, V, T, curve = fit_alternating(
        problem, n_labels, n_components=_resolve_n_components(estimator, n_labels),
        learned=estimator.label_vectors == "learned",
        init_onehot=estimator.label_vectors == "onehot" or estimator.init == "onehot",
        alpha=estimator.alpha, nuclear_penalty=estimator.nuclear_penalty,
        label_learning_rate=estimator.label_learning_rate, n_rounds=estimator.n_rounds,
        n_epochs=estimator.n_epochs, n_init=estimator.n_init,
        rng=check_random_state(estimator.random_state), verbose=estimator.verbose,
        name=type(estimator).__name__, validation=validation,
    )
    estimator.label_vectors_ = A
    estimator.coef_ = np.ascontiguousarray(V[:-1].T)
    estimator.intercept_ = V[-1].copy()
    estimator.objective_curve_ = curve
    return T
