"""scikit-learn's parameter conventions in every estimator: keyword-only parameters
but for the leading ones, a constraint for each, one name per concept. The old names
of renamed parameters (and the old value of ``pos``) still work for a release with a
FutureWarning, and model files and pickles that hold them, as the last release wrote
them, still load."""

import inspect
import io
import json
import warnings
import zipfile

import numpy as np
import pytest

import sklearn_structured
from sklearn_structured import EasyFirstBeamParser, EasyFirstBeamTagger, LowRankTensorParser
from sklearn_structured import NBestReranker, RankSpaceHMM, RankSpacePCFG, SpectralTreeScorer
from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.registry import ESTIMATORS
from sklearn_structured.utils import load_model, save_model
from sklearn_structured.utils.estimator_checks import assert_same_predictions


@pytest.mark.parametrize("name", sorted(entry.name for entry in ESTIMATORS))
def test_parameters_are_keyword_only_but_the_leading_ones(name):
    params = list(inspect.signature(getattr(sklearn_structured, name).__init__).parameters.values())
    positional = [p.name for p in params[1:] if p.kind is p.POSITIONAL_OR_KEYWORD]
    assert len(positional) <= 2, positional
    assert all(p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params[1:])


@pytest.mark.parametrize("name", sorted(entry.name for entry in ESTIMATORS))
def test_every_parameter_has_a_constraint(name):
    cls = getattr(sklearn_structured, name)
    params = set(inspect.signature(cls.__init__).parameters) - {"self"}
    assert set(cls._parameter_constraints) == params


# class, small parameters, the old name and value, the new name and value
RENAMES = {
    "hash_bits": (EasyFirstBeamParser, dict(beam_size=1, n_epochs=1, random_state=0),
                  "hash_bits", 12, "n_features", 2**12),
    "min_feature_count": (EasyFirstBeamTagger, dict(beam_size=1, n_epochs=1, random_state=0),
                          "min_feature_count", 1, "feature_min_count", 1),
    "min_frequency, PCFG": (RankSpacePCFG, dict(n_nonterminals=3, n_preterminals=4, rank=4,
                                                embedding_dim=8, n_epochs=1, random_state=0),
                            "min_frequency", 2, "min_count", 2),
    "min_frequency, HMM": (RankSpaceHMM, dict(n_states=4, rank=4, embedding_dim=8, n_epochs=1,
                                              random_state=0),
                           "min_frequency", 2, "min_count", 2),
    "pos": (LowRankTensorParser, dict(rank=2, n_epochs=1, n_features=2**12, random_state=0),
            "pos", "both", "pos", ("xpos", "upos")),
}


@pytest.fixture(scope="module")
def sample():
    X, y = load_sample_treebank("train")
    X_test, _ = load_sample_treebank("test")
    return X[:40], y[:40], X_test[:20]


def _fit(cls, params, sample):
    X, y, _ = sample
    model = cls(**params)
    if cls in (RankSpacePCFG, RankSpaceHMM):
        return model.fit([[t["form"] for t in s] for s in X])
    return model.fit(X) if cls is EasyFirstBeamTagger else model.fit(X, y)


def _outputs(model, sample):
    X_test = sample[2]
    if isinstance(model, (RankSpacePCFG, RankSpaceHMM)):
        return [model.score_samples([[t["form"] for t in s] for s in X_test if len(s) > 1])]
    return model.predict(X_test)


def _future_warnings(function):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function()
    return result, [str(w.message) for w in caught if issubclass(w.category, FutureWarning)]


@pytest.mark.parametrize("case", RENAMES)
def test_the_old_name_trains_the_model_of_the_new_one_with_a_warning(case, sample):
    cls, params, old, old_value, new, new_value = RENAMES[case]
    renamed, messages = _future_warnings(lambda: _fit(cls, {**params, old: old_value}, sample))
    assert len(messages) == 1
    assert f"{old}={old_value!r} is deprecated" in messages[0]
    assert f"use {new}={new_value!r}" in messages[0]
    current, messages = _future_warnings(lambda: _fit(cls, {**params, new: new_value}, sample))
    assert messages == []
    assert_same_predictions(_outputs(renamed, sample), _outputs(current, sample))


def _as_last_release_saved(path, old, old_value, new):
    """The model file at ``path`` with its parameters as the last release wrote them:
    the old name and value, no new name."""
    with zipfile.ZipFile(path) as archive:
        arrays = {name[:-len(".npy")]: np.load(io.BytesIO(archive.read(name)))
                  for name in archive.namelist()}
    document = json.loads(arrays["model.json"].tobytes().decode("utf-8"))
    params = document["model"]["params"]
    params.pop(new)
    params.pop(old, None)
    params[old] = old_value
    arrays["model.json"] = np.frombuffer(json.dumps(document).encode("utf-8"), dtype=np.uint8)
    with open(path, "wb") as file:
        np.savez(file, **arrays)


@pytest.mark.parametrize("case", RENAMES)
def test_files_and_pickles_with_the_old_name_load_with_the_new_one(case, sample, tmp_path):
    cls, params, old, old_value, new, new_value = RENAMES[case]
    model = _fit(cls, {**params, new: new_value}, sample)
    path = tmp_path / "model.npz"
    save_model(model, path)
    _as_last_release_saved(path, old, old_value, new)
    state = model.__getstate__()
    state[old] = old_value
    if new != old:
        del state[new]
    unpickled = cls.__new__(cls)
    unpickled.__setstate__(state)
    for loaded in (load_model(path), unpickled):
        assert loaded.get_params()[new] == new_value
        if new != old:
            assert loaded.get_params()[old] == "deprecated"
        assert_same_predictions(_outputs(loaded, sample), _outputs(model, sample))
        _, messages = _future_warnings(lambda: _fit(cls, loaded.get_params(), sample))
        assert messages == []


def test_the_reranker_resolves_its_default_scorer_in_fit(sample):
    X, y, X_test = sample
    parser = LowRankTensorParser(rank=2, n_epochs=1, n_features=2**12, random_state=0).fit(X, y)
    rerankers = [NBestReranker(parser, n_best=3, cv="prefit", n_epochs=1, random_state=0,
                               **scorers) for scorers in ({}, {"scorers": (SpectralTreeScorer(),)})]
    assert rerankers[0].get_params()["scorers"] is None
    default, given = (reranker.fit(X, y) for reranker in rerankers)
    assert default.scorers is None and len(default.scorers_) == 1
    # the reranker seeds the scorer (random_state) and leaves the rest as made
    fitted_params = default.scorers_[0].get_params()
    assert fitted_params.pop("random_state") is not None
    defaults = SpectralTreeScorer().get_params()
    del defaults["random_state"]
    assert fitted_params == defaults
    np.testing.assert_array_equal(default.coef_, given.coef_)
    assert_same_predictions(default.predict(X_test), given.predict(X_test))
