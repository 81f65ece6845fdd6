"""Numba kernels of the easy-first beam tagger (Ma et al. 2013 with Shen et al. 2007 features).

An action assigns tag ``t`` to one untagged word ``j``; after ``n`` actions every
word is tagged. A word's features are static (its own form, affixes, shape and
flags, the neighbouring words, the ambiguity classes of the word and its
neighbours: hashed by :func:`static_feature_keys`, then rows of
``static_rows``, 0 meaning "no such feature")
plus the tags already given to its neighbours: ``t_{j-1}``, ``t_{j+1}``,
``(t_{j-2}, t_{j-1})``, ``(t_{j+1}, t_{j+2})`` and ``(t_{j-1}, t_{j+1})``. A
neighbour's tag value is its context value ``context.values[tag]`` (the tag id
itself when the tag set is small; with many tags, as FEATS strings or lemma edit
scripts, the rarer tags share one value so that the block stays small), ``C``
(``context.n_values``) when still untagged and ``C + 1`` outside the sentence;
those features index a dense block of rows starting at ``context.base``. ``W``
has one column per tag, which conjoins every feature with the action's tag.

Tags may have parts (``context.parts``: a FEATS string's ``Feature=Value``
pairs). Each part of the two neighbours' tags is then one more tag-context
feature, and ``W`` has a column per part after the tags' columns: a static
feature's score for a tag adds the weights of the tag's parts to its own.
Tag-context features keep to the tags' columns, which the cached scores of
``_refresh`` are.

Tagging word ``j`` changes only the dynamic features of ``j-2..j+2``, so only
their cached scores are recomputed.

Training reads and updates a dense ``W``. A fitted tagger predicts with the
same table in CSR form, ``(indptr, indices, data)``: with hundreds of tags
(FEATS, lemma scripts) fewer than 1% of its cells are non-zero, so scoring
adds only those and the model loads without building the dense table. Both
forms add every non-zero weight in the same order, so they tag alike.
"""

from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from ..kernels.hashing import feature_hash
from ._beam import (action_key, early_update, extend_item, new_beam, new_candidates,
                    offer_candidate, predicting, next_sentence)

N_DYNAMIC = 5
_CONTEXT = (-2, -1, 1, 2)  # positions of the neighbouring words read
OUTSIDE = -2  # the neighbour position lies outside the sentence (ids are never negative)


@njit(cache=True, nogil=True)
def static_feature_keys(form, lower, attributes, suffix, ambiguity, input_ids, offsets):
    """Hashed static features, (n_tokens, n_templates); -1 where one is absent.

    Templates: bias, form, lower-cased form, each attribute, each context
    word, the word pairs (w-1, w), (w, w+1) and (w-1, w+1), the suffix
    conjoined with w-1 and with w+1 (every word here lower-cased), and when
    ``ambiguity`` is not empty the ambiguity classes a(w-1), a(w+1), a(w),
    (a(w-1), a(w)) and (a(w), a(w+1)).

    ``form`` and ``lower`` hold vocabulary ids, ``attributes`` a row of
    word-type attribute ids per token (prefixes, suffixes, shape, flags) and
    ``suffix`` one of those columns; 0 is an absent or unseen attribute,
    which gives no feature. ``ambiguity`` holds one class id per token (the
    set of tags the word had in training), 0 for a rare or unseen word, whose
    own class templates are then absent; it is empty to leave the class
    templates out. ``input_ids`` holds per token the ids of tags that earlier
    taggers wrote (a column per field, 0 unknown); each column g gives
    g(w), g(w-1), g(w+1) and (g(w), suffix).
    """
    n_tokens, n_attributes = attributes.shape
    n_context = len(_CONTEXT)
    n_class = 5 if ambiguity.shape[0] > 0 else 0
    n_inputs = input_ids.shape[1]
    out = np.full((n_tokens, 3 + n_attributes + n_context + 5 + n_class + 4 * n_inputs), -1,
                  np.int64)
    for i in range(len(offsets) - 1):
        lo = offsets[i]
        hi = offsets[i + 1]
        for j in range(lo, hi):
            out[j, 0] = feature_hash(0, 0, 0, 0, 0, 0)
            out[j, 1] = feature_hash(1, form[j], 0, 0, 0, 0)
            out[j, 2] = feature_hash(2, lower[j], 0, 0, 0, 0)
            f = 3
            for a in range(n_attributes):
                if attributes[j, a] > 0:
                    out[j, f] = feature_hash(f, attributes[j, a], 0, 0, 0, 0)
                f += 1
            for c in range(n_context):
                q = j + _CONTEXT[c]
                word = lower[q] if lo <= q < hi else OUTSIDE
                out[j, f] = feature_hash(f, word, 0, 0, 0, 0)
                f += 1
            before = lower[j - 1] if j > lo else OUTSIDE
            after = lower[j + 1] if j + 1 < hi else OUTSIDE
            out[j, f] = feature_hash(f, before, lower[j], 0, 0, 0)
            out[j, f + 1] = feature_hash(f + 1, lower[j], after, 0, 0, 0)
            out[j, f + 2] = feature_hash(f + 2, before, after, 0, 0, 0)
            if suffix[j] > 0:
                out[j, f + 3] = feature_hash(f + 3, suffix[j], before, 0, 0, 0)
                out[j, f + 4] = feature_hash(f + 4, suffix[j], after, 0, 0, 0)
            if n_class > 0:
                f += 5
                own = ambiguity[j]
                before = ambiguity[j - 1] if j > lo else OUTSIDE
                after = ambiguity[j + 1] if j + 1 < hi else OUTSIDE
                out[j, f] = feature_hash(f, before, 0, 0, 0, 0)
                out[j, f + 1] = feature_hash(f + 1, after, 0, 0, 0, 0)
                if own > 0:
                    out[j, f + 2] = feature_hash(f + 2, own, 0, 0, 0, 0)
                    out[j, f + 3] = feature_hash(f + 3, before, own, 0, 0, 0)
                    out[j, f + 4] = feature_hash(f + 4, own, after, 0, 0, 0)
            f += 5
            for c in range(n_inputs):
                own = input_ids[j, c]
                before = input_ids[j - 1, c] if j > lo else OUTSIDE
                after = input_ids[j + 1, c] if j + 1 < hi else OUTSIDE
                out[j, f] = feature_hash(f, before, 0, 0, 0, 0)
                out[j, f + 1] = feature_hash(f + 1, after, 0, 0, 0, 0)
                if own > 0:
                    out[j, f + 2] = feature_hash(f + 2, own, 0, 0, 0, 0)
                    out[j, f + 3] = feature_hash(f + 3, own, suffix[j], 0, 0, 0)
                f += 4
    return out


