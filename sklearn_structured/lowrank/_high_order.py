"""Third-order features of the low-rank tensor parser (Lei et al. 2014, Section 5).

The paper's third-order model adds the high-order features of the MST and
Turbo parsers to the theta component (the tensor stays first order). The
parts and their scoring live with the decoder
(:mod:`sklearn_structured.kernels.hill_climbing`); this module gives them
the parser's templates, in the spirit of TurboParser v2.1's standard set
but fewer (each template is paid for at every part the decoder tries):
fine tags of all the part's words, the same with one word's form instead of
its tag, a coarse-tag back-off, and sub-patterns that drop a word, each
conjoined with the part's direction pattern (and some with a binned
distance). Sides' starts and ends take their own values.

They hash into the parser's ``theta`` with template numbers above 1000, out
of the first-order templates' range.
"""

import numpy as np
from numba import njit

from ..kernels.hill_climbing import (
    BIGRAM,
    GP,
    GSIB,
    N_PART_TYPES,
    SIB,
    TSIB,
    PartScorer,
    hill_climbing_decode,
    part_feature_ids,
    tree_parts,
)
from ._kernels import _merge_scalar

# columns of the token-attribute matrix
FORM, TAG, CTAG = 0, 1, 2
_ = -1  # a token the template leaves out

# (part type, template number, column per token of the part, conjunction:
# 1 direction pattern, 2 direction pattern and binned distance)
_TEMPLATE_LIST = [
    # consecutive siblings (h, a, b)
    (SIB, 1001, (TAG, TAG, TAG, _), 2),
    (SIB, 1002, (_, TAG, TAG, _), 1),
    (SIB, 1003, (TAG, _, TAG, _), 1),
    (SIB, 1004, (FORM, TAG, TAG, _), 1),
    (SIB, 1005, (TAG, FORM, TAG, _), 1),
    (SIB, 1006, (TAG, TAG, FORM, _), 1),
    (SIB, 1007, (_, FORM, FORM, _), 1),
    (SIB, 1008, (_, FORM, TAG, _), 1),
    (SIB, 1009, (_, TAG, FORM, _), 1),
    (SIB, 1010, (CTAG, CTAG, CTAG, _), 1),
    # grandparent (g, h, m)
    (GP, 1101, (TAG, TAG, TAG, _), 1),
    (GP, 1102, (TAG, _, TAG, _), 1),
    (GP, 1103, (FORM, TAG, TAG, _), 1),
    (GP, 1104, (TAG, FORM, TAG, _), 1),
    (GP, 1105, (TAG, TAG, FORM, _), 1),
    (GP, 1106, (FORM, _, TAG, _), 1),
    (GP, 1107, (TAG, _, FORM, _), 1),
    (GP, 1108, (CTAG, CTAG, CTAG, _), 2),
    # grand-siblings (g, h, a, b)
    (GSIB, 1201, (TAG, TAG, TAG, TAG), 1),
    (GSIB, 1202, (TAG, _, TAG, TAG), 1),
    (GSIB, 1203, (TAG, _, FORM, TAG), 1),
    (GSIB, 1204, (TAG, _, TAG, FORM), 1),
    (GSIB, 1205, (CTAG, CTAG, CTAG, CTAG), 1),
    # tri-siblings (h, a, b, c)
    (TSIB, 1301, (TAG, TAG, TAG, TAG), 1),
    (TSIB, 1302, (_, TAG, TAG, TAG), 1),
    (TSIB, 1303, (TAG, TAG, _, TAG), 1),
    (TSIB, 1304, (FORM, TAG, TAG, TAG), 1),
    (TSIB, 1305, (CTAG, CTAG, CTAG, CTAG), 1),
    # head bigram (m - 1, m, head of m - 1, head of m)
    (BIGRAM, 1401, (TAG, TAG, TAG, TAG), 1),
    (BIGRAM, 1402, (TAG, TAG, _, _), 1),
    (BIGRAM, 1403, (_, _, TAG, TAG), 1),
    (BIGRAM, 1404, (_, TAG, TAG, TAG), 1),
    (BIGRAM, 1405, (TAG, _, TAG, TAG), 1),
    (BIGRAM, 1406, (CTAG, CTAG, CTAG, CTAG), 1),
]


