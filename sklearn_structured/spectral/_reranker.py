"""Discriminative reranking of a base parser's n-best trees (Dhillon et al. 2012, Section 4).

Training lists come from cross-fitting, as in the paper: the base parser is
trained on k-1 folds and parses the held-out fold, so the reranker learns
from lists as noisy as the ones it will see at test time. The scorers
(tree-probability models such as :class:`SpectralTreeScorer`) are cross-fitted
on the same folds for the same reason: a model that has seen a sentence's
gold tree would score it too well. An averaged perceptron (Collins 2002)
then learns to pick the candidate with the most correct heads from the
parser's score, the two baseline POS templates of the paper and each
scorer's log-probability.
"""

import sys
import time
from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import KFold
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..annotation import ParserAnnotator
from ..metrics import attachment_score, is_punctuation
from ..utils import (
    EARLY_STOPPING_CONSTRAINTS,
    EpochResult,
    EpochTrainer,
    SentenceEstimator,
    check_dependency_data,
    check_sentences,
    encode_corpus,
    fit_vocabularies,
    perceptron_state,
    prediction_weights,
    split_validation,
    training_step,
)
from ..utils._compat import HasMethods, Interval, StrOptions, _fit_context
from ._rerank_kernels import (
    CandidateLists,
    epoch_orders,
    n_template_features,
    perceptron_epoch,
    rerank,
)
from ._scorer import SpectralTreeScorer


def _seeded_clone(estimator, rng):
    """A clone whose unset ``random_state`` is drawn from ``rng``, so the
    reranker's own ``random_state`` makes the whole fit reproducible."""
    estimator = clone(estimator)
    if estimator.get_params().get("random_state", 0) is None:
        estimator.set_params(random_state=rng.randint(2**31 - 1))
    return estimator


def _cross_fit_nbest(parser, sentences, heads, folds, n_best, rng, report):
    nbest = [None] * len(sentences)
    for i, (train, test) in enumerate(folds):
        tic = time.perf_counter()
        # the parser's own progress lines say which fold they belong to
        with training_step(f"fold {i + 1} of {len(folds)}"):
            fitted = _seeded_clone(parser, rng).fit([sentences[j] for j in train],
                                                    [heads[j] for j in train])
        for j, lst in zip(test, fitted.predict_nbest([sentences[j] for j in test], n_best)):
            nbest[j] = lst
        if report:
            print(f"[NBestReranker] fold {i + 1} of {len(folds)}: parser fitted and held-out "
                  f"fold parsed in {time.perf_counter() - tic:.1f} s", file=sys.stderr, flush=True)
    return nbest


def cross_val_nbest(parser, X, y, *, n_best=50, cv=3, random_state=None, verbose=0):
    """n-best lists of every training sentence from a parser that did not see it.

    ``parser`` is cloned and fitted on ``cv - 1`` folds, then parses the
    held-out fold (Dhillon et al. 2012 use 3 folds). The result can be given
    to :meth:`NBestReranker.fit` as ``train_nbest``, e.g. to train several
    rerankers from one set of lists. ``verbose`` prints one line per fold on
    standard error.
    """
    sentences, heads = check_dependency_data(X, y)
    rng = check_random_state(random_state)
    folds = list(KFold(cv, shuffle=True, random_state=rng.randint(2**31 - 1)).split(sentences))
    return _cross_fit_nbest(parser, sentences, heads, folds, n_best, rng, verbose)


class _Candidates:
    """Packed n-best lists of a batch of sentences (arrays only, never stored on the model)."""

    def __init__(self, nbest, lengths):
        counts = np.array([len(lst) for lst in nbest], dtype=np.int64)
        self.sent_cand = np.concatenate([[0], np.cumsum(counts)])
        self.sentence = np.repeat(np.arange(len(nbest)), counts)
        self.heads_list = [np.asarray(h, dtype=np.int64) for lst in nbest for h, _ in lst]
        self.parser_score = np.array([score for lst in nbest for _, score in lst], dtype=float)
        cand_lengths = lengths[self.sentence]
        self.cand_start = np.concatenate([[0], np.cumsum(cand_lengths)[:-1]]).astype(np.int64)
        self.cand_heads = (np.concatenate(self.heads_list) if self.heads_list
                           else np.zeros(0, dtype=np.int64))


