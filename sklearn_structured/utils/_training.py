"""The epoch loop shared by the iterative estimators, and their progress line.

Every estimator that learns in passes over its training data (the low-rank
parser, the easy-first parser and tagger, the spectral model's EM, the weight
and label passes of DISTRO, the rank-space grammars) runs them through
:meth:`EpochTrainer.run`. The loop owns what is the same everywhere: the
epochs, their timing, scoring the validation data, the progress line, the
``history_`` record of every epoch, and keep-best with early stopping
(``n_iter_no_change`` epochs without a better validation score). A subclass of
:class:`EpochTrainer` holds one training run's data and optimiser state and
owns what an epoch computes; the estimator's ``fit`` builds one and calls
``run``.

The estimators take their validation data one way: ``fit(X, y, *, X_val=None,
y_val=None)``, or a ``validation_fraction`` of the training data held out by
:func:`split_validation`. Their ``n_iter_no_change`` and
``validation_fraction`` parameters are validated by
:data:`EARLY_STOPPING_CONSTRAINTS`.
"""

import contextvars
import sys
import time
from abc import ABC, abstractmethod
from contextlib import contextmanager
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np

from ._compat import Interval, _safe_indexing

EARLY_STOPPING_CONSTRAINTS = {
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left"), None],
    "validation_fraction": [Interval(Real, 0, 1, closed="neither"), None],
}
"""The parameter constraints of the early-stopping contract, merged into each
iterative estimator's ``_parameter_constraints``."""


class EpochResult(NamedTuple):
    """What :meth:`EpochTrainer.train_epoch` reports about the pass it made."""

    label: str
    """How the progress line names the pass, e.g. ``"epoch 3"``."""
    loss: float
    """The training loss of the pass (lower is better)."""
    fields: tuple = ()
    """Extra ``(name, value)`` pairs for the progress line."""


class EpochRecord(NamedTuple):
    """One finished epoch, as :meth:`EpochTrainer.epoch_done` receives it."""

    label: str
    loss: float
    fields: tuple
    seconds: float
    """Time of the pass itself (without validation)."""
    elapsed: float
    """Time since ``run`` started, up to the end of this pass (without its validation)."""
    validation_score: object
    """The validation score (float), or None when it was not computed."""

    def as_history(self, epoch):
        """The record as an entry of an estimator's ``history_``: a dict with the
        ``epoch`` number (1 for the first pass the estimator ever made), ``label``,
        ``loss``, ``seconds``, ``elapsed``, ``validation_score`` (None when not
        computed) and the extra fields, their names with underscores for spaces."""
        entry = {"epoch": epoch, "label": self.label, "loss": self.loss,
                 "seconds": self.seconds, "elapsed": self.elapsed,
                 "validation_score": self.validation_score}
        entry.update((name.replace(" ", "_"), value) for name, value in self.fields)
        return entry


def _format_value(value):
    return str(int(value)) if isinstance(value, Integral) else f"{value:.4g}"


_STEP = contextvars.ContextVar("training_step", default=None)


@contextmanager
def training_step(label):
    """Label the progress lines printed inside with a step of a chained job.

    A pipeline that trains several estimators (taggers on jackknife folds,
    then a parser) wraps each ``fit`` in ``training_step("upos tagger, fold 2
    of 5")`` so that every line says which step it belongs to; nested steps
    are joined with `` / ``.
    """
    outer = _STEP.get()
    token = _STEP.set(label if outer is None else f"{outer} / {label}")
    try:
        yield
    finally:
        _STEP.reset(token)


def progress_line(name, label, seconds, loss, validation_score=None, fields=(), *,
                  remaining=None):
    """The one per-epoch progress line of the library.

    ``validation_score`` is in the unit the estimator's ``score`` returns
    (a fraction for UAS and accuracy, a log-likelihood per token for the
    grammars). Extra fields come next, as ``name value``; last, when
    ``remaining`` is given, the time the epochs still to run would take at
    the pace so far (early stopping may end sooner). Inside
    :func:`training_step` the line starts with the step's label.

    >>> progress_line("LowRankTensorParser", "epoch 3", 0.52, 3.6171, 0.76474)
    '[LowRankTensorParser] epoch 3: 0.5 s, loss 3.617, validation score 0.7647'
    >>> progress_line("EasyFirstBeamParser", "epoch 1", 2.0, 1.5, fields=[("updates", 12)],
    ...               remaining=18.0)
    '[EasyFirstBeamParser] epoch 1: 2.0 s, loss 1.5, updates 12, at most 18 s left'
    """
    step = _STEP.get()
    line = f"[{name}] {label}: {seconds:.1f} s, loss {loss:.4g}"
    if step is not None:
        line = f"[{step}] {line}"
    if validation_score is not None:
        line += f", validation score {validation_score:.4f}"
    for field, value in fields:
        line += f", {field} {_format_value(value)}"
    if remaining:
        line += f", at most {remaining:.0f} s left"
    return line


