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

from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import KFold
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..metrics import attachment_score, is_punctuation
from ..utils import (
    SentenceEstimator,
    check_dependency_data,
    check_sentences,
    encode_corpus,
    fit_vocabularies,
)
from ..utils._compat import Interval, StrOptions, _fit_context
from ..utils._training import averaged_weights
from ._rerank_kernels import CandidateLists, rerank, train_perceptron
from ._scorer import SpectralTreeScorer


def _seeded_clone(estimator, rng):
    """A clone whose unset ``random_state`` is drawn from ``rng``, so the
    reranker's own ``random_state`` makes the whole fit reproducible."""
    estimator = clone(estimator)
    if estimator.get_params().get("random_state", 0) is None:
        estimator.set_params(random_state=rng.randint(2**31 - 1))
    return estimator


def _cross_fit_nbest(parser, sentences, heads, folds, n_best, rng, verbose):
    nbest = [None] * len(sentences)
    for i, (train, test) in enumerate(folds):
        fitted = _seeded_clone(parser, rng).fit([sentences[j] for j in train],
                                                [heads[j] for j in train])
        for j, lst in zip(test, fitted.predict_nbest([sentences[j] for j in test], n_best)):
            nbest[j] = lst
        if verbose:
            print(f"[NBestReranker] parsed held-out fold {i + 1}/{len(folds)}", flush=True)
    return nbest


