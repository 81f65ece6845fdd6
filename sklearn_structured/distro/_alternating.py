"""Alternating minimisation shared by the multiclass and chain estimators, and their
common parameters.

Algorithm 1 of Srikumar & Manning (2014): start from random unit label
vectors A, fit the weights for that A, then for ``n_rounds`` rounds take a
pass of stochastic proximal steps on A (weights fixed) followed by a pass of
stochastic sub-gradient steps on the weights (A fixed). One-hot label
vectors skip the A phases, which leaves a plain structural SVM trained for
the same number of weight epochs. The shared epoch loop runs the weight
epochs (one ``history_`` record and progress line each, validation and
keep-best); the label-vector passes run inside them.
"""

from numbers import Integral, Real

import numpy as np

from ..utils import EARLY_STOPPING_CONSTRAINTS, EpochResult, EpochTrainer
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


def class_ids(classes, labels):
    """The index in ``classes`` of every one of ``labels``; ValueError for another label."""
    index = {label: i for i, label in enumerate(classes.tolist())}
    try:
        return np.array([index[label] for label in np.asarray(labels).tolist()], np.int64)
    except KeyError as exc:
        raise ValueError(f"label {exc.args[0]!r} is not among classes_") from None


def random_label_vectors(n_components, n_labels, rng):
    A = rng.standard_normal((n_components, n_labels))
    return A / np.linalg.norm(A, axis=0, keepdims=True)


def _averaged(iterates):
    """The weights (V, T) the phase would end with now: its iterates averaged, on copies."""
    averaged = _kernels.Iterates(*(a.copy() for a in iterates))
    _kernels.average_iterates(averaged)
    return averaged.V, averaged.T


class _LabelEpochs(EpochTrainer):
    """Stochastic proximal passes on the label vectors A, weights fixed.

    Remembers the A with the lowest training objective met since the start
    of the phase (``best_A``); the loss of an epoch is that objective. Run
    inside a weight epoch of :class:`_AlternatingEpochs`, so its epochs are
    not records of ``history_``; at ``verbose >= 2`` each prints a line.
    """

    def __init__(self, problem, A, iterates, label, rng, alpha, nuclear_penalty,
                 label_learning_rate, epochs_done, start_value):
        self.problem, self.A, self.iterates, self.label = problem, A, iterates, label
        self.rng, self.alpha, self.nuclear_penalty = rng, alpha, nuclear_penalty
        self.label_learning_rate, self.epochs_done = label_learning_rate, epochs_done
        self.best_A, self.best_value = A.copy(), start_value
        self.epoch = 0

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

    def validation_score(self, score):
        return score(self.A.copy(), *_averaged(self.iterates))


class _AlternatingEpochs(EpochTrainer):
    """Algorithm 1 from one initialisation of A, one weight epoch per loop epoch.

    There are ``n_rounds + 1`` weight passes of ``n_epochs`` epochs each.
    With learned label vectors, the first weight epoch of every round after
    the first starts with that round's label-vector pass (its objective is
    the record's ``label objective``, its time part of the epoch's). The last
    epoch of a pass averages the pass's iterates and records the training
    objective (``objective``). ``A`` and ``iterates``
    (:class:`~._kernels.Iterates`) are updated in place.

    The validation score is that of the model as it would be if the pass
    ended now: the weight iterates averaged so far with the current A; that
    model is also what keep-best restores.
    """

    def __init__(self, problem, A, iterates, *, learned, alpha, t0, nuclear_penalty,
                 label_learning_rate, n_epochs, rng, prefix, name, verbose, validation):
        self.problem, self.A, self.iterates = problem, A, iterates
        self.learned, self.alpha, self.t0 = learned, alpha, t0
        self.nuclear_penalty, self.label_learning_rate = nuclear_penalty, label_learning_rate
        self.n_epochs, self.rng, self.prefix = n_epochs, rng, prefix
        self.name, self.verbose, self.validation = name, verbose, validation
        self.epoch = 0
        self.label_epochs_done = 0
        self.value = None  # the training objective after the last pass
        self.scored = None  # the model the last validation score was computed on

    def _objective(self):
        return objective(self.problem, self.A, self.iterates.V, self.iterates.T, self.alpha,
                         self.nuclear_penalty)

    def _label_pass(self, round_):
        # keep the best A met in the pass, so that it never raises the
        # objective it minimises
        labels = _LabelEpochs(self.problem, self.A, self.iterates,
                              f"{self.prefix}round {round_} labels", self.rng, self.alpha,
                              self.nuclear_penalty, self.label_learning_rate,
                              self.label_epochs_done, self.value)
        loud = self.verbose > 1
        labels.run(self.n_epochs, name=self.name, verbose=self.verbose if loud else 0,
                   validation=self.validation if loud else None)
        self.label_epochs_done = labels.epochs_done
        self.A[:] = labels.best_A
        self.value = self._objective()
        return self.value

    def train_epoch(self):
        round_, epoch = divmod(self.epoch, self.n_epochs)
        fields = []
        if epoch == 0 and round_ > 0 and self.learned:
            fields.append(("label objective", self._label_pass(round_)))
        self.epoch += 1
        problem = self.problem
        order = self.rng.permutation(problem.n_examples)
        loss = problem.weight_epoch(order, self.A, self.iterates, self.alpha, self.t0)
        if epoch + 1 == self.n_epochs:
            _kernels.average_iterates(self.iterates)
            self.value = self._objective()
            fields.append(("objective", self.value))
        return EpochResult(f"{self.prefix}round {round_} weights epoch {epoch + 1}",
                           loss / problem.n_examples, tuple(fields))

    def validation_score(self, score):
        self.scored = (self.A.copy(), *_averaged(self.iterates))
        return score(*self.scored)

    def snapshot(self):
        return self.scored

    def restore(self, snapshot):
        A, V, T = snapshot
        self.A[:], self.iterates.V[:], self.iterates.T[:] = A, V, T
        self.value = self._objective()


