"""Third-order tree scores and randomized hill-climbing decoding (Zhang et al., 2014).

A tree's score is the sum of its first-order arc scores (a dense
``(n + 1, n + 1)`` matrix, as for the other decoders) and of the scores of
its higher-order parts, each the sum of hashed feature weights:

``SIB (h, a, b)``
    consecutive siblings: ``a`` and ``b`` are neighbouring children of ``h``
    on one side, ``a`` the nearer; ``a == h`` marks the first child (start)
    and ``b`` equal to -1 (left side) or n + 1 (right side) the end, so an
    empty side is the part ``(h, h, end)``.
``GP (g, h, m)``
    grandparent: the arcs g -> h -> m.
``GSIB (g, h, a, b)``
    grand-sibling: a consecutive-sibling part of a head h != 0 with h's head g.
``TSIB (h, a, b, c)``
    tri-sibling: three consecutive entries of a side's list
    ``start, children..., end``; ``b`` is always a child.
``BIGRAM (m - 1, m, h1, h2)``
    head bigram: ``h1``, ``h2`` are the heads of the neighbours m - 1 and m.

The features of a part are given as data (:class:`PartScorer`), so the
estimator owns its templates while this module stays free of package
imports: a template row is ``(number, col0, col1, col2, col3, conj)``, where
``col_r`` is the column of the token-attribute matrix read for the part's
r-th token (-1: unused; start and end read -1 and -2) and ``conj`` adds the
part's direction pattern (1) or that and a binned distance (2). The feature
id is ``feature_hash(number, v0, v1, v2, v3, conj) % n_features``.

Decoding: hill climbing moves one word at a time to its best candidate
head under the full score (never creating a cycle) until no move helps;
restarts go on until ``patience`` restarts in a row bring no better tree.
A word's score under each candidate head is cached across moves and
restarts and recomputed only once the tree has changed around it.
The first climb starts from the best first-order tree. Zhang et al. draw
the other start trees by Wilson's random walk from ``exp(arc score)`` over
the candidate heads (``random_walk=True``); by default (our addition) each
restart starts from the best tree under the arc scores plus Gumbel noise of
scale ``perturbation`` instead. The candidate heads of a word are those
within ``margin`` of its best arc score, plus its head in the best
first-order tree, so the candidates always hold a tree. With
``single_root`` a word moves onto the root only by swapping places with the
current root child (which takes a head in the word's subtree). With
``projective`` (our addition, for treebanks whose trees hardly ever cross)
the search keeps to projective trees: its start trees are Eisner's, and a
move that would make arcs cross is not taken. Hamming cost augmentation is
the caller's: it adds the cost to the arc scores.
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from .eisner import eisner_argmax
from .hashing import feature_hash, table_row
from .mst import chu_liu_edmonds_argmax

SIB, GP, GSIB, TSIB, BIGRAM = 0, 1, 2, 3, 4
N_PART_TYPES = 5
START_VALUE, END_VALUE = -1, -2  # attribute values read at a side's start / end
_TOLERANCE = 1e-9  # a move must gain more than this (scores are float sums)
_MAX_KEY_TOKEN = 4096  # memo keys pack token positions + 1 into 12 bits


class AttachCache(NamedTuple):
    """The attach scores of the candidate heads, valid until the tree changes near them.

    The attach score of m under h reads only h's head, h's children, m's
    children and the heads of m - 1 and m + 1; each change of the tree
    stamps the words it touches with a new clock value, and a cached score
    is reused while no stamp it depends on is newer than it. The sum of its
    head-side parts (reading h's head and children only) is kept as well:
    when only m's side has changed, the score is that sum plus the word-side
    parts, added in the same order as from scratch, so the same float.
    """

    values: np.ndarray  # by candidate slot (the ``heads`` index of candidate_heads)
    head_side: np.ndarray  # by candidate slot: the head-side parts' sum
    computed_at: np.ndarray  # clock value when the slot's score was computed
    head_stamp: np.ndarray  # (n + 2,) clock of the last change of each word's head
    kids_stamp: np.ndarray  # (n + 1,) clock of the last change of each word's children
    clock: np.ndarray  # one counter


class PartScorer(NamedTuple):
    """What the high-order part scores of one sentence are made of."""

    attrs: np.ndarray  # (n + 1, n_columns) int64 token attributes, row 0 the root
    templates: np.ndarray  # (n_templates, 6) int64 rows, grouped by part type
    part_off: np.ndarray  # templates of part type t: rows part_off[t]:part_off[t + 1]
    theta: np.ndarray  # float64 weights indexed by feature id
    n_features: int
    scale: float  # multiplies every part score (the parser's gamma)


class ClimbSettings(NamedTuple):
    # restarts in a row without a better tree before stopping: 20 finds the best
    # tree of over 99% of the random instances of tests/lowrank/test_hill_climbing.py
    # (2-7 words, single root, the restarts' noise at the instances' scale)
    patience: int = 20
    margin: float = np.inf  # candidate heads: arc score within this of the word's best
    single_root: bool = True
    seed: int = 0
    # search projective trees only (single root): starts from Eisner trees, moves
    # that would make an arc cross are skipped
    projective: bool = False
    # restarts: best trees under arc scores plus Gumbel noise of this scale (EWT dev,
    # projective third-order model: 0.25 beat 0.1, 0.5, 1, 2 and 4) ...
    perturbation: float = 0.25
    # ... or Zhang et al.'s random-walk samples (non-projective search only)
    random_walk: bool = False


class Memo(NamedTuple):
    """Open-addressing table of the part scores computed so far for one sentence."""

    keys: np.ndarray
    values: np.ndarray
    used: np.ndarray  # one counter


class PartBuffer(NamedTuple):
    """Scratch space for scoring a list of parts (allocated once per climb)."""

    parts: np.ndarray  # (rows, 6): sign, type, a, b, c, d
    slots: np.ndarray  # (rows,) memo slot of each part not found in the memo, -1 if found
    values: np.ndarray  # (rows,) score of each part
    ids: np.ndarray  # (rows * widest template group,) feature ids of the parts not found
    weights: np.ndarray  # their weights


# Small helpers with one or two call sites are inlined (inline="always"):
# every separately compiled function costs a few tenths of a second on first use.
# A constant int or bool argument in a call between kernels is typed as that
# literal value, and numba compiles the callee once more for each such value:
# the calls below pass np.int64(...) / np.bool_(...) and never leave a default
# out, so that each kernel is compiled once (the decoder's biggest kernel took
# a minute a copy with bounds checking).


@njit(cache=True, nogil=True)
def new_memo(n, n_arcs):
    """An empty memo for a sentence of n words with ``n_arcs`` candidate arcs.

    A decode meets some 25-30 distinct parts per candidate arc (EWT dev,
    30 restarts), so 128 slots per arc keep the table at most a quarter
    full. Longer sentences than the keys can pack get no memo.
    """
    if n + 2 >= _MAX_KEY_TOKEN:
        return Memo(np.zeros(0, np.int64), np.zeros(0), np.zeros(1, np.int64))
    capacity = 1024
    while capacity < 128 * n_arcs:
        capacity *= 2
    return Memo(np.full(capacity, -1, dtype=np.int64), np.empty(capacity), np.zeros(1, np.int64))


@njit(cache=True, nogil=True, inline="always")
def _distance_bin(d):
    if d <= 4:
        return d
    if d <= 6:
        return 5
    if d <= 10:
        return 6
    return 7


@njit(cache=True, nogil=True, inline="always")
def _kind(t, h, n):
    """0 for a word, 1 for a side's start (the head's own position), 2 for its end."""
    if t == h:
        return 1
    if t < 0 or t > n:
        return 2
    return 0


@njit(cache=True, nogil=True)
def _part_context(ptype, a, b, c, d, n):
    """Kinds of the part's four tokens, its direction pattern and distance."""
    k0 = k1 = k2 = k3 = 0
    distance = 0
    if ptype == SIB:  # (h, a, b)
        k1 = _kind(b, a, n)
        k2 = _kind(c, a, n)
        shape = 1 + (1 if c > a else 0)
        if k2 == 0:
            distance = abs(c - b)
    elif ptype == GSIB:  # (g, h, a, b)
        k2 = _kind(c, b, n)
        k3 = _kind(d, b, n)
        shape = 1 + (1 if d > b else 0) + 2 * (1 if a < b else 0)
        if k3 == 0:
            distance = abs(d - c)
    elif ptype == TSIB:  # (h, a, b, c): b is a word
        k1 = _kind(b, a, n)
        k3 = _kind(d, a, n)
        shape = 1 + (1 if c > a else 0)
    elif ptype == GP:  # (g, h, m)
        shape = 1 + (1 if a < b else 0) + 2 * (1 if b < c else 0)
        distance = abs(b - c)
    else:  # BIGRAM (m - 1, m, h1, h2)
        shape = (1 + (1 if c < a else 0) + 2 * (1 if d < b else 0) + 4 * (1 if c == d else 0)
                 + 8 * (1 if c == b else 0) + 16 * (1 if d == a else 0))
    return k0, k1, k2, k3, shape, distance


