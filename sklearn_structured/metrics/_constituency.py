"""Unlabelled bracket F1 as used in unsupervised constituency parsing."""

import numpy as np


def _checked_spans(spans, where, length=None):
    """Spans as ``(i, j)`` int pairs with ``0 <= i < j`` (``<= length`` when known)."""
    checked = []
    for span in spans:
        try:
            i, j = span
        except (TypeError, ValueError):
            raise ValueError(f"{where}: {span!r} is not a pair (i, j)") from None
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (i, j)):
            raise ValueError(f"{where}: span {span!r} must hold integers")
        if not 0 <= i < j or (length is not None and j > length):
            bound = "" if length is None else f" <= {length}"
            raise ValueError(f"{where}: span {span!r} must satisfy 0 <= i < j{bound}")
        checked.append((int(i), int(j)))
    return checked


def _scored_spans(spans, length):
    # Single words and the whole sentence are in every binary tree: not scored.
    return [(i, j) for i, j in spans if j - i > 1 and not (i == 0 and j == length)]


def bracket_f1(gold_spans, pred_spans, average="sentence", lengths=None):
    """Unlabelled span F1, discarding single-word and whole-sentence spans.

    Parameters
    ----------
    gold_spans, pred_spans : list of iterables of (i, j)
        Fencepost spans per sentence (``0 <= i < j <= n``).
    average : {"sentence", "corpus"}
        ``"sentence"`` (S-F1) averages per-sentence F1 computed on span sets;
        a sentence with no gold and no predicted spans (length 2) scores 1.
        ``"corpus"`` pools true/false positives and misses over the corpus,
        counting a gold span once per occurrence (unary chains repeat spans).
    lengths : list of int, optional
        Sentence lengths; by default the largest right end of the gold spans.
        Sentences of one word are skipped.
    """
    if average not in ("sentence", "corpus"):
        raise ValueError(f"average must be 'sentence' or 'corpus', got {average!r}")
    gold_spans, pred_spans = list(gold_spans), list(pred_spans)
    if len(gold_spans) != len(pred_spans):
        raise ValueError(f"{len(gold_spans)} gold span lists but {len(pred_spans)} predicted")
    f1_sum, n_sentences = 0.0, 0
    tp = fp = fn = 0
    for k, (gold, pred) in enumerate(zip(gold_spans, pred_spans)):
        known = None if lengths is None else lengths[k]
        gold = _checked_spans(gold, f"gold_spans[{k}]", known)
        pred = _checked_spans(pred, f"pred_spans[{k}]", known)
        if lengths is not None:
            n = lengths[k]
        else:
            n = max((j for _, j in gold), default=max((j for _, j in pred), default=0))
        if n < 2:
            continue
        gold, pred = _scored_spans(gold, n), _scored_spans(pred, n)
        if average == "corpus":
            pred_set, gold_set = set(pred), set(gold)
            tp += sum(s in gold_set for s in pred_set)
            fp += sum(s not in gold_set for s in pred_set)
            fn += sum(s not in pred_set for s in gold)
            continue
        gold_set, pred_set = set(gold), set(pred)
        overlap = len(gold_set & pred_set)
        recall = overlap / len(gold_set) if gold_set else 1.0
        if pred_set:
            precision = overlap / len(pred_set)
        else:
            precision = 1.0 if not gold_set else 0.0
        f1_sum += 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        n_sentences += 1
    if average == "corpus":
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return f1_sum / n_sentences if n_sentences else 0.0
