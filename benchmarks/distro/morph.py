"""DISTRO on morphological tagging (UPOS|FEATS labels, ~1,000 of them).

Two measures:

1. The cost of the tag dictionary (``DistroSequenceSVM(tag_dictionary=k)``)
   against exact Viterbi over every label, on a slice of the training data
   (exact decoding costs M^2 per token): dev accuracy and speed of both.
2. Learned label vectors (d < M and d = M) against one-hot ones, on the
   same grid chosen on dev, and EasyFirstBeamTagger on the same labels:
   test accuracy on all words and on the words whose gold label has fewer
   than 10 training occurrences, training seconds and prediction tokens/s.

Both go to the ``distro_morph`` section of RESULTS.md, one row per treebank,
experiment, labels and decoding: a run replaces its treebank's rows of the
systems it ran and keeps the others. Run from the repository root with ``SKLEARN_STRUCTURED_DATA`` set:

    NUMBA_NUM_THREADS=1 nice -n 19 python -m benchmarks distro_morph
"""

import argparse
import itertools
import os
import time
from collections import Counter

# one core per fit: a threaded BLAS fighting for shared cores made each SVD of the
# proximal step about a hundred times slower
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402


from sklearn_structured.distro import DistroSequenceSVM  # noqa: E402
from sklearn_structured.easy_first import EasyFirstBeamTagger  # noqa: E402

from benchmarks.base import SETTINGS, data_home, load_treebank, timed, write_rows  # noqa: E402


def log(*args):
    print(time.strftime("%H:%M:%S"), *args, flush=True)


def morph_tagged(name, split):
    X, _ = load_treebank(name, split)
    forms = [[t["form"] for t in s] for s in X]
    return forms, [[t["upos"] + "|" + t["feats"] for t in s] for s in X]


def accuracies(y_true, y_pred, rare):
    """Token accuracy on all words and on the words whose gold label is in ``rare``."""
    gold = [t for s in y_true for t in s]
    pred = [t for s in y_pred for t in s]
    hits = np.array([g == p for g, p in zip(gold, pred)])
    is_rare = np.array([g in rare for g in gold])
    return hits.mean(), hits[is_rare].mean(), int(is_rare.sum())


def run(model, X, y, X_eval, y_eval, rare):
    fit_seconds = timed(lambda: model.fit(X, y)).cpu
    prediction, _, predict_seconds = timed(lambda: model.predict(X_eval))
    all_words, rare_words, _ = accuracies(y_eval, prediction, rare)
    n_tokens = sum(map(len, X_eval))
    return all_words, rare_words, fit_seconds, n_tokens / predict_seconds, model


def coverage(model, X, y):
    """Fraction of tokens whose gold label is among their candidates, and mean candidates."""
    candidates = [tags for sentence in model.candidate_tags(X) for tags in sentence]
    gold = [tag for s in y for tag in s]
    hits = sum(tag in allowed for tag, allowed in zip(gold, candidates))
    return hits / len(gold), sum(map(len, candidates)) / len(gold)


def pruning_cost(args, X, y, X_dev, y_dev, rare, load_start):
    """Exact Viterbi against the tag dictionary, one-hot and learned, on slices: table rows."""
    X, y = X[:args.exact_sentences], y[:args.exact_sentences]
    X_dev, y_dev = X_dev[:args.exact_dev], y_dev[:args.exact_dev]
    n_labels = len({t for s in y for t in s})
    data = (f"first {len(X)} training sentences ({sum(map(len, X))} tokens, {n_labels} labels), "
            f"first {len(X_dev)} dev sentences")
    settings = f"alpha={args.alphas[0]:g}, n_rounds={args.n_rounds}, n_epochs={args.n_epochs}, seed 0"
    rows = []
    for name, params in (("one-hot", dict(label_vectors="onehot")),
                         (f"learned d={args.d}", dict(n_components=args.d))):
        for decoding, extra in (("exact Viterbi", {}),
                                (f"tag dictionary k={args.k}", dict(tag_dictionary=args.k))):
            model = DistroSequenceSVM(alpha=args.alphas[0], n_rounds=args.n_rounds,
                                      n_epochs=args.n_epochs, random_state=0, **params, **extra)
            acc, rare_acc, fit_s, tok_s, model = run(model, X, y, X_dev, y_dev, rare)
            log(f"pruning {name} {decoding}: dev {acc:.4f}, fit {fit_s:.1f} s, {tok_s:.0f} tok/s")
            run_cell = settings
            if extra:
                cov, mean = coverage(model, X_dev, y_dev)
                run_cell += (f"; the gold label of {100 * cov:.2f}% of these dev tokens is among "
                             f"its candidates ({mean:.1f} per token)")
            rows.append([args.treebank, PRUNING, name, decoding, data, "-", f"{100 * acc:.2f}",
                         f"{100 * rare_acc:.2f}", "-", "-", f"{fit_s:.1f}", f"{tok_s:,.0f}",
                         f"{run_cell}; load {load_start:.1f} -> {os.getloadavg()[0]:.1f}"])
    return rows


