"""The ``sklearn-structured`` command: evaluate, train, parse, demo.

Usage errors print one line and exit with status 2 (argparse's convention);
any other failure prints one line ``sklearn-structured: error: ...`` and exits
with status 1, with the traceback only under ``--debug``.
"""

import argparse
import importlib
import os
import sys
import time

# --estimator NAME -> (module, class) of the parsers the command line can train
PARSERS = {
    "lowrank": ("sklearn_structured.lowrank", "LowRankTensorParser"),
    "easyfirst": ("sklearn_structured.easy_first", "EasyFirstBeamParser"),
}
# --estimator NAME -> taggers, which learn the column named by their ``target``
TAGGERS = {
    "easyfirst-tagger": ("sklearn_structured.easy_first", "EasyFirstBeamTagger"),
}
ESTIMATORS = {**PARSERS, **TAGGERS}

PICKLE_WARNING = (
    "joblib/pickle model files can execute arbitrary code when loaded: "
    "load only files you made yourself or fully trust"
)


class CommandError(Exception):
    """A failure the user can act on, reported as one line."""


def _estimator_class(name):
    module, cls = ESTIMATORS[name]
    return getattr(importlib.import_module(module), cls)


def _is_tagger(estimator):
    return hasattr(estimator, "target")


def _gold_tags(X, field):
    return [[token[field] for token in sentence] for sentence in X]


def _parse_params(pairs, estimator_name):
    """``["rank=20", "gamma=0.5"]`` -> ``{"rank": 20, "gamma": 0.5}`` (Python literals or strings)."""
    import ast

    valid = _estimator_class(estimator_name)().get_params()
    params = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep:
            raise CommandError(f"--param expects KEY=VALUE, got {pair!r}")
        if key not in valid:
            raise CommandError(
                f"--param {key!r} is not a parameter of {estimator_name}; "
                f"valid keys: {', '.join(sorted(valid))}"
            )
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return params


def _read_document(path):
    """Read a CoNLL-U file (``-`` for standard input), with a progress line on stderr."""
    from .datasets import read_conllu

    name = "standard input" if path == "-" else path
    print(f"reading {name}", file=sys.stderr, flush=True)
    document = read_conllu(sys.stdin.buffer if path == "-" else path)
    print(f"read {len(document)} sentences from {name}", file=sys.stderr)
    if len(document) == 0:
        raise CommandError(f"{name} holds no sentences")
    return document


def _load_treebank(path):
    """``(X, y)`` of a CoNLL-U file; ``y`` holds ``(heads, deprels)`` pairs when every
    word has a DEPREL, heads alone (with a note on stderr) otherwise."""
    from .datasets import load_conllu

    document = _read_document(path)
    labelled = document.has_deprels()
    if not labelled:
        print(f"{path}: some words have no DEPREL ('_'); using the heads only",
              file=sys.stderr)
    return load_conllu(document, labelled=labelled)