def split_validation(estimator, X, y=None, X_val=None, y_val=None, *, rng, supervised=True):
    """The training data and the validation data of one ``fit`` call.

    Validation data is either given (``X_val``, and ``y_val`` when ``y`` is)
    or, with the estimator's ``validation_fraction``, that fraction of the
    training sentences, drawn with ``rng``: the generator of the ``fit`` call
    (``check_random_state(estimator.random_state)``, made once per call and
    passed on to whatever else the call draws). Returns ``(X, y,
    validation)`` where ``validation`` is None, ``(X_val, y_val)`` for a
    ``supervised`` estimator, or ``X_val`` for one that learns from X alone.
    ``y`` may be None for a supervised estimator that reads its targets from
    the tokens (a tagger); ``y_val`` is then None too.
    """
    fraction = getattr(estimator, "validation_fraction", None)
    if X_val is None:
        if y_val is not None:
            raise ValueError("y_val was given without X_val")
        if fraction is None:
            return X, y, None
        n = X.shape[0] if hasattr(X, "shape") else len(X)
        n_val = int(round(fraction * n))
        if not 1 <= n_val < n:
            raise ValueError(
                f"validation_fraction={fraction} of {n} training examples leaves {n_val} "
                f"for validation and {n - n_val} for training; both need at least one")
        order = rng.permutation(n)
        train, held_out = np.sort(order[n_val:]), np.sort(order[:n_val])
        X_val, X = _safe_indexing(X, held_out), _safe_indexing(X, train)
        if y is not None:
            y_val, y = _safe_indexing(y, held_out), _safe_indexing(y, train)
    elif fraction is not None:
        raise ValueError("give either X_val or validation_fraction, not both")
    elif y is not None and y_val is None:
        raise ValueError(
            f"X_val was given without y_val; {type(estimator).__name__} scores its "
            "validation data against y_val")
    return X, y, ((X_val, y_val) if supervised else X_val)


