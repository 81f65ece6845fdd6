"""The base class of the estimators whose X is a list of sentences."""

from sklearn.base import BaseEstimator


class SentenceEstimator(BaseEstimator):
    """A scikit-learn estimator that takes a list of sentences as X.

    It tells scikit-learn through the estimator tags that X is not a 2-D
    array, so the common checks and meta-estimators do not feed it one, and
    whether ``fit`` needs y. Subclasses that learn from X alone set
    ``_requires_y = False``.
    """

    _requires_y = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.target_tags.required = self._requires_y
        return tags