@njit(cache=True, nogil=True, inline="always")
def _value(attrs, token, kind, col):
    if col < 0:
        return 0
    if kind == 1:
        return START_VALUE
    if kind == 2:
        return END_VALUE
    return attrs[token, col]


# The hot functions below read the arrays out of the named tuples once: each
# read of a tuple's array costs reference counting, some 100 ns per lookup
# when done per part (thirty times the lookup itself).


@njit(cache=True, nogil=True, inline="always")
def _template_id(row, attrs, n_features, a, b, c, d, context):
    """Feature id of one template row on the part's tokens."""
    k0, k1, k2, k3, shape, distance = context
    conj = 0
    if row[5] >= 1:
        conj = shape
    if row[5] == 2:
        conj += 32 * _distance_bin(distance)
    key = feature_hash(row[0], _value(attrs, a, k0, row[1]), _value(attrs, b, k1, row[2]),
                       _value(attrs, c, k2, row[3]), _value(attrs, d, k3, row[4]), conj)
    return table_row(key, n_features)


@njit(cache=True, nogil=True, inline="always")
def _write_ids(attrs, templates, part_off, n_features, ptype, a, b, c, d, out, k):
    """Write the feature ids of one part into ``out[k:]``; return the new end."""
    context = _part_context(ptype, a, b, c, d, attrs.shape[0] - 1)
    for j in range(part_off[ptype], part_off[ptype + 1]):
        out[k] = _template_id(templates[j], attrs, n_features, a, b, c, d, context)
        k += 1
    return k


