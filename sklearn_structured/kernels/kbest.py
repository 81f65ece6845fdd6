"""Exact k-best projective trees: lazy k-best over the Eisner hypergraph.

Huang & Chiang (2005), "Better k-best parsing", Algorithm 3. Every span of
the Eisner chart (see :mod:`.eisner`) is a hypergraph node, every split point
a hyperedge with two tails, and the goal node attaches the root to one child
(so trees are single-rooted). A derivation of a node is a hyperedge plus the
rank of the derivation used for each tail. After one Viterbi pass, a node's
derivations are produced best first on demand: a node keeps a heap of
candidate derivations, initialised with every hyperedge's best derivation,
and only when its j-th derivation is asked for does it push the successors
of its (j-1)-th (one tail's rank raised by one) and pop the next best,
asking the tails for the ranks it needs in turn. The Eisner hypergraph has
exactly one derivation per tree, so the k best derivations of the goal are
the k best trees.

Successors are generated so that each rank pair ``(a, b)`` of a hyperedge has
exactly one predecessor: ``(a, b) -> (a + 1, b)`` always and
``(a, b) -> (a, b + 1)`` only when ``a == 0``. That replaces the duplicate
check of the paper with no loss: a predecessor never scores below its
successors, so the heap top is always the best derivation not yet taken.

Recursion is replaced by an explicit stack so that the kernel compiles as
plain numba code; node storage is allocated the first time a node is asked
for, so only the part of the chart the k best trees touch is expanded.
"""

import numpy as np
from numba import njit

from .eisner import (
    COMPLETE_LEFT,
    COMPLETE_RIGHT,
    INCOMPLETE_LEFT,
    INCOMPLETE_RIGHT,
    eisner_viterbi_chart,
    span_tails,
)

# columns of the per-node bookkeeping table
_COUNT = 0  # derivations found so far
_EXPANDED = 1  # derivations whose successors are already in the heap
_EXHAUSTED = 2  # 1 when the heap ran dry
_DBASE = 3  # offset of the node's k derivation slots, -1 until first asked for
_HBASE = 4  # offset of the node's heap
_HSIZE = 5  # heap size


@njit(cache=True, nogil=True)
def _decode_node(node, size):
    kind = node // (size * size)
    rest = node - kind * size * size
    return kind, rest // size, rest % size


@njit(cache=True, nogil=True)
def _node(kind, s, t, size):
    return (kind * size + s) * size + t


@njit(cache=True, nogil=True)
def _edge(node, r, scores, size):
    """Tails and weight of hyperedge ``r`` into ``node`` (the goal is node 4 * size^2)."""
    n = size - 1
    kind, s, t = _decode_node(node, size)
    if kind == 4:
        return _node(COMPLETE_LEFT, 1, r, size), _node(COMPLETE_RIGHT, r, n, size), scores[0, r]
    k1, s1, t1, k2, s2, t2 = span_tails(kind, s, t, r)
    weight = 0.0
    if kind == INCOMPLETE_RIGHT:
        weight = scores[s, t]
    elif kind == INCOMPLETE_LEFT:
        weight = scores[t, s]
    return _node(k1, s1, t1, size), _node(k2, s2, t2, size), weight


@njit(cache=True, nogil=True)
def _edge_range(node, size):
    """First and one-past-last split point of the hyperedges into ``node``."""
    kind, s, t = _decode_node(node, size)
    if kind == 4:
        return 1, size
    if kind == COMPLETE_RIGHT:
        return s + 1, t + 1
    return s, t


@njit(cache=True, nogil=True)
def _rank_score(node, rank, chart, size, info, d_score):
    if rank == 0:  # the Viterbi score, also when the node was never expanded
        kind, s, t = _decode_node(node, size)
        return chart[kind, s, t]
    return d_score[info[node, _DBASE] + rank]


@njit(cache=True, nogil=True)
def _sift_down(h_score, h_rab, base, size, i):
    while True:
        best = i
        left = 2 * i + 1
        if left < size and h_score[base + left] > h_score[base + best]:
            best = left
        if left + 1 < size and h_score[base + left + 1] > h_score[base + best]:
            best = left + 1
        if best == i:
            return
        a, b = base + i, base + best
        h_score[a], h_score[b] = h_score[b], h_score[a]
        for c in range(3):
            h_rab[a, c], h_rab[b, c] = h_rab[b, c], h_rab[a, c]
        i = best