@njit(cache=True, nogil=True, inline="always")
def _add_dense_row(weights, row, out):
    for t in range(out.shape[0]):
        out[t] += weights[row, t]


@njit(cache=True, nogil=True, inline="always")
def _add_sparse_row(weights, row, out):
    indptr, indices, data, dense_of_row, dense = weights
    d = dense_of_row[row]
    if d >= 0:
        # as for a dense table, only the columns ``out`` holds: a tag-context row is
        # added to the tags' columns alone (its part columns are zero)
        _add_dense_row(dense, d, out)
        return
    for k in range(indptr[row], indptr[row + 1]):
        out[indices[k]] += data[k]


def add_row(weights, row, out):
    """``out += weights[row]``, for a dense table or the tuple :func:`scoring_table`
    makes of a CSR one (where only a sparse row's stored cells are added)."""
    (_add_sparse_row if isinstance(weights, tuple) else _add_dense_row)(weights, row, out)


@overload(add_row, inline="always")
def _add_row_of(weights, row, out):
    # numba picks the form by the type of the table, at compile time
    if isinstance(weights, types.BaseTuple):
        return lambda weights, row, out: _add_sparse_row(weights, row, out)
    return lambda weights, row, out: _add_dense_row(weights, row, out)


@njit(cache=True, nogil=True)
def _prediction_cell(current, sums, count, average, i, t):
    # as utils._training.prediction_weights computes each cell, then float32
    if average:
        return np.float32(current[i, t] - sums[i, t] / max(count, 1.0))
    return np.float32(current[i, t])


@njit(cache=True, nogil=True)
def prediction_table(current, sums, count, average):
    """The CSR ``(indptr, indices, data)`` of the prediction weights of a training
    table (utils._training.prediction_weights, without the dense float32 copy and
    the float64 temporaries it needs: a FEATS table of EWT is 52 million cells)."""
    n_rows, n_tags = current.shape
    indptr = np.zeros(n_rows + 1, np.int64)
    for i in range(n_rows):
        kept = 0
        for t in range(n_tags):
            if _prediction_cell(current, sums, count, average, i, t) != 0:
                kept += 1
        indptr[i + 1] = indptr[i] + kept
    indices = np.empty(indptr[n_rows], np.int32)
    data = np.empty(indptr[n_rows], np.float32)
    k = 0
    for i in range(n_rows):
        for t in range(n_tags):
            value = _prediction_cell(current, sums, count, average, i, t)
            if value != 0:
                indices[k] = t
                data[k] = value
                k += 1
    return indptr, indices, data


