"""The base classes of the library's estimators: the format-version guard of their
pickles, the deprecation path of renamed parameters, and the base of the estimators
whose X is a list of sentences."""

import importlib
import warnings

from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ._persistence import CACHE_ATTRIBUTE, FORMAT_VERSION, check_format_version
from ._sentences import check_sentences

_VERSION_KEY = "_format_version"

DEPRECATED = "deprecated"
"""The default of a parameter's old name, kept for one release after a rename."""


def check_power_of_two(estimator, name):
    """Raise unless the parameter ``name`` of ``estimator`` is a power of two (the
    rows of a hashed table, indexed by masking the hash)."""
    value = getattr(estimator, name)
    if value & (value - 1):
        raise ValueError(f"{name} must be a power of two, got {value}")


def check_fitted(estimator, attributes, all_or_any=all):
    """:func:`~sklearn.utils.validation.check_is_fitted` for fitted attributes named
    by ``attributes`` (a name or a list), answered at once when they are there.

    Computing the estimator's tags (scikit-learn's first step) cost about a tenth
    of a millisecond a call, paid by every step of every request a server answers;
    without the attributes, scikit-learn's check decides and raises as usual.
    """
    names = [attributes] if isinstance(attributes, str) else attributes
    if not all_or_any(hasattr(estimator, name) for name in names):
        check_is_fitted(estimator, attributes, all_or_any=all_or_any)


class FormatVersionMixin:
    """Pickles (and joblib files) record the model format version of their fitted
    state, and unpickling refuses fitted state of another version.

    Put it before :class:`~sklearn.base.BaseEstimator` in the bases. Derived
    caches (:meth:`_cached`) are left out of the pickle.

    It also keeps the parameters renamed since the last release working:
    ``_renamed_params`` maps an old name to ``(new name, the new value of an
    old one)`` (the same name when only a value was renamed). The old name
    stays in the signature with the default :data:`DEPRECATED`; given, it
    takes the place of the new one, with a ``FutureWarning`` when the
    parameters are validated (``fit``). Model files and pickles of the last
    release, which hold only the old name, load with the new one.
    """

    _renamed_params = {}

    @classmethod
    def _upgraded_params(cls, params):
        """``params`` (a dict of parameter values) with each parameter given by its old
        name, or an old value, moved to its new name and value."""
        params = dict(params)
        for old, (new, convert) in cls._renamed_params.items():
            value = params.get(old, DEPRECATED)
            if not (isinstance(value, str) and value == DEPRECATED):
                params[new] = convert(value)
                if new != old:
                    params[old] = DEPRECATED
        return params

    def _param(self, name):
        """The value ``fit`` uses for parameter ``name``, given by its old name or not."""
        return self._upgraded_params(self.get_params(deep=False))[name]

    def _validate_params(self):
        super()._validate_params()
        params = self.get_params(deep=False)
        upgraded = self._upgraded_params(params)
        for old, (new, _) in self._renamed_params.items():
            if upgraded[old] != params[old]:
                warnings.warn(
                    f"{type(self).__name__}: {old}={params[old]!r} is deprecated and will "
                    f"stop working in the next release; use {new}={upgraded[new]!r}",
                    FutureWarning, stacklevel=3)

    def __getstate__(self):
        state = {k: v for k, v in super().__getstate__().items() if k != CACHE_ATTRIBUTE}
        state[_VERSION_KEY] = FORMAT_VERSION
        return state

    def __setstate__(self, state):
        # a pickle from before the guard holds no version: the first format
        version = state.pop(_VERSION_KEY, 1)
        if any(k.endswith("_") and not k.startswith("_") for k in state):
            check_format_version(version, f"this pickled {type(self).__name__}")
        super().__setstate__(self._upgraded_params(state))

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


def import_extra(name, extra):
    """The optional module ``name``, or an ImportError naming the extra that installs it."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ImportError(f"this needs the {name} package: pip install "
                          f"sklearn-structured[{extra}]") from None
