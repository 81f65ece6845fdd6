"""SpectralTreeScorer: API, consistency on synthetic data, learning on real trees."""

import numpy as np
import pytest
from scipy.stats import spearmanr

from sklearn_structured.datasets import load_sample_treebank, load_ud_treebank
from sklearn_structured.datasets import make_latent_tree_corpus
from sklearn_structured.spectral import SpectralTreeScorer, reattach_one_word
from sklearn_structured.spectral._scorer import strip_punctuation_from_trees
from sklearn_structured.utils import find_heads_error
from sklearn_structured.utils.estimator_checks import check_structured_estimator


def test_api():
    X, y, _ = make_latent_tree_corpus(300, 3, 30, random_state=0)
    check_structured_estimator(
        SpectralTreeScorer(n_components=3, random_state=0), X, y,
        param_grid={"n_components": [2, 3], "method": ["spectral", "spectral+em"]},
        predict=lambda est, X_: pair_log_probs(est, X_, y),
    )


def pair_log_probs(est, X, y):
    """score_samples needs the trees too; a Pipeline's score_samples takes X only."""
    if hasattr(est, "steps"):
        X, est = est[:-1].transform(X), est[-1]
    return est.score_samples(X, y)


@pytest.mark.slow
def test_consistency_on_the_generating_model():
    """Relative error of p_hat shrinks with more trees; log p_hat tracks log p."""
    X, y, log_prob = make_latent_tree_corpus(40500, 3, 60, random_state=1)
    X_test, y_test, truth = X[-500:], y[-500:], log_prob[-500:]
    errors = []
    for n in (1000, 40000):
        est = SpectralTreeScorer(n_components=3, method="spectral", min_count=1,
                                 random_state=0).fit(X[:n], y[:n])
        estimate = est.score_samples(X_test, y_test)
        errors.append(np.median(np.abs(np.exp(estimate - truth) - 1)))
    assert errors[1] < 0.5 * errors[0]
    assert errors[1] < 0.15
    assert spearmanr(estimate, truth)[0] > 0.99


def test_floored_estimates_are_flagged_and_finite():
    X, y, _ = make_latent_tree_corpus(300, 4, 100, random_state=2)
    est = SpectralTreeScorer(n_components=4, method="spectral", rcond=0.0,
                             random_state=0).fit(X[:200], y[:200])
    log_prob, floored = est.score_samples(X[200:], y[200:], return_flags=True)
    assert floored.any(), "small samples give some non-positive estimates"
    assert np.all(np.isfinite(log_prob))
    lengths = np.array([len(s) for s in X[200:]])
    np.testing.assert_allclose(log_prob[floored], lengths[floored] * est.log_floor_per_token_)
    assert est.score(X[200:], y[200:]) == pytest.approx(log_prob.sum() / lengths.sum())
    _, train_flags = est.score_samples(X[:200], y[:200], return_flags=True)
    assert est.nonpositive_share_ == pytest.approx(train_flags.mean())


def model_rows(est, model):
    """The true emission matrix in the estimator's word order (row 0, unknown, is empty)."""
    O = np.zeros((len(est.vocabulary_), model["emissions"].shape[1]))
    for i, word in enumerate(est.vocabulary_.itos[1:], start=1):
        O[i] = model["emissions"][int(word[1:])]
    return O


def test_svd_embedding_keeps_the_span_of_the_emissions():
    """Share of the emission matrix's norm outside span(U) (zero in the
    population): "svd", the default, loses much less of it than "cca"."""
    X, y, _, model = make_latent_tree_corpus(3000, 5, 300, random_state=4, return_model=True)
    missed = {}
    for embedding in ("svd", "cca"):
        est = SpectralTreeScorer(n_components=5, method="spectral", embedding=embedding,
                                 min_count=1, random_state=0).fit(X, y)
        O = model_rows(est, model)
        U = est.embedding_
        missed[embedding] = np.linalg.norm(O - U @ (U.T @ O)) / np.linalg.norm(O)
    assert missed["svd"] < 0.4
    assert missed["svd"] < missed["cca"] - 0.1


