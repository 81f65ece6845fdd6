"""Rank-space inference for CPD-decomposed PCFGs and HMMs (Yang, Liu & Tu 2022).

PCFG. The binary rule tensor is ``T[A, B, C] = sum_q U[A, q] V[B, q] W[C, q]``
with ``U`` over the nonterminals and ``V``, ``W`` over all symbols (nonterminals
first, then preterminals). Marginalising the state nodes leaves an inside pass
over rank vectors only::

    alpha[i, j] = sum_k left[i, k] * right[k, j]          (elementwise, O(r))
    left[i, j]  = alpha[i, j] @ (U^T V_N)                  (r x r, for width >= 2)
    right[i, j] = alpha[i, j] @ (U^T W_N)
    left[i, i+1] = e_i @ V_P,  right[i, i+1] = e_i @ W_P   (e_i: p(w_i | P))
    Z = (s^T U) . alpha[0, n]

so that a sentence costs O(n^3 r + n^2 r^2) once the ``r x r`` matrices are
built (O(m r^2) per grammar). Every span stores its vectors scaled by a
positive factor and the log of that factor: split-point sums combine the
log-factors in log space (one max per span) and the vectors in linear space.

Charts are indexed ``[sentence, width, start, rank]`` and all sentences of a
batch have the same length ``n``. The split sums run in parallel over the
spans of one width; the ``r x r`` products of one width are a single matrix
product over the whole batch.

HMM. ``p(z', x | z) = sum_q U[z, q] V[z', q] W[x, q]``; with ``K = V^T U`` the
forward pass is ``h_0 = (pi U) * W[x_0]``, ``h_t = (h_{t-1} K) * W[x_t]`` and
``p(x) = sum(h_{T-1})`` (the columns of ``V`` sum to one), O(T r^2), rescaled
to sum one at every step.
"""

import numpy as np
from numba import njit, prange


@njit(cache=True, nogil=True)
def _split_sum(left, right, lognorm, width, i, out):
    """Fill ``out`` with the scaled sum over split points of span (i, i+width).

    Returns the span's log-normaliser (``-inf`` when every split is zero).
    """
    j = i + width
    top = -np.inf
    for k in range(i + 1, j):
        s = lognorm[k - i, i] + lognorm[j - k, k]
        if s > top:
            top = s
    out[:] = 0.0
    if top == -np.inf:
        return -np.inf
    weight_cell = np.empty(1, out.dtype)  # keeps the inner loop in the chart's dtype
    for k in range(i + 1, j):
        weight_cell[0] = np.exp(lognorm[k - i, i] + lognorm[j - k, k] - top)
        weight = weight_cell[0]
        if weight == 0.0:
            continue
        lk = left[k - i, i]
        rk = right[j - k, k]
        for q in range(out.shape[0]):
            out[q] += weight * lk[q] * rk[q]
    biggest = out.max()
    if biggest <= 0.0:
        out[:] = 0.0
        return -np.inf
    out /= biggest
    return top + np.log(biggest)


@njit(cache=True, nogil=True, parallel=True)
def _each_span_of_width(width, left, right, lognorm, alpha, alpha_grad=None, left_grad=None,
                        right_grad=None):
    """The work on every span of one width, in parallel over the spans of the batch.

    Inside (no adjoints given): the span's rank vector into ``alpha`` and its
    log-normaliser into ``lognorm`` (:func:`_split_sum`). Outside: the adjoints
    of the span's left / right vectors (:func:`_child_adjoints`). Either way
    the spans of one width only read narrower (inside) or wider (outside)
    spans, so they are independent.
    """
    batch = left.shape[0]
    n = left.shape[2]
    n_spans = n - width + 1
    for task in prange(batch * n_spans):
        s = task // n_spans
        i = task % n_spans
        if alpha_grad is None:
            lognorm[s, width, i] = _split_sum(left[s], right[s], lognorm[s], width, i, alpha[s, width, i])
        else:
            _child_adjoints(alpha_grad[s], left[s], right[s], lognorm[s], left_grad[s, width, i],
                            right_grad[s, width, i], width, i)


@njit(cache=True, nogil=True)
def _gather_width(chart, width, n_spans):
    batch = chart.shape[0]
    r = chart.shape[3]
    out = np.empty((batch * n_spans, r), chart.dtype)
    for s in range(batch):
        for i in range(n_spans):
            out[s * n_spans + i] = chart[s, width, i]
    return out


