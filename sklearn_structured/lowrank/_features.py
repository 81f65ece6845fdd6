"""Feature templates of the low-rank tensor parser (Lei et al., 2014), in numba.

Sentences are first turned into integer token fields (form, lemma, XPOS as
the fine tag, UPOS as the coarse tag, FEATS) by :mod:`._encoding`. Every
template is then a fixed 64-bit hash of a template number and a few of those
integers, so the same model always sees the same feature ids.

Three feature maps are built from the fields:

- ``phi_w`` (word features, the same templates for heads and modifiers): the
  paper's Section 3 unigrams, bigrams and trigram over a word and its
  neighbours. Their hashes are mapped to the columns of ``U`` and ``V``
  through a sorted table of the hashes seen in training.
- ``phi_hm`` (arc features of the tensor): the binned length and direction
  of the arc, plus a bias, i.e. two active columns of ``W``.
- ``phi_{h->m}`` (traditional arc features of the MST parser, McDonald et al.
  2005): word/tag unigrams and bigrams of head and modifier, in-between tags
  and surrounding tags, each alone and conjoined with direction and binned
  distance, hashed straight into ``theta``. We repeat the tag templates over
  the coarse tags and add lemma pairs and back-offs of the surrounding-tag
  templates. They are never stored: the kernels recompute them per arc,
  which is cheaper than memory traffic.

The in-between template fires once per word between h and m, so a tag seen
k times there weighs k. Enumerated word by word it made arc scoring cubic in
the sentence length; instead each distinct tag between h and m is emitted
once with k as its weight (the same feature vector), from a
:func:`between_tags` record that the scorer extends by one word as m walks
away from h, so an arc costs the number of distinct tags between, whatever
its length.

Token slot 0 of every sentence is the artificial root.
"""

import numpy as np
from numba import njit

from ..kernels.hashing import feature_hash, hash_head, hash_tail, table_row

# Small helpers with one or two call sites are inlined (inline="always"):
# every separately compiled function costs a few tenths of a second on first use.

# Reserved field ids; vocabulary ids (0 = unknown) are shifted past them.
BOUNDARY_LEFT = 0
BOUNDARY_RIGHT = 1
ROOT = 2
FIELD_OFFSET = 3

# Distance bins: 1, 2, 3, 4, 5, 6-7, 8-10, 11-14, 15-19, 20-29, 30+.
_DISTANCE_EDGES = np.array([1, 2, 3, 4, 5, 6, 8, 11, 15, 20, 30], dtype=np.int64)
N_DISTANCE_BINS = len(_DISTANCE_EDGES)
ROOT_BUCKET = 2 * N_DISTANCE_BINS  # arcs from the root get their own bucket
BIAS_BUCKET = ROOT_BUCKET + 1  # always-on column of W
N_ARC_BUCKETS = BIAS_BUCKET + 1

# Word-feature templates (phi_w); numbers are part of the hash. A field's three
# window templates (the slot, its left and right neighbour) are consecutive.
T_FORM, T_FORM_P, T_FORM_N = 1, 2, 3
T_LEMMA, T_LEMMA_P, T_LEMMA_N = 4, 5, 6
T_POS, T_POS_P, T_POS_N = 7, 8, 9
T_MORPH, T_BIAS = 10, 11
T_POSP_POS, T_POS_POSN, T_POS_LEMMA, T_MORPH_LEMMA, T_POS_TRIGRAM = 12, 13, 14, 15, 16

# MST arc templates (phi_{h->m}).
A_HW_HP, A_HW, A_HP, A_MW_MP, A_MW, A_MP = 31, 32, 33, 34, 35, 36
A_HW_HP_MW_MP, A_HP_MW_MP, A_HW_MW_MP, A_HW_HP_MP, A_HW_HP_MW = 37, 38, 39, 40, 41
A_HW_MW, A_HP_MP, A_HL_ML, A_HW_MP, A_HP_MW = 42, 43, 45, 46, 47
A_BETWEEN = 48
A_SURR_HN_MP, A_SURR_HP_MP, A_SURR_HN_MN, A_SURR_HP_MN = 49, 50, 51, 52
A_BACKOFF_HP, A_BACKOFF_HN, A_BACKOFF_MP, A_BACKOFF_MN = 53, 54, 55, 56
A_HL_HP, A_ML_MP, A_HL_ML_MP, A_HL_HP_ML, A_HL_MP, A_HP_ML = 57, 58, 59, 60, 61, 62
COARSE_SHIFT = 100  # the tag templates again over coarse tags: numbers + 100

