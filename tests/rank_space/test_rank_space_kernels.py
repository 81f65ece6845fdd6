"""Exactness of the rank-space kernels against dense and brute-force oracles (float64)."""

import itertools

import numpy as np
import pytest

from sklearn_structured.kernels.rank_space import (
    hmm_rank_backward,
    hmm_rank_forward,
    hmm_state_viterbi,
    rank_space_inside,
    rank_space_outside,
    td_pcfg_inside,
)
from sklearn_structured.rank_space._hmm import time_major_batch


def normalise(x, axis):
    return x / x.sum(axis=axis, keepdims=True)


def random_grammar(rng, n_nt, n_pt, rank, n_words, peaked=2.0):
    """A proper CPD grammar: U rows, V / W columns over all symbols, root, emissions."""
    s = n_nt + n_pt
    U = normalise(np.exp(peaked * rng.standard_normal((n_nt, rank))), 1)
    V = normalise(np.exp(peaked * rng.standard_normal((s, rank))), 0)
    W = normalise(np.exp(peaked * rng.standard_normal((s, rank))), 0)
    root = normalise(np.exp(rng.standard_normal(n_nt)), 0)
    emission = normalise(np.exp(peaked * rng.standard_normal((n_pt, n_words))), 1)
    return root, U, V, W, emission


def kernel_inputs(grammar, words, n_nt):
    root, U, V, W, emission = grammar
    leaf = np.ascontiguousarray(emission[:, words].transpose(1, 2, 0))  # (b, n, PT)
    return (
        leaf,
        np.ascontiguousarray(V[n_nt:]),
        np.ascontiguousarray(W[n_nt:]),
        U.T @ V[:n_nt],
        U.T @ W[:n_nt],
        root @ U,
    )


def dense_inside(grammar, words, n_nt):
    """State-space inside with the full rule tensor T[A, B, C] (O(n^3 m^3))."""
    root, U, V, W, emission = grammar
    T = np.einsum("aq,bq,cq->abc", U, V, W)
    n = len(words)
    s = V.shape[0]
    beta = {}
    for i, w in enumerate(words):
        beta[i, i + 1] = np.concatenate([np.zeros(n_nt), emission[:, w]])
    for width in range(2, n + 1):
        for i in range(n - width + 1):
            j = i + width
            total = np.zeros(s)
            for k in range(i + 1, j):
                total[:n_nt] += np.einsum("abc,b,c->a", T, beta[i, k], beta[k, j])
            beta[i, j] = total
    return np.log(root @ beta[0, n][:n_nt])


def binary_trees(i, j):
    """All binary bracketings of (i, j) as frozensets of spans."""
    if j - i == 1:
        yield frozenset([(i, j)])
        return
    for k in range(i + 1, j):
        for left in binary_trees(i, k):
            for right in binary_trees(k, j):
                yield left | right | {(i, j)}


def tree_probability(grammar, words, n_nt, spans):
    """p(words, bracketing): sum over the symbol labellings of one fixed tree."""
    root, U, V, W, emission = grammar
    T = np.einsum("aq,bq,cq->abc", U, V, W)
    s = V.shape[0]

    def inside(i, j):
        if j - i == 1:
            return np.concatenate([np.zeros(n_nt), emission[:, words[i]]])
        k = next(k for k in range(i + 1, j) if (i, k) in spans and (k, j) in spans)
        out = np.zeros(s)
        out[:n_nt] = np.einsum("abc,b,c->a", T, inside(i, k), inside(k, j))
        return out

    return root @ inside(0, len(words))[:n_nt]


