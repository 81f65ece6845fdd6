"""What RankSpacePCFG and RankSpaceHMM share: their common parameters, vocabulary,
batches (by sentences or by tokens), the Adam epochs (run by the shared epoch
loop, which keeps the epoch with the best validation likelihood and stops
early) with a learning-rate decay on plateaus, threads."""

import copy
import inspect
import warnings
from abc import ABC, abstractmethod
from contextlib import contextmanager
from numbers import Integral, Real

import numba
import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

from ..utils import (
    EARLY_STOPPING_CONSTRAINTS,
    EpochResult,
    EpochTrainer,
    SentenceEstimator,
    Vocabulary,
    check_sentences,
    split_validation,
    thread_count,
    token_values,
)
from ..utils._base import DEPRECATED, check_fitted
from ..utils._compat import Hidden, Interval, StrOptions, _fit_context
from ._nn import Adam

UNKNOWN = "<unk>"


@contextmanager
def numba_threads(n_jobs):
    """Run the kernels' parallel loops (capped by NUMBA_NUM_THREADS) and the BLAS
    matrix products on ``n_jobs`` threads."""
    previous = numba.get_num_threads()
    n_threads = thread_count(n_jobs)
    numba.set_num_threads(max(1, min(n_threads, numba.config.NUMBA_NUM_THREADS)))
    try:
        with threadpool_limits(limits=n_threads, user_api="blas"):
            yield
    finally:
        numba.set_num_threads(previous)


def sentence_forms(X, name="X", require_any=False):
    """Word forms of every sentence, read as every estimator reads them
    (:func:`~sklearn_structured.utils.token_values`)."""
    sentences = check_sentences(X, name=name, require_any=require_any)
    forms = token_values(sentences, "form")
    ends = np.cumsum([len(s) for s in sentences])
    return [forms[end - len(s):end] for s, end in zip(sentences, ends)]


def build_vocabulary(sentences, max_size, min_count):
    """``<unk>`` then the ``max_size`` most frequent forms seen ``min_count`` times or more."""
    forms = (w for s in sentences for w in s if w != UNKNOWN)
    return Vocabulary(forms, min_count=min_count).itos[: max_size + 1]