@njit(cache=True, nogil=True)
def _scatter_width(rows, chart, width, n_spans, first_column):
    batch = chart.shape[0]
    r = chart.shape[3]
    for s in range(batch):
        for i in range(n_spans):
            chart[s, width, i] = rows[s * n_spans + i, first_column:first_column + r]


@njit(cache=True, nogil=True)
def _scaled_leaves(leaf):
    """Emission vectors divided by their maximum, and the logs of the maxima."""
    batch, n, n_pre = leaf.shape
    scaled = np.empty((batch * n, n_pre), leaf.dtype)
    lognorm = np.empty((batch, n))
    for s in range(batch):
        for i in range(n):
            biggest = leaf[s, i].max()
            if biggest > 0.0:
                scaled[s * n + i] = leaf[s, i] / biggest
                lognorm[s, i] = np.log(biggest)
            else:
                scaled[s * n + i] = 0.0
                lognorm[s, i] = -np.inf
    return scaled, lognorm


@njit(cache=True, nogil=True)
def rank_space_leaves(leaf, VP, WP):
    """Leaf charts: the width-1 left / right vectors ``e_i @ V_P``, ``e_i @ W_P``.

    ``leaf`` ``(b, n, PT)`` holds p(w_i | P). Returns ``(left, right, lognorm,
    scaled_leaves)``: charts ``(b, n + 1, n, r)`` indexed [sentence, width,
    start] with only width 1 filled, their log-normalisers ``(b, n + 1, n)``,
    and the emission vectors scaled to max 1 ``(b * n, PT)``. This O(n PT r)
    projection is the only per-word work that depends on the number of symbols
    (the paper counts it with the one-time precomputation).
    """
    batch, n, _ = leaf.shape
    r = VP.shape[1]
    dtype = VP.dtype
    left = np.zeros((batch, n + 1, n, r), dtype)
    right = np.zeros((batch, n + 1, n, r), dtype)
    lognorm = np.full((batch, n + 1, n), -np.inf)
    scaled, leaf_lognorm = _scaled_leaves(leaf)
    rows_left = np.dot(scaled, VP)
    rows_right = np.dot(scaled, WP)
    _scatter_width(rows_left, left, 1, n, 0)
    _scatter_width(rows_right, right, 1, n, 0)
    lognorm[:, 1, :] = leaf_lognorm
    return left, right, lognorm, scaled


@njit(cache=True, nogil=True)
def rank_space_recursion(left, right, lognorm, ML, MR, root_rank):
    """The rank-space inside recursion over leaf charts from :func:`rank_space_leaves`.

    Fills the wider spans of ``left``, ``right`` and ``lognorm`` in place and
    returns ``(log_z, alpha)``. Its cost, O(n^3 r + n^2 r^2) per sentence, does
    not depend on the number of symbols.
    """
    batch = left.shape[0]
    n = left.shape[2]
    r = left.shape[3]
    alpha = np.zeros((batch, n + 1, n, r), left.dtype)
    both = np.ascontiguousarray(np.concatenate((ML, MR), axis=1))
    for width in range(2, n + 1):
        _each_span_of_width(width, left, right, lognorm, alpha)
        if width < n:
            n_spans = n - width + 1
            products = np.dot(_gather_width(alpha, width, n_spans), both)
            _scatter_width(products, left, width, n_spans, 0)
            _scatter_width(products, right, width, n_spans, r)
    log_z = np.empty(batch)
    for s in range(batch):
        total = 0.0
        for q in range(r):
            total += root_rank[q] * alpha[s, n, 0, q]
        log_z[s] = lognorm[s, n, 0] + np.log(total) if total > 0.0 else -np.inf
    return log_z, alpha