def brute_force(grammar, words, n_nt):
    n = len(words)
    trees = list(binary_trees(0, n))
    probs = np.array([tree_probability(grammar, words, n_nt, t) for t in trees])
    z = probs.sum()
    marginals = np.zeros((n + 1, n + 1))
    for t, p in zip(trees, probs):
        for i, j in t:
            if j - i >= 2:
                marginals[i, j] += p / z
    return np.log(z), marginals


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
def test_inside_matches_dense_and_brute_force(n):
    rng = np.random.default_rng(n)
    n_nt, n_pt, rank = 3, 4, 5
    grammar = random_grammar(rng, n_nt, n_pt, rank, n_words=6)
    words = rng.integers(0, 6, size=(3, n))
    log_z, *_ = rank_space_inside(*kernel_inputs(grammar, words, n_nt))
    for s in range(3):
        dense = dense_inside(grammar, words[s], n_nt)
        np.testing.assert_allclose(log_z[s], dense, rtol=0, atol=1e-8)
        if n <= 7:
            exact, _ = brute_force(grammar, words[s], n_nt)
            np.testing.assert_allclose(log_z[s], exact, rtol=0, atol=1e-8)


def test_normalisation_makes_a_proper_rule_tensor():
    rng = np.random.default_rng(0)
    root, U, V, W, emission = random_grammar(rng, 4, 6, 3, 5)
    T = np.einsum("aq,bq,cq->abc", U, V, W)
    np.testing.assert_allclose(T.sum(axis=(1, 2)), 1.0, atol=1e-12)


def test_td_pcfg_inside_matches_rank_space():
    rng = np.random.default_rng(1)
    n_nt, n_pt, rank = 5, 7, 4
    grammar = random_grammar(rng, n_nt, n_pt, rank, n_words=9)
    root, U, V, W, emission = grammar
    words = rng.integers(0, 9, size=(4, 9))
    inputs = kernel_inputs(grammar, words, n_nt)
    log_z = rank_space_inside(*inputs)[0]
    td = td_pcfg_inside(inputs[0], inputs[1], inputs[2], U, V[:n_nt].copy(), W[:n_nt].copy(), root)
    np.testing.assert_allclose(td, log_z, atol=1e-10)


@pytest.mark.parametrize("n", [2, 4, 6, 7])
def test_marginals_match_brute_force(n):
    rng = np.random.default_rng(10 + n)
    n_nt, n_pt, rank = 3, 3, 4
    grammar = random_grammar(rng, n_nt, n_pt, rank, n_words=5)
    words = rng.integers(0, 5, size=(2, n))
    inputs = kernel_inputs(grammar, words, n_nt)
    log_z, *charts = rank_space_inside(*inputs)
    marginals = rank_space_outside(*inputs, *charts)[0]
    for s in range(2):
        _, exact = brute_force(grammar, words[s], n_nt)
        np.testing.assert_allclose(marginals[s], exact, atol=1e-9)


def test_long_sentences_stay_finite_and_consistent():
    # 60 words multiply thousands of probabilities: the scaled charts must not underflow
    rng = np.random.default_rng(3)
    n_nt, n_pt, rank = 4, 6, 8
    grammar = random_grammar(rng, n_nt, n_pt, rank, n_words=50, peaked=3.0)
    words = rng.integers(0, 50, size=(2, 60))
    inputs = kernel_inputs(grammar, words, n_nt)
    log_z, *charts = rank_space_inside(*inputs)
    assert np.all(np.isfinite(log_z)) and np.all(log_z < -200)
    inputs32 = [np.asarray(a, np.float32) for a in inputs]
    log_z32 = rank_space_inside(*inputs32)[0]
    np.testing.assert_allclose(log_z32, log_z, rtol=1e-4)
    marginals = rank_space_outside(*inputs, *charts)[0]
    # every binary tree over n words has n - 1 spans of width >= 2
    np.testing.assert_allclose(marginals.sum(axis=(1, 2)), 59, atol=1e-7)


def finite_difference(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    flat = x.reshape(-1)
    g = grad.reshape(-1)
    for idx in range(flat.size):
        old = flat[idx]
        flat[idx] = old + eps
        up = f()
        flat[idx] = old - eps
        down = f()
        flat[idx] = old
        g[idx] = (up - down) / (2 * eps)
    return grad


def test_outside_gradients_match_finite_differences():
    rng = np.random.default_rng(4)
    n_nt, n_pt, rank = 3, 4, 3
    grammar = random_grammar(rng, n_nt, n_pt, rank, n_words=6)
    words = rng.integers(0, 6, size=(2, 5))
    inputs = [np.array(a) for a in kernel_inputs(grammar, words, n_nt)]
    log_z, *charts = rank_space_inside(*inputs)
    grads = rank_space_outside(*inputs, *charts)[1:]
    for arg, analytic in zip(range(6), grads):
        # perturb unnormalised inputs: log Z is a polynomial in them, the gradient is exact
        numeric = finite_difference(lambda: rank_space_inside(*inputs)[0].sum(), inputs[arg])
        np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7, err_msg=f"input {arg}")


