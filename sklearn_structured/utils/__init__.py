"""Helpers shared by the estimators: token access, input validation, packing."""

from ._base import SentenceEstimator
from ._compile_notice import announce_compilation
from ._corpus import (
    FIELDS,
    ROOT_ID,
    Corpus,
    encode_corpus,
    fit_vocabularies,
    token_values,
    word_type_ids,
    word_type_vocabulary,
)
from ._persistence import atomic_path, is_model_file, load_model, save_model
from ._threads import map_ranges, run_in_threads, thread_count
from ._training import EpochRecord, EpochResult, EpochTrainer, progress_line
from ._sentences import (
    Vocabulary,
    as_heads_array,
    as_label_sequence,
    check_dependency_data,
    check_labelled_dependency_data,
    check_sentences,
    check_tagging_data,
    find_heads_error,
    is_labelled_target,
    pack_ragged,
    split_dependency_targets,
    token_field,
    unpack_ragged,
    word_shape,
)

__all__ = [
    "Corpus",
    "EpochRecord",
    "EpochResult",
    "EpochTrainer",
    "FIELDS",
    "ROOT_ID",
    "SentenceEstimator",
    "Vocabulary",
    "announce_compilation",
    "as_heads_array",
    "as_label_sequence",
    "atomic_path",
    "check_dependency_data",
    "check_labelled_dependency_data",
    "check_sentences",
    "check_tagging_data",
    "encode_corpus",
    "find_heads_error",
    "fit_vocabularies",
    "is_labelled_target",
    "is_model_file",
    "load_model",
    "map_ranges",
    "pack_ragged",
    "progress_line",
    "run_in_threads",
    "save_model",
    "split_dependency_targets",
    "thread_count",
    "token_field",
    "token_values",
    "unpack_ragged",
    "word_shape",
    "word_type_ids",
    "word_type_vocabulary",
]