# A CSR row with at least this fraction of its cells stored is added as a dense
# row: contiguous adds beat scattered ones, and these few rows (the features of
# frequent words, suffixes and input tags) take most of the adds. On EWT test
# this made the four taggers' kernels 30% faster for 7 MB of float32.
DENSE_ROW_FRACTION = 0.125


def scoring_table(weights):
    """What the kernels read of a weight table: a dense array as it is; of a SciPy
    CSR table, ``(indptr, indices, data, dense_of_row, dense)``, where ``dense``
    holds its densest rows as float32 rows and ``dense_of_row`` says which (-1 for
    the rows left sparse). The scores are the same either way."""
    if not hasattr(weights, "indptr"):
        return weights
    indptr = np.ascontiguousarray(weights.indptr, np.int64)
    dense_rows = np.flatnonzero(np.diff(indptr) >= DENSE_ROW_FRACTION * weights.shape[1])
    dense_of_row = np.full(weights.shape[0], -1, np.int64)
    dense_of_row[dense_rows] = np.arange(len(dense_rows))
    return (indptr, np.ascontiguousarray(weights.indices, np.int32),
            np.ascontiguousarray(weights.data), dense_of_row,
            np.ascontiguousarray(weights[dense_rows].toarray(), np.float32))


class TagContext(NamedTuple):
    """Where the tag-context features live and what a neighbour's tag reads as."""

    base: int
    """First weight row of the tag-context block."""
    values: np.ndarray
    """int64, one per tag: the value a neighbour with that tag gives, in ``[0, n_values)``."""
    n_values: int
    parts: np.ndarray
    """int64, (n_tags, most parts of a tag): the part ids of each tag (a FEATS
    string's ``Feature=Value`` pairs), -1 padded; no columns when tags have no parts."""
    n_parts: int


def tag_context(base, values, parts):
    """A :class:`TagContext`; ``values`` maps each tag id to its context value, ``parts``
    to its part ids (-1 padded rows)."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    parts = np.ascontiguousarray(parts, dtype=np.int64).reshape(len(values), -1)
    return TagContext(int(base), values, int(values.max()) + 1 if len(values) else 0,
                      parts, int(parts.max()) + 1 if parts.size else 0)


def n_dynamic_rows(n_values, n_parts):
    """Rows used by the tag-context features when tags read as ``n_values`` values
    and have ``n_parts`` distinct parts."""
    v = n_values + 2
    return 2 * v + 3 * v * v + 2 * n_parts


@njit(cache=True, nogil=True)
def n_dynamic_features(context):
    """Tag-context features a word can have: the five tag templates and the parts of
    the tags of its two neighbours."""
    return N_DYNAMIC + 2 * context.parts.shape[1]


@njit(cache=True, nogil=True, inline="always")
def _neighbour_tag(tags, q, n, context):
    if q < 0 or q >= n:
        return context.n_values + 1
    return context.values[tags[q]] if tags[q] >= 0 else context.n_values


@njit(cache=True, nogil=True)
def dynamic_rows(tags, j, context, out):
    """Fill ``out`` (:func:`n_dynamic_features` long) with the rows of word ``j``'s
    tag-context features, -1 for a part a neighbour's tag does not have."""
    n = tags.shape[0]
    v = context.n_values + 2
    base = context.base
    left2 = _neighbour_tag(tags, j - 2, n, context)
    left = _neighbour_tag(tags, j - 1, n, context)
    right = _neighbour_tag(tags, j + 1, n, context)
    right2 = _neighbour_tag(tags, j + 2, n, context)
    out[0] = base + left
    out[1] = base + v + right
    out[2] = base + 2 * v + left2 * v + left
    out[3] = base + 2 * v + v * v + right * v + right2
    out[4] = base + 2 * v + 2 * v * v + left * v + right
    parts = context.parts
    width = parts.shape[1]
    part_base = base + 2 * v + 3 * v * v
    for side in range(2):
        q = j - 1 if side == 0 else j + 1
        tag = tags[q] if 0 <= q < n else -1
        for k in range(width):
            part = parts[tag, k] if tag >= 0 else -1
            out[N_DYNAMIC + side * width + k] = (
                part_base + side * context.n_parts + part if part >= 0 else -1)


@njit(cache=True, nogil=True, inline="always")
def _fold_parts(scores, n_tags, context):
    """Add to each tag's score the scores of its parts (columns ``n_tags + part``)."""
    parts = context.parts
    for t in range(n_tags):
        for k in range(parts.shape[1]):
            p = parts[t, k]
            if p < 0:
                break
            scores[t] += scores[n_tags + p]


