"""Lossless CoNLL-U reading and writing, and the (X, y) view used by the parsers.

A document is kept as the file has it: each sentence holds its comment lines
verbatim and every ID line (syntactic words ``7``, multiword tokens ``3-4``,
empty nodes ``5.1``) as a list of its ten columns, all strings, in file order.
Writing joins them back, so reading then writing a well-formed file gives the
same bytes. Only the tree view (:meth:`ConlluDocument.heads`, :func:`load_conllu`)
interprets HEAD; :func:`read_conllu` accepts ``_`` there so that unparsed input
can be read, parsed and written back.
"""

import re
from dataclasses import dataclass, field

import numpy as np

from ..utils import find_heads_error
from ._base import gc_paused, open_text, source_name

COLUMNS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")
_HEAD = COLUMNS.index("head")
_DEPREL = COLUMNS.index("deprel")
_RANGE_OR_EMPTY_ID = re.compile(r"[1-9][0-9]*-[1-9][0-9]*|[0-9]+\.[1-9][0-9]*")


@dataclass
class ConlluSentence:
    """One sentence of a CoNLL-U file.

    Attributes
    ----------
    comments : list of str
        The comment lines before the sentence, verbatim (each starts with ``#``).
    rows : list of list of str
        Every ID line in file order, split into its ten columns. Multiword-token
        lines (``3-4``) and empty nodes (``5.1``) are kept in place.
    line : int or None
        1-based line number of the sentence's first line in its file (None for
        sentences built in memory); used in error messages.
    """

    comments: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    line: int = field(default=None, compare=False)

    @property
    def words(self):
        """The rows of syntactic words (integer IDs), the tokens of X."""
        return [row for row in self.rows if row[0].isdigit()]

    @property
    def metadata(self):
        """``# key = value`` comments as a dict (``sent_id``, ``text``, ...)."""
        pairs = {}
        for comment in self.comments:
            key, sep, value = comment[1:].partition("=")
            if sep:
                pairs[key.strip()] = value.strip()
        return pairs

    def row_line(self, index):
        """File line number of ``rows[index]`` (None when built in memory)."""
        return None if self.line is None else self.line + len(self.comments) + index