# How many hashes each block of templates writes; the buffers are sized from
# these, and the code filling a block advances by its count.
N_WORD_LEMMA_TEMPLATES = 7  # phi_w: forms and lemmas around the slot, bias
N_WORD_TAG_TEMPLATES = 7  # phi_w: tags around the slot (pos)
N_WORD_FEATS_TEMPLATES = 2  # phi_w: per FEATS item
N_ARC_WORD_TEMPLATES = 4  # arc: forms and lemmas
N_ARC_LEMMA_TAG_TEMPLATES = 6  # arc: lemma x tag (pos)
N_ARC_TAG_TEMPLATES = 20  # arc: per tag set, the in-between tags aside


@njit(cache=True, nogil=True, inline="always")
def arc_bucket(h, m):
    """Column of W for the direction and binned length of the arc h -> m."""
    if h == 0:
        return ROOT_BUCKET
    dist = abs(h - m)
    b = 0
    while b + 1 < N_DISTANCE_BINS and dist >= _DISTANCE_EDGES[b + 1]:
        b += 1
    return b if h < m else N_DISTANCE_BINS + b


# ---------------------------------------------------------------- word features


@njit(cache=True, nogil=True)
def _field_at(field, start, n, i):
    """Field of slot i of a sentence of n tokens (slots 0..n), boundaries outside."""
    if i < 0:
        return BOUNDARY_LEFT
    if i > n:
        return BOUNDARY_RIGHT
    return field[start + i]


@njit(cache=True, nogil=True)
def count_word_features(sent_off, feats_off, pos):
    """Number of phi_w hashes of every token slot (for allocating the ragged output)."""
    n_slots = sent_off[-1]
    counts = np.empty(n_slots, dtype=np.int64)
    per_token = N_WORD_LEMMA_TEMPLATES + (N_WORD_TAG_TEMPLATES if pos else 0)
    for t in range(n_slots):
        counts[t] = per_token + N_WORD_FEATS_TEMPLATES * (feats_off[t + 1] - feats_off[t])
    return counts


@njit(cache=True, nogil=True, inline="always")
def _window(out, k, template, field, start, n, i):
    """The unigram templates ``template`` (slot i), ``template + 1`` (slot i - 1) and
    ``template + 2`` (slot i + 1) of one field, at ``out[k:k + 3]``."""
    out[k] = feature_hash(template, _field_at(field, start, n, i), 0, 0, 0, 0)
    out[k + 1] = feature_hash(template + 1, _field_at(field, start, n, i - 1), 0, 0, 0, 0)
    out[k + 2] = feature_hash(template + 2, _field_at(field, start, n, i + 1), 0, 0, 0, 0)


@njit(cache=True, nogil=True)
def word_feature_hashes(sent_off, form, lemma, xpos, feats_off, feats, pos, out_off):
    """Hashes of phi_w for every token slot, ragged by ``out_off``."""
    out = np.empty(out_off[-1], dtype=np.int64)
    for s in range(len(sent_off) - 1):
        start = sent_off[s]
        n = sent_off[s + 1] - start - 1
        for i in range(n + 1):
            k = out_off[start + i]
            lm = _field_at(lemma, start, n, i)
            _window(out, k, T_FORM, form, start, n, i)
            _window(out, k + 3, T_LEMMA, lemma, start, n, i)
            out[k + 6] = feature_hash(T_BIAS, 0, 0, 0, 0, 0)
            k += N_WORD_LEMMA_TEMPLATES
            if pos:
                p = _field_at(xpos, start, n, i)
                pp = _field_at(xpos, start, n, i - 1)
                pn = _field_at(xpos, start, n, i + 1)
                _window(out, k, T_POS, xpos, start, n, i)
                out[k + 3] = feature_hash(T_POSP_POS, pp, p, 0, 0, 0)
                out[k + 4] = feature_hash(T_POS_POSN, p, pn, 0, 0, 0)
                out[k + 5] = feature_hash(T_POS_LEMMA, p, lm, 0, 0, 0)
                out[k + 6] = feature_hash(T_POS_TRIGRAM, pp, p, pn, 0, 0)
                k += N_WORD_TAG_TEMPLATES
            for j in range(feats_off[start + i], feats_off[start + i + 1]):
                out[k] = feature_hash(T_MORPH, feats[j], 0, 0, 0, 0)
                out[k + 1] = feature_hash(T_MORPH_LEMMA, feats[j], lm, 0, 0, 0)
                k += N_WORD_FEATS_TEMPLATES
    return out


# ----------------------------------------------------------------- arc features