def cross_val_nbest(parser, X, y, *, n_best=50, cv=3, random_state=None, verbose=0):
    """n-best lists of every training sentence from a parser that did not see it.

    ``parser`` is cloned and fitted on ``cv - 1`` folds, then parses the
    held-out fold (Dhillon et al. 2012 use 3 folds). The result can be given
    to :meth:`NBestReranker.fit` as ``train_nbest``, e.g. to train several
    rerankers from one set of lists.
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


class NBestReranker(SentenceEstimator):
    """Rerank a dependency parser's n-best trees with tree-probability features.

    Parameters
    ----------
    parser : estimator
        Base dependency parser with ``fit(X, y)`` and ``predict_nbest(X, k)``
        returning, per sentence, a list of ``(heads, score)`` pairs best first
        (e.g. :class:`~sklearn_structured.LowRankTensorParser`).
    scorers : tuple of estimators, default=(SpectralTreeScorer(),)
        Models with ``fit(X, y)`` and ``score_samples(X, y)`` giving a
        log-probability per (sentence, tree); each adds one feature.
    n_best : int, default=50
        Candidates per sentence.
    cv : int or "prefit", default=3
        Folds for cross-fitting the training lists. ``"prefit"`` uses
        ``parser`` as already fitted (not cloned, not refitted); the training
        lists then come from the ``train_nbest`` argument of ``fit`` (or, if
        it is omitted, from the fitted parser itself, which is optimistic).
    n_epochs : int, default=10
        Perceptron passes over the training lists.
    random_state : int, RandomState instance or None, default=None
        Seeds the folds, the perceptron's order of sentences, and the
        ``random_state`` of the parser and scorers where theirs is None.
    verbose : int, default=0
        Print one line per fold.

    Attributes
    ----------
    parser_ : estimator
        The base parser fitted on all of X (or ``parser`` itself with ``cv="prefit"``).
    scorers_ : list of estimators
        The scorers fitted on all of X.
    tag_vocabulary_ : Vocabulary
        POS tags (UPOS, else XPOS, else the form) to ids.
    coef_ : ndarray
        Averaged perceptron weights: template weights, then the parser
        score's and each scorer's.
    dense_floor_ : ndarray of shape (1 + n_scorers,)
        Each real-valued feature is taken relative to its best value in the
        list and clipped from below at this value, the 1st percentile on the
        training lists (floored log-probabilities would otherwise dominate).
    dense_scale_ : ndarray of shape (1 + n_scorers,)
        The clipped features are divided by this spread (standard deviation
        on the training lists).
    """

    _parameter_constraints = {
        "parser": [object],
        "scorers": [tuple, list],
        "n_best": [Interval(Integral, 1, None, closed="left")],
        "cv": [Interval(Integral, 2, None, closed="left"), StrOptions({"prefit"})],
        "n_epochs": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, parser, scorers=(SpectralTreeScorer(),), n_best=50, cv=3, n_epochs=10,
                 random_state=None, verbose=0):
        self.parser = parser
        self.scorers = scorers
        self.n_best = n_best
        self.cv = cv
        self.n_epochs = n_epochs
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
    def fit(self, X, y, train_nbest=None):
        """Cross-fit n-best lists and scorers, fit the final models, train the reranker.

        ``train_nbest`` (optional) gives the training lists directly (for
        example cross-fitted once and reused for several rerankers); then
        the parser is not cross-fitted.
        """
        sentences, heads = check_dependency_data(X, y)
        lengths = np.array([len(s) for s in sentences], dtype=np.int64)
        rng = check_random_state(self.random_state)
        n_folds = 3 if self.cv == "prefit" else self.cv
        folds = list(KFold(n_folds, shuffle=True, random_state=rng.randint(2**31 - 1)).split(sentences))
        if train_nbest is not None and len(train_nbest) != len(sentences):
            raise ValueError(f"train_nbest has {len(train_nbest)} lists for {len(sentences)} sentences")
        nbest = None if train_nbest is None else [list(lst)[:self.n_best] for lst in train_nbest]
        if nbest is None and self.cv != "prefit":
            nbest = _cross_fit_nbest(self.parser, sentences, heads, folds, self.n_best, rng,
                                     self.verbose)
        if self.cv == "prefit":
            self.parser_ = self.parser
        else:
            self.parser_ = _seeded_clone(self.parser, rng).fit(sentences, heads)
        if nbest is None:
            nbest = self.parser_.predict_nbest(sentences, self.n_best)
        cands = _Candidates(nbest, lengths)

        scorer_log_probs = [np.zeros(len(cands.sentence)) for _ in self.scorers]
        position = np.arange(len(cands.sentence))
        for train, test in folds:
            in_test = np.isin(cands.sentence, test)
            subset = _Candidates([nbest[j] for j in test], lengths[test])
            for f, scorer in enumerate(self.scorers):
                fitted = _seeded_clone(scorer, rng).fit([sentences[j] for j in train], [heads[j] for j in train])
                scorer_log_probs[f][position[in_test]] = self._scorer_log_probs(
                    fitted, [sentences[j] for j in test], subset)
        self.scorers_ = [_seeded_clone(scorer, rng).fit(sentences, heads) for scorer in self.scorers]

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
        self.coef_ = averaged_weights(*train_perceptron(
            lists, len(self.tag_vocabulary_), correct, self.n_epochs, rng.randint(2**31 - 1)))
        return self

    @staticmethod
    def _oracle(cands, correct, scored, tok_off):
        best = np.zeros(len(cands.sent_cand) - 1, dtype=np.int64)
        np.maximum.at(best, cands.sentence, correct)
        n_scored = np.add.reduceat(scored.astype(np.int64), tok_off[:-1]) if len(scored) else 0
        return float(best.sum() / max(np.sum(n_scored), 1))

    def predict(self, X, nbest=None):
        """Reranked best tree of each sentence. ``nbest`` may give the lists
        (as ``parser_.predict_nbest(X, n_best)`` returns) to avoid reparsing."""
        check_is_fitted(self)
        sentences = check_sentences(X)
        if nbest is None:
            nbest = self.parser_.predict_nbest(sentences, self.n_best)
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
        lists = CandidateLists(cands.cand_heads, cands.cand_start, cands.sent_cand, tags,
                               tok_off, dense)
        choice = rerank(self.coef_, lists, len(self.tag_vocabulary_))
        return [cands.heads_list[c].copy() for c in choice]

    def score(self, X, y):
        """Unlabelled attachment score (punctuation excluded) of the reranked trees."""
        return attachment_score(y, self.predict(X), X=X)
