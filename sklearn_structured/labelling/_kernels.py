"""Numba kernels of the arc labeller: hashed arc features, label scores, perceptron epochs.

The labeller gives each arc ``h -> m`` of a finished tree one relation label.
An arc's features are a template number and a few integers (vocabulary ids
of the forms, lemmas, tags and FEATS of the head and the modifier, direction,
binned distance, the words and tags around them and of their relatives in the
tree), hashed once by
:func:`~sklearn_structured.kernels.hashing.feature_hash` into a 63-bit key.
A feature conjoined with a label ``l`` owns the weight at

    ``(key + l * LABEL_STRIDE) & mask``  (LABEL_STRIDE is 1)

of one table of ``mask + 1`` weights, so the table's size does not grow with
the number of labels; the score of label ``l`` is the sum of the weights its
features own. Training is a multiclass averaged perceptron over the arcs of
gold trees (the same averaging formula as every perceptron of the library:
the running sums get ``c * delta`` for an update made after ``c`` arcs).

Words attached to the root are not scored: they get the model's root label.
Every other word gets its best label among ``allowed`` (the labels not kept
for root words), which is how the root constraint holds. In prediction, two
rules of UD's validator hold as well (see :func:`predict_labels`): at most
one subject and one object per head, and the head-first relations never
pointing right to left.

Some templates read labels: that of the head's own arc, that of the nearest
sibling between the head and the word, and the set of labels of the siblings
nearer the head. Words are therefore labelled top-down (by depth in the tree)
and, among the children of one head, from the head outwards (ties: left
first), so that these are known when a word is labelled: the labels predicted
so far at prediction, the gold ones in training.

Tokens are given without a root slot; ``heads`` holds the tree, 1-based within
each sentence with 0 for the root.
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from ..kernels.hashing import feature_hash
from ..kernels.sorting import stable_argsort

# Values of features that have no token to read.
OUTSIDE = -2  # a neighbour before the first or after the last word
NO_WORD = -3  # no such relative in the tree (child, sibling)
ROOT_VALUE = -4  # the head (or grandparent) is the artificial root

# Label l moves a feature's key by l: the labels of one feature sit side by side, so
# scoring them reads a few cache lines instead of one line per label, while two
# distinct feature-label pairs still share a cell with probability 1 / table size.
LABEL_STRIDE = 1

# Distance bins of |h - m|: 1, 2, 3, 4, 5-6, 7-10, 11+; arcs from the root get their own.
_DISTANCE_EDGES = np.array([1, 2, 3, 4, 5, 7, 11], dtype=np.int64)
ROOT_DISTANCE = len(_DISTANCE_EDGES)

# Templates. Each is one feature_hash call in arc_keys, in this order.
(T_BIAS, T_MW, T_MU, T_MX, T_HW, T_HU, T_HX, T_MW_MX, T_HU_MU, T_HX_MX, T_HW_MW, T_HW_MU,
 T_HU_MW, T_DIST, T_DIST_HU_MU, T_DIR_MU, T_DIR_HX_MX, T_DIR_MW, T_DIR_HW_MU,
 T_MU_CONTEXT, T_HU_MU_ML, T_HU_MU_MR, T_HU_HL_MU, T_HU_HR_MU, T_GU_HU_MU,
 T_MU_LCW, T_MU_LCU, T_MU_RCU, T_HU_MU_LCW, T_HU_MU_SIB, T_HU_MU_RANK, T_DIR_HW_MX,
 T_MU_CHILDREN, T_HEAD_LABEL, T_HEAD_LABEL_HU, T_SIB_LABEL, T_BEFORE_SPAN, T_AFTER_SPAN,
 T_SPAN_EDGES, T_LEFT_TAGS, T_RIGHT_TAGS,
 T_MLEM_HU, T_HLEM_MU, T_HLEM_MLEM, T_MF_MU, T_HF_MF, T_MF_HU, T_GW_HU_MU, T_SIBS_LABELS,
 T_HEAD_LABEL_HW, T_N_CHILDREN, T_MU_NLCW, T_MU_RCW, T_NEXT_W) = range(1, 55)
N_TEMPLATES = 54
_CHILD_TAG = 99  # hashes a child's UPOS into the order-free signature of a tag set
# Classes of labels of which a head may have at most one dependent (LabelModel.exclusive).
FREE, SUBJECT, OBJECT = 0, 1, 2

# Columns of the per-word relatives that tree_relatives fills in.
(LEFT_CHILD, RIGHT_CHILD, SPAN_START, SPAN_END, LEFT_TAGS, RIGHT_TAGS, N_LEFT, N_RIGHT,
 NEAR_LEFT) = range(9)
N_RELATIVES = 9


class LabelSentences(NamedTuple):
    """Encoded sentences and a tree over each, laid end to end (no root slot)."""

    offsets: np.ndarray
    """Sentence s is ``offsets[s]:offsets[s + 1]``."""
    lower: np.ndarray
    """Lower-cased form id of every word."""
    upos: np.ndarray
    xpos: np.ndarray
    lemma: np.ndarray
    feats: np.ndarray
    """Order-free signature of every word's FEATS items (0 for none)."""
    heads: np.ndarray
    """Head of every word, 1-based within its sentence, 0 for the root."""


