"""Structured prediction for NLP as scikit-learn estimators.

Estimators are imported lazily so that ``import sklearn_structured`` stays
cheap and a user who needs only the decoders never compiles a parser.
"""

__version__ = "0.1.0.dev0"

# public name -> submodule that defines it
_LAZY = {
    "LowRankTensorParser": "lowrank",
    "EasyFirstBeamParser": "easy_first",
    "EasyFirstBeamTagger": "easy_first",
    "SpectralTreeScorer": "spectral",
    "NBestReranker": "spectral",
    "DistroSVM": "distro",
    "DistroSequenceSVM": "distro",
    "RankSpacePCFG": "rank_space",
    "RankSpaceHMM": "rank_space",
    "Tokenizer": "tokenize",
    "TokenFieldSelector": "pipeline",
    "TextPipeline": "pipeline",
}
# public functions, imported lazily too (not estimator classes: the safe model
# format accepts only the names of _LAZY)
_LAZY_FUNCTIONS = {
    "evaluate": "metrics",
    "make_parsing_pipeline": "pipeline",
    "parse": "_annotate",
}

__all__ = sorted([*_LAZY, *_LAZY_FUNCTIONS])


def __getattr__(name):
    if name in _LAZY or name in _LAZY_FUNCTIONS:
        import importlib

        module = importlib.import_module(f"{__name__}.{_LAZY.get(name) or _LAZY_FUNCTIONS[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY) + list(_LAZY_FUNCTIONS))