@njit(cache=True, nogil=True)
def rank_space_inside(leaf, VP, WP, ML, MR, root_rank):
    """Rank-space inside pass over a batch of equal-length sentences.

    Parameters: ``leaf`` ``(b, n, PT)`` emission probabilities p(w_i | P) of the
    words; ``VP``, ``WP`` ``(PT, r)`` preterminal rows of ``V`` and ``W``;
    ``ML = U^T V_N`` and ``MR = U^T W_N`` ``(r, r)``; ``root_rank = s^T U``
    ``(r,)``. All floating arrays share one dtype (float32 or float64), and
    ``n >= 2``.

    Returns ``(log_z, alpha, left, right, lognorm, scaled_leaves)``; the charts
    are what :func:`rank_space_outside` needs.
    """
    left, right, lognorm, scaled = rank_space_leaves(leaf, VP, WP)
    log_z, alpha = rank_space_recursion(left, right, lognorm, ML, MR, root_rank)
    return log_z, alpha, left, right, lognorm, scaled


@njit(cache=True, nogil=True)
def _add_parent_adjoint(adjoint, log_weight, parent_adjoint, sibling, weight_cell):
    """adjoint += exp(log_weight) * parent_adjoint * sibling, elementwise, with the
    weight rounded to the chart's dtype through ``weight_cell``."""
    weight_cell[0] = np.exp(log_weight)
    weight = weight_cell[0]
    for q in range(adjoint.shape[0]):
        adjoint[q] += weight * parent_adjoint[q] * sibling[q]


@njit(cache=True, nogil=True)
def _child_adjoints(alpha_grad, left, right, lognorm, gl, gr, width, i):
    """Adjoints ``gl`` / ``gr`` of the left / right vectors of span (i, i + width)
    of one sentence, gathered from all wider parents (their adjoints are complete)."""
    n = left.shape[1]
    j = i + width
    gl[:] = 0.0
    gr[:] = 0.0
    own = lognorm[width, i]
    if own == -np.inf:
        return
    weight_cell = np.empty(1, gl.dtype)
    # (i, j) as the left child of (i, end): sibling (j, end)
    for end in range(j + 1, n + 1):
        parent = lognorm[end - i, i]
        if parent != -np.inf:
            _add_parent_adjoint(gl, own + lognorm[end - j, j] - parent,
                                alpha_grad[end - i, i], right[end - j, j], weight_cell)
    # (i, j) as the right child of (start, j): sibling (start, i)
    for start in range(i):
        parent = lognorm[j - start, start]
        if parent != -np.inf:
            _add_parent_adjoint(gr, own + lognorm[i - start, start] - parent,
                                alpha_grad[j - start, start], left[i - start, start], weight_cell)


@njit(cache=True, nogil=True)
def rank_space_outside(leaf, VP, WP, ML, MR, root_rank, alpha, left, right, lognorm, scaled):
    """Backward of :func:`rank_space_inside`: span marginals and gradients.

    Every adjoint is a derivative of ``sum_s log Z_s`` with respect to a
    *scaled* chart vector, so its magnitude stays near that of a probability.
    Returns ``(marginals, leaf_grad, VP_grad, WP_grad, ML_grad, MR_grad,
    root_rank_grad)``: ``marginals[s, i, j]`` is the posterior probability
    that span (i, j) (width >= 2) is a constituent of sentence ``s``;
    ``leaf_grad`` has the shape of ``leaf``; the others are summed over the
    batch.
    """
    batch, n, n_pre = leaf.shape
    r = VP.shape[1]
    dtype = VP.dtype
    alpha_grad = np.zeros_like(alpha)
    left_grad = np.zeros_like(left)
    right_grad = np.zeros_like(right)
    marginals = np.zeros((batch, n + 1, n + 1))
    ML_grad = np.zeros((r, r), dtype)
    MR_grad = np.zeros((r, r), dtype)
    root_rank_grad = np.zeros(r, dtype)
    both_t = np.ascontiguousarray(np.concatenate((ML, MR), axis=1).T)  # (2r, r)

    for s in range(batch):
        total = 0.0
        for q in range(r):
            total += root_rank[q] * alpha[s, n, 0, q]
        if total > 0.0:
            alpha_grad[s, n, 0] = root_rank / total
            root_rank_grad += alpha[s, n, 0] / total
            marginals[s, 0, n] = 1.0

    for width in range(n - 1, 0, -1):
        n_spans = n - width + 1
        _each_span_of_width(width, left, right, lognorm, alpha, alpha_grad, left_grad, right_grad)
        if width == 1:
            break
        child_grads = np.empty((batch * n_spans, 2 * r), dtype)
        child_grads[:, :r] = _gather_width(left_grad, width, n_spans)
        child_grads[:, r:] = _gather_width(right_grad, width, n_spans)
        own = _gather_width(alpha, width, n_spans)
        _scatter_width(np.dot(child_grads, both_t), alpha_grad, width, n_spans, 0)
        own_t = np.ascontiguousarray(own.T)
        ML_grad += np.dot(own_t, np.ascontiguousarray(child_grads[:, :r]))
        MR_grad += np.dot(own_t, np.ascontiguousarray(child_grads[:, r:]))
        for s in range(batch):
            for i in range(n_spans):
                marginals[s, i, i + width] = np.dot(alpha[s, width, i], alpha_grad[s, width, i])

    leaf_left = _gather_width(left_grad, 1, n)
    leaf_right = _gather_width(right_grad, 1, n)
    scaled_t = np.ascontiguousarray(scaled.T)
    VP_grad = np.dot(scaled_t, leaf_left)
    WP_grad = np.dot(scaled_t, leaf_right)
    scaled_grad = np.dot(leaf_left, np.ascontiguousarray(VP.T)) + np.dot(leaf_right, np.ascontiguousarray(WP.T))
    leaf_grad = np.zeros((batch, n, n_pre), dtype)
    for s in range(batch):
        for i in range(n):
            if lognorm[s, 1, i] > -np.inf:
                leaf_grad[s, i] = scaled_grad[s * n + i] * np.exp(-lognorm[s, 1, i])
    return marginals, leaf_grad, VP_grad, WP_grad, ML_grad, MR_grad, root_rank_grad


