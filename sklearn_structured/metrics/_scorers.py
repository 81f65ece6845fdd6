"""Scorers for ``GridSearchCV(scoring=...)`` and ``cross_val_score``.

scikit-learn's ``make_scorer`` hands the metric only ``y``; the attachment
score also needs X (to skip punctuation), so these are plain callables with
the scorer signature ``scorer(estimator, X, y)``.
"""

from ..utils import split_dependency_targets
from ._dependency import attachment_score
from ._tagging import token_accuracy


def uas_scorer(estimator, X, y):
    """UAS without punctuation of ``estimator.predict(X)`` against ``y``.

    ``y`` and the prediction may be heads or ``(heads, deprels)`` pairs; only
    the heads count.
    """
    return attachment_score(y, estimator.predict(X), X, return_all=True).uas


def las_scorer(estimator, X, y):
    """LAS without punctuation of ``estimator.predict(X)`` against labelled ``y``.

    ``y`` must hold ``(heads, deprels)`` pairs and the estimator must predict
    them (a parser fitted on pairs); otherwise a ValueError says which lacks
    the labels.
    """
    predicted = estimator.predict(X)
    scores = attachment_score(y, predicted, X, return_all=True)
    if scores.las is None:
        y_pairs = split_dependency_targets(y)[1] is not None
        missing = "the prediction" if y_pairs else "y"
        raise ValueError(
            f"las_scorer needs (heads, deprels) pairs in both y and the prediction; {missing} "
            "holds heads only (fit the parser on pairs, e.g. load_conllu(..., labelled=True))"
        )
    return scores.las


def token_accuracy_scorer(estimator, X, y):
    """Token accuracy of ``estimator.predict(X)`` against label sequences ``y``."""
    return token_accuracy(y, estimator.predict(X))
