"""Maximum spanning arborescence (Chu-Liu-Edmonds) for non-projective parsing.

Same conventions as :mod:`sklearn_structured.kernels.eisner`: ``scores[h, m]``
is the score of arc h -> m over positions 0..n with 0 the root, the result an
int64 heads array of length n.

The implementation is the dense O(n^2) form of Chu-Liu-Edmonds (Chu & Liu
1965; Edmonds 1967) due to Tarjan (1977, corrected by Camerini, Fratta &
Maffioli 1979). Cycles are found by growing a path that follows each node's
best incoming arc backwards: reaching the root (or a finished node) finishes the path,
reaching a node already on the path closes a cycle, which is contracted into
one node. Contracting a cycle C rewrites one row and one column of the score
matrix in O(|C| n), and the sizes of all cycles sum to less than 2n, so the
whole search is O(n^2). A final pass over the contraction forest expands
the cycles: the arc entering a contracted node breaks the cycle at the member
it enters and every other member keeps its cycle arc.
"""

import numpy as np
from numba import njit


# Small helpers with one or two call sites are inlined (inline="always"):
# every separately compiled function costs a few tenths of a second on first use.


@njit(cache=True, nogil=True, inline="always")
def _find(redirect, slot):
    """Slot now holding the contracted node that absorbed ``slot`` (with path halving)."""
    while redirect[slot] != slot:
        redirect[slot] = redirect[redirect[slot]]
        slot = redirect[slot]
    return slot


@njit(cache=True, nogil=True, inline="always")
def _root_penalty(scores):
    """A constant larger than any difference between two trees' scores."""
    n = scores.shape[0] - 1
    low = np.inf
    high = -np.inf
    for h in range(n + 1):
        for m in range(1, n + 1):
            value = scores[h, m]
            if h != m and np.isfinite(value):
                low = min(low, value)
                high = max(high, value)
    if high < low:
        return 1.0
    return (n + 1) * (high - low) + 1.0


# Above this root penalty, lowering the root arcs by it could round away the
# differences between them (its ulp exceeds 2^-22), so root children are
# enumerated instead: exact, but O(n^3).
EXACT_ROOT_PENALTY_LIMIT = 2.0**30


@njit(cache=True, nogil=True)
def chu_liu_edmonds_argmax(scores, single_root):
    """Best spanning tree rooted at 0 (non-projective), O(n^2).

    With ``single_root`` the root gets exactly one child, as
    :func:`single_root_by_penalty` finds it; when the scores span so wide a
    range that its penalty would round the root arcs, each root child is
    tried in turn instead. Scores may be ``-inf`` to forbid an arc as long
    as some tree avoids all forbidden arcs.
    """
    n = scores.shape[0] - 1
    if n <= 1:
        return np.zeros(n, dtype=np.int64)
    if not single_root:
        return _max_arborescence(scores.copy())
    heads, exact = single_root_by_penalty(scores)
    if exact:
        return heads
    return _single_root_by_enumeration(scores)


@njit(cache=True, nogil=True)
def single_root_by_penalty(scores):
    """Best tree with one root child, O(n^2): ``(heads, exact)``.

    Every root arc is lowered by a constant larger than any difference
    between two trees' scores, so the best tree has as few root children as
    possible (one) and, among those, the highest score. ``exact`` is False
    (and ``heads`` meaningless) when that constant would round the root arcs;
    :func:`chu_liu_edmonds_argmax` then enumerates the root child. Callers
    from Python that use this directly compile the enumeration only if some
    input needs it (a second of every first run otherwise).
    """
    n = scores.shape[0] - 1
    if n <= 1:
        return np.zeros(n, dtype=np.int64), True
    penalty = _root_penalty(scores)
    if penalty > EXACT_ROOT_PENALTY_LIMIT:
        return np.zeros(n, dtype=np.int64), False
    weight = scores.copy()
    for m in range(1, n + 1):
        weight[0, m] -= penalty
    return _max_arborescence(weight), True


