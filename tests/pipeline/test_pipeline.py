"""The forms-to-trees pipeline: jackknifed tag chain, labelled parsing, one saved model."""

import json

import numpy as np
import pytest
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from sklearn_structured import (
    EasyFirstBeamParser,
    EasyFirstBeamTagger,
    LowRankTensorParser,
    TokenFieldSelector,
    make_parsing_pipeline,
)
from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.easy_first import _tagger_features
from sklearn_structured.pipeline import fit_parsing_pipeline, pipeline_targets
from sklearn_structured.utils import load_model, save_model
from sklearn_structured.utils.estimator_checks import assert_same_predictions

FAST_TAGGER = {"beam_size": 1, "n_epochs": 3}


@pytest.fixture(scope="module")
def sample():
    X, y = load_sample_treebank("train", labelled=True)
    X_test, y_test = load_sample_treebank("test", labelled=True)
    forms = [[token["form"] for token in sentence] for sentence in X_test]
    return X, y, X_test, y_test, forms


def _pipeline(parser="lowrank", targets=("upos", "xpos"), **kwargs):
    parser_params = {"n_epochs": 3, "rank": 8} if parser == "lowrank" else {"n_epochs": 3,
                                                                             "beam_size": 1}
    return make_parsing_pipeline(parser, targets, tagger_params=FAST_TAGGER,
                                 parser_params=parser_params, n_folds=3, random_state=0, **kwargs)


@pytest.fixture(scope="module")
def fitted_lowrank(sample):
    X, y, *_ = sample
    return _pipeline("lowrank").fit(X, y)


def _accuracy(sentences, gold, field):
    pairs = [(t[field], g[field]) for s, gs in zip(sentences, gold) for t, g in zip(s, gs)]
    return np.mean([a == b for a, b in pairs])


def test_factory_builds_the_chain():
    pipe = make_parsing_pipeline("easyfirst", targets=("xpos",), parser_params={"beam_size": 2},
                                 n_folds=5, random_state=3)
    assert [name for name, _ in pipe.steps] == ["fields", "tag_xpos", "parser"]
    assert pipe["fields"].fields == ("form", "xpos")
    assert pipe["tag_xpos"].target == "xpos" and pipe["tag_xpos"].n_folds == 5
    assert pipe["parser"].pos == "xpos" and pipe["parser"].beam_size == 2
    assert pipe["parser"].random_state == 3
    default = make_parsing_pipeline()
    assert default["parser"].__class__ is LowRankTensorParser
    assert pipeline_targets(default) == ("upos", "xpos", "feats", "lemma")
    assert all(default[f"tag_{t}"].beam_size == 1 for t in pipeline_targets(default))
    assert make_parsing_pipeline("easyfirst")["parser"].pos == "upos"
    # the low-rank parser's fine tag carries morphology where FEATS are tagged
    assert default["parser"].tag_feats == ("Case", "Number", "Gender", "VerbForm")
    assert make_parsing_pipeline(targets=("upos", "xpos"))["parser"].tag_feats is None
    assert make_parsing_pipeline(parser_params={"tag_feats": None})["parser"].tag_feats is None
    # and scores only the arcs its pruner keeps
    assert default["parser"].prune_margin == 2.0
    assert make_parsing_pipeline(parser_params={"prune_margin": None})["parser"].prune_margin is None
    # a tagger reads the UPOS and XPOS tagged before it, and only those
    assert [default[f"tag_{t}"].input_tags for t in ("upos", "xpos", "feats", "lemma")] == [
        (), ("upos",), ("upos", "xpos"), ("upos", "xpos")]
    later = make_parsing_pipeline(targets=("feats", "xpos"))
    assert later["tag_feats"].input_tags == () and later["tag_xpos"].input_tags == ()
    for bad in [{"parser": "mst"}, {"targets": ()}, {"targets": ("upos", "upos")},
                {"targets": ("form",)}, {"targets": ("deprel",)}]:
        with pytest.raises(ValueError):
            make_parsing_pipeline(**bad)


