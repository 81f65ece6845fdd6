"""Sentences in, integer arrays out: the conventions of the guide, in one place.

A sentence is a sequence of tokens; a token is a ``str`` (its form) or a
mapping with CoNLL-U field names (``form``, ``lemma``, ``upos``, ``xpos``,
``feats``). Heads are 1-based with 0 for the root.
"""

from collections.abc import Iterable, Mapping, Sized

import numpy as np

from ..fields import TOKEN_FIELDS
# Vocabulary: pickles of the library's models name it in this module
from ._corpus import Vocabulary, token_field  # noqa: F401
# the types of a field other than form
_FIELD_TYPES = (str, type(None))


def word_shape(word):
    """Character classes of ``word`` with runs collapsed: "McDonald's" -> "XxXx'x".

    Upper case -> X, lower case -> x, digit -> d, anything else kept.
    """
    shape = []
    for ch in word:
        if ch.isupper():
            c = "X"
        elif ch.islower():
            c = "x"
        elif ch.isdigit():
            c = "d"
        else:
            c = ch
        if not shape or shape[-1] != c:
            shape.append(c)
    return "".join(shape)


def _check_token(token, name, i, j):
    """One rule for every estimator: a str, or a mapping with a str ``form``.

    The other CoNLL-U fields are optional; when present they are str (``_``
    meaning absent) or None. ``X[i][j]`` names the token in an error, written
    only then: every step of a pipeline checks every token.
    """
    if type(token) is not dict:  # dicts first: the ABC check below is slow per token
        if isinstance(token, str):
            return
        if not isinstance(token, Mapping):
            raise TypeError(f"{name}[{i}][{j}] is a {type(token).__name__}; tokens are str or "
                            "mappings of CoNLL-U fields")
    form = token.get("form")
    if not isinstance(form, str):
        raise ValueError(f"{name}[{i}][{j}] has form {form!r}; every token needs its word form "
                         "as a str under 'form'")
    for field in TOKEN_FIELDS[1:]:
        value = token.get(field)
        if value is not None and not isinstance(value, str):
            raise ValueError(
                f"{name}[{i}][{j}]: {field!r} must be a str (CoNLL-U text such as "
                f"'Number=Sing|Person=3' for feats) or None, got {type(value).__name__}"
            )


_EXPECTED_X = "a list of sentences, each a list of tokens (str, or dict of CoNLL-U fields)"


class CheckedSentences(list):
    """Sentences that a step of the library built from sentences it had checked, every
    field a str or None: :func:`check_sentences` takes them as they are. Each step of a
    parsing pipeline would otherwise check every token again (12 passes over the
    tokens of a parse of raw text). A copy or a slice is a plain list, checked again.
    """


def check_sentences(X, *, name="X", require_any=False, fields=(), reader=None):
    """Validate a list of sentences and return it as a list.

    Raises ``ValueError`` naming the first sentence with no tokens or the
    first malformed token (see the token rule in the module docstring), or,
    with ``require_any``, an empty X; ``TypeError``, saying what was
    expected, for an X that is not a sequence of sentences (None, a dict, a
    bare string, a 2-D array) or a sentence that is not a sequence of tokens.
    ``fields`` (with ``reader``, the estimator that reads them) refuses a
    sentence none of whose tokens has any of these fields: see
    :func:`check_token_fields`.
    """
    if (X is None or isinstance(X, (str, bytes, Mapping))
            or (hasattr(X, "ndim") and getattr(X, "ndim", 1) != 1)
            or not isinstance(X, Iterable)):
        raise TypeError(f"{name} must be {_EXPECTED_X}; got {_describe(X)}")
    if type(X) is CheckedSentences:
        sentences = X
    else:
        sentences = list(X)
        _check_each_sentence(sentences, name)
    if require_any and not sentences:
        raise ValueError(f"{name} holds no sentences; at least one is needed to fit")
    check_token_fields(sentences, fields, reader=reader, where=lambda i: f"{name}[{i}]")
    return sentences


