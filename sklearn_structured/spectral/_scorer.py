r"""The latent-state dependency model of Dhillon et al. (2012), estimated by
the method of moments or by EM on the given trees.

The model (the paper's Eq. 2) gives the words of a sentence a probability
given its dependency tree: node i has a hidden state h_i in {1..k}; the root
state is drawn from pi; a child j of head p on side d in {L, R} draws its
state from T_d[:, h_p], all children of p independently given h_p; each word
x_i is drawn from O[:, h_i]. The paper leaves open heads with several
children on one side and the exact counts; this package uses a version that
is exact in the population and therefore consistent. With
beta_i(h) = p(words of the subtree of i | h_i = h), the inside recursion
(Eq. 3-4) is

    beta_p = o(x_p) * prod_j (T_{d_j}^T beta_j)          (elementwise product)
    p(x | tree) = pi^T beta_root.

Method of moments. ``method="spectral"`` estimates observable operators
from moments of word embeddings over head-child-neighbour triples
(:mod:`._moments` derives them) and computes p(words | tree) bottom up with
them. Estimated probabilities can be zero or negative (sampling noise, and
on real text a model that does not hold); ``nonpositive_share_`` is their
share on the training trees. ``score_samples`` gives them a floor,
``n_tokens * log_floor_per_token_``, where the per-token floor is the lowest
per-token log-probability among the positive estimates on the training
trees; ``score_samples(..., return_flags=True)`` says which pairs were
floored.

Maximum likelihood. ``method="em"`` fits pi, T and O by EM on the given
trees (the E-step is inside-outside on each tree, O(n k^2),
:func:`sklearn_structured.kernels.latent_tree.expected_counts`), from a
random start; ``method="spectral+em"`` starts EM from the emissions read
off the spectral estimate (:func:`._moments.spectral_em_start`), with flat
pi and T.
"""

from contextlib import nullcontext
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..fields import FORM, LEMMA, UPOS, XPOS
from ..kernels.latent_tree import exact_log_probs, expected_counts
from ..metrics import is_punctuation
from ..utils import (
    SentenceEstimator,
    check_dependency_data,
    check_sentences,
    encode_corpus,
    fit_vocabularies,
    map_ranges,
    pack_ragged,
)
from ..utils._compat import Interval, StrOptions, _fit_context
from ..utils._training import (
    EARLY_STOPPING_CONSTRAINTS,
    EpochResult,
    EpochTrainer,
    split_validation,
    training_step,
)
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


class _SpectralEstimate(EpochTrainer):
    """The method of moments, run through the shared loop as its only pass so
    that it is recorded (``history_``) and reported like an EM iteration."""

    def __init__(self, scorer, train, extra, rng):
        self.scorer, self.train, self.extra, self.rng = scorer, train, extra, rng

    def train_epoch(self):
        log_prob = self.scorer._fit_spectral(*self.train, self.extra, self.rng)
        return EpochResult("moments", -float(log_prob.sum() / self.train[0].shape[0]))

    def validation_score(self, validation):
        ids, heads, offsets = validation
        return float(self.scorer._log_probs(ids, heads, offsets)[0].sum() / ids.shape[0])