def test_selector_keeps_only_the_named_fields():
    X = [[{"form": "Dogs", "lemma": "dog", "upos": "NOUN", "feats": "Number=Plur"}, "bark"]]
    assert TokenFieldSelector(("form", "upos")).fit_transform(X) == [
        [{"form": "Dogs", "upos": "NOUN"}, "bark"]]
    assert X[0][0]["lemma"] == "dog"  # the input is not changed
    with pytest.raises(ValueError, match="include 'form'"):
        TokenFieldSelector(("upos",)).transform(X)


def test_chain_of_taggers_is_jackknifed(sample):
    """What the parser trains on: jackknifed UPOS (also what the XPOS tagger saw), jackknifed
    XPOS, and no other gold field."""
    X, y, *_ = sample
    pipe = _pipeline()
    chain = pipe[:-1]
    seen_by_parser = chain.fit_transform(X, y)  # what Pipeline.fit gives the parser
    assert all(set(token) == {"form", "upos", "xpos"} for s in seen_by_parser for token in s)
    # the UPOS the XPOS tagger read: the first tagger's own jackknifed output
    upos_only = pipe[:2].fit_transform(X, y)
    assert [[t["upos"] for t in s] for s in upos_only] == \
        [[t["upos"] for t in s] for s in seen_by_parser]
    in_sample = chain.transform(X)  # the final taggers, which saw every sentence
    for field in ("upos", "xpos"):
        jackknifed = _accuracy(seen_by_parser, X, field)
        assert 0.5 < jackknifed < _accuracy(in_sample, X, field) - 0.02, field


def test_a_field_given_to_one_training_word_is_not_read_by_later_taggers(sample):
    """A treebank may give a field to a handful of words (Spanish GSD: one XPOS in its dev
    file): the jackknifed tagger of it then writes ``_`` everywhere, and the taggers after
    it train without reading it instead of failing."""
    X, y, _, _, forms = sample
    X = [[dict(token, xpos="_") for token in sentence] for sentence in X]
    X[0][0]["xpos"] = "DT"
    pipe = _pipeline(targets=("upos", "xpos", "feats"))
    with pytest.warns(UserWarning, match="tag_feats: no training word has a predicted XPOS"):
        fit_parsing_pipeline(pipe, X, y)
    assert pipe["tag_feats"].input_tags == ("upos",)
    assert len(pipe.predict(forms)) == len(forms)


def test_pipeline_parses_forms_with_labels(sample, fitted_lowrank):
    X, y, X_test, y_test, forms = sample
    parsed = fitted_lowrank.predict(forms)
    assert len(parsed) == len(forms)
    heads, deprels = parsed[0]
    assert len(heads) == len(deprels) == len(forms[0])
    for heads, deprels in parsed:
        assert [h == 0 for h in heads] == [d == "root" for d in deprels]
    # gold tags in the input change nothing: the taggers overwrite them
    with_gold = fitted_lowrank.predict(X_test)
    assert all((a[0] == b[0]).all() and list(a[1]) == list(b[1])
               for a, b in zip(parsed, with_gold))
    las = fitted_lowrank.score(forms, y_test)
    assert 0.4 < las < 1  # LAS from forms, far above the blank-tag parser's chance level
    tagged = fitted_lowrank[:-1].transform(forms)
    parsed_again = fitted_lowrank[-1].predict(tagged)
    assert pipeline_targets(fitted_lowrank) == ("upos", "xpos")
    assert _accuracy(tagged, X_test, "upos") > 0.7
    assert all((a[0] == b[0]).all() for a, b in zip(parsed, parsed_again))


def test_fit_with_validation_gives_the_same_model(sample, fitted_lowrank, capsys):
    X, y, X_test, y_test, forms = sample
    pipe = _pipeline("lowrank")
    pipe.set_params(parser__verbose=1)
    fit_parsing_pipeline(pipe, X, y, X_val=X_test, y_val=y_test)
    assert "validation score" in capsys.readouterr().err
    assert_same_predictions(pipe.predict(forms), fitted_lowrank.predict(forms))


