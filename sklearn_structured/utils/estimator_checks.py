"""API checks for estimators whose X is a list of sentences.

scikit-learn's common checks feed 2-D arrays and skip estimators that do not
take them, so structured estimators get this suite instead: the data-free
checks of scikit-learn, run directly, and structured versions of the rest.
``tests/test_common.py`` runs :func:`check_structured_estimator` for every
estimator of :data:`sklearn_structured.registry.ESTIMATORS`, each with a
small dataset it can learn from in a few seconds.
"""

import io
import os
import pickle
import tempfile

import joblib
import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import (
    check_do_not_raise_errors_in_init_or_set_params,
    check_estimator_cloneable,
    check_estimator_repr,
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_set_params,
)

from .. import registry
from ._persistence import load_model, save_model

DATA_FREE_CHECKS = (
    check_no_attributes_set_in_init,
    check_get_params_invariance,
    check_set_params,
    check_estimator_cloneable,
    check_estimator_repr,
    check_do_not_raise_errors_in_init_or_set_params,
)


def assert_same_predictions(a, b):
    """Predictions are lists of arrays or sequences (or of (heads, labels) pairs of them);
    compare them element by element."""
    assert len(a) == len(b)
    if len(a) and isinstance(a[0], tuple):
        assert all(isinstance(v, tuple) and len(v) == len(u) for u, v in zip(a, b))
        for part in range(len(a[0])):
            assert_same_predictions([u[part] for u in a], [v[part] for v in b])
        return
    for i, (u, v) in enumerate(zip(a, b)):
        u, v = np.asarray(u), np.asarray(v)
        assert u.shape == v.shape, f"prediction {i} differs in shape"
        if np.issubdtype(u.dtype, np.floating):
            np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-10, err_msg=f"prediction {i}")
        else:
            assert np.array_equal(u, v), f"prediction {i} differs: {u} vs {v}"


def _safe_format_holds(estimator):
    """Whether every estimator among ``estimator``'s parameters is the library's: the
    safe model format holds no other (a test's stand-in parser, say)."""
    return all(registry.is_registered(value) for value in estimator.get_params().values()
               if isinstance(value, BaseEstimator))


def check_structured_estimator(
    estimator,
    X,
    y=None,
    *,
    param_grid,
    epochs_param=None,
    predict=lambda est, X: est.predict(X),
):
    """Run the structured API checks on ``estimator`` with data ``(X, y)``.

    ``param_grid`` must name two parameters for the GridSearchCV check.
    ``epochs_param`` names the number-of-passes parameter when the estimator
    has ``partial_fit``; then k calls of ``partial_fit`` must equal ``fit``
    with k epochs. ``predict`` maps a fitted estimator and X to comparable
    output (override for unsupervised models, e.g. ``score_samples``).
    ``y=None`` means the estimator learns from X alone.
    """
    name = type(estimator).__name__
    for check in DATA_FREE_CHECKS:
        check(name, clone(estimator))

    fit_args = (X,) if y is None else (X, y)

    # not fitted -> NotFittedError, not an AttributeError
    try:
        predict(clone(estimator), X)
    except NotFittedError:
        pass
    else:  # pragma: no cover - the assertion is the point
        raise AssertionError(f"{name} predicted before fit without NotFittedError")

    est = clone(estimator)
    assert est.fit(*fit_args) is est, "fit must return self"
    reference = predict(est, X)
    assert len(reference) == len(X)

    # same random_state, same model
    assert_same_predictions(reference, predict(clone(estimator).fit(*fit_args), X))

    # pickle, joblib and safe model file round trips predict identically
    assert_same_predictions(reference, predict(pickle.loads(pickle.dumps(est)), X))
    buffer = io.BytesIO()
    joblib.dump(est, buffer)
    buffer.seek(0)
    assert_same_predictions(reference, predict(joblib.load(buffer), X))
    if _safe_format_holds(est):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "model.npz")
            save_model(est, path)
            assert_same_predictions(reference, predict(load_model(path), X))

    # results independent of n_jobs
    if "n_jobs" in est.get_params():
        parallel = clone(estimator).set_params(n_jobs=2).fit(*fit_args)
        assert_same_predictions(reference, predict(parallel, X))
        assert_same_predictions(reference, predict(est.set_params(n_jobs=2), X))
        est.set_params(n_jobs=estimator.get_params()["n_jobs"])

    # partial_fit k times == fit with k epochs
    if epochs_param is not None:
        k = 2
        by_fit = clone(estimator).set_params(**{epochs_param: k}).fit(*fit_args)
        by_partial = clone(estimator).set_params(**{epochs_param: k})
        for _ in range(k):
            by_partial.partial_fit(*fit_args)
        assert_same_predictions(predict(by_fit, X), predict(by_partial, X))

    # model selection and pipelines take lists of sentences unchanged
    assert len(param_grid) == 2, "give two parameters to search over"
    search = GridSearchCV(clone(estimator), param_grid, cv=2, error_score="raise")
    search.fit(*fit_args)
    assert set(search.best_params_) == set(param_grid)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))

    identity = FunctionTransformer(validate=False)
    pipe = make_pipeline(identity, clone(estimator)).fit(*fit_args)
    assert_same_predictions(reference, predict(pipe, X))
    if y is not None:
        assert np.isfinite(pipe.score(X, y))
    return est