@njit(cache=True, nogil=True, inline="always")
def _update_parts(W, U, row, t, n_tags, context, delta, counter):
    """Add ``delta`` to the weights of static feature ``row`` with the parts of tag ``t``."""
    for k in range(context.parts.shape[1]):
        p = context.parts[t, k]
        if p < 0:
            break
        W[row, n_tags + p] += delta
        U[row, n_tags + p] += counter * delta


@njit(cache=True, nogil=True)
def _refresh(tags, lo, hi, static, W, n_tags, context, cache, best, rows):
    """Recompute the cached scores of the untagged words ``lo..hi`` and each one's
    best tags, ``best[q]`` (as many as the beam is wide), best first, the lower
    tag first among equal scores. ``W`` dense or CSR (see :func:`add_row`)."""
    n = tags.shape[0]
    width = best.shape[1]
    for q in range(max(lo, 0), min(hi, n - 1) + 1):
        if tags[q] >= 0:
            continue
        dynamic_rows(tags, q, context, rows)
        cache[q] = static[q]
        for row in rows:
            if row >= 0:
                add_row(W, row, cache[q])
        filled = 0
        for t in range(n_tags):
            total = cache[q, t]
            if filled == width and total <= cache[q, best[q, width - 1]]:
                continue
            pos = filled if filled < width else width - 1
            while pos > 0 and cache[q, best[q, pos - 1]] < total:
                best[q, pos] = best[q, pos - 1]
                pos -= 1
            best[q, pos] = t
            if filled < width:
                filled += 1


@njit(cache=True, nogil=True)
def _static_scores(static_rows, W, n_tags, context):
    n, k = static_rows.shape
    out = np.zeros((n, n_tags + context.n_parts))
    for j in range(n):
        for f in range(k):
            row = static_rows[j, f]
            if row > 0:
                add_row(W, row, out[j])
        _fold_parts(out[j], n_tags, context)
    return out[:, :n_tags]


@njit(cache=True, nogil=True)
def _update_sequence(hist, length, delta, static_rows, W, U, counter, n_tags, context):
    """Add ``delta`` times the features of the actions ``hist[:length]`` (``j * T + t``)."""
    n, k = static_rows.shape
    tags = np.full(n, -1, np.int64)
    rows = np.empty(n_dynamic_features(context), np.int64)
    for step in range(length):
        j = hist[step] // n_tags
        t = hist[step] % n_tags
        for f in range(k):
            row = static_rows[j, f]
            if row > 0:
                W[row, t] += delta
                U[row, t] += counter * delta
                _update_parts(W, U, row, t, n_tags, context, delta, counter)
        dynamic_rows(tags, j, context, rows)
        for row in rows:
            if row >= 0:
                W[row, t] += delta
                U[row, t] += counter * delta
        tags[j] = t


