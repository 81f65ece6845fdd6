"""RankSpacePCFG and RankSpaceHMM: API, learning on real data, given-grammar exactness, bad input."""

import numpy as np
import pytest
from sklearn.base import clone
from test_rank_space_kernels import brute_force, dense_hmm_forward, random_grammar, random_hmm

from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.kernels.cky import cky_max_span_sum
from sklearn_structured.kernels.rank_space import rank_space_inside
from sklearn_structured.metrics import perplexity
from sklearn_structured.rank_space import (
    RankSpaceHMM,
    RankSpacePCFG,
    left_branching_spans,
    pcfg_kernel_inputs,
    random_binary_spans,
    right_branching_spans,
    spans_to_brackets,
)
from sklearn_structured.rank_space._base import token_batches
from sklearn_structured.utils.estimator_checks import check_structured_estimator


def upos_sentences(subset):
    """The embedded EWT sample's UPOS sequences: real data with a small alphabet."""
    X, _ = load_sample_treebank(subset)
    return [[token["upos"] for token in sentence] for sentence in X if len(sentence) >= 2]


def unigram_log_likelihood_per_token(train, test, with_end=False):
    """Add-one unigram over the training symbols (plus <eos> when the model generates one)."""
    end = ["<eos>"] if with_end else []
    counts = {}
    for s in train:
        for w in list(s) + end:
            counts[w] = counts.get(w, 0) + 1
    total = sum(counts.values()) + len(counts) + 1
    tokens = [w for s in test for w in list(s) + end]
    return float(np.mean([np.log((counts.get(w, 0) + 1) / total) for w in tokens]))


def scores_as_predictions(est, X):
    return [np.array([v]) for v in est.score_samples(X)]


def test_pcfg_api():
    X = upos_sentences("train")[:24]
    estimator = RankSpacePCFG(
        n_nonterminals=3, n_preterminals=4, rank=4, embedding_dim=8, n_epochs=2, batch_size=8, random_state=0
    )
    fitted = check_structured_estimator(
        estimator,
        X,
        None,
        param_grid={"rank": [2, 4], "parameterization": ["neural", "direct"]},
        predict=scores_as_predictions,
    )
    trees = fitted.predict(X[:3])
    assert [len(t) for t in trees] == [2 * len(s) - 1 for s in X[:3]]


def test_hmm_api():
    X = upos_sentences("train")[:24]
    estimator = RankSpaceHMM(n_states=5, rank=3, embedding_dim=8, n_epochs=2, batch_size=8, random_state=0)
    check_structured_estimator(
        estimator,
        X,
        None,
        param_grid={"rank": [2, 3], "n_states": [4, 5]},
        predict=scores_as_predictions,
    )


@pytest.mark.slow
def test_hmm_learns_tag_sequences_better_than_a_unigram_model():
    train, test = upos_sentences("train"), upos_sentences("test")
    model = RankSpaceHMM(
        n_states=16, rank=8, parameterization="direct", learning_rate=0.05, n_epochs=15, random_state=0
    ).fit(train)
    baseline = unigram_log_likelihood_per_token(train, test, with_end=True)
    # stated baseline: the add-one unigram model (perplexity 13.6 on these tags);
    # the HMM must cut the perplexity by at least a quarter (9.4 measured)
    assert model.score(test) > baseline + np.log(4 / 3)
    np.testing.assert_allclose(model.perplexity(test), np.exp(-model.score(test)))


@pytest.mark.slow
def test_pcfg_learns_tag_sequences_better_than_a_unigram_model():
    sentences, test = upos_sentences("train"), upos_sentences("test")
    train, validation = sentences[:-50], sentences[-50:]
    model = RankSpacePCFG(
        n_nonterminals=10, n_preterminals=20, rank=16, parameterization="direct", learning_rate=0.1,
        n_epochs=6, batch_size=4, random_state=0,
    ).fit(train, X_val=validation)
    # stated baseline: the add-one unigram model over the same tags (-2.53 per tag)
    assert model.score(test) > unigram_log_likelihood_per_token(train, test) + 0.15
    history = [h["validation_score"] for h in model.history_]
    assert model.score(validation) == pytest.approx(max(history))


def grammar_model(seed=0, n_nt=3, n_pt=4, rank=5, n_words=6):
    rng = np.random.default_rng(seed)
    root, U, V, W, emission = random_grammar(rng, n_nt, n_pt, rank, n_words)
    vocabulary = ["<unk>"] + [f"w{i}" for i in range(1, n_words)]
    return RankSpacePCFG.from_model(root=root, U=U, V=V, W=W, emission=emission, vocabulary=vocabulary), (root, U, V, W, emission), vocabulary


