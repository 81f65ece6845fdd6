"""The easy-first tagger's features: static templates of a word and its neighbours,
ambiguity classes, and what a neighbour's tag reads as.

The estimator (:mod:`._tagger`) fits the vocabularies, the ambiguity
dictionary and the kept feature keys once, on its first training data, and
hands them back here to turn sentences into weight rows; the kernels
(:mod:`._tagger_kernels`) hash the templates and add the tag-context rows.
"""

import threading
import weakref
import zlib
from collections import Counter, defaultdict
from functools import lru_cache

import numpy as np

from ..fields import FORM, LOWER
from ..kernels.hashing import kept_positions
from ..utils import (Vocabulary, encode_corpus, fit_vocabularies, token_values, word_shape,
                     word_type_ids, word_type_vocabulary)
from . import _tagger_kernels as kernels

_PREFIX_LENGTHS = (1, 2, 3, 4)
_SUFFIX_LENGTHS = (1, 2, 3, 4, 5, 6, 7)
_CONTEXT_SUFFIX = len(_PREFIX_LENGTHS) + 2  # attribute column of the 3-letter suffix
# With more tags than this (FEATS strings, lemma scripts) the rarer tags share one
# value in the neighbours' tag features, which keeps that block of rows small.
MAX_CONTEXT_TAGS = 64

# the corpus fields of a word's form the tagger reads
_FORMS = (FORM, LOWER)


@lru_cache(maxsize=1 << 17)  # a pipeline's taggers read the same forms, one after the other
def _word_attributes(form):
    """Prefixes up to 4 and suffixes up to 7 characters (None when shorter), the shape,
    and flags for a hyphen, a digit and an upper-case letter (None when absent)."""
    return tuple([form[:k] if len(form) >= k else None for k in _PREFIX_LENGTHS]
                 + [form[-k:] if len(form) >= k else None for k in _SUFFIX_LENGTHS]
                 + [word_shape(form),
                    "-" if "-" in form else None,
                    "0" if any(c.isdigit() for c in form) else None,
                    "A" if any(c.isupper() for c in form) else None])


def lemma_stems(lemmas):
    """The stems :func:`word_describer` reads: the distinct lower-cased ``lemmas`` of two
    characters or more (None left out), sorted and joined by line breaks."""
    return "\n".join(sorted({lemma.lower() for lemma in lemmas if lemma and len(lemma) >= 2}))


def _ending(lower, stems):
    """What follows the longest training lemma that begins ``lower`` and leaves at least
    a character (``"+lerinden"`` for Turkish ``evlerinden`` after ``ev``), or None."""
    for k in range(len(lower) - 1, 1, -1):
        if lower[:k] in stems:
            return "+" + lower[k:]
    return None


@lru_cache(maxsize=2)  # one function for equal stems: a pipeline's taggers share it
def word_describer(stems):
    """The word attributes a tagger reads: :func:`_word_attributes`, and when ``stems``
    (of :func:`lemma_stems`) is not empty, the word's ending after a training lemma.

    In agglutinative and fusional languages that ending spells the inflection of
    words never seen in training (dev accuracy, one tagger on gold input tags,
    seed 0: Turkish IMST FEATS +0.8, lemmas +1.8; Czech CLTT FEATS +0.4).
    """
    if not stems:
        return _word_attributes
    stem_set = frozenset(stems.split("\n"))

    @lru_cache(maxsize=1 << 16)
    def describe(form):
        return _word_attributes(form) + (_ending(form.lower(), stem_set),)

    return describe


def fit_tagger_vocabularies(sentences, input_tags=(), describe=_word_attributes):
    """Vocabularies of forms, lower-cased forms, the ``input_tags`` fields and word-type
    attributes (``describe``, of :func:`word_describer`) of the training data."""
    vocabularies = fit_vocabularies(sentences, _FORMS + tuple(input_tags))
    vocabularies["attributes"] = word_type_vocabulary(token_values(sentences, "form"), describe)
    return vocabularies


