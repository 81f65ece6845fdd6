"""DistroSequenceSVM (first-order chain DISTRO): API, exactness, learning on the EWT sample."""

import itertools
from collections import Counter, defaultdict

import numpy as np
import pytest

from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.distro import DistroSequenceSVM
from sklearn_structured.kernels.chain import viterbi_batch
from sklearn_structured.kernels.hashing import feature_hash
from sklearn_structured.utils import word_shape
from sklearn_structured.distro._sequence_kernels import (
    label_transition_scores,
    sequence_hinge_losses,
)
from sklearn_structured.utils.estimator_checks import check_structured_estimator

FAST = dict(n_rounds=1, n_epochs=2, random_state=0)


def tagged(subset, field="xpos"):
    X, _ = load_sample_treebank(subset)
    return [[t["form"] for t in s] for s in X], [[t[field] for t in s] for s in X]


@pytest.fixture(scope="module")
def sample():
    return tagged("train"), tagged("test")


def most_frequent_tag_accuracy(X_train, y_train, X_test, y_test):
    """Per-word most frequent training tag; unseen words get the overall most frequent tag."""
    by_word, overall = defaultdict(Counter), Counter()
    for words, tags in zip(X_train, y_train):
        for w, t in zip(words, tags):
            by_word[w][t] += 1
            overall[t] += 1
    default = overall.most_common(1)[0][0]
    pairs = [(by_word[w].most_common(1)[0][0] if w in by_word else default, t)
             for words, tags in zip(X_test, y_test) for w, t in zip(words, tags)]
    return np.mean([p == t for p, t in pairs])


def test_structured_api(sample):
    (X, y), _ = sample
    check_structured_estimator(
        DistroSequenceSVM(**FAST), X[:60], y[:60],
        param_grid={"n_components": [4, None], "alpha": [1e-4, 1e-3]},
    )


@pytest.mark.slow
def test_beats_most_frequent_tag_baseline(sample):
    (X, y), (X_test, y_test) = sample
    baseline = most_frequent_tag_accuracy(X, y, X_test, y_test)
    onehot = DistroSequenceSVM(label_vectors="onehot", alpha=1e-4, n_rounds=2, n_epochs=3,
                               random_state=0).fit(X, y)
    distro = DistroSequenceSVM(n_components=20, alpha=1e-4, n_rounds=2, n_epochs=3,
                               random_state=0).fit(X, y)
    assert baseline < 0.72
    assert onehot.score(X_test, y_test) > baseline + 0.08
    assert distro.score(X_test, y_test) > baseline + 0.08
    prediction = distro.predict(X_test[:3])
    assert [len(p) for p in prediction] == [len(s) for s in X_test[:3]]
    assert all(tag in set(distro.classes_) for p in prediction for tag in p)


def test_prediction_is_the_argmax_of_the_tensor_product_score():
    """Enumerate every tag sequence and score it with a_y^T (W phi + b) + a_y^T T a_y'."""
    X = [["the", "dog", "runs"], ["a", "cat", "sleeps"], ["dogs", "run"], ["the", "cat"]]
    y = [["D", "N", "V"], ["D", "N", "V"], ["N", "V"], ["D", "N"]]
    model = DistroSequenceSVM(n_components=2, **FAST).fit(X, y)
    A, T = model.label_vectors_, model.transition_matrix_
    for sentence in [["the", "dog", "sleeps"], ["cat", "the", "runs", "a"]]:
        tokens, _ = model._encode([sentence])
        Z = tokens @ model.coef_.T + model.intercept_
        best = max(
            itertools.product(range(3), repeat=len(sentence)),
            key=lambda seq: sum(A[:, seq[t]] @ Z[t] for t in range(len(seq)))
            + sum(A[:, seq[t]] @ T @ A[:, seq[t + 1]] for t in range(len(seq) - 1)),
        )
        assert model.predict([sentence])[0] == list(model.classes_[list(best)])


def test_hinge_losses_match_enumeration():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(2, 3))
    T = rng.normal(size=(2, 2))
    E = rng.normal(size=(7, 3))
    offsets = np.array([0, 3, 7])
    y = rng.integers(0, 3, size=7)
    transitions = label_transition_scores(A, T)
    np.testing.assert_allclose(transitions, A.T @ T @ A)
    losses = sequence_hinge_losses(E, offsets, y, transitions)
    for s in range(2):
        e, gold = E[offsets[s]:offsets[s + 1]], y[offsets[s]:offsets[s + 1]]
        def score(seq):
            return sum(e[t, seq[t]] for t in range(len(seq))) + sum(
                transitions[seq[t], seq[t + 1]] for t in range(len(seq) - 1))
        augmented = max(score(seq) + sum(a != b for a, b in zip(seq, gold))
                        for seq in itertools.product(range(3), repeat=len(gold)))
        assert losses[s] == pytest.approx(augmented - score(gold))


