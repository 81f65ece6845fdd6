"""Labels after the tree or jointly with it: LowRankTensorParser on UD English EWT dev.

An experiment behind the choice of after-tree labelling (docs/user_guide/labels.rst).
A first-order labeller is trained on the gold arcs with the shared labeller's
arc-local templates only (the first ``N_LOCAL``: words, tags, direction,
distance, sentence neighbours; none that reads the rest of the tree). Joint
decoding adds ``alpha`` times each arc's best local label score to the
parser's arc score before the maximum spanning tree is found; the arc's label
is then that best label ("joint first-order labels"), or the after-tree
labeller relabels the tree it found. ``alpha`` is given in units of the ratio
of the spreads (standard deviations) of the two kinds of scores, as they are
trained apart. ``alpha = 0`` is the after-tree labelling of the library.
Figures go to the ``labels_joint`` section of benchmarks/RESULTS.md.

    NUMBA_NUM_THREADS=1 SKLEARN_STRUCTURED_DATA=/path/to/data \\
        python -m benchmarks labels_joint --parser-cache /tmp/lowrank_ewt.pkl
"""
import argparse
import os
import pickle

import numpy as np
from numba import njit
from sklearn_structured import LowRankTensorParser
from sklearn_structured.labelling import new_labeller, train_labeller, label_trees
# internals with no public form: the labeller's kernels, its sentence packing and pass order
from sklearn_structured.labelling import _kernels as K
from sklearn_structured.labelling._labeller import _sentences
from sklearn_structured.kernels import chu_liu_edmonds_argmax
from sklearn_structured.metrics import attachment_score

from benchmarks.base import data_home, load_treebank, markdown_table, write_section


N_LOCAL = 24  # keys[:24] read only the arc and the sentence, not the rest of the tree

@njit(cache=True)
def local_train_epoch(sent, gold, order, weights, sums, seen, allowed):
    offsets = sent.offsets; mask = len(weights) - 1; L = len(allowed)
    keys = np.empty(K.N_TEMPLATES, np.int64); scores = np.empty(L)
    rel = np.zeros((512, K.N_RELATIVES), np.int64)
    for s in order:
        lo, n = offsets[s], offsets[s + 1] - offsets[s]
        for m in range(n):
            t = gold[lo + m]
            if t < 0 or (sent.heads[lo + m] != 0 and not allowed[t]):
                continue
            K.arc_keys(sent, lo, n, m, rel, gold, keys)
            for l in range(L):
                tot = 0.0
                for k in range(N_LOCAL):
                    tot += weights[K.label_cell(keys[k], l, mask)]
                scores[l] = tot
            # root arcs learn too, so that their scores compare with other arcs'
            best = -1
            for l in range(L):
                ok = allowed[l] if sent.heads[lo + m] != 0 else not allowed[l]
                if ok and (best < 0 or scores[l] > scores[best]):
                    best = l
            c = seen[0]
            if best != t and best >= 0:
                for k in range(N_LOCAL):
                    a = K.label_cell(keys[k], t, mask); b = K.label_cell(keys[k], best, mask)
                    weights[a] += 1; sums[a] += c; weights[b] -= 1; sums[b] -= c
            seen[0] = c + 1