class LabelModel(NamedTuple):
    """The weights, and in training their averaging state (updated in place)."""

    weights: np.ndarray
    """Hashed feature-label weights, a power-of-two length."""
    sums: np.ndarray
    """Running sums for the average; read in training only."""
    seen: np.ndarray
    """Length-1 float array: arcs trained on so far, the averaging counter."""
    allowed: np.ndarray
    """Bool per label: whether a word not attached to the root may get it."""
    root_label: int
    """The label of every word attached to the root."""
    exclusive: np.ndarray
    """Per label, the class of which a head may have one dependent (``SUBJECT``,
    ``OBJECT``), or ``FREE``; read in prediction only."""
    head_first: np.ndarray
    """Bool per label: whether its dependent must follow its head; read in prediction only."""


@njit(cache=True, nogil=True, inline="always")
def label_cell(key, label, mask):
    """Index of the weight of feature ``key`` conjoined with ``label``."""
    return (key + label * LABEL_STRIDE) & mask


@njit(cache=True, nogil=True, inline="always")
def _distance_bin(h, m):
    """Bin of the arc from 1-based head ``h`` to 0-based word ``m`` (h = 0: the root)."""
    if h == 0:
        return ROOT_DISTANCE
    d = abs(h - 1 - m)
    b = 0
    while b + 1 < len(_DISTANCE_EDGES) and d >= _DISTANCE_EDGES[b + 1]:
        b += 1
    return b


@njit(cache=True, nogil=True, inline="always")
def _at(field, lo, n, i):
    """Field of word i (0-based) of the sentence at ``lo``, OUTSIDE beyond its ends."""
    if i < 0 or i >= n:
        return OUTSIDE
    return field[lo + i]


@njit(cache=True, nogil=True)
def feats_signatures(items, item_offsets):
    """Per word, an order-free signature (a sum of hashes) of its FEATS item ids; 0 for none."""
    n = len(item_offsets) - 1
    out = np.zeros(n, np.int64)
    for i in range(n):
        for j in range(item_offsets[i], item_offsets[i + 1]):
            out[i] += feature_hash(_CHILD_TAG, items[j], 1, 0, 0, 0)
    return out