@njit(cache=True, nogil=True)
def part_feature_ids(scorer, ptype, a, b, c, d, out, k):
    """Write the feature ids of one part into ``out[k:]``; return the new end."""
    return _write_ids(scorer.attrs, scorer.templates, scorer.part_off, scorer.n_features,
                      ptype, a, b, c, d, out, k)


@njit(cache=True, nogil=True, inline="always")
def _memo_key(parts, i):
    """Memo key of part row i and its hash (masked by the caller into a first slot)."""
    key = parts[i, 1] + 8 * ((parts[i, 2] + 1) + 4096 * ((parts[i, 3] + 1) + 4096 * (
        (parts[i, 4] + 1) + 4096 * (parts[i, 5] + 1))))
    return key, np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40))


@njit(cache=True, nogil=True)
def part_buffer(parts, part_off):
    """A :class:`PartBuffer` around the part rows ``parts``."""
    rows = len(parts)
    widest = 0
    for t in range(len(part_off) - 1):
        widest = max(widest, part_off[t + 1] - part_off[t])
    return PartBuffer(parts, np.empty(rows, dtype=np.int64), np.empty(rows),
                      np.empty(rows * widest, dtype=np.int64), np.empty(rows * widest))


@njit(cache=True, nogil=True, inline="always")
def _memo_score(buffer, count, total, attrs, templates, part_off, theta, n_features, scale,
                keys, values, used):
    """:func:`score_parts` on the arrays of the scorer and memo (inlined where a loop
    scores parts: reading arrays out of the named tuples inside the loop would cost
    reference counting at every iteration).

    Three passes: memo lookups, listing the feature ids of the parts not
    found; the weights of those ids, read in one loop free of branches so
    that the processor overlaps their cache misses (the weight table is tens
    of MB); the parts' scores summed in order, the new ones memoised. The
    sums are those of scoring part by part, term for term.
    """
    parts, slots, part_values, ids, weights = (buffer.parts, buffer.slots, buffer.values,
                                               buffer.ids, buffer.weights)
    mask = len(keys) - 1
    n_ids = 0
    for i in range(count):
        key, slot = _memo_key(parts, i)
        slot &= mask
        slots[i] = slot
        if mask > 0:
            while keys[slot] >= 0:
                if keys[slot] == key:
                    slots[i] = -1
                    part_values[i] = values[slot]
                    break
                slot = (slot + 1) & mask
        if slots[i] >= 0:
            n_ids = _write_ids(attrs, templates, part_off, n_features, parts[i, 1], parts[i, 2],
                               parts[i, 3], parts[i, 4], parts[i, 5], ids, n_ids)
    for t in range(n_ids):
        weights[t] = theta[ids[t]]
    t = 0
    for i in range(count):
        if slots[i] >= 0:
            weight = 0.0
            for q in range(part_off[parts[i, 1] + 1] - part_off[parts[i, 1]]):
                weight += weights[t]
                t += 1
            part_values[i] = scale * weight
            if mask > 0 and 2 * (used[0] + 1) <= len(keys):
                # a part listed twice was stored by its first row
                key, slot = _memo_key(parts, i)
                slot &= mask
                while keys[slot] >= 0 and keys[slot] != key:
                    slot = (slot + 1) & mask
                if keys[slot] < 0:
                    keys[slot] = key
                    values[slot] = part_values[i]
                    used[0] += 1
        total += parts[i, 0] * part_values[i]
    return total


