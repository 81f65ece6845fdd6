"""Token-level accuracy for sequence labelling."""

from ..utils import as_label_sequence


def token_accuracy(y_true, y_pred):
    """Fraction of tokens whose predicted label equals the gold label.

    ``y_true`` and ``y_pred`` are lists of label sequences of matching lengths.
    """
    y_true, y_pred = list(y_true), list(y_pred)
    if len(y_true) != len(y_pred):
        raise ValueError(f"y_true has {len(y_true)} sequences but y_pred has {len(y_pred)}")
    correct = total = 0
    for i, (gold, pred) in enumerate(zip(y_true, y_pred)):
        gold = as_label_sequence(gold, f"y_true[{i}]")
        pred = as_label_sequence(pred, f"y_pred[{i}]")
        if len(gold) != len(pred):
            raise ValueError(f"sequence {i}: {len(gold)} gold labels but {len(pred)} predicted")
        correct += sum(a == b for a, b in zip(gold, pred))
        total += len(gold)
    return correct / total if total else 0.0
