"""Oracle checks of the low-rank tensor parser's kernels on tiny sentences.

Arc scores against a dense numpy evaluation of Eq. 3 of Lei et al. (2014),
the in-between features (one per distinct tag, weighted by its count)
against their word-by-word enumeration, the passive-aggressive step against
its closed form, cost-augmented decoding against enumeration of all trees,
lazy averaging against the explicit mean, and the SVD initialisation against
an exactly low-rank tensor.
"""

import hashlib
import itertools

import numpy as np
import pytest

from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.lowrank import LowRankTensorParser
from sklearn_structured.kernels.hashing import feature_hash, table_row
from sklearn_structured.lowrank._features import (
    A_BETWEEN,
    BIAS_BUCKET,
    COARSE_SHIFT,
    FIELD_OFFSET,
    N_ARC_BUCKETS,
    ROOT,
    add_between,
    arc_bucket,
    arc_feature_ids,
    between_feature_ids,
    between_tags,
    max_arc_features,
)
from sklearn_structured.lowrank._encoding import encode
from sklearn_structured.lowrank._estimator import _DECODERS, _token_arrays, train_sentence
from sklearn_structured.lowrank._kernels import (ALL_ARCS, PRUNED_SCORE, Config, Weights,
                                                 sentence_scores)
from sklearn_structured.lowrank._init import svd_initialisation
from sklearn_structured.utils import find_heads_error

RANK = 3


@pytest.fixture(scope="module")
def parser():
    X, y = load_sample_treebank("train")
    return LowRankTensorParser(rank=RANK, gamma=0.4, n_epochs=1, n_features=2**12,
                               random_state=0).fit(X[:30], y[:30])


def tiny_sentence(n):
    """The first n tokens of a sample sentence, one made unseen, with a chain as gold."""
    X, _ = load_sample_treebank("train")
    sentence = [dict(tok) for tok in next(s for s in X if len(s) >= n)[:n]]
    sentence[0]["form"] = "zyzzyvaunseen"
    return sentence, np.arange(n, dtype=np.int64)


def arc_features(data, start, n, h, m, pos, n_features):
    """The theta indices of phi_{h->m} and their values, as the update reads them."""
    ids = np.empty(max_arc_features(n), dtype=np.int64)
    k = arc_feature_ids(start, n, h, m, data["form"], data["lemma"], data["xpos"], data["upos"],
                        pos, n_features, ids)
    if not pos:
        return ids[:k], np.ones(k)
    between = between_tags(n)
    for b in range(min(h, m) + 1, max(h, m)):
        add_between(between, start, n, h, b, data["xpos"], data["upos"])
    tag_ids = np.empty(max_arc_features(n), dtype=np.int64)
    weights = np.empty(len(tag_ids))
    j = between_feature_ids(start, n, h, m, data["xpos"], data["upos"], n_features, between,
                            tag_ids, weights)
    return np.r_[ids[:k], tag_ids[:j]], np.r_[np.ones(k), weights[:j]]


def as_multiset(ids, weights):
    """Every id repeated as often as its (whole) value says, sorted."""
    counts = weights.astype(np.int64)
    assert np.array_equal(counts, weights) and np.all(counts > 0)
    return np.sort(np.repeat(ids, counts))


def test_arc_features_are_those_models_were_trained_with(parser):
    # saved models need exactly the arc features they were trained with: a change
    # to the templates or the hash must be deliberate (it needs a new model format
    # version); pinned as a digest of every arc's features of six sentences, each
    # arc's as the sorted multiset of its ids (a feature of value k is k ids)
    X, _ = load_sample_treebank("train")
    data = encode(X[30:36], parser._encoding())
    digest = hashlib.sha256()
    for s in range(6):
        start = data["sent_off"][s]
        n = data["sent_off"][s + 1] - start - 1
        for pos, h, m in itertools.product((True, False), range(n + 1), range(1, n + 1)):
            if h != m:
                # a table size that keeps almost the whole hash
                features = arc_features(data, start, n, h, m, pos, 2**62 + 1)
                digest.update(as_multiset(*features).tobytes())
    assert digest.hexdigest() == "4e22058023a3b9364c27deeba2fc03730d87c0b419afaad26b2bc7d9bdff5d49"


