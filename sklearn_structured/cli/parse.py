"""``sklearn-structured parse``: apply a saved model to a CoNLL-U file or raw text with
:func:`sklearn_structured.parse`."""

import sys

from ..tokenize._text import MAX_SENTENCE_LENGTH
from ._common import (PICKLE_WARNING, CommandError, check_output_path, input_source,
                      load_annotator)


HELP = ("apply a saved pipeline, parser (HEAD, DEPREL) or tagger (its tag column) to a CoNLL-U "
        "file, or a text pipeline to raw text")
DESCRIPTION = (
    "Apply a saved model to a CoNLL-U file, or a text pipeline to raw text, and write CoNLL-U "
    "with the predicted columns filled in. A parser writes HEAD and DEPREL (its labels if it "
    "was trained on them, '_' otherwise) and '_' in DEPS; it never copies them from the input. "
    "A pipeline also writes the tag columns of its taggers and needs only the word forms; a "
    "parser alone refuses input without the tags it reads. With --input-format text, a "
    "pipeline trained with a tokeniser splits UTF-8 text into sentences, tokens and words and "
    "writes # newdoc, # newpar (at blank lines), # sent_id, # text, multiword-token ranges and "
    "SpaceAfter=No. The input is read, annotated and written a chunk at a time, so memory does "
    "not grow with its length.")


def add_arguments(p):
    p.add_argument("--model", required=True, help="model file written by 'train'")
    p.add_argument("input", nargs="?", default="-",
                   help="file to annotate ('-' for standard input)")
    p.add_argument("-o", "--output", help="write here (atomically) instead of standard output")
    p.add_argument("--input-format", choices=("conllu", "text"), default="conllu",
                   help="CoNLL-U, or raw text (paragraphs separated by blank lines)")
    p.add_argument("--presegmented", action="store_true",
                   help="text: one sentence a line; split lines into tokens only")
    p.add_argument("--token-ranges", action="store_true",
                   help="text: TokenRange=start:end in MISC, character offsets into the input "
                   "(each line ending counts as one character)")
    p.add_argument("--no-multiword", dest="expand_multiword", action="store_false", default=None,
                   help="text: do not expand multiword tokens; every token is one word")
    p.add_argument("--max-sentence-length", type=int, metavar="N",
                   help="text: cut a predicted sentence of more tokens into pieces of at most N "
                   f"(default {MAX_SENTENCE_LENGTH})")
    p.add_argument("--output-format", choices=("conllu", "html"), default="conllu",
                   help="CoNLL-U, or an HTML page drawing each sentence's tree (built in "
                   "memory: for a document a person will read)")
    p.add_argument("--allow-pickle", action="store_true",
                   help=f"also load joblib/pickle model files; {PICKLE_WARNING}")


def run(args):
    text_only = [flag for flag, given in (
        ("--presegmented", args.presegmented), ("--token-ranges", args.token_ranges),
        ("--no-multiword", args.expand_multiword is False),
        ("--max-sentence-length", args.max_sentence_length is not None)) if given]
    if text_only and args.input_format != "text":
        raise CommandError(f"{', '.join(text_only)} only apply to --input-format text")
    if args.max_sentence_length is not None and args.max_sentence_length < 1:
        raise CommandError(f"--max-sentence-length must be at least 1, got {args.max_sentence_length}")
    if args.output:
        check_output_path(args.output)
    model = load_annotator(args.model, args.allow_pickle, "parse")
    from .. import parse  # after the model: its loading imports the library

    source, name = input_source(args.input)
    options = {}
    if args.input_format == "text":
        options = dict(presegmented=args.presegmented, token_ranges=args.token_ranges,
                       expand_multiword=args.expand_multiword,
                       max_sentence_length=args.max_sentence_length or MAX_SENTENCE_LENGTH)
    print(f"parsing {name}", file=sys.stderr, flush=True)
    if args.output_format == "html":
        n_sentences = _write_page(parse(model, source, input_format=args.input_format,
                                        **options), args.output)
    else:
        n_sentences = parse(model, source, input_format=args.input_format,
                            output=args.output or sys.stdout, **options)
    sys.stdout.flush()
    print(f"wrote {n_sentences} sentences to {args.output or 'standard output'}", file=sys.stderr)
    return 0


def _write_page(document, path):
    """Write the page of ``document``'s trees to ``path`` (atomically) or standard
    output; the number of sentences."""
    from ..display import html_page
    from ..utils import atomic_path

    page = html_page(document, title=f"{len(document)} sentences")
    if path is None:
        sys.stdout.write(page)
    else:
        with atomic_path(path) as temporary, open(temporary, "w", encoding="utf-8") as file:
            file.write(page)
    return len(document)
