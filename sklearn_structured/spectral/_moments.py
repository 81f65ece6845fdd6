r"""Spectral estimation of the latent-state tree model: word embedding, moments,
observable operators, and the probabilities read off them.

The model (Dhillon et al. 2012, Eq. 2) is described in :mod:`._scorer`: node
i has a hidden state h_i; a side-d child's state is drawn from T_d[:, h_p];
word x_i from O[:, h_i]; the root's state from pi. Its inside recursion is
beta_p = o(x_p) * prod_j (T_{d_j}^T beta_j) and p(x | tree) = pi^T beta_root.

Observable representation. Let U (n_words x k) have orthonormal columns
spanning the column space of O, phi(x) = U^T e_x its row for word x, and
G = U^T O (invertible). Because U U^T O = O, the emission vector is linear
in phi: o(x) = G^T phi(x). Represent each inside vector by
u_i = G^{-T} beta_i, so beta_i(h) = u_i . g_h. Leaves have u = phi(x).

For a head p with a side-d child j, the child's contribution is the
function h -> (T_d^T beta_j)(h) = u_j . W_d[:, h] with W_d = G T_d: the
expected embedding of a side-d child given the head's state. Multiplying a
function of h_p by it is, in the representation, the matrix

    M_d(u) = G diag(W_d^T u) G^{-1},   so  u_p = prod_j M_{d_j}(u_j)^T phi(x_p)

(the M's commute, so the order of the children is irrelevant), and
p(x | tree) = (G pi) . u_root.

Moments. Take every triple (p, j, v) of a training tree where j is a side-d
child of p and v is another tree neighbour of p (its head or another child),
and let psi_v be the 3k-vector holding phi(x_v) in the block of v's relation
to p (head, left child, right child). Given h_p the three words are
independent, with conditional means g (for x_p), W_d (for x_j) and some V
(3k x k, for psi_v; it depends on the tree shapes of the corpus, which is
harmless because it cancels). With rho the distribution of h_p over the
triples,

    Pair_d      = E[phi_p psi_v^T]             = G diag(rho) V^T
    Triple_d(u) = E[(u . phi_j) phi_p psi_v^T] = G diag(rho) diag(W_d^T u) V^T
    Triple_d(u) Pair_d^+ = G diag(W_d^T u) G^{-1} = M_d(u)

(V^T has full row rank, so Pair_d^+ = (V^T)^+ diag(rho)^{-1} G^{-1}), and
the mean root embedding is E[phi(x_root)] = G pi. Keeping the three
relations in separate blocks matters: averaging the head and child views
into one k-vector can make V nearly singular. Every quantity is a plain
average of products of word embeddings over the training trees, so by the
law of large numbers the plug-in estimate of p(x | tree) converges to the
truth for any fixed (sentence, tree) as the number of training trees grows,
provided U converges to a basis of the column space of O and ``rcond`` is
below the smallest relative singular value of the population Pair_d. These
are the paper's quantities in another arrangement: Pair_d and Triple_d are
its child-parent bigrams Sigma and child-parent-child trigrams K (Section
3.2), the mean root embedding its c_1, and M_d(u) its D(E^T u) (Section 3.3).

U is estimated from word co-occurrences (each word against the word before
it, after it, and its head): every such co-occurrence matrix is O times a
rank-k matrix, so its top-k left singular vectors span the column space of O
in the population. ``embedding="svd"`` takes them from the count matrix;
``embedding="cca"`` from the count matrix scaled by the inverse square roots
of word and context frequencies and maps them back with the square roots of
the word frequencies, which keeps the same population span but, at treebank
size, leaves much more of O outside it.

The pair matrices are inverted in a whitened basis: each is multiplied by
the inverse square roots of the second moments of its two views, so its
singular values are canonical correlations and ``rcond`` cuts on them, not
on products of word frequencies.

The moments are counted by :func:`._kernels.count_moments`; the operators
score trees in :func:`._kernels.spectral_log_probs`.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import randomized_svd

from ._kernels import count_moments


def cooccurrences(ids, heads, offsets, n_words):
    """Counts of (word, context) with contexts: previous word, next word, head word
    (``heads`` None: the first two only, for sentences without trees)."""
    position = np.arange(ids.shape[0])
    sentence_start = np.repeat(offsets[:-1], np.diff(offsets))
    rows, cols = [], []
    has_prev = position > sentence_start
    rows.append(ids[has_prev])
    cols.append(ids[position[has_prev] - 1])
    has_next = np.zeros_like(has_prev)
    has_next[:-1] = has_prev[1:]
    rows.append(ids[has_next])
    cols.append(n_words + ids[position[has_next] + 1])
    if heads is not None:
        has_head = heads > 0
        rows.append(ids[has_head])
        cols.append(2 * n_words + ids[sentence_start[has_head] + heads[has_head] - 1])
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(n_words, 3 * n_words))


def word_embedding(counts, n_components, method, smoothing, rng):
    """U: ``n_components`` orthonormal columns from the word-context ``counts``,
    by ``method`` ``"svd"`` or ``"cca"`` (see the module docstring);
    ``smoothing`` is added to every frequency of the CCA scaling."""
    if method == "svd":
        left, _, _ = randomized_svd(counts, n_components, random_state=rng)
        return np.ascontiguousarray(left)
    word_freq = np.asarray(counts.sum(axis=1)).ravel() + smoothing
    context_freq = np.asarray(counts.sum(axis=0)).ravel() + smoothing
    scaled = sp.diags(1.0 / np.sqrt(word_freq)) @ counts @ sp.diags(1.0 / np.sqrt(context_freq))
    left, _, _ = randomized_svd(scaled, n_components, random_state=rng)
    basis, _ = np.linalg.qr(np.sqrt(word_freq)[:, None] * left)
    return np.ascontiguousarray(basis)


def estimate_operators(ids, heads, offsets, embedding, rcond):
    """The spectral estimate on packed training trees: the mean root embedding
    (G pi), the operators (:func:`operators_from_moments`) and the rank kept
    on each side."""
    root_sum, pairs, triples, head_second, view_second = count_moments(
        ids, heads, offsets, embedding)
    operators, ranks = operators_from_moments(pairs, triples, head_second, view_second, rcond)
    return root_sum / np.count_nonzero(heads == 0), operators, ranks


def _inverse_sqrt(second, eps=1e-12):
    """Symmetric (pseudo-)inverse square root of a second-moment matrix."""
    values, vectors = np.linalg.eigh(second)
    keep = values > eps * max(values.max(), 0.0)
    return (vectors[:, keep] / np.sqrt(values[keep])) @ vectors[:, keep].T


def operators_from_moments(pairs, triples, head_second=None, view_second=None, rcond=1e-15):
    """``operators[d, a, b, :] = triples[d, a, b, :] @ pinv_d``, i.e.
    M_d(u)^T w = sum_ab u_a w_b operators[d, a, b, :], and the rank kept in
    each ``pinv_d``. Moments may be sums or means alike.

    ``pinv_d`` is a rank-truncated inverse of ``pairs[d]``. Given the second
    moments of its two views, the pair matrix is first whitened,
    ``C_head^{-1/2} pairs[d] C_view^{-1/2}``, so that its singular values
    are canonical correlations, not products of word frequencies; singular
    values below ``rcond`` times the largest are dropped in that basis. In
    the population the whitened matrix has rank k and the inverse is exact
    (``pairs[d] @ pinv_d = I``). Without second moments the cut is made on
    ``pairs[d]`` itself.
    """
    operators, ranks = [], []
    for d in range(2):
        k = pairs[d].shape[0]
        left = np.eye(k) if head_second is None else _inverse_sqrt(head_second[d])
        right = np.eye(pairs[d].shape[1]) if view_second is None else _inverse_sqrt(view_second[d])
        u, sv, vt = np.linalg.svd(left @ pairs[d] @ right, full_matrices=False)
        rank = int(np.count_nonzero(sv > rcond * sv[0])) if sv[0] > 0 else 0
        inverse = right @ (vt[:rank].T / sv[:rank]) @ u[:, :rank].T @ left
        operators.append(np.einsum("abc,cd->abd", triples[d], inverse))
        ranks.append(rank)
    return np.stack(operators), np.array(ranks)


def simplex_columns(matrix, floor=1e-10):
    """Project each column to a probability vector: clip below ``floor``, renormalise."""
    matrix = np.maximum(matrix, floor)
    return matrix / matrix.sum(axis=0, keepdims=True)


def _real_eigenbasis(values, vectors):
    """A real basis of the eigenspaces: a complex-conjugate pair of
    eigenvectors is replaced by the real and imaginary parts of one of them
    (taking both real parts would give the same column twice)."""
    basis = vectors.real.copy()
    i = 0
    while i < len(values):
        if values[i].imag != 0 and i + 1 < len(values):
            basis[:, i + 1] = vectors[:, i].imag
            i += 2
        else:
            i += 1
    return basis


def _off_diagonal_share(basis, operators):
    """Share of the squared norm of every ``basis^-1 M_d(e_a) basis`` off the diagonal."""
    D = np.einsum("ij,dajk,kl->dail", np.linalg.pinv(basis), operators, basis)
    diagonal = np.einsum("daii->dai", D)
    return float(1.0 - (diagonal ** 2).sum() / max((D ** 2).sum(), np.finfo(float).tiny))


_N_MIXES = 20


def probabilities_from_operators(embedding, root_vector, operators, rng):
    """(pi, T, O) of the hidden-state model read off spectral estimates.

    In the population every M_d(u) = G diag(W_d^T u) G^{-1} with G = U^T O,
    so any random combination of the operators of both sides has the
    columns of G as eigenvectors (up to scale). Then O = U G with columns
    scaled to sum one, W_d[a, h] is the h-th eigenvalue of M_d(e_a),
    T_d = G^{-1} W_d and pi = G^{-1} (G pi). Estimated operators are not
    jointly diagonalisable and a random combination often has complex
    eigenvalues, so ``_N_MIXES`` combinations are tried, each read as a
    real basis, and the one whose basis leaves the least of all 2k
    operators off the diagonal is kept; every distribution is then clipped
    to the simplex: a starting point for EM, not an estimator of its own.
    """
    k = embedding.shape[1]
    best_share, G = np.inf, None
    for _ in range(_N_MIXES):
        # operators[d, a] is M_d(e_a)
        mixed = sum(np.einsum("a,abc->bc", rng.normal(size=k), operators[d]) for d in range(2))
        basis = _real_eigenbasis(*np.linalg.eig(mixed))
        share = _off_diagonal_share(basis, operators)
        if share < best_share:
            best_share, G = share, basis
    total = embedding.sum(axis=0) @ G  # column sums of U G
    G = G / np.where(np.abs(total) > 1e-12, total, 1.0)
    G_inverse = np.linalg.pinv(G)
    emissions = simplex_columns(embedding @ G)
    transitions = np.empty((2, k, k))
    for d in range(2):
        W = np.array([np.diag(G_inverse @ operators[d, a] @ G) for a in range(k)])
        transitions[d] = simplex_columns(G_inverse @ W)
    start = simplex_columns((G_inverse @ root_vector)[:, None])[:, 0]
    return start, transitions, emissions


def spectral_em_start(embedding, root_vector, operators, rng):
    """The ``"spectral+em"`` start ``(pi, T, O)``: the emissions read off the
    operators, with flat pi and T.

    Only the emissions: T = G^-1 W compounds the error of two estimated
    inverses and, at treebank size, starts EM in a worse optimum; with flat
    pi and T the first E-step places each token's state by its word alone
    and the M-step estimates T.
    """
    emissions = probabilities_from_operators(embedding, root_vector, operators, rng)[2]
    k = emissions.shape[1]
    return np.full(k, 1.0 / k), np.full((2, k, k), 1.0 / k), emissions