@njit(cache=True)
def best_label_matrix(sent, s, weights, allowed, heads_work):
    """(n+1, n+1) best local label score of every arc h -> m, and its label."""
    offsets = sent.offsets; mask = len(weights) - 1; L = len(allowed)
    lo, n = offsets[s], offsets[s + 1] - offsets[s]
    keys = np.empty(K.N_TEMPLATES, np.int64)
    rel = np.zeros((n + 1, K.N_RELATIVES), np.int64)
    best = np.zeros((n + 1, n + 1)); arg = np.zeros((n + 1, n + 1), np.int64)
    labels = np.zeros(len(sent.heads), np.int64)
    for m in range(n):
        saved = heads_work[lo + m]
        for h in range(n + 1):
            if h == m + 1:
                continue
            heads_work[lo + m] = h
            K.arc_keys(sent, lo, n, m, rel, labels, keys)
            bs = -1e300; bl = -1
            for l in range(L):
                ok = allowed[l] if h != 0 else not allowed[l]
                if not ok:
                    continue
                tot = 0.0
                for k in range(N_LOCAL):
                    tot += weights[K.label_cell(keys[k], l, mask)]
                if tot > bs:
                    bs = tot; bl = l
            best[h, m + 1] = bs; arg[h, m + 1] = bl
        heads_work[lo + m] = saved
    return best, arg

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parser-cache", default="lowrank_ewt_heads.pkl",
                    help="pickle of the parser fitted on the heads (made if missing)")
    ap.add_argument("--alphas", nargs="+", type=float, default=[0.0, 0.05, 0.1, 0.2, 0.5, 1.0])
    args = ap.parse_args(argv)
    data_home()
    X, y = load_treebank("en_ewt", "train", labelled=True)
    Xd, yd = load_treebank("en_ewt", "dev", labelled=True)
    heads = [h for h, _ in y]; deprels = [d for _, d in y]
    path = args.parser_cache
    if os.path.exists(path):
        parser = pickle.load(open(path, "rb"))
    else:
        parser = LowRankTensorParser(random_state=0).fit(X, heads)
        with open(path, "wb") as f:
            pickle.dump(parser, f)
    state = new_labeller(X, heads, deprels)
    train_labeller(state, X, heads, deprels, 10, random_state=0)
    # local (first-order) labeller, same features' first 24 templates
    data = _sentences(state, X, heads)
    ids = {l: i for i, l in enumerate(state["labels"])}
    gold = np.array([ids[l] for d in deprels for l in d])
    w = np.zeros(1 << 20); sums = np.zeros(1 << 20); seen = np.zeros(1)
    for ep in range(10):
        order = np.random.default_rng([state["order_seed"], ep]).permutation(len(X))
        local_train_epoch(data, gold, order, w, sums, seen, state["allowed"])
    wl = w - sums / max(seen[0], 1)  # the mean of the weight iterates (averaged perceptron)
    _, dev_data = parser._predict_data(Xd)
    dummy = [np.zeros(len(s), np.int64) for s in Xd]
    dsent = _sentences(state, Xd, dummy)
    heads_work = dsent.heads.copy()
    dsent = dsent._replace(heads=heads_work)
    arc = [parser._sentence_scores(dev_data, s) for s in range(len(Xd))]
    lab = [best_label_matrix(dsent, s, wl, state["allowed"], heads_work) for s in range(len(Xd))]
    names = state["labels"]
    def spread(ms):
        v = np.concatenate([m[1:, 1:][np.isfinite(m[1:, 1:])].ravel() for m in ms[:300]])
        return v.std()
    ratio = spread(arc) / spread([l[0] for l in lab])
    print("arc/label score spread ratio", ratio, flush=True)
    rows = []
    for rel in args.alphas:
        alpha = rel * ratio
        trees, local_labels = [], []
        for s in range(len(Xd)):
            sc = arc[s] + alpha * lab[s][0]
            t = chu_liu_edmonds_argmax(sc, True)
            trees.append(t)
            local_labels.append([names[lab[s][1][h, m + 1]] for m, h in enumerate(t)])
        after = label_trees(state, Xd, trees)
        a = attachment_score(yd, list(zip(trees, after)), Xd, return_all=True)
        b = attachment_score(yd, list(zip(trees, local_labels)), Xd, return_all=True)
        rows.append([f"{rel:g}", f"{100 * a.uas:.2f}", f"{100 * a.las:.2f}", f"{100 * b.las:.2f}"])
        print(rows[-1], flush=True)
    body = (
        "LowRankTensorParser (defaults, random_state=0) fitted on the heads of en_ewt train; "
        f"first-order labeller on the first {N_LOCAL} templates of the shared labeller, 10 "
        "passes; dev, punctuation excluded. alpha in units of the arc/label score spread "
        f"ratio ({ratio:.4f}); alpha 0 is after-tree labelling.\n\n"
        + markdown_table(["alpha", "UAS", "LAS, after-tree labeller", "LAS, joint first-order labels"],
                         rows)
    )
    write_section("labels_joint", "Labels jointly with the tree or after it: LowRank, EWT dev", body)

