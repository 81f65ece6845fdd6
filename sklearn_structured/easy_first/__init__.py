"""Easy-first dependency parsing and POS tagging with beam search (Ma et al., 2013)."""

from ._parser import EasyFirstBeamParser
from ._tagger import EasyFirstBeamTagger

__all__ = ["EasyFirstBeamParser", "EasyFirstBeamTagger"]
