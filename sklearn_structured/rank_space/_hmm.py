"""RankSpaceHMM: a hidden Markov language model with a jointly decomposed transition-emission factor."""

from numbers import Integral

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..kernels.rank_space import hmm_rank_backward, hmm_rank_forward, hmm_state_viterbi
from ..metrics import perplexity
from ..utils._compat import Interval
from ._base import RankSpaceModelMixin, numba_threads
from ._parameterization import HMM_AXES, hmm_backward, hmm_probabilities, init_hmm

END = "<eos>"


def hmm_kernel_inputs(factors, words, dtype):
    """``pi^T U``, ``K = V^T U`` (the only O(m r^2) work) and the emission rows ``W[x]``."""
    U = factors["U"]
    arrays = (factors["start"] @ U, factors["V"].T @ U, factors["W"][words])
    return tuple(np.ascontiguousarray(a, dtype=dtype) for a in arrays)


class RankSpaceHMM(RankSpaceModelMixin):
    """HMM language model with rank-space forward (Yang, Liu & Tu 2022, section 4.3).

    The transition and the emission are one factor, decomposed jointly:
    ``p(z', x | z) = sum_q U[z, q] V[z', q] W[x, q]`` (the word is emitted
    from the rank variable). The forward pass runs over rank vectors with
    ``K = V^T U``, O(T r^2) per sentence whatever the number of states. Every
    sentence is an independent sequence ending with an ``<eos>`` token.

    Parameters
    ----------
    n_states : int
        Number of hidden states m.
    rank : int
        Rank r of the decomposition.
    parameterization : {"neural", "direct"}
        ``"neural"``: state and word embeddings, a projection shared by U and
        V, residual MLPs for the start and emission factors (the paper's
        appendix B); ``"direct"``: a free softmax logit per probability.
    embedding_dim : int
        Width of the embeddings (neural only).
    max_length : int or None
        Training sentences longer than this many words are skipped.
    batch_size : int
        Sentences per gradient step; a batch holds sentences of one length.
    learning_rate : float
        Adam step size (betas 0.9, 0.999).
    n_epochs, max_vocabulary, min_frequency, n_iter_no_change, validation_fraction, max_grad_norm, warm_start, random_state, verbose, n_jobs
        As for :class:`RankSpacePCFG`.

    Attributes
    ----------
    factors_ : dict of ndarray
        ``start`` (m,), ``U`` (m, r), ``V`` (m, r), ``W`` (vocabulary size, r).
    vocabulary_ : list of str
        Row ``i`` of ``W`` is word ``vocabulary_[i]``; it holds ``<unk>`` and ``<eos>``.
    word_index_ : dict
        Word -> its position in ``vocabulary_``, built once with it.
    params_, history_, n_iter_ :
        As for :class:`RankSpacePCFG`.
    """

    _parameter_constraints = {
        **RankSpaceModelMixin._parameter_constraints,
        "n_states": [Interval(Integral, 1, None, closed="left")],
        "max_length": [Interval(Integral, 1, None, closed="left"), None],
    }

    _min_length = 2  # one word and <eos>
    _betas = (0.9, 0.999)
    _factor_axes = HMM_AXES

    def __init__(
        self,
        n_states=128,
        rank=64,
        parameterization="neural",
        embedding_dim=256,
        max_length=None,
        batch_size=16,
        learning_rate=1e-3,
        n_epochs=10,
        max_vocabulary=10000,
        min_frequency=1,
        n_iter_no_change=5,
        validation_fraction=None,
        max_grad_norm=5.0,
        warm_start=False,
        random_state=None,
        verbose=0,
        n_jobs=None,
    ):
        self.n_states = n_states
        self.rank = rank
        self.parameterization = parameterization
        self.embedding_dim = embedding_dim
        self.max_length = max_length
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.n_epochs = n_epochs
        self.max_vocabulary = max_vocabulary
        self.min_frequency = min_frequency
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.max_grad_norm = max_grad_norm
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    def _with_end(self, sentence):
        return list(sentence) + [END]

    def _max_encoded_length(self):
        return np.inf if self.max_length is None else self.max_length + 1

    def _init_params(self, n_words, rng):
        return init_hmm(self.parameterization, self.n_states, self.rank, n_words, self.embedding_dim, rng)

    def _probabilities(self, params):
        return hmm_probabilities(self.parameterization, params)

    def _backward(self, params, probs, cache, prob_grads):
        return hmm_backward(self.parameterization, params, probs, cache, prob_grads)

    def _batch_gradients(self, probs, words):
        start_rank, K, emit = hmm_kernel_inputs(probs, words, np.float32)
        log_p, scaled, step_log = hmm_rank_forward(start_rank, K, emit)
        start_rank_grad, K_grad, emit_grad = (
            np.asarray(g, np.float64) for g in hmm_rank_backward(start_rank, K, emit, scaled, step_log)
        )
        U, V, start = probs["U"], probs["V"], probs["start"]
        W_grad = np.zeros_like(probs["W"])
        np.add.at(W_grad, words.ravel(), emit_grad.reshape(-1, emit_grad.shape[-1]))
        return log_p, {
            "start": U @ start_rank_grad,
            "U": V @ K_grad + np.outer(start, start_rank_grad),
            "V": U @ K_grad.T,
            "W": W_grad,
        }

    def _batch_log_likelihoods(self, words):
        return hmm_rank_forward(*hmm_kernel_inputs(self.factors_, words, np.float64))[0]

    def perplexity(self, X):
        """Per-token perplexity, ``<eos>`` tokens included, each sentence an independent sequence."""
        check_is_fitted(self, "factors_")
        encoded = self._checked_encoding(X)
        return perplexity(self._log_likelihoods(encoded), np.array([len(s) for s in encoded]))

    def predict(self, X):
        """Most likely hidden state of every word (the state that emits it), one int array per sentence."""
        check_is_fitted(self, "factors_")
        encoded = self._checked_encoding(X)
        f = self.factors_
        with np.errstate(divide="ignore"):
            log_start = np.log(f["start"])
        with numba_threads(self.n_jobs):
            return [hmm_state_viterbi(log_start, f["U"], f["V"], np.ascontiguousarray(f["W"][s]))[:-1] for s in encoded]

    @classmethod
    def _sizes_and_shapes(cls, factors, vocabulary):
        if END not in vocabulary:
            raise ValueError(f"the vocabulary must contain the end-of-sentence token {END!r}")
        m, rank = factors["U"].shape
        shapes = {"start": (m,), "U": (m, rank), "V": (m, rank), "W": (len(vocabulary), rank)}
        return {"n_states": m, "rank": rank}, shapes