def dense_hmm_forward(start, U, V, W, words):
    """Full-state forward with the explicit factor p(z', x | z)."""
    factor = np.einsum("zq,yq,xq->zyx", U, V, W)
    alpha = start.copy()
    for x in words:
        alpha = alpha @ factor[:, :, x]
    return np.log(alpha.sum())


def random_hmm(rng, m, rank, n_words):
    start = normalise(np.exp(rng.standard_normal(m)), 0)
    U = normalise(np.exp(2 * rng.standard_normal((m, rank))), 1)
    V = normalise(np.exp(2 * rng.standard_normal((m, rank))), 0)
    W = normalise(np.exp(2 * rng.standard_normal((n_words, rank))), 0)
    return start, U, V, W


def hmm_batch(W, sentences):
    """Kernel inputs of sentences of any lengths: time-major emissions sorted by
    decreasing length, the lengths, and the order."""
    words, lengths, order = time_major_batch(sentences)
    return np.ascontiguousarray(W[words]), lengths, order


def test_hmm_rank_forward_matches_full_state_forward():
    rng = np.random.default_rng(5)
    m, rank, n_words = 7, 4, 6
    start, U, V, W = random_hmm(rng, m, rank, n_words)
    sentences = [rng.integers(0, n_words, size=n) for n in (30, 12, 30, 1, 7)]
    emit, lengths, order = hmm_batch(W, sentences)
    log_p = hmm_rank_forward(start @ U, V.T @ U, emit, lengths)[0]
    for column, i in enumerate(order):
        np.testing.assert_allclose(log_p[column], dense_hmm_forward(start, U, V, W, sentences[i]), atol=1e-10)
    # the model is a distribution over all sequences of a given length
    all_pairs = list(np.array(list(itertools.product(range(n_words), repeat=2))))
    total = np.exp(hmm_rank_forward(start @ U, V.T @ U, *hmm_batch(W, all_pairs)[:2])[0]).sum()
    np.testing.assert_allclose(total, 1.0, atol=1e-12)


def test_hmm_backward_matches_finite_differences():
    rng = np.random.default_rng(6)
    m, rank, n_words = 5, 3, 4
    start, U, V, W = random_hmm(rng, m, rank, n_words)
    sentences = [rng.integers(0, n_words, size=n) for n in (6, 2, 4)]
    emit, lengths, _ = hmm_batch(W, sentences)
    start_rank, K = start @ U, V.T @ U
    _, scaled, predicted, step_log = hmm_rank_forward(start_rank, K, emit, lengths)
    grads = hmm_rank_backward(K, emit, lengths, scaled, predicted, step_log)
    for x, analytic in zip((start_rank, K, emit), grads):
        numeric = finite_difference(lambda: hmm_rank_forward(start_rank, K, emit, lengths)[0].sum(), x)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-8)


def test_hmm_viterbi_matches_enumeration():
    rng = np.random.default_rng(7)
    m, rank, n_words = 3, 2, 4
    start, U, V, W = random_hmm(rng, m, rank, n_words)
    words = rng.integers(0, n_words, size=5)
    factor = np.einsum("zq,yq,xq->zyx", U, V, W)
    best, best_states = -np.inf, None
    for states in itertools.product(range(m), repeat=len(words)):
        p = start[states[0]]
        for t in range(len(words) - 1):
            p *= factor[states[t], states[t + 1], words[t]]
        p *= factor[states[-1], :, words[-1]].sum()
        if p > best:
            best, best_states = p, states
    got = hmm_state_viterbi(np.log(start), U, V, np.ascontiguousarray(W[words]))
    assert tuple(got) == best_states
