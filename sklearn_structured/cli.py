"""The ``sklearn-structured`` command: evaluate, train, parse, demo."""

import argparse
import importlib
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


def _estimator_class(name):
    module, cls = {**PARSERS, **TAGGERS}[name]
    return getattr(importlib.import_module(module), cls)


def _is_tagger(estimator):
    return hasattr(estimator, "target")


def _gold_tags(X, field):
    return [[token[field] for token in sentence] for sentence in X]


def _parse_params(pairs):
    """``["rank=20", "gamma=0.5"]`` -> ``{"rank": 20, "gamma": 0.5}`` (Python literals or strings)."""
    import ast

    params = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--param expects KEY=VALUE, got {pair!r}")
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return params


def _fit_with_validation(estimator, X, y, X_val=None, y_val=None):
    """Fit, passing validation data when the estimator's fit accepts it."""
    import inspect

    accepts = inspect.signature(estimator.fit).parameters
    if X_val is not None and "X_val" in accepts:
        return estimator.fit(X, y, X_val=X_val, y_val=y_val)
    return estimator.fit(X, y)


def cmd_evaluate(args):
    from .datasets import load_conllu
    from .metrics import attachment_score

    X, y, labels = load_conllu(args.gold, return_labels=True)
    # a prediction may have several roots; it is scored, not rejected
    X_pred, y_pred, labels_pred = load_conllu(args.pred, return_labels=True, single_root=False)
    if [len(s) for s in X] != [len(s) for s in X_pred]:
        raise SystemExit("gold and predicted files differ in their sentences or words")
    scores = attachment_score(
        y, y_pred, X, punct=args.punct, labels_true=labels, labels_pred=labels_pred, return_all=True
    )
    print(f"UAS {100 * scores.uas:.2f}")
    print(f"LAS {100 * scores.las:.2f}")
    print(f"complete match {100 * scores.complete_match:.2f}")
    print(f"words scored {scores.n_words} (punctuation {args.punct}d)")
    return 0


def cmd_train(args):
    import joblib

    from .datasets import load_conllu

    X, y = load_conllu(args.train)
    X_val = y_val = None
    if args.dev:
        X_val, y_val = load_conllu(args.dev)
    params = _parse_params(args.param)
    params.setdefault("verbose", 1)
    estimator = _estimator_class(args.estimator)(**params)
    if _is_tagger(estimator):
        y = _gold_tags(X, estimator.target)
        y_val = None if X_val is None else _gold_tags(X_val, estimator.target)
    start = time.perf_counter()
    _fit_with_validation(estimator, X, y, X_val, y_val)
    print(f"trained in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    joblib.dump(estimator, args.out)
    print(f"model written to {args.out}", file=sys.stderr)
    return 0


def cmd_parse(args):
    import joblib

    from .datasets import read_conllu, write_conllu

    model = joblib.load(args.model)
    document = read_conllu(args.input)
    predicted = model.predict(document.to_sentences())
    if _is_tagger(model):
        write_conllu(document.with_tags(predicted, model.target), sys.stdout)
    else:
        write_conllu(document.with_heads(predicted), sys.stdout)
    return 0


def cmd_demo(args):
    from .datasets import load_sample_treebank

    X_train, y_train = load_sample_treebank("train")
    X_test, y_test = load_sample_treebank("test")
    print(
        f"sample of UD English EWT: {len(X_train)} training and {len(X_test)} held-out sentences"
    )
    params = _parse_params(args.param)
    params.setdefault("verbose", 1)
    params.setdefault("random_state", 0)  # the same figures on every run
    parser = _estimator_class(args.estimator)(**params)
    print(f"training {parser!r}")
    _fit_with_validation(parser, X_train, y_train, X_test, y_test)
    print(f"held-out UAS (without punctuation): {100 * parser.score(X_test, y_test):.2f}")
    return 0


def build_parser():
    ap = argparse.ArgumentParser(
        prog="sklearn-structured",
        description="Structured prediction for NLP with scikit-learn estimators.",
    )
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("evaluate", help="UAS / LAS / complete match of PRED against GOLD")
    p.add_argument("gold")
    p.add_argument("pred")
    p.add_argument("--punct", choices=("exclude", "include"), default="exclude")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("train", help="train a parser or tagger on a CoNLL-U file and save it")
    p.add_argument("--estimator", choices=sorted({**PARSERS, **TAGGERS}), default="lowrank")
    p.add_argument("--train", required=True)
    p.add_argument("--dev")
    p.add_argument("--out", required=True)
    p.add_argument("--param", action="append", metavar="KEY=VALUE", help="estimator parameter")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser(
        "parse",
        help="apply a saved parser (HEAD column) or tagger (its tag column) to a CoNLL-U file, "
        "writing the file to stdout",
    )
    p.add_argument("--model", required=True)
    p.add_argument("input")
    p.set_defaults(func=cmd_parse)

    p = sub.add_parser("demo", help="train a parser on the embedded sample and report UAS")
    p.add_argument("--estimator", choices=sorted(PARSERS), default="lowrank")
    p.add_argument("--param", action="append", metavar="KEY=VALUE", help="estimator parameter")
    p.set_defaults(func=cmd_demo)
    return ap


def main(argv=None):
    args = build_parser().parse_args(argv)
    return args.func(args)