@njit(cache=True, nogil=True)
def score_parts(buffer, count, scorer, memo, total):
    """``total`` plus the signed scores of the parts ``buffer.parts[:count]`` (rows
    ``sign, type, a, b, c, d``), added in order.

    Part scores are memoised per sentence (open addressing; a full table
    stops memoising rather than growing).
    """
    return _memo_score(buffer, count, total, scorer.attrs, scorer.templates, scorer.part_off,
                       scorer.theta, scorer.n_features, scorer.scale, memo.keys, memo.values,
                       memo.used)


# ---------------------------------------------------------------- parts of a tree


@njit(cache=True, nogil=True, inline="always")
def _put(parts, k, sign, ptype, a, b, c, d):
    parts[k, 0], parts[k, 1], parts[k, 2], parts[k, 3], parts[k, 4], parts[k, 5] = (
        sign, ptype, a, b, c, d)
    return k + 1


@njit(cache=True, nogil=True)
def tree_parts(heads):
    """The high-order parts of a tree (heads of words 1..n): rows ``1, type, a, b, c, d``
    (the sign column of :func:`score_parts`)."""
    n = len(heads)
    hd = np.empty(n + 1, dtype=np.int64)
    hd[0] = -1
    hd[1:] = heads
    parts = np.zeros((12 * n + 8, 6), dtype=np.int64)
    k = 0
    seq = np.empty(n + 2, dtype=np.int64)
    for h in range(n + 1):
        for step in (-1, 1):
            # the side's list: start (h), children from nearest to farthest, end
            seq[0] = h
            size = 1
            p = h + step
            while 0 < p <= n:
                if hd[p] == h:
                    seq[size] = p
                    size += 1
                p += step
            seq[size] = n + 1 if step > 0 else -1
            size += 1
            for i in range(size - 1):
                k = _put(parts, k, 1, SIB, h, seq[i], seq[i + 1], 0)
                if h != 0:
                    k = _put(parts, k, 1, GSIB, hd[h], h, seq[i], seq[i + 1])
            for i in range(size - 2):
                k = _put(parts, k, 1, TSIB, h, seq[i], seq[i + 1], seq[i + 2])
    for m in range(1, n + 1):
        if hd[m] != 0:
            k = _put(parts, k, 1, GP, hd[hd[m]], hd[m], m, 0)
        if m >= 2:
            k = _put(parts, k, 1, BIGRAM, m - 1, m, hd[m - 1], hd[m])
    return parts[:k]


@njit(cache=True, nogil=True)
def high_order_score(heads, scorer, memo):
    """Sum of the part scores of a tree."""
    parts = tree_parts(heads)
    return score_parts(part_buffer(parts, scorer.part_off), len(parts), scorer, memo, 0.0)


@njit(cache=True, nogil=True)
def full_score(arc_scores, heads, scorer, memo):
    """First-order plus high-order score of a tree."""
    total = high_order_score(heads, scorer, memo)
    for m in range(1, len(heads) + 1):
        total += arc_scores[heads[m - 1], m]
    return total


# ---------------------------------------------------------------- local moves


@njit(cache=True, nogil=True, inline="always")
def _inner(hd, h, x):
    """Nearest child of h strictly between h and x (next to x), or h itself (start)."""
    step = 1 if x < h else -1
    for p in range(x + step, h, step):
        if hd[p] == h:
            return p
    return h


@njit(cache=True, nogil=True, inline="always")
def _outer(hd, h, x, n):
    """Nearest child of h beyond x on x's side, or the side's end (-1 or n + 1)."""
    if x < h:
        for p in range(x - 1, 0, -1):
            if hd[p] == h:
                return p
        return -1
    for p in range(x + 1, n + 1):
        if hd[p] == h:
            return p
    return n + 1