@njit(cache=True, nogil=True)
def tree_relatives(heads, upos, lo, n, out):
    """Fill ``out[:n]`` with what the features read of each word's subtree.

    Per word (0-based positions, -1 for none): its outermost left child and
    outermost right child, the first and last word of its subtree, and an
    order-free signature (a sum of hashes) of the UPOS of its left children
    and of its right children (0 for none).
    """
    for m in range(n):
        out[m, LEFT_CHILD] = -1
        out[m, RIGHT_CHILD] = -1
        out[m, SPAN_START] = m
        out[m, SPAN_END] = m
        out[m, LEFT_TAGS] = 0
        out[m, RIGHT_TAGS] = 0
        out[m, N_LEFT] = 0
        out[m, N_RIGHT] = 0
        out[m, NEAR_LEFT] = -1
    for m in range(n):
        h = heads[lo + m] - 1
        if h < 0:
            continue
        tag = feature_hash(_CHILD_TAG, upos[lo + m], 0, 0, 0, 0)
        if m < h:
            out[h, LEFT_TAGS] += tag
            out[h, N_LEFT] += 1
            if out[h, LEFT_CHILD] < 0 or m < out[h, LEFT_CHILD]:
                out[h, LEFT_CHILD] = m
            if m > out[h, NEAR_LEFT]:
                out[h, NEAR_LEFT] = m
        else:
            out[h, RIGHT_TAGS] += tag
            out[h, N_RIGHT] += 1
            if m > out[h, RIGHT_CHILD]:
                out[h, RIGHT_CHILD] = m
        # m lies in the subtree of every ancestor
        k, steps = h, 0
        while k >= 0 and steps < n:
            out[k, SPAN_START] = min(out[k, SPAN_START], m)
            out[k, SPAN_END] = max(out[k, SPAN_END], m)
            k = heads[lo + k] - 1
            steps += 1


@njit(cache=True, nogil=True)
def labelling_order(heads, lo, n, order, depth):
    """Fill ``order[:n]`` with the words of a sentence top-down: by depth in the tree,
    then by distance to their head (a word's head and inner siblings come first);
    and ``depth[:n]`` with each word's depth (0 for a word attached to the root)."""
    rank = np.empty(n, np.int64)
    for m in range(n):
        d = 0
        k = m
        while heads[lo + k] != 0 and d <= n:
            k = heads[lo + k] - 1
            d += 1
        depth[m] = d
        h = heads[lo + m]
        rank[m] = d * (n + 1) + (0 if h == 0 else abs(h - 1 - m))
    # element by element: a slice assignment would compile numba's shape-error
    # message formatting, a second of first-run compilation
    ranked = stable_argsort(rank)
    for i in range(n):
        order[i] = ranked[i]


