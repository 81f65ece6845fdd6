"""Oracle tests of the spectral kernels and of the synthetic latent-tree corpus."""

import itertools

import numpy as np
import pytest

from sklearn_structured.datasets import make_latent_tree_corpus
from sklearn_structured.kernels.latent_tree import (
    bottom_up_order,
    children_table,
    exact_log_probs,
    expected_counts,
)
from sklearn_structured.spectral._kernels import count_moments, spectral_log_probs
from sklearn_structured.spectral._moments import (
    _real_eigenbasis,
    operators_from_moments,
    probabilities_from_operators,
)
from sklearn_structured.utils import find_heads_error, pack_ragged
from sklearn_structured.utils.estimator_checks import assert_same_predictions


def small_corpus(n_sentences, n_states=3, vocabulary_size=12, seed=0, **kwargs):
    X, y, log_prob, model = make_latent_tree_corpus(
        n_sentences, n_states, vocabulary_size, random_state=seed, return_model=True, **kwargs
    )
    words = [np.array([int(w[1:]) for w in s]) for s in X]
    ids, offsets = pack_ragged(words)
    heads, _ = pack_ragged(y)
    return X, y, log_prob, model, ids, heads, offsets


def brute_force_log_prob(words, heads, model):
    """Sum Eq. 2 over every assignment of hidden states."""
    return brute_force_expected_counts(words, heads, model)[0]


def test_bottom_up_order_puts_children_first():
    heads = np.array([2, 0, 2, 5, 3, 5])
    start, kids = children_table(heads)
    assert list(kids[start[2]:start[3]]) == [1, 3]
    order = list(bottom_up_order(start, kids, len(heads)))
    assert sorted(order) == [1, 2, 3, 4, 5, 6]
    for m, h in enumerate(heads, start=1):
        if h:
            assert order.index(m) < order.index(h)


def test_sampler_gives_valid_projective_trees_and_exact_log_probs():
    X, y, log_prob, model, ids, heads, offsets = small_corpus(300, max_length=6)
    assert len(X) == len(y) == 300
    for h in y:
        assert find_heads_error(h) is None
        for m, head in enumerate(h, start=1):  # projective: nothing inside an arc escapes it
            lo, hi = sorted((m, head))
            for inner in range(lo + 1, hi):
                a = inner
                while a not in (0, lo, hi):
                    a = h[a - 1]
                assert a in (lo, hi), "non-projective arc"
    for i in range(0, 300, 15):
        if len(X[i]) <= 5:
            assert log_prob[i] == pytest.approx(brute_force_log_prob(
                ids[offsets[i]:offsets[i + 1]], y[i], model), rel=1e-10)
    # same random_state: same model, and the shorter corpus is a prefix
    X2, y2, log_prob2 = make_latent_tree_corpus(50, 3, 12, random_state=0, max_length=6)
    assert X2 == X[:50] and np.allclose(log_prob2, log_prob[:50])


def relation(h, p, v):
    """Block of v's embedding in the third view: 0 head of p, 1 left child, 2 right child."""
    return 0 if h[p - 1] == v else (1 if v < p else 2)


def brute_force_moments(ids, heads, offsets, embedding):
    k = embedding.shape[1]
    root = np.zeros(k)
    pairs, triples = np.zeros((2, k, 3 * k)), np.zeros((2, k, k, 3 * k))
    head_second, view_second = np.zeros((2, k, k)), np.zeros((2, 3 * k, 3 * k))
    for s in range(len(offsets) - 1):
        w = ids[offsets[s]:offsets[s + 1]]
        h = heads[offsets[s]:offsets[s + 1]]
        n = len(w)
        for p in range(1, n + 1):
            if h[p - 1] == 0:
                root += embedding[w[p - 1]]
            neighbours = [m for m in range(1, n + 1) if h[m - 1] == p]
            if h[p - 1]:
                neighbours.append(h[p - 1])
            for j in neighbours:
                if h[j - 1] != p:
                    continue
                side = 0 if j < p else 1
                for v in neighbours:
                    if v != j:
                        psi = np.zeros(3 * k)
                        r = relation(h, p, v)
                        psi[r * k:(r + 1) * k] = embedding[w[v - 1]]
                        phi_j, phi_p = embedding[w[j - 1]], embedding[w[p - 1]]
                        pairs[side] += np.outer(phi_p, psi)
                        triples[side] += np.einsum("a,b,c->abc", phi_j, phi_p, psi)
                        head_second[side] += np.outer(phi_p, phi_p)
                        view_second[side] += np.outer(psi, psi)
    return root, pairs, triples, head_second, view_second


