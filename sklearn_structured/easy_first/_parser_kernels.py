"""Numba kernels of the easy-first beam parser (Ma et al. 2013, Algorithms 1 and 2).

State of one beam item, for a sentence of ``n`` words (0-based word ids):

- ``pend[:r]``: head words of the partial trees p_1..p_r, left to right;
- ``vl``/``vr``: number of left / right children of each word;
- ``lc``/``rc``: leftmost / rightmost child of each word (``-1`` for none);
- ``heads``: head of each attached word (``-1`` while unattached);
- ``cache[w, a]``: score of action ``a`` on the partial tree headed by ``w``;
- ``hist``: the actions taken so far, encoded ``2 * word + a``.

Action ``LEFT`` on pending index ``j`` makes p_j a dependent of p_{j-1}'s head,
``RIGHT`` of p_{j+1}'s head; p_j then leaves the list. An action's features
depend only on p_{j-2}..p_{j+2}, so after an action at ``j`` only the cached
scores of the new indices ``j-3..j+2`` change (Goldberg & Elhadad 2010).

The weight table ``W`` has one row per hashed feature and one column per action
type, which conjoins every feature with the action type. Training keeps the
sum ``U`` of ``c * delta`` over all updates, so that the averaged weights are
``W - U / c`` (Daume's trick): averaging costs nothing per step.
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from ..kernels.hashing import feature_hash
from ._beam import (action_key, early_update, extend_item, new_beam, new_candidates,
                    offer_candidate, predicting, next_sentence)

# Sentinel values of the features (token ids are vocabulary ids, never negative).
OUTSIDE = -2  # the neighbour does not exist (before the first / after the last)
NO_CHILD = -3  # the partial tree has no child on that side

LEFT = 0
RIGHT = 1


class Sentences(NamedTuple):
    """Encoded sentences laid end to end: sentence i is ``offsets[i]:offsets[i + 1]``."""

    words: np.ndarray
    tags: np.ndarray
    offsets: np.ndarray


class Gold(NamedTuple):
    """The gold trees of :class:`Sentences`, for training."""

    heads: np.ndarray
    """0-based head of each word, -1 for the root word."""
    n_children: np.ndarray
# Templates per position, block by block as parser_features fills them in.
N_FEATURES = 3 * 8 + 5 * 3 + 6 + 2 * 6 + 1 + 5 * 3 + 2 * 8 + 3


@njit(cache=True, nogil=True, inline="always")
def feature_index(template, a, b, c, d, mask):
    """Weight row of feature ``(template, a, b, c, d)`` in a table of ``mask + 1`` rows."""
    return feature_hash(template, a, b, c, d, 0) & mask


@njit(cache=True, nogil=True)
def _child_value(values, child):
    return values[child] if child >= 0 else NO_CHILD


@njit(cache=True, nogil=True)
def parser_features(pend, r, j, words, tags, vl, vr, lc, rc, mask, out):
    """Fill ``out[:N_FEATURES]`` with the weight rows of the features of p_j.

    Table 1 of Ma et al. (2013), then the base features of Goldberg & Elhadad
    (2010) that Table 1 leaves implicit (bias, unigrams, the mirrored pair
    (p_{j+1}, p_j), word bigrams and head distance). Missing partial trees have
    value ``OUTSIDE``, missing children ``NO_CHILD``.
    """
    # attributes of p_{j-2} .. p_{j+2}, index k = offset + 2
    w = np.empty(5, np.int64)
    t = np.empty(5, np.int64)
    nl = np.empty(5, np.int64)
    nr = np.empty(5, np.int64)
    wl = np.empty(5, np.int64)
    wr = np.empty(5, np.int64)
    tl = np.empty(5, np.int64)
    tr = np.empty(5, np.int64)
    pos = np.empty(5, np.int64)
    for k in range(5):
        q = j + k - 2
        if q < 0 or q >= r:
            w[k] = t[k] = nl[k] = nr[k] = OUTSIDE
            wl[k] = wr[k] = tl[k] = tr[k] = OUTSIDE
            pos[k] = -1
        else:
            h = pend[q]
            pos[k] = h
            w[k] = words[h]
            t[k] = tags[h]
            nl[k] = vl[h]
            nr[k] = vr[h]
            wl[k] = _child_value(words, lc[h])
            wr[k] = _child_value(words, rc[h])
            tl[k] = _child_value(tags, lc[h])
            tr[k] = _child_value(tags, rc[h])
    m = mask
    f = 0
    # Table 1, row 1: p in p_{j-1}, p_j, p_{j+1}
    for k in range(1, 4):
        base = 10 * k
        out[f] = feature_index(base + 0, w[k], nl[k], 0, 0, m)
        out[f + 1] = feature_index(base + 1, w[k], nr[k], 0, 0, m)
        out[f + 2] = feature_index(base + 2, t[k], nl[k], 0, 0, m)
        out[f + 3] = feature_index(base + 3, t[k], nr[k], 0, 0, m)
        out[f + 4] = feature_index(base + 4, tl[k], 0, 0, 0, m)
        out[f + 5] = feature_index(base + 5, tr[k], 0, 0, 0, m)
        out[f + 6] = feature_index(base + 6, wl[k], 0, 0, 0, m)
        out[f + 7] = feature_index(base + 7, wr[k], 0, 0, 0, m)
        f += 8
    # row 2: p in p_{j-2} .. p_{j+2}
    for k in range(5):
        base = 100 + 10 * k
        out[f] = feature_index(base + 0, t[k], tl[k], 0, 0, m)
        out[f + 1] = feature_index(base + 1, t[k], tr[k], 0, 0, m)
        out[f + 2] = feature_index(base + 2, t[k], tl[k], tr[k], 0, m)
        f += 3
    # row 3: (p, q, r) in (j-2, j-1, j), (j-1, j+1, j), (j+1, j+2, j)
    out[f] = feature_index(200, t[0], t[1], t[2], 0, m)
    out[f + 1] = feature_index(201, t[0], t[1], w[2], 0, m)
    out[f + 2] = feature_index(202, t[1], t[3], t[2], 0, m)
    out[f + 3] = feature_index(203, t[1], t[3], w[2], 0, m)
    out[f + 4] = feature_index(204, t[3], t[4], t[2], 0, m)
    out[f + 5] = feature_index(205, t[3], t[4], w[2], 0, m)
    f += 6
    # row 4: (p, q) = (p_{j-1}, p_j), then the mirrored (p_{j+1}, p_j)
    for side in range(2):
        k = 1 if side == 0 else 3
        base = 300 + 10 * side
        out[f] = feature_index(base + 0, t[k], tl[k], t[2], 0, m)
        out[f + 1] = feature_index(base + 1, t[k], tr[k], t[2], 0, m)
        out[f + 2] = feature_index(base + 2, t[k], tl[k], w[2], 0, m)
        out[f + 3] = feature_index(base + 3, t[k], tr[k], w[2], 0, m)
        out[f + 4] = feature_index(base + 4, t[k], w[2], tl[2], 0, m)
        out[f + 5] = feature_index(base + 5, t[k], w[2], tr[2], 0, m)
        f += 6
    # Goldberg & Elhadad base features: bias and unigrams of p_{j-2} .. p_{j+2}
    out[f] = feature_index(400, 0, 0, 0, 0, m)
    f += 1
    for k in range(5):
        base = 410 + 10 * k
        out[f] = feature_index(base + 0, w[k], 0, 0, 0, m)
        out[f + 1] = feature_index(base + 1, t[k], 0, 0, 0, m)
        out[f + 2] = feature_index(base + 2, w[k], t[k], 0, 0, m)
        f += 3
    # pairs of p_j with each neighbour: tags, words, mixed, and head distance
    for side in range(2):
        k = 1 if side == 0 else 3
        base = 500 + 10 * side
        if pos[k] >= 0:
            dist = abs(pos[k] - pos[2])
            dist = dist if dist < 5 else (5 if dist < 10 else 10)
        else:
            dist = OUTSIDE
        out[f] = feature_index(base + 0, t[k], t[2], 0, 0, m)
        out[f + 1] = feature_index(base + 1, w[k], w[2], 0, 0, m)
        out[f + 2] = feature_index(base + 2, w[k], t[k], t[2], 0, m)
        out[f + 3] = feature_index(base + 3, t[k], w[2], t[2], 0, m)
        out[f + 4] = feature_index(base + 4, w[k], t[k], w[2], t[2], m)
        out[f + 5] = feature_index(base + 5, t[k], t[2], dist, 0, m)
        out[f + 6] = feature_index(base + 6, t[k], tr[k], tl[2], t[2], m)
        out[f + 7] = feature_index(base + 7, dist, 0, 0, 0, m)
        f += 8
    # the two tags around p_j's span
    out[f] = feature_index(600, t[1], t[2], t[3], 0, m)
    out[f + 1] = feature_index(601, t[0], t[1], t[2], t[3], m)
    out[f + 2] = feature_index(602, t[1], t[2], t[3], t[4], m)
    f += 3
    return f


@njit(cache=True, nogil=True)
def apply_action(pend, r, j, a, vl, vr, lc, rc, heads):
    """Attach p_j to its left (``a == LEFT``) or right neighbour; return the new length."""
    dep = pend[j]
    if a == LEFT:
        head = pend[j - 1]
        vr[head] += 1
        rc[head] = dep  # p_j lies right of everything p_{j-1} covers
        if lc[head] < 0:
            lc[head] = dep
    else:
        head = pend[j + 1]
        vl[head] += 1
        lc[head] = dep  # p_j lies left of everything p_{j+1} covers
        if rc[head] < 0:
            rc[head] = dep
    heads[dep] = head
    for q in range(j, r - 1):
        pend[q] = pend[q + 1]
    return r - 1


@njit(cache=True, nogil=True)
def action_is_correct(pend, r, j, a, vl, vr, gold_heads, gold_n_children):
    """Ma et al.'s test: p_j has all its gold dependents and its gold head is the neighbour."""
    dep = pend[j]
    if vl[dep] + vr[dep] != gold_n_children[dep]:
        return False
    if a == LEFT:
        return j > 0 and gold_heads[dep] == pend[j - 1]
    return j < r - 1 and gold_heads[dep] == pend[j + 1]


