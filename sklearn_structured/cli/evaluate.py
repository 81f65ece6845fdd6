"""``sklearn-structured evaluate GOLD PRED``: print what :func:`sklearn_structured.evaluate`
returns."""

from ._common import read_document

# the tag figures, by evaluate's keys, under the names of the CoNLL 2018 shared task
_TAG_NAMES = {"upos": "UPOS", "xpos": "XPOS", "feats": "UFeats", "lemma": "Lemma"}


def add_parser(subparsers, formatter):
    p = subparsers.add_parser(
        "evaluate", formatter_class=formatter,
        help="tag accuracies, UAS / LAS and complete match of PRED against GOLD",
        description="Score a predicted CoNLL-U file against the gold one (same sentences and "
        "words): the accuracy of each tag column PRED fills, and the attachment scores when "
        "PRED has heads.")
    p.add_argument("gold", help="gold CoNLL-U file ('-' for standard input)")
    p.add_argument("pred", help="predicted CoNLL-U file")
    p.add_argument("--punct", choices=("exclude", "include"), default="exclude",
                   help="score words whose gold UPOS is PUNCT or not")
    p.set_defaults(func=run)


def _percent(value):
    return "n/a" if value is None else f"{100 * value:.2f}"


def run(args):
    from ..metrics import evaluate

    gold, pred = read_document(args.gold), read_document(args.pred)
    by_punct = {punct: evaluate(gold, pred, punct=punct) for punct in ("exclude", "include")}
    scores = by_punct[args.punct]
    for field, name in _TAG_NAMES.items():
        if scores[field] is not None:
            print(f"{name} {_percent(scores[field])}")
    if scores["uas"] is None:
        print("UAS n/a  LAS n/a  (no heads to score: HEAD is '_' throughout a file)")
        return 0
    for punct, figures in by_punct.items():
        print(f"UAS {_percent(figures['uas'])}  LAS {_percent(figures['las'])}  "
              f"(punctuation {punct}d)")
    print(f"complete match {_percent(scores['complete_match'])} (punctuation {args.punct}d)")
    print(f"words scored {scores['n_words']} (punctuation {args.punct}d)")
    return 0
