"""Sentences become integer arrays here: one reading of tokens for every estimator.

A packed corpus holds, for the fields an estimator asks for, one int64 id
per token slot, sentences laid end to end (``offsets[s]:offsets[s + 1]`` is
sentence s); with ``root=True`` every sentence starts with a root slot, whose
id is :data:`ROOT_ID` in every field. Ids come from vocabularies fitted once
on the training sentences (:func:`fit_vocabularies`); 0 is the unknown id,
also given to a token that has no value for the field at all.

Every estimator reads a token's fields the same way; where a field is
missing (a plain ``str`` token, the CoNLL-U placeholder ``_``) the fall-backs
are:

``form``     the form, or the empty string
``lower``    the lower-cased form
``lemma``    the lemma, else the form
``upos``     the universal (coarse) tag, else XPOS, else the form
``xpos``     the language-specific (fine) tag, else UPOS, else the form
``feats``    the ``|``-separated FEATS items (none when absent); a ragged
             field, so the corpus also holds ``feats_offsets`` per token slot
``deprel``   the dependency relation, else the unknown id

so a parser runs on forms alone, reading the form where tags would be.
"""

from collections.abc import Mapping
from itertools import repeat

import numpy as np

from ..fields import DEPREL, FEATS, FORM, LEMMA, LOWER, UPOS, XPOS

ROOT_ID = -1
RAGGED_FIELDS = (FEATS,)


def token_field(token, field):
    """Return ``field`` of ``token`` as a string, or ``None`` when it is absent.

    A plain string token has only a form. The CoNLL-U placeholder ``_`` counts
    as absent, so callers can fall back (for example from lemma to form).
    """
    if type(token) is not dict:  # dicts first: the ABC check below is slow per token
        if isinstance(token, str):
            return token if field == "form" else None
        if not isinstance(token, Mapping):
            raise TypeError(
                f"a token must be a str or a mapping of CoNLL-U fields, got {type(token).__name__}"
            )
    value = token.get(field)
    if value is None or value == "_":
        return None
    return value


class Vocabulary:
    """A frozen mapping from strings to consecutive ids; unknown strings get 0.

    Built once in ``fit`` and stored on the estimator: a plain dict and list,
    so it pickles and survives library upgrades.
    """

    UNKNOWN = 0

    def __init__(self, strings=(), *, min_count=1):
        counts = {}
        for s in strings:
            counts[s] = counts.get(s, 0) + 1
        kept = sorted((s for s, c in counts.items() if c >= min_count), key=lambda s: (-counts[s], s))
        self.itos = ["<unk>"] + kept
        self.stoi = {s: i for i, s in enumerate(self.itos)}

    def __len__(self):
        return len(self.itos)

    def __contains__(self, s):
        return s in self.stoi

    def encode(self, strings):
        return np.fromiter(map(self.stoi.get, strings, repeat(self.UNKNOWN)), dtype=np.int64)


def pack_ragged(arrays, dtype=np.int64):
    """Concatenate 1-D arrays into ``(flat, offsets)`` with ``offsets[i]:offsets[i+1]`` the i-th."""
    lengths = np.fromiter((len(a) for a in arrays), dtype=np.int64, count=len(arrays))
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = np.concatenate([np.asarray(a, dtype=dtype) for a in arrays]) if arrays else np.zeros(0, dtype)
    return flat.astype(dtype, copy=False), offsets


