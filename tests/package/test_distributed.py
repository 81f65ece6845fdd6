"""Dask as a tested path: GridSearchCV on a LocalCluster of worker processes.

Skipped when the ``distributed`` extra is not installed.
"""

import warnings

import numpy as np
import pytest
from joblib import parallel_backend
from sklearn.model_selection import GridSearchCV

from sklearn_structured import EasyFirstBeamParser
from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.metrics import uas_scorer

distributed = pytest.importorskip("distributed", reason="the 'distributed' extra is not installed")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            yield client


def test_grid_search_on_a_cluster_matches_the_default_backend(client):
    X, y = load_sample_treebank("train")
    X, y = X[:120], y[:120]
    search = GridSearchCV(EasyFirstBeamParser(n_epochs=1, random_state=0),
                          {"beam_size": [1, 2]}, scoring=uas_scorer, cv=2, error_score="raise")
    with warnings.catch_warnings():
        # the estimators' own threads must stay in the worker: were they sent to
        # the cluster, each would ship the model and dask would warn of a large graph
        warnings.filterwarnings("error", message=".*large graph.*")
        with parallel_backend("dask"):
            search.fit(X, y)
    reference = GridSearchCV(search.estimator, search.param_grid, scoring=uas_scorer, cv=2).fit(X, y)
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"],
                                  reference.cv_results_["mean_test_score"])
    assert search.best_params_ == reference.best_params_