def arguments(argv):
    """The command line of this measure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--treebank", default="UD_Basque_r1.4")
    parser.add_argument("--k", type=int, default=20, help="tag dictionary minimum word count")
    parser.add_argument("--d", type=int, default=100, help="label dimension below M")
    parser.add_argument("--alphas", type=float, nargs="+", default=[1e-5, 1e-4])
    parser.add_argument("--learned-alphas", type=float, nargs="+", default=None,
                        help="alpha grid of the learned rows (default: --alphas)")
    parser.add_argument("--nuclear-penalties", type=float, nargs="+", default=[0.0, 1e-3])
    parser.add_argument("--label-learning-rates", type=float, nargs="+", default=[0.3])
    parser.add_argument("--n-rounds", type=int, default=2)
    parser.add_argument("--n-epochs", type=int, default=3)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--exact-sentences", type=int, default=500)
    parser.add_argument("--exact-dev", type=int, default=300)
    parser.add_argument("--train-limit", type=int, default=None,
                        help="first sentences of train only (exploration)")
    parser.add_argument("--skip-pruning", action="store_true")
    parser.add_argument("--skip-full-rank", action="store_true")
    parser.add_argument("--full-rank-init", choices=["random", "onehot"], default="random",
                        help="start of the d = M label vectors (onehot: from the baseline's)")
    parser.add_argument("--skip-learned", action="store_true",
                        help="no d < M row (when dev already ruled it out)")
    parser.add_argument("--skip-easy-first", action="store_true")
    parser.add_argument("--skip-distro", action="store_true",
                        help="the easy-first row alone")
    parser.add_argument("--learned-seeds", type=int, nargs="+", default=None,
                        help="seeds of the learned rows (default: --seeds)")
    return parser.parse_args(argv)


# the two experiments, as the table's second column names them
PRUNING = "tag dictionary against exact Viterbi"
LABELS = "learned label vectors against one-hot"
HEADER = ["treebank", "experiment", "labels", "decoding", "training data", "chosen on dev",
          "dev accuracy % (seed 0)", "dev rare-label accuracy %", "test accuracy %, per seed",
          "test rare-label accuracy %, per seed", "training CPU s (mean)",
          "prediction tokens/s (mean)", "run"]
NOTE = (
    "Labels are UPOS|FEATS pairs; a rare label has fewer than 10 training occurrences. "
    f"*{PRUNING}*: DistroSequenceSVM on a slice of the training data (exact decoding costs "
    "M^2 per token), scored on a slice of dev, other parameters the estimator's defaults "
    f"(learned: nuclear_penalty=1e-3, label_learning_rate=0.05). *{LABELS}*: the grid of each "
    "row is searched on dev with seed 0, and that model is the seed-0 test row; the other seeds "
    "are trained again with the chosen setting; EasyFirstBeamTagger on the same labels, not "
    "tuned, is tested once. Training is CPU seconds of one thread (one BLAS thread); the machine "
    "is shared, and the run column gives the 1-minute load average at its start and end. "
    "Prediction speed includes feature extraction."
)


def learned_rows(args, X, y, X_dev, y_dev, X_test, y_test, rare, load_start):
    """One-hot and learned label vectors, each chosen on dev and tested over seeds:
    table rows, each written as soon as its system is done."""
    M = len({t for s in y for t in s})
    systems = [("one-hot", dict(label_vectors="onehot"), {"alpha": args.alphas})]
    learned_alphas = args.learned_alphas or args.alphas
    if not args.skip_learned:
        systems.append((f"learned d={args.d}", dict(n_components=args.d),
                        {"alpha": learned_alphas, "nuclear_penalty": args.nuclear_penalties,
                         "label_learning_rate": args.label_learning_rates}))
    if not args.skip_full_rank:
        # d = M: the proximal step would need an SVD of an M x M matrix per step
        systems.append((f"learned d=M={M}, init={args.full_rank_init}",
                        dict(n_components=None, init=args.full_rank_init),
                        {"alpha": learned_alphas, "nuclear_penalty": [0.0],
                         "label_learning_rate": args.label_learning_rates}))
    common = dict(tag_dictionary=args.k, n_rounds=args.n_rounds, n_epochs=args.n_epochs)
    rows = []
    for name, fixed, grid in systems:
        seeds = args.seeds if name == "one-hot" else (args.learned_seeds or args.seeds)
        params, dev_accuracy, results = chosen_and_tested(
            args, name, common, fixed, grid, seeds, (X, y, X_dev, y_dev, X_test, y_test), rare)
        settings = (f"k={args.k}, n_rounds={args.n_rounds}, n_epochs={args.n_epochs}; grid "
                    f"{dict(grid)}; test seeds {seeds}")
        rows.append(system_row(args, name, f"tag dictionary k={args.k}",
                               ", ".join(f"{k}={v:g}" for k, v in params.items()),
                               f"{100 * dev_accuracy:.2f}", results, settings,
                               (X, M, X_test, y_test, rare), load_start))
        write(rows)
    return rows


def chosen_and_tested(args, name, common, fixed, grid, seeds, data, rare):
    """The grid point best on dev (seed 0), its dev accuracy, and its test figures per seed
    (all words, rare labels, training CPU s, prediction tokens/s)."""
    X, y, X_dev, y_dev, X_test, y_test = data
    best = None
    for values in itertools.product(*grid.values()):
        params = dict(zip(grid, values))
        model = DistroSequenceSVM(random_state=0, **common, **fixed, **params)
        acc, rare_acc, fit_s, _, model = run(model, X, y, X_dev, y_dev, rare)
        log(f"{name} {params}: dev {acc:.4f} (rare {rare_acc:.4f}), fit {fit_s:.1f} s")
        if best is None or acc > best[1]:
            best = (params, acc, model, fit_s)
    params, dev_accuracy, chosen, chosen_fit_s = best
    results = []
    for seed in seeds:
        if seed == 0:  # the model chosen on dev (seed 0) is tested as it is
            prediction, _, seconds = timed(lambda: chosen.predict(X_test))
            tok_s = sum(map(len, X_test)) / seconds
            results.append((*accuracies(y_test, prediction, rare)[:2], chosen_fit_s, tok_s))
        else:
            model = DistroSequenceSVM(random_state=seed, **common, **fixed, **params)
            results.append(run(model, X, y, X_test, y_test, rare)[:4])
        log(f"{name} seed {seed}: test {results[-1][0]:.4f} (rare {results[-1][1]:.4f}), "
            f"fit {results[-1][2]:.1f} s")
    return params, dev_accuracy, results


def system_row(args, name, decoding, chosen, dev_accuracy, results, settings, data, load_start):
    """The table row of one system tested over seeds on the whole training set."""
    X, n_labels, X_test, y_test, rare = data

    def per_seed(i):
        values = [100 * r[i] for r in results]
        if len(values) == 1:
            return f"{values[0]:.2f}"
        return ", ".join(f"{v:.2f}" for v in values) + f" (mean {np.mean(values):.2f})"

    _, _, n_rare = accuracies(y_test, y_test, rare)
    training = (f"{len(X)} training sentences, {n_labels} labels ({len(rare)} with fewer than 10 "
                f"training occurrences; {n_rare} of the {sum(map(len, X_test))} test tokens carry one)")
    return [args.treebank, LABELS, name, decoding, training, chosen, dev_accuracy, "-",
            per_seed(0), per_seed(1), f"{np.mean([r[2] for r in results]):.0f}",
            f"{np.mean([r[3] for r in results]):,.0f}",
            f"{settings}; load {load_start:.1f} -> {os.getloadavg()[0]:.1f}"]


def main(argv=None):
    args = arguments(argv)
    data_home()
    load_start = os.getloadavg()[0]
    X, y = morph_tagged(args.treebank, "train")
    X_dev, y_dev = morph_tagged(args.treebank, "dev")
    X_test, y_test = morph_tagged(args.treebank, "test")
    if args.train_limit:
        X, y = X[:args.train_limit], y[:args.train_limit]
    labels = Counter(t for s in y for t in s)
    rare = {t for t, c in labels.items() if c < 10}
    rows = []
    if not args.skip_pruning:
        rows += pruning_cost(args, X, y, X_dev, y_dev, rare, load_start)
        write(rows)
    if not args.skip_distro:
        rows += learned_rows(args, X, y, X_dev, y_dev, X_test, y_test, rare, load_start)
    if not args.skip_easy_first:
        tagger = EasyFirstBeamTagger(target="feats", random_state=0)
        acc, rare_acc, fit_s, tok_s, _ = run(tagger, X, y, X_test, y_test, rare)
        log(f"easy-first: test {acc:.4f} (rare {rare_acc:.4f}), fit {fit_s:.1f} s")
        rows.append(system_row(args, "EasyFirstBeamTagger (beam 3, 10 epochs, defaults)", "-",
                               "not tuned", "-", [(acc, rare_acc, fit_s, tok_s)],
                               "defaults, seed 0", (X, len(labels), X_test, y_test, rare), load_start))
        write(rows)


def write(rows):
    """Put the rows finished so far into the section, beside other treebanks' rows."""
    write_rows("distro_morph", "DISTRO and EasyFirstBeamTagger: morphological tagging (UPOS|FEATS)",
               HEADER, rows, key_columns=4, note=NOTE)
    log("written to", SETTINGS.results)