@njit(cache=True, nogil=True)
def _heap_push(h_score, h_rab, base, size, score, r, a, b):
    i = size
    while i > 0:
        up = (i - 1) // 2
        if h_score[base + up] >= score:
            break
        h_score[base + i] = h_score[base + up]
        h_rab[base + i, :] = h_rab[base + up, :]
        i = up
    h_score[base + i] = score
    h_rab[base + i, 0], h_rab[base + i, 1], h_rab[base + i, 2] = r, a, b


@njit(cache=True, nogil=True)
def _grow(values, rows, need):
    if need <= values.shape[0]:
        return values, rows
    capacity = max(need, 2 * values.shape[0])
    new_values = np.empty(capacity)
    new_values[: values.shape[0]] = values
    new_rows = np.empty((capacity, 3), dtype=np.int64)
    new_rows[: rows.shape[0]] = rows
    return new_values, new_rows


@njit(cache=True, nogil=True)
def _request(target, want, k, scores, chart, info, pools, used, stack):
    """Make ``target`` hold ``want`` derivations (or all it has), best first.

    ``pools`` is ``(d_score, d_rab, h_score, h_rab)``: the derivations (score;
    split, left rank, right rank) and the candidate heaps of all expanded
    nodes; ``used`` their filled lengths. Returns the pools, possibly grown.
    """
    d_score, d_rab, h_score, h_rab = pools
    size = scores.shape[0]
    stack[0, 0], stack[0, 1] = target, want
    depth = 1
    while depth > 0:
        v, j = stack[depth - 1, 0], stack[depth - 1, 1]
        if info[v, _DBASE] < 0:  # first visit: heap of every hyperedge's best derivation
            kind, s, t = _decode_node(v, size)
            if kind <= COMPLETE_LEFT and s == t:  # a single word: one empty derivation
                info[v, _COUNT] = 1
                info[v, _EXHAUSTED] = 1
                info[v, _DBASE] = 0
                continue
            first, last = _edge_range(v, size)
            d_score, d_rab = _grow(d_score, d_rab, used[0] + k)
            h_score, h_rab = _grow(h_score, h_rab, used[1] + (last - first) + k + 1)
            info[v, _DBASE] = used[0]
            info[v, _HBASE] = used[1]
            used[0] += k
            used[1] += (last - first) + k + 1
            base = info[v, _HBASE]
            for r in range(first, last):
                t1, t2, weight = _edge(v, r, scores, size)
                i = r - first
                h_score[base + i] = (_rank_score(t1, 0, chart, size, info, d_score)
                                     + _rank_score(t2, 0, chart, size, info, d_score)) + weight
                h_rab[base + i, 0], h_rab[base + i, 1], h_rab[base + i, 2] = r, 0, 0
            info[v, _HSIZE] = last - first
            for i in range((last - first) // 2 - 1, -1, -1):
                _sift_down(h_score, h_rab, base, last - first, i)
        if info[v, _COUNT] >= j or info[v, _EXHAUSTED] == 1:
            depth -= 1
            continue
        count = info[v, _COUNT]
        base = info[v, _HBASE]
        if count > 0 and info[v, _EXPANDED] < count:
            last_derivation = info[v, _DBASE] + count - 1
            r, a, b = d_rab[last_derivation, 0], d_rab[last_derivation, 1], d_rab[last_derivation, 2]
            t1, t2, weight = _edge(v, r, scores, size)
            # a rank >= k is never part of the k best of anything above it
            need1 = a + 2 if a + 1 < k else 0
            need2 = b + 2 if (a == 0 and b + 1 < k) else 0
            if need1 > 0 and info[t1, _COUNT] < need1 and info[t1, _EXHAUSTED] == 0:
                stack[depth, 0], stack[depth, 1] = t1, need1
                depth += 1
                continue
            if need2 > 0 and info[t2, _COUNT] < need2 and info[t2, _EXHAUSTED] == 0:
                stack[depth, 0], stack[depth, 1] = t2, need2
                depth += 1
                continue
            if need1 > 0 and info[t1, _COUNT] >= need1:
                value = (_rank_score(t1, a + 1, chart, size, info, d_score)
                         + _rank_score(t2, b, chart, size, info, d_score)) + weight
                _heap_push(h_score, h_rab, base, info[v, _HSIZE], value, r, a + 1, b)
                info[v, _HSIZE] += 1
            if need2 > 0 and info[t2, _COUNT] >= need2:
                value = (_rank_score(t1, a, chart, size, info, d_score)
                         + _rank_score(t2, b + 1, chart, size, info, d_score)) + weight
                _heap_push(h_score, h_rab, base, info[v, _HSIZE], value, r, a, b + 1)
                info[v, _HSIZE] += 1
            info[v, _EXPANDED] = count
        heap_size = info[v, _HSIZE]
        if heap_size == 0:
            info[v, _EXHAUSTED] = 1
            continue
        slot = info[v, _DBASE] + count
        d_score[slot] = h_score[base]
        d_rab[slot, :] = h_rab[base, :]
        info[v, _COUNT] = count + 1
        heap_size -= 1
        h_score[base] = h_score[base + heap_size]
        h_rab[base, :] = h_rab[base + heap_size, :]
        info[v, _HSIZE] = heap_size
        _sift_down(h_score, h_rab, base, heap_size, 0)
    return d_score, d_rab, h_score, h_rab


@njit(cache=True, nogil=True)
def eisner_kbest_kernel(scores, k):
    """The ``k`` best projective single-root trees, best first.

    Returns ``(heads, tree_scores)``: a (k', n) int64 array of heads (k' is
    ``k`` or the number of projective trees if that is smaller) and their
    float64 scores, non-increasing. Ties are broken arbitrarily.
    """
    n = scores.shape[0] - 1
    size = n + 1
    if n == 0 or k <= 0:
        return np.zeros((0, n), dtype=np.int64), np.zeros(0)
    chart, _, _ = eisner_viterbi_chart(scores)
    n_nodes = 4 * size * size + 1
    goal = n_nodes - 1
    info = np.zeros((n_nodes, 6), dtype=np.int64)
    info[:, _DBASE] = -1
    initial = 8 * (k + size)
    pools = (np.empty(initial), np.empty((initial, 3), dtype=np.int64),
             np.empty(initial), np.empty((initial, 3), dtype=np.int64))
    used = np.zeros(2, dtype=np.int64)
    stack = np.empty((4 * size + 8, 2), dtype=np.int64)
    pools = _request(goal, k, k, scores, chart, info, pools, used, stack)

    n_trees = info[goal, _COUNT]
    heads = np.zeros((n_trees, n), dtype=np.int64)
    tree_scores = np.empty(n_trees)
    walk = np.empty((2 * size + 4, 2), dtype=np.int64)
    for i in range(n_trees):
        tree_scores[i] = pools[0][info[goal, _DBASE] + i]
        walk[0, 0], walk[0, 1] = goal, i
        depth = 1
        while depth > 0:
            depth -= 1
            v, rank = walk[depth, 0], walk[depth, 1]
            kind, s, t = _decode_node(v, size)
            if kind <= COMPLETE_LEFT and s == t:
                continue
            if info[v, _COUNT] <= rank:  # a tail used at rank 0 but never expanded
                pools = _request(v, rank + 1, k, scores, chart, info, pools, used, stack)
            d = info[v, _DBASE] + rank
            r, a, b = pools[1][d, 0], pools[1][d, 1], pools[1][d, 2]
            if kind == 4:
                heads[i, r - 1] = 0
            elif kind == INCOMPLETE_RIGHT:
                heads[i, t - 1] = s
            elif kind == INCOMPLETE_LEFT:
                heads[i, s - 1] = t
            t1, t2, _ = _edge(v, r, scores, size)
            walk[depth, 0], walk[depth, 1] = t1, a
            walk[depth + 1, 0], walk[depth + 1, 1] = t2, b
            depth += 2
    return heads, tree_scores