def length_batches(lengths, batch_size, rng):
    """Indices of sentences grouped into batches of equal length, shuffled by ``rng``."""
    batches = []
    for length in np.unique(lengths):
        members = rng.permutation(np.flatnonzero(lengths == length))
        batches.extend(members[start : start + batch_size] for start in range(0, len(members), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


def token_batches(lengths, max_tokens, rng=None, same_length=False):
    """Indices of sentences grouped into batches of at most ``max_tokens`` tokens
    (a longer sentence makes a batch of its own).

    Sentences are sorted by length (ties in an order drawn from ``rng``) so that a
    batch holds sentences of near (with ``same_length``: equal) lengths, and the
    batches come in an order drawn from ``rng`` (in order of length without one).
    """
    order = np.arange(len(lengths)) if rng is None else rng.permutation(len(lengths))
    order = order[np.argsort(lengths[order], kind="stable")]
    batches, current, tokens = [], [], 0
    for i in order:
        if current and (tokens + lengths[i] > max_tokens
                        or (same_length and lengths[i] != lengths[current[0]])):
            batches.append(np.array(current))
            current, tokens = [], 0
        current.append(i)
        tokens += lengths[i]
    if current:
        batches.append(np.array(current))
    return batches if rng is None else [batches[i] for i in rng.permutation(len(batches))]


class _AdamEpochs(EpochTrainer):
    """The Adam epochs of one ``fit`` call, on shuffled batches (see ``batch_size``
    and ``batch_tokens``).

    Every step minimises the mean negative log-likelihood of its batch's
    sentences. With ``lr_decay``, the learning rate is multiplied by it after
    every ``lr_patience`` epochs without a better validation score (counted over
    the whole ``history_``, so warm-started calls continue the count). An epoch
    whose log-likelihood becomes non-finite puts back the parameters and
    optimiser state of the last finite epoch, warns and ends training.
    The loss is the negative log-likelihood per token; the validation score
    the log-likelihood per token of the validation sentences.
    """

    def __init__(self, model, encoded, params, optimizer, rng, first_epoch):
        self.model, self.encoded = model, encoded
        self.params, self.optimizer, self.rng = params, optimizer, rng
        self.epoch = first_epoch
        self.lengths = np.array([len(s) for s in encoded])
        self.n_tokens = model._count_tokens(encoded)
        # what to fall back to if a step makes the likelihood non-finite
        self.last_finite = {k: v.copy() for k, v in params.items()}
        self.last_finite_state = copy.deepcopy(optimizer.state)

    def train_epoch(self):
        model, params, optimizer = self.model, self.params, self.optimizer
        self.epoch += 1
        total_log_p = 0.0
        for batch in model._batches(self.lengths, self.rng):
            probs, cache = model._training_probabilities(params, self.rng)
            # the loss is the mean negative log-likelihood of the batch's sentences
            log_p, prob_grads = model._batch_gradients(
                probs, model._make_batch([self.encoded[i] for i in batch]), -1.0 / len(batch))
            total_log_p += float(log_p.sum())
            if not np.isfinite(total_log_p):
                break
            optimizer.step(params, model._backward(params, probs, cache, prob_grads))
        if not np.isfinite(total_log_p):
            self.params, optimizer.state = self.last_finite, self.last_finite_state
            warnings.warn(
                f"{type(model).__name__}: training diverged in epoch {self.epoch} (the "
                f"log-likelihood became {total_log_p}); stopped there and kept the "
                f"parameters of the last finite epoch. Try a smaller learning_rate "
                f"(now {model.learning_rate}).",
                ConvergenceWarning,
                stacklevel=2,
            )
            return None
        self.last_finite = {k: v.copy() for k, v in params.items()}
        self.last_finite_state = copy.deepcopy(optimizer.state)
        return EpochResult(f"epoch {self.epoch}", -(total_log_p / self.n_tokens),
                           (("learning rate", optimizer.learning_rate),))

    def validation_score(self, validation):
        """Mean log-likelihood per token of the encoded validation sentences."""
        self.model._set_factors(self.params)
        return self.model._score_encoded(validation)

    def epoch_done(self, record):
        super().epoch_done(record)
        decay, patience = self.model.lr_decay, self.model.lr_patience
        scores = [h["validation_score"] for h in self.history]
        if decay is None or scores[-1] is None:
            return
        stale = len(scores) - 1 - int(np.argmax([-np.inf if v is None else v for v in scores]))
        if stale > 0 and stale % patience == 0:
            self.optimizer.learning_rate *= decay

    def snapshot(self):
        return {k: v.copy() for k, v in self.params.items()}

    def restore(self, snapshot):
        self.params = snapshot


class RankSpaceModelMixin(SentenceEstimator, ABC):
    """Training loop over a model-specific forward/backward (see the two estimators).

    Subclasses set the class attributes below and implement the abstract methods.
    """

    # the constraints of the parameters both models share; each adds its own
    _parameter_constraints = {
        "rank": [Interval(Integral, 1, None, closed="left")],
        "parameterization": [StrOptions({"neural", "direct"})],
        "embedding_dim": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "batch_tokens": [Interval(Integral, 1, None, closed="left"), None],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "lr_decay": [Interval(Real, 0, 1, closed="neither"), None],
        "lr_patience": [Interval(Integral, 1, None, closed="left")],
        "n_epochs": [Interval(Integral, 1, None, closed="left")],
        "max_vocabulary": [Interval(Integral, 1, None, closed="left")],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "min_frequency": [Interval(Integral, 1, None, closed="left"),
                          Hidden(StrOptions({DEPRECATED}))],
        **EARLY_STOPPING_CONSTRAINTS,
        "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "n_jobs": [Integral, None],
    }

    _min_length: int  # shortest sentence (in encoded tokens) the model generates
    _same_length_batches: bool  # whether a batch must hold sentences of one length
    _betas: tuple  # Adam's (beta1, beta2)
    _factor_axes: dict  # probability factors stored in ``factors_``: the axis each sums to one over

    _requires_y = False  # unsupervised: fit learns from raw sentences
    _renamed_params = {"min_frequency": ("min_count", lambda count: count)}

    def __init__(self, *, rank, parameterization, embedding_dim, max_length, batch_size,
                 batch_tokens, learning_rate, lr_decay, lr_patience, n_epochs, max_vocabulary,
                 min_count, n_iter_no_change, validation_fraction, max_grad_norm, warm_start,
                 random_state, verbose, n_jobs, min_frequency):
        self.rank = rank
        self.parameterization = parameterization
        self.embedding_dim = embedding_dim
        self.max_length = max_length
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens
        self.learning_rate = learning_rate
        self.lr_decay = lr_decay
        self.lr_patience = lr_patience
        self.n_epochs = n_epochs
        self.max_vocabulary = max_vocabulary
        self.min_count = min_count
        self.min_frequency = min_frequency
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.max_grad_norm = max_grad_norm
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    @staticmethod
    def _shared(arguments):
        """The arguments of a subclass's ``__init__`` (its ``locals()``) that this
        ``__init__`` stores. Each subclass keeps its own explicit signature, which
        is what scikit-learn's ``get_params`` reads."""
        names = inspect.signature(RankSpaceModelMixin.__init__).parameters
        return {name: arguments[name] for name in names if name != "self"}

    @abstractmethod
    def _max_encoded_length(self):
        """Longest training sentence (in encoded tokens) that is used."""

    @abstractmethod
    def _init_params(self, n_words, rng):
        """Fresh free parameters (dict of arrays) for a vocabulary of ``n_words``."""

    @abstractmethod
    def _probabilities(self, params):
        """``(probs, cache)``: the probability factors and what :meth:`_backward` needs."""

    def _training_probabilities(self, params, rng):
        """:meth:`_probabilities` as a training step sees them (with any dropout drawn from ``rng``)."""
        return self._probabilities(params)

    @abstractmethod
    def _backward(self, params, probs, cache, prob_grads):
        """Gradients of the parameters from the gradients of the probability factors."""

    @abstractmethod
    def _make_batch(self, sentences):
        """The kernels' view of a list of encoded sentences (what :meth:`_batch_gradients` takes)."""

    @abstractmethod
    def _batch_gradients(self, probs, batch, weight):
        """``(log_p, prob_grads)`` of a batch from :meth:`_make_batch`: the sentences'
        log-likelihoods and ``weight`` times the gradients of their sum."""

    @abstractmethod
    def _scoring_inputs(self):
        """What every scoring batch needs from ``factors_`` (computed once per call)."""

    @abstractmethod
    def _scoring_batches(self, lengths):
        """Index arrays of the batches sentences of these lengths are scored in."""

    @abstractmethod
    def _batch_log_likelihoods(self, inputs, batch):
        """float64 log-likelihoods of a batch from :meth:`_make_batch`, under ``factors_``."""

    # ---- encoding -------------------------------------------------------------------
    def _set_vocabulary(self, words):
        self.vocabulary_ = list(words)
        self.word_index_ = {word: i for i, word in enumerate(self.vocabulary_)}

    def _encode(self, sentences):
        index = self.word_index_
        unknown = index.get(UNKNOWN)
        encoded = []
        for i, sentence in enumerate(sentences):
            ids = [index.get(w, unknown) for w in self._with_end(sentence)]
            if unknown is None and None in ids:
                raise ValueError(f"X[{i}] has a word outside the vocabulary and the vocabulary has no {UNKNOWN}")
            encoded.append(np.asarray(ids, dtype=np.int64))
        return encoded

    def _with_end(self, sentence):
        return sentence

    # ---- fitting --------------------------------------------------------------------
    def _batches(self, lengths, rng):
        """One epoch's batches of sentences of ``lengths`` (encoded tokens), in ``rng``'s order."""
        if self.batch_tokens is None:
            return length_batches(lengths, self.batch_size, rng)
        return token_batches(lengths, self.batch_tokens, rng, same_length=self._same_length_batches)

    def epoch_batches(self, X, random_state=None):
        """The batches one training epoch over ``X`` is cut into, as ``fit`` cuts them.

        ``batch_size`` or ``batch_tokens`` decide the batches; sentences
        outside the lengths the model trains on (``max_length``) are in
        none. The number of batches is the number of optimiser steps of an
        epoch. ``X`` is what an epoch covers: without the validation
        sentences ``fit`` may set aside. Needs no fitted model.

        Parameters
        ----------
        X : list of sentences
            Each a sequence of tokens (str or dicts with a ``"form"``).
        random_state : int, RandomState or None, default=None
            Draws the order of the sentences and of the batches (not their
            number).

        Returns
        -------
        batches : list of ndarray of int
            Indices into ``X``, one array per batch.
        """
        sentences = sentence_forms(X, require_any=True)
        lengths = np.array([len(self._with_end(s)) for s in sentences])
        trained = np.flatnonzero((lengths >= self._min_length)
                                 & (lengths <= self._max_encoded_length()))
        return [trained[batch] for batch in
                self._batches(lengths[trained], check_random_state(random_state))]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, X_val=None, y_val=None):
        """Maximise the log-likelihood of the sentences ``X`` (``y`` and ``y_val`` are ignored).

        ``X_val`` (keyword only), or the ``validation_fraction`` of ``X``, is
        scored after every epoch (log-likelihood per token): with
        ``n_iter_no_change`` the parameters with the best validation
        likelihood are kept, and training stops after that many epochs
        without improvement. With ``warm_start`` a second call continues
        from the fitted parameters, optimiser state, vocabulary and
        ``history_`` for ``n_epochs`` more epochs.

        Returns
        -------
        self
        """
        sentences = sentence_forms(X, require_any=True)
        if X_val is not None:
            X_val = sentence_forms(X_val, name="X_val")
        rng = check_random_state(self.random_state)
        sentences, _, validation = split_validation(self, sentences, None, X_val, rng=rng,
                                                    supervised=False)
        continuing = self.warm_start and getattr(self, "params_", None) is not None
        if continuing:
            # a fresh shuffle per call, still determined by random_state
            rng = np.random.RandomState([rng.randint(2**31 - 1), self.n_iter_])
        else:
            self._set_vocabulary(build_vocabulary(
                [self._with_end(s) for s in sentences], self.max_vocabulary, self._param("min_count")
            ))
        encoded = [
            s for s in self._encode(sentences) if self._min_length <= len(s) <= self._max_encoded_length()
        ]
        if not encoded:
            raise ValueError(
                f"no training sentence has between {self._min_length} and {self._max_encoded_length()} tokens"
            )
        if validation is not None:
            validation = self._encode(validation)
        optimizer = Adam(self.learning_rate, self._betas, self.max_grad_norm)
        if continuing:
            params = {k: v.copy() for k, v in self.params_.items()}
            optimizer.state = copy.deepcopy(self.optimizer_state_)
            first_epoch = self.n_iter_
        else:
            # training runs in float32: half the memory traffic, twice the BLAS speed
            params = {k: v.astype(np.float32)
                      for k, v in self._init_params(len(self.vocabulary_), rng).items()}
            self.history_ = []
            first_epoch = 0
        trainer = _AdamEpochs(self, encoded, params, optimizer, rng, first_epoch)
        trainer.history = self.history_
        with numba_threads(self.n_jobs):
            trainer.run(self.n_epochs, name=type(self).__name__, verbose=self.verbose,
                        validation=validation, patience=self.n_iter_no_change)
        self.params_ = trainer.params
        self.optimizer_state_ = optimizer.state
        self.n_iter_ = len(self.history_)
        self._set_factors(self.params_)
        return self

    def _count_tokens(self, encoded):
        return sum(len(s) for s in encoded)

    def _set_factors(self, params):
        """The factors ``params`` give, computed in float64 so that they are normalised
        to float64 precision for scoring."""
        probs = self._probabilities({k: v.astype(np.float64) for k, v in params.items()})[0]
        self.factors_ = {name: np.ascontiguousarray(probs[name]) for name in self._factor_axes}

    # ---- the fitted probabilities ----------------------------------------------------
    @classmethod
    @abstractmethod
    def _sizes_and_shapes(cls, factors, vocabulary):
        """Constructor sizes read off ``factors``, and the shape each factor must have."""

    def get_model(self):
        """The fitted probabilities, one array per factor (see the class), and the ``vocabulary``."""
        check_fitted(self, "factors_")
        model = {name: value.copy() for name, value in self.factors_.items()}
        model["vocabulary"] = list(self.vocabulary_)
        return model

    @classmethod
    def from_model(cls, vocabulary, **factors_and_params):
        """A model that scores (and decodes) with the given probabilities, without training.

        Takes what :meth:`get_model` returns: the factors by name, each
        non-negative and normalised as in the class description, and the
        ``vocabulary``; words outside it map to ``<unk>`` when the
        vocabulary holds it (an error otherwise). Other keywords are
        constructor parameters (``n_jobs``, ...).
        """
        missing = [name for name in cls._factor_axes if name not in factors_and_params]
        if missing:
            raise TypeError(f"from_model() needs the factors {list(cls._factor_axes)}; "
                            f"missing {missing}")
        factors = {name: np.array(factors_and_params.pop(name), dtype=np.float64)
                   for name in cls._factor_axes}
        sizes, shapes = cls._sizes_and_shapes(factors, vocabulary)
        for name, axis in cls._factor_axes.items():
            if factors[name].shape != shapes[name]:
                raise ValueError(f"{name} has shape {factors[name].shape}, expected {shapes[name]}")
            if np.any(factors[name] < 0) or not np.allclose(factors[name].sum(axis=axis), 1.0,
                                                            atol=1e-6):
                raise ValueError(f"{name} must be non-negative and sum to one over axis {axis}")
        model = cls(**sizes, **factors_and_params)
        model.factors_ = factors
        model._set_vocabulary(str(w) for w in vocabulary)
        model.params_ = None
        model.history_ = []
        model.n_iter_ = 0
        return model

    # ---- scoring --------------------------------------------------------------------
    def _log_likelihoods(self, encoded):
        """Per-sentence log-likelihoods in float64, the factors' precomputation done once."""
        out = np.empty(len(encoded))
        lengths = np.array([len(s) for s in encoded])
        with numba_threads(self.n_jobs):
            inputs = self._scoring_inputs()
            for batch in self._scoring_batches(lengths):
                out[batch] = self._batch_log_likelihoods(
                    inputs, self._make_batch([encoded[i] for i in batch]))
        return out

    def _score_encoded(self, encoded):
        return float(self._log_likelihoods(encoded).sum() / self._count_tokens(encoded))

    def score_samples(self, X):
        """Log-likelihood of every sentence (natural log)."""
        check_fitted(self, "factors_")
        return self._log_likelihoods(self._checked_encoding(X))

    def score(self, X, y=None):
        """Mean log-likelihood per token (higher is better); ``y`` is ignored."""
        check_fitted(self, "factors_")
        return self._score_encoded(self._checked_encoding(X))

    def _checked_encoding(self, X):
        encoded = self._encode(sentence_forms(X))
        for i, s in enumerate(encoded):
            if len(s) < self._min_length:
                raise ValueError(
                    f"X[{i}] has {len(s)} token(s); the model generates sentences of "
                    f"{self._min_length} or more tokens"
                )
        return encoded