@njit(cache=True, nogil=True)
def _refresh_scores(pend, r, lo, hi, words, tags, vl, vr, lc, rc, W, mask, cache, feats):
    """Recompute the cached LEFT/RIGHT scores of pending indices ``lo..hi``."""
    lo = max(lo, 0)
    hi = min(hi, r - 1)
    for q in range(lo, hi + 1):
        nf = parser_features(pend, r, q, words, tags, vl, vr, lc, rc, mask, feats)
        s_left = 0.0
        s_right = 0.0
        for k in range(nf):
            s_left += W[feats[k], LEFT]
            s_right += W[feats[k], RIGHT]
        cache[pend[q], LEFT] = s_left
        cache[pend[q], RIGHT] = s_right


@njit(cache=True, nogil=True)
def _update_sequence(hist, length, delta, words, tags, W, U, counter, mask):
    """Add ``delta`` times the features of the action sequence ``hist[:length]`` to W (and U)."""
    n = words.shape[0]
    pend = np.arange(n)
    vl = np.zeros(n, np.int64)
    vr = np.zeros(n, np.int64)
    lc = np.full(n, -1, np.int64)
    rc = np.full(n, -1, np.int64)
    heads = np.full(n, -1, np.int64)
    feats = np.empty(N_FEATURES, np.int64)
    r = n
    for step in range(length):
        dep = hist[step] // 2
        a = hist[step] % 2
        j = 0
        while pend[j] != dep:
            j += 1
        nf = parser_features(pend, r, j, words, tags, vl, vr, lc, rc, mask, feats)
        for k in range(nf):
            W[feats[k], a] += delta
            U[feats[k], a] += counter * delta
        r = apply_action(pend, r, j, a, vl, vr, lc, rc, heads)


