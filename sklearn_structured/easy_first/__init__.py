"""Easy-first dependency parsing and POS tagging with beam search (Ma et al., 2013).

The parser is imported on first use: a parsing pipeline of these taggers and
another parser never loads its kernels.
"""

import importlib

from ._tagger import EasyFirstBeamTagger

__all__ = ["EasyFirstBeamParser", "EasyFirstBeamTagger"]


def __getattr__(name):
    if name == "EasyFirstBeamParser":
        return importlib.import_module(f"{__name__}._parser").EasyFirstBeamParser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