def _check_output_path(path):
    """Fail before any work if ``path`` cannot be written."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise CommandError(f"output {path} is a directory")
    if not os.path.isdir(directory):
        raise CommandError(f"cannot write {path}: directory {directory} does not exist")
    if not os.access(directory, os.W_OK):
        raise CommandError(f"cannot write {path}: directory {directory} is not writable")


def _load_model(path, allow_pickle):
    from .utils import is_model_file, load_model

    if not os.path.isfile(path):
        raise CommandError(f"model file {path} does not exist")
    if is_model_file(path):
        return load_model(path)
    if not allow_pickle:
        raise CommandError(
            f"{path} is not a model file in the safe format; if it is a joblib/pickle file you "
            f"made yourself, pass --allow-pickle ({PICKLE_WARNING})"
        )
    import joblib

    print(f"warning: {PICKLE_WARNING}", file=sys.stderr)
    try:
        return joblib.load(path)
    except Exception as error:  # a damaged pickle fails in many ways
        raise CommandError(f"cannot load {path} with joblib: {error}") from None


def cmd_evaluate(args):
    from .metrics import attachment_score

    gold, pred = _read_document(args.gold), _read_document(args.pred)
    if len(gold) != len(pred):
        raise CommandError(f"{args.gold} has {len(gold)} sentences but {args.pred} has {len(pred)}")
    for i, (g, p) in enumerate(zip(gold, pred)):
        gold_forms, pred_forms = [row[1] for row in g.words], [row[1] for row in p.words]
        if gold_forms != pred_forms:
            where = f" (line {p.line})" if p.line is not None else ""
            raise CommandError(
                f"sentence {i + 1} of {args.pred}{where} has other words than in {args.gold}: "
                f"{' '.join(pred_forms)[:80]!r} vs {' '.join(gold_forms)[:80]!r}"
            )
    from .datasets import load_conllu

    X, y, labels = load_conllu(gold, return_labels=True)
    # a prediction may have several roots; it is scored, not rejected
    _, y_pred, labels_pred = load_conllu(pred, return_labels=True, single_root=False)
    # LAS only when both files carry labels (a blank DEPREL in PRED counts as wrong)
    unlabelled = [name for name, doc in ((args.gold, gold), (args.pred, pred))
                  if not any(label != "_" for labels_ in doc.deprels() for label in labels_)]
    if unlabelled:
        labels = labels_pred = None
    # tag columns the prediction fills (all '_' means it does not predict them)
    for name, column in (("UPOS", 3), ("XPOS", 4), ("UFeats", 5), ("Lemma", 2)):
        pairs = [(g[column], p[column]) for gs, ps in zip(gold, pred)
                 for g, p in zip(gs.words, ps.words)]
        if any(p != "_" for _, p in pairs):
            accuracy = sum(g == p for g, p in pairs) / len(pairs)
            print(f"{name} {100 * accuracy:.2f}")
    all_scores = {}
    for punct in ("exclude", "include"):
        all_scores[punct] = scores = attachment_score(
            y, y_pred, X, punct=punct, labels_true=labels, labels_pred=labels_pred,
            return_all=True)
        las = ("n/a" if scores.las is None else f"{100 * scores.las:.2f}")
        print(f"UAS {100 * scores.uas:.2f}  LAS {las}  (punctuation {punct}d)")
    if labels is None:
        print(f"LAS n/a: {' and '.join(unlabelled)} without DEPREL")
    scores = all_scores[args.punct]
    print(f"complete match {100 * scores.complete_match:.2f} (punctuation {args.punct}d)")
    print(f"words scored {scores.n_words} (punctuation {args.punct}d)")
    return 0


def _make_pipeline(args):
    from .pipeline import make_parsing_pipeline

    targets = tuple(t.strip() for t in args.targets.split(",") if t.strip())
    parser_params = _parse_params(args.param, args.parser)
    tagger_params = _parse_params(args.tagger_param, "easyfirst-tagger")
    for params in (parser_params, tagger_params):
        params.setdefault("verbose", 1)
    if "target" in tagger_params:
        raise CommandError("--tagger-param target=... is not allowed; use --targets")
    try:
        return make_parsing_pipeline(args.parser, targets, tagger_params=tagger_params,
                                     parser_params=parser_params, n_folds=args.n_folds)
    except ValueError as error:
        raise CommandError(str(error)) from None


def cmd_train(args):
    from .utils import atomic_path, save_model

    _check_output_path(args.out)
    if args.estimator == "pipeline":
        from functools import partial

        from .pipeline import fit_parsing_pipeline

        estimator = _make_pipeline(args)
        fit = partial(fit_parsing_pipeline, estimator)
    else:
        if args.tagger_param:
            raise CommandError("--tagger-param applies only to --estimator pipeline")
        params = _parse_params(args.param, args.estimator)
        params.setdefault("verbose", 1)
        estimator = _estimator_class(args.estimator)(**params)
        fit = estimator.fit
    X, y = _load_treebank(args.train)
    X_val = y_val = None
    if args.dev:
        X_val, y_val = _load_treebank(args.dev)
    if _is_tagger(estimator):
        y = _gold_tags(X, estimator.target)
        y_val = None if X_val is None else _gold_tags(X_val, estimator.target)
    start = time.perf_counter()
    fit(X, y, X_val=X_val, y_val=y_val)
    print(f"trained in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    if args.format == "joblib":
        import joblib

        with atomic_path(args.out) as temporary:
            joblib.dump(estimator, temporary)
    else:
        save_model(estimator, args.out)
    print(f"model written to {args.out} ({args.format} format)", file=sys.stderr)
    return 0


def _check_parser_input(parser, document, path):
    """Refuse input that lacks every tag field the parser reads (it would parse at chance)."""
    fields = parser._tag_fields() if hasattr(parser, "_tag_fields") else ()
    if not fields:
        return
    columns = {"upos": 3, "xpos": 4}
    for field in fields:
        if any(row[columns[field]] != "_" for sentence in document for row in sentence.words):
            return
    raise CommandError(
        f"the input has no {' and no '.join(f.upper() for f in fields)} (every word has '_'), "
        f"which the {type(parser).__name__} in {path} reads ({fields[0].upper()} first): tag "
        "the input first, or train a parsing pipeline (train --estimator pipeline) that tags "
        "word forms itself"
    )


def cmd_parse(args):
    from .datasets._base import gc_paused

    # the parse makes a few small containers per word and no reference cycles of note;
    # with the model's and the document's objects alive, the collector's full scans
    # would otherwise cost a tenth of the run
    with gc_paused():
        return _parse_document(args)


def _parse_document(args):
    from .datasets import write_conllu
    from .utils import atomic_path

    if args.output:
        _check_output_path(args.output)
    model = _load_model(args.model, args.allow_pickle)
    if not hasattr(model, "predict"):
        raise CommandError(f"{args.model} holds a {type(model).__name__}, which cannot predict")
    document = _read_document(args.input)
    from .datasets._conllu import _TAG_COLUMNS
    from .pipeline import annotate, pipeline_targets

    targets = pipeline_targets(model)
    if targets:
        tagged, predicted = annotate(model, document.to_sentences())
        # the tag columns it does not predict are cleared, not copied from the input: the
        # pipeline reads only the forms, and its output is its own annotation
        for field in _TAG_COLUMNS:
            document = document.with_tags(
                [[token.get(field) if field in targets else None for token in sentence]
                 for sentence in tagged], field)
    else:
        if not _is_tagger(model):
            _check_parser_input(model, document, args.model)
        predicted = model.predict(document.to_sentences())
    if _is_tagger(model):
        document = document.with_tags(predicted, model.target)
    else:
        # never the input's DEPREL or DEPS: the predicted labels, or '_'
        if predicted and isinstance(predicted[0], tuple):
            heads, deprels = [h for h, _ in predicted], [d for _, d in predicted]
        else:
            heads, deprels = predicted, [[None] * len(h) for h in predicted]
        document = document.with_heads(heads, deprels, clear_deps=True)
    if args.output:
        with atomic_path(args.output) as temporary:
            write_conllu(document, temporary)
    else:
        write_conllu(document, sys.stdout)
        sys.stdout.flush()
    return 0


def cmd_demo(args):
    from .datasets import load_sample_treebank

    X_train, y_train = load_sample_treebank("train", labelled=True)
    X_test, y_test = load_sample_treebank("test", labelled=True)
    print(
        f"sample of UD English EWT: {len(X_train)} training and {len(X_test)} held-out sentences"
    )
    params = _parse_params(args.param, args.estimator)
    params.setdefault("verbose", 1)
    params.setdefault("random_state", 0)  # the same figures on every run
    parser = _estimator_class(args.estimator)(**params)
    print(f"training {parser!r}")
    # no per-epoch validation: scoring the held-out part after every pass
    # would take a quarter of the demo; it is scored once, below
    parser.fit(X_train, y_train)
    from .metrics import attachment_score

    predicted = parser.predict(X_test)
    scores = attachment_score(y_test, predicted, X_test, return_all=True)
    # one short held-out sentence, as CoNLL-U with the predicted HEAD and DEPREL
    import io

    from .datasets import write_conllu

    document = load_sample_treebank("test", as_document=True)
    index = next((i for i, (heads, _) in enumerate(y_test) if 6 <= len(heads) <= 10), 0)
    heads, deprels = predicted[index]
    one = document[index:index + 1].with_heads([heads], [list(deprels)], clear_deps=True)
    text = io.StringIO()
    write_conllu(one, text)
    right = sum(int(h == g) for h, g in zip(heads, y_test[index][0]))
    print(f"held-out sentence {index + 1}, as parsed ({right} of {len(heads)} heads right):")
    print(text.getvalue().rstrip("\n"))
    print(f"held-out UAS {100 * scores.uas:.2f}, LAS {100 * scores.las:.2f} "
          "(without punctuation)")
    return 0


class _ParserWithParams(argparse.ArgumentParser):
    """A sub-command parser whose help ends with the ``--param`` keys of each estimator.

    The keys are looked up only when help is printed, so that ordinary runs
    do not import every estimator.
    """

    estimator_names = ()

    def format_help(self):
        text = super().format_help()
        if not self.estimator_names:
            return text
        lines = ["", "--param keys (KEY=VALUE, VALUE a Python literal or a string):"]
        for name in self.estimator_names:
            defaults = _estimator_class(name)().get_params()
            keys = ", ".join(f"{key}={value!r}" for key, value in sorted(defaults.items()))
            lines.append(f"  {name}: {keys}")
        return text + "\n".join(lines) + "\n"


def build_parser():
    from . import __version__

    formatter = argparse.ArgumentDefaultsHelpFormatter
    ap = argparse.ArgumentParser(
        prog="sklearn-structured",
        description="Structured prediction for NLP with scikit-learn estimators: train, apply "
        "and evaluate dependency parsers and taggers on CoNLL-U files.",
        epilog="The first run compiles the numba kernels (about 20 s, cached afterwards).",
        formatter_class=formatter,
    )
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    ap.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_ParserWithParams)

    p = sub.add_parser(
        "evaluate", formatter_class=formatter,
        help="UAS / LAS / complete match of PRED against GOLD",
        description="Score a predicted CoNLL-U file against the gold one (same sentences and words).",
    )
    p.add_argument("gold", help="gold CoNLL-U file ('-' for standard input)")
    p.add_argument("pred", help="predicted CoNLL-U file")
    p.add_argument("--punct", choices=("exclude", "include"), default="exclude",
                   help="score words whose gold UPOS is PUNCT or not")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser(
        "train", formatter_class=formatter,
        help="train a parser or tagger on a CoNLL-U file and save it",
        description="Train a parser (HEAD and, when every word has one, DEPREL) or tagger (its "
        "target column) and save it. "
        f"The default 'safe' format loads without executing code; 'joblib' is a pickle: "
        f"{PICKLE_WARNING}.",
    )
    p.estimator_names = sorted(ESTIMATORS)
    p.add_argument("--estimator", choices=sorted(ESTIMATORS) + ["pipeline"], default="lowrank",
                   help="what to train; 'pipeline': taggers (--targets) then a parser "
                   "(--parser), trained on jackknifed predicted tags, which parses word forms")
    p.add_argument("--train", required=True, help="training CoNLL-U file ('-' for standard input)")
    p.add_argument("--dev", help="development CoNLL-U file, for the per-epoch validation score")
    p.add_argument("--out", required=True, help="model file to write (replaced atomically)")
    p.add_argument("--format", choices=("safe", "joblib"), default="safe",
                   help="model file format")
    p.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="estimator parameter (of the parser for a pipeline), repeatable "
                   "(keys listed below)")
    p.add_argument("--parser", choices=sorted(PARSERS), default="lowrank",
                   help="the parser of a pipeline")
    p.add_argument("--targets", default="upos,xpos",
                   help="the fields a pipeline tags, one tagger each, in this order: any of "
                   "upos, xpos, feats, lemma (lemma after upos uses the predicted UPOS)")
    p.add_argument("--tagger-param", action="append", metavar="KEY=VALUE",
                   help="parameter of every tagger of a pipeline, repeatable")
    p.add_argument("--n-folds", type=int, default=10,
                   help="jackknifing folds of a pipeline's taggers")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser(
        "parse", formatter_class=formatter,
        help="apply a saved pipeline, parser (HEAD, DEPREL) or tagger (its tag column) to a "
        "CoNLL-U file",
        description="Apply a saved model to a CoNLL-U file and write the file with the predicted "
        "columns filled in. A parser writes HEAD and DEPREL (its labels if it was trained on "
        "them, '_' otherwise) and '_' in DEPS; it never copies them from the input. A pipeline "
        "also writes the tag columns of its taggers and needs only the word forms; a parser "
        "alone refuses input without the tags it reads.",
    )
    p.add_argument("--model", required=True, help="model file written by 'train'")
    p.add_argument("input", nargs="?", default="-",
                   help="CoNLL-U file to annotate ('-' for standard input)")
    p.add_argument("-o", "--output", help="write here (atomically) instead of standard output")
    p.add_argument("--allow-pickle", action="store_true",
                   help=f"also load joblib/pickle model files; {PICKLE_WARNING}")
    p.set_defaults(func=cmd_parse)

    p = sub.add_parser(
        "demo", formatter_class=formatter,
        help="train a labelled parser on the embedded sample and show a parse, UAS and LAS",
        description="Train a labelled parser on the embedded sample of UD English EWT, print "
        "one held-out sentence as it parses it (CoNLL-U) and its held-out UAS and LAS.",
    )
    p.estimator_names = sorted(PARSERS)
    p.add_argument("--estimator", choices=sorted(PARSERS), default="lowrank", help="which parser")
    p.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="estimator parameter, repeatable (keys listed below)")
    p.set_defaults(func=cmd_demo)
    return ap


def _error_message(error):
    if isinstance(error, OSError) and error.strerror:
        return f"{error.strerror}: {error.filename}" if error.filename else error.strerror
    return str(error) or type(error).__name__


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        from .utils import announce_compilation

        announce_compilation()
        return args.func(args)
    except BrokenPipeError:
        # the reader stopped early (``| head``): stop quietly, and keep Python
        # from complaining while it flushes stdout at exit
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as error:
        if args.debug:
            raise
        print(f"sklearn-structured: error: {_error_message(error)}", file=sys.stderr)
        return 1
