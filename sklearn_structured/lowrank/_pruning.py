"""Arc pruning: a cheap first-order model keeps a few candidate heads per word.

As in RBGParser, the code of Lei et al. (2014), the full model scores only
the arcs that a pruner keeps. The pruner here scores every arc with the
features of :func:`~._features.pruner_feature_ids` (a third of the full
model's, no in-between tags) and is trained word by word: each word picks
its best head independently, with the passive-aggressive update of a
multiclass problem under a cost of 1 for a wrong head, and the weights are
averaged. For each word it keeps the heads scoring within a margin of its
best one, at most a given number of them.

The full model then gives a pruned arc the score :data:`~._kernels.PRUNED_SCORE`, so
low that a tree uses one only when no tree of kept arcs exists (a word
whose kept heads all close a cycle still gets a tree). Training always
keeps the gold arcs.
"""

import numpy as np
from numba import njit

from ..kernels.sorting import stable_argsort
from ._features import max_pruner_features, pruner_feature_ids
from ._kernels import _merge_scalar

# the pruner's passes over the training data, as RBGParser trains its pruner
PRUNER_EPOCHS = 10
# the rows of the pruner's weight table
PRUNER_TABLE_ROWS = 2**20


@njit(cache=True, nogil=True, inline="always")
def _column_scores(start, n, m, form, xpos, upos, pos, theta, n_features, buf, out):
    """The pruner's score of every head of word m into ``out`` (the diagonal left at 0)."""
    for h in range(n + 1):
        if h == m:
            out[h] = 0.0
            continue
        k = pruner_feature_ids(start, n, h, m, form, xpos, upos, pos, n_features, buf)
        s = 0.0
        for j in range(k):
            s += theta[buf[j]]
        out[h] = s


@njit(cache=True, nogil=True)
def pruner_scores(start, n, form, xpos, upos, pos, theta, n_features):
    """The pruner's arc scores of one sentence, ``scores[h, m]`` (column 0 and the
    diagonal 0)."""
    scores = np.zeros((n + 1, n + 1))
    buf = np.empty(max_pruner_features(), dtype=np.int64)
    column = np.empty(n + 1)
    for m in range(1, n + 1):
        _column_scores(start, n, m, form, xpos, upos, pos, theta, n_features, buf, column)
        scores[:, m] = column
    return scores


@njit(cache=True, nogil=True)
def kept_arcs(scores, margin, max_heads, gold):
    """``keep[h, m]``: h is one of the ``max_heads`` best heads of word m (ties to the
    leftmost) and scores at least m's best head minus ``margin``. The arcs of ``gold``
    (heads of words 1..n; empty: none) are kept whatever their score."""
    n = scores.shape[0] - 1
    keep = np.zeros((n + 1, n + 1), dtype=np.bool_)
    negated = np.empty(n + 1)
    for m in range(1, n + 1):
        for h in range(n + 1):
            negated[h] = np.inf if h == m else -scores[h, m]
        order = stable_argsort(negated)
        best = -negated[order[0]]
        for j in range(min(max_heads, n)):
            h = order[j]
            if -negated[h] < best - margin:
                break
            keep[h, m] = True
        if len(gold):
            keep[gold[m - 1], m] = True
    return keep


@njit(cache=True, nogil=True)
def pruner_epoch(sent_off, form, xpos, upos, pos, heads, theta, sums, counter, C):
    """One pass of word-by-word passive-aggressive updates of ``theta`` (and its
    averaging ``sums``, as in :func:`~._kernels.passive_aggressive_update`); returns
    the updated instance counter and the share of words whose best head was the gold
    one before their update."""
    n_features = len(theta)
    size = max_pruner_features()
    buf = np.empty(size, dtype=np.int64)
    ids = np.empty(2 * size, dtype=np.int64)
    values = np.empty(2 * size)
    correct = 0
    for s in range(len(sent_off) - 1):
        start = sent_off[s]
        n = sent_off[s + 1] - start - 1
        column = np.empty(n + 1)
        for m in range(1, n + 1):
            gold = heads[start - s + m - 1]
            _column_scores(start, n, m, form, xpos, upos, pos, theta, n_features, buf, column)
            best, worst = -np.inf, -1
            for h in range(n + 1):
                if h != m and column[h] + (h != gold) > best:
                    best, worst = column[h] + (h != gold), h
            if worst == gold:
                correct += 1
            loss = best - column[gold]
            if worst != gold and loss > 0.0:
                k = pruner_feature_ids(start, n, gold, m, form, xpos, upos, pos, n_features,
                                       buf)
                for j in range(k):
                    ids[j], values[j] = buf[j], 1.0
                k2 = pruner_feature_ids(start, n, worst, m, form, xpos, upos, pos, n_features,
                                        buf)
                for j in range(k2):
                    ids[k + j], values[k + j] = buf[j], -1.0
                merged_ids, merged = _merge_scalar(ids[:k + k2], values[:k + k2])
                norm = 0.0
                for v in merged:
                    norm += v * v
                if norm > 0.0:
                    tau = min(C, loss / norm)
                    for j in range(len(merged_ids)):
                        theta[merged_ids[j]] += tau * merged[j]
                        sums[merged_ids[j]] += counter * tau * merged[j]
            counter += 1
    return counter, correct / max(1, len(heads))


def train_pruner(data, heads, pos, C, n_epochs=PRUNER_EPOCHS):
    """The averaged pruner weights (float64) after ``n_epochs`` passes over an encoded
    corpus and its gold heads (flat, as the parser's training packs them)."""
    theta = np.zeros(PRUNER_TABLE_ROWS)
    sums = np.zeros(PRUNER_TABLE_ROWS)
    counter = 0
    for _ in range(n_epochs):
        counter, _ = pruner_epoch(data["sent_off"], data["form"], data["xpos"], data["upos"],
                                  pos, heads, theta, sums, counter, float(C))
    return theta - sums / max(counter, 1)