def unpack_ragged(flat, offsets):
    """Inverse of :func:`pack_ragged`: a list of views, one per segment."""
    return [flat[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]


class _TokenReader:
    """The fields of every token of ``sentences``, read once a column, with the fall-backs.

    Columns, not tokens, are the unit: a list comprehension per field costs a
    fraction of a function call per token and field.
    """

    def __init__(self, sentences):
        self.tokens = [token for sentence in sentences for token in sentence]
        self.columns = {}

    def raw(self, field):
        """``field`` of every token as given, None where absent or ``_``."""
        if field not in self.columns:
            values = [t.get(field) if type(t) is dict else token_field(t, field)
                      for t in self.tokens]
            self.columns[field] = [None if v == "_" else v for v in values]
        return self.columns[field]

    def values(self, field):
        """``field`` of every token with the fall-backs of the module docstring."""
        key = ("values", field)
        if key not in self.columns:
            self.columns[key] = _READERS[field](self)
        return self.columns[key]


def _forms(reader):
    return [form or "" for form in reader.raw("form")]


_READERS = {
    FORM: _forms,
    LOWER: lambda r: [form.lower() for form in r.values(FORM)],
    LEMMA: lambda r: [lemma or form for lemma, form in zip(r.raw(LEMMA), r.values(FORM))],
    UPOS: lambda r: [u or x or form for u, x, form in
                     zip(r.raw(UPOS), r.raw(XPOS), r.values(FORM))],
    XPOS: lambda r: [x or u or form for u, x, form in
                     zip(r.raw(UPOS), r.raw(XPOS), r.values(FORM))],
    FEATS: lambda r: [feats.split("|") if feats else [] for feats in r.raw(FEATS)],
    DEPREL: lambda r: r.raw(DEPREL),
}
FIELDS = tuple(_READERS)


class Corpus:
    """Packed sentences: ``offsets`` and one id array per field, ``corpus[field]``."""

    def __init__(self, offsets, fields):
        self.offsets = offsets
        self.fields = fields

    def __getitem__(self, field):
        return self.fields[field]

    @property
    def n_sentences(self):
        return len(self.offsets) - 1


def _check_fields(fields):
    unknown = [f for f in fields if f not in _READERS]
    if unknown:
        raise ValueError(f"unknown corpus fields {unknown}; the fields are {FIELDS}")


def carried_fields(sentences, fields):
    """The ``fields`` (in their order) that at least one token of ``sentences`` has a
    value of (``_`` counts as none)."""
    return tuple(field for field in fields
                 if any(token_field(token, field) for sentence in sentences for token in sentence))


def token_values(sentences, field):
    """The strings of ``field`` for every token of ``sentences``, with the fall-backs above.

    A ragged field gives one list of strings per token.
    """
    _check_fields([field])
    return _TokenReader(sentences).values(field)


def fit_vocabularies(sentences, fields, *, min_count=1):
    """One :class:`Vocabulary` per field, from the training sentences."""
    _check_fields(fields)
    reader = _TokenReader(sentences)
    vocabularies = {}
    for field in fields:
        values = reader.values(field)
        if field in RAGGED_FIELDS:
            values = (item for items in values for item in items)
        vocabularies[field] = Vocabulary((v for v in values if v is not None),
                                         min_count=min_count)
    return vocabularies


def encode_corpus(sentences, vocabularies, *, root=False):
    """Pack ``sentences`` with the fitted ``vocabularies`` (one field per vocabulary)."""
    lengths = np.fromiter((len(s) for s in sentences), dtype=np.int64, count=len(sentences))
    slots = lengths + 1 if root else lengths
    offsets = np.zeros(len(sentences) + 1, dtype=np.int64)
    np.cumsum(slots, out=offsets[1:])
    is_token = np.ones(offsets[-1], dtype=bool)
    if root:
        is_token[offsets[:-1]] = False
    reader = _TokenReader(sentences)
    fields = {}
    for field, vocabulary in vocabularies.items():
        values = reader.values(field)
        if field in RAGGED_FIELDS:
            counts = np.zeros(offsets[-1], dtype=np.int64)
            counts[is_token] = np.fromiter((len(v) for v in values), dtype=np.int64,
                                           count=len(values))
            item_offsets = np.zeros(offsets[-1] + 1, dtype=np.int64)
            np.cumsum(counts, out=item_offsets[1:])
            fields[field] = vocabulary.encode(item for items in values for item in items)
            fields[field + "_offsets"] = item_offsets
            continue
        ids = np.full(offsets[-1], ROOT_ID, dtype=np.int64)
        ids[is_token] = vocabulary.encode(values)
        fields[field] = ids
    return Corpus(offsets, fields)


def word_type_vocabulary(forms, describe):
    """A :class:`Vocabulary` of the strings ``describe(form)`` gives for the distinct ``forms``.

    ``describe`` maps a form to a fixed-length list of strings (None where
    one is absent): its prefixes, suffixes, shape... (an estimator's word
    attributes, read from the form so that unseen words have them too).
    """
    return Vocabulary(a for form in set(forms) for a in describe(form) if a is not None)


def word_type_ids(forms, describe, vocabulary):
    """(n_tokens, k) ids of ``describe(form)`` for every token, computed once per distinct form.

    Absent (None) and unseen strings get the unknown id 0.
    """
    types = {}
    type_of_token = np.fromiter((types.setdefault(f, len(types)) for f in forms), np.int64,
                                len(forms))
    # one look-up of every type's strings (None is never in a vocabulary: id 0)
    strings = [a for form in types for a in describe(form)]
    table = vocabulary.encode(strings).reshape(len(types), len(describe("")))
    return table[type_of_token]