def test_count_moments_matches_brute_force():
    _, _, _, _, ids, heads, offsets = small_corpus(40, max_length=8)
    embedding = np.random.default_rng(0).normal(size=(12, 3))
    got = count_moments(ids, heads, offsets, embedding)
    want = brute_force_moments(ids, heads, offsets, embedding)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def population_moments(y, model, embedding):
    """Expected moment sums over the given trees, words and states integrated out."""
    pi, T, O = model["start_probs"], model["transitions"], model["emissions"]
    G = embedding.T @ O
    k = G.shape[0]
    root = np.zeros(k)
    pairs, triples = np.zeros((2, k, 3 * k)), np.zeros((2, k, k, 3 * k))
    for h in y:
        n = len(h)
        side = [None] + [0 if m < h[m - 1] else 1 for m in range(1, n + 1)]
        marginal = [None] * (n + 1)  # prior state distribution of each node
        pending = [m for m in range(1, n + 1) if h[m - 1] == 0]
        while pending:
            m = pending.pop()
            marginal[m] = pi if h[m - 1] == 0 else T[side[m]] @ marginal[h[m - 1]]
            pending += [c for c in range(1, n + 1) if h[c - 1] == m]
        for p in range(1, n + 1):
            if h[p - 1] == 0:
                root += G @ pi
            neighbours = [c for c in range(1, n + 1) if h[c - 1] == p]
            # E[phi_v | h_p] for each neighbour, columns over h_p
            views = [G @ T[side[c]] for c in neighbours]
            if h[p - 1]:
                g, d = h[p - 1], side[p]
                up = (T[d].T * marginal[g][None, :]) / marginal[p][:, None]  # p(h_g | h_p)
                views.append(G @ up.T)
                neighbours.append(g)
            for i, c in enumerate(neighbours):
                if h[c - 1] != p:
                    continue
                for v, view in zip(neighbours, views):
                    if v == c:
                        continue
                    r = relation(h, p, v)
                    psi = np.zeros((3 * k, k))
                    psi[r * k:(r + 1) * k] = view
                    pairs[side[c]] += np.einsum("h,bh,ch->bc", marginal[p], G, psi)
                    triples[side[c]] += np.einsum("h,ah,bh,ch->abc", marginal[p], views[i], G, psi)
    return root / len(y), pairs, triples


def test_population_operators_reproduce_exact_probabilities():
    """With U spanning col(O) and the exact expected moments, the spectral
    formula equals the true Eq. 2 probability: the estimator is consistent."""
    X, y, log_prob, model, ids, heads, offsets = small_corpus(60, n_states=3, max_length=9)
    embedding, _ = np.linalg.qr(model["emissions"])
    root, pairs, triples = population_moments(y, model, embedding)
    operators, rank = operators_from_moments(pairs, triples)
    assert list(rank) == [3, 3]
    log_abs, sign = spectral_log_probs(ids, heads, offsets, embedding, root, operators)
    assert np.all(sign == 1)
    np.testing.assert_allclose(log_abs, log_prob, rtol=0, atol=1e-8)
    # and a U that misses part of col(O) is not exact: the test can fail
    wrong = np.linalg.qr(model["emissions"] + 0.3 * np.random.default_rng(1).random((12, 3)))[0]
    root, pairs, triples = population_moments(y, model, wrong)
    log_abs, _ = spectral_log_probs(ids, heads, offsets, wrong, root,
                                    operators_from_moments(pairs, triples)[0])
    assert np.max(np.abs(log_abs - log_prob)) > 1e-3


def test_exact_log_probs_handle_several_roots_and_long_sentences():
    _, _, _, model, *_ = small_corpus(1)
    words = np.array([1, 2, 3, 4])
    heads = np.array([0, 1, 0, 3])  # two roots: the two subtrees are independent
    both = exact_log_probs(words, heads, np.array([0, 4]), model["start_probs"],
                           model["transitions"], model["emissions"])[0]
    assert both == pytest.approx(brute_force_log_prob(words, heads, model), rel=1e-12)
    chain = np.arange(400) % 12, np.arange(400)  # 400-token chain: rescaling avoids underflow
    lp = exact_log_probs(chain[0], chain[1], np.array([0, 400]), model["start_probs"],
                         model["transitions"], model["emissions"])[0]
    assert np.isfinite(lp) and lp < -400


def brute_force_expected_counts(words, heads, model):
    """Log-likelihood and posterior expected counts by enumerating every state assignment."""
    pi, T, O = model["start_probs"], model["transitions"], model["emissions"]
    k, n = len(pi), len(words)
    root, trans, emis = np.zeros(k), np.zeros((2, k, k)), np.zeros(O.shape)
    total = 0.0
    for states in itertools.product(range(k), repeat=n):
        p = 1.0
        for m in range(n):
            h = heads[m]
            p *= O[words[m], states[m]]
            p *= pi[states[m]] if h == 0 else T[0 if m + 1 < h else 1, states[m], states[h - 1]]
        total += p
        for m in range(n):
            emis[words[m], states[m]] += p
            if heads[m] == 0:
                root[states[m]] += p
            else:
                trans[0 if m + 1 < heads[m] else 1, states[m], states[heads[m] - 1]] += p
    return np.log(total), root / total, trans / total, emis / total