class _EMIterations(EpochTrainer):
    """One EM run on the given trees: an iteration is an E-step (inside-outside
    over every training sentence, on threads) and an M-step (normalised
    expected counts plus ``pseudo_count``).

    An iteration's loss is the training negative log-likelihood per token of
    the parameters it started from (what its E-step computes); training ends
    once that improves by less than ``tol`` (relative). ``run`` (1-based) is
    added to every record this run appends to the history.
    """

    def __init__(self, scorer, train, params, run=1):
        self.scorer = scorer
        self.train = train
        self.params = params
        self.run_number = run
        self.n_iter = 0
        self.log_likelihood = -np.inf
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
        per_token = log_lik / ids.shape[0]
        a = self.scorer.pseudo_count
        # the tiny floor only keeps a never-used state's column from being 0 / 0
        tiny = np.finfo(float).tiny
        # new arrays, never updated in place: a snapshot is a reference
        self.params = (simplex_columns((root + a)[:, None], tiny)[:, 0],
                       np.stack([simplex_columns(transition[d] + a, tiny) for d in range(2)]),
                       simplex_columns(emission + a, tiny))
        self.converged = per_token - self.log_likelihood < self.scorer.tol * abs(per_token)
        self.log_likelihood = per_token
        self.n_iter += 1
        return EpochResult(f"iteration {self.n_iter}", -per_token)

    def validation_score(self, validation):
        ids, heads, offsets = validation
        return float(exact_log_probs(ids, heads, offsets, *self.params).sum() / ids.shape[0])

    def snapshot(self):
        return self.params

    def restore(self, snapshot):
        self.params = snapshot

    def epoch_done(self, record):
        super().epoch_done(record)
        if self.history is not None:
            self.history[-1]["run"] = self.run_number