@njit(cache=True, nogil=True, inline="always")
def attach_buffer(n, part_off):
    """A :class:`PartBuffer` for the parts :func:`attach_score` lists,
    allocated once per climb rather than once per candidate head."""
    return part_buffer(np.empty((2 * n + 16, 6), dtype=np.int64), part_off)


@njit(cache=True, nogil=True, inline="always")
def _head_side_parts(hd, m, h, parts):
    """List into the scratch rows ``parts`` the parts that change when m hangs from h
    and read h's side of the tree (h's head, h's other children), those m's absence
    makes with a minus sign; return their number."""
    n = len(hd) - 1
    k = 0
    g = hd[h] if h != 0 else -1
    if h != 0:
        k = _put(parts, k, 1, GP, g, h, m, 0)
    prev = _inner(hd, h, m)
    nxt = _outer(hd, h, m, n)
    # m between prev and next in h's list: sibling pairs and triples through m,
    # minus those that bridge the gap without m
    k = _put(parts, k, 1, SIB, h, prev, m, 0)
    k = _put(parts, k, 1, SIB, h, m, nxt, 0)
    k = _put(parts, k, -1, SIB, h, prev, nxt, 0)
    if h != 0:
        k = _put(parts, k, 1, GSIB, g, h, prev, m)
        k = _put(parts, k, 1, GSIB, g, h, m, nxt)
        k = _put(parts, k, -1, GSIB, g, h, prev, nxt)
    k = _put(parts, k, 1, TSIB, h, prev, m, nxt)
    if prev != h:
        pp = _inner(hd, h, prev)
        k = _put(parts, k, 1, TSIB, h, pp, prev, m)
        k = _put(parts, k, -1, TSIB, h, pp, prev, nxt)
    if 0 < nxt <= n:
        nn = _outer(hd, h, nxt, n)
        k = _put(parts, k, 1, TSIB, h, m, nxt, nn)
        k = _put(parts, k, -1, TSIB, h, prev, nxt, nn)
    return k


@njit(cache=True, nogil=True, inline="always")
def _word_side_parts(hd, m, h, parts):
    """The same for the parts that read m's side (m's children, the heads of m - 1 and m + 1)."""
    n = len(hd) - 1
    k = 0
    # h is the grandparent of m's children and of m's sibling parts
    for step in (-1, 1):
        a = m
        p = m + step
        while 0 < p <= n:
            if hd[p] == m:
                k = _put(parts, k, 1, GP, h, m, p, 0)
                k = _put(parts, k, 1, GSIB, h, m, a, p)
                a = p
            p += step
        k = _put(parts, k, 1, GSIB, h, m, a, n + 1 if step > 0 else -1)
    if m >= 2:
        k = _put(parts, k, 1, BIGRAM, m - 1, m, hd[m - 1], h)
    if m < n:
        k = _put(parts, k, 1, BIGRAM, m, m + 1, h, hd[m + 1])
    return k


@njit(cache=True, nogil=True)
def attach_score(arc_scores, hd, m, h, scorer, memo, buffer):
    """Score of the parts that change when m hangs from h, minus the parts m's absence makes.

    The tree score with m under h is a constant (the tree without m)
    plus this, so moving m from h to h' gains ``attach(h') - attach(h)``.
    Reads the heads of every word but m. ``buffer`` is scratch space
    (:func:`attach_buffer`). The head-side parts are added first, then the
    word-side ones, the order the decoder's cache relies on.
    """
    head_side = score_parts(buffer, _head_side_parts(hd, m, h, buffer.parts), scorer, memo, 0.0)
    return arc_scores[h, m] + score_parts(buffer, _word_side_parts(hd, m, h, buffer.parts), scorer,
                                          memo, head_side)


@njit(cache=True, nogil=True, inline="always")
def _descends(hd, x, m):
    """Whether x lies in the subtree of m (m included)."""
    while x > 0:
        if x == m:
            return True
        x = hd[x]
    return x == m


@njit(cache=True, nogil=True)
def new_attach_cache(n, n_candidates):
    """An empty cache (every slot stale) for a sentence of n words."""
    return AttachCache(np.empty(n_candidates), np.empty(n_candidates),
                       np.zeros(n_candidates, dtype=np.int64),
                       np.ones(n + 2, dtype=np.int64), np.ones(n + 1, dtype=np.int64),
                       np.ones(1, dtype=np.int64))


