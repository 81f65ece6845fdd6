"""Hand-written backward passes against finite differences (float64)."""

import numpy as np
import pytest

from sklearn_structured.kernels.rank_space import (
    hmm_rank_forward,
    rank_space_inside,
    rank_space_outside,
)
from sklearn_structured.rank_space import RankSpaceHMM, pcfg_factor_gradients, pcfg_kernel_inputs
from sklearn_structured.rank_space._hmm import hmm_kernel_inputs, time_major_batch
from sklearn_structured.rank_space._nn import Adam
from sklearn_structured.rank_space._parameterization import (
    hmm_backward,
    hmm_dropout_masks,
    hmm_probabilities,
    init_hmm,
    init_pcfg,
    pcfg_backward,
    pcfg_probabilities,
)


def sampled_finite_differences(loss, params, analytic, rng, per_array=8, eps=1e-6):
    """Compare ``analytic`` with central differences on a few entries of every array."""
    for name, array in params.items():
        flat = array.reshape(-1)
        for idx in rng.choice(flat.size, size=min(per_array, flat.size), replace=False):
            old = flat[idx]
            flat[idx] = old + eps
            up = loss()
            flat[idx] = old - eps
            down = loss()
            flat[idx] = old
            numeric = (up - down) / (2 * eps)
            np.testing.assert_allclose(
                analytic[name].reshape(-1)[idx], numeric, rtol=1e-4, atol=1e-7, err_msg=f"{name}[{idx}]"
            )


def away_from_kinks(params, rng):
    """Biases start at zero, so a ReLU whose input row is all zero sits on its kink,
    where finite differences are meaningless; move the biases off zero."""
    for key in params:
        if key.endswith(".bias"):
            params[key] += 0.1 * rng.standard_normal(params[key].shape)
    return params


def pcfg_log_likelihood(kind, params, n_nt, words):
    probs, cache = pcfg_probabilities(kind, params, n_nt)
    inputs = pcfg_kernel_inputs(probs, n_nt, words, np.float64)
    return probs, cache, inputs


@pytest.mark.parametrize("kind", ["direct", "neural"])
def test_pcfg_gradient_end_to_end(kind):
    """d sum(log Z) / d parameters, through the outside pass and the parameterisation."""
    rng = np.random.default_rng(0)
    n_nt, n_pt, rank, n_words = 3, 4, 5, 7
    params = away_from_kinks(init_pcfg(kind, n_nt, n_pt, rank, n_words, 6, rng), rng)
    words = rng.integers(0, n_words, size=(2, 5))

    def loss():
        probs, _, inputs = pcfg_log_likelihood(kind, params, n_nt, words)
        return rank_space_inside(*inputs)[0].sum()

    probs, cache, inputs = pcfg_log_likelihood(kind, params, n_nt, words)
    log_z, *charts = rank_space_inside(*inputs)
    kernel_grads = rank_space_outside(*inputs, *charts)[1:]
    prob_grads = pcfg_factor_gradients(probs, n_nt, words, kernel_grads)
    grads = pcfg_backward(kind, params, probs, cache, prob_grads, n_nt)
    assert set(grads) == set(params)
    sampled_finite_differences(loss, params, grads, rng)


@pytest.mark.parametrize("dropout", [0.0, 0.3])
@pytest.mark.parametrize("kind", ["direct", "neural"])
def test_hmm_gradient_end_to_end(kind, dropout):
    """d sum(log p) / d parameters, for sentences of several lengths in one batch,
    with and without the entries of one training step's dropout."""
    rng = np.random.default_rng(1)
    m, rank, n_words = 5, 3, 6
    params = away_from_kinks(init_hmm(kind, m, rank, n_words, 4, rng), rng)
    batch = time_major_batch([rng.integers(0, n_words, size=n) for n in (6, 2, 6, 4)])
    words, lengths, _ = batch
    masks = hmm_dropout_masks(kind, params, dropout, rng) if dropout else None

    def loss():
        probs, _ = hmm_probabilities(kind, params, masks)
        start_rank, K = hmm_kernel_inputs(probs, np.float64)
        return hmm_rank_forward(start_rank, K, probs["W"][words], lengths)[0].sum()

    probs, cache = hmm_probabilities(kind, params, masks)
    _, prob_grads = RankSpaceHMM()._batch_gradients(probs, batch, 1.0)
    grads = hmm_backward(kind, params, probs, cache, prob_grads)
    assert set(grads) == set(params)
    sampled_finite_differences(loss, params, grads, rng)
    if dropout:
        # the dropped transitions are gone from the step's factors, which stay normalised
        assert masks["U"].any() and masks["V"].any()
        assert not probs["U"][masks["U"]].any() and not probs["V"][masks["V"]].any()
        np.testing.assert_allclose(probs["U"].sum(axis=1), 1)
        np.testing.assert_allclose(probs["V"].sum(axis=0), 1)


