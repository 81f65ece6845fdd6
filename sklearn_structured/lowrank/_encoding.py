"""Sentences -> the encoded corpus the low-rank parser's kernels read.

An encoded corpus is a dict of arrays with a root slot per sentence:
``sent_off`` (sentence s occupies slots ``sent_off[s]:sent_off[s+1]``, slot 0
the root), the token fields under the corpus's own names (``form``,
``lemma``, ``xpos``, ``upos``, ``feats`` with ``feats_off``: ragged FEATS ids
per slot), ``vector_id`` (row of the word-vector table) with word vectors,
``corpus`` (the packed corpus itself), and the word features ``phi_w`` of
every slot as ragged columns and values (``wf_off``, ``wf_idx``, ``wf_val``).

The first training data fixes an :class:`Encoding`: the vocabularies, the
word-vector table, and the table of word-feature hashes seen at least
:data:`MIN_WORD_FEATURE_COUNT` times (the columns of ``U`` and ``V``).
:func:`fit_encoding` makes it and encodes that data with it in one go,
hashing every word's features once.
"""

from typing import NamedTuple

import numpy as np

from ..fields import FEATS, FORM, LEMMA, UPOS, XPOS
from ..kernels.hashing import feature_hash, kept_positions
from ..utils import (ROOT_ID, CheckedSentences, Vocabulary, encode_corpus, fit_vocabularies,
                     token_values)
from ._features import (
    FIELD_OFFSET,
    ROOT,
    T_FORM,
    assemble_word_features,
    count_word_features,
    word_feature_hashes,
)

# The corpus fields LowRank reads: its fine tag is XPOS, its coarse tag UPOS.
CORPUS_FIELDS = (FORM, LEMMA, XPOS, UPOS, FEATS)
# word features seen fewer times in the first training data get no column of U, V
MIN_WORD_FEATURE_COUNT = 2


class Encoding(NamedTuple):
    """What encoding needs of a fitted parser (its attributes of the same names + ``_``)."""

    vocabularies: dict
    vector_vocabulary: object
    """:class:`~sklearn_structured.utils.Vocabulary` of the word vectors' words, or None."""
    word_vector_table: np.ndarray
    """Row ``vector_id`` is that word's vector (zero rows for reserved and unknown ids)."""
    word_feature_table: np.ndarray
    """Sorted hashes of the word features that have a column of U and V."""
    pos: bool
    """Whether the word features read the tag fields."""

    @property
    def n_word_features(self):
        """Columns of the word-feature space: the hashed features, then 3 x the vectors."""
        return len(self.word_feature_table) + 3 * self.word_vector_table.shape[1]


def _check_word_vectors(word_vectors):
    """``word_vectors`` as ``{word: float64 vector}``, all finite and of one dimension."""
    vectors = {}
    for word, vector in word_vectors.items():
        if not isinstance(word, str):
            raise ValueError(f"word_vectors keys must be word forms (str), got {word!r}")
        try:
            vector = np.asarray(vector, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"word_vectors[{word!r}] is not a vector of numbers") from None
        if vector.ndim != 1 or vector.size == 0:
            raise ValueError(f"word_vectors[{word!r}] must be a non-empty 1-D vector, "
                             f"got shape {vector.shape}")
        if vectors and vector.size != len(next(iter(vectors.values()))):
            raise ValueError(f"word_vectors[{word!r}] has {vector.size} dimensions; "
                             f"earlier vectors have {len(next(iter(vectors.values())))}")
        if not np.all(np.isfinite(vector)):
            raise ValueError(f"word_vectors[{word!r}] holds NaN or infinite values")
        vectors[word] = vector
    if not vectors:
        raise ValueError("word_vectors is empty; pass None to train without word vectors")
    return vectors


def with_feats_in_fine_tag(sentences, names):
    """The sentences with each word's fine tag (XPOS, else UPOS) followed by the items of
    its FEATS named in ``names``, e.g. ``Noun|Case=Nom|Number=Sing``: the tag templates
    then read that morphology. Words with none of them, and str tokens, stay as they are.
    """
    if not names:
        return sentences
    names = frozenset(names)
    out = CheckedSentences()
    for sentence in sentences:
        words = []
        for token in sentence:
            feats = None if isinstance(token, str) else token.get(FEATS)
            items = [item for item in feats.split("|") if item.partition("=")[0] in names] \
                if feats and feats != "_" else ()
            if items:
                fine = token.get(XPOS) or token.get(UPOS) or "_"
                token = {**token, XPOS: "|".join([fine, *items])}
            words.append(token)
        out.append(words)
    return out