def per_word_arc_ids(data, start, n, h, m, pos, n_features):
    """Reference: the theta indices of phi_{h->m} with the in-between template hashed
    once per word between h and m (repeated ids), as the templates define it."""
    ids = np.empty(max_arc_features(n), dtype=np.int64)
    k = arc_feature_ids(start, n, h, m, data["form"], data["lemma"], data["xpos"], data["upos"],
                        pos, n_features, ids)
    ids = list(ids[:k])
    if pos:
        for conj in (0, arc_bucket(h, m) + 1):
            for coarse in range(2):
                tags = data["upos" if coarse else "xpos"][start:start + n + 1]
                for b in range(min(h, m) + 1, max(h, m)):
                    key = feature_hash(coarse * COARSE_SHIFT + A_BETWEEN, tags[h], tags[b],
                                       tags[m], conj, 0)
                    ids.append(table_row(key, n_features))
    return np.sort(ids)


def random_corpus(rng, lengths, n_tags):
    """Token fields of random sentences (root slots first) over few tags, so that
    tags recur between heads and modifiers."""
    sent_off = np.r_[0, np.cumsum(np.add(lengths, 1))]
    data = {"sent_off": sent_off}
    for field, size in (("form", 9), ("lemma", 7), ("xpos", n_tags), ("upos", 2)):
        data[field] = rng.integers(FIELD_OFFSET, FIELD_OFFSET + size, sent_off[-1])
        data[field][sent_off[:-1]] = ROOT
    return data


@pytest.mark.parametrize("n_tags", [1, 3, 40])
def test_in_between_features_equal_their_word_by_word_enumeration(n_tags):
    rng = np.random.default_rng(n_tags)
    lengths = rng.integers(1, 14, 12)
    data = random_corpus(rng, lengths, n_tags)
    n_features = 2**10  # small: colliding ids must add up too
    theta = rng.integers(-8, 9, n_features).astype(float)  # whole: sums exact in any order
    empty = np.zeros((lengths.max() + 1, 1))
    for s, n in enumerate(lengths):
        start = data["sent_off"][s]
        for pos in (True, False):
            expected = np.zeros((n + 1, n + 1))
            for h, m in itertools.product(range(n + 1), range(1, n + 1)):
                if h != m:
                    ids = per_word_arc_ids(data, start, n, h, m, pos, n_features)
                    assert np.array_equal(
                        as_multiset(*arc_features(data, start, n, h, m, pos, n_features)), ids)
                    expected[h, m] = theta[ids].sum()
            # a pruned arc is skipped, and the longer arcs after it still count the
            # words between
            keep = rng.random((n + 1, n + 1)) < 0.5
            for mask in (ALL_ARCS, keep):
                scores = sentence_scores(start, n, data["form"], data["lemma"], data["xpos"],
                                         data["upos"], theta, n_features, pos, 1.0, empty,
                                         empty, np.zeros((N_ARC_BUCKETS, 1)), mask)
                want = expected.copy()
                if mask.size:
                    pruned = ~mask
                    pruned[:, 0] = False
                    np.fill_diagonal(pruned, False)
                    want[pruned] = PRUNED_SCORE
                np.testing.assert_array_equal(scores, want)


def random_parameters(parser, seed):
    rng = np.random.default_rng(seed)
    return {
        "theta": rng.normal(size=parser.theta_.shape),
        "U": rng.normal(size=parser.U_.shape),
        "V": rng.normal(size=parser.V_.shape),
        "W": rng.normal(size=parser.W_.shape),
    }


def dense_word_features(data, n, n_columns):
    phi = np.zeros((n + 1, n_columns))
    for i in range(n + 1):
        for j in range(data["wf_off"][i], data["wf_off"][i + 1]):
            phi[i, data["wf_idx"][j]] += data["wf_val"][j]
    return phi