def test_whitened_cut_keeps_every_state():
    """On data from the model the whitened pair matrices keep rank k at the
    default rcond; the probabilities' scale no longer decides what survives."""
    X, y, _ = make_latent_tree_corpus(3000, 4, 60, random_state=5)
    est = SpectralTreeScorer(n_components=4, method="spectral", min_count=1,
                             random_state=0).fit(X, y)
    assert list(est.rank_) == [4, 4]
    est.set_params(rcond=0.999).fit(X, y)
    assert list(est.rank_) == [1, 1]


def run_history(est, field, run=1):
    """``field`` of every history record of EM run ``run``."""
    return np.array([h[field] for h in est.history_ if h["run"] == run])


@pytest.mark.slow
def test_em_likelihood_never_decreases_and_spectral_start_helps():
    X, y, log_prob = make_latent_tree_corpus(5000, 3, 40, random_state=6)
    X_val, y_val = X[4000:], y[4000:]
    fits = {name: SpectralTreeScorer(n_components=3, method=name, min_count=1, pseudo_count=0.0,
                                     n_epochs=15, tol=0.0, random_state=0).fit(
                                         X[:4000], y[:4000], X_val=X_val, y_val=y_val)
            for name in ("em", "spectral+em")}
    for est in fits.values():
        for run in (1, 2):
            assert np.all(np.diff(run_history(est, "loss", run)) <= 1e-10)
        assert est.n_iter_ == 15 and len(est.history_) == 2 * 15
    # from the spectral emissions EM is near the truth within a few iterations
    # and ahead of the random start at every one
    truth = log_prob[4000:].sum() / sum(len(s) for s in X_val)
    spectral, random = (run_history(fits[name], "validation_score") for name in ("spectral+em", "em"))
    assert spectral[4] > truth - 0.03
    assert np.all(spectral > random)


def test_em_converges_and_reports(capsys):
    X, y, _ = make_latent_tree_corpus(300, 3, 30, random_state=7)
    est = SpectralTreeScorer(n_components=3, method="em", tol=1e-3, n_epochs=500, n_init=1,
                             verbose=1, random_state=0).fit(X[:200], y[:200], X_val=X[200:], y_val=y[200:])
    assert est.converged_ and est.n_iter_ < 500
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and len(lines) == est.n_iter_ == len(est.history_)
    assert lines[0].startswith("[SpectralTreeScorer] iteration 1:") and "validation score" in lines[0]


def test_early_stopping_keeps_each_runs_best_iteration_and_the_best_run():
    """With n_iter_no_change, a run stops after that many iterations without a
    better validation score and keeps its best; "best" keeps the run whose kept
    iteration scores best, so the model scores the validation data as the
    best record of the history."""
    X, y, _ = make_latent_tree_corpus(400, 3, 30, random_state=10)
    X_val, y_val = X[300:], y[300:]
    est = SpectralTreeScorer(n_components=3, method="em", n_epochs=200, tol=0.0, n_init=3,
                             combine_runs="best", n_iter_no_change=2, pseudo_count=0.0,
                             random_state=0).fit(X[:300], y[:300], X_val=X_val, y_val=y_val)
    scores = [h["validation_score"] for h in est.history_]
    assert est.score(X_val, y_val) == pytest.approx(max(scores), abs=1e-12)
    assert sorted({h["run"] for h in est.history_}) == [1, 2, 3]
    for run in (1, 2, 3):
        run_scores = run_history(est, "validation_score", run)
        assert len(run_scores) < 200 and np.argmax(run_scores) == len(run_scores) - 3
    # the method of moments is recorded as one pass, its loss the training fit
    moments = SpectralTreeScorer(n_components=3, method="spectral", validation_fraction=0.25,
                                 random_state=0).fit(X, y)
    assert [h["label"] for h in moments.history_] == ["moments"]
    assert moments.history_[0]["validation_score"] is not None