def test_objective_decreases_and_verbose_reports_it(sample, capsys):
    (X, y), _ = sample
    model = DistroSequenceSVM(n_components=8, n_rounds=2, n_epochs=2, random_state=0,
                              verbose=1).fit(X[:100], y[:100])
    curve = [value for record in model.history_
             for value in (record.get("label_objective"), record.get("objective"))
             if value is not None]
    assert len(curve) == 1 + 2 * 2 and curve[-1] == model.objective_
    assert curve[-1] < 0.5 * curve[0]
    for before, after in zip(curve[0::2], curve[1::2]):
        assert after <= before + 1e-12
    assert model.objective(X[:100], y[:100]) == pytest.approx(model.objective_)
    out, err = capsys.readouterr()
    assert out == ""  # progress goes to standard error, one line per weight epoch
    lines = err.splitlines()
    assert len(lines) == len(model.history_) == 3 * 2
    assert lines[-1].startswith("[DistroSequenceSVM] round 2 weights epoch 2: ")
    assert sum("label objective" in line for line in lines) == 2
    assert f"objective {curve[-1]:.4g}" in lines[-1]
    np.testing.assert_allclose(np.linalg.norm(model.label_vectors_, axis=0), 1.0)


def test_token_features_are_the_rows_the_emission_weights_read(sample):
    """One row per token; the tensor-product emission score of a token is its row times the
    weights, so with the transitions the rows reproduce the predicted tags."""
    (X, y), _ = sample
    model = DistroSequenceSVM(label_vectors="onehot", **FAST).fit(X[:40], y[:40])
    tokens = model.token_features(X[40:45])
    assert tokens.shape == (sum(map(len, X[40:45])), model.coef_.shape[1])
    emissions = np.ascontiguousarray((tokens @ model.coef_.T + model.intercept_)
                                     @ model.label_vectors_)
    transitions = model.label_vectors_.T @ model.transition_matrix_ @ model.label_vectors_
    offsets = np.cumsum([0, *map(len, X[40:45])])
    zeros = np.zeros(len(model.classes_))
    best = viterbi_batch(emissions, offsets, np.ascontiguousarray(transitions), zeros, zeros)
    assert model.classes_[best].tolist() == [t for tags in model.predict(X[40:45]) for t in tags]


def test_onehot_keeps_identity_label_vectors(sample):
    (X, y), _ = sample
    model = DistroSequenceSVM(label_vectors="onehot", n_components=3, **FAST).fit(X[:40], y[:40])
    np.testing.assert_array_equal(model.label_vectors_, np.eye(len(model.classes_)))


def test_features():
    """The emission features, read independently: the shared hash of corpus ids."""
    assert word_shape("McDonald's") == "XxXx'x"
    assert word_shape("1999") == "d"
    assert word_shape("U.S.") == "X.X."
    train = [["I", "like", {"form": "Tea", "upos": "NOUN"}], ["Tim", "likes", "tea"]]
    model = DistroSequenceSVM(**FAST).fit(train, [["P", "V", "N"], ["N", "V", "N"]])
    form, attributes = (model.vocabularies_[f].stoi for f in ("form", "attributes"))
    sentence = ["I", {"form": "like"}, "Teas"]  # "Teas" is unseen, its prefix "Tea" is not
    indptr, keys, offsets = model._feature_keys([sentence])
    assert list(offsets) == [0, 3] and list(indptr) == [0, 6, 12, 18]
    words = ["I", "like", "Teas"]
    ids = [form.get(w, 0) for w in words]
    for j, word in enumerate(words):
        expected = [
            feature_hash(1, ids[j], 0, 0, 0, 0),
            feature_hash(2, attributes.get(word[:3], 0), 0, 0, 0, 0),
            feature_hash(3, attributes.get(word[-3:], 0), 0, 0, 0, 0),
            feature_hash(4, ids[j - 1] if j > 0 else -2, 0, 0, 0, 0),
            feature_hash(5, ids[j + 1] if j < 2 else -3, 0, 0, 0, 0),
            feature_hash(6, attributes.get(word_shape(word), 0), 0, 0, 0, 0),
        ]
        assert list(keys[indptr[j]:indptr[j + 1]]) == expected
    assert ids[2] == 0 and attributes["Tea"] > 0  # the unseen-word branch was exercised
    tokens, _ = model._encode([sentence])
    assert tokens.shape == (3, len(model.feature_keys_))
    assert tokens[2].nnz == 4  # the word and its suffix "eas" were never seen in training


def user_features(sentence):
    return [["lower=" + w.lower(), "len=%d" % min(len(w), 5)] for w in sentence]


@pytest.mark.slow
def test_user_feature_function(sample):
    (X, y), (X_test, y_test) = sample
    model = DistroSequenceSVM(features=user_features, **FAST).fit(X, y)
    builtin = DistroSequenceSVM(**FAST).fit(X, y)
    assert model.coef_.shape[1] < builtin.coef_.shape[1]
    assert model.score(X_test, y_test) > 0.5


def test_bad_input():
    model = DistroSequenceSVM(**FAST)
    with pytest.raises(ValueError, match=r"X\[1\] is an empty sentence"):
        model.fit([["a"], []], [["D"], []])
    with pytest.raises(ValueError, match=r"y\[0\] has 1 labels but X\[0\] has 2 tokens"):
        model.fit([["a", "b"]], [["D"]])
    with pytest.raises(TypeError, match="list of sentences"):
        model.fit(np.zeros((2, 3)), [["D"] * 3] * 2)
    bad = DistroSequenceSVM(features=lambda s: [["x"]], **FAST)
    with pytest.raises(ValueError, match=r"features\(X\[0\]\) gave 1 feature lists for 2 tokens"):
        bad.fit([["a", "b"]], [["D", "N"]])
    fitted = DistroSequenceSVM(**FAST).fit([["a", "b"]], [["D", "N"]])
    with pytest.raises(ValueError, match=r"X\[0\] is an empty sentence"):
        fitted.predict([[]])