@njit(cache=True, nogil=True)
def arc_keys(sentences, lo, n, m, relatives, labels, keys):
    """Fill ``keys[:N_TEMPLATES]`` with the feature keys of word m's arc in its tree.

    ``labels`` holds the label ids of the sentence's words (read for m's head
    and nearest inner sibling, which :func:`labelling_order` puts first).
    """
    lower, upos, xpos, heads = sentences.lower, sentences.upos, sentences.xpos, sentences.heads
    lemma, feats = sentences.lemma, sentences.feats
    h = heads[lo + m]  # 1-based, 0 = root
    mw, mu, mx = lower[lo + m], upos[lo + m], xpos[lo + m]
    mlem, mf = lemma[lo + m], feats[lo + m]
    ml, mr = _at(upos, lo, n, m - 1), _at(upos, lo, n, m + 1)
    if h == 0:
        hw = hu = hx = hl = hr = gu = gw = head_label = hlem = hf = ROOT_VALUE
        direction = 2
        next_w = NO_WORD
    else:
        hi = h - 1
        hw, hu, hx = lower[lo + hi], upos[lo + hi], xpos[lo + hi]
        hlem, hf = lemma[lo + hi], feats[lo + hi]
        hl, hr = _at(upos, lo, n, hi - 1), _at(upos, lo, n, hi + 1)
        g = heads[lo + hi]
        gu = ROOT_VALUE if g == 0 else upos[lo + g - 1]
        gw = ROOT_VALUE if g == 0 else lower[lo + g - 1]
        head_label = labels[lo + hi]
        direction = 1 if hi < m else 0
        # the word next to m on the head's side (the head itself when adjacent)
        next_w = lower[lo + (m - 1 if hi < m else m + 1)]
    dist = _distance_bin(h, m)
    lc, rc = relatives[m, LEFT_CHILD], relatives[m, RIGHT_CHILD]
    start, end = relatives[m, SPAN_START], relatives[m, SPAN_END]
    before_w, after_w = _at(lower, lo, n, start - 1), _at(lower, lo, n, end + 1)
    before_u, after_u = _at(upos, lo, n, start - 1), _at(upos, lo, n, end + 1)
    lcw = NO_WORD if lc < 0 else lower[lo + lc]
    lcu = NO_WORD if lc < 0 else upos[lo + lc]
    rcu = NO_WORD if rc < 0 else upos[lo + rc]
    # the sibling next to m on the head's side, and how many siblings lie between
    sib_u = sib_label = NO_WORD
    rank = 0
    if h > 0:
        step = -1 if h - 1 < m else 1
        k = m + step
        while k != h - 1:
            if heads[lo + k] == h:
                if sib_u == NO_WORD:
                    sib_u = upos[lo + k]
                    sib_label = labels[lo + k]
                rank += 1
            k += step
        rank = min(rank, 3)
    # the labels of the head's children labelled before m (nearer the head), order-free
    sibs = 0
    if h > 0:
        d = abs(h - 1 - m)
        for k in range(max(0, h - 1 - d), min(n, h + d)):
            if k != m and heads[lo + k] == h and (abs(h - 1 - k) < d or k < m):
                sibs += feature_hash(_CHILD_TAG, labels[lo + k], 0, 0, 0, 0)
    nlc = relatives[m, NEAR_LEFT]
    nlcw = NO_WORD if nlc < 0 else lower[lo + nlc]
    rcw = NO_WORD if rc < 0 else lower[lo + rc]
    keys[0] = feature_hash(T_BIAS, 0, 0, 0, 0, 0)
    keys[1] = feature_hash(T_MW, mw, 0, 0, 0, 0)
    keys[2] = feature_hash(T_MU, mu, 0, 0, 0, 0)
    keys[3] = feature_hash(T_MX, mx, 0, 0, 0, 0)
    keys[4] = feature_hash(T_HW, hw, 0, 0, 0, 0)
    keys[5] = feature_hash(T_HU, hu, 0, 0, 0, 0)
    keys[6] = feature_hash(T_HX, hx, 0, 0, 0, 0)
    keys[7] = feature_hash(T_MW_MX, mw, mx, 0, 0, 0)
    keys[8] = feature_hash(T_HU_MU, hu, mu, 0, 0, 0)
    keys[9] = feature_hash(T_HX_MX, hx, mx, 0, 0, 0)
    keys[10] = feature_hash(T_HW_MW, hw, mw, 0, 0, 0)
    keys[11] = feature_hash(T_HW_MU, hw, mu, 0, 0, 0)
    keys[12] = feature_hash(T_HU_MW, hu, mw, 0, 0, 0)
    keys[13] = feature_hash(T_DIST, direction, dist, 0, 0, 0)
    keys[14] = feature_hash(T_DIST_HU_MU, direction, dist, hu, mu, 0)
    keys[15] = feature_hash(T_DIR_MU, direction, mu, 0, 0, 0)
    keys[16] = feature_hash(T_DIR_HX_MX, direction, hx, mx, 0, 0)
    keys[17] = feature_hash(T_DIR_MW, direction, mw, 0, 0, 0)
    keys[18] = feature_hash(T_DIR_HW_MU, direction, hw, mu, 0, 0)
    keys[19] = feature_hash(T_MU_CONTEXT, ml, mu, mr, 0, 0)
    keys[20] = feature_hash(T_HU_MU_ML, hu, mu, ml, direction, 0)
    keys[21] = feature_hash(T_HU_MU_MR, hu, mu, mr, direction, 0)
    keys[22] = feature_hash(T_HU_HL_MU, hu, hl, mu, direction, 0)
    keys[23] = feature_hash(T_HU_HR_MU, hu, hr, mu, direction, 0)
    keys[24] = feature_hash(T_GU_HU_MU, gu, hu, mu, direction, 0)
    keys[25] = feature_hash(T_MU_LCW, mu, lcw, 0, 0, 0)
    keys[26] = feature_hash(T_MU_LCU, mu, lcu, 0, 0, 0)
    keys[27] = feature_hash(T_MU_RCU, mu, rcu, 0, 0, 0)
    keys[28] = feature_hash(T_HU_MU_LCW, hu, mu, lcw, direction, 0)
    keys[29] = feature_hash(T_HU_MU_SIB, hu, mu, sib_u, direction, 0)
    keys[30] = feature_hash(T_HU_MU_RANK, hu, mu, rank, direction, 0)
    keys[31] = feature_hash(T_DIR_HW_MX, direction, hw, mx, 0, 0)
    keys[32] = feature_hash(T_MU_CHILDREN, mu, 1 if lc >= 0 else 0, 1 if rc >= 0 else 0, 0, 0)
    keys[33] = feature_hash(T_HEAD_LABEL, head_label, mu, direction, 0, 0)
    keys[34] = feature_hash(T_HEAD_LABEL_HU, head_label, hu, mu, 0, 0)
    keys[35] = feature_hash(T_SIB_LABEL, sib_label, hu, mu, direction, 0)
    keys[36] = feature_hash(T_BEFORE_SPAN, mu, before_w, direction, 0, 0)
    keys[37] = feature_hash(T_AFTER_SPAN, mu, after_w, direction, 0, 0)
    keys[38] = feature_hash(T_SPAN_EDGES, hu, mu, before_u, after_u, direction)
    keys[39] = feature_hash(T_LEFT_TAGS, mu, relatives[m, LEFT_TAGS], 0, 0, 0)
    keys[40] = feature_hash(T_RIGHT_TAGS, mu, relatives[m, RIGHT_TAGS], 0, 0, 0)
    keys[41] = feature_hash(T_MLEM_HU, mlem, hu, direction, 0, 0)
    keys[42] = feature_hash(T_HLEM_MU, hlem, mu, direction, 0, 0)
    keys[43] = feature_hash(T_HLEM_MLEM, hlem, mlem, 0, 0, 0)
    keys[44] = feature_hash(T_MF_MU, mf, mu, 0, 0, 0)
    keys[45] = feature_hash(T_HF_MF, hf, mf, hu, mu, direction)
    keys[46] = feature_hash(T_MF_HU, mf, mu, hu, direction, 0)
    keys[47] = feature_hash(T_GW_HU_MU, gw, hu, mu, direction, 0)
    keys[48] = feature_hash(T_SIBS_LABELS, sibs, hu, mu, direction, 0)
    keys[49] = feature_hash(T_HEAD_LABEL_HW, head_label, hw, mu, 0, 0)
    keys[50] = feature_hash(T_N_CHILDREN, mu, min(relatives[m, N_LEFT], 3),
                            min(relatives[m, N_RIGHT], 3), 0, 0)
    keys[51] = feature_hash(T_MU_NLCW, mu, nlcw, 0, 0, 0)
    keys[52] = feature_hash(T_MU_RCW, mu, rcw, 0, 0, 0)
    keys[53] = feature_hash(T_NEXT_W, mu, next_w, direction, 0, 0)