def test_from_model_pcfg_scores_marginals_and_parses_exactly():
    model, grammar, vocabulary = grammar_model()
    rng = np.random.default_rng(1)
    sentences = [[vocabulary[i] for i in rng.integers(0, 6, size=n)] for n in (2, 5, 6, 5)]
    scores = model.score_samples(sentences)
    marginals = model.predict_marginals(sentences)
    trees = model.predict(sentences)
    for s, sentence in enumerate(sentences):
        words = [vocabulary.index(w) for w in sentence]
        log_z, exact = brute_force(grammar, words, 3)
        np.testing.assert_allclose(scores[s], log_z, atol=1e-10)
        np.testing.assert_allclose(marginals[s], exact, atol=1e-10)
        best, _ = cky_max_span_sum(exact)
        assert sum(exact[i, j] for i, j in trees[s]) == pytest.approx(best)
    # unknown words are read as <unk>
    np.testing.assert_allclose(model.score_samples([["zzz", "w1"]]), model.score_samples([["<unk>", "w1"]]))
    again = RankSpacePCFG.from_model(**model.get_model())
    np.testing.assert_array_equal(again.score_samples(sentences), scores)


def test_spans_render_as_brackets():
    assert spans_to_brackets(list("abcd"), [(0, 4), (0, 2), (0, 1), (1, 2), (2, 4), (2, 3), (3, 4)]) == "((a b) (c d))"


def test_from_model_scores_exactly():
    rng = np.random.default_rng(2)
    vocabulary = ["<unk>", "<eos>", "a", "b", "c"]
    start, U, V, W = random_hmm(rng, 6, 3, len(vocabulary))
    model = RankSpaceHMM.from_model(start=start, U=U, V=V, W=W, vocabulary=vocabulary)
    sentences = [["a", "b"], ["c", "a", "zzz", "b"]]
    ids = [[2, 3, 1], [4, 2, 0, 3, 1]]
    expected = [dense_hmm_forward(start, U, V, W, x) for x in ids]
    np.testing.assert_allclose(model.score_samples(sentences), expected, atol=1e-12)
    np.testing.assert_allclose(model.perplexity(sentences), perplexity(expected, [3, 5]))
    assert [len(z) for z in model.predict(sentences)] == [2, 4]
    assert set(model.get_model()) == {"start", "U", "V", "W", "vocabulary"}


def plain_hmm_log_likelihood(start, transition, emission, words):
    """Forward algorithm of an ordinary HMM: ``emission[q, x]`` and ``transition[q, q']``."""
    alpha = start * emission[:, words[0]]
    for x in words[1:]:
        alpha = (alpha @ transition) * emission[:, x]
    return np.log(alpha.sum())


def test_a_rank_r_hmm_is_an_r_state_hmm_whatever_its_states():
    """The rank variable carries all the state: a rank-r HMM of any size m is the ordinary
    r-state HMM with start U^T pi, transition V^T U and emissions W^T, and every r-state
    HMM is a rank-r HMM from m = r + 1 states on: more states than the rank cannot
    raise the ceiling, which free factors reach at r + 1 states."""
    rng = np.random.default_rng(8)
    vocabulary = ["<unk>", "<eos>", "a", "b", "c"]
    sentences = [["a", "b"], ["c", "a", "zzz", "b", "b"], ["c"]]
    ids = [[2, 3, 1], [4, 2, 0, 3, 3, 1], [4, 1]]
    rank = 3
    start, U, V, W = random_hmm(rng, 9, rank, len(vocabulary))
    model = RankSpaceHMM.from_model(start=start, U=U, V=V, W=W, vocabulary=vocabulary)
    expected = [plain_hmm_log_likelihood(start @ U, V.T @ U, W.T, x) for x in ids]
    np.testing.assert_allclose(model.score_samples(sentences), expected, atol=1e-12)

    # an arbitrary r-state HMM, embedded in r + 1 states: state q < r moves by row q of
    # the transition, the extra state by the start distribution, and V routes q to state q
    plain_start = rng.dirichlet(np.ones(rank))
    transition = rng.dirichlet(np.ones(rank), size=rank)
    emission = rng.dirichlet(np.ones(len(vocabulary)), size=rank)
    embedded = RankSpaceHMM.from_model(
        start=np.eye(rank + 1)[rank], U=np.vstack([transition, plain_start]),
        V=np.eye(rank + 1, rank), W=emission.T, vocabulary=vocabulary)
    expected = [plain_hmm_log_likelihood(plain_start, transition, emission, x) for x in ids]
    np.testing.assert_allclose(embedded.score_samples(sentences), expected, atol=1e-12)


