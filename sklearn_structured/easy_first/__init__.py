"""Easy-first dependency parsing and POS tagging with beam search (Ma et al., 2013).

The parser is imported on first use: a parsing pipeline of these taggers and
another parser never loads its kernels.
"""

from .._lazy import lazy_attributes
from ._tagger import EasyFirstBeamTagger

__all__ = ["EasyFirstBeamParser", "EasyFirstBeamTagger"]

__getattr__, __dir__ = lazy_attributes(__name__, {"EasyFirstBeamParser": "_parser"})
