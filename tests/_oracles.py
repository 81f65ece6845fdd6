"""Brute-force enumeration of dependency trees, the oracle for the decoder tests.

A tree over n tokens is a heads array ``h`` of length n (``h[m - 1]`` is the
head of token m, 0 is the root) in which every token reaches the root.
"""

import functools
import itertools

import numpy as np


@functools.lru_cache(maxsize=None)
def all_trees(n, projective=False, single_root=False):
    """Every heads array over n tokens that forms a tree, as an (n_trees, n) int64 array."""
    candidates = np.array(list(itertools.product(range(n + 1), repeat=n)), dtype=np.int64)
    if n == 0:
        return candidates.reshape(1, 0)
    extended = np.hstack([np.zeros((len(candidates), 1), np.int64), candidates])
    # follow the heads n times: in a tree every token has reached the root by then
    position = np.tile(np.arange(n + 1), (len(candidates), 1))
    for _ in range(n):
        position = np.take_along_axis(extended, position, axis=1)
    keep = (position == 0).all(axis=1)
    if single_root:
        keep &= (candidates == 0).sum(axis=1) == 1
    if projective:
        keep &= ~_has_crossing_arcs(candidates)
    trees = candidates[keep]
    trees.flags.writeable = False
    return trees


def _has_crossing_arcs(heads):
    n = heads.shape[1]
    modifiers = np.arange(1, n + 1)
    left = np.minimum(heads, modifiers)
    right = np.maximum(heads, modifiers)
    crossing = np.zeros(len(heads), dtype=bool)
    for a in range(n):
        for b in range(n):
            crossing |= (left[:, a] < left[:, b]) & (left[:, b] < right[:, a]) & (right[:, a] < right[:, b])
    return crossing


def tree_scores(scores, trees):
    """Sum of arc scores of each tree (rows of ``trees``)."""
    n = trees.shape[1]
    return scores[trees, np.arange(1, n + 1)].sum(axis=1)


def is_projective(heads):
    return not _has_crossing_arcs(np.asarray(heads, dtype=np.int64)[None, :])[0]


def is_tree(heads, single_root=False):
    heads = np.asarray(heads, dtype=np.int64)
    n = len(heads)
    if heads.min(initial=0) < 0 or heads.max(initial=0) > n or np.any(heads == np.arange(1, n + 1)):
        return False
    extended = np.concatenate([[0], heads])
    position = np.arange(n + 1)
    for _ in range(n):
        position = extended[position]
    if not np.all(position == 0):
        return False
    return not single_root or int(np.sum(heads == 0)) == 1
