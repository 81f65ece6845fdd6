"""LowRankTensorParser: API checks, learning on the embedded sample, bad input."""

import pickle

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV

from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.lowrank import LowRankTensorParser
from sklearn_structured.metrics import attachment_score, uas_scorer
from sklearn_structured.utils import find_heads_error, load_model, save_model
from sklearn_structured.utils.estimator_checks import (
    assert_same_predictions,
    check_structured_estimator,
)

from _oracles import is_projective, is_tree

SMALL = dict(rank=4, n_epochs=1, n_features=2**14, random_state=0)


@pytest.fixture(scope="module")
def sample():
    X, y = load_sample_treebank("train")
    X_test, y_test = load_sample_treebank("test")
    return X, y, X_test, y_test


@pytest.fixture(scope="module")
def fitted(sample):
    X, y, _, _ = sample
    return LowRankTensorParser(**SMALL).fit(X[:80], y[:80])


def test_structured_api(sample):
    X, y, _, _ = sample
    check_structured_estimator(
        LowRankTensorParser(**SMALL), X[:40], y[:40],
        param_grid={"rank": [2, 4], "gamma": [0.3, 1.0]}, epochs_param="n_epochs",
    )


def branching_baseline(y, X):
    """Best of the all-left-headed and all-right-headed chains (UAS without punctuation)."""
    right = [np.arange(len(h)) for h in y]  # each word headed by its left neighbour
    left = [np.r_[np.arange(2, len(h) + 1), 0] for h in y]
    return max(attachment_score(y, right, X), attachment_score(y, left, X))


@pytest.mark.slow
def test_learns_sample_treebank_well_above_baselines(sample):
    X, y, X_test, y_test = sample
    parser = LowRankTensorParser(rank=20, n_epochs=4, random_state=0).fit(X, y)
    uas = parser.score(X_test, y_test)
    baseline = branching_baseline(y_test, X_test)
    # 300 training sentences: chains reach about a third, the parser over 70%
    assert baseline < 0.4
    assert uas > 0.7, uas
    assert uas > baseline + 0.3


def test_auto_decoder_follows_the_projectivity_of_the_training_trees(fitted, sample):
    X, y, _, _ = sample
    assert fitted.decoder_ == "eisner"  # the sample treebank is nearly projective
    # one crossing arc per sentence (word 4 heads word 2 across word 3, a child of word 1)
    crossing = [np.r_[0, 4, 1, 1, np.ones(len(h) - 4, np.int64)] for h in y[:40] if len(h) >= 4]
    sentences = [x for x, h in zip(X[:40], y[:40]) if len(h) >= 4]
    parser = LowRankTensorParser(**SMALL).fit(sentences, crossing)
    assert parser.decoder_ == "chu_liu_edmonds"
    assert LowRankTensorParser(**SMALL, decoder="eisner").fit(sentences, crossing).decoder_ == "eisner"


@pytest.mark.parametrize("decoder", ["eisner", "chu_liu_edmonds"])
def test_third_order_parses_within_the_first_order_decoders_tree_class(sample, decoder):
    X, y, X_test, y_test = sample
    parser = LowRankTensorParser(**SMALL, order=3, decoder=decoder).fit(X[:60], y[:60])
    predicted = parser.predict(X_test[:30])
    assert all(is_tree(h, single_root=True) for h in predicted)
    if decoder == "eisner":
        assert all(is_projective(h) for h in predicted)
    else:  # the non-projective search does leave the projective trees
        assert not all(is_projective(h) for h in parser.predict(X[:60]))
    assert parser.score(X_test[:30], y_test[:30]) > branching_baseline(y_test[:30], X_test[:30])


def test_third_order_scorer_and_arc_scores_give_the_parsers_own_search(sample):
    """Hill climbing over arc_scores and third_order_scorer, with the parser's settings,
    finds the trees a third-order parser predicts; other weights give another score."""
    from sklearn_structured.kernels.hill_climbing import hill_climbing_decode
    from sklearn_structured.lowrank._estimator import HILL_CLIMBING

    X, y, X_test, _ = sample
    parser = LowRankTensorParser(**SMALL, order=3, decoder="chu_liu_edmonds").fit(X[:60], y[:60])
    for sentence, predicted in zip(X_test[:10], parser.predict(X_test[:10])):
        heads, score = hill_climbing_decode(parser.arc_scores(sentence),
                                            parser.third_order_scorer(sentence), HILL_CLIMBING)[:2]
        np.testing.assert_array_equal(heads, predicted)
        other = parser.third_order_scorer(sentence, np.ones(parser.n_features))
        assert hill_climbing_decode(parser.arc_scores(sentence), other, HILL_CLIMBING)[1] != score
    with pytest.raises(ValueError, match="theta must have shape"):
        parser.third_order_scorer(X_test[0], np.ones(3))