@njit(cache=True, nogil=True, inline="always")
def _set_head(hd, w, h, cache):
    """Hang w from h, stamping what the change touches."""
    if hd[w] != h:
        cache.clock[0] += 1
        now = cache.clock[0]
        cache.head_stamp[w] = now
        cache.kids_stamp[hd[w]] = now
        cache.kids_stamp[h] = now
        hd[w] = h


# ---------------------------------------------------------------- decoding


@njit(cache=True, nogil=True)
def candidate_heads(arc_scores, margin, first):
    """Candidate heads per word: ``(offsets, heads, cumulative exp weights)``.

    Heads within ``margin`` of the word's best arc score, plus the word's
    head in the tree ``first`` (heads of words 1..n), so that the
    candidates hold a tree.
    """
    n = arc_scores.shape[0] - 1
    off = np.zeros(n + 2, dtype=np.int64)
    heads = np.empty(n * n, dtype=np.int64)
    cum = np.empty(n * n)
    k = 0
    for m in range(1, n + 1):
        best = -np.inf
        for h in range(n + 1):
            if h != m:
                best = max(best, arc_scores[h, m])
        total = 0.0
        for h in range(n + 1):
            if h != m and (arc_scores[h, m] >= best - margin or h == first[m - 1]):
                heads[k] = h
                total += np.exp(arc_scores[h, m] - best)
                cum[k] = total
                k += 1
        off[m + 1] = k
    return off, heads[:k], cum[:k]


@njit(cache=True, nogil=True)
def sample_tree(off, heads, cum, first, n, hd):
    """Wilson's loop-erased random walk over the candidate heads, into ``hd`` (may be multi-root).

    A walk that has not met the tree after 4 (n + 1) steps ends along the
    tree ``first``, so that strongly peaked scores cannot trap it in
    a cycle for long.
    """
    in_tree = np.zeros(n + 1, dtype=np.bool_)
    in_tree[0] = True
    hd[0] = -1
    for i in np.random.permutation(n) + 1:
        u = i
        steps = 0
        while not in_tree[u]:
            if steps > 4 * (n + 1):
                hd[u] = first[u - 1]
            else:
                x = np.random.random() * cum[off[u + 1] - 1]
                j = off[u]
                while j < off[u + 1] - 1 and cum[j] < x:
                    j += 1
                hd[u] = heads[j]
            u = hd[u]
            steps += 1
        u = i
        while not in_tree[u]:
            in_tree[u] = True
            u = hd[u]


@njit(cache=True, nogil=True)
def _keep_one_root_child(arc_scores, hd, off, heads):
    """Leave one root child (drawn by exp(score)); re-attach the others to their best
    head outside their subtree, a candidate head if one qualifies."""
    n = len(hd) - 1
    total = 0.0
    for c in range(1, n + 1):
        if hd[c] == 0:
            total += np.exp(arc_scores[0, c])
    x = np.random.random() * total
    keep = -1
    for c in range(1, n + 1):
        if hd[c] == 0:
            keep = c
            x -= np.exp(arc_scores[0, c])
            if x <= 0.0:
                break
    for c in range(1, n + 1):
        if hd[c] != 0 or c == keep:
            continue
        best = -1
        best_is_candidate = False
        for h in range(1, n + 1):
            if _descends(hd, h, c):
                continue
            is_candidate = False
            for j in range(off[c], off[c + 1]):
                is_candidate = is_candidate or heads[j] == h
            if (best < 0 or (is_candidate and not best_is_candidate)
                    or (is_candidate == best_is_candidate and arc_scores[h, c] > arc_scores[best, c])):
                best = h
                best_is_candidate = is_candidate
        hd[c] = best


@njit(cache=True, nogil=True)
def _preorder(hd):
    """Words in depth-first pre-order of the tree (heads before their dependents)."""
    n = len(hd) - 1
    count = np.zeros(n + 2, dtype=np.int64)
    for m in range(1, n + 1):
        count[hd[m] + 1] += 1
    start = np.cumsum(count)  # children of h: kids[start[h]:start[h + 1]]
    fill = start.copy()
    kids = np.empty(n, dtype=np.int64)
    for m in range(1, n + 1):
        kids[fill[hd[m]]] = m
        fill[hd[m]] += 1
    order = np.empty(n, dtype=np.int64)
    stack = np.empty(n + 1, dtype=np.int64)
    stack[0] = 0
    top = 1
    k = 0
    while top > 0:
        top -= 1
        x = stack[top]
        if x != 0:
            order[k] = x
            k += 1
        for j in range(start[x + 1] - 1, start[x] - 1, -1):
            stack[top] = kids[j]
            top += 1
    return order


