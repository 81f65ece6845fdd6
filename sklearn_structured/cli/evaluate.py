"""``sklearn-structured evaluate GOLD PRED``: print what :func:`sklearn_structured.evaluate`
returns, and the CoNLL 2018 figures of :func:`sklearn_structured.metrics.aligned_scores`."""

from ..fields import COLUMN_INDEX, FORM, HEAD, TAG_FIELDS
from ._common import CommandError, read_document

# the tag figures, by evaluate's keys, under the names of the CoNLL 2018 shared task
_TAG_NAMES = dict(zip(TAG_FIELDS, ("UPOS", "XPOS", "UFeats", "Lemma")))
_FORM, _HEAD = COLUMN_INDEX[FORM], COLUMN_INDEX[HEAD]


HELP = "tag accuracies, UAS / LAS and complete match of PRED against GOLD"
DESCRIPTION = (
    "Score a predicted CoNLL-U file against the gold one: with the same sentences and words, "
    "the accuracy of each tag column PRED fills and the attachment scores when PRED has heads; "
    "then, or alone when PRED is tokenised otherwise (from raw text), the CoNLL 2018 shared "
    "task's figures on words aligned by their characters.")


def add_arguments(p):
    p.add_argument("gold", help="gold CoNLL-U file ('-' for standard input)")
    p.add_argument("pred", help="predicted CoNLL-U file ('-' for standard input, when GOLD "
                   "is a file)")
    p.add_argument("--punct", choices=("exclude", "include"), default="exclude",
                   help="score words whose gold UPOS is PUNCT or not")


# the CoNLL 2018 figures, a line each: segmentation, tags, trees
_CONLL18_LINES = (("Tokens", "Sentences", "Words"), ("UPOS", "XPOS", "UFeats", "AllTags", "Lemmas"),
                  ("UAS", "LAS", "CLAS", "MLAS", "BLEX"))


def _same_words(gold, pred):
    return len(gold) == len(pred) and all(
        [row[_FORM] for row in g.words] == [row[_FORM] for row in p.words]
        for g, p in zip(gold, pred))


def _has_heads(document):
    return all(row[_HEAD].isdigit() for sentence in document for row in sentence.words)


def _print_conll18(scores):
    print("CoNLL 2018 shared task figures (F1 on words aligned by characters; punctuation "
          "included, relations without subtypes, universal features):")
    for names in _CONLL18_LINES:
        figures = [f"{name} {100 * scores[name].f1:.2f}" for name in names if name in scores]
        if figures:
            print("  " + "  ".join(figures))


def _percent(value):
    return "n/a" if value is None else f"{100 * value:.2f}"


def run(args):
    from ..metrics import aligned_scores, evaluate

    if args.gold == args.pred == "-":
        raise CommandError("GOLD and PRED cannot both be standard input ('-'): give at least "
                           "one of them as a file")
    gold, pred = read_document(args.gold), read_document(args.pred)
    if not _same_words(gold, pred):
        # a prediction from raw text: only the aligned figures exist, and none at all
        # (an error, with nothing printed before it) when PRED is of another text
        scores = aligned_scores(gold, pred, gold_name=args.gold, system_name=args.pred)
        print("PRED is tokenised differently from GOLD: the CoNLL 2018 figures only")
        _print_conll18(scores)
        return 0
    by_punct = {punct: evaluate(gold, pred, punct=punct) for punct in ("exclude", "include")}
    scores = by_punct[args.punct]
    for field, name in _TAG_NAMES.items():
        if scores[field] is not None:
            print(f"{name} {_percent(scores[field])}")
    if scores["uas"] is None:
        print("UAS n/a  LAS n/a  (no heads to score: HEAD is '_' throughout a file)")
    else:
        for punct, figures in by_punct.items():
            print(f"UAS {_percent(figures['uas'])}  LAS {_percent(figures['las'])}  "
                  f"(punctuation {punct}d)")
        print(f"complete match {_percent(scores['complete_match'])} (punctuation {args.punct}d)")
        print(f"words scored {scores['n_words']} (punctuation {args.punct}d)")
    if _has_heads(gold):
        _print_conll18(aligned_scores(gold, pred, gold_name=args.gold, system_name=args.pred))
    return 0