def _word_ids(forms, sentences, vocabularies, describe):
    """The ids of every token's form, lower-cased form and word attributes."""
    corpus = encode_corpus(sentences, {f: vocabularies[f] for f in _FORMS})
    return (corpus["form"], corpus["lower"],
            word_type_ids(forms, describe, vocabularies["attributes"]))


_last_word_ids = threading.local()


def _shared_word_ids(sentences, vocabularies, describe):
    """:func:`_word_ids`, or those of the previous call in this thread when it read the
    same forms with the same fitted vocabularies and attributes.

    A pipeline's taggers share those (a saved model stores them once) and tag
    the same words one after the other, so all but the first reuse the ids
    (a quarter of the taggers' time on EWT). Weak references keep the fitted
    objects from outliving their model.
    """
    forms = token_values(sentences, "form")
    fitted = (vocabularies["form"], vocabularies["lower"], vocabularies["attributes"], describe)
    last = getattr(_last_word_ids, "value", None)
    if (last is not None and all(ref() is obj for ref, obj in zip(last[0], fitted))
            and last[1] == forms):
        return last[2]
    ids = _word_ids(forms, sentences, vocabularies, describe)
    _last_word_ids.value = ([weakref.ref(obj) for obj in fitted], forms, ids)
    return ids


def cluster_table(word_clusters):
    """``(vocabulary, ids)`` of a ``{word: clusters}`` mapping: row ``k`` of ``ids`` holds
    one plus each cluster of the vocabulary's k-th word, row 0 (unknown words) zeros."""
    vocabulary = Vocabulary(word_clusters)
    rows = [tuple(word_clusters[w]) for w in vocabulary.itos[1:]]
    width = len(rows[0]) if rows else 0
    if not rows or width == 0 or any(len(r) != width for r in rows):
        raise ValueError("word_clusters must map each word to the same number (one or more) "
                         "of clusters")
    try:
        ids = np.array(rows, dtype=np.int64)
    except (TypeError, ValueError):
        raise ValueError("word_clusters must map each word to integer cluster ids") from None
    if (ids < 0).any():
        raise ValueError("word_clusters holds a negative cluster id")
    return vocabulary, np.vstack([np.zeros((1, width), np.int64), ids + 1])


def token_cluster_ids(sentences, table):
    """The ``(n_tokens, n_granularities)`` cluster ids (of :func:`cluster_table`) of every
    token, looked up by its form, then by its lower-cased form; zeros for a word without."""
    vocabulary, ids = table
    stoi = vocabulary.stoi
    rows = np.fromiter((stoi.get(f) or stoi.get(f.lower(), 0)
                        for f in token_values(sentences, "form")), np.int64)
    return ids[rows]


def static_feature_keys(sentences, vocabularies, class_ids=None, input_tags=(),
                        describe=_word_attributes, share=False, clusters=None):
    """Hashed static features of every token (-1 where absent), and sentence offsets.

    ``class_ids`` holds each token's ambiguity class id (0: none); None leaves
    the class templates out. ``input_tags``: fields whose tags (written by earlier
    taggers) are features too. ``describe``: the word attributes, as fitted.
    ``share``: reuse the word ids of the previous tagger (see :func:`_shared_word_ids`).
    ``clusters``: the table of :func:`cluster_table`, whose cluster ids are read as
    input tags are (the word's, its neighbours', the word's with its suffix).
    """
    corpus = encode_corpus(sentences, {f: vocabularies[f] for f in input_tags})
    input_ids = np.zeros((corpus.offsets[-1], len(input_tags)), np.int64)
    for c, field in enumerate(input_tags):
        input_ids[:, c] = corpus[field]
    if clusters is not None:
        input_ids = np.hstack([input_ids, token_cluster_ids(sentences, clusters)])
    if share:
        form, lower, attributes = _shared_word_ids(sentences, vocabularies, describe)
    else:
        form, lower, attributes = _word_ids(token_values(sentences, "form"), sentences,
                                            vocabularies, describe)
    ambiguity = np.zeros(0, np.int64) if class_ids is None else np.asarray(class_ids, np.int64)
    keys = kernels.static_feature_keys(form, lower, attributes,
                                       np.ascontiguousarray(attributes[:, _CONTEXT_SUFFIX]),
                                       ambiguity, input_ids, corpus.offsets)
    return keys, corpus.offsets