def test_predictions_are_trees_and_nbest_is_consistent(fitted, sample):
    _, _, X_test, _ = sample
    for heads in fitted.predict(X_test[:20]):
        assert find_heads_error(heads) is None
    best = fitted.predict(X_test[:10])  # decoded by Eisner (decoder_ above)
    for sentence, nbest, top in zip(X_test[:10], fitted.predict_nbest(X_test[:10], 5), best):
        scores = fitted.arc_scores(sentence)
        assert 1 <= len(nbest) <= 5
        tree_scores = [score for _, score in nbest]
        assert tree_scores == sorted(tree_scores, reverse=True)
        assert len({tuple(h) for h, _ in nbest}) == len(nbest)
        for heads, score in nbest:
            total = sum(scores[h, m] for m, h in enumerate(heads, start=1))
            assert score == pytest.approx(total, rel=1e-9, abs=1e-9)
        # the best of the k-best list is the projective argmax (up to ties)
        top_score = sum(scores[h, m] for m, h in enumerate(top, start=1))
        assert nbest[0][1] == pytest.approx(top_score, rel=1e-9, abs=1e-9)


def test_tensor_weight_gamma_changes_the_model(sample):
    X, y, _, _ = sample
    full = LowRankTensorParser(**SMALL).fit(X[:40], y[:40])
    no_tensor = LowRankTensorParser(**{**SMALL, "gamma": 1.0}).fit(X[:40], y[:40])
    assert np.any(full.U_) and not np.any(no_tensor.U_)
    assert full.n_iter_ == 2 and no_tensor.n_iter_ == 1  # the SVD pass only with a tensor


def test_verbose_prints_one_line_per_epoch(sample, capsys):
    X, y, X_test, y_test = sample
    LowRankTensorParser(**{**SMALL, "n_epochs": 2, "verbose": 1}).fit(
        X[:20], y[:20], X_val=X_test[:10], y_val=y_test[:10])
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 3  # initialisation pass + 2 epochs
    assert lines[0].startswith("[LowRankTensorParser] init (gamma=1): ")
    assert lines[2].startswith("[LowRankTensorParser] epoch 2: ")  # as n_epochs counts
    assert all(", loss " in line and ", validation score 0." in line for line in lines)


def test_pos_none_reads_no_tags(sample):
    X, y, X_test, _ = sample
    parser = LowRankTensorParser(**SMALL, pos=None).fit(X[:30], y[:30])
    retagged = [[{**tok, "upos": "X", "xpos": "QQ"} for tok in s] for s in X_test[:10]]
    assert_same_predictions(parser.predict(X_test[:10]), parser.predict(retagged))
    assert parser.tag_fields() == ()
    with pytest.raises(ValueError, match="pos"):
        LowRankTensorParser(pos="upos").fit(X[:5], y[:5])


def fine_tags_with(X, names):
    """X with each word's XPOS (else UPOS) followed by its FEATS items named in names."""
    out = []
    for sentence in X:
        words = []
        for token in sentence:
            items = [f for f in (token.get("feats") or "_").split("|")
                     if f != "_" and f.split("=")[0] in names]
            base = token.get("xpos") or token.get("upos")
            words.append({**token, "xpos": "|".join([base, *items])} if items else token)
        out.append(words)
    return out


def test_tag_feats_read_as_a_fine_tag_with_those_features(sample, tmp_path):
    X, y, X_test, _ = sample
    names = ("Number", "VerbForm")
    parser = LowRankTensorParser(**SMALL, tag_feats=names).fit(X[:40], y[:40])
    plain = LowRankTensorParser(**SMALL).fit(fine_tags_with(X[:40], names), y[:40])
    assert parser.tag_feats_ == names and plain.tag_feats_ == ()
    assert_same_predictions(parser.predict(X_test), plain.predict(fine_tags_with(X_test, names)))
    assert X_test[0] == load_sample_treebank("test")[0][0]  # the input is left as it was
    save_model(parser, tmp_path / "model")
    again = load_model(tmp_path / "model")
    assert again.tag_feats_ == names
    assert_same_predictions(parser.predict(X_test), again.predict(X_test))
    # pos=None reads no tags, so no FEATS either
    assert LowRankTensorParser(**SMALL, pos=None, tag_feats=names).fit(X[:5], y[:5]).tag_feats_ == ()
    with pytest.raises(ValueError, match="tag_feats"):
        LowRankTensorParser(**SMALL, tag_feats=("Case=Nom",)).fit(X[:5], y[:5])


