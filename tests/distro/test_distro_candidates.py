"""DistroSequenceSVM pruned by a tag dictionary: the candidate kernels against the exact ones."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_structured.distro import DistroSequenceSVM
from sklearn_structured.distro import _kernels, _sequence_kernels
from sklearn_structured.distro._sequence import _fit_tag_dictionary
from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.kernels.chain import viterbi_batch


def random_problem(rng, n_labels=4, d=3, n_features=7, lengths=(3, 1, 4, 2)):
    offsets = np.cumsum([0, *lengths]).astype(np.int64)
    n_tokens = offsets[-1]
    X = sp.random(n_tokens, n_features, density=0.4, format="csr", random_state=0)
    X.data[:] = 1.0
    y = rng.integers(0, n_labels, size=n_tokens).astype(np.int64)
    A = rng.normal(size=(d, n_labels))
    A /= np.linalg.norm(A, axis=0)
    every = _sequence_kernels.Candidates(np.tile(np.arange(n_labels), n_tokens),
                                np.arange(0, n_labels * n_tokens + 1, n_labels))
    rows = _kernels.SparseRows(X.indptr, X.indices, X.data)
    return X, rows, offsets, y, A, every


def iterates(rng, n_features, d):
    V = rng.normal(size=(n_features + 1, d)) * 0.1
    T = rng.normal(size=(d, d)) * 0.1
    return _kernels.Iterates(V, np.zeros_like(V), T, np.zeros_like(T),
                             np.array([1.0, 0.0, 0.0, 0.0]))


@pytest.mark.parametrize("onehot", [False, True])
def test_weight_epoch_with_every_label_a_candidate_is_the_exact_epoch(onehot):
    rng = np.random.default_rng(0)
    X, rows, offsets, y, A, every = random_problem(rng)
    if onehot:
        A = np.eye(A.shape[1])
    exact = iterates(np.random.default_rng(1), X.shape[1], A.shape[0])
    pruned = _kernels.Iterates(*(a.copy() for a in exact))
    order = np.array([2, 0, 3, 1, 0, 2], dtype=np.int64)
    for alpha, scale in ((0.1, 1.0), (0.3, 1.01e-9)):
        # a scale near its floor also exercises the rescaling of the stored weights
        exact.V[:] /= scale
        exact.T[:] /= scale
        exact.state[0] = scale
        for a, b in zip(exact, pruned):
            b[:] = a
        loss = _sequence_kernels.chain_weight_epoch(rows, offsets, y, _sequence_kernels.ALL_LABELS,
                                                    order, A, onehot, exact, alpha, 2.0, 4)
        loss_pruned = _sequence_kernels.chain_weight_epoch(rows, offsets, y, every, order, A, onehot,
                                                           pruned, alpha, 2.0, 4)
        assert loss_pruned == pytest.approx(loss)
        for a, b in zip(exact, pruned):
            np.testing.assert_allclose(a, b, atol=1e-10)


@pytest.mark.parametrize("nuclear_penalty", [0.0, 0.3])
def test_label_epoch_with_every_label_a_candidate_is_the_exact_epoch(nuclear_penalty):
    rng = np.random.default_rng(2)
    X, rows, offsets, y, A, every = random_problem(rng)
    weights = iterates(np.random.default_rng(3), X.shape[1], A.shape[0])
    V, T = weights.V * 10, weights.T * 10
    Z = np.ascontiguousarray(X @ V[:-1] + V[-1])
    order = np.array([1, 3, 0, 2], dtype=np.int64)
    exact, pruned = A.copy(), A.copy()
    _sequence_kernels.chain_label_epoch(rows, V, Z, offsets, y, _sequence_kernels.ALL_LABELS, order,
                                        exact, T, 0.1, nuclear_penalty, 4)
    _sequence_kernels.chain_label_epoch(rows, V, np.zeros((0, A.shape[0])), offsets, y, every, order,
                                        pruned, T, 0.1, nuclear_penalty, 4)
    assert not np.allclose(exact, A)
    np.testing.assert_allclose(pruned, exact, atol=1e-10)


def test_decode_over_candidates_is_restricted_exact_viterbi():
    """Candidates that contain the exact Viterbi path change nothing; the hinge losses agree."""
    rng = np.random.default_rng(4)
    X, rows, offsets, y, A, every = random_problem(rng, n_labels=5)
    weights = iterates(np.random.default_rng(5), X.shape[1], A.shape[0])
    V, T = weights.V * 10, weights.T * 10
    E = np.ascontiguousarray((X @ V[:-1] + V[-1]) @ A)
    transitions = _sequence_kernels.label_transition_scores(A, T)
    zeros = np.zeros(A.shape[1])
    best = viterbi_batch(E, offsets, transitions, zeros, zeros)
    out, _ = _sequence_kernels.candidate_decode(rows, V, offsets, np.zeros(0, np.int64), every, A, T,
                                       False, 4)
    np.testing.assert_array_equal(out, best)
    # prune to the best label plus one other: the answer stays
    lists = [np.unique([b, (b + 1) % 5]) for b in best]
    pruned = _sequence_kernels.Candidates(np.concatenate(lists), np.cumsum([0] + [2] * len(lists)))
    out, _ = _sequence_kernels.candidate_decode(rows, V, offsets, np.zeros(0, np.int64), pruned, A, T,
                                       False, 4)
    np.testing.assert_array_equal(out, best)
    _, losses = _sequence_kernels.candidate_decode(rows, V, offsets, y, every, A, T, False, 4)
    np.testing.assert_allclose(losses, _sequence_kernels.sequence_hinge_losses(E, offsets, y, transitions))


def test_tag_dictionary():
    forms = ["a", "a", "a", "xbc", "ydc", "a"]
    y = np.array([0, 1, 0, 2, 3, 0])
    keys, offsets, labels = _fit_tag_dictionary(forms, y, 2)
    table = {k: labels[offsets[i]:offsets[i + 1]].tolist() for i, k in enumerate(keys)}
    # the frequent word keeps its own tags and adds them to its suffix class
    assert table == {"w a": [0, 1], "s a": [0, 1], "s bc": [2], "s dc": [3]}


def test_candidate_tags_follow_the_dictionary_and_bound_the_predictions():
    """A frequent word may take its own tags, another word those of its suffix, a word
    of an unseen suffix every tag; the predicted tag is always a candidate."""
    X = [["a", "a", "xbc"], ["a", "ydc", "a"]]
    y = [["D", "N", "V"], ["D", "A", "D"]]
    model = DistroSequenceSVM(tag_dictionary=2, n_rounds=1, n_epochs=1, random_state=0).fit(X, y)
    candidates = model.candidate_tags([["a", "zbc", "qqq"]])
    assert [c.tolist() for c in candidates[0]] == [["D", "N"], ["V"], ["A", "D", "N", "V"]]
    for tags, allowed in zip(model.predict(X), model.candidate_tags(X)):
        assert all(tag in options for tag, options in zip(tags, allowed))
    exact = DistroSequenceSVM(n_rounds=1, n_epochs=1, random_state=0).fit(X, y)
    assert [c.tolist() for c in exact.candidate_tags([["a"]])[0]] == [["A", "D", "N", "V"]]


@pytest.fixture(scope="module")
def sample():
    X, _ = load_sample_treebank("train")
    X_test, _ = load_sample_treebank("test")
    tags = lambda data: [[t["upos"] + "|" + t["feats"] for t in s] for s in data]  # noqa: E731
    return X, tags(X), X_test, tags(X_test)


@pytest.mark.slow
def test_pruned_tagger_learns_and_loses_little_to_exact_viterbi(sample):
    label_vectors = "learned"
    X, y, X_test, y_test = sample
    params = dict(n_components=None if label_vectors == "onehot" else 16,
                  label_vectors=label_vectors, alpha=1e-4, n_rounds=1, n_epochs=3,
                  random_state=0)
    exact = DistroSequenceSVM(**params).fit(X, y)
    pruned = DistroSequenceSVM(tag_dictionary=2, **params).fit(X, y)
    assert len(pruned.classes_) > 50
    assert pruned.score(X_test, y_test) > exact.score(X_test, y_test) - 0.05
    assert pruned.score(X, y) > 0.9
    # every predicted tag is a candidate of its word
    keys = set(pruned.dictionary_keys_.tolist())
    for sentence, tags in zip(X_test[:20], pruned.predict(X_test[:20])):
        for token, tag in zip(sentence, tags):
            key = "w " + token["form"]
            if key not in keys:
                key = "s " + token["form"][-2:]
            if key in keys:
                i = pruned.dictionary_keys_.tolist().index(key)
                allowed = pruned.dictionary_labels_[pruned.dictionary_offsets_[i]:
                                                    pruned.dictionary_offsets_[i + 1]]
                assert tag in pruned.classes_[allowed]