@njit(cache=True, nogil=True)
def arc_crosses(hd, h, m, skip):
    """Whether the arc h -> m crosses the arc of a word other than m and ``skip``.

    When the tree's other arcs do not cross, this is whether hanging m from
    h makes the tree non-projective (the root, at position 0, lies outside
    every arc). O(n) and allocation-free: it runs for every move tried.
    """
    lo = min(h, m)
    hi = max(h, m)
    for a in range(1, len(hd)):
        if a == m or a == skip:
            continue
        left = min(a, hd[a])
        right = max(a, hd[a])
        if lo < left < hi < right or left < lo < right < hi:
            return True
    return False


# compiled without reference counting (it allocates nothing): with it, the arrays read
# in the candidate loop cost an atomic increment and decrement each, a third of the
# decoding time on EWT dev
@njit(cache=True, nogil=True, _nrt=False)
def _best_head(arc_scores, hd, w, off, heads, scorer, memo, buffer, cache, under, allow_root,
               projective):
    """Best candidate head of w: ``(head, its attach score, attach score of w's current head)``.

    Candidates creating a cycle are skipped, and so is the root unless
    ``allow_root``; with ``under >= 0`` only heads in the subtree of
    ``under`` qualify (``under`` then hangs from the root in place of w, the
    root child, in a tree changed for the moment: the cache is not used);
    with ``projective``, a head that would make arcs cross is skipped
    (checked only for a head that would be the best). One loop evaluates
    the candidates and then, if it is none of them, the current head, so
    the costly part scoring is compiled in once.
    """
    attrs, templates, part_off, theta = scorer.attrs, scorer.templates, scorer.part_off, scorer.theta
    keys, values, used = memo.keys, memo.values, memo.used
    parts = buffer.parts
    cached, cached_head_side, computed_at = cache.values, cache.head_side, cache.computed_at
    head_stamp, kids_stamp = cache.head_stamp, cache.kids_stamp
    now = cache.clock[0]
    old = hd[w]
    base = -np.inf
    best = -np.inf
    best_h = old
    # a root arc to ``under`` that crosses an arc staying in place rules out every head
    blocked = projective and under >= 0 and arc_crosses(hd, np.int64(0), under, w)
    # the cache holds for every candidate of w while w's children and neighbours stay
    around_w = max(kids_stamp[w], head_stamp[w - 1], head_stamp[w + 1])
    old_is_candidate = False
    for j in range(off[w], off[w + 1] + 1):
        if j < off[w + 1]:
            h = heads[j]
            if h == old:
                old_is_candidate = True
            elif (h == 0 and not allow_root) or _descends(hd, h, w):
                continue
            elif under >= 0 and not _descends(hd, h, under):
                continue
        elif old_is_candidate:
            break
        else:
            h = old
        # a candidate slot in the real tree (not the current head appended after them)
        cacheable = j < off[w + 1] and under < 0
        head_side_fresh = fresh = False
        if cacheable:
            head_side_stamp = kids_stamp[h]
            if h != 0:
                head_side_stamp = max(head_side_stamp, head_stamp[h])
            head_side_fresh = computed_at[j] >= head_side_stamp
            fresh = head_side_fresh and computed_at[j] >= around_w
        if fresh:
            value = cached[j]
        else:
            # the head side's parts (unless cached), then the word side's added to
            # them; one call site, so that the part scoring is compiled in once
            head_side = cached_head_side[j] if head_side_fresh else 0.0
            total = head_side
            for word_side in range(1 if head_side_fresh else 0, 2):
                if word_side:
                    count = _word_side_parts(hd, w, h, parts)
                else:
                    count = _head_side_parts(hd, w, h, parts)
                total = _memo_score(buffer, count, total, attrs, templates, part_off, theta,
                                    scorer.n_features, scorer.scale, keys, values, used)
                if not word_side:
                    head_side = total
            value = arc_scores[h, w] + total
            if cacheable:
                cached[j] = value
                cached_head_side[j] = head_side
                computed_at[j] = now
        if h == old:
            base = value
        elif value > best:
            if projective and (blocked or arc_crosses(hd, h, w, np.int64(-1))):
                continue
            best = value
            best_h = h
    return best_h, best, base


