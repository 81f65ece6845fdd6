"""Attachment scores for dependency trees."""

import unicodedata
from typing import NamedTuple, Optional

import numpy as np

from ..utils import as_heads_array, as_label_sequence, split_dependency_targets, token_field


class AttachmentScores(NamedTuple):
    """All attachment figures of one evaluation, as fractions in [0, 1]."""

    uas: float
    las: Optional[float]
    complete_match: float
    n_words: int


def is_punctuation(token):
    """Whether a token is punctuation: UPOS ``PUNCT`` when the token has a UPOS,
    otherwise a form made only of Unicode punctuation characters."""
    upos = token_field(token, "upos")
    if upos is not None:
        return upos == "PUNCT"
    form = token_field(token, "form") or ""
    return bool(form) and all(unicodedata.category(c).startswith("P") for c in form)


def attachment_score(
    y_true,
    y_pred,
    X=None,
    *,
    punct="exclude",
    labels_true=None,
    labels_pred=None,
    return_all=False,
):
    """Attachment score: LAS when both sides carry labels as pairs, UAS otherwise.

    Parameters
    ----------
    y_true, y_pred : list of 1-D int arrays, or of (heads, deprels) pairs
        Heads per sentence (1-based, 0 = root), as ``y`` everywhere, or the
        labelled targets ``(heads, deprels)``. When both are labelled the
        returned float is the labelled attachment score (LAS); when either
        holds heads only it is the unlabelled one (UAS).
    X : list of sentences, optional
        Needed with ``punct="exclude"`` to know which tokens are punctuation
        (UPOS ``PUNCT``, as the seed papers report).
    punct : {"exclude", "include"}
        ``"include"`` counts every word, which is the CoNLL 2018 shared task
        definition of UAS on gold segmentation.
    labels_true, labels_pred : list of label sequences, optional
        Dependency relations given apart from heads-only ``y_true`` and
        ``y_pred``; when both are given LAS is computed too and returned
        with ``return_all`` (the float returned alone stays the UAS).
        Not combined with labelled pairs.
    return_all : bool
        Return an :class:`AttachmentScores` (uas, las, complete_match,
        n_words) instead of one figure.

    Returns
    -------
    float or AttachmentScores
        Fractions in [0, 1]. A sentence counts as a complete match when all
        of its scored words have the right head. ``las`` is None when the
        labels of either side are missing.

    Raises
    ------
    ValueError
        Naming the sentence, for sentence counts or lengths that differ,
        malformed heads, and pairs whose labels are not one non-empty str
        per head.
    """
    if punct not in ("exclude", "include"):
        raise ValueError(f"punct must be 'exclude' or 'include', got {punct!r}")
    if punct == "exclude" and X is None:
        raise ValueError(
            "punct='exclude' needs X to know which tokens are punctuation; "
            "pass X or punct='include'"
        )
    y_true, pairs_true = split_dependency_targets(y_true, name="y_true")
    y_pred, pairs_pred = split_dependency_targets(y_pred, name="y_pred")
    if pairs_true is not None or pairs_pred is not None:
        if labels_true is not None or labels_pred is not None:
            raise ValueError("y_true or y_pred holds (heads, deprels) pairs: do not also pass "
                             "labels_true / labels_pred")
        labels_true, labels_pred = pairs_true, pairs_pred
    las_by_default = pairs_true is not None and pairs_pred is not None
    if len(y_true) != len(y_pred):
        raise ValueError(f"y_true has {len(y_true)} sentences but y_pred has {len(y_pred)}")
    if X is not None and len(X) != len(y_true):
        raise ValueError(f"X has {len(X)} sentences but y_true has {len(y_true)}")
    with_labels = labels_true is not None and labels_pred is not None
    correct_heads = correct_labelled = total = complete = 0
    for i, (gold, pred) in enumerate(zip(y_true, y_pred)):
        gold, pred = as_heads_array(gold, f"y_true[{i}]"), as_heads_array(pred, f"y_pred[{i}]")
        if gold.shape != pred.shape:
            raise ValueError(f"sentence {i}: {len(gold)} gold heads but {len(pred)} predicted")
        if punct == "exclude":
            scored = np.array([not is_punctuation(t) for t in X[i]], dtype=bool)
            if len(scored) != len(gold):
                raise ValueError(f"sentence {i}: X has {len(scored)} tokens but y has {len(gold)} heads")
        else:
            scored = np.ones(len(gold), dtype=bool)
        head_ok = (gold == pred) & scored
        correct_heads += int(head_ok.sum())
        total += int(scored.sum())
        complete += bool(head_ok.sum() == scored.sum())
        if with_labels:
            gold_labels = as_label_sequence(labels_true[i], f"labels_true[{i}]")
            pred_labels = as_label_sequence(labels_pred[i], f"labels_pred[{i}]")
            if not len(gold_labels) == len(pred_labels) == len(gold):
                raise ValueError(
                    f"sentence {i}: {len(gold)} heads but {len(gold_labels)} gold and "
                    f"{len(pred_labels)} predicted labels"
                )
            label_ok = np.array([a == b for a, b in zip(gold_labels, pred_labels)], dtype=bool)
            correct_labelled += int((head_ok & label_ok).sum())
    uas = correct_heads / total if total else 0.0
    las = (correct_labelled / total if total else 0.0) if with_labels else None
    if not return_all:
        return las if las_by_default else uas
    n_sentences = len(y_true)
    return AttachmentScores(uas, las, complete / n_sentences if n_sentences else 0.0, total)