def test_several_em_runs_are_averaged_or_the_most_likely_kept():
    """The first of several starts is the one a single run uses (same
    random_state); "mean" scores by the mean of the runs' log-probabilities,
    "best" keeps the most likely run."""
    X, y, _ = make_latent_tree_corpus(400, 3, 30, random_state=9)
    params = dict(n_components=3, method="em", n_epochs=30, random_state=0)
    one = SpectralTreeScorer(**params).fit(X, y)
    mean = SpectralTreeScorer(**params, n_init=3).fit(X, y)
    best = SpectralTreeScorer(**params, n_init=3, combine_runs="best").fit(X, y)

    def final_losses(est):
        return [run_history(est, "loss", run)[-1] for run in (1, 2, 3)]

    assert final_losses(mean)[0] == run_history(one, "loss")[-1]
    assert len(set(final_losses(mean))) == 3
    assert mean.emissions_.shape[0] == 3 and best.emissions_.shape[0] == 1
    per_run = []
    for i in range(3):
        one.start_probs_, one.transitions_, one.emissions_ = (
            mean.start_probs_[i:i + 1], mean.transitions_[i:i + 1], mean.emissions_[i:i + 1])
        per_run.append(one.score_samples(X, y))
    np.testing.assert_allclose(mean.score_samples(X, y), np.mean(per_run, axis=0))
    kept = int(np.argmin(final_losses(best)))
    np.testing.assert_allclose(best.emissions_[0], mean.emissions_[kept])
    assert best.n_iter_ == len(run_history(best, "loss", kept + 1))


def test_unlabeled_sentences_extend_the_vocabulary():
    X, y, _ = make_latent_tree_corpus(200, 3, 40, random_state=3)
    extra = [["zz", "w1"], ["zz", "zz", "w2"]]
    plain = SpectralTreeScorer(n_components=3, random_state=0).fit(X, y)
    more = SpectralTreeScorer(n_components=3, random_state=0).fit(X, y, X_unlabeled=extra)
    assert "zz" not in plain.vocabulary_ and "zz" in more.vocabulary_


def test_bad_input_names_the_sentence():
    X, y, _ = make_latent_tree_corpus(20, 3, 30, random_state=0)
    bad = [h.copy() for h in y]
    bad[7][0] = len(bad[7]) + 3
    with pytest.raises(ValueError, match=r"y\[7\]"):
        SpectralTreeScorer(n_components=2).fit(X, bad)
    with pytest.raises(ValueError, match="n_components"):
        SpectralTreeScorer(n_components=500).fit(X, y)
    est = SpectralTreeScorer(n_components=2).fit(X, y)
    with pytest.raises(ValueError, match=r"X\[1\]"):
        est.score_samples([X[0], []], [y[0], np.array([], dtype=int)])


def test_stripped_trees_reattach_to_the_nearest_kept_ancestor():
    words = ["Oh", ",", "(", "dogs", ")", "bark", "!"]
    sentence = [{"form": w, "upos": "PUNCT" if w in ",()!" else "X"} for w in words]
    # "dogs" hangs from ")", which hangs from "(", which hangs from "bark";
    # "Oh" hangs from ",", a second root in the first tree, under "bark" in the other
    first = np.array([2, 0, 6, 5, 3, 0, 6])
    second = np.array([2, 6, 6, 5, 3, 0, 4])
    stripped, trees = strip_punctuation_from_trees([sentence, sentence], [first, second])
    assert [t["form"] for t in stripped[0]] == ["Oh", "dogs", "bark"]
    assert stripped[0] is stripped[1]
    assert trees[0].tolist() == [0, 3, 0]  # "," has no kept ancestor: "Oh" becomes a root
    assert trees[1].tolist() == [3, 3, 0]
    only_punctuation = [{"form": ".", "upos": "PUNCT"}]
    assert strip_punctuation_from_trees([only_punctuation], [np.array([0])])[1][0].tolist() == []