def dense_arc_features(data, n, h, m, n_features):
    return np.bincount(per_word_arc_ids(data, 0, n, h, m, True, n_features),
                       minlength=n_features).astype(float)


def direct_scores(data, n, params, gamma, n_features):
    """Eq. 3 evaluated with dense feature vectors, arc by arc."""
    phi = dense_word_features(data, n, params["U"].shape[0])
    scores = np.zeros((n + 1, n + 1))
    for h in range(n + 1):
        for m in range(1, n + 1):
            if h == m:
                continue
            phi_hm = np.zeros(N_ARC_BUCKETS)
            phi_hm[arc_bucket(h, m)] = phi_hm[BIAS_BUCKET] = 1.0
            tensor = np.sum((phi[h] @ params["U"]) * (phi[m] @ params["V"])
                            * (phi_hm @ params["W"]))
            mst = params["theta"] @ dense_arc_features(data, n, h, m, n_features)
            scores[h, m] = (1 - gamma) * tensor + gamma * mst
    return scores


def test_arc_scores_match_dense_formula(parser):
    sentence, _ = tiny_sentence(6)
    fitted = LowRankTensorParser(**parser.get_params())
    fitted.__dict__.update(parser.__dict__)
    params = random_parameters(parser, 0)
    for name, value in params.items():
        setattr(fitted, name + "_", value)
    data = encode([sentence], fitted._encoding())
    expected = direct_scores(data, 6, params, fitted.gamma, fitted.n_features)
    got = fitted.arc_scores(sentence)
    mask = np.isfinite(got)
    assert mask.sum() == 6 * 6  # every arc h -> m, h != m, m >= 1
    np.testing.assert_allclose(got[mask], expected[mask], rtol=1e-10, atol=1e-10)


def run_train_sentence(parser, data, n, gold, params, acc, gamma, C, counter):
    order = ("theta", "U", "V", "W")
    return train_sentence(0, n, gold, _token_arrays(data), Weights(*(params[k] for k in order)),
                          Weights(*(acc[k] for k in order)),
                          Config(gamma, C, parser.n_features, True),
                          _DECODERS["chu_liu_edmonds"], counter)


@pytest.mark.parametrize("counter", [0, 1, 2])
def test_passive_aggressive_step_is_closed_form(parser, counter):
    n = 5
    sentence, gold = tiny_sentence(n)
    data = encode([sentence], parser._encoding())
    gamma = 0.4
    params = random_parameters(parser, 1)
    before = {k: v.copy() for k, v in params.items()}
    acc = {k: np.zeros_like(v) for k, v in params.items()}
    loss, pred = run_train_sentence(parser, data, n, gold, params, acc, gamma, 1e9, counter)
    assert loss > 0 and not np.array_equal(pred, gold)

    # the closed form, with dense gradients of the tree score
    phi = dense_word_features(data, n, before["U"].shape[0])
    Uh, Vm = phi @ before["U"], phi @ before["V"]
    d_theta = np.zeros_like(before["theta"])
    d_tensor = {"U": np.zeros_like(before["U"]), "V": np.zeros_like(before["V"]),
                "W": np.zeros_like(before["W"])}
    for heads, sign in ((gold, 1.0), (pred, -1.0)):
        for m in range(1, n + 1):
            h = heads[m - 1]
            d_theta += sign * dense_arc_features(data, n, h, m, parser.n_features)
            phi_hm = np.zeros(N_ARC_BUCKETS)
            phi_hm[arc_bucket(h, m)] = phi_hm[BIAS_BUCKET] = 1.0
            Wb = phi_hm @ before["W"]
            d_tensor["U"] += sign * np.outer(phi[h], Vm[m] * Wb)
            d_tensor["V"] += sign * np.outer(phi[m], Uh[h] * Wb)
            d_tensor["W"] += sign * np.outer(phi_hm, Uh[h] * Vm[m])
    which = "UVW"[counter % 3]
    norm = gamma**2 * np.sum(d_theta**2) + (1 - gamma) ** 2 * np.sum(d_tensor[which] ** 2)
    tau = loss / norm
    np.testing.assert_allclose(params["theta"] - before["theta"], tau * gamma * d_theta,
                               atol=1e-10)
    np.testing.assert_allclose(params[which] - before[which],
                               tau * (1 - gamma) * d_tensor[which], atol=1e-10)
    for other in set("UVW") - {which}:
        assert np.array_equal(params[other], before[other])
    # the accumulator of the lazy average got counter * delta
    np.testing.assert_allclose(acc["theta"], counter * (params["theta"] - before["theta"]))

    # with the other factors fixed the score is linear, so the margin is now exact
    fitted = LowRankTensorParser(**parser.get_params())
    fitted.__dict__.update(parser.__dict__)
    for name, value in params.items():
        setattr(fitted, name + "_", value)
    scores = fitted.arc_scores(sentence)
    margin = sum(scores[gold[m - 1], m] - scores[pred[m - 1], m] for m in range(1, n + 1))
    assert margin == pytest.approx(np.sum(gold != pred), abs=1e-8)