@njit(cache=True, nogil=True, inline="always")
def max_arc_features(n):
    """Capacity of a buffer that :func:`arc_feature_ids` or :func:`between_feature_ids`
    writes for a sentence of n tokens."""
    per_tag_set = N_ARC_TAG_TEMPLATES + n  # at most n - 1 distinct tags lie between h and m
    return 2 * (N_ARC_WORD_TEMPLATES + N_ARC_LEMMA_TAG_TEMPLATES + 2 * per_tag_set)


@njit(cache=True, nogil=True, inline="always")
def between_tags(n):
    """An empty record of the tags between a head and a modifier of a sentence of n
    words, for both tag sets (fine ones at 0..n - 1, coarse ones at n..2n - 1).

    A tuple of arrays: per distinct tag ``tag``, ``head`` (the hash of the
    in-between template up to the tag) and ``count``, then ``size``, the number
    of distinct tags of each set. A tag is found by a scan of its set's
    distinct tags, no longer than the scan that sums their weights per arc.
    """
    return (np.empty(2 * n, dtype=np.int64), np.empty(2 * n, dtype=np.uint64),
            np.empty(2 * n), np.zeros(2, dtype=np.int64))


@njit(cache=True, nogil=True, inline="always")
def _tag_window(tags, start, n, h, m):
    """The tags of h and m and of their neighbours: ``(hp, mp, hp-1, hp+1, mp-1, mp+1)``."""
    return (tags[start + h], tags[start + m],
            _field_at(tags, start, n, h - 1), _field_at(tags, start, n, h + 1),
            _field_at(tags, start, n, m - 1), _field_at(tags, start, n, m + 1))


@njit(cache=True, nogil=True, inline="always")
def _tag_templates(out, k, shift, start, n, h, m, hw, mw, tags, conj):
    """The MST tag templates over one tag set (template numbers moved by ``shift``), the
    in-between one aside, as full hashes: :func:`arc_feature_ids` reduces them to
    theta indices."""
    hp, mp, hpp, hpn, mpp, mpn = _tag_window(tags, start, n, h, m)
    out[k] = feature_hash(shift + A_HW_HP, hw, hp, conj, 0, 0)
    out[k + 1] = feature_hash(shift + A_HP, hp, conj, 0, 0, 0)
    out[k + 2] = feature_hash(shift + A_MW_MP, mw, mp, conj, 0, 0)
    out[k + 3] = feature_hash(shift + A_MP, mp, conj, 0, 0, 0)
    out[k + 4] = feature_hash(shift + A_HW_HP_MW_MP, hw, hp, mw, mp, conj)
    out[k + 5] = feature_hash(shift + A_HP_MW_MP, hp, mw, mp, conj, 0)
    out[k + 6] = feature_hash(shift + A_HW_MW_MP, hw, mw, mp, conj, 0)
    out[k + 7] = feature_hash(shift + A_HW_HP_MP, hw, hp, mp, conj, 0)
    out[k + 8] = feature_hash(shift + A_HW_HP_MW, hw, hp, mw, conj, 0)
    out[k + 9] = feature_hash(shift + A_HP_MP, hp, mp, conj, 0, 0)
    out[k + 10] = feature_hash(shift + A_HW_MP, hw, mp, conj, 0, 0)
    out[k + 11] = feature_hash(shift + A_HP_MW, hp, mw, conj, 0, 0)
    out[k + 12] = feature_hash(shift + A_SURR_HN_MP, hp, hpn, mpp, mp, conj)
    out[k + 13] = feature_hash(shift + A_SURR_HP_MP, hpp, hp, mpp, mp, conj)
    out[k + 14] = feature_hash(shift + A_SURR_HN_MN, hp, hpn, mp, mpn, conj)
    out[k + 15] = feature_hash(shift + A_SURR_HP_MN, hpp, hp, mp, mpn, conj)
    # back-offs of the surrounding templates: one of the four tags dropped
    out[k + 16] = feature_hash(shift + A_BACKOFF_HP, hpp, hp, mp, conj, 0)
    out[k + 17] = feature_hash(shift + A_BACKOFF_HN, hp, hpn, mp, conj, 0)
    out[k + 18] = feature_hash(shift + A_BACKOFF_MP, hp, mpp, mp, conj, 0)
    out[k + 19] = feature_hash(shift + A_BACKOFF_MN, hp, mp, mpn, conj, 0)
    return k + N_ARC_TAG_TEMPLATES