@njit(cache=True, nogil=True)
def _single_root_by_enumeration(scores):
    """Best tree with one root child, trying every child: n unconstrained decodes."""
    n = scores.shape[0] - 1
    best_heads = np.zeros(n, dtype=np.int64)
    found = False
    for r in range(1, n + 1):
        if not np.isfinite(scores[0, r]):
            continue
        weight = scores.copy()
        for m in range(1, n + 1):
            if m != r:
                weight[0, m] = -np.inf
        heads = _max_arborescence(weight)
        # the two trees' score difference, summed exactly: in floating point
        # the small root arcs would vanish next to huge word-to-word arcs
        terms = np.empty(2 * n)
        finite = True
        for m in range(1, n + 1):
            terms[m - 1] = scores[heads[m - 1], m]
            terms[n + m - 1] = -scores[best_heads[m - 1], m]
            finite = finite and np.isfinite(terms[m - 1])
        if finite and (not found or _exact_sum_sign(terms) > 0):
            best_heads = heads
            found = True
    return best_heads


@njit(cache=True, nogil=True, inline="always")
def _exact_sum_sign(terms):
    """Sign (-1, 0, 1) of the exact sum of finite floats.

    Shewchuk's expansion arithmetic: ``parts`` holds non-overlapping floats,
    increasing in magnitude, whose exact sum is the sum of the terms so far
    (each addition split into its rounded sum and rounding error, which is
    exact); the largest part then carries the sign.
    """
    parts = np.zeros(terms.shape[0] + 1)
    n_parts = 0
    for term in terms:
        carry = term
        kept = 0
        for i in range(n_parts):
            total = carry + parts[i]
            virtual = total - carry
            error = (carry - (total - virtual)) + (parts[i] - virtual)
            if error != 0.0:
                parts[kept] = error
                kept += 1
            carry = total
        parts[kept] = carry
        n_parts = kept + 1
    for i in range(n_parts - 1, -1, -1):
        if parts[i] != 0.0:
            return 1 if parts[i] > 0.0 else -1
    return 0


