"""Both parsers fitted on (heads, deprels) pairs: API, model selection, round trips, LAS."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from sklearn_structured import EasyFirstBeamParser, LowRankTensorParser
from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.metrics import attachment_score, las_scorer, uas_scorer
from sklearn_structured.utils import find_heads_error, load_model, save_model
from sklearn_structured.utils.estimator_checks import (
    assert_same_predictions,
    check_structured_estimator,
)

PARSERS = {
    "lowrank": (LowRankTensorParser(rank=4, n_epochs=2, n_features=2**14, random_state=0),
                {"rank": [2, 4], "gamma": [0.3, 1.0]}),
    "easyfirst": (EasyFirstBeamParser(beam_size=2, n_epochs=2, n_features=2**14, random_state=0),
                  {"beam_size": [1, 2], "n_epochs": [1, 2]}),
}


@pytest.fixture(scope="module")
def sample():
    X, y = load_sample_treebank("train", labelled=True)
    X_test, y_test = load_sample_treebank("test", labelled=True)
    return X, y, X_test, y_test


@pytest.fixture(scope="module", params=sorted(PARSERS))
def fitted(request, sample):
    X, y, _, _ = sample
    parser, _ = PARSERS[request.param]
    return clone(parser).fit(X[:120], y[:120])


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_structured_api_with_labelled_y(name, sample):
    X, y, _, _ = sample
    parser, grid = PARSERS[name]
    est = check_structured_estimator(clone(parser), X[:40], y[:40], param_grid=grid,
                                     epochs_param="n_epochs")
    assert all(isinstance(p, tuple) for p in est.predict(X[:3]))


def test_predictions_are_labelled_trees_with_root_on_the_root_only(fitted, sample):
    _, _, X_test, _ = sample
    predicted = fitted.predict(X_test)
    assert len(predicted) == len(X_test)
    for sentence, (heads, labels) in zip(X_test, predicted):
        assert find_heads_error(heads) is None
        assert len(labels) == len(sentence) and all(isinstance(x, str) for x in labels)
        assert [label == "root" for label in labels] == list(heads == 0)


def test_score_is_las_and_heads_match_the_unlabelled_parser(fitted, sample):
    X, y, X_test, y_test = sample
    predicted = fitted.predict(X_test)
    scores = attachment_score(y_test, predicted, X_test, return_all=True)
    assert fitted.score(X_test, y_test) == scores.las < scores.uas
    assert uas_scorer(fitted, X_test, y_test) == scores.uas
    assert las_scorer(fitted, X_test, y_test) == scores.las
    # heads-only y scores the heads: UAS
    assert fitted.score(X_test, [h for h, _ in y_test]) == scores.uas
    # the labeller does not touch the tree: a parser fitted on the heads alone
    # predicts the same heads, and nothing else
    unlabelled = clone(fitted).fit(X[:120], [h for h, _ in y[:120]])
    assert unlabelled.labeller_ is None
    heads_only = unlabelled.predict(X_test)
    assert all(isinstance(h, np.ndarray) for h in heads_only)
    assert_same_predictions(heads_only, [h for h, _ in predicted])
    # refitting on heads forgets the labels
    again = pickle.loads(pickle.dumps(fitted)).fit(X[:120], [h for h, _ in y[:120]])
    assert again.labeller_ is None


@pytest.mark.slow
def test_labelled_parsing_beats_baselines_on_the_sample(sample):
    X, y, X_test, y_test = sample
    parser = LowRankTensorParser(rank=20, n_epochs=4, random_state=0).fit(X, y)
    scores = attachment_score(y_test, parser.predict(X_test), X_test, return_all=True)
    # 300 training sentences: about 0.77 UAS and 0.7 LAS
    assert scores.uas > 0.7 and scores.las > 0.62, scores
    assert scores.las > 0.8 * scores.uas


def test_keep_best_keeps_the_labels_of_the_best_epoch(sample):
    # LowRank's epochs train the labeller too: the validation LAS of the kept epoch is
    # the LAS of the fitted model, labels included
    X, y, X_test, y_test = sample
    parser = LowRankTensorParser(rank=4, n_epochs=4, n_features=2**14, random_state=0,
                                 n_iter_no_change=1).fit(X[:60], y[:60], X_val=X_test[:30],
                                                         y_val=y_test[:30])
    scores = [entry["validation_score"] for entry in parser.history_]
    # the init pass, its labels not trained yet, is not scored
    assert scores[0] is None and None not in scores[1:]
    assert parser.score(X_test[:30], y_test[:30]) == pytest.approx(max(scores[1:]), abs=1e-12)
    assert all("label_errors" in entry for entry in parser.history_[1:])
    assert parser.labeller_["perceptron"] is None  # fit keeps the prediction weights only


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_the_labeller_orders_its_passes_by_the_parsers_random_state(name, sample):
    X, y, _, _ = sample
    parser, _ = PARSERS[name]
    seeds = [clone(parser).set_params(random_state=seed).fit(X[:40], y[:40]).labeller_["order_seed"]
             for seed in (0, 0, 1)]
    assert seeds[0] == seeds[1] != seeds[2]


def test_a_labeller_saved_without_an_order_seed_goes_on_with_the_fixed_one(sample):
    X, y, _, _ = sample
    parser = PARSERS["easyfirst"][0]
    fixed, saved = (clone(parser).partial_fit(X[:40], y[:40]) for _ in range(2))
    fixed.labeller_["order_seed"] = 12011
    del saved.labeller_["order_seed"]  # as models of the previous release hold it
    for model in (fixed, saved):
        model.partial_fit(X[:40], y[:40])
    tables = [model.labeller_["perceptron"]["weights"]["table"] for model in (fixed, saved)]
    assert np.array_equal(*tables)


def test_round_trips_keep_the_labels(fitted, sample, tmp_path):
    _, _, X_test, y_test = sample
    reference = fitted.predict(X_test)
    assert_same_predictions(reference, pickle.loads(pickle.dumps(fitted)).predict(X_test))
    path = tmp_path / "labelled.model"
    save_model(fitted, path)
    loaded = load_model(path)
    assert loaded.labeller_["labels"] == fitted.labeller_["labels"]
    assert_same_predictions(reference, loaded.predict(X_test))
    # an unlabelled parser saves and loads as one too
    unlabelled = clone(fitted).set_params(n_epochs=1).fit(X_test[:30],
                                                          [h for h, _ in y_test[:30]])
    save_model(unlabelled, tmp_path / "unlabelled.model")
    assert load_model(tmp_path / "unlabelled.model").labeller_ is None


def test_labeller_reads_the_parsers_corpus_and_keeps_its_table_unsaved(fitted, sample, tmp_path):
    from sklearn_structured.labelling import label_trees

    X, y, X_test, _ = sample
    model = clone(fitted).fit(X[:120], y[:120])
    path = tmp_path / "before.model"
    save_model(model, path)
    predicted = model.predict(X_test)
    # the labels of the parser's trees are those the labeller gives encoding the sentences
    # itself (LowRank hands it the corpus it packed)
    heads = [h for h, _ in predicted]
    assert [d for _, d in predicted] == label_trees(model.labeller_, X_test, heads)
    # the dense table made by predict is neither pickled nor saved
    assert "_cache" in vars(model)
    assert "_cache" not in vars(pickle.loads(pickle.dumps(model)))
    save_model(model, tmp_path / "after.model")
    assert (tmp_path / "after.model").stat().st_size == path.stat().st_size
    assert "_cache" not in vars(load_model(tmp_path / "after.model"))
    # training again replaces the table: the model predicts as one trained afresh
    resumed = clone(fitted).partial_fit(X[:120], y[:120])
    resumed.predict(X_test)
    resumed.partial_fit(X[:120], y[:120])
    afresh = clone(fitted).set_params(n_epochs=2).fit(X[:120], y[:120])
    assert_same_predictions(afresh.predict(X_test), resumed.predict(X_test))


def test_model_selection_with_las_scorer(sample):
    X, y, _, _ = sample
    parser, grid = PARSERS["easyfirst"]
    search = GridSearchCV(clone(parser), grid, cv=2, scoring={"las": las_scorer, "uas": uas_scorer},
                          refit="las", error_score="raise").fit(X[:60], y[:60])
    las, uas = search.cv_results_["mean_test_las"], search.cv_results_["mean_test_uas"]
    assert np.all((0 < las) & (las < uas) & (uas < 1))
    assert search.best_params_ == search.cv_results_["params"][int(np.argmax(las))]
    scores = cross_val_score(clone(parser), X[:60], y[:60], cv=3, scoring=las_scorer,
                             error_score="raise")
    assert scores.shape == (3,) and np.all((0 < scores) & (scores < 1))
    pipe = make_pipeline(FunctionTransformer(validate=False), clone(parser)).fit(X[:60], y[:60])
    assert pipe.score(X[:20], y[:20]) == las_scorer(pipe, X[:20], y[:20])


@pytest.mark.parametrize("y_bad, message", [
    (lambda y: [y[0], y[1][0]] + y[2:], r"y\[1\] holds heads only"),
    (lambda y: [(y[0][0], y[0][1][:-1])] + y[1:], r"y\[0\] has \d+ heads but \d+ labels"),
    (lambda y: [(y[0][0], [1] * len(y[0][1]))] + y[1:], r"y\[0\]: label 0 is 1"),
])
def test_malformed_labelled_y_is_refused(sample, y_bad, message):
    X, y, _, _ = sample
    for parser, _ in PARSERS.values():
        with pytest.raises(ValueError, match=message):
            clone(parser).fit(X[:5], y_bad(list(y[:5])))


def test_tagger_then_labelled_parser_from_forms(sample):
    """In a pipeline the tagger ignores the parser's (heads, deprels) target."""
    from sklearn_structured import EasyFirstBeamTagger

    X, y, X_test, _ = sample
    pipe = make_pipeline(
        EasyFirstBeamTagger(beam_size=1, n_epochs=2, n_folds=2, random_state=0),
        clone(PARSERS["easyfirst"][0]).set_params(pos="upos"),
    ).fit(X[:60], y[:60])
    forms = [[{"form": t["form"]} for t in s] for s in X_test[:10]]
    for sentence, (heads, deprels) in zip(forms, pipe.predict(forms)):
        assert len(heads) == len(deprels) == len(sentence)
        assert [h == 0 for h in heads] == [d == "root" for d in deprels]