@njit(cache=True, nogil=True)
def arc_feature_ids(start, n, h, m, form, lemma, xpos, upos, pos, n_features, out):
    """Write the theta indices of phi_{h->m} but the in-between tags into ``out``; return
    how many (:func:`between_feature_ids` gives the rest).

    McDonald et al.'s (2005) first-order templates over forms and the fine
    tags, repeated over the coarse tags and partly over lemmas; every one is
    emitted twice, alone and conjoined with the arc's direction and binned
    distance, as in the MST parser.
    """
    dd = arc_bucket(h, m) + 1
    hw = form[start + h]
    mw = form[start + m]
    hl = lemma[start + h]
    ml = lemma[start + m]
    k = 0
    for rep in range(2):
        conj = dd if rep else 0
        out[k] = feature_hash(A_HW, hw, conj, 0, 0, 0)
        out[k + 1] = feature_hash(A_MW, mw, conj, 0, 0, 0)
        out[k + 2] = feature_hash(A_HW_MW, hw, mw, conj, 0, 0)
        out[k + 3] = feature_hash(A_HL_ML, hl, ml, conj, 0, 0)
        k += N_ARC_WORD_TEMPLATES
        if not pos:
            continue
        hp = xpos[start + h]
        mp = xpos[start + m]
        out[k] = feature_hash(A_HL_HP, hl, hp, conj, 0, 0)
        out[k + 1] = feature_hash(A_ML_MP, ml, mp, conj, 0, 0)
        out[k + 2] = feature_hash(A_HL_ML_MP, hl, ml, mp, conj, 0)
        out[k + 3] = feature_hash(A_HL_HP_ML, hl, hp, ml, conj, 0)
        out[k + 4] = feature_hash(A_HL_MP, hl, mp, conj, 0, 0)
        out[k + 5] = feature_hash(A_HP_ML, hp, ml, conj, 0, 0)
        k += N_ARC_LEMMA_TAG_TEMPLATES
        # a loop rather than two calls with constant shifts, which numba
        # would compile twice (once per literal value)
        for coarse in range(2):
            k = _tag_templates(out, k, coarse * COARSE_SHIFT, start, n, h, m, hw, mw,
                               upos if coarse else xpos, conj)
    # reduced to theta indices in one place: a reduction per template would each
    # bring its own division-by-zero check to compile
    for j in range(k):
        out[j] = table_row(out[j], n_features)
    return k


# The pruner's templates: some of the arc templates, each involving the head (a
# template of the modifier alone scores every candidate head alike), with their own
# numbers since the pruner has a table of its own.
P_HW_MW, P_DIST, P_HW, P_HP, P_HP_MP, P_HW_MP, P_HP_MW = 71, 72, 73, 74, 75, 76, 77
P_SURR_HN_MP, P_SURR_HP_MP, P_SURR_HN_MN, P_SURR_HP_MN = 78, 79, 80, 81
N_PRUNER_WORD_TEMPLATES = 3  # per repetition (alone, conjoined with direction and distance)
N_PRUNER_TAG_TEMPLATES = 7  # per repetition and tag set


@njit(cache=True, nogil=True, inline="always")
def max_pruner_features():
    """Capacity of a buffer that :func:`pruner_feature_ids` writes."""
    return 2 * (N_PRUNER_WORD_TEMPLATES + 2 * N_PRUNER_TAG_TEMPLATES)


@njit(cache=True, nogil=True)
def pruner_feature_ids(start, n, h, m, form, xpos, upos, pos, n_features, out):
    """Write the theta indices of the pruner's features of h -> m into ``out``; return
    how many.

    The head's form, the two forms, and over each tag set the head's tag, the two
    tags, a form with the other's tag and the four surrounding-tag templates, each
    alone and conjoined with the arc's direction and binned distance: a third of
    :func:`arc_feature_ids`'s features, and none of the in-between ones. Without
    tags only the forms and the distance are read.
    """
    dd = arc_bucket(h, m) + 1
    hw = form[start + h]
    mw = form[start + m]
    k = 0
    for rep in range(2):
        conj = dd if rep else 0
        out[k] = feature_hash(P_HW_MW, hw, mw, conj, 0, 0)
        out[k + 1] = feature_hash(P_DIST, conj, 0, 0, 0, 0)
        out[k + 2] = feature_hash(P_HW, hw, conj, 0, 0, 0)
        k += N_PRUNER_WORD_TEMPLATES
        if not pos:
            continue
        for coarse in range(2):
            tags = upos if coarse else xpos
            shift = coarse * COARSE_SHIFT
            hp, mp, hpp, hpn, mpp, mpn = _tag_window(tags, start, n, h, m)
            out[k] = feature_hash(shift + P_HP, hp, conj, 0, 0, 0)
            out[k + 1] = feature_hash(shift + P_HP_MP, hp, mp, conj, 0, 0)
            out[k + 2] = feature_hash(shift + P_HW_MP, hw, mp, conj, 0, 0)
            out[k + 3] = feature_hash(shift + P_HP_MW, hp, mw, conj, 0, 0)
            out[k + 4] = feature_hash(shift + P_SURR_HN_MP, hp, hpn, mpp, mp, conj)
            out[k + 5] = feature_hash(shift + P_SURR_HP_MP, hpp, hp, mpp, mp, conj)
            out[k + 6] = feature_hash(shift + P_SURR_HN_MN, hp, hpn, mp, mpn, conj)
            k += N_PRUNER_TAG_TEMPLATES
    for j in range(k):
        out[j] = table_row(out[j], n_features)
    return k


