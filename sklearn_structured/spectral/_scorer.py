r"""Spectral estimation of the latent-state dependency model of Dhillon et al. (2012).

The model (the paper's Eq. 2) gives the words of a sentence a probability
given its dependency tree: node i has a hidden state h_i in {1..k}; the root
state is drawn from pi; a child j of head p on side d in {L, R} draws its
state from T_d[:, h_p], all children of p independently given h_p; each word
x_i is drawn from O[:, h_i]. The paper leaves open heads with several
children on one side and the exact counts; this module uses the following
version, which is exact in the population and therefore consistent.

Inside recursion (Eq. 3-4). With beta_i(h) = p(words of the subtree of i | h_i = h),

    beta_p = o(x_p) * prod_j (T_{d_j}^T beta_j)          (elementwise product)
    p(x | tree) = pi^T beta_root.

Observable representation. Let U (n_words x k) have orthonormal columns
spanning the column space of O, phi(x) = U^T e_x its row for word x, and
G = U^T O (invertible). Because U U^T O = O, the emission vector is linear
in phi: o(x) = G^T phi(x). Represent each inside vector by
u_i = G^{-T} beta_i, so beta_i(h) = u_i . g_h. Leaves have u = phi(x).

For a head p with a side-d child j, the child's contribution is the
function h -> (T_d^T beta_j)(h) = u_j . W_d[:, h] with W_d = G T_d: the
expected embedding of a side-d child given the head's state. Multiplying a
function of h_p by it is, in the representation, the matrix

    M_d(u) = G diag(W_d^T u) G^{-1},   so  u_p = prod_j M_{d_j}(u_j)^T phi(x_p)

(the M's commute, so the order of the children is irrelevant), and
p(x | tree) = (G pi) . u_root.

Moments. Take every triple (p, j, v) of a training tree where j is a side-d
child of p and v is another tree neighbour of p (its head or another child),
and let psi_v be the 3k-vector holding phi(x_v) in the block of v's relation
to p (head, left child, right child). Given h_p the three words are
independent, with conditional means g (for x_p), W_d (for x_j) and some V
(3k x k, for psi_v; it depends on the tree shapes of the corpus, which is
harmless because it cancels). With rho the distribution of h_p over the
triples,

    Pair_d      = E[phi_p psi_v^T]             = G diag(rho) V^T
    Triple_d(u) = E[(u . phi_j) phi_p psi_v^T] = G diag(rho) diag(W_d^T u) V^T
    Triple_d(u) Pair_d^+ = G diag(W_d^T u) G^{-1} = M_d(u)

(V^T has full row rank, so Pair_d^+ = (V^T)^+ diag(rho)^{-1} G^{-1}), and
the mean root embedding is E[phi(x_root)] = G pi. Keeping the three
relations in separate blocks matters: averaging the head and child views
into one k-vector can make V nearly singular. Every quantity is a plain
average of products of word embeddings over the training trees, so by the
law of large numbers the plug-in estimate of p(x | tree) converges to the
truth for any fixed (sentence, tree) as the number of training trees grows,
provided U converges to a basis of the column space of O and ``rcond`` is
below the smallest relative singular value of the population Pair_d. These
are the paper's quantities in another arrangement: Pair_d and Triple_d are
its child-parent bigrams Sigma and child-parent-child trigrams K (Section
3.2), the mean root embedding its c_1, and M_d(u) its D(E^T u) (Section 3.3).

U is estimated from word co-occurrences (each word against the word before
it, after it, and its head): every such co-occurrence matrix is O times a
rank-k matrix, so its top-k left singular vectors span the column space of O
in the population. ``embedding="svd"`` takes them from the count matrix;
``embedding="cca"`` from the count matrix scaled by the inverse square roots
of word and context frequencies (as CCA does, which gives rare words their
share of the fit) and maps them back with the square roots of the word
frequencies before orthonormalising, which keeps the same population span.

Estimated probabilities can be zero or negative (sampling noise in the
operators). ``score_samples`` then returns a floor,
``n_tokens * log_floor_per_token_``, where the per-token floor is the lowest
per-token log-probability among the positive estimates on the training
trees; ``score_samples(..., return_flags=True)`` says which pairs were
floored.
"""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import randomized_svd
from sklearn.utils.validation import check_is_fitted

from ..utils import (
    SentenceEstimator,
    check_dependency_data,
    check_sentences,
    encode_corpus,
    fit_vocabularies,
    pack_ragged,
)
from ..utils._compat import Interval, StrOptions, _fit_context
from ._kernels import count_moments, spectral_log_probs


