"""The checks every registered estimator passes: the structured API checks, clone, the
estimator tags, the format-version guard of pickles and the role each declares.

Each estimator of :data:`sklearn_structured.registry.ESTIMATORS` needs one entry of
``FIXTURES`` below: a small estimator and data it learns from in a few seconds.
"""

import pickle
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

import sklearn_structured
from sklearn_structured import registry
from sklearn_structured.annotation import Annotator
from sklearn_structured.datasets import ConlluDocument, load_sample_treebank
from sklearn_structured.tokenize import segmented_text
from sklearn_structured.utils.estimator_checks import DATA_FREE_CHECKS, check_structured_estimator


def _sample(n=30):
    X, y = load_sample_treebank("train")
    return X[:n], y[:n]


def _documents(n_documents=4, size=10):
    """Small CoNLL-U documents of the embedded sample, for the estimators that learn from
    documents (cross-validation needs several)."""
    document = load_sample_treebank(as_document=True)
    return [ConlluDocument(document.sentences[k * size:(k + 1) * size])
            for k in range(n_documents)]


def _texts(documents):
    return [segmented_text(document).text for document in documents]


def _spans(estimator, documents):
    """The tokeniser's tokens of each document's text, as (start, end) rows."""
    return [np.array([(t.start, t.end) for s in sentences for t in s]).reshape(-1, 2)
            for sentences in estimator.predict(_texts(documents))]


def _heads(estimator, documents):
    """The heads a text pipeline writes for each document's text."""
    return [np.array([int(row[6]) for s in document for row in s.words])
            for document in estimator.predict(_texts(documents))]


def _score_samples(estimator, X):
    return [np.array([v]) for v in estimator.score_samples(X)]


def _upos(X):
    return [[token["upos"] for token in sentence] for sentence in X]


def _lowrank():
    from sklearn_structured import LowRankTensorParser

    return LowRankTensorParser(rank=2, n_epochs=1, n_features=2**12, random_state=0)


def _lowrank_fixture():
    X, y = _sample()
    return dict(estimator=_lowrank(), X=X, y=y, requires_y=True, epochs_param="n_epochs",
                param_grid={"rank": [2, 4], "gamma": [0.3, 1.0]})


def _easy_first_parser_fixture():
    X, y = _sample()
    return dict(estimator=sklearn_structured.EasyFirstBeamParser(
        beam_size=1, n_epochs=1, hash_bits=14, random_state=0), X=X, y=y, requires_y=True,
        epochs_param="n_epochs", param_grid={"beam_size": [1, 2], "n_epochs": [1, 2]})


def _tagger_fixture():
    X, _ = _sample()
    return dict(estimator=sklearn_structured.EasyFirstBeamTagger(
        beam_size=1, n_epochs=1, random_state=0), X=X, y=_upos(X), requires_y=False,
        epochs_param="n_epochs", param_grid={"beam_size": [1, 2], "n_epochs": [1, 2]})


def _spectral_fixture():
    from sklearn_structured.datasets import make_latent_tree_corpus

    X, y, _ = make_latent_tree_corpus(200, 3, 20, random_state=0)
    return dict(estimator=sklearn_structured.SpectralTreeScorer(n_components=2, random_state=0),
                X=X, y=y, requires_y=True,
                param_grid={"n_components": [2, 3], "method": ["spectral", "spectral+em"]},
                predict=lambda est, X_: est.score_samples(X_, y) if not hasattr(est, "steps")
                else est[-1].score_samples(est[:-1].transform(X_), y))


def _reranker_fixture():
    X, y = _sample()
    return dict(estimator=sklearn_structured.NBestReranker(
        _lowrank(), scorers=(sklearn_structured.SpectralTreeScorer(n_components=2, min_count=1),),
        n_best=3, cv=2, n_epochs=1, random_state=0), X=X, y=y, requires_y=True,
        param_grid={"n_best": [2, 3], "n_epochs": [1, 2]})


def _distro_fixture():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    y = np.repeat(["a", "b"], 20)
    X[y == "a"] += 2.0
    return dict(estimator=sklearn_structured.DistroSVM(n_rounds=1, n_epochs=2, random_state=0),
                X=X, y=y, requires_y=True, two_d=True,
                param_grid={"alpha": [1e-4, 1e-3], "n_epochs": [1, 2]})


def _distro_sequence_fixture():
    X, _ = _sample(40)
    forms = [[token["form"] for token in sentence] for sentence in X]
    return dict(estimator=sklearn_structured.DistroSequenceSVM(
        n_rounds=1, n_epochs=2, random_state=0), X=forms, y=_upos(X), requires_y=True,
        param_grid={"n_components": [4, None], "alpha": [1e-4, 1e-3]})


def _pcfg_fixture():
    X = [s for s in _upos(_sample(40)[0]) if len(s) >= 2][:12]
    return dict(estimator=sklearn_structured.RankSpacePCFG(
        n_nonterminals=3, n_preterminals=4, rank=4, embedding_dim=8, n_epochs=1, batch_size=8,
        random_state=0), X=X, y=None, requires_y=False, predict=_score_samples,
        param_grid={"rank": [2, 4], "parameterization": ["neural", "direct"]})


