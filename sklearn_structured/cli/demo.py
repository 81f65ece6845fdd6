"""``sklearn-structured demo``: train a labelled parser on the embedded sample and show
one parse and the held-out scores."""

import io

from .. import registry
from ._common import parse_params


HELP = "train a labelled parser on the embedded sample and show a parse, UAS and LAS"
DESCRIPTION = ("Train a labelled parser on the embedded sample of UD English EWT, print one "
               "held-out sentence as it parses it (CoNLL-U) and its held-out UAS and LAS.")


def add_arguments(p):
    p.estimator_names = registry.names(registry.PARSER)
    p.add_argument("--estimator", choices=registry.names(registry.PARSER), default="lowrank",
                   help="which parser")
    p.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="estimator parameter, repeatable (keys listed below)")


def run(args):
    from ..datasets import load_sample_treebank, write_conllu
    from ..metrics import attachment_score

    X_train, y_train = load_sample_treebank("train", labelled=True)
    X_test, y_test = load_sample_treebank("test", labelled=True)
    print(f"sample of UD English EWT: {len(X_train)} training and {len(X_test)} held-out "
          "sentences")
    # the same figures on every run
    params = {"verbose": 1, "random_state": 0, **parse_params(args.param, args.estimator)}
    parser = registry.estimator_class(args.estimator)(**params)
    print(f"training {parser!r}")
    # no per-epoch validation: scoring the held-out part after every pass
    # would take a quarter of the demo; it is scored once, below
    parser.fit(X_train, y_train)
    predicted = parser.predict(X_test)
    scores = attachment_score(y_test, predicted, X_test, return_all=True)
    # one short held-out sentence, as CoNLL-U with the predicted HEAD and DEPREL
    document = load_sample_treebank("test", as_document=True)
    index = next((i for i, (heads, _) in enumerate(y_test) if 6 <= len(heads) <= 10), 0)
    heads, deprels = predicted[index]
    one = document[index:index + 1].with_heads([heads], [list(deprels)], clear_deps=True)
    text = io.StringIO()
    write_conllu(one, text)
    right = sum(int(h == g) for h, g in zip(heads, y_test[index][0]))
    print(f"held-out sentence {index + 1}, as parsed ({right} of {len(heads)} heads right; "
          "HEAD and DEPREL predicted, the other columns the gold input the parser reads):")
    print(text.getvalue().rstrip("\n"))
    print(f"held-out UAS {100 * scores.uas:.2f}, LAS {100 * scores.las:.2f} "
          "(without punctuation)")
    return 0