def _corpus_field(token_field):
    """The corpus field read for ``token_field``: forms are modelled lower-cased."""
    return "lower" if token_field == "form" else token_field


def _cooccurrences(ids, heads, offsets, n_words):
    """Counts of (word, context) with contexts: previous word, next word, head word."""
    position = np.arange(ids.shape[0])
    sentence_start = np.repeat(offsets[:-1], np.diff(offsets))
    rows, cols = [], []
    has_prev = position > sentence_start
    rows.append(ids[has_prev])
    cols.append(ids[position[has_prev] - 1])
    has_next = np.zeros_like(has_prev)
    has_next[:-1] = has_prev[1:]
    rows.append(ids[has_next])
    cols.append(n_words + ids[position[has_next] + 1])
    if heads is not None:
        has_head = heads > 0
        rows.append(ids[has_head])
        cols.append(2 * n_words + ids[sentence_start[has_head] + heads[has_head] - 1])
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(n_words, 3 * n_words))


def operators_from_moments(pairs, triples, rcond=1e-15):
    """``operators[d, a, b, :] = triples[d, a, b, :] @ pinv(pairs[d])``, i.e.
    M_d(u)^T w = sum_ab u_a w_b operators[d, a, b, :]. Moments may be sums or
    means alike; singular values of ``pairs[d]`` below ``rcond`` times the
    largest are dropped from the pseudo-inverse."""
    return np.stack([
        np.einsum("abc,cd->abd", triples[d], np.linalg.pinv(pairs[d], rcond=rcond))
        for d in range(2)
    ])


