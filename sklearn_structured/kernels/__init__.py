"""Numba kernels: pure functions on numpy arrays, callable from other njit code.

Tree decoders (all ``@njit(cache=True, nogil=True)``). ``scores`` is a
C-contiguous float64 array of shape (n + 1, n + 1), ``scores[h, m]`` the
score of head ``h`` for modifier ``m``, position 0 the root (column 0 and the
diagonal are ignored); a tree is an int64 heads array of length n, the head
of token ``m`` at index ``m - 1`` (0 = root). Projective decoders return
single-root trees (the root has exactly one child).

``eisner_argmax(scores) -> heads``
    Best projective tree, O(n^3) (:mod:`.eisner`).
``eisner_inside_outside(scores) -> (marginals, log_z)``
    Arc marginals ((n + 1) x (n + 1), columns 1..n sum to 1) and log-partition
    over projective trees, scores read as log-potentials (:mod:`.eisner`).
``eisner_kbest_kernel(scores, k) -> (heads_2d, tree_scores)``
    The k best projective trees, best first, as a (k', n) int64 array
    (k' = min(k, number of trees)) and their float64 scores (:mod:`.kbest`).
``chu_liu_edmonds_argmax(scores, single_root) -> heads``
    Best non-projective tree, O(n^2); ``single_root`` (bool) forces one root
    child (:mod:`.mst`).
``eisner_argmax_batch(flat_scores, score_offsets, lengths) -> flat_heads``
``chu_liu_edmonds_argmax_batch(flat_scores, score_offsets, lengths, single_root) -> flat_heads``
    Many sentences per call: sentence i has ``lengths[i]`` tokens and its
    scores, row-major, at ``flat_scores[score_offsets[i]:]``; the heads come
    back concatenated (sentence i at offset ``cumsum(lengths)[i - 1]``, the
    layout of ``sklearn_structured.utils.pack_ragged``). These release the
    GIL, so threads running them on disjoint slices run in parallel.
"""

from .eisner import eisner_argmax, eisner_argmax_batch, eisner_inside_outside
from .kbest import eisner_kbest_kernel
from .mst import chu_liu_edmonds_argmax, chu_liu_edmonds_argmax_batch

__all__ = [
    "chu_liu_edmonds_argmax",
    "chu_liu_edmonds_argmax_batch",
    "eisner_argmax",
    "eisner_argmax_batch",
    "eisner_inside_outside",
    "eisner_kbest_kernel",
]