def _check_each_sentence(sentences, name):
    for i, sentence in enumerate(sentences):
        if isinstance(sentence, str):
            raise TypeError(
                f"{name}[{i}] is a str; a sentence must be a sequence of tokens "
                "(split it first, e.g. sentence.split())"
            )
        if isinstance(sentence, Mapping) or not isinstance(sentence, Sized):
            raise TypeError(f"{name}[{i}] is {_describe(sentence)}; {name} must be {_EXPECTED_X}")
        if len(sentence) == 0:
            raise ValueError(f"{name}[{i}] is an empty sentence (zero tokens)")
        for j, token in enumerate(sentence):
            # the usual token, a dict of str fields, without a call (a corpus has
            # hundreds of thousands)
            if type(token) is dict and type(token.get("form")) is str:
                get = token.get
                if (type(get("lemma")) in _FIELD_TYPES and type(get("upos")) in _FIELD_TYPES
                        and type(get("xpos")) in _FIELD_TYPES
                        and type(get("feats")) in _FIELD_TYPES):
                    continue
            _check_token(token, name, i, j)


def _describe(value):
    return "None" if value is None else f"a {type(value).__name__}"


def check_token_fields(sentences, fields, *, reader, where):
    """Refuse sentences that lack every one of the token ``fields`` an estimator reads.

    An estimator that reads tags would parse such a sentence from what is
    missing, at chance, without an error. Raises ``ValueError`` naming the
    first such sentence (``where(i)``), the fields and what to do instead.
    """
    if not fields:
        return
    for i, sentence in enumerate(sentences):
        if not any(token_field(token, f) is not None for token in sentence for f in fields):
            raise ValueError(
                f"{where(i)} has no {' and no '.join(f.upper() for f in fields)} on any token, "
                f"which {reader} reads ({fields[0].upper()} first): tag the sentences first, "
                "or use a parsing pipeline that tags word forms itself "
                "(make_parsing_pipeline; on the command line, train --estimator pipeline)"
            )


def find_heads_error(heads, *, single_root=True):
    """Return a message describing what is wrong with a heads array, or None.

    Checks the range (0..n), that some token attaches to the root (exactly one
    when ``single_root``), and that following heads from any token reaches the
    root (no cycle).
    """
    n = len(heads)
    if n == 0:
        return "empty sentence (zero tokens)"
    for m, h in enumerate(heads, start=1):
        if not 0 <= h <= n:
            return f"head {h} of token {m} is out of range 0..{n}"
        if h == m:
            return f"token {m} is its own head"
    n_roots = sum(1 for h in heads if h == 0)
    if n_roots == 0:
        return "no token attaches to the root (head 0)"
    if single_root and n_roots > 1:
        return f"{n_roots} tokens attach to the root; exactly one is required"
    # colour: 0 unvisited, 1 on the current path, 2 known to reach the root
    state = [0] * (n + 1)
    state[0] = 2
    for start in range(1, n + 1):
        path = []
        node = start
        while state[node] == 0:
            state[node] = 1
            path.append(node)
            node = int(heads[node - 1])
        if state[node] == 1:
            cycle = path[path.index(node):]
            return "cycle among tokens " + " -> ".join(map(str, cycle + [node]))
        for p in path:
            state[p] = 2
    return None


def as_label_sequence(labels, where):
    """``labels`` as a list; a bare str (whose characters would pass for labels) is an error."""
    if isinstance(labels, str):
        raise ValueError(f"{where} is a str; expected a sequence of labels, one per token")
    try:
        return list(labels)
    except TypeError:
        raise ValueError(f"{where} is a {type(labels).__name__}; expected a sequence of labels") from None


def as_heads_array(heads, where):
    """``heads`` as a 1-D int64 array; whole floats (2.0) pass, 1.7 or a column does not."""
    try:
        array = np.asarray(heads)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: heads must be a 1-D array of integers ({exc})") from None
    if array.ndim != 1:
        raise ValueError(f"{where}: heads must be a 1-D array of integers, got shape {array.shape}")
    if array.size == 0 or np.issubdtype(array.dtype, np.integer):
        return array.astype(np.int64)
    if array.dtype.kind == "f" and np.all(np.isfinite(array)) and np.all(np.mod(array, 1) == 0):
        return array.astype(np.int64)
    raise ValueError(
        f"{where}: heads must be integers, got {array.dtype} values such as {array.ravel()[0]!r}"
    )


def is_labelled_target(target):
    """Whether one element of a parser's ``y`` is a ``(heads, deprels)`` pair.

    Heads alone are a 1-D sequence of integers; a pair is a tuple (or list)
    of two sequences, so the two cannot be confused.
    """
    return (isinstance(target, (tuple, list)) and len(target) == 2
            and not isinstance(target[0], (str, bytes)) and np.ndim(target[0]) == 1
            and not isinstance(target[1], (str, bytes)) and np.ndim(target[1]) == 1)