def test_warm_start_continues_training():
    X = upos_sentences("train")[:30]
    model = RankSpaceHMM(n_states=4, rank=2, embedding_dim=4, n_epochs=1, warm_start=True, random_state=0)
    model.fit(X)
    first = model.score(X)
    model.fit(X)
    assert model.n_iter_ == 2 and len(model.history_) == 2
    assert [record["epoch"] for record in model.history_] == [1, 2]  # one history, continued
    assert model.score(X) != first


@pytest.mark.parametrize("parameterization", ["neural", "direct"])
def test_dropout_changes_training_and_scoring_uses_the_whole_model(parameterization):
    X = upos_sentences("train")[:30]
    settings = dict(n_states=6, rank=4, embedding_dim=4, n_epochs=2, parameterization=parameterization,
                    random_state=0)
    plain = RankSpaceHMM(**settings).fit(X)
    dropped = RankSpaceHMM(dropout=0.1, **settings).fit(X)
    assert [h["loss"] for h in dropped.history_] != [h["loss"] for h in plain.history_]
    # no dropout when scoring: the fitted factors score exactly as a given model does
    given = RankSpaceHMM.from_model(**dropped.get_model())
    np.testing.assert_allclose(given.score_samples(X), dropped.score_samples(X), rtol=1e-12)
    np.testing.assert_allclose(dropped.factors_["U"].sum(axis=1), 1)
    assert (dropped.factors_["U"] > 0).all()


def test_bad_input_is_named():
    model, grammar, vocabulary = grammar_model()
    with pytest.raises(ValueError, match=r"X\[1\].*2 or more"):
        model.score_samples([["w1", "w2"], ["w1"]])
    with pytest.raises(ValueError, match=r"X\[0\] is an empty sentence"):
        clone(model).fit([[]])
    root, U, V, W, emission = grammar
    with pytest.raises(ValueError, match="U must be non-negative and sum to one"):
        RankSpacePCFG.from_model(root=root, U=2 * U, V=V, W=W, emission=emission, vocabulary=vocabulary)
    no_unknown = RankSpacePCFG.from_model(root=root, U=U, V=V, W=W, emission=emission, vocabulary=[f"v{i}" for i in range(6)])
    with pytest.raises(ValueError, match=r"X\[0\] has a word outside the vocabulary"):
        no_unknown.score_samples([["v1", "new"]])
    with pytest.raises(ValueError, match="no training sentence"):
        RankSpacePCFG(max_length=3).fit([["a", "b", "c", "d"]])
    # a one-word sentence still gets its (trivial) tree
    assert model.predict([["w1"]]) == [[(0, 1)]]


@pytest.mark.parametrize("n", [2, 3, 7])
def test_baseline_trees_are_binary_bracketings(n):
    rng = np.random.default_rng(0)
    for spans in (right_branching_spans(n), left_branching_spans(n), random_binary_spans(n, rng)):
        # a binary tree over n words has n - 1 spans of width >= 2, the whole sentence among them
        assert len(set(spans)) == n - 1 and (0, n) in spans
        for a, b in spans:  # spans nest or are disjoint
            for c, d in spans:
                assert b <= c or d <= a or (a <= c and d <= b) or (c <= a and b <= d)
    assert (1, n) in right_branching_spans(n) or n == 2
    assert (0, n - 1) in left_branching_spans(n) or n == 2


def test_token_batches_cover_every_sentence_within_the_budget():
    rng = np.random.RandomState(0)
    lengths = rng.randint(1, 30, size=200)
    for same_length in (False, True):
        batches = token_batches(lengths, 50, np.random.RandomState(1), same_length=same_length)
        assert sorted(np.concatenate(batches).tolist()) == list(range(200))
        for batch in batches:
            assert lengths[batch].sum() <= 50 or len(batch) == 1
            if same_length:
                assert len(set(lengths[batch].tolist())) == 1
    # without a generator: in order of length, the same every call
    again = token_batches(lengths, 50)
    assert [b.tolist() for b in again] == [b.tolist() for b in token_batches(lengths, 50)]
    assert np.all(np.diff(lengths[np.concatenate(again)]) >= 0)


