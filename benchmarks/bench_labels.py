"""Labelled parsing on UD English EWT (gold tags): UAS and LAS of both parsers.

``--parser labeller`` trains the shared arc labeller alone on the gold
training trees and reports its label accuracy on the gold trees of each
split (what the labeller can do when the tree is right). ``--parser lowrank``
and ``--parser easyfirst`` fit the parser on ``(heads, deprels)`` pairs of
the training split with its default settings (and ``--param``) and report
UAS and LAS, punctuation (gold UPOS PUNCT) excluded, on each split, with the
training time. Figures go to the ``labels_<parser>`` section of
benchmarks/RESULTS.md. ``--save-trees`` keeps the predicted heads (npz) so
that other labellers can be scored on the same trees.

    NUMBA_NUM_THREADS=1 SKLEARN_STRUCTURED_DATA=/path/to/data \\
        python benchmarks/bench_labels.py --parser lowrank --splits dev test
"""

import argparse
import ast
import time

import numpy as np

from _common import data_home
from _results import markdown_table, write_section


def label_accuracy(X, gold, predicted):
    from sklearn_structured.metrics import is_punctuation

    correct = total = 0
    for sentence, g, p in zip(X, gold, predicted):
        for token, a, b in zip(sentence, g, p):
            if not is_punctuation(token):
                total += 1
                correct += a == b
    return correct / total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parser", choices=("labeller", "lowrank", "easyfirst"), required=True)
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--splits", nargs="+", default=["dev"])
    ap.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save-trees", help="npz file for the predicted heads of each split")
    args = ap.parse_args()
    data_home()

    from sklearn_structured.datasets import load_ud_treebank
    from sklearn_structured.metrics import attachment_score

    X, y = load_ud_treebank(args.treebank, "train", labelled=True)
    params = {k: ast.literal_eval(v) for k, v in (p.split("=", 1) for p in args.param)}
    rows = []
    if args.parser == "labeller":
        from sklearn_structured.labelling import label_trees, new_labeller, train_labeller

        n_epochs = params.get("n_epochs", 10)
        heads, deprels = [h for h, _ in y], [d for _, d in y]
        start = time.process_time()
        state = new_labeller(X, heads, deprels)
        train_labeller(state, X, heads, deprels, n_epochs)
        seconds = time.process_time() - start
        for split in args.splits:
            X_s, y_s = load_ud_treebank(args.treebank, split, labelled=True)
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
    parser = cls(random_state=args.seed, **params)
    start, wall = time.process_time(), time.perf_counter()
    parser.fit(X, y)
    seconds, wall = time.process_time() - start, time.perf_counter() - wall
    trees = {}
    for split in args.splits:
        X_s, y_s = load_ud_treebank(args.treebank, split, labelled=True)
        tic = time.perf_counter()
        predicted = parser.predict(X_s)
        speed = len(X_s) / (time.perf_counter() - tic)
        scores = attachment_score(y_s, predicted, X_s, return_all=True)
        trees[split] = np.concatenate([h for h, _ in predicted])
        rows.append([split, f"{100 * scores.uas:.2f}", f"{100 * scores.las:.2f}", f"{speed:.0f}"])
    if args.save_trees:
        np.savez(args.save_trees, **trees)
    shown = ", ".join(f"{k}={v!r}" for k, v in sorted(parser.get_params().items())
                      if k not in ("verbose", "n_jobs", "word_vectors"))
    body = (
        f"{cls.__name__}({shown}) fitted on (heads, deprels) pairs of {args.treebank} train "
        f"(gold tags) in {seconds:.0f} CPU s ({wall:.0f} s wall); UAS and LAS without "
        "punctuation (gold UPOS PUNCT), speed in sentences per second of `predict` (labels "
        "included, warm kernels).\n\n"
        + markdown_table(["split", "UAS", "LAS", "sent/s"], rows)
    )
    # seed 0 keeps the plain section name; other seeds get their own section
    suffix = "_".join(f"{k}{v}" for k, v in sorted(params.items())
                      + ([("seed", args.seed)] if args.seed else []))
    write_section(f"labels_{args.parser}_{args.treebank}" + (f"_{suffix}" if suffix else ""),
                  f"Labelled parsing: {cls.__name__} on {args.treebank}"
                  + (f" ({', '.join(args.param)})" if args.param else "")
                  + (f", seed {args.seed}" if args.seed else ""), body)
    print(body)


if __name__ == "__main__":
    main()
