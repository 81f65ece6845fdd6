"""Public decoders: input validation, edge cases, batch decoding and properties."""

from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sklearn_structured.decoding import (
    chu_liu_edmonds,
    decode_batch,
    eisner,
    eisner_kbest,
    eisner_marginals,
)
from sklearn_structured.kernels.eisner import nonprojective_arc_count
from sklearn_structured.utils.estimator_checks import assert_same_predictions
from _oracles import all_trees, is_projective, is_tree

DECODERS = [
    eisner,
    lambda s: eisner_kbest(s, 3),
    eisner_marginals,
    chu_liu_edmonds,
    lambda s: decode_batch([s]),
]


def tree_score(scores, heads):
    return float(scores[heads, np.arange(1, len(heads) + 1)].sum())


@pytest.mark.parametrize("decode", DECODERS)
@pytest.mark.parametrize(
    "scores, message",
    [
        (np.zeros((1, 1)), "at least one token"),
        (np.zeros((0, 0)), "at least one token"),
        (np.zeros((3, 4)), "square"),
        (np.zeros(4), "square"),
        (np.array([[np.nan, 1.0], [0.0, np.nan]]), None),
        (np.array([[0.0, np.inf], [0.0, 0.0]]), r"scores\[0, 1\]|score matrix 0"),
        ([["a", "b"], ["c", "d"]], "numeric"),
    ],
)
def test_bad_scores_raise_clear_errors(decode, scores, message):
    if message is None:  # NaN where no arc can be (diagonal, column 0) is never read
        decode(scores)
        return
    with pytest.raises(ValueError, match=message):
        decode(scores)


def test_single_token_sentence():
    scores = np.array([[0.0, -3.0], [7.0, 0.0]])
    for heads in (eisner(scores), chu_liu_edmonds(scores), chu_liu_edmonds(scores, single_root=False)):
        np.testing.assert_array_equal(heads, [0])
    ((heads, score),) = eisner_kbest(scores, 10)
    assert heads.tolist() == [0] and score == -3.0
    marginals, log_z = eisner_marginals(scores)
    assert log_z == -3.0 and marginals[0, 1] == 1.0 and marginals.sum() == 1.0
    assert [h.tolist() for h in decode_batch([scores, scores], "chu_liu_edmonds")] == [[0], [0]]


def test_eisner_kbest_rejects_bad_k():
    for k in (0, -1, 2.5, True, "3"):
        with pytest.raises(ValueError, match="positive integer"):
            eisner_kbest(np.zeros((3, 3)), k)


def test_eisner_kbest_returns_pairs_best_first():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(6, 6))
    pairs = eisner_kbest(scores, 10**30)
    assert len(pairs) == len(all_trees(5, projective=True, single_root=True))
    values = [score for _, score in pairs]
    assert values == sorted(values, reverse=True)
    assert all(isinstance(score, float) and heads.dtype == np.int64 for heads, score in pairs)
    np.testing.assert_array_equal(pairs[0][0], eisner(scores))


def test_accepts_lists_and_non_contiguous_arrays():
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(8, 8))
    expected = eisner(scores)
    np.testing.assert_array_equal(eisner(scores.tolist()), expected)
    np.testing.assert_array_equal(eisner(np.asfortranarray(scores)), expected)
    np.testing.assert_array_equal(chu_liu_edmonds(scores.T.T.astype(np.float32)), chu_liu_edmonds(scores))


@pytest.mark.parametrize("algorithm", ["eisner", "chu_liu_edmonds"])
@pytest.mark.parametrize("n_jobs", [None, 2, -1])
def test_decode_batch_matches_one_by_one(algorithm, n_jobs):
    rng = np.random.default_rng(2)
    batch = [rng.normal(size=(n + 1, n + 1)) for n in rng.integers(1, 25, size=40)]
    single = eisner if algorithm == "eisner" else chu_liu_edmonds
    decoded = decode_batch(batch, algorithm=algorithm, n_jobs=n_jobs)
    assert_same_predictions(decoded, [single(scores) for scores in batch])


def test_decode_batch_options():
    assert decode_batch([]) == []
    with pytest.raises(ValueError, match="algorithm"):
        decode_batch([np.zeros((3, 3))], algorithm="viterbi")
    with pytest.raises(ValueError, match="score matrix 1"):
        decode_batch([np.zeros((3, 3)), np.zeros((2, 3))])
    scores = np.zeros((4, 4))
    scores[0, 1:] = 1.0
    (multi,) = decode_batch([scores], algorithm="chu_liu_edmonds", single_root=False)
    assert multi.tolist() == [0, 0, 0]


score_matrices = st.integers(1, 12).flatmap(
    lambda n: arrays(np.float64, (n + 1, n + 1), elements=st.floats(-20, 20, allow_nan=False, width=32))
)


@settings(max_examples=60, deadline=None)
@given(score_matrices, st.randoms(use_true_random=False))
def test_eisner_beats_any_projective_tree(scores, random):
    heads = eisner(scores)
    n = len(heads)
    assert is_tree(heads, single_root=True) and is_projective(heads)
    # a random projective tree: attach tokens one by one inside a random bracketing
    other = _random_projective_tree(n, random)
    assert is_tree(other, single_root=True) and is_projective(other)
    assert tree_score(scores, heads) >= tree_score(scores, other) - 1e-9


