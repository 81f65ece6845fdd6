"""What the easy-first parser and tagger share: weights, epochs, prediction plumbing.

Both are structured perceptrons over beam search with Ma et al.'s valid early
update; they differ only in the state, the features and the kernels. The
subclass encodes sentences into flat integer arrays and names its kernels
(the abstract methods of :class:`EasyFirstBase`); this module owns the
weights (the library's averaged-perceptron state), shuffling, averaging, the
perceptron epoch run by the shared epoch loop
(:class:`~sklearn_structured.utils.EpochTrainer`) with its keep-best
snapshots, and the parallel prediction.
"""

import copy
from abc import ABC, abstractmethod
from numbers import Integral

import numpy as np

from ..utils import (
    EARLY_STOPPING_CONSTRAINTS,
    EpochResult,
    EpochTrainer,
    SentenceEstimator,
    map_ranges,
    perceptron_state,
    prediction_weights,
)
from ..utils._base import check_fitted
from ..utils._compat import Interval
from ..utils._training import check_resumable
from ._beam import Perceptron, Search

_TABLE = "W"
"""The name of the weight table in the perceptron state (its only parameter)."""


class _PerceptronEpochs(EpochTrainer):
    """Perceptron epochs over encoded training data, in a fresh shuffled order each.

    The order of epoch ``k`` depends only on ``(shuffle_seed_, k)``, so
    ``partial_fit`` called ``k`` times equals ``fit`` for ``k`` epochs.
    Keep-best snapshots the prediction weights, and the training state too
    when the estimator keeps it (``partial_fit``).
    """

    def __init__(self, estimator, data, n_sentences, keep_training_state):
        self.estimator, self.data = estimator, data
        self.keep_training_state = keep_training_state
        self.history = estimator.history_
        # each sentence's update record, as the kernels write it
        self.records = np.zeros((n_sentences, 5))

    def train_epoch(self):
        est, records = self.estimator, self.records
        n = len(records)
        order = np.random.default_rng([est.shuffle_seed_, est.n_iter_]).permutation(n)
        records[:] = 0.0
        state = est.training_state_
        perceptron = Perceptron(state["weights"][_TABLE], state["sums"][_TABLE], state["count"])
        n_clean = est._run_epoch(self.data, order, perceptron, records)
        est._store_prediction_weights()
        updated = records[:, 0] > 0
        n_updates = int(updated.sum())
        est.n_iter_ += 1
        est.n_updates_ += n_updates
        # Ma et al.'s validity: the correct sequence never outscores the prediction
        scale = np.maximum(1.0, np.abs(records[updated, 2]))
        est.n_invalid_updates_ += int(
            np.sum(records[updated, 1] > records[updated, 2] + 1e-9 * scale)
        )
        # perceptron loss: how far the prediction outscored the correct sequence
        # at the update, 0 for sentences that needed none; mean over sentences
        loss = float(np.sum(records[updated, 2] - records[updated, 1])) / max(n, 1)
        return EpochResult(f"epoch {est.n_iter_}", loss, (
            ("updates", n_updates),
            ("early updates", int(np.sum(records[updated, 3] == 1.0))),
            ("training sentences correct", n_clean / max(n, 1)),
        ))

    def validation_score(self, validation):
        return self.estimator.score(*validation)

    def snapshot(self):
        est = self.estimator
        # weights_ is replaced after every epoch, never changed in place
        state = copy.deepcopy(est.training_state_) if self.keep_training_state else None
        return est.weights_, state

    def restore(self, snapshot):
        est = self.estimator
        est.weights_, state = snapshot
        if state is not None:
            est.training_state_ = state