def fit_alternating(problem, n_labels, *, n_components, learned, init_onehot, alpha,
                    nuclear_penalty, label_learning_rate, n_rounds, n_epochs, n_init, rng,
                    verbose, name, history, validation=None, patience=None):
    """Run ``n_init`` initialisations and keep the one with the lowest objective.

    Returns ``(A, V, T, value)`` where V is (n_features+1, d) with the
    intercept in its last row and ``value`` is the training objective of
    the kept model. The weight epochs of every initialisation, in turn, go
    through the shared epoch loop and are appended to ``history``.
    ``validation``, a function ``score(A, V, T)`` of the averaged model, is
    scored after every weight epoch; with ``patience`` each initialisation
    keeps its best-scoring model and stops early.
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
        size = d if problem.has_transitions else 0
        T = np.zeros((size, size))
        iterates = _kernels.Iterates(V, np.zeros_like(V), T, np.zeros_like(T),
                                     np.array([1.0, 0.0, 0.0, 0.0]))
        trainer = _AlternatingEpochs(
            problem, A, iterates, learned=learned, alpha=alpha, t0=t0,
            nuclear_penalty=nuclear_penalty, label_learning_rate=label_learning_rate,
            n_epochs=n_epochs, rng=rng, prefix=f"init {init + 1}/{n_init} " if n_init > 1 else "",
            name=name, verbose=verbose, validation=validation)
        trainer.history = history
        trainer.run((n_rounds + 1) * n_epochs, name=name, verbose=verbose,
                    validation=validation, patience=patience)
        if best is None or trainer.value < best[3]:
            best = (A, V, T, trainer.value)
    return best


class DistroParameters:
    """The parameters both DISTRO estimators take, their constraints and their storing.

    Each estimator still names every parameter in its own ``__init__``
    signature, which is what ``get_params`` reads, and hands these on in
    this order.
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "label_vectors": [StrOptions({"learned", "onehot"})],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "nuclear_penalty": [Interval(Real, 0, None, closed="left")],
        "label_learning_rate": [Interval(Real, 0, None, closed="neither")],
        "init": [StrOptions({"random", "onehot"})],
        "n_rounds": [Interval(Integral, 0, None, closed="left")],
        "n_epochs": [Interval(Integral, 1, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        **EARLY_STOPPING_CONSTRAINTS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, n_components, label_vectors, alpha, nuclear_penalty, label_learning_rate,
                 init, n_rounds, n_epochs, n_init, n_iter_no_change, validation_fraction,
                 random_state, verbose):
        self.n_components = n_components
        self.label_vectors = label_vectors
        self.alpha = alpha
        self.nuclear_penalty = nuclear_penalty
        self.label_learning_rate = label_learning_rate
        self.init = init
        self.n_rounds = n_rounds
        self.n_epochs = n_epochs
        self.n_init = n_init
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.verbose = verbose


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


def fit_label_model(estimator, problem, n_labels, rng, validation=None):
    """Run Algorithm 1 with ``estimator``'s parameters and store the fitted attributes.

    ``rng`` is the generator of the ``fit`` call (``estimator.random_state``'s).
    Sets ``label_vectors_``, ``coef_``, ``intercept_``, ``objective_`` and
    ``history_``; returns the transition matrix (unused by atomic problems).
    ``validation`` is an optional ``score(A, V, T)`` of the validation data.
    """
    estimator.history_ = []
    A, V, T, value = fit_alternating(
        problem, n_labels, n_components=_resolve_n_components(estimator, n_labels),
        learned=estimator.label_vectors == "learned",
        init_onehot=estimator.label_vectors == "onehot" or estimator.init == "onehot",
        alpha=estimator.alpha, nuclear_penalty=estimator.nuclear_penalty,
        label_learning_rate=estimator.label_learning_rate, n_rounds=estimator.n_rounds,
        n_epochs=estimator.n_epochs, n_init=estimator.n_init,
        rng=rng, verbose=estimator.verbose,
        name=type(estimator).__name__, history=estimator.history_, validation=validation,
        patience=estimator.n_iter_no_change,
    )
    estimator.label_vectors_ = A
    estimator.coef_ = np.ascontiguousarray(V[:-1].T)
    estimator.intercept_ = V[-1].copy()
    estimator.objective_ = value
    return T
