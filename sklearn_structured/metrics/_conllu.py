"""Scores of a predicted CoNLL-U file against the gold one, column by column."""

from ..datasets import ConlluDocument, load_conllu, read_conllu
from ..fields import COLUMN_INDEX, DEPREL, FORM, HEAD, TAG_FIELDS
from ._dependency import attachment_score

# the tag columns are scored by field name (a key of the result) in the order of TAG_FIELDS
_FORM, _HEAD, _DEPREL = COLUMN_INDEX[FORM], COLUMN_INDEX[HEAD], COLUMN_INDEX[DEPREL]


def _filled(document, column):
    """Whether some word of ``document`` has a value in ``column`` (not ``_``)."""
    return any(row[column] != "_" for sentence in document for row in sentence.words)


def evaluate(gold, predicted, *, punct="exclude"):
    """Score a predicted CoNLL-U document against the gold one.

    Parameters
    ----------
    gold, predicted : str, path-like, file object or ConlluDocument
        The same sentences with the same words; ``predicted`` may fill only
        some columns (a tagger's output has no HEAD).
    punct : {"exclude", "include"}, default="exclude"
        Whether the attachment figures count words whose gold UPOS is PUNCT.

    Returns
    -------
    scores : dict
        Fractions in [0, 1], None where not available: ``"upos"``, ``"xpos"``,
        ``"feats"``, ``"lemma"`` (accuracy over all words; None when
        ``predicted`` leaves the column blank), ``"uas"`` and
        ``"complete_match"`` (None when either file has no HEAD), ``"las"``
        (None also when either file has no DEPREL); and the counts
        ``"n_sentences"`` and ``"n_words"`` (the words of the attachment
        figures).

    Raises
    ------
    ValueError
        Naming the file and line, for a malformed file or tree, documents of
        different sentences or words, or a HEAD column filled for some words
        only.
    """
    gold, predicted = (d if isinstance(d, ConlluDocument) else read_conllu(d)
                       for d in (gold, predicted))
    if len(gold) != len(predicted):
        raise ValueError(f"{gold.source} has {len(gold)} sentences but {predicted.source} "
                         f"has {len(predicted)}")
    for i, (g, p) in enumerate(zip(gold, predicted)):
        gold_forms, forms = [row[_FORM] for row in g.words], [row[_FORM] for row in p.words]
        if gold_forms != forms:
            where = f" (line {p.line})" if p.line is not None else ""
            raise ValueError(
                f"sentence {i + 1} of {predicted.source}{where} has other words than in "
                f"{gold.source}: {' '.join(forms)[:80]!r} vs {' '.join(gold_forms)[:80]!r}")
    scores = {"n_sentences": len(gold)}
    for field in TAG_FIELDS:
        column = COLUMN_INDEX[field]
        pairs = [(g[column], p[column]) for gs, ps in zip(gold, predicted)
                 for g, p in zip(gs.words, ps.words)]
        scores[field] = (sum(a == b for a, b in pairs) / len(pairs)
                         if _filled(predicted, column) else None)
    if not (_filled(gold, _HEAD) and _filled(predicted, _HEAD)):
        scores.update(uas=None, las=None, complete_match=None, n_words=0)
        return scores
    X, y, labels = load_conllu(gold, return_labels=True)
    # a prediction may have several roots; it is scored, not rejected
    _, y_pred, labels_pred = load_conllu(predicted, return_labels=True, single_root=False)
    labelled = _filled(gold, _DEPREL) and _filled(predicted, _DEPREL)
    figures = attachment_score(y, y_pred, X, punct=punct, return_all=True,
                               labels_true=labels if labelled else None,
                               labels_pred=labels_pred if labelled else None)
    scores.update(uas=figures.uas, las=figures.las, complete_match=figures.complete_match,
                  n_words=figures.n_words)
    return scores
