"""RankSpaceHMM: a hidden Markov language model with a jointly decomposed transition-emission factor."""

from contextlib import nullcontext
from numbers import Integral, Real

import numpy as np
from threadpoolctl import threadpool_limits

from ..kernels.rank_space import add_rows, hmm_rank_backward, hmm_rank_forward, hmm_state_viterbi
from ..metrics import perplexity
from ..utils._base import DEPRECATED, check_fitted
from ..utils._compat import Interval
from ..utils._threads import run_in_threads, thread_count
from ._base import RankSpaceModelMixin, numba_threads, token_batches
from ._parameterization import HMM_AXES, hmm_backward, hmm_dropout_masks, hmm_probabilities, init_hmm

END = "<eos>"
# the fewest tokens of a share of a batch's passes that the threads run (see _batch_gradients)
_SHARE_TOKENS = 2048


def time_major_batch(sentences):
    """``(words, lengths, order)`` for :func:`hmm_rank_forward`: the word ids
    ``(T, b)``, time first, of the sentences sorted by decreasing length (padded
    with id 0), their lengths, and ``order[k]``, the position in ``sentences``
    of column ``k``."""
    lengths = np.array([len(s) for s in sentences])
    order = np.argsort(-lengths, kind="stable")
    words = np.zeros((lengths.max(), len(sentences)), np.int64)
    for column, i in enumerate(order):
        words[: lengths[i], column] = sentences[i]
    return words, lengths[order], order


