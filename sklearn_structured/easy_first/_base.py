"""The training loop shared by the easy-first parser and tagger.

Both are structured perceptrons over beam search with Ma et al.'s valid early
update; they differ only in the state, the features and the kernels. The
subclass encodes sentences into flat integer arrays and names its kernels;
this base class owns the weights, the epochs, shuffling, averaging, progress
lines and the parallel prediction.
"""

import time
from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..utils import SentenceEstimator, run_in_threads, thread_count
from ..utils._compat import Interval


class EasyFirstBase(SentenceEstimator):
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
    }


    # --- subclass hooks -------------------------------------------------
    # _start(sentences, targets): build fitted vocabularies, return (rows, n_actions)
    # _encode_training(sentences, targets) -> the arrays _run_epoch needs
    # _run_epoch(data, order, W, U, counter, records) -> number of clean sentences

    def _averaged_weights(self):
        """The averaged perceptron weights ``W - U / c`` (or W itself)."""
        if not self.average or self.n_seen_[0] == 0:
            return self.weights_
        return self.weights_ - self.weight_sums_ / self.n_seen_[0]

    def _init_state(self, sentences, targets):
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        rows, n_actions = self._start(sentences, targets)
        self.weights_ = np.zeros((rows, n_actions))
        self.weight_sums_ = np.zeros((rows, n_actions))
        self.n_seen_ = np.zeros(1)
        self.shuffle_seed_ = int(seed)
        self.n_iter_ = 0
        self.n_updates_ = 0
        self.n_invalid_updates_ = 0
        self.update_records_ = np.zeros((0, 5))

    def _train(self, sentences, targets, n_epochs, X_val, y_val):
        data = self._encode_training(sentences, targets)
        n = len(sentences)
        records = np.zeros((n, 5))
        for _ in range(n_epochs):
            started = time.perf_counter()
            order = np.random.default_rng([self.shuffle_seed_, self.n_iter_]).permutation(n)
            records[:] = 0.0
            n_clean = self._run_epoch(data, order, self.weights_, self.weight_sums_,
                                      self.n_seen_, records)
            updated = records[:, 0] > 0
            self.n_iter_ += 1
            self.n_updates_ += int(updated.sum())
            # Ma et al.'s validity: the correct sequence never outscores the prediction
            scale = np.maximum(1.0, np.abs(records[updated, 2]))
            self.n_invalid_updates_ += int(
                np.sum(records[updated, 1] > records[updated, 2] + 1e-9 * scale)
            )
            self.update_records_ = records[updated]
            if self.verbose:
                line = (
                    f"[{type(self).__name__}] epoch {self.n_iter_}: "
                    f"{time.perf_counter() - started:.1f} s, {int(updated.sum())} updates, "
                    f"training sentences correct {n_clean / max(n, 1):.4f}"
                )
                if X_val is not None:
                    line += f", validation score {self.score(X_val, y_val):.4f}"
                print(line, flush=True)
        return self

    def _predict_chunks(self, sentences, predict_chunk):
        """Split ``sentences`` into one chunk per job and run ``predict_chunk(W, chunk)``
        on each, in threads when n_jobs asks; returns the per-chunk results in order."""
        check_is_fitted(self, "weights_")
        W = self._averaged_weights()
        n_threads = thread_count(self.n_jobs)
        n_chunks = max(1, min(len(sentences), n_threads))
        bounds = np.linspace(0, len(sentences), n_chunks + 1).astype(int)
        chunks = [(W, sentences[bounds[k]:bounds[k + 1]]) for k in range(n_chunks)]
        return run_in_threads(predict_chunk, chunks, n_threads)