@njit(cache=True, nogil=True)
def beam_tag(static_rows, gold, scorer, W, U, counter, T, context, beam_size, merge, train,
             resume, tags_out, order_out, record):
    """Tag one sentence with Algorithm 1; with ``train`` also run Algorithm 2.

    Mirrors :func:`._parser_kernels.beam_parse`: ``record`` gets ``(updated,
    score_correct, score_predicted, early, length)`` (of the last update);
    returns False when training made an update. After an early update,
    ``resume`` goes on from the best correct sequence (LaSO) instead of
    leaving the rest of the sentence. Scores are read from ``scorer`` (dense or CSR,
    see :func:`add_row`), updates go to ``W`` and ``U`` (the dense training
    table and its sums, the scorer itself in training); ``T`` tags.
    """
    n = static_rows.shape[0]
    s = beam_size
    record[0] = 0.0
    static = _static_scores(static_rows, scorer, T, context)
    tags = np.full((2, s, n), -1, np.int64)
    order, hist, cache, score, signature, correct = new_beam(s, n, T)
    # a step's best s extensions of an item are among its words' best s tags each
    # (a tag ranked lower is beaten by s other extensions of the same item), so
    # only those are offered; with T tags this saves a factor T / s per step
    best = np.zeros((2, s, n, min(s, T)), np.int64)
    rows = np.empty(n_dynamic_features(context), np.int64)
    top_score, top_sig, top_b, top_j, top_t = new_candidates(s)
    topc_hist = np.empty(n, np.int64)
    updated = False

    _refresh(tags[0, 0], np.int64(0), n - 1, static, scorer, T, context, cache[0, 0],
             best[0, 0], rows)
    correct[0, 0] = True
    n_items = 1
    for step in range(n):
        cur = step % 2
        nxt = 1 - cur
        count = 0
        best_c = -np.inf
        best_c_b = -1
        best_c_j = -1
        for b in range(n_items):
            base = score[cur, b]
            for j in range(n):
                if tags[cur, b, j] >= 0:
                    continue
                for r in range(best.shape[3]):
                    t = best[cur, b, j, r]
                    cand = base + cache[cur, b, j, t]
                    sig = signature[cur, b] ^ action_key(j, t)
                    count = offer_candidate(cand, sig, b, j, t, top_score, top_sig, top_b, top_j,
                                            top_t, count, s, merge)
                if train and correct[cur, b]:
                    cand = base + cache[cur, b, j, gold[j]]
                    if cand > best_c:
                        best_c, best_c_b, best_c_j = cand, b, j
        any_correct = False
        for k in range(count):
            b, j, t = top_b[k], top_j[k], top_t[k]
            tags[nxt, k] = tags[cur, b]
            tags[nxt, k, j] = t
            if train:
                correct[nxt, k] = correct[cur, b] and t == gold[j]
                any_correct = any_correct or correct[nxt, k]
            extend_item(order, hist, cache, score, signature, cur, b, nxt, k, step, j, j * T + t,
                        top_score[k], top_sig[k])
            best[nxt, k] = best[cur, b]
            _refresh(tags[nxt, k], j - 2, j + 2, static, scorer, T, context, cache[nxt, k],
                     best[nxt, k], rows)
        n_items = count
        if train and (not any_correct or step == n - 1):
            final = step == n - 1
            if any_correct and final and correct[nxt, 0]:
                break  # the best complete sequence is correct: no update
            length = early_update(record, topc_hist, hist[cur, best_c_b], step,
                                  best_c_j * T + gold[best_c_j], best_c, top_score[0], final)
            _update_sequence(topc_hist, length, 1.0, static_rows, W, U, counter, T, context)
            _update_sequence(hist[nxt, 0], length, -1.0, static_rows, W, U, counter, T,
                             context)
            updated = True
            if final or not resume:
                return False
            # go on from the best correct item, extended by its correct step, with
            # every score recomputed under the updated weights
            b, j, t = best_c_b, best_c_j, gold[best_c_j]
            tags[nxt, 0] = tags[cur, b]
            tags[nxt, 0, j] = t
            correct[nxt, 0] = True
            extend_item(order, hist, cache, score, signature, cur, b, nxt, 0, step, j, j * T + t,
                        best_c, signature[cur, b] ^ action_key(j, t))
            static = _static_scores(static_rows, scorer, T, context)
            _refresh(tags[nxt, 0], np.int64(0), n - 1, static, scorer, T, context, cache[nxt, 0],
                     best[nxt, 0], rows)
            n_items = 1
    best = n % 2
    tags_out[:] = tags[best, 0]
    order_out[:] = order[best, 0]
    return not updated


@njit(cache=True, nogil=True)
def _run_batch(static_rows, offsets, gold, sentence_order, scorer, perceptron, n_tags,
               context, search, train, resume, tags_out, order_out, records):
    # one entry point for training and prediction, as in the parser's kernels
    n_clean = 0
    W, U, count = perceptron
    for i in sentence_order:
        lo, hi, counter = next_sentence(offsets, i, count, train)
        if beam_tag(static_rows[lo:hi], gold[lo:hi], scorer, W, U, counter, n_tags, context,
                    search.beam_size, search.merge, train, resume, tags_out[lo:hi],
                    order_out[lo:hi], records[i]):
            n_clean += 1
    return n_clean


def train_epoch(static_rows, offsets, gold, sentence_order, perceptron, context, search,
                resume, records):
    """One perceptron pass; as :func:`._parser_kernels.train_epoch`, ``gold`` the tag ids,
    ``resume`` as in :func:`beam_tag`."""
    scratch = np.empty(len(gold), np.int64)
    W = perceptron.weights
    return _run_batch(static_rows, offsets, gold, sentence_order, W, perceptron,
                      len(context.values),
                      context, search, True, resume, scratch, np.empty_like(scratch), records)


def tag(static_rows, offsets, scorer, context, search):
    """Tag ids and tagging steps of every word, laid end to end; ``scorer`` as
    :func:`scoring_table` makes it."""
    n_sentences = len(offsets) - 1
    tags = np.empty(len(static_rows), np.int64)
    order = np.empty_like(tags)
    n_tags = len(context.values)
    _run_batch(static_rows, offsets, np.empty_like(tags), np.arange(n_sentences), scorer,
               predicting(np.zeros((0, 0))), n_tags, context, search, False, False, tags, order,
               np.zeros((n_sentences, 5)))
    return tags, order
