"""Numba kernels of the low-rank tensor parser: arc scores and one training step.

The parameters are plain arrays: ``theta`` (hashed MST weights), ``U`` and
``V`` of shape (n_word_columns, rank) and ``W`` of shape (N_ARC_BUCKETS,
rank), stored feature-major so that one feature's r weights are contiguous.
The entry points take them, the encoded corpus and the settings as three
named tuples built at call time (:class:`TokenArrays`, :class:`Weights`,
:class:`Config`), so the fitted estimator keeps plain arrays. Training passes
its float64 weights, prediction the fitted model's float32 ones; the scores
are accumulated in float64 either way, so a float32 weight scores exactly as
the same value in float64 would.

The arc score (Lei et al. 2014, Eq. 3) is

    s(h -> m) = (1 - gamma) * sum_i [U phi_h]_i [V phi_m]_i [W phi_hm]_i
                + gamma * <theta, phi_{h->m}>

``U phi_h`` and ``V phi_m`` are computed once per token and ``W phi_hm`` once
per bucket, so the tensor part of all n^2 arcs costs O(n^2 r).

Averaging uses the lazy trick (Daume 2006): beside each weight array ``w``
an accumulator (the ``sums``) receives ``c * delta`` for an update made after c
instances, and the average over T instances is ``w - acc / T``.
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from ..kernels.sorting import stable_argsort
from ._features import (
    BIAS_BUCKET,
    N_ARC_BUCKETS,
    add_between,
    add_between_score,
    arc_bucket,
    arc_feature_ids,
    between_feature_ids,
    between_tags,
    max_arc_features,
)


class TokenArrays(NamedTuple):
    """The arrays of an encoded corpus that the arc scores read (root slot per sentence)."""

    form: np.ndarray
    lemma: np.ndarray
    xpos: np.ndarray  # the fine tag
    upos: np.ndarray  # the coarse tag
    wf_off: np.ndarray  # word features of slot t: wf_idx/wf_val[wf_off[t]:wf_off[t + 1]]
    wf_idx: np.ndarray
    wf_val: np.ndarray


class Weights(NamedTuple):
    """theta, U, V, W (or their averaging sums), updated in place by training."""

    theta: np.ndarray
    U: np.ndarray
    V: np.ndarray
    W: np.ndarray


class Config(NamedTuple):
    gamma: float
    C: float
    n_features: int
    pos: bool
    """Whether the templates read the tag fields (the parser's ``pos`` is not None)."""


# the score of an arc a pruner dropped (see ._pruning): below any tree of kept arcs,
# finite so that the decoders always find a tree
PRUNED_SCORE = -1.0e4
# the keep mask of the arc scorers that scores every arc
ALL_ARCS = np.zeros((0, 0), dtype=np.bool_)

# Small helpers with one or two call sites are inlined (inline="always"):
# every separately compiled function costs a few tenths of a second on first use.


@njit(cache=True, nogil=True, inline="always")
def project_tokens(M, start, n, wf_off, wf_idx, wf_val):
    """Rows ``M^T phi_w`` for slots 0..n of a sentence: shape (n + 1, rank)."""
    rank = M.shape[1]
    out = np.zeros((n + 1, rank))
    for i in range(n + 1):
        t = start + i
        for j in range(wf_off[t], wf_off[t + 1]):
            f = wf_idx[j]
            v = wf_val[j]
            for r in range(rank):
                out[i, r] += v * M[f, r]
    return out


@njit(cache=True, nogil=True, inline="always")
def project_buckets(W):
    """``W^T phi_hm`` for every bucket: the bucket's row plus the bias row (in float64)."""
    out = np.empty((N_ARC_BUCKETS, W.shape[1]))
    for b in range(N_ARC_BUCKETS):
        for r in range(W.shape[1]):
            out[b, r] = np.float64(W[b, r]) + (W[BIAS_BUCKET, r] if b != BIAS_BUCKET else 0.0)
    return out


@njit(cache=True, nogil=True)
def sentence_scores(start, n, form, lemma, xpos, upos, theta, n_features, pos,
                    gamma, Uh, Vm, Wb, keep):
    """Arc score matrix (n + 1, n + 1), ``scores[h, m]``; column 0 and diagonal are 0.

    ``Uh``, ``Vm``, ``Wb`` are the projections of :func:`project_tokens` and
    :func:`project_buckets` (ignored when gamma == 1). ``keep``: the arcs to score
    (``keep[h, m]``), the others getting ``pruned``; an empty array scores them all.
    """
    pruning = keep.shape[0] > 0
    scores = np.zeros((n + 1, n + 1))
    buf = np.empty(max_arc_features(n), dtype=np.int64)
    between = between_tags(n)
    rank = Uh.shape[1]
    for h in range(n + 1):
        # m walks away from h on each side, so the words between grow by one per arc
        for side in range(2):
            step = 1 if side else -1
            between[3][:] = 0  # empty: no word lies between h and its neighbour
            m = h + step
            while 1 <= m <= n:
                if pruning and not keep[h, m]:
                    scores[h, m] = PRUNED_SCORE
                    if gamma > 0.0 and pos:
                        add_between(between, start, n, h, m, xpos, upos)
                    m += step
                    continue
                s = 0.0
                if gamma > 0.0:
                    k = arc_feature_ids(start, n, h, m, form, lemma, xpos, upos, pos,
                                        n_features, buf)
                    for j in range(k):
                        s += theta[buf[j]]
                    if pos:
                        s = add_between_score(s, between, start, n, h, m, xpos, upos,
                                              n_features, theta)
                        add_between(between, start, n, h, m, xpos, upos)
                    s *= gamma
                if gamma < 1.0:
                    b = arc_bucket(h, m)
                    t = 0.0
                    for r in range(rank):
                        t += Uh[h, r] * Vm[m, r] * Wb[b, r]
                    s += (1.0 - gamma) * t
                scores[h, m] = s
                m += step
    return scores


@njit(cache=True, nogil=True)
def sentence_arc_scores(start, n, tokens, weights, config, keep):
    """Arc score matrix of the sentence at slot ``start`` with ``n`` words, of the arcs
    ``keep`` holds (see :func:`sentence_scores`).

    Returns ``(scores, Uh, Vm, Wb)``: the projections behind the tensor part
    are zeros when gamma == 1 (no tensor).
    """
    rank = weights.U.shape[1]
    if config.gamma < 1.0:
        Uh = project_tokens(weights.U, start, n, tokens.wf_off, tokens.wf_idx, tokens.wf_val)
        Vm = project_tokens(weights.V, start, n, tokens.wf_off, tokens.wf_idx, tokens.wf_val)
        Wb = project_buckets(weights.W)
    else:
        Uh = np.zeros((n + 1, rank))
        Vm = Uh
        Wb = np.zeros((N_ARC_BUCKETS, rank))
    scores = sentence_scores(start, n, tokens.form, tokens.lemma, tokens.xpos, tokens.upos,
                             weights.theta, config.n_features, config.pos, config.gamma,
                             Uh, Vm, Wb, keep)
    return scores, Uh, Vm, Wb


@njit(cache=True, nogil=True, inline="always")
def tree_score(scores, heads):
    total = 0.0
    for m in range(1, len(heads) + 1):
        total += scores[heads[m - 1], m]
    return total


# ---------------------------------------------------------------- PA update


@njit(cache=True, nogil=True, inline="always")
def differing_arcs(gold, pred):
    """The arcs in which two trees differ, as (heads, modifiers, signs): for every word
    whose heads differ, its gold arc (sign +1) then its predicted arc (sign -1)."""
    heads = np.empty(2 * len(gold), dtype=np.int64)
    modifiers = np.empty(2 * len(gold), dtype=np.int64)
    signs = np.empty(2 * len(gold))
    size = 0
    for m in range(1, len(gold) + 1):
        if gold[m - 1] == pred[m - 1]:
            continue
        heads[size], heads[size + 1] = gold[m - 1], pred[m - 1]
        modifiers[size] = modifiers[size + 1] = m
        signs[size], signs[size + 1] = 1.0, -1.0
        size += 2
    return heads[:size], modifiers[:size], signs[:size]


@njit(cache=True, nogil=True, inline="always")
def theta_difference(start, n, arcs, form, lemma, xpos, upos, pos, n_features):
    """d_theta = phi(gold tree) - phi(predicted tree) over the :func:`differing_arcs`,
    merged: (ids, values)."""
    heads, modifiers, signs = arcs
    cap = max_arc_features(n)
    ids = np.empty(len(heads) * cap, dtype=np.int64)
    values = np.empty(len(heads) * cap)
    buf = np.empty(cap, dtype=np.int64)
    weights = np.empty(cap)
    between = between_tags(n)
    size = 0
    for a in range(len(heads)):
        h, m = heads[a], modifiers[a]
        k = arc_feature_ids(start, n, h, m, form, lemma, xpos, upos, pos, n_features, buf)
        for j in range(k):
            ids[size] = buf[j]
            values[size] = signs[a]
            size += 1
        if pos:
            between[3][:] = 0
            for b in range(min(h, m) + 1, max(h, m)):
                add_between(between, start, n, h, b, xpos, upos)
            k = between_feature_ids(start, n, h, m, xpos, upos, n_features, between, buf,
                                    weights)
            for j in range(k):
                ids[size] = buf[j]
                values[size] = signs[a] * weights[j]
                size += 1
    return _merge_scalar(ids[:size], values[:size])


@njit(cache=True, nogil=True)
def _merge_rows(ids, rows):
    """Sum the rows of equal ids (ids sorted on output)."""
    order = stable_argsort(ids)
    out_ids = np.empty(len(ids), dtype=np.int64)
    out_rows = np.zeros((len(ids), rows.shape[1]))
    size = -1
    last = -1
    for j in order:
        if size < 0 or ids[j] != last:
            size += 1
            out_ids[size] = ids[j]
            last = ids[j]
        for r in range(rows.shape[1]):
            out_rows[size, r] += rows[j, r]
    return out_ids[:size + 1], out_rows[:size + 1]


@njit(cache=True, nogil=True, inline="always")
def _merge_scalar(ids, values):
    """Sum the values of equal ids (ids sorted on output)."""
    out_ids, rows = _merge_rows(ids, values.reshape(-1, 1))
    return out_ids, rows[:, 0].copy()


@njit(cache=True, nogil=True, inline="always")
def tensor_difference(which, start, arcs, wf_off, wf_idx, wf_val, Uh, Vm, Wb):
    """Gradient of the tensor score of gold minus predicted tree w.r.t. U, V or W, over
    the :func:`differing_arcs`.

    ``which`` is 0 (U: rows ``(V phi_m * W phi_hm) (x) phi_h``), 1 (V: rows
    ``(U phi_h * W phi_hm) (x) phi_m``) or 2 (W: rows ``(U phi_h * V phi_m)
    (x) phi_hm``). Returns merged (feature ids, rows of length rank).
    """
    heads, modifiers, signs = arcs
    rank = Uh.shape[1]
    size = 0
    for a in range(len(heads)):
        if which == 2:
            size += 2
        else:
            slot = start + (heads[a] if which == 0 else modifiers[a])
            size += wf_off[slot + 1] - wf_off[slot]
    ids = np.empty(size, dtype=np.int64)
    rows = np.empty((size, rank))
    k = 0
    for a in range(len(heads)):
        h, m, sign = heads[a], modifiers[a], signs[a]
        b = arc_bucket(h, m)
        if which == 2:
            for rep in range(2):
                ids[k] = BIAS_BUCKET if rep else b
                for r in range(rank):
                    rows[k, r] = sign * Uh[h, r] * Vm[m, r]
                k += 1
            continue
        slot = start + (h if which == 0 else m)
        for j in range(wf_off[slot], wf_off[slot + 1]):
            ids[k] = wf_idx[j]
            v = sign * wf_val[j]
            for r in range(rank):
                if which == 0:
                    rows[k, r] = v * Vm[m, r] * Wb[b, r]
                else:
                    rows[k, r] = v * Uh[h, r] * Wb[b, r]
            k += 1
    return _merge_rows(ids, rows)


@njit(cache=True, nogil=True, inline="always")
def passive_aggressive_step(loss, gamma, C, theta_ids, theta_val, tensor_ids, tensor_rows):
    """Closed-form PA step size tau (Lei et al. 2014, Section 4)."""
    norm = 0.0
    if gamma > 0.0:
        for v in theta_val:
            norm += gamma * gamma * v * v
    if gamma < 1.0:
        g2 = (1.0 - gamma) * (1.0 - gamma)
        for j in range(tensor_rows.shape[0]):
            for r in range(tensor_rows.shape[1]):
                norm += g2 * tensor_rows[j, r] * tensor_rows[j, r]
    if norm <= 0.0:
        return 0.0
    return min(C, loss / norm)


@njit(cache=True, nogil=True)
def passive_aggressive_update(start, n, gold, pred, scores, augmented, Uh, Vm, Wb,
                              tokens, weights, sums, config, counter, high_order):
    """One passive-aggressive update towards ``gold`` and away from ``pred``; returns the loss.

    ``scores`` and ``Uh``/``Vm``/``Wb`` are those of :func:`sentence_arc_scores`,
    ``augmented`` the scores plus the Hamming cost under which ``pred`` was
    decoded (the most violating tree). theta is updated with U, V or W,
    which one chosen by ``counter % 3`` (the alternating pairs of the
    paper); ``counter`` is the number of instances seen before this one,
    and ``sums`` receives ``counter`` times each change, for the lazy
    averaging. ``high_order`` is ``(ids, values, score gap)`` of the
    third-order parts: phi(gold) - phi(pred) and the score of pred's parts
    minus gold's (empty and 0.0 for first order); they join theta's update.
    """
    gamma = config.gamma
    rank = weights.U.shape[1]
    high_ids, high_values, high_gap = high_order
    loss = tree_score(augmented, pred) - tree_score(scores, gold) + high_gap
    if loss <= 0.0:
        return 0.0
    arcs = differing_arcs(gold, pred)
    theta_ids, theta_val = theta_difference(start, n, arcs, tokens.form, tokens.lemma,
                                            tokens.xpos, tokens.upos, config.pos,
                                            config.n_features)
    if len(high_ids):
        theta_ids, theta_val = _merge_scalar(np.concatenate((theta_ids, high_ids)),
                                             np.concatenate((theta_val, high_values)))
    which = counter % 3
    if gamma < 1.0:
        tensor_ids, tensor_rows = tensor_difference(which, start, arcs, tokens.wf_off,
                                                    tokens.wf_idx, tokens.wf_val, Uh, Vm, Wb)
    else:
        tensor_ids = np.zeros(0, dtype=np.int64)
        tensor_rows = np.zeros((0, rank))
    tau = passive_aggressive_step(loss, gamma, config.C, theta_ids, theta_val, tensor_ids,
                                  tensor_rows)
    if gamma > 0.0:
        step = tau * gamma
        for j in range(len(theta_ids)):
            delta = step * theta_val[j]
            weights.theta[theta_ids[j]] += delta
            sums.theta[theta_ids[j]] += counter * delta
    if gamma < 1.0:
        step = tau * (1.0 - gamma)
        if which == 0:
            M, M_acc = weights.U, sums.U
        elif which == 1:
            M, M_acc = weights.V, sums.V
        else:
            M, M_acc = weights.W, sums.W
        for j in range(len(tensor_ids)):
            f = tensor_ids[j]
            for r in range(rank):
                delta = step * tensor_rows[j, r]
                M[f, r] += delta
                M_acc[f, r] += counter * delta
    return loss
