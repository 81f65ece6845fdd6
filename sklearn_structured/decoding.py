"""Dependency tree decoders: best, k-best and expected trees from arc scores.

Every function takes ``scores``, an (n + 1) x (n + 1) array in which
``scores[h, m]`` is the score of attaching token ``m`` to head ``h``;
position 0 is the artificial root and tokens are 1..n. Column 0 (arcs into
the root) and the diagonal (self-loops) are never used and may hold anything;
every other entry must be finite. A tree comes back as an int64 array of
length n holding the head of each token, ``heads[m - 1]`` for token ``m``,
0 for the root: the HEAD column of CoNLL-U and the ``y`` of the parsers.

The projective decoders (Eisner) return trees whose root has exactly one
child, as Universal Dependencies requires; :func:`chu_liu_edmonds` does so
when ``single_root=True``.

The work is done by numba kernels in :mod:`sklearn_structured.kernels`,
which numba code can call directly; the functions here validate input and
convert the results.

Examples
--------
>>> import numpy as np
>>> from sklearn_structured.decoding import eisner, chu_liu_edmonds
>>> scores = np.zeros((4, 4))
>>> scores[0, 2] = scores[2, 1] = scores[2, 3] = 1.0  # token 2 heads the sentence
>>> eisner(scores)
array([2, 0, 2])
>>> chu_liu_edmonds(scores, single_root=True)
array([2, 0, 2])
"""

import math
import numbers
import os

import numpy as np

from .kernels import (
    chu_liu_edmonds_argmax,
    chu_liu_edmonds_argmax_batch,
    eisner_argmax,
    eisner_argmax_batch,
    eisner_inside_outside,
    eisner_kbest_kernel,
)
from .utils import map_ranges

__all__ = ["chu_liu_edmonds", "decode_batch", "eisner", "eisner_kbest", "eisner_marginals"]


def _check_scores(scores, name="scores"):
    """A C-contiguous float64 copy-or-view of a valid score matrix."""
    try:
        array = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be a numeric array, got {type(scores).__name__}") from error
    if array.ndim != 2 or array.shape[0] != array.shape[1]:
        raise ValueError(f"{name} must be a square (n + 1) x (n + 1) array, got shape {array.shape}")
    if array.shape[0] < 2:
        raise ValueError(
            f"{name} has shape {array.shape}: a sentence needs at least one token, "
            "so scores must be at least 2 x 2 (root + 1 token)"
        )
    arcs = array[:, 1:].copy()
    np.fill_diagonal(arcs[1:], 0.0)  # self-loops are never read
    if not np.all(np.isfinite(arcs)):
        h, m = np.argwhere(~np.isfinite(arcs))[0]
        raise ValueError(f"{name} must be finite on possible arcs; scores[{h}, {m + 1}] is {array[h, m + 1]}")
    return np.ascontiguousarray(array)


def eisner(scores):
    """Highest-scoring projective dependency tree (Eisner 1996), O(n^3).

    Parameters
    ----------
    scores : array-like of shape (n + 1, n + 1)
        ``scores[h, m]`` is the score of head ``h`` for token ``m``; row and
        column 0 are the root.

    Returns
    -------
    heads : ndarray of shape (n,), int64
        ``heads[m - 1]`` is the head of token ``m`` (0 = root). Exactly one
        token is attached to the root.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> heads = eisner(rng.normal(size=(6, 6)))
    >>> heads.shape, int((heads == 0).sum())
    ((5,), 1)
    """
    return eisner_argmax(_check_scores(scores))


# Peak memory of the lazy k-best search, measured at n=30 (about 400 bytes per
# tree and word: the candidate heaps of every chart item on the way down),
# with a margin; used to refuse a request up front rather than fail midway.
_KBEST_BYTES_PER_TREE_WORD = 512


def _available_memory():
    """Bytes of physical memory free now (a large number where the OS does not say)."""
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2**62