# not inlined: the scores under float32 and float64 weights and the update share it
@njit(cache=True, nogil=True)
def add_between(between, start, n, h, b, xpos, upos):
    """Count word b as lying between the head h and the modifier, in both tag sets."""
    tag, head, count, size = between
    for c in range(2):
        tags = upos if c else xpos
        d = c * n
        end = d + size[c]
        while d < end and tag[d] != tags[start + b]:
            d += 1
        if d == end:
            tag[d] = tags[start + b]
            head[d] = hash_head(c * COARSE_SHIFT + A_BETWEEN, tags[start + h], tag[d])
            count[d] = 0.0
            size[c] += 1
        count[d] += 1.0


@njit(cache=True, nogil=True, inline="always")
def add_between_score(s, between, start, n, h, m, xpos, upos, n_features, theta):
    """``s`` plus the weights of :func:`between_feature_ids`'s features times their
    values, added where they are hashed: written out and read back they cost the
    arc scores more than their hashing."""
    _, head, count, size = between
    dd = arc_bucket(h, m) + 1
    for c in range(2):
        mp = (upos if c else xpos)[start + m]
        for e in range(c * n, c * n + size[c]):
            r0 = table_row(hash_tail(head[e], mp, 0, 0), n_features)
            r1 = table_row(hash_tail(head[e], mp, dd, 0), n_features)
            s += count[e] * (theta[r0] + theta[r1])
    return s


@njit(cache=True, nogil=True)
def between_feature_ids(start, n, h, m, xpos, upos, n_features, between, out, weights):
    """The in-between features of h -> m: theta indices into ``out`` and values into
    ``weights``; returns how many.

    ``between`` is a :func:`between_tags` record of the words between h and
    m; each of its tags, of both sets, gives a feature alone and one
    conjoined with direction and binned distance, as in
    :func:`arc_feature_ids`, valued by its count. The arc scores sum the same
    features without writing them out (:func:`add_between_score`).
    """
    _, head, count, size = between
    dd = arc_bucket(h, m) + 1
    k = 0
    for c in range(2):
        mp = (upos if c else xpos)[start + m]
        for e in range(c * n, c * n + size[c]):
            out[k] = table_row(hash_tail(head[e], mp, 0, 0), n_features)
            out[k + 1] = table_row(hash_tail(head[e], mp, dd, 0), n_features)
            weights[k] = weights[k + 1] = count[e]
            k += 2
    return k


@njit(cache=True, nogil=True)
def assemble_word_features(sent_off, hash_off, columns, vector_id, embeddings, n_table):
    """Ragged (columns, values) of phi_w per slot: known hashed features, then vectors.

    ``columns`` maps every hash to its table column (-1 when unseen in
    training: dropped). With a non-empty ``embeddings`` (row ``vector_id`` of
    a slot is its word's vector; reserved and unknown ids are zero rows),
    the vectors of the word and of its left and right neighbours follow as
    real-valued columns ``n_table + ...``.
    """
    n_slots = sent_off[-1]
    dim = embeddings.shape[1]
    off = np.zeros(n_slots + 1, dtype=np.int64)
    for t in range(n_slots):
        kept = 0
        for j in range(hash_off[t], hash_off[t + 1]):
            if columns[j] >= 0:
                kept += 1
        off[t + 1] = off[t] + kept + 3 * dim
    idx = np.empty(off[-1], dtype=np.int64)
    val = np.empty(off[-1], dtype=np.float64)
    for s in range(len(sent_off) - 1):
        start = sent_off[s]
        n = sent_off[s + 1] - start - 1
        for i in range(n + 1):
            t = start + i
            k = off[t]
            for j in range(hash_off[t], hash_off[t + 1]):
                if columns[j] >= 0:
                    idx[k] = columns[j]
                    val[k] = 1.0
                    k += 1
            for side in range(3):
                f = _field_at(vector_id, start, n, i - 1 + side)
                for c in range(dim):
                    idx[k] = n_table + side * dim + c
                    val[k] = embeddings[f, c]
                    k += 1
    return off, idx, val
