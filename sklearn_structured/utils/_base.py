"""The base class of the estimators whose X is a list of sentences."""

from sklearn.base import BaseEstimator

from ._persistence import CACHE_ATTRIBUTE, FORMAT_VERSION


class SentenceEstimator(BaseEstimator):
    """A scikit-learn estimator that takes a list of sentences as X.

    It tells scikit-learn through the estimator tags that X is not a 2-D
    array, so the common checks and meta-estimators do not feed it one, and
    whether ``fit`` needs y. Subclasses that learn from X alone set
    ``_requires_y = False``.
    """

    _requires_y = True

    def __getstate__(self):
        state = {k: v for k, v in super().__getstate__().items() if k != CACHE_ATTRIBUTE}
        state["_format_version"] = FORMAT_VERSION
        return state

    def _cached(self, name, source, make):
        """``make()``, made once and kept while ``source`` (the fitted array it is made
        from) is the same object. Kept on the estimator for prediction only: pickling
        and the safe model format leave it out, so model files stay small."""
        cache = self.__dict__.setdefault(CACHE_ATTRIBUTE, {})
        entry = cache.get(name)
        if entry is None or entry[0] is not source:
            entry = cache[name] = (source, make())
        return entry[1]

    def __setstate__(self, state):
        # fitted state from another layout (e.g. another feature hash) would
        # predict garbage without an error, so it is refused
        version = state.pop("_format_version", 1)
        fitted = any(k.endswith("_") and not k.startswith("_") for k in state)
        if fitted and version != FORMAT_VERSION:
            raise ValueError(
                f"this {type(self).__name__} was pickled by a version of sklearn-structured "
                f"whose fitted models are incompatible with this one (model format {version}, "
                f"this version reads {FORMAT_VERSION}); fit it again"
            )
        super().__setstate__(state)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.target_tags.required = self._requires_y
        return tags