def _word_vector_table(word_vectors):
    """(vocabulary of the words, table of their vectors), or (None, empty table)."""
    if word_vectors is None:
        return None, np.zeros((FIELD_OFFSET, 0))
    vectors = _check_word_vectors(word_vectors)
    vocabulary = Vocabulary(vectors)
    table = np.zeros((len(vocabulary) + FIELD_OFFSET, len(next(iter(vectors.values())))))
    for word, vector in vectors.items():
        table[vocabulary.stoi[word] + FIELD_OFFSET] = vector
    # kept at float16 precision, which a model file then stores in a quarter of the room
    with np.errstate(over="ignore"):
        half = table.astype(np.float16)
    return vocabulary, half.astype(np.float64) if np.all(np.isfinite(half)) else table


def encode_fields(sentences, vocabularies, vector_vocabulary=None):
    """The encoded corpus without its word features.

    The corpus of :func:`sklearn_structured.utils.encode_corpus` (packed with
    every field of ``vocabularies``, which may hold more than the parser
    reads) with the ids moved past the reserved ones (``FIELD_OFFSET``; root
    slots ``ROOT``). ``vector_id`` looks a word up by its form, then by its
    lower-cased form.
    """
    corpus = encode_corpus(sentences, vocabularies, root=True)
    encoded = {"sent_off": corpus.offsets, "corpus": corpus}
    for field in CORPUS_FIELDS[:4]:  # the fields without FEATS
        ids = corpus[field]
        encoded[field] = np.where(ids == ROOT_ID, ROOT, ids + FIELD_OFFSET)
    if vector_vocabulary is not None:
        stoi = vector_vocabulary.stoi
        forms = token_values(sentences, "form")
        ids = np.fromiter((stoi.get(f, stoi.get(f.lower(), 0)) for f in forms), dtype=np.int64,
                          count=len(forms))
        vector_id = np.full(corpus.offsets[-1], ROOT, dtype=np.int64)
        vector_id[encoded["form"] != ROOT] = ids + FIELD_OFFSET
        encoded["vector_id"] = vector_id
    encoded["feats_off"] = corpus["feats_offsets"]
    encoded["feats"] = corpus["feats"] + FIELD_OFFSET
    return encoded


def _word_hashes(encoded, pos):
    """(offsets, hashes) of every slot's word features, ragged."""
    counts = count_word_features(encoded["sent_off"], encoded["feats_off"], pos)
    hash_off = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=hash_off[1:])
    hashes = word_feature_hashes(encoded["sent_off"], encoded["form"], encoded["lemma"],
                                 encoded["xpos"], encoded["feats_off"], encoded["feats"], pos,
                                 hash_off)
    return hash_off, hashes


def _add_word_features(encoded, word_hashes, encoding):
    """Put the word features (``wf_off``, ``wf_idx``, ``wf_val``) into ``encoded``."""
    hash_off, hashes = word_hashes
    table = encoding.word_feature_table
    vector_id = encoded.get("vector_id", encoded["form"])
    encoded["wf_off"], encoded["wf_idx"], encoded["wf_val"] = assemble_word_features(
        encoded["sent_off"], hash_off, kept_positions(hashes, table), vector_id,
        encoding.word_vector_table, len(table))
    return encoded


def fit_encoding(sentences, word_vectors, pos):
    """The :class:`Encoding` fixed by the first training data, and that data encoded."""
    vocabularies = fit_vocabularies(sentences, CORPUS_FIELDS)
    vector_vocabulary, vector_table = _word_vector_table(word_vectors)
    encoded = encode_fields(sentences, vocabularies, vector_vocabulary)
    word_hashes = _word_hashes(encoded, pos)
    seen, counts = np.unique(word_hashes[1], return_counts=True)
    encoding = Encoding(vocabularies, vector_vocabulary, vector_table,
                        seen[counts >= MIN_WORD_FEATURE_COUNT], pos)
    return encoding, _add_word_features(encoded, word_hashes, encoding)


def encode(sentences, encoding, vocabularies=None):
    """``sentences`` encoded with a fitted :class:`Encoding`; ``vocabularies`` (default:
    the encoding's) may pack more fields into ``corpus`` for the labeller."""
    encoded = encode_fields(sentences, vocabularies or encoding.vocabularies,
                            encoding.vector_vocabulary)
    return _add_word_features(encoded, _word_hashes(encoded, encoding.pos), encoding)


def form_columns(words, encoding):
    """Column of each word form's own form feature in U and V, -1 where it has none
    (a form unseen in training, or seen too rarely)."""
    ids = encoding.vocabularies["form"].encode(words) + FIELD_OFFSET
    keys = np.array([feature_hash(T_FORM, i, 0, 0, 0, 0) for i in ids], dtype=np.int64)
    columns = kept_positions(keys, encoding.word_feature_table)
    columns[ids == FIELD_OFFSET] = -1  # the unknown word's id
    return columns
