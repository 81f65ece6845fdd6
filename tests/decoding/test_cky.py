"""MBR CKY against enumeration of all binary bracketings."""

import numpy as np
import pytest

from sklearn_structured.kernels.cky import cky_max_span_sum


def bracketings(i, j):
    if j - i == 1:
        yield [(i, j)]
        return
    for k in range(i + 1, j):
        for left in bracketings(i, k):
            for right in bracketings(k, j):
                yield [(i, j)] + left + right


def tree_score(scores, spans):
    return sum(scores[i, j] for i, j in spans if j - i >= 2)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7])
def test_cky_reaches_the_best_bracketing(n):
    rng = np.random.default_rng(n)
    for _ in range(5):
        scores = rng.random((n + 1, n + 1))
        best, spans = cky_max_span_sum(scores)
        exhaustive = max(tree_score(scores, t) for t in bracketings(0, n))
        np.testing.assert_allclose(best, exhaustive, atol=1e-12)
        np.testing.assert_allclose(tree_score(scores, spans.tolist()), best, atol=1e-12)
        assert len(spans) == 2 * n - 1
        assert sorted(map(tuple, spans.tolist())) == sorted(set(map(tuple, spans.tolist())))


def test_ties_go_to_the_smallest_split_and_spans_are_preorder():
    # all trees tie; split k = i + 1 everywhere makes every left child a single word,
    # i.e. the right-branching tree
    best, spans = cky_max_span_sum(np.zeros((5, 5)))
    assert best == 0
    assert [tuple(s) for s in spans] == [(0, 4), (0, 1), (1, 4), (1, 2), (2, 4), (2, 3), (3, 4)]


def test_marginal_of_one_tree_recovers_that_tree():
    rng = np.random.default_rng(0)
    trees = list(bracketings(0, 6))
    target = trees[rng.integers(len(trees))]
    scores = np.zeros((7, 7))
    for i, j in target:
        scores[i, j] = 1.0
    _, spans = cky_max_span_sum(scores)
    assert set(map(tuple, spans.tolist())) == set(target)
