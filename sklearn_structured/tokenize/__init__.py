"""From raw text to sentences, tokens and syntactic words: a tokeniser learned from UD."""

from ._text import SegmentedText, Token, segmented_text
from ._tokenizer import Tokenizer, to_document

__all__ = ["SegmentedText", "Token", "Tokenizer", "segmented_text", "to_document"]
