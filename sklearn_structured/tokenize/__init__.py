"""From raw text to sentences, tokens and syntactic words: a tokeniser learned from UD.

The tokeniser is imported on first use, so that the command line reads the
limits of :mod:`~sklearn_structured.tokenize._text` without loading it.
"""

import importlib

from ._text import SegmentedText, Token, segmented_text

# the names of the tokeniser's module, imported on first use
_LAZY = ("Tokenizer", "to_document")

__all__ = ["SegmentedText", "Token", "Tokenizer", "segmented_text", "to_document"]


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}._tokenizer"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
