r"""The latent-state dependency model of Dhillon et al. (2012): spectral estimation and EM.

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

The spectral estimator computes p(words | tree) bottom up with observable
operators estimated from moments of word embeddings over head-child-neighbour
triples; :mod:`._moments` derives them and estimates them.

Estimated probabilities can be zero or negative (sampling noise, and on real
text a model that does not hold); ``nonpositive_share_`` is their share on
the training trees. ``score_samples`` of the spectral estimator gives them a
floor, ``n_tokens * log_floor_per_token_``, where the per-token floor is the
lowest per-token log-probability among the positive estimates on the
training trees; ``score_samples(..., return_flags=True)`` says which pairs
were floored.

Maximum likelihood. ``estimator="em"`` fits pi, T and O by EM on the given
trees (the E-step is inside-outside on each tree, O(n k^2),
:func:`sklearn_structured.kernels.latent_tree.expected_counts`), from a
random start; ``estimator="spectral+em"`` starts EM from the emissions read
off the spectral estimate (:func:`._moments.spectral_em_start`), with flat
pi and T.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..kernels.latent_tree import exact_log_probs, expected_counts
from ..metrics import is_punctuation
from ..utils import (
    EpochResult,
    EpochTrainer,
    SentenceEstimator,
    check_dependency_data,
    check_sentences,
    encode_corpus,
    fit_vocabularies,
    map_ranges,
    pack_ragged,
)
from ..utils._compat import Interval, StrOptions, _fit_context
from ._kernels import spectral_log_probs
from ._moments import (
    cooccurrences,
    estimate_operators,
    simplex_columns,
    spectral_em_start,
    word_embedding,
)


def _corpus_field(token_field):
    """The corpus field read for ``token_field``: forms are modelled lower-cased."""
    return "lower" if token_field == "form" else token_field


def strip_punctuation_from_trees(sentences, heads):
    """Sentences without their punctuation tokens (as :func:`is_punctuation`
    decides) and trees over the words kept.

    A kept word whose head is removed is attached to its nearest kept
    ancestor, or to the root (0) when there is none, so a sentence can end
    with several roots or with no words. Pairs that share a sentence object
    (an n-best list) share the stripped sentence object too.
    """
    stripped, keep = {}, {}
    for sentence in sentences:
        if id(sentence) not in keep:
            mask = np.array([not is_punctuation(t) for t in sentence], dtype=bool)
            keep[id(sentence)] = mask
            stripped[id(sentence)] = [t for t, kept in zip(sentence, mask) if kept]
    kept = np.concatenate([keep[id(s)] for s in sentences]) if sentences else np.zeros(0, dtype=bool)
    flat, offsets = pack_ragged(heads)
    first = np.repeat(offsets[:-1], np.diff(offsets))
    up = np.where(flat > 0, first + flat - 1, -1)  # flat index of the head, -1 for the root
    # pointer jumping: heads that are removed are replaced by their own heads
    # until every head is kept or the root; trees have no cycles, so this ends
    climb = (up >= 0) & ~kept[np.maximum(up, 0)]
    while climb.any():
        up[climb] = up[up[climb]]
        climb = (up >= 0) & ~kept[np.maximum(up, 0)]
    rank = np.cumsum(kept) - 1  # flat index among the kept words
    new_offsets = np.concatenate([[0], np.cumsum([len(stripped[id(s)]) for s in sentences])])
    sentence_of = np.repeat(np.arange(len(heads)), np.diff(offsets))
    new_heads = np.where(up >= 0, rank[np.maximum(up, 0)] - new_offsets[sentence_of] + 1, 0)[kept]
    return ([stripped[id(s)] for s in sentences],
            [new_heads[new_offsets[i]:new_offsets[i + 1]] for i in range(len(heads))])


class _EMIterations(EpochTrainer):
    """EM on the given trees: one iteration is an E-step (inside-outside over
    every training sentence, on threads) and an M-step (normalised expected
    counts plus ``pseudo_count``)."""

    def __init__(self, scorer, train, n_tokens, params, validation_tokens):
        self.scorer = scorer
        self.train = train
        self.n_tokens = n_tokens
        self.params = params
        self.validation_tokens = validation_tokens
        self.log_likelihoods = []
        self.validation_log_likelihoods = []
        self.converged = False

    def train_epoch(self):
        if self.converged:
            return None
        ids, heads, offsets = self.train
        params = self.params

        def e_step(first, last):
            return expected_counts(ids, heads, offsets, first, last, *params)

        parts = map_ranges(e_step, len(offsets) - 1, self.scorer.n_jobs, work=np.diff(offsets))
        log_lik, root, transition, emission = (sum(part[i] for part in parts) for i in range(4))
        per_token = log_lik / self.n_tokens
        a = self.scorer.pseudo_count
        # the tiny floor only keeps a never-used state's column from being 0 / 0
        tiny = np.finfo(float).tiny
        self.params = (simplex_columns((root + a)[:, None], tiny)[:, 0],
                       np.stack([simplex_columns(transition[d] + a, tiny) for d in range(2)]),
                       simplex_columns(emission + a, tiny))
        previous = self.log_likelihoods[-1] if self.log_likelihoods else -np.inf
        self.log_likelihoods.append(per_token)
        self.converged = per_token - previous < self.scorer.tol * abs(per_token)
        if self.validation_tokens is not None:
            ids_val, heads_val, offsets_val, n_val = self.validation_tokens
            self.validation_log_likelihoods.append(
                float(exact_log_probs(ids_val, heads_val, offsets_val, *self.params).sum() / n_val))
        label = f"iteration {len(self.log_likelihoods)}"
        return EpochResult(label, -per_token)

    def validation_score(self, validation):
        return self.validation_log_likelihoods[-1]


class SpectralTreeScorer(SentenceEstimator):
    """Probability of a sentence given its dependency tree under a hidden-state model.

    The latent-state tree model of Dhillon et al. (2012, Eq. 2), estimated
    by the method of moments (the paper's spectral algorithm: counts of word
    embeddings over head-child-neighbour triples give observable operators
    that compute p(words | tree) bottom up, consistent for the model), by EM
    on the given trees, or by EM started from the spectral estimate (see the
    module docstring and :ref:`spectral` in the user guide).

    Parameters
    ----------
    n_components : int, default=32
        Number of hidden states k (the dimension of the word embedding of
        the spectral estimator). Dhillon et al. used k = 10; on held-out
        EWT training lists the reranker gained more with more states (UAS
        89.29, 89.31, 89.31 and 89.38 at k = 10, 16, 24 and 32 on the mean
        of five seeds, 89.12 without a scorer), at a cost: fitting on EWT
        train takes 210 CPU s against 27 s at k = 10. Needs more word types
        than states.
    estimator : {"spectral", "em", "spectral+em"}, default="spectral+em"
        ``"spectral"``: method of moments only. ``"em"``: EM from a random
        start. ``"spectral+em"``: EM started from the emission matrix read
        off the spectral estimate and projected to valid probabilities,
        with flat root and transition distributions. On held-out EWT
        training lists the two EM estimators rerank alike at k = 10
        (89.292 and 89.293 UAS on the mean of five seeds), so
        ``"spectral+em"`` is the default for what else it does better: it
        converges in fewer iterations, to a higher held-out likelihood,
        and tells trees apart better on synthetic data of treebank size
        (81% of reattachment pairs right against 78%, five seeds; see the
        user guide).
    embedding : {"svd", "cca"}, default="svd"
        How the spectral word embedding U is obtained from word-context
        counts. ``"svd"`` keeps most of the span of the emissions; ``"cca"``
        spreads the fit over rare words and loses more of it at treebank
        size (see the user guide).
    smoothing : float, default=1.0
        Pseudo-count added to every word and context frequency in the CCA
        scaling (ignored by ``embedding="svd"``).
    min_count : int, default=2
        Words seen fewer times share the unknown word.
    rcond : float, default=0.01
        Spectral estimator: canonical correlations (singular values of the
        whitened pair matrices) below ``rcond`` times the largest are
        dropped when the pair matrices are inverted; the rank kept is
        ``rank_``.
    max_iter : int, default=100
        EM iterations at most.
    tol : float, default=1e-4
        EM stops when the training log-likelihood per token improves by less
        than ``tol`` times its absolute value.
    n_init : int, default=2
        EM estimators: number of EM runs, each from its own start (random,
        or the spectral emissions read with other random mixes of the
        operators, which differ little).
    combine_runs : {"mean", "best"}, default="mean"
        EM estimators with ``n_init > 1``: ``"mean"`` keeps every run and
        scores a pair by the mean of their log-probabilities (an ensemble:
        not a normalised probability, but steadier on the trees of one
        sentence); ``"best"`` keeps the run with the highest final training
        log-likelihood.
    pseudo_count : float, default=0.01
        Added to every expected count in EM's M-step (a Dirichlet prior that
        keeps unseen words and transitions possible).
    token_field : str, default="form"
        Token field modelled as the word (``"form"``, ``"lemma"``, ``"upos"``,
        ``"xpos"``); forms are lower-cased. A missing field is read with the
        library's fall-backs (:func:`sklearn_structured.utils.token_values`).
    strip_punctuation : bool, default=False
        Model the words of each sentence without its punctuation tokens
        (:func:`~sklearn_structured.metrics.is_punctuation`), in fitting and
        in scoring, as Dhillon et al. (2012) did: a word attached to a
        punctuation token is read as attached to that token's nearest kept
        ancestor, or to the root when none is kept. Trees that differ
        only in where punctuation attaches then score the same, as they get
        the same UAS. Off by default: on held-out EWT training lists the
        reranker gained less with it (see the user guide).
    n_jobs : int or None, default=None
        Threads for EM's E-step.
    random_state : int, RandomState instance or None, default=None
        Seeds the randomized SVD, the EM start and the eigenvector mix of
        the spectral start.
    verbose : int, default=0
        Print one line per EM iteration (training and, given ``X_val``,
        held-out log-likelihood per token).

    Attributes
    ----------
    vocabulary_ : Vocabulary
        The modelled words (lower-cased forms by default) to ids (0 = unknown).
    embedding_ : ndarray of shape (n_words, n_components)
        Spectral estimators: U, orthonormal columns.
    root_vector_ : ndarray of shape (n_components,)
        Spectral estimators: mean embedding of root words (G pi).
    operators_ : ndarray of shape (2, n_components, n_components, n_components)
        Spectral estimators: ``operators_[d, a, b, :]`` = Triple_d[a, b, :]
        Pair_d^{-1}; side 0 = left child.
    rank_ : ndarray of shape (2,)
        Spectral estimators: rank kept in the inverse of each side's pair
        matrix (at most ``n_components``).
    nonpositive_share_ : float
        Spectral estimators: share of the training trees whose spectral
        estimate is not positive.
    log_floor_per_token_ : float
        ``estimator="spectral"``: per-token log-probability given to
        non-positive estimates.
    start_probs_, transitions_, emissions_ : ndarray
        EM estimators, one row per run kept (all ``n_init`` runs, or the
        best one): pi (n_runs, k), T indexed ``[run, side, child_state,
        head_state]`` (n_runs, 2, k, k) and O indexed ``[run, word, state]``
        (n_runs, n_words, k).
    n_iter_ : int
        EM estimators: iterations run by the most likely run.
    converged_ : bool
        EM estimators: whether the most likely run reached ``tol`` before
        ``max_iter``.
    log_likelihoods_ : list of float
        EM estimators: training log-likelihood per token at the start of each
        iteration of the most likely run (never decreasing for
        ``pseudo_count=0``).
    init_log_likelihoods_ : list of float
        EM estimators: final training log-likelihood per token of each run.
    validation_log_likelihoods_ : list of float
        EM estimators given ``X_val``: held-out log-likelihood per token after
        each iteration of the most likely run.
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "estimator": [StrOptions({"spectral", "em", "spectral+em"})],
        "embedding": [StrOptions({"cca", "svd"})],
        "smoothing": [Interval(Real, 0, None, closed="left")],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "rcond": [Interval(Real, 0, 1, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "combine_runs": [StrOptions({"mean", "best"})],
        "pseudo_count": [Interval(Real, 0, None, closed="left")],
        "token_field": [StrOptions({"form", "lemma", "upos", "xpos"})],
        "strip_punctuation": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, n_components=32, estimator="spectral+em", embedding="svd", smoothing=1.0,
                 min_count=2, rcond=0.01, max_iter=100, tol=1e-4, n_init=2, combine_runs="mean",
                 pseudo_count=0.01, token_field="form", strip_punctuation=False, n_jobs=None,
                 random_state=None, verbose=0):
        self.n_components = n_components
        self.estimator = estimator
        self.embedding = embedding
        self.smoothing = smoothing
        self.min_count = min_count
        self.rcond = rcond
        self.max_iter = max_iter
        self.tol = tol
        self.n_init = n_init
        self.combine_runs = combine_runs
        self.pseudo_count = pseudo_count
        self.token_field = token_field
        self.strip_punctuation = strip_punctuation
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, X_unlabeled=None, *, X_val=None, y_val=None):
        """Estimate the model from sentences ``X`` with gold heads ``y``.

        ``X_unlabeled`` (optional list of sentences) adds word-context
        counts to the spectral embedding only. ``X_val``, ``y_val``
        (optional) are held-out pairs whose log-likelihood EM reports after
        every iteration.
        """
        sentences, heads = self._modelled(*check_dependency_data(X, y, single_root=False))
        extra = [] if X_unlabeled is None else check_sentences(X_unlabeled, name="X_unlabeled")
        if self.strip_punctuation:
            extra = [s for s in ([t for t in s if not is_punctuation(t)] for s in extra) if s]
        if (X_val is None) != (y_val is None):
            raise ValueError("X_val and y_val must be given together")
        field = _corpus_field(self.token_field)
        self.vocabulary_ = fit_vocabularies(sentences + extra, (field,),
                                            min_count=self.min_count)[field]
        n_words = len(self.vocabulary_)
        if self.n_components >= n_words:
            raise ValueError(
                f"n_components={self.n_components} must be smaller than the number of "
                f"word types kept ({n_words}, including the unknown word)"
            )
        rng = check_random_state(self.random_state)
        ids, offsets = self._encode(sentences)
        flat_heads, _ = pack_ragged(heads)
        if self.estimator != "em":
            self._fit_spectral(ids, flat_heads, offsets, extra, rng)
        if self.estimator == "spectral":
            return self
        validation = None
        if X_val is not None:
            val_sentences, val_heads = self._modelled(
                *check_dependency_data(X_val, y_val, single_root=False))
            val_ids, val_offsets = self._encode(val_sentences)
            validation = (val_ids, pack_ragged(val_heads)[0], val_offsets, val_ids.shape[0])
        # EM's local optima tell the trees of one sentence apart unequally well,
        # and the most likely one is not the one that does it best on real
        # trees (see the user guide); averaging several is steadier
        runs = []
        for _ in range(self.n_init):
            if self.estimator == "em":
                start = self._random_start(ids, rng)
            else:
                start = spectral_em_start(self.embedding_, self.root_vector_,
                                          self.operators_, rng)
            run = _EMIterations(self, (ids, flat_heads, offsets), ids.shape[0], start, validation)
            run.run(self.max_iter, name=type(self).__name__, verbose=self.verbose,
                    validation=validation)
            runs.append(run)
        self.init_log_likelihoods_ = [run.log_likelihoods[-1] for run in runs]
        best = runs[int(np.argmax(self.init_log_likelihoods_))]
        kept = [best] if self.combine_runs == "best" else runs
        self.start_probs_, self.transitions_, self.emissions_ = (
            np.stack([run.params[i] for run in kept]) for i in range(3))
        self.n_iter_ = len(best.log_likelihoods)
        self.converged_ = best.converged
        self.log_likelihoods_ = best.log_likelihoods
        if validation is not None:
            self.validation_log_likelihoods_ = best.validation_log_likelihoods
        return self

    def _fit_spectral(self, ids, flat_heads, offsets, extra, rng):
        counts = cooccurrences(ids, flat_heads, offsets, len(self.vocabulary_))
        if extra:
            extra_ids, extra_offsets = self._encode(extra)
            counts = counts + cooccurrences(extra_ids, None, extra_offsets, len(self.vocabulary_))
        self.embedding_ = word_embedding(counts, self.n_components, self.embedding, self.smoothing,
                                         rng)
        self.root_vector_, self.operators_, self.rank_ = estimate_operators(
            ids, flat_heads, offsets, self.embedding_, self.rcond)
        log_abs, sign = spectral_log_probs(ids, flat_heads, offsets, self.embedding_,
                                           self.root_vector_, self.operators_)
        positive = sign > 0
        self.nonpositive_share_ = float(np.mean(~positive))
        if self.estimator == "spectral":
            lengths = np.diff(offsets)
            self.log_floor_per_token_ = (
                float(np.min(log_abs[positive] / lengths[positive])) if positive.any() else -50.0
            )

    def _random_start(self, ids, rng):
        """pi and the columns of T from a flat Dirichlet; each state's emissions
        the word frequencies times a random factor in [0.5, 1.5]."""
        k = self.n_components
        start = rng.dirichlet(np.ones(k))
        transitions = np.stack([rng.dirichlet(np.ones(k), size=k).T for _ in range(2)])
        frequency = np.bincount(ids, minlength=len(self.vocabulary_)) + 1.0
        emissions = simplex_columns(frequency[:, None] * rng.uniform(0.5, 1.5, size=(len(frequency), k)),
                                     0.0)
        return start, transitions, emissions

    def _modelled(self, sentences, heads, keep_empty=False):
        """The (sentence, tree) pairs as the model sees them: with
        ``strip_punctuation``, stripped, and (unless ``keep_empty``) without
        the pairs left with no words, which carry no evidence."""
        if not self.strip_punctuation:
            return sentences, heads
        sentences, heads = strip_punctuation_from_trees(sentences, heads)
        if keep_empty:
            return sentences, heads
        kept = [i for i, s in enumerate(sentences) if s]
        return [sentences[i] for i in kept], [heads[i] for i in kept]

    def _encode(self, sentences):
        """Word ids of ``sentences`` laid end to end, and sentence offsets."""
        field = _corpus_field(self.token_field)
        corpus = encode_corpus(sentences, {field: self.vocabulary_})
        return corpus[field], corpus.offsets

    def _pairs(self, X, y):
        """Packed word ids, heads and offsets of the (sentence, tree) pairs."""
        check_is_fitted(self)
        # a pair left with no words has probability one (log 0.0)
        sentences, heads = self._modelled(*check_dependency_data(X, y, single_root=False),
                                          keep_empty=True)
        # n-best lists repeat each sentence object many times: encode it once
        first = {}
        for s in sentences:
            first.setdefault(id(s), s)
        distinct = list(first.values())
        ids, offsets = self._encode(distinct)
        position = {id(s): k for k, s in enumerate(distinct)}
        ids, offsets = pack_ragged([ids[offsets[k]:offsets[k + 1]]
                                    for k in (position[id(s)] for s in sentences)])
        return ids, pack_ragged(heads)[0], offsets

    def score_samples(self, X, y, return_flags=False):
        """log p_hat(words | tree) for each (sentence, heads) pair.

        With ``estimator="spectral"``, non-positive estimates get
        ``n_tokens * log_floor_per_token_``; with ``return_flags=True`` a
        boolean array marking them is returned too (never set for the EM
        estimators, whose probabilities are always positive).
        """
        ids, heads, offsets = self._pairs(X, y)
        if self.estimator != "spectral":
            log_prob = np.mean([exact_log_probs(ids, heads, offsets, *params) for params in
                                zip(self.start_probs_, self.transitions_, self.emissions_)], axis=0)
            return (log_prob, np.zeros(len(log_prob), dtype=bool)) if return_flags else log_prob
        log_abs, sign = spectral_log_probs(ids, heads, offsets, self.embedding_,
                                           self.root_vector_, self.operators_)
        floored = sign <= 0
        log_prob = np.where(floored, np.diff(offsets) * self.log_floor_per_token_, log_abs)
        return (log_prob, floored) if return_flags else log_prob

    def score(self, X, y):
        """Mean log-likelihood per token (natural log) of the pairs ``(X, y)``;
        with ``strip_punctuation``, per token kept."""
        log_prob = self.score_samples(X, y)
        n_tokens = sum(1 for s in X for t in s if not (self.strip_punctuation and is_punctuation(t)))
        return float(log_prob.sum() / max(n_tokens, 1))
