"""Which tags and settings the pipeline's low-rank parser should have, chosen on dev with predicted tags.

Run from the repository root::

    SKLEARN_STRUCTURED_DATA=../shared/data NUMBA_NUM_THREADS=1 python -m benchmarks \\
        tag_inputs --treebank tr_imst --seed 0 --cache ../state/tag_inputs \\
        --arm xpos --arm upos --arm xpos+Case,Number,Gender,VerbForm [--param order=3]

The default pipeline's taggers (UPOS, XPOS, FEATS, lemmas) are trained on the
train split, jackknifed as ``Pipeline.fit`` does, and tag the dev split; their
output is cached per treebank and seed in ``--cache``, so that each arm costs
one parser fit. Each arm then trains ``LowRankTensorParser`` (defaults, the
seed's ``random_state``) on the jackknifed training tags and scores it on the
predicted dev tags, gold tokens. An arm names the fine tag: ``xpos`` (the
parser's default, XPOS falling back on UPOS), ``upos`` (XPOS dropped, so UPOS
is both tags), and either followed by ``+`` and the FEATS names that
``tag_feats`` joins to it. ``--param KEY=VALUE`` (repeatable) sets further
parser parameters for every arm of the run, such as ``order=3``; the table
keeps them in a column of their own, so that settings run apart share it.
"""

import argparse
import pickle
from pathlib import Path

from sklearn_structured import LowRankTensorParser, make_parsing_pipeline
from sklearn_structured.metrics import attachment_score

from benchmarks.base import load_treebank, parameters, timed, write_rows


def tagged_splits(treebank, seed, cache):
    """(jackknifed training sentences, tagged dev sentences, y, gold dev sentences, y_dev);
    the taggers' output is cached."""
    X, y = load_treebank(treebank, "train", labelled=True)
    X_dev, y_dev = load_treebank(treebank, "dev", labelled=True)
    path = cache / f"{treebank}-seed{seed}.pkl"
    if path.exists():
        X_train, X_tagged = pickle.loads(path.read_bytes())
    else:
        # tagger parameters exactly as the pipeline's, which the lowrank parser does not change
        taggers = make_parsing_pipeline("lowrank", random_state=seed).steps[:-1]
        X_train, X_tagged = X, X_dev
        for _, step in taggers:
            X_train = step.fit_transform(X_train, y)
            X_tagged = step.transform(X_tagged)
        cache.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps((X_train, X_tagged)))
    return X_train, X_tagged, y, X_dev, y_dev


def arm_inputs(X, arm):
    """The sentences and the parser's ``tag_feats`` for ``arm``."""
    fine, _, names = arm.partition("+")
    if fine not in ("xpos", "upos"):
        raise SystemExit(f"an arm is xpos or upos, optionally +FEATS names; got {arm!r}")
    if fine == "upos":
        X = [[{k: v for k, v in token.items() if k != "xpos"} for token in s] for s in X]
    return X, tuple(n for n in names.split(",") if n) or None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--treebank", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, required=True,
                        help="folder for the taggers' output (outside the repository)")
    parser.add_argument("--arm", action="append", required=True)
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="a further parser parameter for every arm")
    args = parser.parse_args(argv)
    params = parameters(args.param)
    setting = ", ".join(args.param) or "defaults"
    X_train, X_tagged, y, X_dev, y_dev = tagged_splits(args.treebank, args.seed, args.cache)
    rows = []
    for arm in args.arm:
        X_fit, tag_feats = arm_inputs(X_train, arm)
        X_pred, _ = arm_inputs(X_tagged, arm)
        model, _, fit_cpu = timed(lambda: LowRankTensorParser(
            random_state=args.seed, tag_feats=tag_feats, **params).fit(X_fit, y))
        predicted = model.predict(X_pred)
        scores = attachment_score(y_dev, predicted, X_dev, return_all=True)
        every = attachment_score(y_dev, predicted, punct="include", return_all=True)
        rows.append([args.treebank, arm, setting, args.seed, f"{100 * scores.uas:.2f}",
                     f"{100 * scores.las:.2f}", f"{100 * every.uas:.2f}", f"{100 * every.las:.2f}",
                     f"{fit_cpu:.0f}"])
        print(*rows[-1], flush=True)
    write_rows(
        "lowrank_tag_inputs",
        "LowRankTensorParser: which tags it reads and which settings, on dev with predicted tags",
        ["treebank", "fine tag", "parser", "seed", "UAS", "LAS", "UAS +p", "LAS +p",
         "parser fit CPU s"],
        rows, key_columns=4,
        note="Train split with the default pipeline's jackknifed tags, dev split with its "
             "predicted tags, gold tokens; UAS/LAS without punctuation (gold UPOS PUNCT), "
             "+p with it. `xpos`: XPOS, falling back on UPOS; `upos`: UPOS alone; `+names`: "
             "those FEATS joined to the fine tag (`tag_feats`); parser: the further "
             "parameters of the run (`--param`), else the defaults.")


if __name__ == "__main__":
    main()