@njit(cache=True, nogil=True)
def climb(arc_scores, hd, off, heads, scorer, memo, cache, single_root, projective):
    """Move one word at a time to its best candidate head until no move helps (in place).

    With ``single_root``, a word whose candidates include the root may also
    take the root child's place, the old root child then moving to its
    best head in the word's subtree (both changes scored together). With
    ``projective``, only moves that keep the tree projective are made.
    """
    n = len(hd) - 1
    buffer = attach_buffer(n, scorer.part_off)
    # a word that found no better head is not tried again until some word moves:
    # it would find none again (the same trees as trying every word every sweep)
    moves = 0
    settled_at = np.full(n + 1, -1, dtype=np.int64)
    improved = True
    while improved:
        improved = False
        for m in _preorder(hd):
            if settled_at[m] == moves:
                continue
            old = hd[m]
            best_h, best, base = _best_head(arc_scores, hd, m, off, heads, scorer, memo, buffer,
                                            cache, np.int64(-1), not single_root, projective)
            gain = best - base
            root_child = np.int64(-1)
            swap_head = np.int64(-1)
            may_swap = False
            if single_root and old != 0:
                for j in range(off[m], off[m + 1]):
                    may_swap = may_swap or heads[j] == 0
            if may_swap:
                for c in range(1, n + 1):
                    if hd[c] == 0:
                        root_child = c
                # the old root child would need a candidate head in m's subtree
                may_swap = False
                for j in range(off[root_child], off[root_child + 1]):
                    may_swap = may_swap or _descends(hd, heads[j], m)
            if may_swap:
                # scored in two steps: m onto the root (two root children for a
                # moment), then the old root child under m
                hd[m] = 0
                r_head, r_best, r_base = _best_head(arc_scores, hd, root_child, off, heads,
                                                    scorer, memo, buffer, cache, m, np.bool_(False),
                                                    projective)
                hd[m] = old
                swap_gain = (r_best - r_base
                             + attach_score(arc_scores, hd, m, np.int64(0), scorer, memo, buffer) - base)
                if swap_gain > gain and swap_gain > _TOLERANCE:
                    gain = swap_gain
                    swap_head = r_head
            if swap_head >= 0:
                _set_head(hd, m, 0, cache)
                _set_head(hd, root_child, swap_head, cache)
                improved = True
                moves += 1
            elif gain > _TOLERANCE:
                _set_head(hd, m, best_h, cache)
                improved = True
                moves += 1
            else:
                settled_at[m] = moves


@njit(cache=True, nogil=True)
def hill_climbing_decode(arc_scores, scorer, settings):
    """Best tree found under first-order ``arc_scores`` plus the high-order parts.

    Returns ``(heads, score)``; ``heads`` as for the other decoders.
    """
    n = arc_scores.shape[0] - 1
    if n <= 1:
        heads = np.zeros(n, dtype=np.int64)
        return heads, full_score(arc_scores, heads, scorer, new_memo(n, n))
    np.random.seed(settings.seed)
    if settings.projective:
        first = eisner_argmax(arc_scores)
    else:
        first = chu_liu_edmonds_argmax(arc_scores, settings.single_root)
    off, heads, cum = candidate_heads(arc_scores, settings.margin, first)
    memo = new_memo(n, len(heads))
    cache = new_attach_cache(n, len(heads))
    hd = np.zeros(n + 1, dtype=np.int64)
    hd[0] = -1
    start = np.empty(n + 1, dtype=np.int64)
    best_heads = first.copy()
    best = -np.inf
    stale = 0
    climbs = 0
    while stale < settings.patience:
        # the first climb starts from the best first-order tree (our addition:
        # with trained scores it is near the optimum), the others from random start trees
        if climbs == 0:
            start[1:] = first
        elif settings.random_walk and not settings.projective:
            sample_tree(off, heads, cum, first, n, start)
            if settings.single_root:
                _keep_one_root_child(arc_scores, start, off, heads)
        else:
            noise = settings.perturbation * -np.log(-np.log(np.random.random(arc_scores.shape)))
            if settings.projective:
                start[1:] = eisner_argmax(arc_scores + noise)
            else:
                start[1:] = chu_liu_edmonds_argmax(arc_scores + noise, settings.single_root)
        # the attach scores cached in the last climb stay valid away from the changes
        for w in range(1, n + 1):
            _set_head(hd, w, start[w], cache)
        climb(arc_scores, hd, off, heads, scorer, memo, cache,
              settings.single_root or settings.projective, settings.projective)
        climbs += 1
        score = full_score(arc_scores, hd[1:], scorer, memo)
        if score > best + _TOLERANCE:
            best = score
            best_heads[:] = hd[1:]
            stale = 0
        else:
            stale += 1
    return best_heads, best
