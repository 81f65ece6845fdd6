"""Labelled parsing on UD English EWT (gold tags): UAS and LAS of both parsers.

``--parser labeller`` trains the shared arc labeller alone on the gold
training trees and reports its label accuracy on the gold trees of each
split (what the labeller can do when the tree is right). ``--parser lowrank``
and ``--parser easyfirst`` fit the parser on ``(heads, deprels)`` pairs of
the training split with its default settings (and ``--param``) and report
UAS and LAS, punctuation (gold UPOS PUNCT) excluded, on each split, with the
training time, one row per ``--seeds`` value and split, then the mean and
sd over the seeds. Figures go to rows of the ``labels_<parser>`` section of
RESULTS.md (``labels_labeller_<treebank>`` for the labeller). ``--save-trees`` keeps the predicted heads (npz)
of the first seed so that other labellers can be scored on the same trees.

    NUMBA_NUM_THREADS=1 SKLEARN_STRUCTURED_DATA=/path/to/data \\
        python -m benchmarks labels --parser lowrank --splits dev test --seeds 0 1 2
"""

import argparse

import numpy as np

from benchmarks.base import (data_home, load_treebank, markdown_table, mean_sd, parameters, timed,
                             write_rows, write_section)

# one row per treebank, parameters, seed and split
HEADER = ["treebank", "parameters", "seed", "split", "UAS", "LAS", "sent/s", "training CPU s (wall s)"]
NOTE = ("Fitted on (heads, deprels) pairs of the train split (gold tags), `random_state` the seed; "
        "UAS and LAS without punctuation (gold UPOS PUNCT), speed in sentences per second of `predict` "
        "(labels included, warm kernels); mean ± sd over the seeds of one run (population sd).")


def label_accuracy(X, gold, predicted):
    from sklearn_structured.metrics import is_punctuation

    correct = total = 0
    for sentence, g, p in zip(X, gold, predicted):
        for token, a, b in zip(sentence, g, p):
            if not is_punctuation(token):
                total += 1
                correct += a == b
    return correct / total


def arguments(argv):
    """The command line of this measure."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parser", choices=("labeller", "lowrank", "easyfirst"), required=True)
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--splits", nargs="+", default=["dev"])
    ap.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0], help="random_state values")
    ap.add_argument("--save-trees", help="npz file for the first seed's predicted heads of each split")
    return ap.parse_args(argv)


def main(argv=None):
    args = arguments(argv)
    data_home()

    from sklearn_structured.metrics import attachment_score

    X, y = load_treebank(args.treebank, "train", labelled=True)
    params = parameters(args.param)
    rows = []
    if args.parser == "labeller":
        from sklearn_structured.labelling import label_trees, new_labeller, train_labeller

        n_epochs = params.get("n_epochs", 10)
        heads, deprels = [h for h, _ in y], [d for _, d in y]

        def train():
            state = new_labeller(X, heads, deprels)
            train_labeller(state, X, heads, deprels, n_epochs, random_state=args.seeds[0])
            return state

        state, _, seconds = timed(train)
        for split in args.splits:
            X_s, y_s = load_treebank(args.treebank, split, labelled=True)
            predicted = label_trees(state, X_s, [h for h, _ in y_s])
            accuracy = label_accuracy(X_s, [d for _, d in y_s], predicted)
            rows.append([split, f"{100 * accuracy:.2f}"])
        body = (
            f"The arc labeller alone ({n_epochs} passes) trained on the gold trees of "
            f"{args.treebank} train in {seconds:.1f} CPU s; label accuracy on the gold trees "
            "of each split, punctuation excluded (LAS if every head were right).\n\n"
            + markdown_table(["split", "label accuracy"], rows)
        )
        write_section(f"labels_labeller_{args.treebank}",
                      f"Arc labeller on gold trees: {args.treebank}", body)
        print(body)
        return

    from sklearn_structured import EasyFirstBeamParser, LowRankTensorParser

    cls = LowRankTensorParser if args.parser == "lowrank" else EasyFirstBeamParser
    evaluation = {split: load_treebank(args.treebank, split, labelled=True) for split in args.splits}
    scores = {split: [] for split in args.splits}
    setting = [args.treebank, ", ".join(args.param) or "defaults"]
    for seed in args.seeds:
        parser = cls(random_state=seed, **params)
        _, wall, seconds = timed(lambda: parser.fit(X, y))
        trees = {}
        for split, (X_s, y_s) in evaluation.items():
            parser.predict(X_s[:5])  # the speed is that of warm kernels
            predicted, predict_wall, _ = timed(lambda: parser.predict(X_s))
            result = attachment_score(y_s, predicted, X_s, return_all=True)
            scores[split].append((result.uas, result.las))
            trees[split] = np.concatenate([h for h, _ in predicted])
            rows.append([*setting, seed, split, f"{100 * result.uas:.2f}", f"{100 * result.las:.2f}",
                         f"{len(X_s) / predict_wall:.0f}", f"{seconds:.0f} ({wall:.0f})"])
            print(rows[-1], flush=True)
        if args.save_trees and seed == args.seeds[0]:
            np.savez(args.save_trees, **trees)
    if len(args.seeds) > 1:
        rows += [[*setting, "mean ± sd", split, mean_sd([u for u, _ in pairs], 100),
                  mean_sd([las for _, las in pairs], 100), "", ""] for split, pairs in scores.items()]
    print(parser)
    write_rows(f"labels_{args.parser}", f"Labelled parsing: {cls.__name__}", HEADER, rows, 4, note=NOTE)
    print(markdown_table(HEADER, rows))