class EasyFirstBase(SentenceEstimator, ABC):
    """Weights, epochs and prediction plumbing; see the two public estimators."""

    _requires_y = False  # the tagger can read its gold tags from the tokens

    _parameter_constraints = {
        "beam_size": [Interval(Integral, 1, None, closed="left")],
        "n_epochs": [Interval(Integral, 1, None, closed="left")],
        "average": ["boolean"],
        "merge_states": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "n_jobs": [Integral, None],
        **EARLY_STOPPING_CONSTRAINTS,
    }

    def __init__(self, beam_size, n_epochs, average, merge_states, n_iter_no_change,
                 validation_fraction, random_state, verbose, n_jobs):
        # the parameters of _parameter_constraints; each estimator names them in its own
        # signature (what get_params reads) and hands them on in this order
        self.beam_size = beam_size
        self.n_epochs = n_epochs
        self.average = average
        self.merge_states = merge_states
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    # --- subclass hooks -------------------------------------------------
    @abstractmethod
    def _start(self, sentences, targets):
        """Fit the vocabularies of the first training data; return the weight table's
        shape ``(rows, n_actions)`` and the data as :meth:`_encode_training` encodes it
        (one pass over what both need)."""

    @abstractmethod
    def _encode_training(self, sentences, targets):
        """The arrays :meth:`_run_epoch` needs, for validated training data."""

    @abstractmethod
    def _run_epoch(self, data, order, perceptron, records):
        """One perceptron pass over the sentences of ``data`` in ``order``.

        Updates ``perceptron`` (a :class:`~._beam.Perceptron` over the fitted
        arrays) in place, writes each sentence's update record (updated,
        correct score, predicted score, early, step) into ``records``, and
        returns the number of sentences that needed no update.
        """

    def _search(self):
        return Search(int(self.beam_size), bool(self.merge_states))

    def _store_prediction_weights(self):
        """``weights_``: the averaged perceptron weights (or the current ones), float32."""
        self.weights_ = prediction_weights(self.training_state_, _TABLE, self.average)

    def _init_state(self, sentences, targets, rng):
        """Fresh weights, counters and history, the shuffling seed drawn from ``rng``;
        returns the encoded training data."""
        seed = rng.randint(np.iinfo(np.int32).max)
        shape, data = self._start(sentences, targets)
        self.training_state_ = perceptron_state({_TABLE: np.zeros(shape)})
        self._store_prediction_weights()
        self.shuffle_seed_ = int(seed)
        self.n_iter_ = 0
        self.n_updates_ = 0
        self.n_invalid_updates_ = 0
        self.history_ = []
        return data

    def _check_resumable(self):
        """Whether ``partial_fit`` starts afresh; raise if it cannot go on from ``fit``."""
        if not hasattr(self, "weights_"):
            return True
        check_resumable(self, self.training_state_)
        return False

    def _training_data(self, sentences, targets, reset, rng):
        """The encoded training data, after fresh weights when ``reset``."""
        if reset:
            return self._init_state(sentences, targets, rng)
        return self._encode_training(sentences, targets)

    def _train(self, data, n_sentences, n_epochs, validation, *, keep_training_state):
        """Run the epochs (scoring ``validation``, if not None, when it is used: for the
        progress line, and with ``n_iter_no_change`` to keep the best epoch and stop
        early). ``fit`` drops the training state after them, ``partial_fit`` keeps it to
        go on from (it is twice the float64 size of the model)."""
        _PerceptronEpochs(self, data, n_sentences, keep_training_state).run(
            n_epochs, name=type(self).__name__, verbose=self.verbose, validation=validation,
            patience=self.n_iter_no_change)
        if not keep_training_state:
            self.training_state_ = None
        return self

    def _predict_chunks(self, sentences, predict_chunk):
        """Split ``sentences`` into one chunk per job and run ``predict_chunk(W, chunk)``
        on each, in threads when n_jobs asks; returns the per-chunk results in order."""
        check_fitted(self, "weights_")
        W = self.weights_
        return map_ranges(lambda lo, hi: predict_chunk(W, sentences[lo:hi]), len(sentences),
                          self.n_jobs)
