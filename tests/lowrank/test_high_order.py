"""The third-order feature vector of a tree against a slow reference that finds the parts itself.

The reference lists each head's children per side in plain Python, reads
the parts off those lists as the part definitions say (consecutive
siblings with start and end, grandparents, grand-siblings, tri-siblings,
head bigrams) and applies the template rows one by one; the kernels'
feature ids of the whole tree must be the same multiset.
"""

import numpy as np
import pytest

from sklearn_structured.kernels.hashing import feature_hash
from sklearn_structured.kernels.hill_climbing import (
    BIGRAM,
    GP,
    GSIB,
    SIB,
    TSIB,
    PartScorer,
    high_order_score,
    new_memo,
)
from sklearn_structured.lowrank._high_order import (
    PART_OFFSETS,
    TEMPLATES,
    high_order_difference,
    high_order_feature_ids,
)

from _oracles import all_trees

START, END = "start", "end"


def reference_parts(heads):
    """Parts as (type, tokens) with tokens a word position, START or END."""
    n = len(heads)
    hd = [None] + list(heads)
    parts = []
    for h in range(n + 1):
        for side in ("left", "right"):
            kids = [m for m in range(1, n + 1) if hd[m] == h and ((m < h) == (side == "left"))]
            kids.sort(key=lambda m: abs(m - h))
            seq = [START] + kids + [END]
            for a, b in zip(seq, seq[1:]):
                parts.append((SIB, (h, a, b), side))
                if h != 0:
                    parts.append((GSIB, (hd[h], h, a, b), side))
            for a, b, c in zip(seq, seq[1:], seq[2:]):
                parts.append((TSIB, (h, a, b, c), side))
    for m in range(1, n + 1):
        if hd[m] != 0:
            parts.append((GP, (hd[hd[m]], hd[m], m), None))
        if m >= 2:
            parts.append((BIGRAM, (m - 1, m, hd[m - 1], hd[m]), None))
    return parts


def distance_bin(d):
    return d if d <= 4 else 5 if d <= 6 else 6 if d <= 10 else 7


def direction_and_distance(ptype, tokens, side):
    right = int(side == "right")
    if ptype == SIB:
        h, a, b = tokens
        start = h if a == START else a
        return 1 + right, (abs(b - start) if b != END else 0)
    if ptype == GSIB:
        g, h, a, b = tokens
        start = h if a == START else a
        return 1 + right + 2 * int(g < h), (abs(b - start) if b != END else 0)
    if ptype == TSIB:
        return 1 + right, 0
    if ptype == GP:
        g, h, m = tokens
        return 1 + int(g < h) + 2 * int(h < m), abs(h - m)
    prev, m, h1, h2 = tokens
    return (1 + int(h1 < prev) + 2 * int(h2 < m) + 4 * int(h1 == h2) + 8 * int(h1 == m)
            + 16 * int(h2 == prev)), 0


def reference_ids(heads, attrs, n_features):
    ids = []
    for ptype, tokens, side in reference_parts(heads):
        shape, distance = direction_and_distance(ptype, tokens, side)
        for row in TEMPLATES[PART_OFFSETS[ptype]:PART_OFFSETS[ptype + 1]]:
            values = []
            for r in range(4):
                col = row[1 + r]
                token = tokens[r] if r < len(tokens) else None
                if col < 0:
                    values.append(0)
                elif token == START:
                    values.append(-1)
                elif token == END:
                    values.append(-2)
                else:
                    values.append(int(attrs[token, col]))
            conj = 0 if row[5] == 0 else shape + (32 * distance_bin(distance) if row[5] == 2 else 0)
            ids.append(feature_hash(int(row[0]), *values, conj) % n_features)
    return sorted(ids)


def random_scorer(rng, n, n_features=97, vocabulary=4):
    attrs = rng.integers(3, 3 + vocabulary, size=(n + 1, 4)).astype(np.int64)
    theta = rng.normal(size=n_features)
    return PartScorer(attrs, TEMPLATES, PART_OFFSETS, theta, n_features, 0.7)


@pytest.mark.parametrize("single_root", [False, True])
def test_feature_ids_equal_the_reference_sum_over_parts(single_root):
    rng = np.random.default_rng(3)
    for n in range(1, 7):
        trees = all_trees(n, single_root=single_root)
        for tree in trees[rng.choice(len(trees), size=min(len(trees), 12), replace=False)]:
            scorer = random_scorer(rng, n)
            ids = np.sort(high_order_feature_ids(tree, scorer))
            np.testing.assert_array_equal(ids, reference_ids(tree, scorer.attrs, 97))
            expected = 0.7 * scorer.theta[ids].sum()
            assert high_order_score(tree, scorer, new_memo(n, n * n)) == pytest.approx(expected)


def test_difference_is_gold_minus_predicted():
    rng = np.random.default_rng(5)
    n = 6
    trees = all_trees(n, single_root=True)
    for _ in range(10):
        gold, pred = trees[rng.choice(len(trees), size=2, replace=False)]
        scorer = random_scorer(rng, n)
        ids, values = high_order_difference(gold, pred, scorer)
        dense = np.zeros(97)
        np.add.at(dense, ids, values)
        expected = (np.bincount(reference_ids(gold, scorer.attrs, 97), minlength=97)
                    - np.bincount(reference_ids(pred, scorer.attrs, 97), minlength=97))
        np.testing.assert_array_equal(dense, expected)
        assert np.all(np.diff(ids) > 0)



def test_third_order_passive_aggressive_step_makes_the_margin_the_hamming_cost():
    # with gamma = 1 the score is linear in theta, so an unbounded step (huge C)
    # leaves gold ahead of the most violating tree by exactly its Hamming cost
    from sklearn_structured.datasets import load_sample_treebank
    from sklearn_structured.kernels.hill_climbing import full_score
    from sklearn_structured.lowrank import LowRankTensorParser
    from sklearn_structured.lowrank._encoding import encode
    from sklearn_structured.lowrank._estimator import HILL_CLIMBING, _token_arrays, train_sentence
    from sklearn_structured.lowrank._high_order import part_scorer
    from sklearn_structured.lowrank._kernels import ALL_ARCS, Config, Weights, sentence_arc_scores

    X, y = load_sample_treebank("train")
    parser = LowRankTensorParser(rank=2, gamma=1.0, n_epochs=1, n_features=2**12,
                                 random_state=0).fit(X[:20], y[:20])
    sentence, gold = X[0][:6], np.arange(6, dtype=np.int64)  # a chain as gold
    tokens = _token_arrays(encode([sentence], parser._encoding()))
    rng = np.random.default_rng(0)
    params = Weights(rng.normal(size=2**12), np.zeros((parser.n_word_features_, 2)),
                     np.zeros((parser.n_word_features_, 2)), np.zeros(parser.W_.shape))
    sums = Weights(*(np.zeros_like(p) for p in params))
    config = Config(1.0, 1e9, 2**12, True)
    loss, pred = train_sentence(0, 6, gold, tokens, params, sums, config, None, 0, HILL_CLIMBING)
    assert loss > 0 and not np.array_equal(pred, gold)
    scores = sentence_arc_scores(0, 6, tokens, params, config, ALL_ARCS)[0]
    scorer = part_scorer(0, 6, tokens, params.theta, 2**12, 1.0)
    margin = (full_score(scores, gold, scorer, new_memo(6, 36))
              - full_score(scores, pred, scorer, new_memo(6, 36)))
    assert margin == pytest.approx(np.sum(pred != gold))
