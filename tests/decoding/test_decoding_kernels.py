"""Decoder kernels against brute-force enumeration of every tree for n <= 6."""

import functools

import numpy as np
import pytest

from sklearn_structured.kernels import (
    chu_liu_edmonds_argmax,
    chu_liu_edmonds_argmax_batch,
    eisner_argmax,
    eisner_argmax_batch,
    eisner_inside_outside,
    eisner_kbest_kernel,
)
from sklearn_structured.utils.estimator_checks import assert_same_predictions
from _oracles import all_trees, is_projective, is_tree, tree_scores

SEEDS = range(40)
SIZES = range(1, 7)


def random_scores(n, seed, integer=False):
    rng = np.random.default_rng(seed)
    if integer:  # many ties: the decoders must still return optimal trees
        return rng.integers(-2, 3, size=(n + 1, n + 1)).astype(np.float64)
    return rng.normal(size=(n + 1, n + 1))


def tree_score(scores, heads):
    return float(scores[heads, np.arange(1, len(heads) + 1)].sum())


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("integer", [False, True])
def test_eisner_argmax_matches_enumeration(n, integer):
    trees = all_trees(n, projective=True, single_root=True)
    for seed in SEEDS:
        scores = random_scores(n, seed, integer)
        heads = eisner_argmax(scores)
        assert heads.dtype == np.int64 and heads.shape == (n,)
        assert is_tree(heads, single_root=True) and is_projective(heads)
        assert tree_score(scores, heads) == pytest.approx(tree_scores(scores, trees).max(), abs=1e-9)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("single_root", [False, True])
@pytest.mark.parametrize("integer", [False, True])
def test_chu_liu_edmonds_matches_enumeration(n, single_root, integer):
    trees = all_trees(n, projective=False, single_root=single_root)
    for seed in SEEDS:
        scores = random_scores(n, 1000 + seed, integer)
        heads = chu_liu_edmonds_argmax(scores, single_root)
        assert heads.dtype == np.int64 and heads.shape == (n,)
        assert is_tree(heads, single_root=single_root)
        assert tree_score(scores, heads) == pytest.approx(tree_scores(scores, trees).max(), abs=1e-9)


def test_chu_liu_edmonds_finds_nested_cycles():
    # tokens 1-2 and 3-4 prefer each other (two cycles), and the pair of pairs
    # prefers each other too (a cycle of contracted nodes); the root arcs are poor
    n = 4
    scores = np.full((n + 1, n + 1), -5.0)
    scores[1, 2] = scores[2, 1] = scores[3, 4] = scores[4, 3] = 10.0
    scores[2, 3] = scores[3, 2] = 4.0
    scores[0, 1] = -1.0
    trees = all_trees(n, single_root=True)
    best = tree_scores(scores, trees).max()
    assert tree_score(scores, chu_liu_edmonds_argmax(scores, True)) == pytest.approx(best)
    np.testing.assert_array_equal(chu_liu_edmonds_argmax(scores, True), [0, 1, 2, 3])


def test_chu_liu_edmonds_handles_forbidden_arcs():
    rng = np.random.default_rng(3)
    n = 6
    scores = rng.normal(size=(n + 1, n + 1))
    scores[rng.random(size=scores.shape) < 0.3] = -np.inf
    scores[0, 1] = 0.0  # some tree stays allowed: the chain 0 -> 1 -> 2 ... -> n
    for m in range(2, n + 1):
        scores[m - 1, m] = 0.0
    for single_root in (False, True):
        trees = all_trees(n, single_root=single_root)
        heads = chu_liu_edmonds_argmax(scores, single_root)
        assert tree_score(scores, heads) == pytest.approx(tree_scores(scores, trees).max())


def test_single_root_constraint_changes_the_answer():
    n = 3
    scores = np.zeros((n + 1, n + 1))
    scores[0, 1:] = 5.0  # every token would rather attach to the root
    assert np.sum(chu_liu_edmonds_argmax(scores, False) == 0) == 3
    assert np.sum(chu_liu_edmonds_argmax(scores, True) == 0) == 1
    assert np.sum(eisner_argmax(scores) == 0) == 1


def pack(score_list):
    lengths = np.array([len(s) - 1 for s in score_list], dtype=np.int64)
    offsets = np.zeros(len(score_list) + 1, dtype=np.int64)
    np.cumsum([s.size for s in score_list], out=offsets[1:])
    return np.concatenate([s.ravel() for s in score_list]), offsets, lengths


def test_batch_kernels_match_single_sentence_kernels():
    rng = np.random.default_rng(0)
    score_list = [rng.normal(size=(n + 1, n + 1)) for n in rng.integers(1, 30, size=25)]
    flat, offsets, lengths = pack(score_list)
    # the batch kernels return every sentence's heads end to end
    split = np.cumsum(lengths)[:-1]
    assert_same_predictions(np.split(eisner_argmax_batch(flat, offsets, lengths), split),
                            [eisner_argmax(scores) for scores in score_list])
    assert_same_predictions(np.split(chu_liu_edmonds_argmax_batch(flat, offsets, lengths, True), split),
                            [chu_liu_edmonds_argmax(scores, True) for scores in score_list])