@pytest.mark.parametrize("parser", ["lowrank", "easyfirst"])
def test_saved_pipeline_predicts_identically(parser, sample, fitted_lowrank, tmp_path):
    X, y, _, _, forms = sample
    pipe = fitted_lowrank if parser == "lowrank" else _pipeline(parser, targets=("upos",)).fit(X, y)
    path = tmp_path / "pipe.model"
    save_model(pipe, path)
    loaded = load_model(path)
    assert type(loaded) is Pipeline
    assert [name for name, _ in loaded.steps] == [name for name, _ in pipe.steps]
    assert type(loaded["parser"]) is type(pipe["parser"])
    assert_same_predictions(pipe.predict(forms), loaded.predict(forms))
    assert isinstance(loaded["parser"], (LowRankTensorParser, EasyFirstBeamParser))
    assert isinstance(loaded["tag_upos"], EasyFirstBeamTagger)


def test_loaded_taggers_share_the_word_ids_they_read(sample, fitted_lowrank, tmp_path,
                                                     monkeypatch):
    """A saved pipeline stores its taggers' equal vocabularies once; loaded, the second
    tagger reuses the ids of the forms the first one read instead of encoding them again,
    and tags as before."""
    *_, forms = sample
    path = tmp_path / "pipe.model"
    save_model(fitted_lowrank, path)
    loaded = load_model(path)
    encoded = []
    encode = _tagger_features._word_ids
    monkeypatch.setattr(_tagger_features, "_word_ids",
                        lambda *args: encoded.append(1) or encode(*args))
    assert_same_predictions(loaded.predict(forms), fitted_lowrank.predict(forms))
    # loaded: once for both taggers; fitted, with a vocabulary per tagger: once each
    assert len(encoded) == 1 + 2


def _edit_model(path, edit):
    with np.load(path) as archive:
        arrays = {name: archive[name] for name in archive.files}
    document = json.loads(arrays["model.json"].tobytes().decode("utf-8"))
    edit(document)
    arrays["model.json"] = np.frombuffer(json.dumps(document).encode("utf-8"), dtype=np.uint8)
    with open(path, "wb") as file:  # np.savez would add ".npz" to a path
        np.savez(file, **arrays)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["model"]["__pipeline__"]["steps"][0][1].update(__estimator__="Pipeline"),
     "unknown estimator class 'Pipeline'"),
    (lambda d: d["model"]["__pipeline__"]["steps"][0][1].update(
        __estimator__="make_parsing_pipeline"), "unknown estimator class"),
    (lambda d: d["model"]["__pipeline__"]["steps"][1].__setitem__(1, {"__pipeline__": {}}),
     "malformed pipeline step"),
    (lambda d: d["model"]["__pipeline__"]["steps"][0].__setitem__(
        1, {"__estimator__": "FunctionTransformer", "params": {}, "state": {}}),
     "unknown estimator class 'FunctionTransformer'"),
])
def test_crafted_pipeline_files_are_refused(edit, message, tmp_path):
    X, y = load_sample_treebank("train", labelled=True)
    pipe = Pipeline([("fields", TokenFieldSelector(("form", "upos"))),
                     ("tag_upos", EasyFirstBeamTagger(beam_size=1, n_epochs=1))])
    pipe.fit(X[:40], y[:40])
    path = tmp_path / "crafted.model"
    save_model(pipe, path)
    assert type(load_model(path)) is Pipeline  # the honest file loads
    _edit_model(path, edit)
    with pytest.raises(ValueError, match=message):
        load_model(path)


def test_pipelines_of_other_steps_are_not_saved(tmp_path):
    foreign = Pipeline([("fields", TokenFieldSelector()), ("f", FunctionTransformer())])
    with pytest.raises(TypeError, match="step 'f' is a FunctionTransformer"):
        save_model(foreign, tmp_path / "x.model")
    assert not (tmp_path / "x.model").exists()


def test_selector_passes_the_data_free_checks():
    from sklearn_structured.utils.estimator_checks import DATA_FREE_CHECKS

    for check in DATA_FREE_CHECKS:
        check("TokenFieldSelector", TokenFieldSelector(fields=("form", "upos")))