class _PerceptronEpochs(EpochTrainer):
    """The reranker's perceptron epochs over the training lists. The loss of an
    epoch is the share of lists on which the perceptron picked a candidate with
    fewer correct heads than the best one (and so updated)."""

    def __init__(self, lists, n_tags, correct, orders, state):
        self.lists, self.n_tags, self.correct, self.orders = lists, n_tags, correct, orders
        self.state = state
        self.n_lists = max(int(np.count_nonzero(np.diff(lists.of_sentence))), 1)
        self.epoch = 0

    def train_epoch(self):
        state = self.state
        n_updates = perceptron_epoch(self.lists, self.n_tags, self.correct,
                                     self.orders[self.epoch], state["weights"]["coef"],
                                     state["sums"]["coef"], state["count"])
        self.epoch += 1
        return EpochResult(f"epoch {self.epoch}", n_updates / self.n_lists,
                           (("updates", n_updates),))

    def validation_score(self, validation):
        """UAS (punctuation excluded) of the trees the averaged weights pick."""
        sentences, heads, cands, lists = validation
        choice = rerank(prediction_weights(self.state, "coef"), lists, self.n_tags)
        return attachment_score(heads, [cands.heads_list[c] for c in choice], X=sentences)

    def snapshot(self):
        state = self.state
        return (state["weights"]["coef"].copy(), state["sums"]["coef"].copy(),
                state["count"].copy())

    def restore(self, snapshot):
        state = self.state
        for target, saved in zip((state["weights"]["coef"], state["sums"]["coef"],
                                  state["count"]), snapshot):
            target[...] = saved


