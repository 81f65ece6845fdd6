"""The one place that imports private scikit-learn names.

Parameter validation lives in private modules of scikit-learn; keeping the
imports here means a scikit-learn upgrade that moves them breaks one file,
loudly, instead of every estimator.
"""

from sklearn.base import _fit_context
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    Options,
    StrOptions,
    validate_params,
)

__all__ = ["HasMethods", "Hidden", "Interval", "Options", "StrOptions", "_fit_context",
           "_safe_indexing", "validate_params"]