def _projective_tree_count(n):
    """Number of projective trees over n words with one root child, capped at 2**62.

    C(3n - 2, n - 1) / n: 1, 2, 7, 30, 143, ... (OEIS A006013 shifted by one).
    """
    if n <= 1:
        return 1
    return min(2**62, math.comb(3 * n - 2, n - 1) // n)


def eisner_kbest(scores, k):
    """The ``k`` highest-scoring projective trees, best first.

    Exact lazy k-best over the Eisner hypergraph (Huang & Chiang 2005,
    Algorithm 3), O(n^3 + k n log k) time. Fewer than ``k`` pairs are
    returned when the sentence has fewer projective single-root trees; trees
    with equal scores come in no particular order.

    Parameters
    ----------
    scores : array-like of shape (n + 1, n + 1)
    k : int >= 1

    Returns
    -------
    trees : list of (heads, score) pairs
        ``heads`` an int64 array of shape (n,), ``score`` the float sum of
        its arc scores; scores are non-increasing.

    Examples
    --------
    >>> import numpy as np
    >>> scores = np.zeros((3, 3))
    >>> scores[0, 1], scores[1, 2], scores[2, 1] = 2.0, 1.0, 0.5
    >>> [(h.tolist(), s) for h, s in eisner_kbest(scores, 5)]
    [([0, 1], 3.0), ([2, 0], 0.5)]
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    scores = _check_scores(scores)
    n = scores.shape[0] - 1
    k = min(int(k), _projective_tree_count(n))
    needed = _KBEST_BYTES_PER_TREE_WORD * k * max(n, 1)
    available = _available_memory()
    if needed > available // 2:
        raise ValueError(
            f"the {k} best trees of a {n}-word sentence would need about {needed / 2**30:.1f} GiB "
            f"(about {_KBEST_BYTES_PER_TREE_WORD} bytes per tree and word) and "
            f"{available / 2**30:.1f} GiB of memory is free; ask for fewer trees"
        )
    heads, tree_scores = eisner_kbest_kernel(scores, k)
    return [(heads[i].copy(), float(tree_scores[i])) for i in range(len(tree_scores))]


def eisner_marginals(scores):
    """Arc marginals and log-partition over projective single-root trees.

    The scores are read as log-potentials: a tree ``y`` has probability
    ``exp(sum of its arc scores - log_z)``. Computed by inside-outside on the
    Eisner chart in log space, O(n^3).

    Returns
    -------
    marginals : ndarray of shape (n + 1, n + 1)
        ``marginals[h, m]`` is the probability that ``h`` heads ``m``; each
        column 1..n sums to 1, column 0 and the diagonal are 0.
    log_z : float
        Log of the sum of ``exp(tree score)`` over all projective trees.

    Examples
    --------
    >>> import numpy as np
    >>> marginals, log_z = eisner_marginals(np.zeros((3, 3)))  # 2 trees, equally likely
    >>> marginals[0, 1:], float(np.exp(log_z))
    (array([0.5, 0.5]), 2.0)
    """
    scores = _check_scores(scores)
    # Every tree has exactly one arc into each word, so lowering a word's
    # column by a constant leaves the distribution unchanged and moves log_z
    # by that constant. Centring each column on its best arc keeps the
    # inside/outside sums near the scores' differences rather than their size,
    # where float rounding of huge scores (1e12 and more) would bias exp().
    arcs = scores[:, 1:].copy()
    arcs[np.arange(1, arcs.shape[0]), np.arange(arcs.shape[1])] = -np.inf
    shift = np.max(arcs, axis=0)
    shift[~np.isfinite(shift)] = 0.0
    centred = scores.copy()
    centred[:, 1:] -= shift
    marginals, log_z = eisner_inside_outside(centred)
    # what rounding is left shows as columns summing to 1 +- a few ulps
    totals = marginals[:, 1:].sum(axis=0)
    marginals[:, 1:] /= np.where(totals > 0, totals, 1.0)
    return marginals, float(log_z + shift.sum())


def chu_liu_edmonds(scores, single_root=True):
    """Highest-scoring dependency tree, projective or not (Chu-Liu-Edmonds), O(n^2).

    Parameters
    ----------
    scores : array-like of shape (n + 1, n + 1)
    single_root : bool, default=True
        When true exactly one token is attached to the root; otherwise the
        root may take any number of children.

    Returns
    -------
    heads : ndarray of shape (n,), int64

    Examples
    --------
    >>> import numpy as np
    >>> scores = np.zeros((4, 4))
    >>> scores[0, 1:] = 5.0  # every token would rather hang from the root
    >>> chu_liu_edmonds(scores, single_root=False)
    array([0, 0, 0])
    >>> int((chu_liu_edmonds(scores) == 0).sum())
    1
    """
    return chu_liu_edmonds_argmax(_check_scores(scores), bool(single_root))


_BATCH_ALGORITHMS = ("eisner", "chu_liu_edmonds")


def decode_batch(score_matrices, algorithm="eisner", single_root=True, n_jobs=None):
    """Best tree of every sentence in a list, decoded in a few kernel calls.

    The matrices are packed into one flat buffer and decoded by the batch
    kernels, so the Python cost per sentence is negligible; with ``n_jobs``
    the batch is split into contiguous chunks decoded in threads (the kernels
    release the GIL).

    Parameters
    ----------
    score_matrices : list of array-like, each (n_i + 1) x (n_i + 1)
    algorithm : {"eisner", "chu_liu_edmonds"}, default="eisner"
    single_root : bool, default=True
        Used by ``"chu_liu_edmonds"``; Eisner trees are always single-rooted.
    n_jobs : int, default=None
        Threads to use; ``None`` means 1 and ``-1`` all cores (joblib's rule).

    Returns
    -------
    heads : list of int64 ndarrays, one per sentence

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> batch = [rng.normal(size=(n + 1, n + 1)) for n in (3, 8, 5)]
    >>> [h.shape for h in decode_batch(batch, algorithm="chu_liu_edmonds")]
    [(3,), (8,), (5,)]
    """
    if algorithm not in _BATCH_ALGORITHMS:
        raise ValueError(f"algorithm must be one of {_BATCH_ALGORITHMS}, got {algorithm!r}")
    matrices = [_check_scores(s, name=f"score matrix {i}") for i, s in enumerate(score_matrices)]
    if not matrices:
        return []
    lengths = np.array([len(s) - 1 for s in matrices], dtype=np.int64)
    score_offsets = np.zeros(len(matrices) + 1, dtype=np.int64)
    np.cumsum([s.size for s in matrices], out=score_offsets[1:])
    flat_scores = np.concatenate([s.ravel() for s in matrices])
    head_offsets = np.zeros(len(matrices) + 1, dtype=np.int64)
    np.cumsum(lengths, out=head_offsets[1:])

    def decode(lo, hi):
        offsets = score_offsets[lo:hi]
        if algorithm == "eisner":
            return eisner_argmax_batch(flat_scores, offsets, lengths[lo:hi])
        return chu_liu_edmonds_argmax_batch(flat_scores, offsets, lengths[lo:hi], bool(single_root))

    # chunks of about equal work (cubic in length for Eisner, quadratic for CLE)
    work = (lengths + 1.0) ** (3 if algorithm == "eisner" else 2)
    parts = map_ranges(decode, len(matrices), n_jobs, work=work)
    flat_heads = np.concatenate(parts)
    return [flat_heads[head_offsets[i]:head_offsets[i + 1]].copy() for i in range(len(matrices))]
