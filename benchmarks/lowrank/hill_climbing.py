"""Speed and search quality of the randomized hill-climbing decoder on EWT dev sentences.

First-order arc scores come from a LowRankTensorParser trained briefly
(first 2,000 EWT training sentences, 2 epochs); the high-order weights are
random (normal, standard deviation ``--sigma``, scaled by gamma as in the
parser), so the figures measure the decoder (its non-projective search), not
a model; the third-order model's settings were chosen on its own dev scores
(user guide, "Third order"). Search quality is the share of sentences whose tree
scores at least as high as a long search's (patience ``--reference``, same
margin). Times are CPU seconds of one thread (process time), the MST
decoder timed on the same arc scores as a reference. The figures go to the
``hill_climbing`` section of RESULTS.md.

    SKLEARN_STRUCTURED_DATA=... python -m benchmarks hill_climbing --sigma 0.05
"""

import argparse

import numpy as np

from sklearn_structured import LowRankTensorParser
from sklearn_structured.kernels import chu_liu_edmonds_argmax
from sklearn_structured.kernels.hill_climbing import ClimbSettings, hill_climbing_decode

from benchmarks.base import data_home, load_treebank, markdown_table, timed, write_section


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sigma", type=float, default=0.05)
    ap.add_argument("--sentences", type=int, default=500)
    ap.add_argument("--patience", type=int, nargs="+", default=[5, 10, 20])
    ap.add_argument("--margin", type=float, nargs="+", default=[1.0, 2.0])
    ap.add_argument("--reference", type=int, default=100)
    args = ap.parse_args(argv)
    data_home()

    X, y = load_treebank("en_ewt", "train")
    X_dev, y_dev = load_treebank("en_ewt", "dev")
    X_dev, y_dev = X_dev[:args.sentences], y_dev[:args.sentences]
    parser = LowRankTensorParser(n_epochs=2, random_state=0).fit(X[:2000], y[:2000])
    arcs = [parser.arc_scores(sentence) for sentence in X_dev]
    theta = np.random.default_rng(0).normal(scale=args.sigma, size=parser.n_features)
    scorers = [parser.third_order_scorer(sentence, theta) for sentence in X_dev]
    gold = np.concatenate(y_dev)
    tokens_total = len(gold)

    chu_liu_edmonds_argmax(arcs[0], True)
    mst, _, mst_seconds = timed(lambda: [chu_liu_edmonds_argmax(a, True) for a in arcs])
    mst_uas = np.mean(np.concatenate(mst) == gold)
    hill_climbing_decode(arcs[0], scorers[0], ClimbSettings(patience=2, margin=1.0))  # compile
    rows = []
    for margin in args.margin:
        long_search = ClimbSettings(patience=args.reference, margin=margin, seed=1)
        reference = [hill_climbing_decode(a, sc, long_search)[1] for a, sc in zip(arcs, scorers)]
        for patience in args.patience:
            settings = ClimbSettings(patience=patience, margin=margin, seed=0)
            results, _, seconds = timed(
                lambda: [hill_climbing_decode(a, sc, settings) for a, sc in zip(arcs, scorers)])
            uas = np.mean(np.concatenate([r[0] for r in results]) == gold)
            reached = np.mean([r[1] >= best - 1e-9 for r, best in zip(results, reference)])
            rows.append([patience, margin, f"{len(arcs) / seconds:,.0f}", f"{100 * uas:.2f}", f"{reached:.3f}"])
            print(rows[-1], flush=True)
    body = (
        f"{len(X_dev)} EWT dev sentences, {tokens_total} words, random high-order weights "
        f"(sigma={args.sigma}, gamma={parser.gamma}); single root. The MST decoder on the same arc "
        f"scores: {len(arcs) / mst_seconds:,.0f} sentences/s (CPU), UAS {100 * mst_uas:.2f}.\n\n"
        + markdown_table(["patience", "margin", "sentences/s (CPU)", "UAS",
                          f"share reaching patience {args.reference}'s score"], rows)
    )
    write_section("hill_climbing", "Hill-climbing decoder: speed and search quality", body)
    print(body)
