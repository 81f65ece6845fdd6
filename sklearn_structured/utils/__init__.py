"""Helpers shared by the estimators: token access, input validation, packing."""

from ._base import SentenceEstimator
from ._sentences import (
    Vocabulary,
    check_dependency_data,
    check_sentences,
    check_tagging_data,
    find_heads_error,
    pack_ragged,
    token_field,
    unpack_ragged,
    word_shape,
)

__all__ = [
    "SentenceEstimator",
    "Vocabulary",
    "check_dependency_data",
    "check_sentences",
    "check_tagging_data",
    "find_heads_error",
    "pack_ragged",
    "token_field",
    "unpack_ragged",
    "word_shape",
]
