"""Structured prediction for NLP as scikit-learn estimators.

Estimators are imported lazily so that ``import sklearn_structured`` stays
cheap and a user who needs only the decoders never compiles a parser. The
names come from :mod:`sklearn_structured.registry`.
"""

import importlib

from .registry import BY_NAME, FUNCTIONS

__version__ = "0.1.0.dev0"

__all__ = sorted([*BY_NAME, *FUNCTIONS])


def __getattr__(name):
    module = BY_NAME[name].module if name in BY_NAME else FUNCTIONS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__():
    return sorted(list(globals()) + __all__)
