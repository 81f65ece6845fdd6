"""``sklearn-structured train``: fit a parser, a tagger or a parsing pipeline on a CoNLL-U
file and save it."""

import os
import sys
import time
import warnings

from .. import registry
from ..fields import DEFAULT_TARGETS
from ._common import (PICKLE_WARNING, CommandError, add_seed_and_size_arguments,
                      check_output_path, check_params, first_sentences, parse_params,
                      read_document)

HELP = "train a parser, a tagger or a pipeline (raw text to CoNLL-U) on a CoNLL-U file and save it"
DESCRIPTION = ("Train a parser (HEAD and, when every word has one, DEPREL), a tagger (its target "
               "column) or a pipeline (a tokeniser, taggers and a parser) and save it. The default 'safe' format loads without executing code; "
               f"'joblib' is a pickle: {PICKLE_WARNING}.")


def add_arguments(p):
    estimators = registry.names(registry.PARSER) + registry.names(registry.TAGGER)
    p.estimator_names = estimators
    p.add_argument("--estimator", choices=estimators + [registry.PIPELINE], default="lowrank",
                   help="what to train; 'pipeline': a tokeniser, taggers (--targets) and a "
                   "parser (--parser) trained on jackknifed predicted tags, which annotates raw "
                   "text or word forms")
    p.add_argument("--train", required=True, help="training CoNLL-U file ('-' for standard input)")
    p.add_argument("--dev", help="development CoNLL-U file, for the per-epoch validation score")
    p.add_argument("--out", required=True, help="model file to write (replaced atomically)")
    p.add_argument("--format", choices=("safe", "joblib"), default="safe", help="model file format")
    p.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="estimator parameter (of the parser for a pipeline), repeatable "
                   "(keys listed below)")
    p.add_argument("--parser", choices=registry.names(registry.PARSER), default="lowrank",
                   help="the parser of a pipeline")
    p.add_argument("--targets", default=",".join(DEFAULT_TARGETS),
                   help="the fields a pipeline tags, one tagger each, in this order: any of "
                   "upos, xpos, feats, lemma (lemma after upos uses the predicted UPOS); a "
                   "field the training file leaves empty is skipped with a notice")
    p.add_argument("--tagger-param", action="append", metavar="KEY=VALUE",
                   help="parameter of every tagger of a pipeline, repeatable")
    p.add_argument("--tokenizer-param", action="append", metavar="KEY=VALUE",
                   help="parameter of a pipeline's tokeniser, repeatable")
    p.add_argument("--n-folds", type=int, default=10, help="jackknifing folds of a pipeline's taggers")
    p.add_argument("--word-features", metavar="PATH",
                   help="word vectors learned from unannotated text (word2vec, fastText or GloVe "
                   "text format, e.g. written by PPMIWordVectors.save_word2vec): every tagger "
                   "reads their clusters as features, the lowrank parser the vectors")
    add_seed_and_size_arguments(p)
    p.set_defaults(interrupted="; model not written")


def _word_features(args):
    """The taggers' and the parser's parameters of ``--word-features``: its absolute path,
    checked to be readable (the vectors are read when the first step trains), as every
    tagger's ``word_clusters`` and the low-rank parser's ``word_vectors``."""
    if args.word_features is None:
        return {}, {}
    path = os.path.abspath(args.word_features)
    if not os.path.isfile(path) or not os.access(path, os.R_OK):
        raise CommandError(f"--word-features {args.word_features}: no readable file there")
    parser = args.parser if args.estimator == registry.PIPELINE else args.estimator
    parser_params = {"word_vectors": path} if parser == "lowrank" else {}
    if args.estimator in registry.names(registry.TAGGER):
        return {"word_clusters": path}, {}
    if args.estimator == registry.PIPELINE:
        return {"word_clusters": path}, parser_params
    if not parser_params:
        raise CommandError("--word-features applies to taggers, the lowrank parser and "
                           "pipelines")
    return {}, parser_params