def all_trees(n):
    for heads in itertools.product(range(n + 1), repeat=n):
        if find_heads_error(np.array(heads)) is None:
            yield np.array(heads)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_cost_augmented_decoding_finds_most_violating_tree(parser, n):
    sentence, gold = tiny_sentence(n)
    data = encode([sentence], parser._encoding())
    for seed in range(3):
        params = random_parameters(parser, 10 + seed)
        fitted = LowRankTensorParser(**parser.get_params())
        fitted.__dict__.update(parser.__dict__)
        for name, value in params.items():
            setattr(fitted, name + "_", value)
        scores = fitted.arc_scores(sentence)

        def violation(heads):
            return sum(scores[heads[m - 1], m] for m in range(1, n + 1)) + np.sum(heads != gold)

        best = max(violation(t) for t in all_trees(n))
        acc = {k: np.zeros_like(v) for k, v in params.items()}
        _, pred = run_train_sentence(parser, data, n, gold, params, acc, 0.4, 1.0, 0)
        assert find_heads_error(pred) is None
        assert violation(pred) == pytest.approx(best, abs=1e-9)


def test_lazy_average_equals_explicit_mean(parser):
    X, y = load_sample_treebank("train")
    sentences = [(s, h) for s, h in zip(X, y) if 3 <= len(s) <= 8][:6]
    params = random_parameters(parser, 2)
    for value in params.values():
        value *= 0.01
    acc = {k: np.zeros_like(v) for k, v in params.items()}
    history = []
    counter = 0
    for _ in range(2):
        for sentence, gold in sentences:
            data = encode([sentence], parser._encoding())
            run_train_sentence(parser, data, len(sentence), gold, params, acc, 0.4, 1.0, counter)
            counter += 1
            history.append({k: v.copy() for k, v in params.items()})
    for name in params:
        explicit = np.mean([snapshot[name] for snapshot in history], axis=0)
        lazy = params[name] - acc[name] / counter
        np.testing.assert_allclose(lazy, explicit, atol=1e-12)
        assert not np.allclose(explicit, params[name])  # averaging changes something


def test_svd_initialisation_recovers_rank_one_tensor():
    rng = np.random.default_rng(0)
    n_w, d = 7, N_ARC_BUCKETS
    u, v, w = rng.normal(size=n_w), rng.normal(size=n_w), rng.normal(size=d)
    B = np.einsum("i,j,k->ijk", u, v, w)
    i, j, k = np.indices(B.shape).reshape(3, -1)
    entries = (i, j, k, B.reshape(-1))
    U, V, W = svd_initialisation(entries, n_w, 1, np.random.RandomState(0))
    np.testing.assert_allclose(np.einsum("ir,jr,kr->ijk", U, V, W), B, atol=1e-8)
    # the scale is shared equally by the three factors
    norms = [np.linalg.norm(U), np.linalg.norm(V), np.linalg.norm(W)]
    np.testing.assert_allclose(norms, norms[0], rtol=1e-8)