def _hmm_fixture():
    X = [s for s in _upos(_sample(40)[0]) if len(s) >= 2][:24]
    return dict(estimator=sklearn_structured.RankSpaceHMM(
        n_states=5, rank=3, embedding_dim=8, n_epochs=2, batch_size=8, random_state=0),
        X=X, y=None, requires_y=False, predict=_score_samples,
        param_grid={"rank": [2, 3], "n_states": [4, 5]})


def _word_vectors_fixture():
    X, _ = _sample(60)
    return dict(estimator=sklearn_structured.PPMIWordVectors(
        n_components=3, min_count=2, n_clusters=(2, 4), random_state=0), X=X, y=None,
        requires_y=False, predict=lambda est, X_: est.transform(X_),
        param_grid={"n_components": [2, 3], "window": [1, 2]})


def _tokenizer_fixture():
    return dict(estimator=sklearn_structured.Tokenizer(n_epochs=1, random_state=0),
                X=_documents(), y=None, requires_y=False, predict=_spans,
                param_grid={"n_epochs": [1, 2], "random_state": [0, 1]})


def _selector_fixture():
    return dict(estimator=sklearn_structured.TokenFieldSelector(fields=("form", "upos")),
                requires_y=False)


def _text_pipeline_fixture():
    pipeline = sklearn_structured.make_parsing_pipeline(
        "easyfirst", targets=("upos",), tagger_params={"n_epochs": 1},
        parser_params={"n_epochs": 1, "beam_size": 1}, n_folds=2, random_state=0)
    return dict(estimator=sklearn_structured.TextPipeline(
        sklearn_structured.Tokenizer(n_epochs=1, random_state=0), pipeline),
        X=_documents(), y=None, requires_y=False, predict=_heads,
        param_grid={"tokenizer__n_epochs": [1, 2], "annotator__parser__n_epochs": [1, 2]})


FIXTURES = {
    "LowRankTensorParser": _lowrank_fixture,
    "EasyFirstBeamParser": _easy_first_parser_fixture,
    "EasyFirstBeamTagger": _tagger_fixture,
    "SpectralTreeScorer": _spectral_fixture,
    "NBestReranker": _reranker_fixture,
    "DistroSVM": _distro_fixture,
    "DistroSequenceSVM": _distro_sequence_fixture,
    "RankSpacePCFG": _pcfg_fixture,
    "RankSpaceHMM": _hmm_fixture,
    "PPMIWordVectors": _word_vectors_fixture,
    "Tokenizer": _tokenizer_fixture,
    "TokenFieldSelector": _selector_fixture,
    "TextPipeline": _text_pipeline_fixture,
}
NAMES = [entry.name for entry in registry.ESTIMATORS]
# stateless, with nothing to learn, score or guard: the data-free checks, clone and tags
STATELESS = {"TokenFieldSelector"}


def test_every_registered_estimator_has_a_fixture():
    assert sorted(FIXTURES) == sorted(NAMES)


def test_the_root_exports_the_registry():
    assert set(sklearn_structured.__all__) == set(NAMES) | set(registry.FUNCTIONS)
    for name in sklearn_structured.__all__:
        assert getattr(sklearn_structured, name).__name__ == name


def test_the_api_reference_lists_every_estimator():
    api = (Path(__file__).parents[1] / "docs" / "api.rst").read_text()
    listed = {line.strip().rpartition(".")[2] for line in api.splitlines()
              if re.fullmatch(r"   [\w.]+", line)}
    assert set(NAMES) <= listed


@pytest.mark.parametrize("name", NAMES)
def test_the_role_is_the_class_declaration(name):
    cls = registry.estimator_class(name)
    declared = cls.role if issubclass(cls, Annotator) else None
    assert registry.BY_NAME[name].role == declared


@pytest.mark.parametrize("name", NAMES)
def test_data_free_checks_clone_and_tags(name):
    fixture = FIXTURES[name]()
    estimator = fixture["estimator"]
    for check in DATA_FREE_CHECKS:
        check(name, clone(estimator))
    copy = clone(estimator)
    assert type(copy) is type(estimator) and copy.get_params().keys() == \
        estimator.get_params().keys()
    tags = estimator.__sklearn_tags__()
    assert tags.input_tags.two_d_array is fixture.get("two_d", False)
    assert tags.target_tags.required is fixture["requires_y"]


@pytest.mark.parametrize("name", [name for name in NAMES if name not in STATELESS])
def test_pickles_of_another_format_version_are_refused(name):
    estimator = FIXTURES[name]()["estimator"]
    estimator.fitted_ = np.zeros(1)  # fitted state: what the guard protects
    state = estimator.__getstate__()
    state["_format_version"] = 1
    with pytest.raises(ValueError, match="model format version 1.*fit it again"):
        type(estimator).__new__(type(estimator)).__setstate__(state)
    assert pickle.loads(pickle.dumps(estimator)).fitted_.shape == (1,)


@pytest.mark.parametrize("name", [name for name in NAMES if name not in STATELESS])
def test_structured_estimator_checks(name):
    fixture = FIXTURES[name]()
    options = {key: fixture[key] for key in ("epochs_param", "predict") if key in fixture}
    check_structured_estimator(fixture["estimator"], fixture["X"], fixture["y"],
                               param_grid=fixture["param_grid"], **options)