def test_expected_counts_match_brute_force():
    """The inside-outside E-step equals the sum over all hidden-state assignments,
    on trees with several roots, both sides and heads with many children."""
    _, _, _, model, ids, heads, offsets = small_corpus(300, max_length=6)
    trees = [(ids[offsets[s]:offsets[s + 1]], heads[offsets[s]:offsets[s + 1]])
             for s in range(0, 300, 7)]
    trees.append((np.array([1, 2, 3, 4, 5]), np.array([0, 1, 0, 3, 3])))  # two roots
    trees.append((np.array([5, 6, 7, 8, 9]), np.array([3, 3, 0, 3, 3])))  # four children
    for words, tree in trees:
        got = expected_counts(words, tree, np.array([0, len(words)]), 0, 1,
                              model["start_probs"], model["transitions"], model["emissions"])
        want = brute_force_expected_counts(words, tree, model)
        assert got[0] == pytest.approx(want[0], rel=1e-10) and len(got) == len(want)
        for g, w in zip(got[1:], want[1:]):
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
    # a range of sentences sums its sentences
    whole = expected_counts(ids, heads, offsets, 0, 300, model["start_probs"],
                            model["transitions"], model["emissions"])
    assert whole[0] == pytest.approx(exact_log_probs(ids, heads, offsets, model["start_probs"],
                                                     model["transitions"], model["emissions"]).sum())


def test_population_operators_give_back_the_model():
    """The spectral start of EM reads (pi, T, O) off exact operators: up to a
    permutation of the states it is the true model, so it gives the exact
    probabilities."""
    X, y, log_prob, model, ids, heads, offsets = small_corpus(60, n_states=3, max_length=9)
    embedding, _ = np.linalg.qr(model["emissions"])
    root, pairs, triples = population_moments(y, model, embedding)
    operators, _ = operators_from_moments(pairs, triples)
    start, transitions, emissions = probabilities_from_operators(
        embedding, root, operators, np.random.default_rng(0))
    np.testing.assert_allclose(exact_log_probs(ids, heads, offsets, start, transitions, emissions),
                               log_prob, rtol=0, atol=1e-6)


def test_real_eigenbasis_keeps_complex_pairs_apart():
    """A complex-conjugate pair of eigenvectors becomes its real and imaginary
    parts: a real basis in which the matrix is block diagonal, where the
    real parts alone would repeat a column."""
    rng = np.random.default_rng(0)
    P = rng.normal(size=(3, 3))
    A = P @ np.array([[0.5, -0.8, 0.0], [0.8, 0.5, 0.0], [0.0, 0.0, 2.0]]) @ np.linalg.inv(P)
    values, vectors = np.linalg.eig(A)
    assert np.count_nonzero(values.imag) == 2
    basis = _real_eigenbasis(values, vectors)
    assert np.linalg.matrix_rank(vectors.real) == 2
    assert np.linalg.matrix_rank(basis) == 3
    real = int(np.flatnonzero(values.imag == 0)[0])
    pair = [i for i in range(3) if i != real]
    D = np.linalg.solve(basis, A @ basis)
    np.testing.assert_allclose(D[real, pair], 0, atol=1e-10)
    np.testing.assert_allclose(D[pair, real], 0, atol=1e-10)
    assert D[real, real] == pytest.approx(2.0)


def test_noisy_operators_give_distinct_states():
    """Noisy operators often make a random mix's eigenvalues complex; the
    emissions read off them still have k distinct columns."""
    _, y, _, model, *_ = small_corpus(60, n_states=3, max_length=9)
    embedding, _ = np.linalg.qr(model["emissions"])
    root, pairs, triples = population_moments(y, model, embedding)
    operators, _ = operators_from_moments(pairs, triples)
    noise = np.random.default_rng(1).normal(size=operators.shape)
    noisy = operators + 0.3 * np.abs(operators).mean() * noise
    for seed in range(20):
        emissions = probabilities_from_operators(embedding, root, noisy,
                                                 np.random.default_rng(seed))[2]
        singular = np.linalg.svd(emissions, compute_uv=False)
        assert singular[-1] > 1e-3 * singular[0]


def test_words_laid_on_given_trees():
    """With ``trees`` the corpus keeps those shapes, its log-probabilities are
    the model's, and one-word sentences have the model's root word
    distribution O pi."""
    trees = [np.array([2, 0, 2]), np.array([0]), np.array([3, 3, 0, 3, 6, 4])] * 3000
    X, y, log_prob, model = make_latent_tree_corpus(len(trees), 3, 12, trees=trees,
                                                    random_state=0, return_model=True)
    assert_same_predictions(y, trees)
    words = [np.array([int(w[1:]) for w in s]) for s in X]
    for i in (0, 1, 2):
        assert log_prob[i] == pytest.approx(brute_force_log_prob(words[i], y[i], model), rel=1e-10)
    roots = np.bincount([w[0] for w in words[1::3]], minlength=12) / 3000
    np.testing.assert_allclose(roots, model["emissions"] @ model["start_probs"], atol=0.03)
    with pytest.raises(ValueError, match="n_sentences"):
        make_latent_tree_corpus(5, 3, 12, trees=trees)