def test_dropout_never_drops_a_whole_row_of_u_or_column_of_v():
    rng = np.random.default_rng(3)
    params = init_hmm("direct", 4, 2, 5, 3, rng)
    for _ in range(50):
        masks = hmm_dropout_masks("direct", params, 0.9, rng)
        assert not masks["U"].all(axis=1).any() and not masks["V"].all(axis=0).any()
        probs, _ = hmm_probabilities("direct", params, masks)
        assert np.isfinite(probs["U"]).all() and np.isfinite(probs["V"]).all()


def test_hmm_batch_in_shares_gives_the_gradients_of_one_pass_whatever_the_threads(monkeypatch):
    """A large batch's passes run in shares of its sequences, on as many threads as n_jobs
    allows: the log-likelihoods and gradients are those of one pass over the whole batch,
    and identical for every n_jobs."""
    from sklearn_structured.rank_space import _hmm

    rng = np.random.default_rng(2)
    params = init_hmm("neural", 6, 4, 9, 5, rng)
    lengths = (7, 3, 7, 5, 1, 6, 2, 4, 7)
    batch = time_major_batch([rng.integers(0, 9, size=n) for n in lengths])
    probs, _ = hmm_probabilities("neural", params)
    one_pass = RankSpaceHMM()._batch_gradients(probs, batch, -0.5)
    monkeypatch.setattr(_hmm, "_SHARE_TOKENS", 7)  # 42 tokens: six at most, so four shares
    in_shares = [RankSpaceHMM(n_jobs=n_jobs)._batch_gradients(probs, batch, -0.5)
                 for n_jobs in (1, 2, 3)]
    for log_p, grads in in_shares:
        np.testing.assert_allclose(log_p, one_pass[0], rtol=1e-12)
        for name, grad in grads.items():
            np.testing.assert_allclose(grad, one_pass[1][name], rtol=1e-10, atol=1e-14)
            np.testing.assert_array_equal(grad, in_shares[0][1][name])


def test_neural_factors_are_normalised_as_a_bayesian_network():
    rng = np.random.default_rng(2)
    params = init_pcfg("neural", 4, 6, 5, 9, 8, rng)
    probs, _ = pcfg_probabilities("neural", params, 4)
    np.testing.assert_allclose(probs["U"].sum(axis=1), 1)
    np.testing.assert_allclose(probs["V"].sum(axis=0), 1)
    np.testing.assert_allclose(probs["W"].sum(axis=0), 1)
    np.testing.assert_allclose(probs["emission"].sum(axis=1), 1)
    T = np.einsum("aq,bq,cq->abc", probs["U"], probs["V"], probs["W"])
    np.testing.assert_allclose(T.sum(axis=(1, 2)), 1)


def test_adam_clips_the_global_norm_and_descends():
    params = {"x": np.array([3.0, -4.0])}
    optimizer = Adam(0.1, (0.9, 0.999), max_grad_norm=1.0)
    norm = optimizer.step(params, {"x": 2 * params["x"]})
    assert norm == pytest.approx(10.0)
    # the first Adam step moves every coordinate by the learning rate, against the gradient
    np.testing.assert_allclose(params["x"], [2.9, -3.9])
    for _ in range(300):
        optimizer.step(params, {"x": 2 * params["x"]})
    assert np.abs(params["x"]).max() < 0.05