@njit(cache=True, nogil=True, inline="always")
def _scores(keys, weights, n_labels, mask, out):
    for label in range(n_labels):
        out[label] = 0.0
    for t in range(N_TEMPLATES):  # feature by feature: its labels' cells are adjacent
        for label in range(n_labels):
            out[label] += weights[label_cell(keys[t], label, mask)]


@njit(cache=True, nogil=True, inline="always")
def _best_allowed(scores, allowed):
    best = -1
    for label in range(len(scores)):
        if allowed[label] and (best < 0 or scores[label] > scores[best]):
            best = label
    return best


@njit(cache=True, nogil=True)
def label_scores(sentences, labels, weights, n_labels):
    """Score of every label for every word's arc: shape (n_words, n_labels).

    ``labels`` gives the labels of the words that the label templates read.
    Root-attached words are scored too, though prediction ignores their scores.
    """
    offsets = sentences.offsets
    mask = len(weights) - 1
    out = np.zeros((offsets[-1], n_labels))
    keys = np.empty(N_TEMPLATES, np.int64)
    relatives = np.empty((0, N_RELATIVES), np.int64)
    for s in range(len(offsets) - 1):
        lo, n = offsets[s], offsets[s + 1] - offsets[s]
        if len(relatives) < n:
            relatives = np.empty((n, N_RELATIVES), np.int64)
        tree_relatives(sentences.heads, sentences.upos, lo, n, relatives)
        for m in range(n):
            arc_keys(sentences, lo, n, m, relatives, labels, keys)
            _scores(keys, weights, n_labels, mask, out[lo + m])
    return out