def _build(args):
    """The estimator to train, its parameters checked, and the function that fits it."""
    tagger_features, parser_features = _word_features(args)
    if args.estimator != registry.PIPELINE:
        if args.tagger_param or args.tokenizer_param:
            raise CommandError("--tagger-param and --tokenizer-param apply only to "
                               "--estimator pipeline")
        estimator = registry.estimator_class(args.estimator)(
            **{"verbose": 1, "random_state": args.seed, **tagger_features, **parser_features,
               **parse_params(args.param, args.estimator)})
        check_params(estimator)
        return estimator, estimator.fit
    from ..pipeline import TextPipeline, make_parsing_pipeline
    from ..tokenize import Tokenizer

    tagger_params = {"verbose": 1, **tagger_features,
                     **parse_params(args.tagger_param, "easyfirst-tagger")}
    if "target" in tagger_params:
        raise CommandError("--tagger-param target=... is not allowed; use --targets")
    try:
        pipeline = make_parsing_pipeline(
            args.parser, tuple(t.strip() for t in args.targets.split(",") if t.strip()),
            tagger_params=tagger_params, n_folds=args.n_folds, random_state=args.seed,
            parser_params={"verbose": 1, **parser_features,
                           **parse_params(args.param, args.parser)})
    except ValueError as error:
        raise CommandError(str(error)) from None
    tokenizer = Tokenizer(**{"verbose": 1, "random_state": args.seed,
                             **parse_params(args.tokenizer_param, "Tokenizer")})
    check_params(tokenizer, *(step for _, step in pipeline.steps
                              if step.role in (registry.TAGGER, registry.PARSER)))
    model = TextPipeline(tokenizer, pipeline)
    return model, model.fit


def _treebank(path, max_sentences=None):
    """``(X, y)`` of a CoNLL-U file (its first ``max_sentences``); ``y`` holds ``(heads,
    deprels)`` pairs when every word has a DEPREL, heads alone (with a note on stderr)
    otherwise."""
    from ..datasets import load_conllu

    document = first_sentences(read_document(path), max_sentences)
    labelled = document.has_deprels()
    if not labelled:
        print(f"{path}: some words have no DEPREL ('_'); using the heads only", file=sys.stderr)
    return load_conllu(document, labelled=labelled)


def _quiet(estimator):
    """Set every ``verbose`` of the model (its steps' and fitted parts' too) to off: a
    saved model should not print progress wherever it is used next."""
    for fitted in ("tokenizer_", "annotator_"):  # a TextPipeline's
        if hasattr(estimator, fitted):
            _quiet(getattr(estimator, fitted))
    params = estimator.get_params()
    estimator.set_params(**{key: (False if isinstance(value, bool) else 0)
                            for key, value in params.items()
                            if key == "verbose" or key.endswith("__verbose")})


def _without_timings(estimator):
    """Clear the seconds of every training record (``history_``) of the model, its steps'
    and its fitted parts' too: a model file depends on the data, the parameters and the
    seed, not on the machine's speed, so that two runs write the same bytes."""
    from sklearn.base import BaseEstimator
    from sklearn.pipeline import Pipeline

    for record in getattr(estimator, "history_", ()):
        record.update(seconds=None, elapsed=None)
    parts = ([step for _, step in estimator.steps] if isinstance(estimator, Pipeline)
             else [value for value in vars(estimator).values() if isinstance(value, BaseEstimator)])
    for part in parts:
        _without_timings(part)


def run(args):
    from ..utils import atomic_path, save_model

    if args.max_sentences is not None and args.max_sentences < 1:
        raise CommandError(f"--max-sentences must be at least 1, got {args.max_sentences}")
    if not 0 <= args.seed < 2**32:  # what a random_state may be
        raise CommandError(f"--seed must be from 0 to 2**32 - 1, got {args.seed}")
    check_output_path(args.out)
    estimator, fit = _build(args)
    print(f"seed {args.seed} (--seed changes it)", file=sys.stderr)
    start = time.perf_counter()
    with warnings.catch_warnings():
        # a step that is skipped (a column the training file leaves empty) says so at once
        warnings.simplefilter("always", UserWarning)
        warnings.showwarning = lambda message, *_, **__: print(f"notice: {message}",
                                                               file=sys.stderr)
        if estimator.role == registry.PIPELINE:  # learns from the documents
            fit([first_sentences(read_document(args.train), args.max_sentences)],
                X_val=[read_document(args.dev)] if args.dev else None)
        else:
            X, y = _treebank(args.train, args.max_sentences)
            X_val, y_val = _treebank(args.dev) if args.dev else (None, None)
            if estimator.role == registry.TAGGER:  # it learns a column of X
                y, y_val = (None if X_ is None else [[token[estimator.target] for token in s]
                                                      for s in X_] for X_ in (X, X_val))
            fit(X, y, X_val=X_val, y_val=y_val)
    print(f"trained in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    _quiet(estimator)
    _without_timings(estimator)
    if args.format == "joblib":
        import joblib

        with atomic_path(args.out) as temporary:
            joblib.dump(estimator, temporary)
    else:
        save_model(estimator, args.out)
    print(f"model written to {args.out} ({args.format} format)", file=sys.stderr)
    return 0
