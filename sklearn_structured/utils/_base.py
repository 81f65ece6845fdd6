"""The base classes of the library's estimators: the format-version guard of their
pickles, and the base of the estimators whose X is a list of sentences."""

from sklearn.base import BaseEstimator

from ._persistence import CACHE_ATTRIBUTE, FORMAT_VERSION, check_format_version
from ._sentences import check_sentences

_VERSION_KEY = "_format_version"


class FormatVersionMixin:
    """Pickles (and joblib files) record the model format version of their fitted
    state, and unpickling refuses fitted state of another version.

    Put it before :class:`~sklearn.base.BaseEstimator` in the bases. Derived
    caches (:meth:`_cached`) are left out of the pickle.
    """

    def __getstate__(self):
        state = {k: v for k, v in super().__getstate__().items() if k != CACHE_ATTRIBUTE}
        state[_VERSION_KEY] = FORMAT_VERSION
        return state

    def __setstate__(self, state):
        # a pickle from before the guard holds no version: the first format
        version = state.pop(_VERSION_KEY, 1)
        if any(k.endswith("_") and not k.startswith("_") for k in state):
            check_format_version(version, f"this pickled {type(self).__name__}")
        super().__setstate__(state)

    def _cached(self, name, source, make):
        """``make()``, made once and kept while ``source`` (the fitted array it is made
        from) is the same object. Kept on the estimator for prediction only: pickling
        and the safe model format leave it out, so model files stay small."""
        cache = self.__dict__.setdefault(CACHE_ATTRIBUTE, {})
        entry = cache.get(name)
        if entry is None or entry[0] is not source:
            entry = cache[name] = (source, make())
        return entry[1]


class StructuredInputMixin:
    """Tells scikit-learn through the estimator tags that X is not a 2-D array
    (sentences, documents or texts), so the common checks and meta-estimators do
    not feed it one, and whether ``fit`` needs y: subclasses that learn from X
    alone set ``_requires_y = False``. Put it before
    :class:`~sklearn.base.BaseEstimator` in the bases."""

    _requires_y = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.target_tags.required = self._requires_y
        return tags


class SentenceEstimator(StructuredInputMixin, FormatVersionMixin, BaseEstimator):
    """A scikit-learn estimator that takes a list of sentences as X (see
    :class:`StructuredInputMixin` for its tags)."""

    def tag_fields(self):
        """The token fields other than the form that prediction reads, preferred first.

        Prediction refuses a sentence none of whose tokens has any of them
        (see :meth:`_check_prediction_input`): it would be parsed from what is
        missing. Empty (the default) when the form is enough.
        """
        return ()

    def _check_prediction_input(self, X):
        """``check_sentences(X)``, refusing sentences without the :meth:`tag_fields`."""
        return check_sentences(X, fields=self.tag_fields(), reader=type(self).__name__)