@njit(cache=True, nogil=True)
def _word_allowed(model, before_head, out):
    """Fill ``out`` with the labels a non-root word may get: the model's allowed labels
    that its side of its head allows, or all of them if that allows none."""
    any_left = False
    for label in range(len(out)):
        out[label] = model.allowed[label] and not (before_head and model.head_first[label])
        any_left |= out[label]
    if not any_left:  # element by element, as in labelling_order
        for label in range(len(out)):
            out[label] = model.allowed[label]


@njit(cache=True, nogil=True)
def _has_other(block, m, heads, lo, labels, exclusive, cls):
    """Whether a word of ``block`` other than ``m``, with m's head, has a label of class ``cls``."""
    for b in block:
        if b != m and heads[lo + b] == heads[lo + m] and exclusive[labels[lo + b]] == cls:
            return True
    return False


@njit(cache=True, nogil=True)
def _best_outside(scores, allowed, exclusive, cls, block, m, heads, lo, labels):
    """The best label of ``allowed`` not of class ``cls``, nor of a class that another
    dependent of m's head already holds (-1 when there is none)."""
    best = -1
    for label in range(len(scores)):
        other = exclusive[label]
        if not allowed[label] or other == cls:
            continue
        if other != FREE and _has_other(block, m, heads, lo, labels, exclusive, other):
            continue
        if best < 0 or scores[label] > scores[best]:
            best = label
    return best


@njit(cache=True, nogil=True)
def _one_per_head(block, heads, lo, labels, scores, word_allowed, exclusive):
    """Give no head two dependents of one exclusive class among the words of ``block``
    (all the dependents of their heads): of two such, the one whose label beats its
    best alternative by more keeps it; the other gets its best label that creates
    no such pair. ``scores`` and ``word_allowed`` hold the rows of the block's words."""
    for i in range(len(block)):
        m = block[i]
        cls = exclusive[labels[lo + m]]
        if cls == FREE or not _has_other(block, m, heads, lo, labels, exclusive, cls):
            continue
        # the rival of the same head and class that keeps its label
        keeper, keep_margin = -1, -np.inf
        for j in range(len(block)):
            b = block[j]
            if heads[lo + b] != heads[lo + m] or exclusive[labels[lo + b]] != cls:
                continue
            other = _best_outside(scores[j], word_allowed[j], exclusive, cls, block, b, heads,
                                  lo, labels)
            margin = np.inf if other < 0 else scores[j, labels[lo + b]] - scores[j, other]
            if margin > keep_margin:
                keeper, keep_margin = b, margin
        for j in range(len(block)):
            b = block[j]
            if b == keeper or heads[lo + b] != heads[lo + m] or exclusive[labels[lo + b]] != cls:
                continue
            other = _best_outside(scores[j], word_allowed[j], exclusive, cls, block, b, heads,
                                  lo, labels)
            if other >= 0:
                labels[lo + b] = other