class SpectralTreeScorer(SentenceEstimator):
    """Probability of a sentence given its dependency tree, learned spectrally.

    The latent-state tree model of Dhillon et al. (2012) estimated by the
    method of moments: counts of word embeddings over head-child-neighbour
    triples give observable operators that compute p(words | tree) bottom
    up, consistent for the model (see the module docstring for the
    derivation and :ref:`spectral` in the user guide).

    Parameters
    ----------
    n_components : int, default=10
        Dimension k of the word embedding (the number of hidden states the
        model can represent).
    embedding : {"cca", "svd"}, default="cca"
        How the word embedding U is obtained from word-context counts.
    smoothing : float, default=1.0
        Pseudo-count added to every word and context frequency in the CCA
        scaling (ignored by ``embedding="svd"``); its effect vanishes as the
        corpus grows.
    min_count : int, default=2
        Words seen fewer times share the unknown-word embedding.
    rcond : float, default=0.01
        Singular values of each pair matrix below ``rcond`` times the largest
        are dropped when it is inverted. Real text is not generated by the
        model, and there the pair matrices have a long tail of tiny singular
        values whose inverses swamp the estimate with noise and negative
        values; on data from the model the population values stay well above
        this threshold.
    token_field : str, default="form"
        Token field modelled as the word (``"form"``, ``"lemma"``, ``"upos"``,
        ``"xpos"``); forms are lower-cased. A missing field is read with the
        library's fall-backs (:func:`sklearn_structured.utils.token_values`).
    random_state : int, RandomState instance or None, default=None
        Seeds the randomized SVD.

    Attributes
    ----------
    vocabulary_ : Vocabulary
        The modelled words (lower-cased forms by default) to ids (0 = unknown).
    embedding_ : ndarray of shape (n_words, n_components)
        U, orthonormal columns.
    root_vector_ : ndarray of shape (n_components,)
        Mean embedding of root words (G pi).
    operators_ : ndarray of shape (2, n_components, n_components, n_components)
        ``operators_[d, a, b, :]`` = Triple_d[a, b, :] Pair_d^{-1}; side 0 = left child.
    log_floor_per_token_ : float
        Per-token log-probability given to non-positive estimates.
    n_floored_train_ : int
        Training pairs whose estimate was not positive.
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "embedding": [StrOptions({"cca", "svd"})],
        "smoothing": [Interval(Real, 0, None, closed="left")],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "rcond": [Interval(Real, 0, 1, closed="left")],
        "token_field": [StrOptions({"form", "lemma", "upos", "xpos"})],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=10, embedding="cca", smoothing=1.0, min_count=2,
                 rcond=0.01, token_field="form", random_state=None):
        self.n_components = n_components
        self.embedding = embedding
        self.smoothing = smoothing
        self.min_count = min_count
        self.rcond = rcond
        self.token_field = token_field
        self.random_state = random_state


    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, X_unlabeled=None):
        """Estimate the operators from sentences ``X`` with gold heads ``y``.

        ``X_unlabeled`` (optional list of sentences) adds word-context
        counts to the embedding only.
        """
        sentences, heads = check_dependency_data(X, y, single_root=False)
        extra = [] if X_unlabeled is None else check_sentences(X_unlabeled, name="X_unlabeled")
        field = _corpus_field(self.token_field)
        self.vocabulary_ = fit_vocabularies(sentences + extra, (field,),
                                            min_count=self.min_count)[field]
        n_words = len(self.vocabulary_)
        if self.n_components >= n_words:
            raise ValueError(
                f"n_components={self.n_components} must be smaller than the number of "
                f"word types kept ({n_words}, including the unknown word)"
            )
        ids, offsets = self._encode(sentences)
        flat_heads, _ = pack_ragged(heads)
        counts = _cooccurrences(ids, flat_heads, offsets, n_words)
        if extra:
            extra_ids, extra_offsets = self._encode(extra)
            counts = counts + _cooccurrences(extra_ids, None, extra_offsets, n_words)
        self.embedding_ = self._fit_embedding(counts)

        root_sum, pairs, triples = count_moments(ids, flat_heads, offsets, self.embedding_)
        self.root_vector_ = root_sum / np.count_nonzero(flat_heads == 0)
        self.operators_ = operators_from_moments(pairs, triples, self.rcond)
        log_abs, sign = spectral_log_probs(ids, flat_heads, offsets, self.embedding_,
                                           self.root_vector_, self.operators_)
        positive = sign > 0
        lengths = np.diff(offsets)
        self.n_floored_train_ = int(np.count_nonzero(~positive))
        self.log_floor_per_token_ = (
            float(np.min(log_abs[positive] / lengths[positive])) if positive.any() else -50.0
        )
        return self

    def _encode(self, sentences):
        """Word ids of ``sentences`` laid end to end, and sentence offsets."""
        field = _corpus_field(self.token_field)
        corpus = encode_corpus(sentences, {field: self.vocabulary_})
        return corpus[field], corpus.offsets

    def _fit_embedding(self, counts):
        k = self.n_components
        if self.embedding == "svd":
            left, _, _ = randomized_svd(counts, k, random_state=self.random_state)
            return np.ascontiguousarray(left)
        word_freq = np.asarray(counts.sum(axis=1)).ravel() + self.smoothing
        context_freq = np.asarray(counts.sum(axis=0)).ravel() + self.smoothing
        scaled = sp.diags(1.0 / np.sqrt(word_freq)) @ counts @ sp.diags(1.0 / np.sqrt(context_freq))
        left, _, _ = randomized_svd(scaled, k, random_state=self.random_state)
        basis, _ = np.linalg.qr(np.sqrt(word_freq)[:, None] * left)
        return np.ascontiguousarray(basis)

    def _estimates(self, X, y):
        check_is_fitted(self)
        sentences, heads = check_dependency_data(X, y, single_root=False)
        # n-best lists repeat each sentence object many times: encode it once
        first = {}
        for s in sentences:
            first.setdefault(id(s), s)
        distinct = list(first.values())
        ids, offsets = self._encode(distinct)
        position = {id(s): k for k, s in enumerate(distinct)}
        ids, offsets = pack_ragged([ids[offsets[k]:offsets[k + 1]]
                                    for k in (position[id(s)] for s in sentences)])
        flat_heads, _ = pack_ragged(heads)
        log_abs, sign = spectral_log_probs(ids, flat_heads, offsets, self.embedding_,
                                           self.root_vector_, self.operators_)
        return log_abs, sign, np.diff(offsets)

    def score_samples(self, X, y, return_flags=False):
        """log p_hat(words | tree) for each (sentence, heads) pair.

        Non-positive estimates get ``n_tokens * log_floor_per_token_``; with
        ``return_flags=True`` a boolean array marking them is returned too.
        """
        log_abs, sign, lengths = self._estimates(X, y)
        floored = sign <= 0
        log_prob = np.where(floored, lengths * self.log_floor_per_token_, log_abs)
        return (log_prob, floored) if return_flags else log_prob

    def score(self, X, y):
        """Mean log-likelihood per token (natural log) of the pairs ``(X, y)``."""
        log_prob = self.score_samples(X, y)
        return float(log_prob.sum() / sum(len(s) for s in X))
