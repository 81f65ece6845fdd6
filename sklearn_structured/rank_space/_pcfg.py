"""RankSpacePCFG: unsupervised constituency parsing with a CPD-decomposed PCFG."""

from numbers import Integral

import numpy as np

from ..kernels.cky import cky_max_span_sum
from ..kernels.rank_space import add_rows, rank_space_inside, rank_space_outside
from ..utils._base import DEPRECATED, check_fitted
from ..utils._compat import Interval
from ._base import RankSpaceModelMixin, numba_threads, sentence_forms
from ._parameterization import PCFG_AXES, init_pcfg, pcfg_backward, pcfg_probabilities


def pcfg_kernel_inputs(factors, n_nonterminals, words, dtype):
    """The arguments of the rank-space inside and outside kernels for a batch of sentences.

    Bridges a PCFG's probability factors (as :meth:`RankSpacePCFG.get_model`
    returns them) and the kernels of :mod:`sklearn_structured.kernels.rank_space`:
    ``rank_space_inside(*pcfg_kernel_inputs(...))[0]`` is the log-likelihood
    of every sentence. The ``r x r`` matrices ``U^T V_N`` and ``U^T W_N`` are
    the only place the number of nonterminals enters, once per batch.

    Parameters
    ----------
    factors : mapping of str to ndarray
        ``"root"`` (NT,), ``"U"`` (NT, r), ``"V"`` and ``"W"`` (NT + PT, r)
        and ``"emission"`` (PT, vocabulary size), normalised as in
        :class:`RankSpacePCFG`.
    n_nonterminals : int
        NT: the first NT rows of ``V`` and ``W`` are the nonterminals'.
    words : ndarray of shape (batch, n), int
        Word ids (columns of ``"emission"``) of sentences of one length n.
    dtype : numpy dtype
        The float type the kernels compute in (float32 or float64).

    Returns
    -------
    inputs : tuple of ndarray
        ``(leaf, VP, WP, ML, MR, root_rank)``, C-contiguous, in ``dtype``: the
        emission probabilities of every word by preterminal (batch, n, PT),
        the preterminal rows of ``V`` and ``W``, ``U^T V_N``, ``U^T W_N`` and
        ``root @ U``.
    """
    U, V, W = factors["U"], factors["V"], factors["W"]
    nt = n_nonterminals
    leaf = factors["emission"][:, words].transpose(1, 2, 0)
    arrays = (leaf, V[nt:], W[nt:], U.T @ V[:nt], U.T @ W[:nt], factors["root"] @ U)
    return tuple(np.ascontiguousarray(a, dtype=dtype) for a in arrays)


def pcfg_factor_gradients(factors, n_nonterminals, words, kernel_grads):
    """Chain the gradients of the kernels' inputs back to the probability factors.

    The backward step that goes with :func:`pcfg_kernel_inputs`: given the
    gradients of a loss with respect to the kernel inputs (what
    ``rank_space_outside`` returns after ``log Z``'s), the gradients with
    respect to ``root``, ``U``, ``V``, ``W`` and ``emission``.

    Parameters
    ----------
    factors, n_nonterminals, words :
        As given to :func:`pcfg_kernel_inputs`.
    kernel_grads : tuple of ndarray
        Gradients with respect to ``(leaf, VP, WP, ML, MR, root_rank)``.

    Returns
    -------
    gradients : dict of str to ndarray
        One array per factor, of the factor's shape.
    """
    leaf_grad, VP_grad, WP_grad, ML_grad, MR_grad, root_rank_grad = kernel_grads
    U, V, W, root = factors["U"], factors["V"], factors["W"], factors["root"]
    nt = n_nonterminals
    # scatter-add by word into a (vocabulary, PT) array: rows are contiguous that way
    emission_grad_t = np.zeros(factors["emission"].shape[::-1], leaf_grad.dtype)
    add_rows(emission_grad_t, words.reshape(-1), leaf_grad.reshape(-1, leaf_grad.shape[-1]), 1.0)
    U_grad = V[:nt] @ ML_grad.T
    U_grad += W[:nt] @ MR_grad.T
    U_grad += np.outer(root, root_rank_grad)
    return {
        "root": U @ root_rank_grad,
        "U": U_grad,
        "V": np.concatenate([U @ ML_grad, VP_grad]),
        "W": np.concatenate([U @ MR_grad, WP_grad]),
        "emission": np.ascontiguousarray(emission_grad_t.T),
    }


def spans_to_brackets(tokens, spans):
    """Render a binary tree given as spans (fence-post pairs) as a bracketed string.

    >>> spans_to_brackets(["a", "b", "c"], [(0, 3), (0, 1), (1, 3), (1, 2), (2, 3)])
    '(a (b c))'
    """
    wide = {(int(i), int(j)) for i, j in spans if j - i >= 2}

    def is_node(i, j):
        return j - i == 1 or (i, j) in wide

    def render(i, j):
        if j - i == 1:
            return str(tokens[i])
        k = next(k for k in range(i + 1, j) if is_node(i, k) and is_node(k, j))
        return f"({render(i, k)} {render(k, j)})"

    return render(0, len(tokens))


