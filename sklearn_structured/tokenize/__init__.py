"""From raw text to sentences, tokens and syntactic words: a tokeniser learned from UD.

The tokeniser is imported on first use, so that the command line reads the
limits of :mod:`~sklearn_structured.tokenize._text` without loading it.
"""

from .._lazy import lazy_attributes
from ._text import SegmentedText, Token, segmented_text

__all__ = ["SegmentedText", "Token", "Tokenizer", "segmented_text", "to_document"]

# the tokeniser's module, imported on first use
__getattr__, __dir__ = lazy_attributes(
    __name__, {"Tokenizer": "_tokenizer", "to_document": "_tokenizer"})