@njit(cache=True, nogil=True)
def _max_arborescence(weight):
    """Chu-Liu-Edmonds on ``weight`` (overwritten): best tree rooted at 0, any root children."""
    n = weight.shape[0] - 1
    heads = np.zeros(n, dtype=np.int64)
    size = n + 1
    for v in range(size):
        weight[v, v] = -np.inf
        weight[v, 0] = -np.inf
    # the original arc behind each entry of the (contracted) matrix
    arc_head = np.empty((size, size), dtype=np.int64)
    arc_mod = np.empty((size, size), dtype=np.int64)
    for u in range(size):
        for v in range(size):
            arc_head[u, v] = u
            arc_mod[u, v] = v

    max_nodes = 2 * size
    slot_of = np.empty(max_nodes, dtype=np.int64)  # matrix slot of a live node
    node_at = np.arange(size)  # live node occupying each slot
    for v in range(size):
        slot_of[v] = v
    redirect = np.arange(size)
    active = np.ones(size, dtype=np.bool_)
    parent = np.full(max_nodes, -1, dtype=np.int64)  # contraction forest
    child_start = np.zeros(max_nodes, dtype=np.int64)
    child_count = np.zeros(max_nodes, dtype=np.int64)
    children = np.empty(max_nodes, dtype=np.int64)
    n_children = 0
    in_head = np.zeros(max_nodes, dtype=np.int64)  # chosen incoming arc (original ids)
    in_mod = np.zeros(max_nodes, dtype=np.int64)
    in_score = np.zeros(max_nodes)
    state = np.zeros(max_nodes, dtype=np.int8)  # 0 new, 1 on the path, 2 finished
    state[0] = 2
    in_cycle = np.zeros(size, dtype=np.bool_)
    path = np.empty(max_nodes, dtype=np.int64)
    n_nodes = size

    for start in range(1, size):
        v = node_at[_find(redirect, start)]
        if state[v] != 0:
            continue
        path[0] = v
        length = 1
        state[v] = 1
        while True:
            sv = slot_of[v]
            best = -np.inf
            best_slot = -1
            for u in range(size):
                if active[u] and u != sv and (best_slot < 0 or weight[u, sv] > best):
                    best = weight[u, sv]
                    best_slot = u
            in_score[v] = best
            in_head[v] = arc_head[best_slot, sv]
            in_mod[v] = arc_mod[best_slot, sv]
            source = node_at[best_slot]
            if state[source] == 2:
                for i in range(length):
                    state[path[i]] = 2
                break
            if state[source] == 0:
                state[source] = 1
                path[length] = source
                length += 1
                v = source
                continue
            # cycle: the path from ``source`` to its end; contract it into node c
            c = n_nodes
            n_nodes += 1
            rep = slot_of[source]
            child_start[c] = n_children
            while True:
                length -= 1
                x = path[length]
                parent[x] = c
                children[n_children] = x
                n_children += 1
                in_cycle[slot_of[x]] = True
                if x == source:
                    break
            child_count[c] = n_children - child_start[c]
            for a in range(size):
                if not active[a] or in_cycle[a]:
                    continue
                best_in = -np.inf
                best_in_slot = -1
                best_out = -np.inf
                best_out_slot = -1
                for i in range(child_start[c], n_children):
                    x = children[i]
                    sx = slot_of[x]
                    # entering the cycle at x replaces x's cycle arc
                    value = weight[a, sx] - in_score[x]
                    if value != value:
                        value = -np.inf
                    if best_in_slot < 0 or value > best_in:
                        best_in = value
                        best_in_slot = sx
                    if best_out_slot < 0 or weight[sx, a] > best_out:
                        best_out = weight[sx, a]
                        best_out_slot = sx
                arc_head[a, rep] = arc_head[a, best_in_slot]
                arc_mod[a, rep] = arc_mod[a, best_in_slot]
                weight[a, rep] = best_in
                arc_head[rep, a] = arc_head[best_out_slot, a]
                arc_mod[rep, a] = arc_mod[best_out_slot, a]
                weight[rep, a] = best_out
            for i in range(child_start[c], n_children):
                sx = slot_of[children[i]]
                in_cycle[sx] = False
                if sx != rep:
                    active[sx] = False
                    redirect[sx] = rep
            weight[rep, rep] = -np.inf
            node_at[rep] = c
            slot_of[c] = rep
            state[c] = 1
            path[length] = c
            length += 1
            v = c

    # expand: a node's incoming arc enters one member of each enclosing cycle
    # on its way down; every other member of those cycles keeps its own arc
    stack = np.empty(max_nodes, dtype=np.int64)
    top = 0
    for x in range(1, n_nodes):
        if parent[x] < 0:
            stack[top] = x
            top += 1
    while top > 0:
        top -= 1
        x = stack[top]
        m = in_mod[x]
        heads[m - 1] = in_head[x]
        y = m
        while y != x:
            p = parent[y]
            for i in range(child_start[p], child_start[p] + child_count[p]):
                z = children[i]
                if z != y:
                    stack[top] = z
                    top += 1
            y = p
    return heads


@njit(cache=True, nogil=True)
def chu_liu_edmonds_argmax_batch(flat_scores, score_offsets, lengths, single_root):
    """Batch form of :func:`chu_liu_edmonds_argmax`; same ragged layout as
    :func:`sklearn_structured.kernels.eisner.eisner_argmax_batch`."""
    heads = np.empty(lengths.sum(), dtype=np.int64)
    start = 0
    for i in range(lengths.shape[0]):
        size = lengths[i] + 1
        block = flat_scores[score_offsets[i]:score_offsets[i] + size * size].reshape((size, size))
        heads[start:start + lengths[i]] = chu_liu_edmonds_argmax(block, single_root)
        start += lengths[i]
    return heads
