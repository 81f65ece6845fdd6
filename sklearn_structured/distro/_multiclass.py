"""DistroSVM: a multiclass structural SVM with learned label vectors."""

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils import split_validation
from ..utils._base import FormatVersionMixin
from ..utils._compat import _fit_context
from . import _kernels, _multiclass_kernels
from ._alternating import DistroParameters, Problem, class_ids, fit_label_model, objective


class _MulticlassProblem(Problem):
    def __init__(self, X, y):
        self.X, self.y = X, y
        self.n_examples, self.n_features = X.shape
        self.mean_squared_norm = 1.0 + X.multiply(X).sum() / max(X.shape[0], 1)

    def weight_epoch(self, order, A, iterates, alpha, t0):
        return _multiclass_kernels.multiclass_weight_epoch(_kernels.sparse_rows(self.X), self.y,
                                                           order, A, iterates, alpha, t0)

    def projections(self, V):
        return safe_sparse_dot(self.X, V[:-1]) + V[-1]

    def label_epoch(self, order, A, V, T, rate, nuclear_penalty):
        Z = self.projections(V)
        eta = rate / max(np.mean(np.sum(Z**2, axis=1)), 1e-12)
        _multiclass_kernels.multiclass_label_epoch(Z, self.y, order, A, eta, nuclear_penalty)

    def mean_hinge_loss(self, A, V, T):
        scores = self.projections(V) @ A
        rows = np.arange(self.n_examples)
        gold = scores[rows, self.y]
        scores += 1.0
        scores[rows, self.y] -= 1.0
        return float(np.mean(scores.max(axis=1) - gold))


def _class_scores(X, coef, intercept, label_vectors):
    """(n_samples, n_classes) scores of the model (coef, intercept, label_vectors)."""
    return (safe_sparse_dot(X, coef.T) + intercept) @ label_vectors