def test_pickles_hold_the_weights_sparse(sample, tmp_path):
    # theta_ has 2**22 cells, few of them non-zero: a dense copy made pickles 8 to 20
    # times the size of the safe model file
    X, y, X_test, _ = sample
    parser = LowRankTensorParser(rank=4, n_epochs=1, random_state=0).fit(X[:40], y[:40])
    save_model(parser, tmp_path / "model")
    pickled = pickle.dumps(parser)
    assert len(pickled) < 1.5 * (tmp_path / "model").stat().st_size
    assert len(pickled) < parser.theta_.nbytes / 10
    again = pickle.loads(pickled)
    for name in ("theta_", "U_", "V_", "W_"):
        assert getattr(again, name).dtype == np.float32
        np.testing.assert_array_equal(getattr(again, name), getattr(parser, name))
    assert_same_predictions(parser.predict(X_test), again.predict(X_test))


def test_first_fit_hashes_the_word_features_once(sample, monkeypatch):
    from sklearn_structured.lowrank import _encoding

    X, y, _, _ = sample
    calls = []
    hashes = _encoding._word_hashes
    monkeypatch.setattr(_encoding, "_word_hashes",
                        lambda *args: calls.append(args) or hashes(*args))
    LowRankTensorParser(**SMALL).fit(X[:20], y[:20])
    assert len(calls) == 1


def test_grid_search_with_uas_scorer(sample):
    X, y, _, _ = sample
    search = GridSearchCV(LowRankTensorParser(**SMALL), {"gamma": [0.3, 1.0]},
                          scoring=uas_scorer, cv=2, error_score="raise").fit(X[:30], y[:30])
    assert 0 < search.best_score_ <= 1


def test_word_vectors_are_used(sample):
    X, y, X_test, _ = sample
    rng = np.random.default_rng(0)
    vectors = {tok["form"]: rng.normal(size=5) for s in X[:30] for tok in s}
    parser = LowRankTensorParser(**{**SMALL, "word_vectors": vectors}).fit(X[:30], y[:30])
    plain = LowRankTensorParser(**SMALL).fit(X[:30], y[:30])
    assert parser.n_word_features_ == plain.n_word_features_ + 15
    assert np.any(parser.U_[-15:])  # the real-valued columns were learned
    assert len(parser.predict(X_test[:5])) == 5


def test_word_embeddings_are_rows_of_u_and_v(fitted):
    known = fitted.word_embeddings(["the", "is", "qwzxunseen"], role="head")
    assert known.shape == (3, fitted.rank)
    assert np.any(known[0]) and np.any(known[1]) and not np.any(known[2])
    modifier = fitted.word_embeddings(["the"], role="modifier")
    assert not np.allclose(modifier[0], known[0])
    with pytest.raises(ValueError, match="role"):
        fitted.word_embeddings(["the"], role="both")


# ------------------------------------------------------------------ bad input


def test_one_token_and_long_sentences(fitted):
    one = [{"form": "Hello", "upos": "INTJ"}]
    long = [{"form": f"w{i}", "upos": "NOUN"} for i in range(200)]
    heads_one, heads_long = fitted.predict([one, long])
    assert heads_one.tolist() == [0]
    assert len(heads_long) == 200 and find_heads_error(heads_long) is None
    assert fitted.arc_scores(one).shape == (2, 2)
    assert fitted.predict_nbest([one], 3)[0][0][0].tolist() == [0]


def test_unseen_words_and_bare_forms(fitted, sample):
    _, _, X_test, _ = sample
    unseen = [{"form": "Blorptastic", "lemma": "blorp", "upos": "XYZ", "xpos": "QQ",
               "feats": "Foo=Bar"}, {"form": "frobnicates", "upos": "VERB"}]
    bare = [[tok["form"] for tok in s] for s in X_test[:5]]
    for heads in fitted.predict([unseen]):
        assert find_heads_error(heads) is None
    with pytest.raises(ValueError, match="X\\[0\\] has no XPOS and no UPOS"):
        fitted.predict(bare)  # it reads tags: bare forms would parse at chance
    # forms alone (no lemma, no tags) train too; a parser that reads no tags parses them
    X, y, _, _ = sample
    forms_only = [[tok["form"] for tok in s] for s in X[:20]]
    parser = LowRankTensorParser(**SMALL, pos=None).fit(forms_only, y[:20])
    assert len(parser.predict(bare)) == 5


def test_inconsistent_inputs_raise_clear_errors(sample):
    X, y, _, _ = sample
    parser = LowRankTensorParser(**SMALL)
    with pytest.raises(ValueError, match="sentences but y has"):
        parser.fit(X[:5], y[:4])
    bad = list(y[:5])
    bad[3] = bad[3][:-1]
    with pytest.raises(ValueError, match=r"y\[3\]"):
        parser.fit(X[:5], bad)
    with pytest.raises(ValueError, match=r"X\[1\]"):
        parser.fit([X[0], []], [y[0], np.zeros(0, dtype=int)])
    with pytest.raises(ValueError, match="k must be a positive integer"):
        LowRankTensorParser(**SMALL).fit(X[:5], y[:5]).predict_nbest(X[:2], 0)
    with pytest.raises(ValueError, match="gamma"):
        LowRankTensorParser(gamma=1.5).fit(X[:5], y[:5])
