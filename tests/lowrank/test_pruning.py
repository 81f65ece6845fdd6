"""Arc pruning of LowRankTensorParser: the kept arcs against brute force, the pruner's
update, and the parser with a pruner (its trees, its persistence, no pruning at all)."""

import pickle

import numpy as np
import pytest

from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.lowrank import LowRankTensorParser
from sklearn_structured.lowrank._encoding import fit_encoding
from sklearn_structured.lowrank._pruning import kept_arcs, pruner_epoch, pruner_scores
from sklearn_structured.utils import load_model, save_model
from sklearn_structured.utils.estimator_checks import assert_same_predictions

from _oracles import is_tree

SMALL = dict(rank=4, n_epochs=1, n_features=2**14, random_state=0)


@pytest.fixture(scope="module")
def sample():
    X, y = load_sample_treebank("train")
    X_test, y_test = load_sample_treebank("test")
    return X[:80], y[:80], X_test, y_test


def brute_force_kept(scores, margin, max_heads, gold):
    n = scores.shape[0] - 1
    keep = np.zeros_like(scores, dtype=bool)
    for m in range(1, n + 1):
        heads = [h for h in range(n + 1) if h != m]
        best = max(scores[h, m] for h in heads)
        # a head is kept when fewer than max_heads heads rank before it (higher score,
        # or equal and further left) and it is within the margin
        for h in heads:
            before = sum(scores[g, m] > scores[h, m]
                         or (scores[g, m] == scores[h, m] and g < h) for g in heads)
            keep[h, m] = before < max_heads and scores[h, m] >= best - margin
        if len(gold):
            keep[gold[m - 1], m] = True
    return keep


@pytest.mark.parametrize("seed", range(6))
def test_kept_arcs_equal_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    # integer scores give ties, which go to the leftmost head
    scores = rng.integers(-3, 4, size=(n + 1, n + 1)).astype(float)
    gold = rng.integers(0, n + 1, size=n) if seed % 2 else np.zeros(0, dtype=np.int64)
    for margin in (0.0, 1.5, 100.0):
        for max_heads in (1, 2, n):
            np.testing.assert_array_equal(kept_arcs(scores, margin, max_heads, gold),
                                          brute_force_kept(scores, margin, max_heads, gold))


def test_a_pruner_update_leaves_the_last_word_with_its_gold_head_ahead_by_the_cost():
    # the last word is scored after every other word's update, and with a large C
    # passive-aggressive moves its gold head ahead of the other by the cost, 1, when
    # it was not already ahead by as much
    X, _ = load_sample_treebank("train")
    sentence, heads = X[1][:2], np.array([2, 0])
    _, data = fit_encoding([sentence], None, True)
    theta, sums = np.zeros(2**12), np.zeros(2**12)
    args = (data["form"], data["xpos"], data["upos"], True)
    counter, _ = pruner_epoch(data["sent_off"], *args, heads, theta, sums, 0, 1e9)
    assert counter == 2 and np.any(theta)
    scores = pruner_scores(0, 2, *args, theta, 2**12)
    assert scores[0, 2] >= scores[1, 2] + 1 - 1e-9


def test_without_pruning_every_arc_is_kept(sample):
    X, y, X_test, _ = sample
    parser = LowRankTensorParser(**SMALL).fit(X, y)
    assert parser.pruner_theta_ is None
    for keep, sentence in zip(parser.kept_arcs(X_test[:5]), X_test[:5]):
        n = len(sentence)
        expected = ~np.eye(n + 1, dtype=bool)
        expected[:, 0] = False
        np.testing.assert_array_equal(keep, expected)