@njit(cache=True, nogil=True)
def td_pcfg_recursion(left, right, lognorm, U, VN, WN, root):
    """Inside recursion of TD-PCFG (Yang et al. 2021b) for comparison: O(n^3 r + n^2 m r).

    Same CPD grammar and leaf charts as :func:`rank_space_recursion`, but each
    span carries its nonterminal vector ``beta = U alpha`` and the child
    vectors are ``beta @ V_N`` / ``beta @ W_N``, so the cost per span grows
    with the number of symbols. Returns ``log Z``.
    """
    batch = left.shape[0]
    n = left.shape[2]
    r = left.shape[3]
    alpha = np.zeros((batch, n + 1, n, r), left.dtype)
    U_t = np.ascontiguousarray(U.T)
    children = np.ascontiguousarray(np.concatenate((VN, WN), axis=1))
    log_z = np.empty(batch)
    for width in range(2, n + 1):
        _each_span_of_width(width, left, right, lognorm, alpha)
        n_spans = n - width + 1
        beta = np.dot(_gather_width(alpha, width, n_spans), U_t)  # (spans, NT)
        if width < n:
            products = np.dot(beta, children)
            _scatter_width(products, left, width, n_spans, 0)
            _scatter_width(products, right, width, n_spans, r)
        else:
            totals = np.dot(beta, root)
            for s in range(batch):
                total = totals[s]
                log_z[s] = lognorm[s, n, 0] + np.log(total) if total > 0.0 else -np.inf
    return log_z


@njit(cache=True, nogil=True)
def td_pcfg_inside(leaf, VP, WP, U, VN, WN, root):
    """TD-PCFG inside pass from the emission probabilities (see :func:`td_pcfg_recursion`)."""
    left, right, lognorm, _ = rank_space_leaves(leaf, VP, WP)
    return td_pcfg_recursion(left, right, lognorm, U, VN, WN, root)


@njit(cache=True, nogil=True)
def _active(lengths, t, active):
    """How many of the sequences (sorted by decreasing length) reach step ``t``,
    counting down from ``active``, the count at an earlier step."""
    while active > 0 and lengths[active - 1] <= t:
        active -= 1
    return active