def _random_projective_tree(n, random):
    heads = np.zeros(n, dtype=np.int64)

    def build(lo, hi, parent):  # tokens lo..hi all hang below parent, head chosen at random
        if lo > hi:
            return
        head = random.randint(lo, hi)
        heads[head - 1] = parent
        build(lo, head - 1, head)
        build(head + 1, hi, head)

    build(1, n, 0)
    return heads


@settings(max_examples=60, deadline=None)
@given(score_matrices)
def test_non_projective_decoders_dominate(scores):
    projective = tree_score(scores, eisner(scores))
    single = tree_score(scores, chu_liu_edmonds(scores, single_root=True))
    free = tree_score(scores, chu_liu_edmonds(scores, single_root=False))
    assert free >= single - 1e-9 and single >= projective - 1e-9
    marginals, log_z = eisner_marginals(scores)
    # log Z is a soft maximum: at least the best tree's score, at most that plus log(#trees)
    n = len(scores) - 1
    n_trees = comb(3 * n - 2, n - 1) // n  # projective single-root trees
    assert projective - 1e-9 <= log_z <= projective + np.log(n_trees) + 1e-9
    np.testing.assert_allclose(marginals[:, 1:].sum(axis=0), 1.0, atol=1e-9)
    assert eisner_kbest(scores, 1)[0][1] == pytest.approx(projective, abs=1e-9)



# --- huge and wide-ranging scores -------------------------------------------------

def _exact_tree_differences(scores, trees, reference):
    """Each tree's score minus ``reference``'s, summed exactly arc by arc."""
    from fractions import Fraction

    n = len(reference)
    return [float(sum(Fraction(scores[h, m]) - Fraction(scores[reference[m - 1], m])
                      for m, h in zip(range(1, n + 1), heads))) for heads in trees]


@pytest.mark.parametrize("scale", [1.0, 1e12, 1e15, 1e300])
def test_eisner_marginals_stay_normalised_for_huge_scores(scale):
    rng = np.random.default_rng(int(np.log10(scale)))
    for n in (2, 3, 5):
        # huge scores with near ties, so that the marginals are not all 0 or 1
        scores = scale * rng.integers(-2, 3, size=(n + 1, n + 1)) + rng.normal(size=(n + 1, n + 1))
        marginals, log_z = eisner_marginals(scores)
        np.testing.assert_allclose(marginals[:, 1:].sum(axis=0), 1.0, atol=1e-12)
        assert np.all((marginals >= 0) & (marginals <= 1)) and np.isfinite(log_z)
        # the scores themselves are known only to their float resolution, and
        # the chart adds up to n of them: that bounds any log-odds error
        tolerance = 1e-9 + 4 * n * scale * 2.0**-52
        if tolerance > 1e-2:
            continue
        trees = list(all_trees(n, projective=True, single_root=True))
        differences = np.array(_exact_tree_differences(scores, trees, trees[0]))
        weights = np.exp(differences - differences.max())
        expected = np.zeros_like(marginals)
        for heads, weight in zip(trees, weights / weights.sum()):
            expected[heads, np.arange(1, n + 1)] += weight
        np.testing.assert_allclose(marginals, expected, atol=tolerance)


def test_single_root_choice_is_exact_when_scores_span_2_to_52():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(2, 6))
        scores = rng.normal(size=(n + 1, n + 1))
        scores[0, 1:] = rng.integers(-3, 4, size=n)
        scores[1:, 1:] += 2.0**52  # arcs between words dwarf the root arcs
        trees = list(all_trees(n, single_root=True))
        heads = chu_liu_edmonds(scores, single_root=True)
        assert max(_exact_tree_differences(scores, trees, list(heads))) <= 0.0


def test_penalty_decoder_says_when_it_is_not_exact():
    from sklearn_structured.kernels.mst import single_root_by_penalty
    from sklearn_structured.lowrank._estimator import _single_root_tree

    rng = np.random.default_rng(1)
    scores = rng.normal(size=(8, 8))
    heads, exact = single_root_by_penalty(scores)
    assert exact
    np.testing.assert_array_equal(heads, chu_liu_edmonds(scores, single_root=True))
    scores[1:, 1:] += 2.0**52
    assert not single_root_by_penalty(scores)[1]
    # the parser's decoder then takes the exact path
    np.testing.assert_array_equal(_single_root_tree(scores),
                                  chu_liu_edmonds(scores, single_root=True))


def test_eisner_kbest_refuses_what_memory_cannot_hold(monkeypatch):
    import sklearn_structured.decoding as decoding

    scores = np.random.default_rng(0).normal(size=(31, 31))
    monkeypatch.setattr(decoding, "_available_memory", lambda: 2**30)
    with pytest.raises(ValueError, match=r"would need about 1\.4 GiB .* ask for fewer"):
        eisner_kbest(scores, 100_000)
    # a short sentence has few trees: a huge k costs nothing
    assert len(eisner_kbest(scores[:4, :4], 10**12)) == 7
    assert len(eisner_kbest(scores, 50)) == 50


def test_nonprojective_arc_count_agrees_with_the_oracle():
    trees = [np.asarray(t, np.int64) for n in range(1, 6)
             for t in all_trees(n, projective=False, single_root=False)]
    assert any(not is_projective(t) for t in trees)
    for t in trees:
        assert (nonprojective_arc_count(t, np.array([0, len(t)])) == 0) == is_projective(t)
    # trees laid end to end: the counts add up
    a, b = np.array([0, 4, 1, 1]), np.array([2, 0, 2])  # one crossing arc (4 -> 2), none
    both = np.concatenate([a, b, a])
    assert nonprojective_arc_count(both, np.array([0, 4, 7, 11])) == 2