@pytest.mark.parametrize("n", SIZES)
def test_inside_outside_matches_enumeration(n):
    trees = all_trees(n, projective=True, single_root=True)
    for seed in range(10):
        scores = random_scores(n, 2000 + seed) * 3
        marginals, log_z = eisner_inside_outside(scores)
        totals = tree_scores(scores, trees)
        high = totals.max()
        expected_log_z = high + np.log(np.exp(totals - high).sum())
        assert log_z == pytest.approx(expected_log_z, abs=1e-9)
        weights = np.exp(totals - expected_log_z)
        expected = np.zeros((n + 1, n + 1))
        for m in range(1, n + 1):
            np.add.at(expected[:, m], trees[:, m - 1], weights)
        np.testing.assert_allclose(marginals, expected, atol=1e-10)
        np.testing.assert_allclose(marginals[:, 1:].sum(axis=0), 1.0, atol=1e-10)


def test_inside_outside_is_stable_for_large_scores():
    rng = np.random.default_rng(1)
    n = 40
    scores = rng.normal(size=(n + 1, n + 1)) * 1000
    marginals, log_z = eisner_inside_outside(scores)
    assert np.isfinite(log_z) and np.all(np.isfinite(marginals))
    np.testing.assert_allclose(marginals[:, 1:].sum(axis=0), 1.0, atol=1e-8)
    # scores this peaked put most mass on the argmax tree, whose arcs are
    # each at least as probable as the tree itself
    heads = eisner_argmax(scores)
    best_probability = np.exp(tree_score(scores, heads) - log_z)
    assert best_probability > 0.5
    assert np.all(marginals[heads, np.arange(1, n + 1)] >= best_probability - 1e-9)


def check_kbest(scores, k, trees):
    n = scores.shape[0] - 1
    heads, values = eisner_kbest_kernel(scores, k)
    expected = np.sort(tree_scores(scores, trees))[::-1][:k]
    assert heads.shape == (len(expected), n) and heads.dtype == np.int64
    # exact: the same scores as the top of the enumeration, best first
    np.testing.assert_allclose(values, expected, atol=1e-9)
    assert np.all(np.diff(values) <= 1e-12)
    # each reported score is that of the returned tree, and trees are distinct
    np.testing.assert_allclose(tree_scores(scores, heads), values, atol=1e-9)
    returned = {tuple(h) for h in heads}
    assert len(returned) == len(heads)
    assert returned <= projective_tree_set(n)


@functools.lru_cache(maxsize=None)
def projective_tree_set(n):
    return {tuple(h) for h in all_trees(n, projective=True, single_root=True)}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("integer", [False, True])
def test_eisner_kbest_matches_enumeration(n, integer):
    trees = all_trees(n, projective=True, single_root=True)
    for seed in range(15):
        scores = random_scores(n, 3000 + seed, integer)
        for k in (1, 2, 7, 50, 1000):
            check_kbest(scores, k, trees)


def test_eisner_kbest_first_tree_is_the_argmax():
    rng = np.random.default_rng(5)
    scores = rng.normal(size=(31, 31))
    heads, values = eisner_kbest_kernel(scores, 20)
    assert values[0] == pytest.approx(tree_score(scores, eisner_argmax(scores)))
    assert len({tuple(h) for h in heads}) == 20 and np.all(np.diff(values) <= 0)


def test_kernels_are_callable_from_other_numba_code():
    from numba import njit

    # k and single_root arrive as arguments: literal constants would make numba
    # compile (and cache) separate literal-typed copies of the kernels
    @njit
    def decode_all(scores, k, single_root):
        projective = eisner_argmax(scores)
        free = chu_liu_edmonds_argmax(scores, single_root)
        kbest, values = eisner_kbest_kernel(scores, k)
        marginals, log_z = eisner_inside_outside(scores)
        return projective, free, kbest, values, marginals, log_z

    scores = random_scores(7, 11)
    projective, free, kbest, values, marginals, log_z = decode_all(scores, 3, False)
    np.testing.assert_array_equal(projective, eisner_argmax(scores))
    np.testing.assert_array_equal(free, chu_liu_edmonds_argmax(scores, False))
    np.testing.assert_array_equal(kbest[0], projective)
    assert log_z == pytest.approx(eisner_inside_outside(scores)[1])


def test_single_root_chu_liu_edmonds_on_longer_sentences():
    # independent check beyond enumeration: the best single-root tree is the
    # best over root children r of the free problem with only 0 -> r allowed
    rng = np.random.default_rng(7)
    for n in (12, 30):
        scores = rng.normal(size=(n + 1, n + 1))
        best = -np.inf
        for r in range(1, n + 1):
            only_r = scores.copy()
            only_r[0, :] = -np.inf
            only_r[0, r] = scores[0, r]
            best = max(best, tree_score(scores, chu_liu_edmonds_argmax(only_r, False)))
        heads = chu_liu_edmonds_argmax(scores, True)
        assert is_tree(heads, single_root=True)
        assert tree_score(scores, heads) == pytest.approx(best, abs=1e-9)


def test_eisner_kbest_with_k_beyond_the_number_of_trees():
    scores = random_scores(4, 9)
    heads, values = eisner_kbest_kernel(scores, 10**12)  # must not reserve memory for k
    assert len(heads) == len(all_trees(4, projective=True, single_root=True)) == 30