@njit(cache=True, nogil=True)
def hmm_rank_forward(start_rank, K, emit, lengths):
    """Rank-space forward pass of a batch of sequences of any lengths.

    ``start_rank = pi^T U`` ``(r,)``, ``K = V^T U`` ``(r, r)``, ``emit``
    ``(T, b, r)`` the rows ``W[x_t]``, time first, for ``b`` sequences sorted
    by decreasing ``lengths`` ``(b,)`` (rows past a sequence's end are not
    read). At step t the sequences still running are a prefix of the batch,
    so each step is one matrix product over them. Returns ``(log_p,
    scaled, predicted, step_log)``: the log-probabilities ``(b,)``, the
    forward vectors normalised to sum one ``(T, b, r)`` (zero past a
    sequence's end), the vectors before the emission ``(T, b, r)`` and the
    log normalisers ``(T, b)`` (their sum over a sequence's steps is its
    ``log_p``).
    """
    length, batch, r = emit.shape
    scaled = np.zeros((length, batch, r), emit.dtype)
    predicted = np.zeros((length, batch, r), emit.dtype)
    step_log = np.zeros((length, batch))
    log_p = np.zeros(batch)
    active = batch
    for t in range(length):
        active = _active(lengths, t, active)
        if t == 0:
            for s in range(active):
                predicted[0, s] = start_rank
        else:
            # written in place: the product is the epoch's cost, a copy of it would not be free
            np.dot(scaled[t - 1, :active], K, predicted[t, :active])
        for s in range(active):
            total = 0.0
            for q in range(r):
                value = predicted[t, s, q] * emit[t, s, q]
                scaled[t, s, q] = value
                total += value
            if total > 0.0:
                inverse = 1.0 / total
                for q in range(r):
                    scaled[t, s, q] *= inverse
                step_log[t, s] = np.log(total)
            else:
                scaled[t, s] = 0.0
                step_log[t, s] = -np.inf
            log_p[s] += step_log[t, s]
    return log_p, scaled, predicted, step_log


@njit(cache=True, nogil=True)
def hmm_rank_backward(K, emit, lengths, scaled, predicted, step_log):
    """Gradients of ``sum_s log p(x_s)`` from :func:`hmm_rank_forward`'s output.

    Returns ``(start_rank_grad (r,), K_grad (r, r), emit_grad (T, b, r))``.
    ``beta`` below is the scaled backward vector: ``scaled[t] * beta[t]`` is the
    posterior over the rank variable at step t; it is one at a sequence's last
    step, and rows of sequences that have not started yet (going backwards)
    keep that value.
    """
    length, batch, r = emit.shape
    dtype = emit.dtype
    emit_grad = np.zeros_like(emit)
    start_rank_grad = np.zeros(r, dtype)
    beta = np.ones((batch, r), dtype)
    K_t = np.ascontiguousarray(K.T)
    # The rows of the sequences running at each step t > 0, packed (no padding):
    # d log p / d (pre-normalisation vector at t) = beta_t / c_t, and the scaled
    # vector at t - 1 it multiplies; K's gradient is then one product over all steps.
    first_row = np.zeros(length + 1, np.int64)
    for t in range(1, length):
        first_row[t + 1] = first_row[t] + _active(lengths, t, batch)
    through = np.empty((first_row[length], r), dtype)
    previous = np.empty((first_row[length], r), dtype)
    through_start = np.empty((batch, r), dtype)
    for t in range(length - 1, -1, -1):
        active = _active(lengths, t, batch)
        rows = through[first_row[t]:first_row[t] + active] if t > 0 else through_start[:active]
        for s in range(active):
            inverse_total = np.exp(-step_log[t, s])
            for q in range(r):
                weighted = beta[s, q] * inverse_total
                emit_grad[t, s, q] = predicted[t, s, q] * weighted
                rows[s, q] = weighted * emit[t, s, q]
        if t > 0:
            previous[first_row[t]:first_row[t] + active] = scaled[t - 1, :active]
            np.dot(rows, K_t, beta[:active])
        else:
            for s in range(active):
                start_rank_grad += rows[s]
    K_grad = np.zeros((r, r), dtype)
    if first_row[length] > 0:
        np.dot(previous.T, through, K_grad)
    return start_rank_grad, K_grad, emit_grad


