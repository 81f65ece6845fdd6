"""The epoch loop shared by the iterative estimators, and their progress line.

Every estimator that learns in passes over its training data (the low-rank
parser, the easy-first parser and tagger, the weight and label passes of
DISTRO, the rank-space grammars) runs them through :meth:`EpochTrainer.run`.
The loop owns what is the same everywhere: the epochs, their timing, scoring
the validation data, the progress line, and keep-best with early stopping.
A subclass of :class:`EpochTrainer` holds one training run's data and
optimiser state and owns what an epoch computes; the estimator's ``fit``
builds one and calls ``run``. Nothing here changes what an epoch computes, so
the loop adds no state to the fitted estimator.
"""

import time
from abc import ABC, abstractmethod
from numbers import Integral
from typing import NamedTuple

import numpy as np


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


def _format_value(value):
    return str(int(value)) if isinstance(value, Integral) else f"{value:.4g}"


def progress_line(name, label, seconds, loss, validation_score=None, fields=()):
    """The one per-epoch progress line of the library.

    ``validation_score`` is in the unit the estimator's ``score`` returns
    (a fraction for UAS and accuracy, a log-likelihood per token for the
    grammars). Extra fields come last, as ``name value``.

    >>> progress_line("LowRankTensorParser", "epoch 3", 0.52, 3.6171, 0.76474)
    '[LowRankTensorParser] epoch 3: 0.5 s, loss 3.617, validation score 0.7647'
    >>> progress_line("EasyFirstBeamParser", "epoch 1", 2.0, 1.5, fields=[("updates", 12)])
    '[EasyFirstBeamParser] epoch 1: 2.0 s, loss 1.5, updates 12'
    """
    line = f"[{name}] {label}: {seconds:.1f} s, loss {loss:.4g}"
    if validation_score is not None:
        line += f", validation score {validation_score:.4f}"
    for field, value in fields:
        line += f", {field} {_format_value(value)}"
    return line


class EpochTrainer(ABC):
    """One training run, as the shared epoch loop :meth:`run` sees it.

    Subclasses implement :meth:`train_epoch` and :meth:`validation_score`;
    those that keep the best epoch (``run(patience=...)``) also implement
    :meth:`snapshot` and :meth:`restore`; :meth:`epoch_done` is an optional
    hook for per-epoch bookkeeping such as a history.
    """

    @abstractmethod
    def train_epoch(self):
        """Make one pass over the training data.

        Returns an :class:`EpochResult`, or None to end training now (for
        example after the loss diverged and the last good parameters were
        put back).
        """

    @abstractmethod
    def validation_score(self, validation):
        """Score the model as it stands on ``validation`` (what ``run`` was given).

        In the unit of the estimator's ``score``, higher is better. Called
        after an epoch only when the result is used: a progress line is
        printed, or the best epoch is kept.
        """

    def snapshot(self):
        """A copy of the current parameters, for keep-best (``run(patience=...)``)."""
        raise NotImplementedError(f"{type(self).__name__} does not keep its best epoch")

    def restore(self, snapshot):
        """Put back the parameters of an earlier :meth:`snapshot`."""
        raise NotImplementedError(f"{type(self).__name__} does not keep its best epoch")

    def epoch_done(self, record):
        """Called after every epoch with its :class:`EpochRecord`; does nothing by default."""

    def run(self, n_epochs, *, name, verbose=0, validation=None, patience=None):
        """Run up to ``n_epochs`` epochs.

        After every epoch the validation data (if any) is scored when a
        progress line is printed (``verbose``) or ``patience`` is set, and
        the progress line is printed when ``verbose``. With ``patience`` and
        validation data, the parameters of the epoch with the best
        validation score are kept, and training stops after ``patience``
        epochs without a better one. Returns the number of epochs run.
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
            if validation is not None and (verbose or keep_best):
                score = self.validation_score(validation)
            record = EpochRecord(result.label, result.loss, tuple(result.fields), end - tic,
                                 end - start, score)
            self.epoch_done(record)
            if verbose:
                print(progress_line(name, record.label, record.seconds, record.loss, score,
                                    record.fields), flush=True)
            if keep_best:
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
# passive-aggressive steps, the n-best reranker). An update made when
# ``count`` updates were counted adds ``delta`` to the weights and
# ``count * delta`` to the running sums, so the mean of all iterates is
# ``current - sums / count`` at no cost per step (Daume III, 2006).

def averaged_weights(current, sums, count):
    """The mean of the weight iterates, from the current weights and the running sums."""
    return current - sums / max(count, 1)


def prediction_weights(current, sums, count, average=True):
    """The weights a fitted model predicts with: the average (or ``current``) in float32.

    Training accumulates in float64; the fitted model keeps float32, half the
    size, which ranks the candidates as float64 does (issue 13 measured the
    low-rank parser's UAS/LAS on EWT dev both ways).
    """
    weights = averaged_weights(current, sums, count) if average else current
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