def test_stripped_model_ignores_where_punctuation_attaches():
    X, y = load_sample_treebank("all")
    train, held = slice(0, 250), slice(250, 330)
    stripped = SpectralTreeScorer(n_components=4, n_init=1, n_epochs=10, strip_punctuation=True,
                                  random_state=0).fit(X[train], y[train])
    # the same model as fitting on sentences stripped beforehand
    plain = SpectralTreeScorer(n_components=4, n_init=1, n_epochs=10, random_state=0).fit(
        *strip_punctuation_from_trees(X[train], y[train]))
    np.testing.assert_allclose(stripped.score_samples(X[held], y[held]),
                               plain.score_samples(*strip_punctuation_from_trees(X[held], y[held])))
    # move a punctuation leaf to another head: the stripped score does not move
    full = SpectralTreeScorer(n_components=4, n_init=1, n_epochs=10, random_state=0).fit(
        X[train], y[train])
    moved_X, moved_gold, moved = [], [], []
    for sentence, heads in zip(X[held], y[held]):
        leaves = [i for i, t in enumerate(sentence)
                  if t["upos"] == "PUNCT" and i + 1 not in heads and heads[i] != 0]
        if leaves:
            tree = heads.copy()
            i = leaves[0]
            # a leaf moved to any other word keeps the tree a tree
            tree[i] = next(h for h in range(1, len(heads) + 1) if h not in (i + 1, heads[i]))
            moved_X.append(sentence), moved_gold.append(heads), moved.append(tree)
    assert len(moved) > 20
    assert all(find_heads_error(tree, single_root=False) is None for tree in moved)
    np.testing.assert_allclose(stripped.score_samples(moved_X, moved),
                               stripped.score_samples(moved_X, moved_gold))
    assert np.any(full.score_samples(moved_X, moved) != full.score_samples(moved_X, moved_gold))
    # no word left: nothing to explain, probability one
    only_punctuation = [{"form": "!", "upos": "PUNCT"}, {"form": "?", "upos": "PUNCT"}]
    assert stripped.score_samples([only_punctuation], [np.array([0, 1])]).tolist() == [0.0]
    n_kept = sum(t["upos"] != "PUNCT" for s in X[held] for t in s)
    assert stripped.score(X[held], y[held]) == pytest.approx(
        stripped.score_samples(X[held], y[held]).sum() / n_kept)


def test_reattach_one_word_moves_exactly_one_word_to_a_valid_tree():
    rng = np.random.default_rng(0)
    _, y = load_sample_treebank("all")
    for heads in y[:200]:
        moved = reattach_one_word(heads, rng)
        if len(heads) <= 2:
            # moving one word of a two-word tree gives two roots or a cycle
            assert moved is None
            continue
        assert moved is not None and find_heads_error(moved) is None
        assert np.count_nonzero(moved != heads) == 1


def gold_beats_perturbed(est, X, y, seed=0):
    rng = np.random.default_rng(seed)
    perturbed = [reattach_one_word(h, rng) for h in y]
    keep = [i for i, tree in enumerate(perturbed) if tree is not None]
    X, y, perturbed = [X[i] for i in keep], [y[i] for i in keep], [perturbed[i] for i in keep]
    return np.mean(est.score_samples(X, y) > est.score_samples(X, perturbed))


@pytest.mark.slow
def test_learns_real_trees_on_the_embedded_sample():
    """Gold trees of held-out EWT sentences score above the same sentences
    with one token reattached more often than chance (0.5)."""
    X, y = load_sample_treebank("all")
    est = SpectralTreeScorer(n_components=5, token_field="upos", random_state=0).fit(X[:300], y[:300])
    assert gold_beats_perturbed(est, X[300:], y[300:]) > 0.6


@pytest.mark.slow
@pytest.mark.corpus
def test_learns_real_trees_on_ewt():
    X, y = load_ud_treebank("en_ewt", "train")
    X_dev, y_dev = load_ud_treebank("en_ewt", "dev")
    # one EM run keeps the test short (the default n_init=2 doubles the fit)
    est = SpectralTreeScorer(n_components=10, n_init=1, random_state=0).fit(X[:4000], y[:4000])
    assert gold_beats_perturbed(est, X_dev[:600], y_dev[:600]) > 0.7


def test_em_threads_give_the_same_model():
    X, y, _ = make_latent_tree_corpus(400, 3, 30, random_state=8)
    fits = [SpectralTreeScorer(n_components=3, method="em", n_epochs=5, n_jobs=n_jobs,
                               random_state=0).fit(X, y) for n_jobs in (1, 2)]
    np.testing.assert_allclose(fits[0].emissions_, fits[1].emissions_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose([h["loss"] for h in fits[0].history_],
                               [h["loss"] for h in fits[1].history_], rtol=1e-12)
