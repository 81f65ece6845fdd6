"""Sentences in, integer arrays out: the conventions of the guide, in one place.

A sentence is a sequence of tokens; a token is a ``str`` (its form) or a
mapping with CoNLL-U field names (``form``, ``lemma``, ``upos``, ``xpos``,
``feats``). Heads are 1-based with 0 for the root.
"""

from collections.abc import Mapping

import numpy as np

_FIELDS = ("form", "lemma", "upos", "xpos", "feats")


def token_field(token, field):
    """Return ``field`` of ``token`` as a string, or ``None`` when it is absent.

    A plain string token has only a form. The CoNLL-U placeholder ``_`` counts
    as absent, so callers can fall back (for example from lemma to form).
    """
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


def check_sentences(X, *, name="X"):
    """Validate a list of sentences and return it as a list.

    Raises ``ValueError`` naming the first sentence with no tokens, and
    ``TypeError`` for a 2-D array or a bare string passed as X.
    """
    if isinstance(X, str) or (hasattr(X, "ndim") and getattr(X, "ndim", 1) != 1):
        raise TypeError(
            f"{name} must be a list of sentences (each a sequence of tokens), "
            f"got {type(X).__name__}"
        )
    sentences = list(X)
    for i, sentence in enumerate(sentences):
        if isinstance(sentence, str):
            raise TypeError(
                f"{name}[{i}] is a str; a sentence must be a sequence of tokens "
                "(split it first, e.g. sentence.split())"
            )
        if len(sentence) == 0:
            raise ValueError(f"{name}[{i}] is an empty sentence (zero tokens)")
        for token in sentence:
            if not isinstance(token, (str, Mapping)):
                raise TypeError(
                    f"{name}[{i}] holds a token of type {type(token).__name__}; "
                    "tokens are str or mappings of CoNLL-U fields"
                )
    return sentences


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


def check_dependency_data(X, y=None, *, single_root=True):
    """Validate sentences and (optionally) their gold heads.

    Returns ``(sentences, heads)`` with heads as a list of ``int64`` arrays
    (``None`` when ``y`` is None). Errors name the sentence at fault.
    """
    sentences = check_sentences(X)
    if y is None:
        return sentences, None
    y = list(y)
    if len(y) != len(sentences):
        raise ValueError(
            f"X has {len(sentences)} sentences but y has {len(y)} head arrays"
        )
    heads = []
    for i, (sentence, h) in enumerate(zip(sentences, y)):
        try:
            h = np.asarray(h)
            if h.ndim != 1 or (h.size and not np.issubdtype(h.dtype, np.integer)):
                if h.size and np.all(np.mod(h, 1) == 0):
                    h = h.astype(np.int64)
                else:
                    raise ValueError("heads must be a 1-D array of integers")
        except (TypeError, ValueError) as exc:
            raise ValueError(f"y[{i}]: {exc}") from None
        h = h.astype(np.int64)
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
    sentences = check_sentences(X)
    if y is None:
        return sentences, None
    y = list(y)
    if len(y) != len(sentences):
        raise ValueError(f"X has {len(sentences)} sentences but y has {len(y)} label sequences")
    labels = []
    for i, (sentence, tags) in enumerate(zip(sentences, y)):
        if isinstance(tags, str):
            raise ValueError(f"y[{i}] is a str; expected one label per token")
        tags = list(tags)
        if len(tags) != len(sentence):
            raise ValueError(f"y[{i}] has {len(tags)} labels but X[{i}] has {len(sentence)} tokens")
        labels.append(tags)
    return sentences, labels


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
        get = self.stoi.get
        return np.fromiter((get(s, 0) for s in strings), dtype=np.int64)


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