def right_branching_spans(n):
    """Spans of the right-branching binary tree over ``n`` words (width >= 2, whole sentence included)."""
    return [(i, n) for i in range(n - 1)]


def left_branching_spans(n):
    """Spans of the left-branching binary tree over ``n`` words (width >= 2, whole sentence included)."""
    return [(0, j) for j in range(2, n + 1)]


def random_binary_spans(n, rng):
    """Spans of a binary tree over ``n`` words with each split point drawn uniformly.

    ``rng`` is a ``numpy.random.Generator``; the baseline of unsupervised parsing papers.
    """
    spans, stack = [], [(0, n)]
    while stack:
        i, j = stack.pop()
        if j - i >= 2:
            spans.append((i, j))
            k = int(rng.integers(i + 1, j))
            stack += [(i, k), (k, j)]
    return spans


class RankSpacePCFG(RankSpaceModelMixin):
    """PCFG with a CPD-decomposed rule tensor and rank-space inference (Yang, Liu & Tu 2022).

    Binary rules ``A -> B C`` have probability ``sum_q U[A, q] V[B, q] W[C, q]``
    (a Bayesian network A -> q -> (B, C)). Nonterminals are the root and the
    parents; preterminals emit the words; every single word is a preterminal
    and every wider span a nonterminal. Learning maximises the likelihood of
    raw sentences with Adam; the gradient comes from a hand-written rank-space
    outside pass. Parsing is minimum-Bayes-risk: the binary tree with the
    largest sum of span marginals.

    Parameters
    ----------
    n_nonterminals, n_preterminals : int
        Numbers of symbols.
    rank : int
        Rank of the decomposition; inference costs O(n^3 r + n^2 r^2) per
        sentence whatever the number of symbols.
    parameterization : {"neural", "direct"}
        ``"neural"``: symbol embeddings, residual MLPs and a rank projection
        shared by U, V and W (the paper's appendix A); ``"direct"``: a free
        softmax logit per probability.
    embedding_dim : int
        Width of the embeddings and MLPs (neural only).
    max_length : int or None
        Training sentences longer than this are skipped (the reference trains
        on sentences of up to 40 words). Sentences of one word are skipped too:
        the grammar generates sentences of two or more words.
    batch_size : int
        Sentences per gradient step; a batch holds sentences of one length.
    batch_tokens : int or None
        When given, batches are made by token count instead (``batch_size`` is
        then not used): sentences of one length, up to this many words a batch.
    learning_rate : float
        Adam step size (betas 0.75, 0.999 as in the reference).
    lr_decay : float or None
        With validation data: multiply the learning rate by this after every
        ``lr_patience`` epochs without a better validation likelihood (the
        reference HMM uses 0.5 after 2). The rate in use is in ``history_``.
    lr_patience : int
        See ``lr_decay``.
    n_epochs : int
        Passes over the training sentences.
    max_vocabulary, min_count : int
        The vocabulary is the ``max_vocabulary`` most frequent training words
        seen at least ``min_count`` times; other words (in training too)
        become ``<unk>``.
    n_iter_no_change : int or None
        With validation data (``X_val`` given to ``fit``, or
        ``validation_fraction``): stop after this many epochs without a
        better validation likelihood (the best parameters are kept). None
        runs every epoch and keeps the last.
    validation_fraction : float or None
        Hold out this fraction of the training sentences (drawn with
        ``random_state``) as validation data.
    max_grad_norm : float
        Gradients are clipped to this global norm.
    warm_start : bool
        When True, ``fit`` continues from the previous fit (parameters, Adam
        moments, vocabulary) instead of starting afresh.
    random_state : int, RandomState or None
    verbose : int
        Print one progress line per epoch on standard error: seconds, the
        training negative log-likelihood per token (the loss) and, with
        validation data, the validation log-likelihood per token (what
        :meth:`score` returns).
    n_jobs : int or None
        Threads for the kernels' loops over the spans of a batch.
    min_frequency : int, default="deprecated"
        The old name of ``min_count``. Deprecated; it will be removed in the
        next release.

    Attributes
    ----------
    factors_ : dict of ndarray
        ``root`` (NT,), ``U`` (NT, r), ``V`` and ``W`` (NT + PT, r), ``emission``
        (PT, vocabulary size); see :meth:`get_model`.
    vocabulary_ : list of str
        Column ``i`` of the emissions is word ``vocabulary_[i]``; ``vocabulary_[0]`` is ``<unk>``.
    word_index_ : dict
        Word -> its position in ``vocabulary_``, built once with it.
    params_ : dict of ndarray or None
        The free parameters (None for a model made by :meth:`from_model`).
    history_ : list of dict
        One record per epoch (``warm_start`` continues it): ``epoch``,
        ``label``, ``loss`` (the training negative log-likelihood per token),
        ``seconds``, ``elapsed`` and ``validation_score`` (the validation
        log-likelihood per token, or None).
    n_iter_ : int
        Epochs run.
    """

    _parameter_constraints = {
        **RankSpaceModelMixin._parameter_constraints,
        "n_nonterminals": [Interval(Integral, 1, None, closed="left")],
        "n_preterminals": [Interval(Integral, 1, None, closed="left")],
        "max_length": [Interval(Integral, 2, None, closed="left"), None],
    }

    _min_length = 2
    _same_length_batches = True  # the inside kernel's charts take sentences of one length
    _betas = (0.75, 0.999)
    _factor_axes = PCFG_AXES

    def __init__(
        self,
        n_nonterminals=30,
        n_preterminals=60,
        *,
        rank=100,
        parameterization="neural",
        embedding_dim=256,
        max_length=40,
        batch_size=16,
        batch_tokens=None,
        learning_rate=2e-3,
        lr_decay=None,
        lr_patience=2,
        n_epochs=10,
        max_vocabulary=10000,
        min_count=1,
        n_iter_no_change=5,
        validation_fraction=None,
        max_grad_norm=3.0,
        warm_start=False,
        random_state=None,
        verbose=0,
        n_jobs=None,
        min_frequency=DEPRECATED,
    ):
        self.n_nonterminals = n_nonterminals
        self.n_preterminals = n_preterminals
        super().__init__(**self._shared(locals()))

    # ---- model-specific pieces of the training loop ------------------------------------
    def _max_encoded_length(self):
        return np.inf if self.max_length is None else self.max_length

    def _init_params(self, n_words, rng):
        return init_pcfg(
            self.parameterization,
            self.n_nonterminals,
            self.n_preterminals,
            self.rank,
            n_words,
            self.embedding_dim,
            rng,
        )

    def _probabilities(self, params):
        return pcfg_probabilities(self.parameterization, params, self.n_nonterminals)

    def _backward(self, params, probs, cache, prob_grads):
        return pcfg_backward(self.parameterization, params, probs, cache, prob_grads, self.n_nonterminals)

    def _make_batch(self, sentences):
        return np.stack(sentences)

    def _batch_gradients(self, probs, words, weight):
        inputs = pcfg_kernel_inputs(probs, self.n_nonterminals, words, probs["U"].dtype)
        log_z, *charts = rank_space_inside(*inputs)
        kernel_grads = [weight * g for g in rank_space_outside(*inputs, *charts)[1:]]
        return log_z, pcfg_factor_gradients(probs, self.n_nonterminals, words, kernel_grads)

    def _scoring_inputs(self):
        return self.factors_

    def _scoring_batches(self, lengths):
        """Sentences of one length, each (batch, n + 1, n, rank) chart near 4 million
        entries however long the sentences."""
        batches = []
        for length in np.unique(lengths):
            members = np.flatnonzero(lengths == length)
            size = int(max(1, min(64, 4_000_000 // (length * length * self.rank))))
            batches += [members[start : start + size] for start in range(0, len(members), size)]
        return batches

    def _batch_log_likelihoods(self, factors, words):
        return rank_space_inside(*pcfg_kernel_inputs(factors, self.n_nonterminals, words, np.float64))[0]

    # ---- parsing ---------------------------------------------------------------------
    def predict_marginals(self, X):
        """Posterior probability of every span: a list of ``(n + 1, n + 1)`` arrays.

        Entry ``[i, j]`` (``j - i >= 2``) is the probability that words ``i..j-1``
        form a constituent; single words (always constituents) are left at 0.
        """
        check_fitted(self, "factors_")
        encoded = self._encode(sentence_forms(X))
        out = [np.zeros((len(s) + 1, len(s) + 1)) for s in encoded]
        lengths = np.array([len(s) for s in encoded])
        parsed = np.flatnonzero(lengths >= 2)
        with numba_threads(self.n_jobs):
            for batch in self._scoring_batches(lengths[parsed]):
                words = self._make_batch([encoded[i] for i in parsed[batch]])
                inputs = pcfg_kernel_inputs(self.factors_, self.n_nonterminals, words, np.float64)
                _, *charts = rank_space_inside(*inputs)
                marginals = rank_space_outside(*inputs, *charts)[0]
                for row, i in enumerate(parsed[batch]):
                    out[i] = marginals[row]
        return out

    def predict(self, X):
        """Minimum-Bayes-risk binary trees: for each sentence a list of ``(i, j)`` spans.

        The spans are fence-post pairs in pre-order, the whole sentence and the
        single words included; :func:`spans_to_brackets` renders them.
        """
        return [[tuple(span) for span in cky_max_span_sum(m)[1].tolist()] for m in self.predict_marginals(X)]

    # ---- the grammar as arrays ---------------------------------------------------------
    @classmethod
    def _sizes_and_shapes(cls, factors, vocabulary):
        n_nt, rank = factors["U"].shape
        n_pt = factors["emission"].shape[0]
        shapes = {"root": (n_nt,), "U": (n_nt, rank), "V": (n_nt + n_pt, rank),
                  "W": (n_nt + n_pt, rank), "emission": (n_pt, len(vocabulary))}
        return {"n_nonterminals": n_nt, "n_preterminals": n_pt, "rank": rank}, shapes