def test_parse_annotates_a_conllu_document(fitted_lowrank, tmp_path):
    from sklearn_structured import parse
    from sklearn_structured.datasets import read_conllu, write_conllu

    document = load_sample_treebank("test", as_document=True)[:5]
    forms = document
    for field in ("lemma", "upos", "xpos", "feats"):
        forms = forms.with_tags([[None] * len(s.words) for s in document], field)
    path = tmp_path / "forms.conllu"
    write_conllu(forms, path)
    parsed = parse(fitted_lowrank, path)
    assert parse(fitted_lowrank, path, output=tmp_path / "parsed.conllu") == len(parsed)
    assert read_conllu(tmp_path / "parsed.conllu") == parsed
    tagged = fitted_lowrank[:-1].transform(forms.to_sentences())
    predicted = fitted_lowrank[-1].predict(tagged)
    assert [[int(row[6]) for row in s.words] for s in parsed] == [h.tolist() for h, _ in predicted]
    assert [[row[3] for row in s.words] for s in parsed] == [[t["upos"] for t in s] for s in tagged]
    assert all(row[2] == "_" and row[8] == "_" for s in parsed for row in s.words)
    # the pipeline's parser alone refuses the forms, naming the lines
    with pytest.raises(ValueError, match=r"forms.conllu:1-\d+ \(sentence 1\) has no XPOS"):
        parse(fitted_lowrank["parser"], path)
    with pytest.raises(ValueError, match="a TokenFieldSelector cannot annotate CoNLL-U"):
        parse(fitted_lowrank["fields"], path)


def test_roles_come_from_the_estimators(fitted_lowrank):
    from sklearn_structured import registry
    from sklearn_structured.annotation import role_of

    assert registry.estimator_class("lowrank") is LowRankTensorParser
    assert registry.estimator_class("EasyFirstBeamTagger") is EasyFirstBeamTagger
    assert registry.names(registry.PARSER) == ["easyfirst", "lowrank"]
    assert role_of(fitted_lowrank) == registry.PIPELINE
    assert role_of(fitted_lowrank["parser"]) == registry.PARSER
    assert role_of(fitted_lowrank["tag_upos"]) == registry.TAGGER
    assert role_of(fitted_lowrank[:-1]) is None  # taggers without a parser
    with pytest.raises(ValueError, match="unknown estimator 'mst'"):
        registry.estimator_class("mst")


def test_annotate_writes_what_the_pipeline_declares(fitted_lowrank):
    from sklearn_structured import annotate

    document = load_sample_treebank("test", as_document=True)[:3]
    annotated = annotate(fitted_lowrank, document)
    words = [row for sentence in annotated for row in sentence.words]
    assert all(row[3] != "_" and row[4] != "_" and row[6].isdigit() for row in words)
    # the columns no step writes are cleared, not copied from the input
    assert all(row[2] == "_" and row[5] == "_" for row in words)
    assert annotate(fitted_lowrank["tag_upos"], document).to_sentences()[0][0]["upos"] == \
        fitted_lowrank["tag_upos"].predict(document.to_sentences()[:1])[0][0]
    selected = fitted_lowrank["fields"].annotate(document)[0].words[0]  # FORM, UPOS, XPOS
    assert selected[3:5] == document[0].words[0][3:5] and selected[2] == selected[5] == "_"


def test_a_step_reading_a_field_no_earlier_step_writes_is_refused():
    with pytest.raises(ValueError, match=r"step 'parser' \(EasyFirstBeamParser\) reads UPOS"):
        make_parsing_pipeline("easyfirst", targets=("lemma",))
    with pytest.raises(ValueError, match=r"step 'tag_upos' \(EasyFirstBeamTagger\) reads XPOS"):
        make_parsing_pipeline("lowrank", targets=("upos", "xpos"),
                              tagger_params={"input_tags": ("xpos",)})
    # XPOS falls back to UPOS: LowRank reads the UPOS a tagger writes
    make_parsing_pipeline("lowrank", targets=("upos",))