class EpochTrainer(ABC):
    """One training run, as the shared epoch loop :meth:`run` sees it.

    Subclasses implement :meth:`train_epoch` and :meth:`validation_score`;
    those that keep the best epoch (``run(patience=...)``) also implement
    :meth:`snapshot` and :meth:`restore`. The estimator hands its
    ``history_`` list to the trainer as :attr:`history`, and
    :meth:`epoch_done` appends every epoch's record to it; a subclass that
    overrides :meth:`epoch_done` for bookkeeping of its own calls the base.
    """

    history = None
    """The list each epoch's record is appended to (the estimator's ``history_``)."""

    @abstractmethod
    def train_epoch(self):
        """Make one pass over the training data.

        Returns an :class:`EpochResult`, or None to end training now (for
        example after the loss diverged and the last good parameters were
        put back, or when the training loss has converged).
        """

    @abstractmethod
    def validation_score(self, validation):
        """Score the model as it stands on ``validation`` (what ``run`` was given).

        In the unit of the estimator's ``score``, higher is better; None for
        a pass whose score would mislead (it is then neither printed nor a
        candidate for the best epoch). Called after an epoch only when the
        result is used: a progress line is printed, the best epoch is kept, or
        a history is recorded. This is the only place validation data is scored.
        """

    def snapshot(self):
        """A copy of the current parameters, for keep-best (``run(patience=...)``)."""
        raise NotImplementedError(f"{type(self).__name__} does not keep its best epoch")

    def restore(self, snapshot):
        """Put back the parameters of an earlier :meth:`snapshot`."""
        raise NotImplementedError(f"{type(self).__name__} does not keep its best epoch")

    def epoch_done(self, record):
        """Called after every epoch with its :class:`EpochRecord`: appends it to :attr:`history`."""
        if self.history is not None:
            self.history.append(record.as_history(len(self.history) + 1))

    def run(self, n_epochs, *, name, verbose=0, validation=None, patience=None):
        """Run up to ``n_epochs`` epochs.

        After every epoch the validation data (if any) is scored, the record
        goes to :meth:`epoch_done`, and with ``verbose`` the progress line is
        printed on standard error. With ``patience`` and validation data, the
        parameters of the epoch with the best validation score are kept, and
        training stops after ``patience`` epochs without a better one.
        Returns the number of epochs run.
        """
        keep_best = validation is not None and patience is not None
        best_score, best, stale = float("-inf"), None, 0
        start = time.perf_counter()
        n_run = 0
        for _ in range(n_epochs):
            tic = time.perf_counter()
            result = self.train_epoch()
            if result is None:
                break
            n_run += 1
            end = time.perf_counter()
            score = None
            if validation is not None:
                score = self.validation_score(validation)
            record = EpochRecord(result.label, result.loss, tuple(result.fields), end - tic,
                                 end - start, score)
            self.epoch_done(record)
            if verbose:
                pace = (time.perf_counter() - start) / n_run
                line = progress_line(name, record.label, record.seconds, record.loss, score,
                                     record.fields, remaining=pace * (n_epochs - n_run))
                # one write per line, so lines from threads (jackknife folds) never interleave
                sys.stderr.write(line + "\n")
                sys.stderr.flush()
            if keep_best and score is not None:  # None: a pass not worth scoring
                if score > best_score:
                    best_score, best, stale = score, self.snapshot(), 0
                else:
                    stale += 1
                    if stale >= patience:
                        break
        if best is not None:
            self.restore(best)
        return n_run


# Averaged perceptron (the easy-first models, the low-rank parser's
# passive-aggressive steps, the dependency labeller, the n-best reranker). An
# update made when ``count`` updates were counted adds ``delta`` to the weights
# and ``count * delta`` to the running sums, so the mean of all iterates is
# ``weights - sums / count`` at no cost per step (Daume III, 2006).

def perceptron_state(weights):
    """The one averaged-perceptron training state of the library.

    ``weights`` maps a parameter's name to its initial float64 array. The
    state is a dict: ``"weights"`` (those arrays, updated in place by the
    kernels), ``"sums"`` (running sums of the same shapes) and ``"count"``
    (a one-element float64 array, the number of updates counted so far, which
    the kernels increment in place). Training works in float64 throughout;
    :func:`prediction_weights` makes what a fitted model keeps.
    """
    weights = {name: np.asarray(array, dtype=np.float64) for name, array in weights.items()}
    return {"weights": weights,
            "sums": {name: np.zeros_like(array) for name, array in weights.items()},
            "count": np.zeros(1)}


def averaged_weights(current, sums, count):
    """The mean of the weight iterates, from the current weights and the running sums."""
    return current - sums / max(count, 1)


def prediction_weights(state, name, average=True):
    """The weights a fitted model predicts with, for parameter ``name`` of a
    :func:`perceptron_state`: the average of the iterates (or the current
    weights), in float32.

    Every fitted perceptron model keeps float32, half the size of the float64
    training state; kernels that sum many weights accumulate in float64, so
    the scores differ from float64 weights only by the rounding of each weight.
    """
    weights = state["weights"][name]
    if average:
        weights = averaged_weights(weights, state["sums"][name], state["count"][0])
    return weights.astype(np.float32)


def float16_precision(weights):
    """float32 ``weights`` rounded to float16 values (still float32, which the kernels
    read), or unchanged if some would overflow float16."""
    with np.errstate(over="ignore"):
        half = weights.astype(np.float16)
    return half.astype(np.float32) if np.all(np.isfinite(half)) else weights


def check_resumable(estimator, training_state):
    """Raise unless ``training_state`` (kept by ``partial_fit``, dropped by ``fit``) exists."""
    if training_state is None:
        raise ValueError(
            f"this {type(estimator).__name__} was trained by fit, which keeps only the "
            "weights it predicts with, not the state needed to continue training; "
            "train it with partial_fit from the start (partial_fit keeps that state) "
            "or call fit again")
