"""Initialisation of U, V, W from the weights of a tensor-free epoch (Lei et al. 2014, Sec. 4).

Many MST templates are a product of one head word feature, one modifier word
feature and one arc feature (e.g. head form x modifier tag x direction and
distance; a head-only template pairs with the modifier's bias feature), so
their weights in theta are entries ``B[i, j, k]`` of a tensor over
``phi_h (x) phi_m (x) phi_hm``. The tensor is unfolded along the head mode
into a matrix ``B_(h)`` of shape (n_w, n_w * d); its top-r SVD gives U (left
singular vectors), and the leading singular pair of each right singular
vector, folded back into an (n_w, d) matrix, gives the matching rows of V and
W. Each rank-one component's scale is shared equally by its three factors.
"""

import numpy as np
from numba import njit
from scipy import sparse
from sklearn.utils.extmath import randomized_svd

from ..kernels.hashing import table_row
from ..kernels.sorting import sorted_position
from ._features import (
    A_HL_ML,
    A_HP,
    A_HP_MP,
    A_HP_MW,
    A_HW,
    A_HW_MP,
    A_HW_MW,
    A_MP,
    A_MW,
    BIAS_BUCKET,
    N_ARC_BUCKETS,
    T_BIAS,
    T_FORM,
    T_LEMMA,
    T_POS,
    arc_bucket,
    feature_hash,
)

# Small helpers with one or two call sites are inlined (inline="always"):
# every separately compiled function costs a few tenths of a second on first use.

# (MST template, head word template, modifier word template); T_BIAS marks the
# side whose word plays no part. Field: 0 form, 1 lemma, 2 tag.
_PAIRS = np.array([
    [A_HW, T_FORM, T_BIAS],
    [A_MW, T_BIAS, T_FORM],
    [A_HW_MW, T_FORM, T_FORM],
    [A_HL_ML, T_LEMMA, T_LEMMA],
    [A_HP, T_POS, T_BIAS],
    [A_MP, T_BIAS, T_POS],
    [A_HP_MP, T_POS, T_POS],
    [A_HW_MP, T_FORM, T_POS],
    [A_HP_MW, T_POS, T_FORM],
], dtype=np.int64)
_N_WORD_ONLY_PAIRS = 4  # the first rows need no tags


@njit(cache=True, nogil=True, inline="always")
def _word_column(table, template, value):
    return sorted_position(table, feature_hash(template, value, 0, 0, 0, 0))


@njit(cache=True, nogil=True, inline="always")
def _field_for(template, form, lemma, xpos, slot):
    if template == T_FORM:
        return form[slot]
    if template == T_LEMMA:
        return lemma[slot]
    if template == T_POS:
        return xpos[slot]
    return 0


@njit(cache=True, nogil=True)
def tensor_entries(sent_off, arcs, tokens, table, theta, config, pairs):
    """Entries (i, j, k, value) of B read off theta for the given arcs (duplicates included).

    ``arcs`` is a tuple ``(sentence, head, modifier)`` of equal-length arrays
    (positions within the sentence, 0 for the root), ``tokens`` the
    :class:`~._kernels.TokenArrays` of the corpus, ``config`` its
    :class:`~._kernels.Config`.
    """
    arcs_sent, arcs_h, arcs_m = arcs
    form, lemma, xpos = tokens.form, tokens.lemma, tokens.xpos
    n_features = config.n_features
    n_pairs = len(pairs) if config.pos else _N_WORD_ONLY_PAIRS
    size = 2 * n_pairs * len(arcs_h)
    rows = np.empty(size, dtype=np.int64)
    cols = np.empty(size, dtype=np.int64)
    deps = np.empty(size, dtype=np.int64)
    vals = np.empty(size)
    q = 0
    for a in range(len(arcs_h)):
        start = sent_off[arcs_sent[a]]
        h = arcs_h[a]
        m = arcs_m[a]
        bucket = arc_bucket(h, m)
        for p in range(n_pairs):
            template, head_t, mod_t = pairs[p, 0], pairs[p, 1], pairs[p, 2]
            hv = _field_for(head_t, form, lemma, xpos, start + h)
            mv = _field_for(mod_t, form, lemma, xpos, start + m)
            i = _word_column(table, head_t, hv)
            j = _word_column(table, mod_t, mv)
            if i < 0 or j < 0:
                continue
            # the argument order mirrors arc_feature_ids for each template
            for rep in range(2):
                conj = bucket + 1 if rep else 0
                if head_t == T_BIAS:
                    key = feature_hash(template, mv, conj, 0, 0, 0)
                elif mod_t == T_BIAS:
                    key = feature_hash(template, hv, conj, 0, 0, 0)
                else:
                    key = feature_hash(template, hv, mv, conj, 0, 0)
                rows[q] = i
                cols[q] = j
                deps[q] = bucket if rep else BIAS_BUCKET
                vals[q] = theta[table_row(key, n_features)]
                q += 1
    return rows[:q], cols[:q], deps[:q], vals[:q]


def svd_initialisation(entries, n_word_columns, rank, random_state):
    """U, V, W (feature-major) from the tensor entries, by the paper's unfolding + SVD."""
    rows, cols, deps, vals = entries
    d = N_ARC_BUCKETS
    key = (rows * n_word_columns + cols) * d + deps
    key, first = np.unique(key, return_index=True)
    # only the (modifier feature, arc bucket) columns that occur are kept
    column_keys, column = np.unique(cols[first] * d + deps[first], return_inverse=True)
    B = sparse.csr_matrix(
        (vals[first], (rows[first], column)), shape=(n_word_columns, len(column_keys))
    )
    U = np.zeros((n_word_columns, rank))
    V = np.zeros((n_word_columns, rank))
    W = np.zeros((d, rank))
    n_components = min(rank, min(B.shape) - 1, B.nnz)
    if n_components > 0:
        P, S, Q = randomized_svd(B, n_components, random_state=random_state)
        mod_feature, bucket = np.divmod(column_keys, d)
        for c in range(n_components):
            folded = sparse.csr_matrix(
                (Q[c], (mod_feature, bucket)), shape=(n_word_columns, d)
            )
            gram = (folded.T @ folded).toarray()
            eigenvalues, eigenvectors = np.linalg.eigh(gram)
            w = eigenvectors[:, -1]
            sigma = np.sqrt(max(eigenvalues[-1], 0.0))
            if sigma == 0.0:
                continue
            v = folded @ w / sigma
            scale = np.cbrt(S[c] * sigma)
            U[:, c] = scale * P[:, c]
            V[:, c] = scale * v
            W[:, c] = scale * w
    # components the data cannot fill start small and random, so they can still learn
    empty = ~np.any(U, axis=0)
    if empty.any():
        U[:, empty] = random_state.normal(scale=0.01, size=(n_word_columns, empty.sum()))
        V[:, empty] = random_state.normal(scale=0.01, size=(n_word_columns, empty.sum()))
        W[:, empty] = random_state.normal(scale=0.01, size=(d, empty.sum()))
    return U, V, W