@njit(cache=True, nogil=True)
def beam_parse(words, tags, gold_heads, gold_n_children, W, U, counter, beam_size, merge, train,
               heads_out, order_out, record):
    """Parse one sentence with Algorithm 1; with ``train`` also run Algorithm 2.

    With ``merge``, sequences reaching the same set of arcs in different
    orders share one beam slot (the better-scoring one). ``heads_out``
    receives 1-based heads (0 = root) and ``order_out`` the step
    at which each word was attached (``n - 1`` for the root word). In training,
    ``record`` receives ``(updated, score_correct, score_predicted, early,
    length)`` of the update made (at most one per sentence; scores measured
    before it, length = number of actions in both sequences). Returns False
    when training made an update or found no correct action (a gold tree
    easy-first cannot build), True otherwise.
    """
    n = words.shape[0]
    s = beam_size
    mask = W.shape[0] - 1  # the table has a power-of-two number of rows
    record[0] = 0.0
    if n == 1:
        heads_out[0] = 0
        order_out[0] = 0
        return True
    pend = np.empty((2, s, n), np.int64)
    vl = np.zeros((2, s, n), np.int64)
    vr = np.zeros((2, s, n), np.int64)
    lc = np.full((2, s, n), -1, np.int64)
    rc = np.full((2, s, n), -1, np.int64)
    heads = np.full((2, s, n), -1, np.int64)
    order, hist, cache, score, signature, correct = new_beam(s, n, 2)
    feats = np.empty(N_FEATURES, np.int64)
    top_score, top_sig, top_b, top_j, top_a = new_candidates(s)
    topc_hist = np.empty(n, np.int64)

    for w in range(n):
        pend[0, 0, w] = w
    _refresh_scores(pend[0, 0], n, np.int64(0), n - 1, words, tags, vl[0, 0], vr[0, 0], lc[0, 0],
                    rc[0, 0], W, mask, cache[0, 0], feats)
    correct[0, 0] = True
    n_items = 1
    for step in range(n - 1):
        cur = step % 2
        nxt = 1 - cur
        r = n - step
        count = 0
        best_c = -np.inf
        best_c_b = -1
        best_c_j = -1
        best_c_a = -1
        for b in range(n_items):
            for j in range(r):
                w = pend[cur, b, j]
                for a in range(2):
                    if (a == LEFT and j == 0) or (a == RIGHT and j == r - 1):
                        continue
                    cand = score[cur, b] + cache[cur, b, w, a]
                    head = pend[cur, b, j - 1] if a == LEFT else pend[cur, b, j + 1]
                    sig = signature[cur, b] ^ action_key(w, head)
                    count = offer_candidate(cand, sig, b, j, a, top_score, top_sig, top_b, top_j,
                                            top_a, count, s, merge)
                    if train and correct[cur, b] and cand > best_c and action_is_correct(
                        pend[cur, b], r, j, a, vl[cur, b], vr[cur, b], gold_heads,
                        gold_n_children,
                    ):
                        best_c, best_c_b, best_c_j, best_c_a = cand, b, j, a
        any_correct = False
        for k in range(count):
            b, j, a = top_b[k], top_j[k], top_a[k]
            pend[nxt, k, :r] = pend[cur, b, :r]
            vl[nxt, k] = vl[cur, b]
            vr[nxt, k] = vr[cur, b]
            lc[nxt, k] = lc[cur, b]
            rc[nxt, k] = rc[cur, b]
            heads[nxt, k] = heads[cur, b]
            if train:
                correct[nxt, k] = correct[cur, b] and action_is_correct(
                    pend[cur, b], r, j, a, vl[cur, b], vr[cur, b], gold_heads, gold_n_children
                )
                any_correct = any_correct or correct[nxt, k]
            dep = pend[cur, b, j]
            extend_item(order, hist, cache, score, signature, cur, b, nxt, k, step, dep,
                        2 * dep + a, top_score[k], top_sig[k])
            new_r = apply_action(pend[nxt, k], r, j, a, vl[nxt, k], vr[nxt, k], lc[nxt, k],
                                 rc[nxt, k], heads[nxt, k])
            _refresh_scores(pend[nxt, k], new_r, j - 3, j + 2, words, tags, vl[nxt, k],
                            vr[nxt, k], lc[nxt, k], rc[nxt, k], W, mask, cache[nxt, k], feats)
        n_items = count
        if train and best_c_b < 0:
            return False  # a non-projective gold tree: no correct action exists, no update
        if train and (not any_correct or step == n - 2):
            final = step == n - 2
            if any_correct and final and correct[nxt, 0]:
                break  # the best complete sequence is correct: no update
            # the best correct extension (TOPC) against the best sequence in the beam
            length = early_update(record, topc_hist, hist[cur, best_c_b], step,
                                  2 * pend[cur, best_c_b, best_c_j] + best_c_a, best_c,
                                  top_score[0], final)
            _update_sequence(topc_hist, length, 1.0, words, tags, W, U, counter, mask)
            _update_sequence(hist[nxt, 0], length, -1.0, words, tags, W, U, counter, mask)
            return False
    best = (n - 1) % 2
    for w in range(n):
        heads_out[w] = heads[best, 0, w] + 1
        order_out[w] = order[best, 0, w]
    return True