def kept_feature_keys(keys, min_count):
    """The distinct static feature keys (of :func:`static_feature_keys`) seen at least
    ``min_count`` times, sorted: the i-th is weight row ``i + 1``."""
    keys, counts = np.unique(keys[keys >= 0], return_counts=True)
    return keys[counts >= min_count]


def static_feature_rows(sentences, vocabularies, feature_keys, class_ids=None, input_tags=(),
                        describe=_word_attributes, share=False, clusters=None):
    """The weight rows of every token's static features (0 for a feature not kept),
    one row of templates per token, and the sentence offsets."""
    keys, offsets = static_feature_keys(sentences, vocabularies, class_ids, input_tags, describe,
                                        share, clusters)
    return kept_positions(keys, feature_keys) + 1, offsets


def _class_id(tags):
    """An id (> 0) of a set of tags that depends on the set only, so that the dictionary
    and every fold of the training data give one set the same id."""
    return zlib.crc32("\n".join(sorted(tags)).encode()) + 1


def _word_tags(words, tags):
    """How often each word had each tag."""
    seen = defaultdict(Counter)
    for word, tag in zip(words, tags):
        seen[word][tag] += 1
    return seen


def ambiguity_dictionary(words, tags, min_count):
    """The words seen at least ``min_count`` times, sorted, and the class id of each
    one's set of tags (its ambiguity class), as two aligned arrays."""
    seen = _word_tags(words, tags)
    kept = sorted(w for w, counts in seen.items() if counts.total() >= min_count)
    return (np.array(kept, dtype=str),
            np.array([_class_id(seen[w]) for w in kept], dtype=np.int64))


def jackknifed_class_ids(words, tags, folds, min_count):
    """Each training token's class id as the dictionary of the other folds gives it
    (``folds``: each token's fold). A class read from data that holds the token itself
    always contains its tag, which a new text's words need not: trained on such classes
    the tagger would trust them more than they deserve."""
    total = _word_tags(words, tags)
    by_fold = defaultdict(lambda: defaultdict(Counter))
    for word, tag, fold in zip(words, tags, folds):
        by_fold[fold][word][tag] += 1
    ids = np.zeros(len(words), np.int64)
    known = {}
    for k, key in enumerate(zip(folds, words)):
        if key not in known:
            rest = total[key[1]] - by_fold[key[0]][key[1]]
            known[key] = _class_id(rest) if rest.total() >= min_count else 0
        ids[k] = known[key]
    return ids


def tag_context_values(counts, classes):
    """The value each tag of ``classes`` gives in its neighbours' tag features: the tag
    id itself, or with more than :data:`MAX_CONTEXT_TAGS` tags the rank of one of the
    most frequent (``counts``: training counts by tag) and one shared value for the rest."""
    if len(classes) <= MAX_CONTEXT_TAGS:
        return np.arange(len(classes))
    frequent = {t for t, _ in counts.most_common(MAX_CONTEXT_TAGS - 1)}
    ranks = {t: k for k, t in enumerate(sorted(frequent))}
    return np.array([ranks.get(t, MAX_CONTEXT_TAGS - 1) for t in classes], np.int64)


def tag_parts(classes):
    """The ``Feature=Value`` pairs of each FEATS string of ``classes`` as part ids, one
    row per tag, -1 padded (``"_"`` has none)."""
    split = [[] if t == "_" else t.split("|") for t in classes]
    ids = {p: k for k, p in enumerate(sorted({p for row in split for p in row}))}
    out = np.full((len(classes), max(map(len, split), default=0)), -1, np.int64)
    for i, row in enumerate(split):
        out[i, :len(row)] = [ids[p] for p in row]
    return out