class ConlluDocument:
    """The sentences of a CoNLL-U file, kept losslessly; see :func:`read_conllu`.

    Behaves as a sequence of :class:`ConlluSentence` (indexing with a slice
    gives a document). ``source`` names the file in error messages and
    ``newline`` is the line terminator written back (``"\\n"``, or ``"\\r\\n"``
    when the file used it).
    """

    def __init__(self, sentences=(), *, source=None, newline="\n"):
        self.sentences = list(sentences)
        self.source = source
        self.newline = newline

    def __len__(self):
        return len(self.sentences)

    def __iter__(self):
        return iter(self.sentences)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ConlluDocument(self.sentences[index], source=self.source, newline=self.newline)
        return self.sentences[index]

    def __eq__(self, other):
        if not isinstance(other, ConlluDocument):
            return NotImplemented
        return self.newline == other.newline and self.sentences == other.sentences

    def __repr__(self):
        return f"ConlluDocument({len(self)} sentences, source={self.source!r})"

    def _where(self, index, row=None):
        sentence = self.sentences[index]
        name = self.source or "<document>"
        if sentence.line is None:
            return f"{name}: sentence {index}" + ("" if row is None else f", row {row + 1}")
        if row is not None:
            return f"{name}:{sentence.row_line(row)}"
        last = sentence.row_line(len(sentence.rows) - 1)
        return f"{name}:{sentence.line}-{last} (sentence {index})"

    def to_sentences(self):
        """X: one list per sentence of token dicts (form, lemma, upos, xpos, feats).

        Values are the file's strings; ``_`` stays ``_`` and consumers treat it
        as absent. Multiword-token lines and empty nodes are not tokens.
        """
        X = []
        for index, sentence in enumerate(self.sentences):
            tokens = [
                {"form": r[1], "lemma": r[2], "upos": r[3], "xpos": r[4], "feats": r[5]}
                for r in sentence.rows
                if r[0].isdigit()
            ]
            if not tokens:
                raise ValueError(f"{self._where(index)}: empty sentence (no word lines)")
            X.append(tokens)
        return X

    def heads(self, *, single_root=True):
        """y: one int64 array of heads per sentence (1-based, 0 = root), validated.

        Raises ``ValueError`` naming the file and line for a non-integer or
        out-of-range head, and the sentence's lines for a cycle, no root, or
        (when ``single_root``) several roots.
        """
        y = []
        for index, sentence in enumerate(self.sentences):
            positions = [i for i, r in enumerate(sentence.rows) if r[0].isdigit()]
            n = len(positions)
            if n == 0:
                raise ValueError(f"{self._where(index)}: empty sentence (no word lines)")
            heads = []
            for m, i in enumerate(positions, start=1):
                text = sentence.rows[i][_HEAD]
                if not (text.isascii() and text.isdigit()):
                    raise ValueError(
                        f"{self._where(index, i)}: HEAD {text!r} of word {m} is not a "
                        "non-negative integer"
                    )
                h = int(text)
                if h > n:
                    raise ValueError(
                        f"{self._where(index, i)}: HEAD {h} of word {m} is out of range "
                        f"0..{n}"
                    )
                if h == m:
                    raise ValueError(f"{self._where(index, i)}: word {m} is its own head")
                heads.append(h)
            problem = find_heads_error(heads, single_root=single_root)
            if problem is not None:
                raise ValueError(f"{self._where(index)}: {problem}")
            y.append(np.array(heads, dtype=np.int64))
        return y

    def deprels(self):
        """The DEPREL column of the words of each sentence, as lists of strings."""
        return [[r[_DEPREL] for r in s.rows if r[0].isdigit()] for s in self.sentences]

    def with_heads(self, heads, deprels=None):
        """A copy with the HEAD (and optionally DEPREL) column of every word replaced.

        Everything else (comments, other columns, multiword tokens, empty
        nodes) is unchanged; this is how predicted trees are written out.

        Parameters
        ----------
        heads : list of array-like of int
            One array per sentence, as many heads as the sentence has words.
        deprels : list of list of str, default=None
            New relation labels; None keeps the existing DEPREL column.
        """
        heads = list(heads)
        if len(heads) != len(self.sentences):
            raise ValueError(
                f"got {len(heads)} head arrays for a document of {len(self.sentences)} sentences"
            )
        if deprels is not None:
            deprels = list(deprels)
            if len(deprels) != len(heads):
                raise ValueError(f"got {len(deprels)} label lists for {len(heads)} sentences")
        sentences = []
        for index, (sentence, h) in enumerate(zip(self.sentences, heads)):
            rows = [list(r) for r in sentence.rows]
            words = [r for r in rows if r[0].isdigit()]
            h = np.asarray(h)
            if h.ndim != 1 or len(h) != len(words):
                raise ValueError(
                    f"{self._where(index)}: {len(words)} words but heads of shape {h.shape}"
                )
            for row, value in zip(words, h.tolist()):
                row[_HEAD] = str(int(value))
            if deprels is not None:
                labels = list(deprels[index])
                if len(labels) != len(words):
                    raise ValueError(
                        f"{self._where(index)}: {len(words)} words but {len(labels)} labels"
                    )
                for row, label in zip(words, labels):
                    row[_DEPREL] = str(label)
            sentences.append(ConlluSentence(list(sentence.comments), rows, sentence.line))
        return ConlluDocument(sentences, source=self.source, newline=self.newline)

    def with_tags(self, tags, field="upos"):
        """A copy with the ``field`` column (``"upos"`` or ``"xpos"``) of every word replaced.

        Everything else is unchanged; this is how predicted tags are written out.
        """
        if field not in ("upos", "xpos"):
            raise ValueError(f"field must be 'upos' or 'xpos', got {field!r}")
        column = COLUMNS.index(field)
        tags = list(tags)
        if len(tags) != len(self.sentences):
            raise ValueError(
                f"got {len(tags)} tag sequences for a document of {len(self.sentences)} sentences"
            )
        sentences = []
        for index, (sentence, labels) in enumerate(zip(self.sentences, tags)):
            rows = [list(r) for r in sentence.rows]
            words = [r for r in rows if r[0].isdigit()]
            labels = list(labels)
            if len(labels) != len(words):
                raise ValueError(f"{self._where(index)}: {len(words)} words but {len(labels)} tags")
            for row, label in zip(words, labels):
                row[column] = str(label)
            sentences.append(ConlluSentence(list(sentence.comments), rows, sentence.line))
        return ConlluDocument(sentences, source=self.source, newline=self.newline)