@njit(cache=True, nogil=True)
def predict_labels(sentences, model):
    """The label id of every word's arc: the root label on root-attached words, else the
    best label that the word's side of its head allows (among the model's allowed
    labels), with at most one dependent of each exclusive class per head.

    Words are labelled depth by depth (:func:`labelling_order`), so all the
    dependents of a head are labelled before their pairs of one class are
    resolved (:func:`_one_per_head`), and before their own dependents, which
    read the resolved labels.
    """
    offsets = sentences.offsets
    weights = model.weights
    n_labels = len(model.allowed)
    mask = len(weights) - 1
    labels = np.empty(offsets[-1], np.int64)
    keys = np.empty(N_TEMPLATES, np.int64)
    relatives = np.empty((0, N_RELATIVES), np.int64)
    order = np.empty(0, np.int64)
    depth = np.empty(0, np.int64)
    scores = np.empty((0, n_labels))
    word_allowed = np.empty((0, n_labels), np.bool_)
    for s in range(len(offsets) - 1):
        lo, n = offsets[s], offsets[s + 1] - offsets[s]
        if len(relatives) < n:
            relatives = np.empty((n, N_RELATIVES), np.int64)
            order = np.empty(n, np.int64)
            depth = np.empty(n, np.int64)
            scores = np.empty((n, n_labels))
            word_allowed = np.empty((n, n_labels), np.bool_)
        tree_relatives(sentences.heads, sentences.upos, lo, n, relatives)
        labelling_order(sentences.heads, lo, n, order, depth)
        start = 0
        while start < n:  # one depth of the tree at a time
            end = start
            while end < n and depth[order[end]] == depth[order[start]]:
                end += 1
            for i in range(start, end):
                m = order[i]
                if sentences.heads[lo + m] == 0:  # its row is never read: root is no class
                    labels[lo + m] = model.root_label
                    continue
                arc_keys(sentences, lo, n, m, relatives, labels, keys)
                _scores(keys, weights, n_labels, mask, scores[i - start])
                _word_allowed(model, m < sentences.heads[lo + m] - 1, word_allowed[i - start])
                labels[lo + m] = _best_allowed(scores[i - start], word_allowed[i - start])
            _one_per_head(order[start:end], sentences.heads, lo, labels, scores,
                          word_allowed, model.exclusive)
            start = end
    return labels


@njit(cache=True, nogil=True)
def train_epoch(sentences, gold, order, model):
    """One perceptron pass over the arcs of the gold trees, sentences taken in ``order``.

    ``gold`` is the label id of every word (-1: not trained on). Words attached
    to the root and words whose gold label is not allowed are skipped; every
    other arc counts one step of the average. Returns the number of arcs
    whose best allowed label was wrong (and so updated the weights).
    """
    offsets = sentences.offsets
    weights, sums, allowed = model.weights, model.sums, model.allowed
    n_labels = len(allowed)
    mask = len(weights) - 1
    keys = np.empty(N_TEMPLATES, np.int64)
    scores = np.empty(n_labels)
    relatives = np.empty((0, N_RELATIVES), np.int64)
    errors = 0
    for s in order:
        lo, n = offsets[s], offsets[s + 1] - offsets[s]
        if len(relatives) < n:
            relatives = np.empty((n, N_RELATIVES), np.int64)
        tree_relatives(sentences.heads, sentences.upos, lo, n, relatives)
        for m in range(n):
            target = gold[lo + m]
            if sentences.heads[lo + m] == 0 or target < 0 or not allowed[target]:
                continue
            arc_keys(sentences, lo, n, m, relatives, gold, keys)
            _scores(keys, weights, n_labels, mask, scores)
            guess = _best_allowed(scores, allowed)
            count = model.seen[0]
            if guess != target:
                errors += 1
                for t in range(N_TEMPLATES):
                    up = label_cell(keys[t], target, mask)
                    down = label_cell(keys[t], guess, mask)
                    weights[up] += 1.0
                    sums[up] += count
                    weights[down] -= 1.0
                    sums[down] -= count
            model.seen[0] = count + 1.0
    return errors
