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
``hill_climbing.hill_climbing_decode(arc_scores, scorer, settings) -> (heads, score)``
    Third-order non-projective parsing (consecutive siblings, grandparents,
    grand-siblings, tri-siblings, head bigrams, their features given as
    template tables) by randomized hill climbing (:mod:`.hill_climbing`).
``eisner_argmax_batch(flat_scores, score_offsets, lengths)``, ``chu_liu_edmonds_argmax_batch(flat_scores, score_offsets, lengths, single_root)``
    Return ``flat_heads`` for many sentences per call: sentence i has ``lengths[i]`` tokens and its
    scores, row-major, at ``flat_scores[score_offsets[i]:]``; the heads come
    back concatenated (sentence i at offset ``cumsum(lengths)[i - 1]``, the
    layout of ``sklearn_structured.utils.pack_ragged``). These release the
    GIL, so threads running them on disjoint slices run in parallel.

Chain and span decoders (:mod:`.chain`, :mod:`.cky`):

``viterbi(emissions, transitions, start, end) -> (labels, score)``, ``loss_augmented_viterbi(emissions, transitions, start, end, gold, cost)``, ``viterbi_batch(emissions, offsets, transitions, start, end)``
    First-order chains over per-token label scores (T, M) and an (M, M)
    transition matrix; the loss-augmented form adds ``cost`` per wrong label.
``candidate_viterbi_into(candidates, offsets, emissions, pair_scores, gold, cost, out)``
    The same over a few candidate labels per token (a pruned chain, for
    label sets of ~1,000): scores only for the candidates and the pairs of
    neighbouring candidates (``candidate_pair_count(offsets)`` of them).
``cky_max_span_sum(scores) -> (best, spans)``
    The binary bracketing with the largest sum of span scores (MBR parsing
    from span marginals).

Method-specific kernels live beside their estimator, except the rank-space
inside/outside passes (:mod:`.rank_space`), which are decoders in their own
right, and the hidden-state tree model (:mod:`.latent_tree`), shared by the
spectral estimator and the synthetic corpus sampler. Helpers shared by
kernels of several estimators: the feature hash (:mod:`.hashing`) and a
stable argsort cheap to compile (:mod:`.sorting`).

Calling them from your own ``@njit`` code: pass ``k`` and ``single_root`` as
variables, not literal constants, or numba compiles a literal-typed copy of
the kernel. numba's on-disk cache of *your* function does not notice changes
to these kernels, so clear it (``__pycache__/*.nbi``, ``*.nbc``) after
upgrading them.
"""

from .chain import loss_augmented_viterbi, viterbi, viterbi_batch
from .cky import cky_max_span_sum
from .eisner import eisner_argmax, eisner_argmax_batch, eisner_inside_outside
from .kbest import eisner_kbest_kernel
from .mst import chu_liu_edmonds_argmax, chu_liu_edmonds_argmax_batch

__all__ = [
    "chu_liu_edmonds_argmax",
    "chu_liu_edmonds_argmax_batch",
    "cky_max_span_sum",
    "eisner_argmax",
    "eisner_argmax_batch",
    "eisner_inside_outside",
    "eisner_kbest_kernel",
    "loss_augmented_viterbi",
    "viterbi",
    "viterbi_batch",
]