def test_kernel_inputs_of_a_models_factors_give_its_log_likelihoods():
    """The public kernels on pcfg_kernel_inputs of get_model()'s factors score as the model does."""
    model, _, vocabulary = grammar_model()
    factors = model.get_model()
    words = np.random.default_rng(2).integers(0, len(vocabulary), size=(3, 4))
    sentences = [[vocabulary[i] for i in row] for row in words]
    log_z = rank_space_inside(*pcfg_kernel_inputs(factors, model.n_nonterminals, words, np.float64))[0]
    np.testing.assert_allclose(log_z, model.score_samples(sentences), atol=1e-10)


def test_epoch_batches_are_cut_as_fit_cuts_them():
    """The PCFG leaves out sentences longer than max_length and batches one length at
    a time; the HMM counts each sentence's <eos> against batch_tokens."""
    X = [["a"] * n for n in (1, 3, 3, 6, 4, 2, 3)]
    pcfg = RankSpacePCFG(max_length=5, batch_tokens=7)
    batches = pcfg.epoch_batches(X, random_state=0)
    assert sorted(np.concatenate(batches).tolist()) == [1, 2, 4, 5, 6]  # lengths 2 to 5
    assert sorted(len(b) for b in batches) == [1, 1, 1, 2]  # two of the three of length 3
    assert all(len({len(X[i]) for i in b}) == 1 for b in batches)
    hmm = RankSpaceHMM(batch_tokens=8)
    assert sorted(len(b) for b in hmm.epoch_batches(X[1:3] + X[6:], random_state=0)) == [1, 2]
    by_sentences = RankSpaceHMM(batch_size=2).epoch_batches(X, random_state=0)
    assert sorted(len(b) for b in by_sentences) == [1, 1, 1, 1, 1, 2]  # three of length 3


def test_learning_rate_decays_after_each_plateau():
    """With lr_patience 2 the rate halves at the 2nd, 4th, ... epoch since the best
    validation score, whatever the scores are; the rate is in history_."""
    X = upos_sentences("train")[:40]
    model = RankSpaceHMM(n_states=4, rank=2, embedding_dim=4, n_epochs=8, learning_rate=0.5,
                         lr_decay=0.5, lr_patience=2, n_iter_no_change=None, random_state=0)
    model.fit(X, X_val=X[::-1][:10])
    scores = [h["validation_score"] for h in model.history_]
    rates = [h["learning_rate"] for h in model.history_]
    expected = [0.5]
    for epoch in range(1, len(scores)):
        stale = epoch - 1 - int(np.argmax(scores[:epoch]))
        expected.append(expected[-1] * (0.5 if stale > 0 and stale % 2 == 0 else 1.0))
    assert rates == pytest.approx(expected)
    assert min(rates) < 0.5  # this run does reach a plateau


@pytest.mark.parametrize("make", [
    lambda: RankSpaceHMM(n_states=5, rank=3, embedding_dim=4, batch_tokens=60, lr_decay=0.5),
    lambda: RankSpacePCFG(n_nonterminals=3, n_preterminals=4, rank=3, embedding_dim=4, batch_tokens=30),
])
def test_a_pickled_warm_start_resumes_exactly(make):
    """What bench_rank_space --converge relies on: one epoch per fit, the estimator
    pickled between epochs, continues exactly as without the pickle."""
    import pickle

    X = upos_sentences("train")[:40]
    model = make().set_params(n_epochs=1, warm_start=True, random_state=0)
    model.fit(X, X_val=X[:8])
    resumed = pickle.loads(pickle.dumps(model))
    for _ in range(2):
        model.fit(X, X_val=X[:8])
        resumed.fit(X, X_val=X[:8])
    assert model.params_["rank_projection"].dtype == np.float32
    for key in model.params_:
        np.testing.assert_array_equal(model.params_[key], resumed.params_[key])
    assert [h["loss"] for h in model.history_] == [h["loss"] for h in resumed.history_]


def test_n_jobs_limits_the_blas_threads_too():
    """The O(m r^2) products are BLAS calls; n_jobs must bound their threads as well."""
    from threadpoolctl import threadpool_info

    from sklearn_structured.rank_space._base import numba_threads

    with numba_threads(1):
        blas = [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]
    assert blas and all(n == 1 for n in blas)