class DistroSVM(DistroParameters, FormatVersionMixin, ClassifierMixin, BaseEstimator):
    """Multiclass structural SVM with learned label vectors (DISTRO).

    Every class ``l`` has a unit vector ``a_l`` in R^d (a column of the
    label matrix ``A``); an input with features ``phi(x)`` gives class ``l``
    the score ``a_l^T (W phi(x) + b)`` with ``W`` a d x n_features weight
    matrix. Training minimises

        alpha/2 ||W||^2 + nuclear_penalty ||A||_* + mean_i max_l (score_l + [l != y_i] - score_{y_i})

    by alternating minimisation (Srikumar & Manning, 2014, Algorithm 1):
    averaged stochastic sub-gradient descent on ``W`` with ``A`` fixed, and
    stochastic proximal steps on ``A`` with ``W`` fixed (singular values
    soft-thresholded, columns renormalised). With ``label_vectors="onehot"``
    (``A`` the identity) this is the Crammer-Singer structural SVM baseline.

    Parameters
    ----------
    n_components : int or None, default=None
        Dimension d of the label vectors; None means the number of classes.
        Ignored when ``label_vectors="onehot"`` (one-hot vectors have d = M).
    label_vectors : {"learned", "onehot"}, default="learned"
        Learn ``A`` or keep it the identity (the structural SVM baseline).
    alpha : float, default=1e-4
        L2 penalty lambda_1 on the weights.
    nuclear_penalty : float, default=1e-3
        Nuclear-norm penalty lambda_2 on the label matrix.
    label_learning_rate : float, default=0.05
        Step size of the label-vector passes, in units of the mean squared
        norm of ``W phi(x) + b`` (so roughly the change of a margin per
        step), divided by sqrt(1 + k) on the k-th pass.
    init : {"random", "onehot"}, default="random"
        Start the learned label vectors from random unit vectors (the
        paper's Algorithm 1) or from the identity (the paper's analysis
        experiment; needs ``n_components`` equal to the number of classes).
    n_rounds : int, default=5
        Rounds of (label-vector pass, weight pass) after the first weight pass.
    n_epochs : int, default=5
        Epochs in every pass.
    n_init : int, default=1
        Random initialisations of ``A``; the one with the lowest training
        objective is kept.
    n_iter_no_change : int or None, default=None
        With validation data (``X_val``, ``y_val`` or ``validation_fraction``):
        keep the model of the weight epoch with the best validation accuracy
        (its averaged weights, bias and label vectors) and stop after this
        many weight epochs without a better one; with ``n_init > 1``, each
        initialisation keeps its best. None trains every epoch.
    validation_fraction : float or None, default=None
        Hold out this fraction of the training samples (drawn with
        ``random_state``) as validation data.
    random_state : int, RandomState instance or None, default=None
    verbose : int, default=0
        1 prints a progress line per weight epoch on standard error (seconds,
        mean hinge loss during the epoch, the validation accuracy when there
        is validation data, and the training objective after a pass or a
        label-vector pass); 2 adds a line per label-vector epoch (its loss is
        the training objective), which is not a record of ``history_``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    label_vectors_ : ndarray of shape (n_components, n_classes)
        The unit label vectors ``A``.
    coef_ : ndarray of shape (n_components, n_features)
        ``W``; class scores are ``(X @ coef_.T + intercept_) @ label_vectors_``.
    intercept_ : ndarray of shape (n_components,)
    objective_ : float
        Training objective of the fitted model (the lowest over the
        initialisations).
    history_ : list of dict
        One record per weight epoch (see the user guide): ``epoch``,
        ``label``, ``loss`` (the mean hinge loss met during the epoch),
        ``seconds``, ``elapsed``, ``validation_score`` (accuracy, or None),
        and on the last epoch of a pass ``objective``, the training objective
        after it (on the first epoch of a round, ``label_objective``, after
        the label-vector pass). With ``n_init > 1`` it holds the records of
        every initialisation in the order they ran, their labels starting
        with ``init k/n``; the kept one is that with the lowest objective.
    n_features_in_ : int

    References
    ----------
    V. Srikumar and C. D. Manning. Learning Distributed Representations for
    Structured Output Prediction. NeurIPS 2014.
    """

    def __init__(self, n_components=None, *, label_vectors="learned", alpha=1e-4,
                 nuclear_penalty=1e-3, label_learning_rate=0.05, init="random", n_rounds=5,
                 n_epochs=5, n_init=1, n_iter_no_change=None, validation_fraction=None,
                 random_state=None, verbose=0):
        super().__init__(n_components, label_vectors, alpha, nuclear_penalty, label_learning_rate,
                         init, n_rounds, n_epochs, n_init, n_iter_no_change, validation_fraction,
                         random_state, verbose)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, X_val=None, y_val=None):
        """Learn the weights and the label vectors from ``X`` and class labels ``y``.

        ``X_val`` and ``y_val`` (keyword only) are validation data: scored
        (accuracy) after every weight epoch, for the progress line, the
        ``history_`` and, with ``n_iter_no_change``, keep-best.
        """
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, order="C")
        check_classification_targets(y)
        rng = check_random_state(self.random_state)
        X, y, validation = split_validation(self, X, y, X_val, y_val, rng=rng)
        self.classes_, y_ids = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"DistroSVM needs samples of at least 2 classes; got 1 class ({self.classes_[0]!r})"
            )
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sort_indices()
        problem = _MulticlassProblem(X, y_ids.astype(np.int64))
        scorer = None if validation is None else self._validation_scorer(*validation)
        fit_label_model(self, problem, len(self.classes_), rng, scorer)
        return self

    def _validation_scorer(self, X_val, y_val):
        """``score(A, V, T)``: the accuracy on the validation data of the model (A, V)."""
        X_val = validate_data(self, X_val, accept_sparse="csr", dtype=np.float64, reset=False)
        y_val = np.asarray(y_val)

        def score(A, V, T):
            scores = _class_scores(X_val, np.ascontiguousarray(V[:-1].T), V[-1], A)
            return float(np.mean(self.classes_[np.argmax(scores, axis=1)] == y_val))

        return score

    def _class_scores(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return _class_scores(X, self.coef_, self.intercept_, self.label_vectors_)

    def decision_function(self, X):
        """Class scores, (n_samples, n_classes); for two classes the score of the second minus the first."""
        scores = self._class_scores(X)
        if scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X):
        """The highest-scoring class of every sample."""
        scores = self._class_scores(X)
        return self.classes_[np.argmax(scores, axis=1)]

    def objective(self, X, y):
        """The training objective of the fitted weights on ``(X, y)``.

        ``alpha / 2 (||W||^2 + ||b||^2) + nuclear_penalty ||A||_* +`` the mean
        structured hinge loss (eq. 5 of the paper), with this model's
        ``alpha`` and ``nuclear_penalty``: on the training data, what
        ``objective_`` holds. Weights set from another solver (``coef_``,
        ``intercept_`` of a one-hot model) are scored on the same scale.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels among ``classes_``.

        Returns
        -------
        value : float
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sort_indices()
        problem = _MulticlassProblem(X, class_ids(self.classes_, y))
        V = np.vstack([self.coef_.T, self.intercept_])
        return objective(problem, self.label_vectors_, V, np.zeros((0, 0)), self.alpha,
                         self.nuclear_penalty)


def label_similarity(label_vectors):
    """Cosine similarities between label vectors.

    Takes a fitted DISTRO estimator (its ``label_vectors_``) or a d x M array
    and returns the M x M matrix whose entry (i, j) is the cosine of the
    angle between the vectors of labels i and j.
    """
    A = getattr(label_vectors, "label_vectors_", label_vectors)
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2:
        raise ValueError(f"label vectors must be a d x M array, got shape {A.shape}")
    norms = np.linalg.norm(A, axis=0)
    norms[norms == 0] = 1.0
    unit = A / norms
    return unit.T @ unit
