"""Chain Viterbi kernels against brute-force enumeration of all label sequences."""

import itertools

import numpy as np
import pytest

from sklearn_structured.kernels.chain import (
    candidate_pair_count,
    candidate_viterbi_into,
    loss_augmented_viterbi,
    sequence_score,
    viterbi,
    viterbi_batch,
    viterbi_into,
)
from sklearn_structured.utils.estimator_checks import assert_same_predictions


def brute_force(emissions, transitions, start, end, gold=None, cost=0.0):
    n_steps, n_labels = emissions.shape
    best, best_score = None, -np.inf
    for labels in itertools.product(range(n_labels), repeat=n_steps):
        score = start[labels[0]] + end[labels[-1]]
        score += sum(emissions[t, labels[t]] for t in range(n_steps))
        score += sum(transitions[labels[t - 1], labels[t]] for t in range(1, n_steps))
        if gold is not None:
            score += cost * sum(a != b for a, b in zip(labels, gold))
        if score > best_score:
            best, best_score = labels, score
    return np.array(best), best_score


def random_chain(rng, n_steps, n_labels, with_ends):
    emissions = rng.normal(size=(n_steps, n_labels))
    transitions = rng.normal(size=(n_labels, n_labels))
    if with_ends:
        return emissions, transitions, rng.normal(size=n_labels), rng.normal(size=n_labels)
    return emissions, transitions, np.zeros(n_labels), np.zeros(n_labels)


SIZES = [(t, m) for t in range(1, 6) for m in range(1, 5)]


@pytest.mark.parametrize("n_steps,n_labels", SIZES)
@pytest.mark.parametrize("with_ends", [False, True])
def test_viterbi_matches_enumeration(n_steps, n_labels, with_ends):
    rng = np.random.default_rng(100 * n_steps + n_labels)
    for _ in range(5):
        chain = random_chain(rng, n_steps, n_labels, with_ends)
        labels, score = viterbi(*chain)
        expected, expected_score = brute_force(*chain)
        np.testing.assert_array_equal(labels, expected)
        assert score == pytest.approx(expected_score)
        assert sequence_score(*chain, labels) == pytest.approx(score)


@pytest.mark.parametrize("n_steps,n_labels", SIZES)
def test_loss_augmented_viterbi_matches_enumeration(n_steps, n_labels):
    rng = np.random.default_rng(7 + 100 * n_steps + n_labels)
    for cost in (0.5, 1.0, 3.0):
        chain = random_chain(rng, n_steps, n_labels, with_ends=True)
        gold = rng.integers(0, n_labels, size=n_steps).astype(np.int64)
        labels, score = loss_augmented_viterbi(*chain, gold, cost)
        expected, expected_score = brute_force(*chain, gold=gold, cost=cost)
        np.testing.assert_array_equal(labels, expected)
        assert score == pytest.approx(expected_score)
        hamming = np.sum(labels != gold)
        assert sequence_score(*chain, labels) + cost * hamming == pytest.approx(score)


def test_large_cost_moves_every_label_off_gold():
    rng = np.random.default_rng(0)
    chain = random_chain(rng, 6, 3, with_ends=True)
    gold = np.array([0, 1, 2, 0, 1, 2])
    labels, _ = loss_augmented_viterbi(*chain, gold, 1e6)
    assert np.all(labels != gold)


def test_batch_equals_one_by_one():
    rng = np.random.default_rng(3)
    lengths = [1, 4, 2, 7, 3]
    n_labels = 4
    _, transitions, start, end = random_chain(rng, 1, n_labels, with_ends=True)
    pieces = [rng.normal(size=(n, n_labels)) for n in lengths]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    flat = viterbi_batch(np.vstack(pieces), offsets, transitions, start, end)
    assert_same_predictions(np.split(flat, offsets[1:-1]),
                            [viterbi(piece, transitions, start, end)[0] for piece in pieces])


def candidate_chain(emissions, transitions, candidate_sets):
    """The pruned-chain arrays of ``candidate_viterbi_into`` for a dense chain."""
    candidates = np.concatenate(candidate_sets).astype(np.int64)
    offsets = np.cumsum([0] + [len(c) for c in candidate_sets]).astype(np.int64)
    scores = np.concatenate([emissions[t, c] for t, c in enumerate(candidate_sets)])
    pairs = [transitions[np.ix_(a, b)].ravel() for a, b in zip(candidate_sets, candidate_sets[1:])]
    pairs = np.concatenate(pairs) if pairs else np.zeros(0)
    assert pairs.size == candidate_pair_count(offsets)
    return candidates, offsets, scores, pairs


@pytest.mark.parametrize("n_steps,n_labels", SIZES)
def test_candidate_viterbi_with_every_label_is_exact_viterbi(n_steps, n_labels):
    rng = np.random.default_rng(11 + 100 * n_steps + n_labels)
    emissions, transitions, start, end = random_chain(rng, n_steps, n_labels, with_ends=False)
    gold = rng.integers(0, n_labels, size=n_steps).astype(np.int64)
    arrays = candidate_chain(emissions, transitions, [np.arange(n_labels)] * n_steps)
    for g, cost in ((np.zeros(0, np.int64), 0.0), (gold, 1.5)):
        out = np.empty(n_steps, np.int64)
        score = candidate_viterbi_into(*arrays, g, cost, out)
        expected = np.empty(n_steps, np.int64)
        expected_score = viterbi_into(emissions, transitions, start, end, g, cost, expected)
        np.testing.assert_array_equal(out, expected)
        assert score == pytest.approx(expected_score)


@pytest.mark.parametrize("n_steps", range(1, 6))
def test_candidate_viterbi_matches_enumeration_of_the_candidates(n_steps):
    rng = np.random.default_rng(5 + n_steps)
    n_labels = 5
    for _ in range(10):
        emissions, transitions, _, _ = random_chain(rng, n_steps, n_labels, with_ends=False)
        sets = [np.sort(rng.choice(n_labels, size=rng.integers(1, n_labels + 1), replace=False))
                for _ in range(n_steps)]
        gold = rng.integers(0, n_labels, size=n_steps).astype(np.int64)  # may be no candidate
        arrays = candidate_chain(emissions, transitions, sets)
        for g, cost in ((np.zeros(0, np.int64), 0.0), (gold, 0.7)):
            best, best_score = None, -np.inf
            for labels in itertools.product(*sets):
                score = sequence_score(emissions, transitions, np.zeros(n_labels),
                                       np.zeros(n_labels), np.array(labels))
                if g.size:
                    score += cost * np.sum(np.array(labels) != g)
                if score > best_score:
                    best, best_score = labels, score
            # a sub-slice of bigger arrays: offsets need not start at 0
            candidates, offsets, scores, pairs = arrays
            padded = (np.r_[[9, 9], candidates], offsets + 2, np.r_[[1e9, 1e9], scores], pairs)
            out = np.empty(n_steps, np.int64)
            score = candidate_viterbi_into(*padded, g, cost, out)
            np.testing.assert_array_equal(out, best)
            assert score == pytest.approx(best_score)