class SpectralTreeScorer(SentenceEstimator):
    """Probability of a sentence given its dependency tree under a hidden-state model.

    The latent-state tree model of Dhillon et al. (2012, Eq. 2), estimated
    by the method of moments (the paper's spectral algorithm: counts of word
    embeddings over head-child-neighbour triples give observable operators
    that compute p(words | tree) bottom up, consistent for the model), by EM
    on the given trees, or by EM started from the spectral estimate (see the
    module docstring and :ref:`spectral` in the user guide).

    Training follows the library's epoch loop: every EM iteration is a
    record of ``history_`` and, with ``verbose``, one progress line. The
    method of moments makes no iterations; it is recorded as one pass
    (label ``"moments"``, its loss the training negative log-likelihood per
    token of the floored estimates), so ``n_epochs``, ``tol`` and
    ``n_iter_no_change`` do not apply to it.

    Parameters
    ----------
    n_components : int, default=32
        Number of hidden states k (the dimension of the word embedding of
        the spectral estimator). Dhillon et al. used k = 10; more states
        rerank better and fit more slowly (the user guide measures both).
        Needs more word types than states.
    method : {"spectral", "em", "spectral+em"}, default="spectral+em"
        ``"spectral"``: method of moments only. ``"em"``: EM from a random
        start. ``"spectral+em"``: EM started from the emission matrix read
        off the spectral estimate and projected to valid probabilities,
        with flat root and transition distributions. The two EM methods
        rerank alike; ``"spectral+em"`` converges in fewer iterations, to a
        higher held-out likelihood, and tells trees apart better on
        synthetic data (the user guide compares the three).
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
    n_epochs : int, default=100
        EM iterations at most (per run).
    tol : float, default=1e-4
        EM stops when the training log-likelihood per token improves by less
        than ``tol`` times its absolute value: convergence of the training
        objective, independent of any validation data.
    n_iter_no_change : int or None, default=None
        EM with validation data (``X_val``/``y_val`` or
        ``validation_fraction``): stop a run after this many iterations
        without a better validation log-likelihood per token, and keep the
        parameters of its best iteration. None: no early stopping.
    validation_fraction : float in (0, 1) or None, default=None
        Hold out this fraction of the training pairs (drawn with
        ``random_state``) as validation data. Cannot be combined with
        ``X_val``.
    n_init : int, default=2
        EM methods: number of EM runs, each from its own start (random,
        or the spectral emissions read with other random mixes of the
        operators, which differ little).
    combine_runs : {"mean", "best"}, default="mean"
        EM methods with ``n_init > 1``: ``"mean"`` keeps every run and
        scores a pair by the mean of their log-probabilities (an ensemble:
        not a normalised probability, but steadier on the trees of one
        sentence); ``"best"`` keeps one run: the one with the best
        validation score when the best iterations are kept (validation
        data and ``n_iter_no_change``), else the one with the highest final
        training log-likelihood. So with ``n_init > 1`` and early stopping,
        ``"best"`` scores the validation data as its best record in
        ``history_``, while ``"mean"`` scores it by the ensemble, which no
        record shows.
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
        Seeds the randomized SVD, the EM start, the eigenvector mix of
        the spectral start and the split of ``validation_fraction``.
    verbose : int, default=0
        Print one line on standard error per EM iteration (or for the
        method of moments) with the training loss and, given validation
        data, the validation log-likelihood per token. With ``n_init > 1``
        each line starts with its run (``[EM run 2 of 3]``).

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
        ``method="spectral"``: per-token log-probability given to
        non-positive estimates.
    start_probs_, transitions_, emissions_ : ndarray
        EM methods, one row per run kept (all ``n_init`` runs, or the
        best one): pi (n_runs, k), T indexed ``[run, side, child_state,
        head_state]`` (n_runs, 2, k, k) and O indexed ``[run, word, state]``
        (n_runs, n_words, k).
    n_iter_ : int
        EM methods: iterations run by the run kept (with ``"mean"``, by the
        run ``"best"`` would keep).
    converged_ : bool
        EM methods: whether that run reached ``tol`` before ``n_epochs``.
    history_ : list of dict
        One record per EM iteration of every run, in order (``epoch``
        counts on across runs, ``run`` is the run, 1-based, ``label`` says
        ``"iteration i"`` within it), or the one record of the method of
        moments; ``loss`` is the training negative log-likelihood per token
        (for EM, of the parameters the iteration started from; never
        increasing within a run for ``pseudo_count=0``), and
        ``validation_score`` the validation log-likelihood per token after
        the iteration (None without validation data). See
        :class:`~sklearn_structured.utils.EpochRecord`.
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "method": [StrOptions({"spectral", "em", "spectral+em"})],
        "embedding": [StrOptions({"cca", "svd"})],
        "smoothing": [Interval(Real, 0, None, closed="left")],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "rcond": [Interval(Real, 0, 1, closed="left")],
        "n_epochs": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        **EARLY_STOPPING_CONSTRAINTS,
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "combine_runs": [StrOptions({"mean", "best"})],
        "pseudo_count": [Interval(Real, 0, None, closed="left")],
        "token_field": [StrOptions({FORM, LEMMA, UPOS, XPOS})],
        "strip_punctuation": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, n_components=32, *, method="spectral+em", embedding="svd", smoothing=1.0,
                 min_count=2, rcond=0.01, n_epochs=100, tol=1e-4, n_iter_no_change=None,
                 validation_fraction=None, n_init=2, combine_runs="mean", pseudo_count=0.01,
                 token_field="form", strip_punctuation=False, n_jobs=None, random_state=None,
                 verbose=0):
        self.n_components = n_components
        self.method = method
        self.embedding = embedding
        self.smoothing = smoothing
        self.min_count = min_count
        self.rcond = rcond
        self.n_epochs = n_epochs
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.n_init = n_init
        self.combine_runs = combine_runs
        self.pseudo_count = pseudo_count
        self.token_field = token_field
        self.strip_punctuation = strip_punctuation
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, X_val=None, y_val=None, X_unlabeled=None):
        """Estimate the model from sentences ``X`` with gold heads ``y``.

        ``X_val``, ``y_val`` (optional) are held-out pairs scored after every
        EM iteration (or the method of moments), in the validation log-likelihood
        per token; with ``n_iter_no_change`` each EM run keeps its best
        iteration. ``X_unlabeled`` (optional list of sentences) adds
        word-context counts to the spectral embedding only.
        """
        rng = check_random_state(self.random_state)
        X, y, validation = split_validation(self, X, y, X_val, y_val, rng=rng)
        sentences, heads = self._modelled(*check_dependency_data(X, y, single_root=False))
        extra = [] if X_unlabeled is None else check_sentences(X_unlabeled, name="X_unlabeled")
        if self.strip_punctuation:
            extra = [s for s in ([t for t in s if not is_punctuation(t)] for s in extra) if s]
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
        train = (ids, pack_ragged(heads)[0], offsets)
        if validation is not None:
            val_sentences, val_heads = self._modelled(
                *check_dependency_data(*validation, single_root=False))
            val_ids, val_offsets = self._encode(val_sentences)
            validation = (val_ids, pack_ragged(val_heads)[0], val_offsets)
        self.history_ = []
        name = type(self).__name__
        if self.method == "spectral":
            moments = _SpectralEstimate(self, train, extra, rng)
            moments.history = self.history_
            moments.run(1, name=name, verbose=self.verbose, validation=validation)
            return self
        if self.method == "spectral+em":
            self._fit_spectral(*train, extra, rng)
        # EM's local optima tell the trees of one sentence apart unequally well,
        # and the most likely one is not the one that does it best on real
        # trees (see the user guide); averaging several is steadier
        runs = []
        for r in range(self.n_init):
            if self.method == "em":
                start = self._random_start(ids, rng)
            else:
                start = spectral_em_start(self.embedding_, self.root_vector_,
                                          self.operators_, rng)
            run = _EMIterations(self, train, start, run=r + 1)
            run.history = self.history_
            label = f"EM run {r + 1} of {self.n_init}"
            with training_step(label) if self.n_init > 1 else nullcontext():
                run.run(self.n_epochs, name=name, verbose=self.verbose, validation=validation,
                        patience=self.n_iter_no_change)
            runs.append(run)
        if validation is not None and self.n_iter_no_change is not None:
            quality = [max(h["validation_score"] for h in self.history_
                           if h["run"] == run.run_number) for run in runs]
        else:
            quality = [run.log_likelihood for run in runs]
        best = runs[int(np.argmax(quality))]
        kept = [best] if self.combine_runs == "best" else runs
        self.start_probs_, self.transitions_, self.emissions_ = (
            np.stack([run.params[i] for run in kept]) for i in range(3))
        self.n_iter_ = best.n_iter
        self.converged_ = best.converged
        return self

    def _fit_spectral(self, ids, flat_heads, offsets, extra, rng):
        """The spectral estimate (``embedding_`` to ``nonpositive_share_``).
        For ``method="spectral"`` also the floor, and returns the training
        pairs' log-probabilities as ``score_samples`` gives them."""
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
        if self.method != "spectral":
            return None
        lengths = np.diff(offsets)
        self.log_floor_per_token_ = (
            float(np.min(log_abs[positive] / lengths[positive])) if positive.any() else -50.0
        )
        return np.where(positive, log_abs, lengths * self.log_floor_per_token_)

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

    def _log_probs(self, ids, heads, offsets):
        """log p_hat of packed pairs, and which of them were floored."""
        if self.method != "spectral":
            log_prob = np.mean([exact_log_probs(ids, heads, offsets, *params) for params in
                                zip(self.start_probs_, self.transitions_, self.emissions_)], axis=0)
            return log_prob, np.zeros(len(log_prob), dtype=bool)
        log_abs, sign = spectral_log_probs(ids, heads, offsets, self.embedding_,
                                           self.root_vector_, self.operators_)
        floored = sign <= 0
        return np.where(floored, np.diff(offsets) * self.log_floor_per_token_, log_abs), floored

    def score_samples(self, X, y, return_flags=False):
        """log p_hat(words | tree) for each (sentence, heads) pair.

        With ``method="spectral"``, non-positive estimates get
        ``n_tokens * log_floor_per_token_``; with ``return_flags=True`` a
        boolean array marking them is returned too (never set for the EM
        methods, whose probabilities are always positive).
        """
        log_prob, floored = self._log_probs(*self._pairs(X, y))
        return (log_prob, floored) if return_flags else log_prob

    def score(self, X, y):
        """Mean log-likelihood per token (natural log) of the pairs ``(X, y)``;
        with ``strip_punctuation``, per token kept."""
        log_prob = self.score_samples(X, y)
        n_tokens = sum(1 for s in X for t in s if not (self.strip_punctuation and is_punctuation(t)))
        return float(log_prob.sum() / max(n_tokens, 1))