def _parse(lines, source):
    """Turn an iterator of ``\\n``-terminated lines into a ConlluDocument."""
    sentences = []
    comments, rows = [], []
    start = None
    n_words = 0
    newline = None
    lineno = 0
    for lineno, line in enumerate(lines, start=1):
        if line.endswith("\n"):
            line = line[:-1]
            if newline is None:
                newline = "\r\n" if line.endswith("\r") else "\n"
            if newline == "\r\n" and line.endswith("\r"):
                line = line[:-1]
        if not line:
            if n_words == 0:
                raise ValueError(
                    f"{source}:{lineno}: empty sentence (a blank line must end a "
                    "sentence that has at least one word line)"
                )
            sentences.append(ConlluSentence(comments, rows, start))
            comments, rows = [], []
            start = None
            n_words = 0
            continue
        if start is None:
            start = lineno
        if line[0] == "#":
            if rows:
                raise ValueError(
                    f"{source}:{lineno}: comment line inside a sentence (comments must "
                    "come before the word lines)"
                )
            comments.append(line)
            continue
        columns = line.split("\t")
        if len(columns) != 10:
            raise ValueError(
                f"{source}:{lineno}: {len(columns)} tab-separated columns, CoNLL-U needs 10"
            )
        token_id = columns[0]
        if token_id.isdigit():
            n_words += 1
            if token_id != str(n_words):
                raise ValueError(
                    f"{source}:{lineno}: word ID {token_id!r} where {n_words} was expected "
                    "(word IDs must run 1, 2, ... in each sentence)"
                )
        elif not _RANGE_OR_EMPTY_ID.fullmatch(token_id):
            raise ValueError(
                f"{source}:{lineno}: ID {token_id!r} is not a word ID (7), a multiword "
                "range (3-4) or an empty node (5.1)"
            )
        rows.append(columns)
    if rows or comments:
        if n_words == 0:
            raise ValueError(f"{source}:{lineno}: empty sentence at the end of the file")
        # a missing final blank line is tolerated; writing adds it back
        sentences.append(ConlluSentence(comments, rows, start))
    return ConlluDocument(sentences, source=source, newline=newline or "\n")


def read_conllu(path_or_file):
    """Read a CoNLL-U file into a :class:`ConlluDocument`, losing nothing.

    Parameters
    ----------
    path_or_file : str, path-like or file object
        A path (``.gz`` and ``.xz`` are decompressed on the fly) or an open
        text or binary file.

    Returns
    -------
    doc : ConlluDocument
        Comments, all ten columns (as strings), multiword-token lines and empty
        nodes, in file order. ``write_conllu(doc, ...)`` reproduces a
        well-formed input byte for byte.

    Raises
    ------
    ValueError
        Naming the file and line, for a line without ten tab-separated columns,
        a malformed ID or word IDs not numbered 1..n, a comment inside a
        sentence, or a sentence without word lines. Heads are not checked here
        (they may be ``_`` in unparsed input); see :meth:`ConlluDocument.heads`.
    """
    source = source_name(path_or_file)
    with open_text(path_or_file, "r") as f, gc_paused():
        return _parse(f, source)


def _format_sentence(sentence, newline):
    lines = list(sentence.comments)
    lines.extend("\t".join(row) for row in sentence.rows)
    lines.append(newline)
    return newline.join(lines)


def write_conllu(doc, path_or_file=None):
    """Write a :class:`ConlluDocument` (or a list of sentences) in CoNLL-U.

    Parameters
    ----------
    doc : ConlluDocument or iterable of ConlluSentence
    path_or_file : str, path-like, file object or None, default=None
        Destination; ``.gz``/``.xz`` paths are compressed. None returns the
        text instead of writing it.

    Returns
    -------
    text : str or None
        The CoNLL-U text when ``path_or_file`` is None.
    """
    newline = getattr(doc, "newline", "\n")
    chunks = (_format_sentence(s, newline) for s in doc)
    if path_or_file is None:
        return "".join(chunks)
    with open_text(path_or_file, "w") as f:
        for chunk in chunks:
            f.write(chunk)
    return None


def load_conllu(path_or_file, *, single_root=True, return_labels=False):
    """Load a CoNLL-U treebank as ``(X, y)`` for the dependency parsers.

    Parameters
    ----------
    path_or_file : str, path-like, file object or ConlluDocument
        The treebank (``.gz``/``.xz`` paths are read transparently).
    single_root : bool, default=True
        Require exactly one word attached to the root in every sentence.
    return_labels : bool, default=False
        Also return the DEPREL column.

    Returns
    -------
    X : list of list of dict
        One list of token dicts per sentence, keys ``form``, ``lemma``,
        ``upos``, ``xpos``, ``feats`` (the file's strings, ``_`` meaning
        absent). Multiword-token lines and empty nodes are not tokens.
    y : list of ndarray of int64
        Heads, 1-based, 0 for the root.
    deprels : list of list of str
        Only when ``return_labels`` is True.

    Raises
    ------
    ValueError
        Naming the file and line: see :func:`read_conllu`, plus a non-integer
        or out-of-range head, a cycle, no root or (with ``single_root``)
        several roots.
    """
    doc = path_or_file if isinstance(path_or_file, ConlluDocument) else read_conllu(path_or_file)
    with gc_paused():
        X = doc.to_sentences()
        y = doc.heads(single_root=single_root)
    if return_labels:
        return X, y, doc.deprels()
    return X, y