@pytest.mark.parametrize("order", [1, 3])
def test_a_pruner_keeping_every_arc_changes_nothing(sample, order):
    X, y, X_test, _ = sample
    plain = LowRankTensorParser(order=order, **SMALL).fit(X, y)
    everything = LowRankTensorParser(order=order, prune_margin=1e9, prune_max_heads=10**6,
                                     **SMALL).fit(X, y)
    assert everything.pruner_theta_ is not None
    np.testing.assert_array_equal(plain.theta_, everything.theta_)
    assert_same_predictions(plain.predict(X_test), everything.predict(X_test))


@pytest.mark.parametrize("order", [1, 3])
def test_one_kept_head_per_word_still_gives_trees(sample, order):
    # the pruner's best heads alone often close cycles: the decoders then take
    # pruned arcs, so every sentence still gets a tree
    X, y, X_test, _ = sample
    parser = LowRankTensorParser(order=order, prune_margin=0.0, prune_max_heads=1,
                                 **SMALL).fit(X, y)
    keep = parser.kept_arcs(X_test)
    assert all(k.sum(axis=0)[1:].max() == 1 for k, s in zip(keep, X_test) if len(s) > 1)
    for heads, sentence in zip(parser.predict(X_test), X_test):
        assert len(heads) == len(sentence) and is_tree(heads, single_root=True)


def test_the_pruner_keeps_most_gold_heads_with_few_heads_per_word(sample):
    X, y, X_test, y_test = sample
    parser = LowRankTensorParser(prune_margin=2.0, prune_max_heads=5, **SMALL).fit(X, y)
    keep = parser.kept_arcs(X_test)
    words = sum(len(h) for h in y_test)
    recall = sum(k[h, np.arange(1, len(h) + 1)].sum() for k, h in zip(keep, y_test)) / words
    per_word = sum(k.sum() for k in keep) / words
    candidates = sum(len(h) ** 2 for h in y_test) / words
    assert recall > 0.9 and per_word < candidates / 3, (recall, per_word, candidates)
    # sentences of at most prune_max_heads words keep every arc
    short = [k for k, s in zip(keep, X_test) if len(s) <= 5]
    assert short and all(k[:, 1:].sum() == (len(k) - 1) ** 2 for k in short)
    long = next(i for i, s in enumerate(X_test) if len(s) > 5)
    scores = parser.arc_scores(X_test[long])
    n = len(X_test[long])
    np.testing.assert_array_equal(np.isfinite(scores)[:, 1:], keep[long][:, 1:])
    assert np.isneginf(scores[np.arange(n + 1), np.arange(n + 1)]).all()


def test_the_pruner_is_saved_and_pickled_with_the_parser(sample, tmp_path):
    X, y, X_test, _ = sample
    parser = LowRankTensorParser(prune_margin=2.0, **SMALL).fit(X, y)
    save_model(parser, tmp_path / "model")
    for again in (load_model(tmp_path / "model"), pickle.loads(pickle.dumps(parser))):
        assert again.pruner_theta_.dtype == np.float32
        np.testing.assert_array_equal(again.pruner_theta_, parser.pruner_theta_)
        assert_same_predictions(parser.predict(X_test), again.predict(X_test))


def test_verbose_reports_the_kept_heads(sample, capsys):
    X, y, _, _ = sample
    LowRankTensorParser(prune_margin=2.0, verbose=1, **SMALL).fit(X, y)
    line = [ln for ln in capsys.readouterr().err.splitlines() if "pruner" in ln][0]
    assert "heads kept per training word" in line and "gold heads among them" in line


def test_a_parser_pickled_before_pruning_existed_loads_without_a_pruner(sample):
    X, y, X_test, _ = sample
    parser = LowRankTensorParser(**SMALL).fit(X, y)
    state = parser.__getstate__()
    for name in ("prune_margin", "prune_max_heads", "pruner_theta_"):
        del state[name]
    old = LowRankTensorParser.__new__(LowRankTensorParser)
    old.__setstate__(state)
    repr(old)  # every parameter is there
    assert old.get_params()["prune_margin"] is None
    assert_same_predictions(parser.predict(X_test), old.predict(X_test))