@njit(cache=True, nogil=True)
def hmm_state_viterbi(log_start, U, V, emit):
    """Most likely state sequence z_0..z_{T-1} of one sequence under the joint CPD HMM.

    The chain Viterbi of the distro branch takes one fixed transition matrix;
    here the pair potential ``p(z_{t+1}, x_t | z_t) = (U diag(W[x_t]) V^T)``
    changes with every word, so the recursion builds it per step (O(T m^2 r)).
    The last state's factor is ``sum_q U[z, q] W[x_{T-1}, q]`` (V's columns sum
    to one). ``log_start`` ``(m,)``, ``U``, ``V`` ``(m, r)``, ``emit`` ``(T, r)``.
    """
    length = emit.shape[0]
    m = U.shape[0]
    V_t = np.ascontiguousarray(V.T)
    delta = log_start.copy()
    back = np.zeros((length, m), np.int64)
    for t in range(length - 1):
        pair = np.log(np.dot(U * emit[t], V_t))  # (m, m): from z to z'
        new = np.full(m, -np.inf)
        for z in range(m):
            dz = delta[z]
            if dz == -np.inf:
                continue
            for z_next in range(m):
                value = dz + pair[z, z_next]
                if value > new[z_next]:
                    new[z_next] = value
                    back[t + 1, z_next] = z
        delta = new
    final = delta + np.log(np.dot(U, emit[length - 1]))
    states = np.zeros(length, np.int64)
    states[length - 1] = np.argmax(final)
    for t in range(length - 1, 0, -1):
        states[t - 1] = back[t, states[t]]
    return states


# ---- the training step's elementwise work, in place and in the arrays' own dtype ----
# (numpy would allocate a temporary per operation; at 2^14 states these arrays
# hold millions of entries and the temporaries cost more than the arithmetic)

@njit(cache=True, nogil=True, parallel=True)
def softmax_rows(x):
    """Replace every row of the 2-D ``x`` by its softmax, in place."""
    for i in prange(x.shape[0]):
        row = x[i]
        row -= row.max()
        np.exp(row, row)
        row /= row.sum()


@njit(cache=True, nogil=True)
def softmax_columns(x):
    """Replace every column of the 2-D C-ordered ``x`` by its softmax, in place
    (row by row, so that memory is read in order)."""
    top = x[0].copy()
    for i in range(1, x.shape[0]):
        top = np.maximum(top, x[i])
    total = np.zeros(x.shape[1], np.float64)
    for i in range(x.shape[0]):
        row = x[i]
        row -= top
        np.exp(row, row)
        total += row
    scale = (1.0 / total).astype(x.dtype)
    for i in range(x.shape[0]):
        x[i] *= scale


@njit(cache=True, nogil=True, parallel=True)
def softmax_rows_backward(probs, grad):
    """Turn ``grad`` (w.r.t. the row-softmax ``probs``) into the gradient w.r.t.
    the logits, in place: ``p * (g - sum_row(p * g))``."""
    for i in prange(probs.shape[0]):
        p = probs[i]
        g = grad[i]
        g -= np.dot(p, g)
        g *= p


@njit(cache=True, nogil=True)
def softmax_columns_backward(probs, grad):
    """As :func:`softmax_rows_backward` for a column softmax."""
    inner = np.zeros(probs.shape[1], np.float64)
    for i in range(probs.shape[0]):
        inner += probs[i] * grad[i]
    inner_cast = inner.astype(probs.dtype)
    for i in range(probs.shape[0]):
        grad[i] -= inner_cast
        grad[i] *= probs[i]


@njit(cache=True, nogil=True)
def sum_of_squares(x):
    """Sum of the squared entries, accumulated in float64."""
    flat = x.reshape(x.size)
    total = 0.0
    for i in range(flat.size):
        total += float(flat[i]) * float(flat[i])
    return total


@njit(cache=True, nogil=True)
def adam_update(param, grad, first, second, scale, learning_rate, beta1, beta2, bias1, bias2, eps):
    """One Adam step on one array, in place: the moments ``first`` and ``second``
    take the gradient times ``scale`` (the clipping factor), ``bias1`` and
    ``bias2`` are ``1 - beta^t``."""
    p = param.reshape(param.size)
    g = grad.reshape(grad.size)
    m = first.reshape(first.size)
    v = second.reshape(second.size)
    for i in range(p.size):
        gi = g[i] * scale
        m[i] = beta1 * m[i] + (1.0 - beta1) * gi
        v[i] = beta2 * v[i] + (1.0 - beta2) * gi * gi
        p[i] -= learning_rate * (m[i] / bias1) / (np.sqrt(v[i] / bias2) + eps)


@njit(cache=True, nogil=True)
def add_rows(out, ids, rows, scale):
    """``out[ids[k]] += scale * rows[k]`` for every k (a scatter-add of rows)."""
    for k in range(ids.shape[0]):
        i = ids[k]
        for q in range(rows.shape[1]):
            out[i, q] += scale * rows[k, q]
