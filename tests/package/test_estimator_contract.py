"""The shared API checks (utils.estimator_checks) for the estimators whose own test
module does not run them in the safe model format, and the format-version guard of
every estimator's pickles.

The other seven run ``check_structured_estimator`` in their family's module:
test_lowrank, test_easy_first (parser and tagger), test_spectral,
test_rank_space (PCFG and HMM) and test_distro_sequence. NBestReranker's module
runs it with a stand-in parser the safe format cannot hold, so it runs here
again with a parser of the library.
"""

import pickle

import numpy as np
import pytest

import sklearn_structured
from sklearn_structured import DistroSVM, LowRankTensorParser, NBestReranker, SpectralTreeScorer
from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.registry import ESTIMATOR_CLASSES
from sklearn_structured.utils.estimator_checks import check_structured_estimator


def test_distro_svm_passes_the_shared_checks():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    y = np.repeat(["a", "b"], 20)
    X[y == "a"] += 2.0
    check_structured_estimator(
        DistroSVM(n_rounds=1, n_epochs=2, random_state=0), X, y,
        param_grid={"alpha": [1e-4, 1e-3], "n_epochs": [1, 2]},
    )


def test_reranker_of_a_library_parser_passes_the_shared_checks():
    X, y = load_sample_treebank("train")
    reranker = NBestReranker(
        LowRankTensorParser(rank=2, n_epochs=1, n_features=2**12, random_state=0),
        scorers=(SpectralTreeScorer(n_components=2, min_count=1),),
        n_best=3, cv=2, n_epochs=1, random_state=0)
    check_structured_estimator(reranker, X[:30], y[:30],
                               param_grid={"n_best": [2, 3], "n_epochs": [1, 2]})


@pytest.mark.parametrize("name", ESTIMATOR_CLASSES)
def test_pickles_of_another_format_version_are_refused(name):
    """Every estimator, structured or not, carries the same guard."""
    cls = getattr(sklearn_structured, name)
    estimator = cls(LowRankTensorParser()) if cls is NBestReranker else cls()
    estimator.fitted_ = np.zeros(1)  # fitted state: what the guard protects
    state = estimator.__getstate__()
    state["_format_version"] = 1
    with pytest.raises(ValueError, match="model format version 1.*fit it again"):
        type(estimator).__new__(type(estimator)).__setstate__(state)
    assert pickle.loads(pickle.dumps(estimator)).fitted_.shape == (1,)