def split_dependency_targets(y, *, name="y"):
    """Split a parser's ``y`` into heads and relation labels.

    Returns ``(heads, deprels)``: ``heads`` the list of the head sequences as
    given, ``deprels`` a list of lists of str when every element of ``y`` is a
    ``(heads, deprels)`` pair, None when ``y`` holds heads only. Raises
    ``ValueError`` naming ``y[i]`` for a mix of the two kinds, a pair whose two
    sequences differ in length, or a label that is not a non-empty str.
    """
    y = list(y)
    labelled = [is_labelled_target(t) for t in y]
    if not any(labelled):
        return y, None
    first = labelled.index(True)
    heads, deprels = [], []
    for i, (target, is_pair) in enumerate(zip(y, labelled)):
        if not is_pair:
            raise ValueError(
                f"{name}[{i}] holds heads only but {name}[{first}] is a (heads, deprels) "
                "pair; give every sentence the same kind of target"
            )
        h, labels = target
        labels = as_label_sequence(labels, f"{name}[{i}] labels")
        if len(labels) != np.size(h):
            raise ValueError(
                f"{name}[{i}] has {np.size(h)} heads but {len(labels)} labels; a "
                "(heads, deprels) pair needs one label per head"
            )
        for j, label in enumerate(labels):
            if not isinstance(label, str) or not label:
                raise ValueError(
                    f"{name}[{i}]: label {j} is {label!r}; relation labels are non-empty str"
                )
        heads.append(h)
        deprels.append(labels)
    return heads, deprels


def check_labelled_dependency_data(X, y, *, single_root=True):
    """:func:`check_dependency_data` for ``y`` of heads or of ``(heads, deprels)`` pairs.

    Returns ``(sentences, heads, deprels)``, ``deprels`` None for heads-only ``y``.
    """
    heads, deprels = split_dependency_targets(y)
    sentences, heads = check_dependency_data(X, heads, single_root=single_root)
    return sentences, heads, deprels


def check_dependency_data(X, y=None, *, single_root=True):
    """Validate sentences and (optionally) their gold heads.

    Returns ``(sentences, heads)`` with heads as a list of ``int64`` arrays
    (``None`` when ``y`` is None). Errors name the sentence at fault.
    """
    sentences = check_sentences(X, require_any=y is not None)
    if y is None:
        return sentences, None
    y = list(y)
    if len(y) != len(sentences):
        raise ValueError(
            f"X has {len(sentences)} sentences but y has {len(y)} head arrays"
        )
    heads = []
    for i, (sentence, h) in enumerate(zip(sentences, y)):
        h = as_heads_array(h, f"y[{i}]")
        if len(h) != len(sentence):
            raise ValueError(
                f"y[{i}] has {len(h)} heads but X[{i}] has {len(sentence)} tokens"
            )
        problem = find_heads_error(h, single_root=single_root)
        if problem is not None:
            raise ValueError(f"y[{i}]: {problem}")
        heads.append(h)
    return sentences, heads


def check_tagging_data(X, y=None):
    """Validate sentences and (optionally) their label sequences.

    Returns ``(sentences, labels)`` with labels as lists of strings.
    """
    sentences = check_sentences(X, require_any=y is not None)
    if y is None:
        return sentences, None
    y = list(y)
    if len(y) != len(sentences):
        raise ValueError(f"X has {len(sentences)} sentences but y has {len(y)} label sequences")
    labels = []
    kind = None  # str or int: the kind of the first label, which every label must share
    for i, (sentence, tags) in enumerate(zip(sentences, y)):
        tags = as_label_sequence(tags, f"y[{i}]")
        if len(tags) != len(sentence):
            raise ValueError(f"y[{i}] has {len(tags)} labels but X[{i}] has {len(sentence)} tokens")
        for j, tag in enumerate(tags):
            tag_kind = str if isinstance(tag, str) else (
                int if isinstance(tag, (int, np.integer)) and not isinstance(tag, (bool, np.bool_))
                else None)
            if tag_kind is None:
                raise ValueError(f"y[{i}][{j}] is a {type(tag).__name__}; labels are str or int")
            kind = kind or tag_kind
            if tag_kind is not kind:
                raise ValueError(
                    f"y[{i}][{j}] is a {tag_kind.__name__} but earlier labels are "
                    f"{kind.__name__}s; use one kind of label"
                )
        labels.append(tags)
    return sentences, labels
