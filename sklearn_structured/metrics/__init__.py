"""Evaluation metrics for structures, and scorers for model selection."""

from ._aligned import AlignedScore, aligned_scores
from ._constituency import bracket_f1
from ._conllu import evaluate
from ._dependency import AttachmentScores, attachment_score, is_punctuation
from ._language_model import perplexity
from ._scorers import las_scorer, token_accuracy_scorer, uas_scorer
from ._tagging import token_accuracy

__all__ = [
    "AlignedScore",
    "AttachmentScores",
    "aligned_scores",
    "attachment_score",
    "bracket_f1",
    "evaluate",
    "is_punctuation",
    "las_scorer",
    "perplexity",
    "token_accuracy",
    "token_accuracy_scorer",
    "uas_scorer",
]
