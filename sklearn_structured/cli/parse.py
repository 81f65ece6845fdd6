"""``sklearn-structured parse``: apply a saved model to a CoNLL-U file with
:func:`sklearn_structured.parse`."""

import sys

from .. import registry
from ._common import PICKLE_WARNING, CommandError, check_output_path, load_model, read_document


HELP = ("apply a saved pipeline, parser (HEAD, DEPREL) or tagger (its tag column) to a CoNLL-U "
        "file")
DESCRIPTION = (
    "Apply a saved model to a CoNLL-U file and write the file with the predicted columns filled "
    "in. A parser writes HEAD and DEPREL (its labels if it was trained on them, '_' otherwise) "
    "and '_' in DEPS; it never copies them from the input. A pipeline also writes the tag "
    "columns of its taggers and needs only the word forms; a parser alone refuses input "
    "without the tags it reads. The input must be CoNLL-U (one word a line): plain text is not "
    "split into sentences and words here.")


def add_arguments(p):
    p.add_argument("--model", required=True, help="model file written by 'train'")
    p.add_argument("input", nargs="?", default="-",
                   help="CoNLL-U file to annotate ('-' for standard input)")
    p.add_argument("-o", "--output", help="write here (atomically) instead of standard output")
    p.add_argument("--allow-pickle", action="store_true",
                   help=f"also load joblib/pickle model files; {PICKLE_WARNING}")


def run(args):
    from ..pipeline import parse

    if args.output:
        check_output_path(args.output)
    model = load_model(args.model, args.allow_pickle)
    if registry.kind_of(model) is None:
        raise CommandError(f"{args.model} holds a {type(model).__name__}, which parse cannot "
                           "apply: it takes a parser, a tagger or a parsing pipeline")
    parse(model, read_document(args.input), output=args.output or sys.stdout)
    sys.stdout.flush()
    return 0
