"""Scorers for ``GridSearchCV(scoring=...)`` and ``cross_val_score``.

scikit-learn's ``make_scorer`` hands the metric only ``y``; the attachment
score also needs X (to skip punctuation), so these are plain callables with
the scorer signature ``scorer(estimator, X, y)``.
"""

from ._dependency import attachment_score
from ._tagging import token_accuracy


def uas_scorer(estimator, X, y):
    """UAS without punctuation of ``estimator.predict(X)`` against heads ``y``."""
    return attachment_score(y, estimator.predict(X), X)


def token_accuracy_scorer(estimator, X, y):
    """Token accuracy of ``estimator.predict(X)`` against label sequences ``y``."""
    return token_accuracy(y, estimator.predict(X))