@njit(cache=True, nogil=True)
def _run_batch(sentences, gold, sentence_order, perceptron, search, train, heads_out, order_out,
               records):
    # One compiled entry point for training and prediction: a second one would
    # have numba optimise the whole beam_parse tree once more on first use.
    n_clean = 0
    words, tags, offsets = sentences
    W, U, count = perceptron
    for i in sentence_order:
        lo, hi, counter = next_sentence(offsets, i, count, train)
        if beam_parse(words[lo:hi], tags[lo:hi], gold.heads[lo:hi], gold.n_children[lo:hi], W, U,
                      counter, search.beam_size, search.merge, train, heads_out[lo:hi],
                      order_out[lo:hi], records[i]):
            n_clean += 1
    return n_clean


def train_epoch(sentences, gold, sentence_order, perceptron, search, records):
    """One perceptron pass over the sentences, in ``sentence_order``.

    Updates ``perceptron`` in place; ``records[i]`` gets the update record
    of sentence i (see :func:`beam_parse`). Returns the number of sentences
    that needed no update.
    """
    scratch = np.empty(len(sentences.words), np.int64)
    return _run_batch(sentences, gold, sentence_order, perceptron, search, True, scratch,
                      np.empty_like(scratch), records)


def parse(sentences, weights, search):
    """Heads (1-based, 0 = root) and attachment steps of every word, laid end to end."""
    n_sentences = len(sentences.offsets) - 1
    heads = np.empty(len(sentences.words), np.int64)
    order = np.empty_like(heads)
    unread = Gold(np.empty_like(heads), np.empty_like(heads))
    _run_batch(sentences, unread, np.arange(n_sentences), predicting(weights), search, False,
               heads, order, np.zeros((n_sentences, 5)))
    return heads, order
