"""Package attributes imported on first use (module ``__getattr__``, PEP 562)."""

import importlib
import sys


def lazy_attributes(package, modules):
    """``__getattr__`` and ``__dir__`` for ``package``, whose names in ``modules`` are
    defined by the submodule each maps to (relative to ``package``) and imported
    only when first read."""

    def __getattr__(name):
        if name not in modules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{modules[name]}"), name)

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(modules))

    return __getattr__, __dir__