class NBestReranker(ParserAnnotator, SentenceEstimator):
    """Rerank a dependency parser's n-best trees with tree-probability features.

    The perceptron's epochs follow the library's epoch loop: a record of
    ``history_`` each and, with ``verbose``, one progress line; given
    validation data (``X_val``/``y_val`` or ``validation_fraction``) each
    epoch is scored by the UAS of the reranked validation trees, and
    ``n_iter_no_change`` keeps the best epoch. The parser and the scorers
    are fitted once, before the epochs: they have no epochs of their own
    here.

    Parameters
    ----------
    parser : estimator
        Base dependency parser with ``fit(X, y)`` and ``predict_nbest(X, k)``
        returning, per sentence, a list of ``(heads, score)`` pairs best first
        (e.g. :class:`~sklearn_structured.LowRankTensorParser`).
    scorers : tuple of estimators or None, default=None
        Models with ``fit(X, y)`` and ``score_samples(X, y)`` giving a
        log-probability per (sentence, tree); each adds one feature. None
        is one :class:`SpectralTreeScorer` of default parameters; ``()`` is
        no scorer (the baseline templates and the parser's score alone).
    n_best : int, default=50
        Candidates per sentence.
    cv : int or "prefit", default=3
        Folds for cross-fitting the training lists. ``"prefit"`` uses
        ``parser`` as already fitted (not cloned, not refitted); the training
        lists then come from the ``train_nbest`` argument of ``fit`` (or, if
        it is omitted, from the fitted parser itself, which is optimistic).
    n_epochs : int, default=10
        Perceptron passes over the training lists (at most, with
        ``n_iter_no_change``).
    n_iter_no_change : int or None, default=None
        With validation data: stop after this many epochs without a better
        validation UAS, and keep the weights of the best epoch. None: run
        every epoch.
    validation_fraction : float in (0, 1) or None, default=None
        Hold out this fraction of the training sentences (drawn with
        ``random_state``) from everything the reranker fits, as validation
        data. Cannot be combined with ``X_val``.
    random_state : int, RandomState instance or None, default=None
        Seeds the folds, the perceptron's order of sentences, the split of
        ``validation_fraction`` and the ``random_state`` of the parser and
        scorers where theirs is None.
    verbose : int, default=0
        1: one line per perceptron epoch on standard error (share of lists
        updated as the loss, the number of updates and, given validation
        data, the validation UAS). 2: also one line per cross-fitted fold.
        The parser's and scorers' own lines (their ``verbose``) start with
        the fold they belong to, or ``[final fit]``.

    Attributes
    ----------
    parser_ : estimator
        The base parser fitted on all of X (or ``parser`` itself with ``cv="prefit"``).
    scorers_ : list of estimators
        The scorers fitted on all of X.
    tag_vocabulary_ : Vocabulary
        POS tags (UPOS, else XPOS, else the form) to ids.
    coef_ : ndarray of float32
        Averaged perceptron weights: template weights, then the parser
        score's and each scorer's.
    dense_floor_ : ndarray of shape (1 + n_scorers,)
        Each real-valued feature is taken relative to its best value in the
        list and clipped from below at this value, the 1st percentile on the
        training lists (floored log-probabilities would otherwise dominate).
    dense_scale_ : ndarray of shape (1 + n_scorers,)
        The clipped features are divided by this spread (standard deviation
        on the training lists).
    oracle_train_uas_ : float
        UAS of the best candidate of every training list.
    history_ : list of dict
        One record per perceptron epoch (see
        :class:`~sklearn_structured.utils.EpochRecord`), with ``updates``.
    """

    _parameter_constraints = {
        "parser": [HasMethods(["fit", "predict_nbest"])],
        "scorers": [tuple, list, None],
        "n_best": [Interval(Integral, 1, None, closed="left")],
        "cv": [Interval(Integral, 2, None, closed="left"), StrOptions({"prefit"})],
        "n_epochs": [Interval(Integral, 1, None, closed="left")],
        **EARLY_STOPPING_CONSTRAINTS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, parser, *, scorers=None, n_best=50, cv=3, n_epochs=10,
                 n_iter_no_change=None, validation_fraction=None, random_state=None, verbose=0):
        self.parser = parser
        self.scorers = scorers
        self.n_best = n_best
        self.cv = cv
        self.n_epochs = n_epochs
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.verbose = verbose

    def _dense(self, sentences, cands, scorer_log_probs):
        """Parser score and scorer log-probabilities, unscaled, one row per candidate."""
        columns = [cands.parser_score] + list(scorer_log_probs)
        dense = np.column_stack(columns) if len(cands.sentence) else np.zeros((0, len(columns)))
        # relative to the list's best: only differences inside a list matter
        best = np.full((len(sentences), dense.shape[1]), -np.inf)
        np.maximum.at(best, cands.sentence, dense)
        return dense - best[cands.sentence]

    def _standardise(self, dense):
        return np.maximum(dense, self.dense_floor_) / self.dense_scale_

    @staticmethod
    def _scorer_log_probs(scorer, sentences, cands):
        return scorer.score_samples([sentences[s] for s in cands.sentence], cands.heads_list)

    def _tags(self, sentences):
        corpus = encode_corpus(sentences, {"upos": self.tag_vocabulary_})
        return corpus["upos"], corpus.offsets

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, *, X_val=None, y_val=None, train_nbest=None):
        """Cross-fit n-best lists and scorers, fit the final models, train the reranker.

        ``X_val``, ``y_val`` (optional) are scored after every perceptron
        epoch by the UAS of their reranked trees (the fitted parser's lists).
        ``train_nbest`` (optional) gives the training lists directly (for
        example cross-fitted once and reused for several rerankers); then
        the parser is not cross-fitted. With ``validation_fraction`` the
        lists of the held-out sentences are held out with them.
        """
        if train_nbest is not None:
            X = list(X)
            if len(train_nbest) != len(X):
                raise ValueError(f"train_nbest has {len(train_nbest)} lists for {len(X)} sentences")
            # each list stays with its sentence, or is held out with it
            X = list(zip(X, train_nbest))
        rng = check_random_state(self.random_state)
        X, y, validation = split_validation(self, X, y, X_val, y_val, rng=rng)
        if train_nbest is not None:
            X, train_nbest = [x for x, _ in X], [lst for _, lst in X]
            if X_val is None and validation is not None:
                # held out by validation_fraction: scored from the fitted parser's lists
                validation = ([x for x, _ in validation[0]], validation[1])
        sentences, heads = check_dependency_data(X, y)
        lengths = np.array([len(s) for s in sentences], dtype=np.int64)
        n_folds = 3 if self.cv == "prefit" else self.cv
        folds = list(KFold(n_folds, shuffle=True, random_state=rng.randint(2**31 - 1)).split(sentences))
        nbest = None if train_nbest is None else [list(lst)[:self.n_best] for lst in train_nbest]
        if nbest is None and self.cv != "prefit":
            nbest = _cross_fit_nbest(self.parser, sentences, heads, folds, self.n_best, rng,
                                     self.verbose > 1)
        if self.cv == "prefit":
            self.parser_ = self.parser
        else:
            with training_step("final fit"):
                self.parser_ = _seeded_clone(self.parser, rng).fit(sentences, heads)
        if nbest is None:
            nbest = self.parser_.predict_nbest(sentences, self.n_best)
        cands = _Candidates(nbest, lengths)

        scorers = (SpectralTreeScorer(),) if self.scorers is None else self.scorers
        scorer_log_probs = [np.zeros(len(cands.sentence)) for _ in scorers]
        position = np.arange(len(cands.sentence))
        for i, (train, test) in enumerate(folds):
            in_test = np.isin(cands.sentence, test)
            subset = _Candidates([nbest[j] for j in test], lengths[test])
            for f, scorer in enumerate(scorers):
                with training_step(f"fold {i + 1} of {len(folds)}"):
                    fitted = _seeded_clone(scorer, rng).fit([sentences[j] for j in train],
                                                            [heads[j] for j in train])
                scorer_log_probs[f][position[in_test]] = self._scorer_log_probs(
                    fitted, [sentences[j] for j in test], subset)
        with training_step("final fit"):
            self.scorers_ = [_seeded_clone(scorer, rng).fit(sentences, heads)
                             for scorer in scorers]

        self.tag_vocabulary_ = fit_vocabularies(sentences, ("upos",))["upos"]
        tags, tok_off = self._tags(sentences)
        dense = self._dense(sentences, cands, scorer_log_probs)
        # a few candidates sit far below their list's best (floored or very
        # unlikely trees); clipping them keeps them from setting the scale
        self.dense_floor_ = np.percentile(dense, 1, axis=0) if len(dense) else np.zeros(dense.shape[1])
        spread = np.maximum(dense, self.dense_floor_).std(axis=0) if len(dense) else 1.0
        self.dense_scale_ = np.where(spread > 0, spread, 1.0)
        scored = np.array([not is_punctuation(t) for s in sentences for t in s])
        gold = np.concatenate(heads)
        correct = np.array([
            np.count_nonzero((h == gold[tok_off[s]:tok_off[s + 1]]) & scored[tok_off[s]:tok_off[s + 1]])
            for s, h in zip(cands.sentence, cands.heads_list)
        ], dtype=np.int64)
        self.oracle_train_uas_ = self._oracle(cands, correct, scored, tok_off)
        lists = CandidateLists(cands.cand_heads, cands.cand_start, cands.sent_cand, tags,
                               tok_off, self._standardise(dense))
        if validation is not None:
            val_sentences, val_heads = check_dependency_data(*validation)
            validation = (val_sentences, val_heads,
                          *self._candidate_lists(val_sentences,
                                                 self.parser_.predict_nbest(val_sentences,
                                                                            self.n_best)))
        n_tags = len(self.tag_vocabulary_)
        state = perceptron_state({"coef": np.zeros(n_template_features(n_tags) + dense.shape[1])})
        # the average counts the starting (zero) weights as one iterate
        state["count"][0] = 1.0
        orders = epoch_orders(rng.randint(2**31 - 1), len(sentences), self.n_epochs)
        self.history_ = []
        epochs = _PerceptronEpochs(lists, n_tags, correct, orders, state)
        epochs.history = self.history_
        epochs.run(self.n_epochs, name=type(self).__name__, verbose=self.verbose,
                   validation=validation, patience=self.n_iter_no_change)
        self.coef_ = prediction_weights(state, "coef")
        return self

    @staticmethod
    def _oracle(cands, correct, scored, tok_off):
        best = np.zeros(len(cands.sent_cand) - 1, dtype=np.int64)
        np.maximum.at(best, cands.sentence, correct)
        n_scored = np.add.reduceat(scored.astype(np.int64), tok_off[:-1]) if len(scored) else 0
        return float(best.sum() / max(np.sum(n_scored), 1))

    def _candidate_lists(self, sentences, nbest):
        """The candidates of fitted-model input, as :class:`_Candidates` and packed
        :class:`CandidateLists` with their standardised features."""
        nbest = [list(lst)[:self.n_best] for lst in nbest]
        if len(nbest) != len(sentences):
            raise ValueError(f"nbest has {len(nbest)} lists for {len(sentences)} sentences")
        for i, lst in enumerate(nbest):
            if not lst:
                raise ValueError(f"the n-best list of X[{i}] is empty")
        lengths = np.array([len(s) for s in sentences], dtype=np.int64)
        cands = _Candidates(nbest, lengths)
        log_probs = [self._scorer_log_probs(scorer, sentences, cands) for scorer in self.scorers_]
        dense = self._standardise(self._dense(sentences, cands, log_probs))
        tags, tok_off = self._tags(sentences)
        return cands, CandidateLists(cands.cand_heads, cands.cand_start, cands.sent_cand, tags,
                                     tok_off, dense)

    def predict(self, X, nbest=None):
        """Reranked best tree of each sentence. ``nbest`` may give the lists
        (as ``parser_.predict_nbest(X, n_best)`` returns) to avoid reparsing."""
        check_is_fitted(self)
        sentences = check_sentences(X)
        if nbest is None:
            nbest = self.parser_.predict_nbest(sentences, self.n_best)
        cands, lists = self._candidate_lists(sentences, nbest)
        choice = rerank(self.coef_, lists, len(self.tag_vocabulary_))
        return [cands.heads_list[c].copy() for c in choice]

    def score(self, X, y):
        """Unlabelled attachment score (punctuation excluded) of the reranked trees."""
        return attachment_score(y, self.predict(X), X=X)