def hmm_kernel_inputs(factors, dtype):
    """``pi^T U`` and ``K = V^T U``, the O(m r^2) work of the forward pass: once per
    training batch, once per scoring call."""
    U = factors["U"]
    return tuple(np.ascontiguousarray(a, dtype=dtype) for a in (factors["start"] @ U, factors["V"].T @ U))


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
    batch_tokens : int or None
        When given, batches are made by token count instead (``batch_size`` is
        then not used): sentences of near lengths, ``<eos>`` tokens included,
        up to this many tokens a batch. The per-batch work, O(m r^2) for the
        parameterisation and ``V^T U``, is then paid once per that many tokens.
    learning_rate : float
        Adam step size (betas 0.9, 0.999).
    n_jobs : int or None
        Threads: a batch of at least twice 2,048 tokens runs its forward and
        backward passes in shares of its sentences on them (a power of two of
        shares, of at least 2,048 tokens each), and the other matrix products
        run on as many BLAS threads. The shares depend on the batch alone, not
        on ``n_jobs``.
    dropout : float
        Fraction of entries every training step drops, drawn afresh per step
        (the reference implementation's regulariser, 0.1 there): of the U and
        V logits, so that the step trains on transitions renormalised without
        them, and (neural only) of the start embeddings. Scoring, decoding
        and ``factors_`` use the whole model.
    lr_decay, lr_patience, n_epochs, max_vocabulary, min_count, n_iter_no_change, validation_fraction, max_grad_norm, warm_start, random_state, verbose, min_frequency
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
        "dropout": [Interval(Real, 0, 1, closed="left")],
    }

    _min_length = 2  # one word and <eos>
    _same_length_batches = False
    _betas = (0.9, 0.999)
    _factor_axes = HMM_AXES

    def __init__(
        self,
        n_states=128,
        *,
        rank=64,
        parameterization="neural",
        embedding_dim=256,
        max_length=None,
        batch_size=16,
        batch_tokens=None,
        learning_rate=1e-3,
        lr_decay=None,
        lr_patience=2,
        n_epochs=10,
        max_vocabulary=10000,
        min_count=1,
        n_iter_no_change=5,
        validation_fraction=None,
        max_grad_norm=5.0,
        warm_start=False,
        random_state=None,
        verbose=0,
        n_jobs=None,
        dropout=0.0,
        min_frequency=DEPRECATED,
    ):
        self.n_states = n_states
        self.dropout = dropout
        super().__init__(**self._shared(locals()))

    def _with_end(self, sentence):
        return list(sentence) + [END]

    def _max_encoded_length(self):
        return np.inf if self.max_length is None else self.max_length + 1

    def _init_params(self, n_words, rng):
        return init_hmm(self.parameterization, self.n_states, self.rank, n_words, self.embedding_dim, rng)

    def _probabilities(self, params):
        return hmm_probabilities(self.parameterization, params)

    def _training_probabilities(self, params, rng):
        if not self.dropout:
            return self._probabilities(params)
        masks = hmm_dropout_masks(self.parameterization, params, self.dropout, rng)
        return hmm_probabilities(self.parameterization, params, masks)

    def _backward(self, params, probs, cache, prob_grads):
        return hmm_backward(self.parameterization, params, probs, cache, prob_grads)

    def _make_batch(self, sentences):
        return time_major_batch(sentences)

    def _batch_gradients(self, probs, batch, weight):
        words, lengths, order = batch
        U, V, W, start = probs["U"], probs["V"], probs["W"], probs["start"]
        start_rank, K = hmm_kernel_inputs(probs, U.dtype)
        # A large batch is cut into shares of every n-th sequence (each still sorted by
        # length, and about as long), whose passes run on the threads, each on one BLAS
        # thread, so that the work on rows between the products is parallel too. The
        # shares depend on the batch alone, so that the sums do not depend on n_jobs; a
        # power of two of them keeps two or four threads equally busy.
        most = min(len(lengths), max(1, int(lengths.sum()) // _SHARE_TOKENS))
        n_shares = 1 << (most.bit_length() - 1)
        shares = [np.arange(k, len(lengths), n_shares) for k in range(n_shares)]
        n_threads = min(thread_count(self.n_jobs), n_shares)

        def passes(columns):
            share_words = words[:lengths[columns[0]], columns]
            share_lengths = lengths[columns]
            emit = W[share_words]
            log_p, *forward = hmm_rank_forward(start_rank, K, emit, share_lengths)
            return share_words, log_p, hmm_rank_backward(K, emit, share_lengths, *forward)

        with threadpool_limits(1, "blas") if n_threads > 1 else nullcontext():
            results = run_in_threads(passes, [(columns,) for columns in shares], n_threads)
        log_p_in_order = np.empty(len(lengths))
        start_rank_grad, K_grad = np.zeros_like(start_rank), np.zeros_like(K)
        W_grad = np.zeros_like(W)
        for columns, (share_words, log_p, (share_start_grad, share_K_grad, emit_grad)) in zip(
                shares, results):
            log_p_in_order[order[columns]] = log_p
            start_rank_grad += share_start_grad
            K_grad += share_K_grad
            # the weight goes on the emission rows as they are added up
            add_rows(W_grad, share_words.reshape(-1), emit_grad.reshape(-1, emit_grad.shape[-1]),
                     weight)
        # and on the small arrays, before the products with the m-row factors
        start_rank_grad *= weight
        K_grad *= weight
        U_grad = V @ K_grad
        U_grad += np.outer(start, start_rank_grad)
        return log_p_in_order, {"start": U @ start_rank_grad, "U": U_grad, "V": U @ K_grad.T, "W": W_grad}

    def _scoring_inputs(self):
        return (*hmm_kernel_inputs(self.factors_, np.float64), self.factors_["W"])

    def _scoring_batches(self, lengths):
        return token_batches(lengths, 4096)

    def _batch_log_likelihoods(self, inputs, batch):
        start_rank, K, W = inputs
        words, lengths, order = batch
        log_p = np.empty(len(lengths))
        log_p[order] = hmm_rank_forward(start_rank, K, W[words], lengths)[0]
        return log_p

    def perplexity(self, X):
        """Per-token perplexity, ``<eos>`` tokens included, each sentence an independent sequence."""
        check_fitted(self, "factors_")
        encoded = self._checked_encoding(X)
        return perplexity(self._log_likelihoods(encoded), np.array([len(s) for s in encoded]))

    def predict(self, X):
        """Most likely hidden state of every word (the state that emits it), one int array per sentence."""
        check_fitted(self, "factors_")
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
