"""NBestReranker: templates oracle, perceptron, API, learning on the embedded sample."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.pipeline import Pipeline

from sklearn_structured import EasyFirstBeamTagger, TokenFieldSelector

from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.decoding import eisner_kbest
from sklearn_structured.metrics import attachment_score
from sklearn_structured.spectral import NBestReranker, SpectralTreeScorer
from sklearn_structured.spectral._rerank_kernels import n_template_features, tree_features
from sklearn_structured.utils import find_heads_error, token_field
from sklearn_structured.utils.estimator_checks import (
    assert_same_predictions,
    check_structured_estimator,
)


class TagPairParser(BaseEstimator):
    """A deliberately weak first-order parser for tests: arc score = log relative
    frequency of (head tag, modifier tag, direction) plus a distance penalty."""

    def __init__(self, distance_weight=0.5):
        self.distance_weight = distance_weight

    @staticmethod
    def _tags(sentence):
        return ["ROOT"] + [token_field(t, "upos") or "X" for t in sentence]

    def fit(self, X, y):
        tags = [self._tags(s) for s in X]
        self.tags_ = {t: i for i, t in enumerate(sorted({t for s in tags for t in s}))}
        counts = np.full((len(self.tags_) + 1,) * 2 + (2,), 0.1)
        for sentence_tags, heads in zip(tags, y):
            ids = [self.tags_[t] for t in sentence_tags]
            for m, h in enumerate(heads, start=1):
                counts[ids[h], ids[m], int(h < m)] += 1
        self.table_ = np.log(counts / counts.sum())
        return self

    def _scores(self, sentence):
        ids = np.array([self.tags_.get(t, len(self.tags_)) for t in self._tags(sentence)])
        position = np.arange(len(ids))
        right = (position[:, None] < position[None, :]).astype(int)
        distance = np.abs(position[:, None] - position[None, :])
        return self.table_[ids[:, None], ids[None, :], right] - self.distance_weight * distance

    def predict_nbest(self, X, k):
        return [eisner_kbest(self._scores(s), k) for s in X]

    def predict(self, X):
        return [lst[0][0] for lst in self.predict_nbest(X, 1)]


def brute_force_features(heads, tags, n_tags):
    width = n_tags + 2
    root, none = n_tags, n_tags + 1
    tag = lambda i: root if i == 0 else tags[i - 1]  # noqa: E731
    ids = []
    for m, h in enumerate(heads, start=1):
        g = none if h == 0 else tag(heads[h - 1])
        ids.append(width ** 3 + ((tags[m - 1] * width + tag(h)) * width + g) * 2 + int(m < h))
    for h in range(len(heads) + 1):
        kids = [m for m, hh in enumerate(heads, start=1) if hh == h]
        left, right = [m for m in kids if m < h], [m for m in kids if m > h]
        if kids:
            tl = tags[max(left) - 1] if left else none
            tr = tags[min(right) - 1] if right else none
            ids.append((tl * width + tag(h)) * width + tr)
    return sorted(ids)


def test_template_features_match_brute_force():
    rng = np.random.default_rng(0)
    for heads in ([2, 0, 2, 3], [0, 1, 1, 1, 4], [3, 3, 0]):
        heads = np.array(heads)
        tags = rng.integers(0, 5, len(heads))
        out = np.empty(2 * len(heads) + 2, dtype=np.int64)
        n = tree_features(heads, tags, 5, out)
        assert sorted(out[:n]) == brute_force_features(heads, tags, 5)
        assert max(out[:n]) < n_template_features(5)


@pytest.fixture(scope="module")
def sample():
    X, y = load_sample_treebank("all")
    return X, y


@pytest.mark.slow
def test_reranker_beats_its_base_parser_on_the_sample(sample):
    X, y = sample
    X_train, y_train, X_test, y_test = X[:300], y[:300], X[300:], y[300:]
    base = TagPairParser().fit(X_train, y_train)
    base_uas = attachment_score(y_test, base.predict(X_test), X=X_test)
    reranker = NBestReranker(
        TagPairParser(), scorers=(SpectralTreeScorer(n_components=5, token_field="upos", rcond=0.03),),
        n_best=10, cv=3, n_epochs=5, random_state=0,
    ).fit(X_train, y_train)
    assert reranker.score(X_test, y_test) > base_uas + 0.01
    # the reranker only picks from the lists: it cannot beat their oracle
    nbest = reranker.parser_.predict_nbest(X_test, 10)
    oracle = np.mean([max(attachment_score([g], [h], X=[x]) for h, _ in lst)
                      for x, g, lst in zip(X_test, y_test, nbest)])
    assert reranker.score(X_test, y_test) <= oracle
    assert_same_predictions(reranker.predict(X_test, nbest=nbest), reranker.predict(X_test))


def test_prefit_parser_and_given_lists(sample):
    X, y = sample
    parser = TagPairParser().fit(X[:200], y[:200])
    lists = parser.predict_nbest(X[:200], 5)
    reranker = NBestReranker(parser, scorers=(), n_best=5, cv="prefit", n_epochs=2,
                             random_state=0).fit(X[:200], y[:200], train_nbest=lists)
    assert reranker.parser_ is parser
    assert reranker.coef_.shape == (n_template_features(len(reranker.tag_vocabulary_)) + 1,)
    assert reranker.coef_.dtype == np.float32
    with pytest.raises(ValueError, match="train_nbest"):
        reranker.fit(X[:200], y[:200], train_nbest=lists[:10])
    with pytest.raises(ValueError, match=r"X\[1\]"):
        reranker.predict(X[:2], nbest=[lists[0], []])
    # validation_fraction holds out each list with its sentence; the held-out
    # sentences are scored as score() scores them (the fitted parser's lists)
    held = NBestReranker(parser, scorers=(), n_best=5, cv="prefit", n_epochs=2,
                         validation_fraction=0.25, random_state=0).fit(
                             X[:200], y[:200], train_nbest=lists)
    # the split is the first draw of the fit's generator, the rest follow it
    rng = np.random.RandomState(0)
    out = np.sort(rng.permutation(200)[:50])
    assert len(held.history_) == 2
    assert held.history_[-1]["validation_score"] == held.score([X[i] for i in out],
                                                               [y[i] for i in out])
    kept = np.setdiff1d(np.arange(200), out)
    trained_on_kept = NBestReranker(parser, scorers=(), n_best=5, cv="prefit", n_epochs=2,
                                    random_state=rng).fit([X[i] for i in kept], [y[i] for i in kept],
                                                        train_nbest=[lists[i] for i in kept])
    np.testing.assert_array_equal(held.coef_, trained_on_kept.coef_)


def test_fold_lines_on_stderr_name_their_fold(sample, capsys):
    X, y = sample
    NBestReranker(TagPairParser(), scorers=(), n_best=3, cv=2, n_epochs=2, random_state=0,
                  verbose=2).fit(X[:40], y[:40])
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and len(lines) == 4
    assert lines[0].startswith("[NBestReranker] fold 1 of 2: ")
    assert lines[1].startswith("[NBestReranker] fold 2 of 2: ")
    assert lines[3].startswith("[NBestReranker] epoch 2: ")


def test_api(sample):
    X, y = sample
    check_structured_estimator(
        NBestReranker(TagPairParser(), scorers=(SpectralTreeScorer(n_components=2, min_count=1),),
                      n_best=4, cv=2, n_epochs=2, random_state=0),
        X[:60], y[:60], param_grid={"n_best": [2, 4], "n_epochs": [1, 2]},
    )


def test_pipeline_with_a_jackknifed_tagger(sample):
    """The paper's setup: the reranker learns from tags predicted by taggers that
    did not see the sentence (fit_transform jackknifes) and predicts from forms."""
    X, y = sample
    X_train, y_train, X_test = X[:240], y[:240], X[240:300]
    pipe = Pipeline([
        ("fields", TokenFieldSelector(fields=("form", "upos"))),
        # 3 folds instead of the paper's 10 keep the test short
        ("tag", EasyFirstBeamTagger(target="upos", beam_size=1, n_epochs=3, n_folds=3,
                                    random_state=0)),
        ("rerank", NBestReranker(TagPairParser(), scorers=(SpectralTreeScorer(
            n_components=3, n_init=1, n_epochs=5, strip_punctuation=True),),
            n_best=5, cv=2, n_epochs=2, random_state=0)),
    ]).fit(X_train, y_train)
    jackknifed = clone(pipe)[:-1].fit_transform(X_train, y_train)
    retagged = pipe[:-1].transform(X_train)
    gold_tags = [[t["upos"] for t in s] for s in X_train]

    def accuracy(tagged):
        return np.mean([t["upos"] == g for s, gs in zip(tagged, gold_tags) for t, g in zip(s, gs)])

    # training tags as noisy as unseen text's, not the tagger's own training data
    assert accuracy(jackknifed) < accuracy(retagged)
    predicted = pipe.predict(X_test)
    forms_only = [[{"form": t["form"]} for t in s] for s in X_test]
    assert_same_predictions(pipe.predict(forms_only), predicted)
    assert all(find_heads_error(h) is None for h in predicted)