def _template_table(rows):
    """Template rows grouped by part type, and the offsets of each type's rows."""
    rows = sorted(rows, key=lambda row: row[0])
    table = np.array([(number, *columns, conj) for _, number, columns, conj in rows],
                     dtype=np.int64)
    counts = np.bincount([row[0] for row in rows], minlength=N_PART_TYPES)
    offsets = np.zeros(N_PART_TYPES + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return table, offsets


TEMPLATES, PART_OFFSETS = _template_table(_TEMPLATE_LIST)


@njit(cache=True, nogil=True)
def token_attributes(start, n, form, xpos, upos):
    """(n + 1, 3) attribute matrix of the sentence at slot ``start`` (row 0 the root)."""
    attrs = np.empty((n + 1, 3), dtype=np.int64)
    for i in range(n + 1):
        attrs[i, FORM] = form[start + i]
        attrs[i, TAG] = xpos[start + i]
        attrs[i, CTAG] = upos[start + i]
    return attrs


def part_scorer(start, n, tokens, theta, n_features, scale):
    """The :class:`PartScorer` of the sentence at slot ``start`` of an encoded corpus
    (``tokens`` a :class:`~sklearn_structured.lowrank._kernels.TokenArrays`)."""
    attrs = token_attributes(start, n, tokens.form, tokens.xpos, tokens.upos)
    return PartScorer(attrs, TEMPLATES, PART_OFFSETS, theta, int(n_features), float(scale))


@njit(cache=True, nogil=True)
def high_order_feature_ids(heads, scorer):
    """Feature ids of all high-order parts of a tree, with repetitions."""
    parts = tree_parts(heads)
    widest = 0
    for t in range(N_PART_TYPES):
        widest = max(widest, scorer.part_off[t + 1] - scorer.part_off[t])
    out = np.empty(parts.shape[0] * widest, dtype=np.int64)
    k = 0
    for i in range(parts.shape[0]):
        k = part_feature_ids(scorer, parts[i, 1], parts[i, 2], parts[i, 3], parts[i, 4],
                             parts[i, 5], out, k)
    return out[:k]


@njit(cache=True, nogil=True)
def high_order_difference(gold, pred, scorer):
    """phi(gold) - phi(pred) over the high-order features, merged: (sorted ids, values)."""
    plus = high_order_feature_ids(gold, scorer)
    minus = high_order_feature_ids(pred, scorer)
    ids = np.concatenate((plus, minus))
    values = np.concatenate((np.ones(len(plus)), -np.ones(len(minus))))
    return _merge_scalar(ids, values)


# the first-order parser's update carries no high-order difference
NO_HIGH_ORDER = (np.zeros(0, dtype=np.int64), np.zeros(0), 0.0)


def third_order_decode(scores, start, n, tokens, theta, config, settings):
    """Hill-climbing parse of the sentence at ``start`` under arc ``scores`` plus its
    third-order parts (weights ``theta``); returns (heads, the sentence's PartScorer)."""
    scorer = part_scorer(start, n, tokens, theta, config.n_features, config.gamma)
    return hill_climbing_decode(scores, scorer, settings)[0], scorer


def third_order_difference(gold, pred, scorer):
    """The ``high_order`` argument of the passive-aggressive update: phi(gold) - phi(pred)
    over the parts, and pred's part score minus gold's."""
    ids, values = high_order_difference(gold, pred, scorer)
    # a part scores scale * (sum of its features' weights), so the gap follows from the
    # difference vector itself, without enumerating and scoring both trees' parts again
    gap = -scorer.scale * float(np.dot(scorer.theta[ids], values))
    return ids, values, gap
