"""Structured prediction for NLP as scikit-learn estimators.

Estimators are imported lazily so that ``import sklearn_structured`` stays
cheap and a user who needs only the decoders never compiles a parser. The
names come from :mod:`sklearn_structured.registry`.
"""

from ._lazy import lazy_attributes
from .registry import BY_NAME, FUNCTIONS

__version__ = "0.1.0.dev0"

__all__ = sorted([*BY_NAME, *FUNCTIONS])

__getattr__, __dir__ = lazy_attributes(
    __name__, {**{name: entry.module for name, entry in BY_NAME.items()}, **FUNCTIONS})
