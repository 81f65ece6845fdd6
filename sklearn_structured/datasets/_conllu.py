"""Lossless CoNLL-U reading and writing, and the (X, y) view used by the parsers.

A document is kept as the file has it: each sentence holds its comment lines
verbatim and every ID line (syntactic words ``7``, multiword tokens ``3-4``,
empty nodes ``5.1``) as a list of its ten columns, all strings, in file order.
Writing joins them back, so reading then writing a well-formed file gives the
same bytes. Only the tree view (:meth:`ConlluDocument.heads`, :func:`load_conllu`)
interprets HEAD; :func:`read_conllu` accepts ``_`` there so that unparsed input
can be read, parsed and written back.
"""

import io
import re
from functools import partial
from dataclasses import dataclass, field

import numpy as np

from ..fields import COLUMN_INDEX, COLUMNS, DEPREL, DEPS, HEAD, TAG_FIELDS
from ..utils import find_heads_error
from ..utils._base import import_extra
from ._base import gc_paused, open_text, source_name

_HEAD = COLUMN_INDEX[HEAD]
_DEPREL = COLUMN_INDEX[DEPREL]
_DEPS = COLUMN_INDEX[DEPS]
_RANGE_ID = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
_EMPTY_ID = re.compile(r"[0-9]+\.[1-9][0-9]*")


class _IdOrder:
    """Checks the ID column of one sentence, row by row, as CoNLL-U orders it.

    Words run 1..n; a multiword range ``a-b`` (a < b <= n) comes right before
    word a and does not overlap the previous range; the empty nodes after word
    i (0 for before the first word) are ``i.1``, ``i.2``, ... in order.
    ``add`` and ``end`` raise a ValueError at the first violation, located by
    ``where(row)`` (``row`` indexes the sentence's rows), so that the reader
    (file lines) and the writer (sentence rows) report it in one way.
    """

    def __init__(self, where):
        self.where = where
        self.n_rows = 0
        self.n_words = 0
        self.n_empty = 0  # empty nodes seen after word n_words
        self.range_end = 0  # last word of the latest multiword range
        self.range_row = None  # row of a range line whose first word has not come yet
        self.last_range_row = None

    def _error(self, row, message):
        return ValueError(f"{self.where(row)}: {message}")

    def add(self, token_id):
        row = self.n_rows
        self.n_rows += 1
        if token_id.isdigit():
            self.n_words += 1
            self.n_empty = 0
            self.range_row = None
            if token_id != str(self.n_words):
                raise self._error(row, f"word ID {token_id!r} where {self.n_words} was expected "
                                  "(word IDs must run 1, 2, ... in each sentence)")
            return
        if self.range_row is not None:
            raise self._error(row, f"ID {token_id!r} between a multiword range and its first "
                              f"word {self.n_words + 1} (the range line must come right before "
                              "that word)")
        match = _RANGE_ID.fullmatch(token_id)
        if match:
            first, last = int(match[1]), int(match[2])
            if last <= first:
                raise self._error(row, f"multiword range {token_id!r} does not run forward "
                                  "(needs a < b)")
            if first <= self.range_end:
                raise self._error(row, f"multiword range {token_id!r} overlaps the previous "
                                  f"range, which ends at word {self.range_end}")
            if first != self.n_words + 1:
                raise self._error(row, f"multiword range {token_id!r} after word {self.n_words} "
                                  "(a range line must come right before the first word it covers)")
            self.range_end = last
            self.range_row = self.last_range_row = row
            return
        if _EMPTY_ID.fullmatch(token_id):
            expected = f"{self.n_words}.{self.n_empty + 1}"
            if token_id != expected:
                raise self._error(row, f"empty node {token_id!r} where {expected} was expected "
                                  "(the empty nodes after word i are numbered i.1, i.2, ... right "
                                  "after it)")
            self.n_empty += 1
            return
        raise self._error(row, f"ID {token_id!r} is not a word ID (7), a multiword range (3-4) "
                          "or an empty node (5.1)")

    def end(self):
        if self.range_row is not None:
            raise self._error(self.range_row, "multiword range with no word after it")
        if self.range_end > self.n_words:
            raise self._error(self.last_range_row, f"a multiword range runs to word "
                              f"{self.range_end} but the sentence has {self.n_words} words")


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
    endings : list of str or None
        The terminator of each of its lines (comments, rows, then the blank
        line) when they are not all the document's ``newline``; None otherwise.
        Kept so that files with mixed line endings are written back unchanged.
    """

    comments: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    line: int = field(default=None, compare=False)
    endings: list = field(default=None, compare=False, repr=False)

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
    ``newline`` is the line terminator written back (that of the file's first
    line, ``"\\n"`` or ``"\\r\\n"``); lines that ended otherwise keep their
    own ending (see :attr:`ConlluSentence.endings`).
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
        return _where(self.source, index, self.sentences[index], row)

    # pictures and other libraries' views, kept in their own modules
    def _repr_html_(self):
        from ..display import document_html

        return document_html(self, max_sentences=20)

    def to_frame(self):
        """A pandas table of one row per syntactic word: ``sent_id``, ``token`` and
        ``token_form`` (the surface token it belongs to), then the ten columns;
        see :ref:`serving`."""
        return _to_frame(self)

    @classmethod
    def from_frame(cls, frame):
        """The document of a :meth:`to_frame` table (the same one, while the table
        keeps its ``attrs``); see :ref:`serving`."""
        return _from_frame(frame)

    def to_token_lists(self):
        """The sentences as ``conllu.TokenList`` objects (the conllu package)."""
        return _to_token_lists(self)

    @classmethod
    def from_token_lists(cls, token_lists):
        """The document of ``conllu.TokenList`` objects."""
        return _from_token_lists(token_lists)

    @staticmethod
    def _replaced(sentence, rows):
        return ConlluSentence(list(sentence.comments), rows, sentence.line, sentence.endings)

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

    def deprels(self, *, missing="keep"):
        """The DEPREL column of the words of each sentence, as lists of strings.

        ``missing="keep"`` returns a blank DEPREL as the file has it (``_``);
        ``missing="error"`` raises a ValueError naming its line.
        """
        if missing not in ("keep", "error"):
            raise ValueError(f"missing must be 'keep' or 'error', got {missing!r}")
        labels = []
        for index, sentence in enumerate(self.sentences):
            words = []
            for i, row in enumerate(sentence.rows):
                if not row[0].isdigit():
                    continue
                if missing == "error" and row[_DEPREL] in ("_", ""):
                    raise ValueError(
                        f"{self._where(index, i)}: word {row[0]} has no DEPREL ('_'); labelled "
                        "data needs a relation for every word"
                    )
                words.append(row[_DEPREL])
            labels.append(words)
        return labels

    def has_deprels(self):
        """Whether every word of the document has a DEPREL (none is ``_``)."""
        return all(r[_DEPREL] not in ("_", "") for s in self.sentences for r in s.rows
                   if r[0].isdigit())

    def with_heads(self, heads, deprels=None, *, clear_deps=False, tags=None):
        """A copy with the HEAD (and optionally DEPREL) column of every word replaced.

        Everything else (comments, other columns, multiword tokens, empty
        nodes) is unchanged unless ``clear_deps``; this is how predicted trees
        are written out.

        Parameters
        ----------
        heads : list of array-like of int
            One array per sentence, as many heads as the sentence has words:
            whole numbers in 0..n forming a tree (several roots allowed).
        deprels : list of list of str, default=None
            New relation labels; None keeps the existing DEPREL column. A None
            label is a missing one and is written ``_``.
        clear_deps : bool, default=False
            Write ``_`` in the DEPS column (the enhanced graph) of every word,
            which a new tree would otherwise contradict, and leave out the
            empty nodes (``5.1``), which exist only in that graph.
        tags : dict or None, default=None
            Tag columns to write in the same pass, as :meth:`with_tag_columns`
            takes them (a parsing pipeline's taggers').

        Raises
        ------
        ValueError
            Naming the sentence (and word), for heads that are not whole
            numbers, out of range or cyclic, and labels that are not str or
            None, are empty or hold a TAB or line break: what would not read
            back as given.
        """
        heads = list(heads)
        if len(heads) != len(self.sentences):
            raise ValueError(
                f"got {len(heads)} head arrays for a document of {len(self.sentences)} sentences"
            )
        tag_columns = self._tag_columns(tags or {})
        if deprels is not None:
            deprels = list(deprels)
            if len(deprels) != len(heads):
                raise ValueError(f"got {len(deprels)} label lists for {len(heads)} sentences")
        sentences = []
        for index, (sentence, h) in enumerate(zip(self.sentences, heads)):
            rows = [list(r) for r in sentence.rows]
            words = [r for r in rows if r[0].isdigit()]
            self._write_tags(words, index, tag_columns)
            h = np.asarray(h)
            if h.ndim != 1 or len(h) != len(words):
                raise ValueError(
                    f"{self._where(index)}: {len(words)} words but heads of shape {h.shape}"
                )
            if h.dtype.kind not in "iuf" or (h.dtype.kind == "f" and not np.all(h == np.round(h))):
                raise ValueError(
                    f"{self._where(index)}: heads {h.tolist()} are not all whole numbers"
                )
            h = h.astype(np.int64)
            problem = find_heads_error(h, single_root=False)
            if problem is not None:
                raise ValueError(f"{self._where(index)}: {problem}")
            for row, value in zip(words, h.tolist()):
                row[_HEAD] = str(value)
            if deprels is not None:
                labels = list(deprels[index])
                if len(labels) != len(words):
                    raise ValueError(
                        f"{self._where(index)}: {len(words)} words but {len(labels)} labels"
                    )
                for m, (row, label) in enumerate(zip(words, labels), start=1):
                    row[_DEPREL] = _text_field(label, self._where, index, "label", m)
            if clear_deps:
                for row in words:
                    row[_DEPS] = "_"
                rows = [r for r in rows if "." not in r[0]]
            sentences.append(self._replaced(sentence, rows))
        return ConlluDocument(sentences, source=self.source, newline=self.newline)

    def with_tags(self, tags, field="upos"):
        """A copy with the ``field`` column (``"lemma"``, ``"upos"``, ``"xpos"`` or
        ``"feats"``) of every word replaced.

        Everything else is unchanged; this is how predicted tags are written out.
        A None tag is a missing one and is written ``_``; a tag that is not a
        str or None, is empty or holds a TAB or line break raises a
        ValueError naming the sentence and word.
        """
        return self.with_tag_columns({field: tags})

    def with_tag_columns(self, columns):
        """:meth:`with_tags` for several columns at once: ``columns`` maps each field
        to its tags (one pass over the document, as a pipeline writes its taggers')."""
        tag_columns = self._tag_columns(columns)
        sentences = []
        for index, sentence in enumerate(self.sentences):
            rows = [list(r) for r in sentence.rows]
            self._write_tags([r for r in rows if r[0].isdigit()], index, tag_columns)
            sentences.append(self._replaced(sentence, rows))
        return ConlluDocument(sentences, source=self.source, newline=self.newline)

    def _tag_columns(self, columns):
        """``{column index: tag sequences}`` of ``{field: tag sequences}``, checked."""
        indices = {}
        for name, tags in columns.items():
            if name not in TAG_FIELDS:
                raise ValueError(f"field must be one of {TAG_FIELDS}, got {name!r}")
            tags = list(tags)
            if len(tags) != len(self.sentences):
                raise ValueError(f"got {len(tags)} tag sequences for a document of "
                                 f"{len(self.sentences)} sentences")
            indices[COLUMN_INDEX[name]] = tags
        return indices

    def _write_tags(self, words, index, tag_columns):
        """Write sentence ``index``'s tags of ``tag_columns`` into its word rows."""
        for column, tags in tag_columns.items():
            labels = list(tags[index])
            if len(labels) != len(words):
                raise ValueError(f"{self._where(index)}: {len(words)} words but {len(labels)} tags")
            for m, (row, label) in enumerate(zip(words, labels), start=1):
                row[column] = _text_field(label, self._where, index, "tag", m)


def _where(source, index, sentence, row=None):
    """Where sentence ``index`` (and its ``row``) is: file lines, or its position (counted
    from 1, as lines and rows are)."""
    name = source or "<document>"
    if sentence.line is None:
        return f"{name}: sentence {index + 1}" + ("" if row is None else f", row {row + 1}")
    if row is not None:
        return f"{name}:{sentence.row_line(row)}"
    last = sentence.row_line(len(sentence.rows) - 1)
    return f"{name}:{sentence.line}-{last} (sentence {index + 1})"


def _text_field(value, where, index, kind, m):
    """A new column value as written: None becomes ``_``; other non-strings and
    strings that would break the line (TAB, line breaks) are refused, naming
    ``where(index)`` and word m (formatted only then: this runs for every word)."""
    if value is None:
        return "_"
    if not isinstance(value, str):
        raise ValueError(f"{where(index)}: {kind} of word {m} is {value!r}, not a str "
                         "(None writes '_')")
    if not value or "\t" in value or "\n" in value or "\r" in value:
        raise ValueError(f"{where(index)}: {kind} of word {m} {value!r} is empty or holds a "
                         "TAB or line break")
    return value


def _parse(lines, source, first_line=1):
    """Turn an iterator of ``\\n``-terminated lines, the first being line ``first_line``
    of the file, into a ConlluDocument."""
    sentences = []
    comments, rows, endings = [], [], []
    start = None
    newline = None
    lineno = first_line - 1

    def where(row):  # the word lines of a sentence follow its comments
        return f"{source}:{start + len(comments) + row}"

    ids = _IdOrder(where)

    def close(blank_ending):
        endings.append(blank_ending)
        ids.end()
        mixed = any(e != newline for e in endings)
        sentences.append(ConlluSentence(comments, rows, start, endings if mixed else None))

    for lineno, line in enumerate(lines, start=first_line):
        # each line keeps its own terminator; a missing one (last line) is ""
        if line.endswith("\r\n"):
            ending, line = "\r\n", line[:-2]
        elif line.endswith("\n"):
            ending, line = "\n", line[:-1]
        else:
            ending = ""
        if newline is None:
            newline = ending or "\n"
        if "\r" in line:
            raise ValueError(
                f"{source}:{lineno}: carriage return inside a line (only CRLF line "
                "endings are allowed)"
            )
        if not line:
            if ids.n_words == 0:
                raise ValueError(
                    f"{source}:{lineno}: empty sentence (a blank line must end a "
                    "sentence that has at least one word line)"
                )
            close(ending)
            comments, rows, endings = [], [], []
            start = None
            ids = _IdOrder(where)
            continue
        if start is None:
            start = lineno
        endings.append(ending)
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
        ids.add(columns[0])
        rows.append(columns)
    if rows or comments:
        if ids.n_words == 0:
            raise ValueError(f"{source}:{lineno}: empty sentence at the end of the file")
        # a missing final blank line is tolerated; writing adds it back
        close("")
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
        well-formed input byte for byte, each line with its own ending (LF or
        CRLF, mixed or not); no field ever holds a ``\\r``. A UTF-8 byte-order
        mark at the start of the file is skipped (and not written back).

    Raises
    ------
    ValueError
        Naming the file and line, for a byte that is not UTF-8, a line without
        ten tab-separated columns,
        a carriage return other than in a CRLF ending, a malformed ID, word IDs
        not numbered 1..n, a multiword range that is reversed, overlaps the
        previous one, runs past the last word or is not right before its first
        word, empty nodes not numbered ``i.1, i.2, ...`` right after word i, a
        comment inside a sentence, or a sentence without word lines. Heads are not checked here
        (they may be ``_`` in unparsed input); see :meth:`ConlluDocument.heads`.
    """
    source = source_name(path_or_file)
    with open_text(path_or_file, "r") as f, gc_paused():
        return _parse(_decoded_lines(f, source), source)


def read_conllu_batches(path_or_file, batch_size=1000):
    """Read a CoNLL-U file as :func:`read_conllu` does, a few sentences at a time.

    Parameters
    ----------
    path_or_file : str, path-like or file object
        As for :func:`read_conllu`.
    batch_size : int, default=1000
        Sentences per batch.

    Yields
    ------
    ConlluDocument
        The next ``batch_size`` sentences (fewer in the last batch), with the
        file's line numbers. Writing the batches one after the other gives
        what writing the whole document would.

    Raises
    ------
    ValueError
        As :func:`read_conllu`, once the batch holding the problem is read.
    """
    source = source_name(path_or_file)
    with open_text(path_or_file, "r") as f:
        lines, n_sentences, first_line = [], 0, 1
        for lineno, line in enumerate(_decoded_lines(f, source), start=1):
            lines.append(line)
            # a blank line after a non-blank one ends a sentence
            if line.rstrip("\r\n") or len(lines) < 2 or not lines[-2].rstrip("\r\n"):
                continue
            n_sentences += 1
            if n_sentences == batch_size:
                with gc_paused():
                    batch = _parse(lines, source, first_line)
                yield batch
                lines, n_sentences, first_line = [], 0, lineno + 1
        if lines:
            with gc_paused():
                batch = _parse(lines, source, first_line)
            yield batch


def _decoded_lines(file, source):
    """The lines of a text file, less a byte-order mark at its start; a byte that is
    not UTF-8 is a ValueError naming its line."""
    lineno = 0
    try:
        for lineno, line in enumerate(file, start=1):
            yield line[1:] if lineno == 1 and line[:1] == "\ufeff" else line
    except UnicodeDecodeError as error:
        # the file is decoded by chunks, and a chunk is read only once the lines
        # before it are out: the bad byte's chunk begins on line lineno + 1
        bad = error.object[error.start:error.start + 1].hex()
        line = lineno + 1 + error.object[:error.start].count(b"\n")
        raise ValueError(f"{source}:{line}: not UTF-8 (byte 0x{bad})") from None


def _format_sentence(sentence, newline, where):
    """The sentence's text, or a ValueError (located by ``where(row)``) for
    anything that would not read back as it is."""
    lines = []
    for comment in sentence.comments:
        if not isinstance(comment, str) or comment[:1] != "#" or "\n" in comment or "\r" in comment:
            raise ValueError(f"{where()}: comment {comment!r} is not one line starting with '#'")
        lines.append(comment)
    ids = _IdOrder(where)
    for row_index, row in enumerate(sentence.rows):
        try:
            line = "\t".join(row)
        except TypeError:
            raise ValueError(f"{where(row_index)}: row {row!r} holds a value that is not a str")
        if len(row) != 10 or line.count("\t") != 9 or "\n" in line or "\r" in line:
            raise ValueError(
                f"{where(row_index)}: row {row!r} is not ten fields free of TABs and line breaks"
            )
        ids.add(row[0])
        lines.append(line)
    if not ids.n_words:
        raise ValueError(f"{where()}: empty sentence (no word lines)")
    ids.end()
    lines.append("")
    endings = sentence.endings
    if endings is None or len(endings) != len(lines):
        return newline.join(lines) + newline
    return "".join(line + (ending or newline) for line, ending in zip(lines, endings))


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

    Raises
    ------
    ValueError
        Naming the sentence and row, for anything that would not read back as
        written: a field that is not a str or holds a TAB or line break, a row
        without ten fields, IDs out of order (see :func:`read_conllu`), a
        comment that is not one line starting with ``#``, or a sentence
        without words. A file may then be left partly written.
    """
    newline = getattr(doc, "newline", "\n")
    source = getattr(doc, "source", None)
    chunks = (
        _format_sentence(s, newline, partial(_where, source, index, s))
        for index, s in enumerate(doc)
    )
    if path_or_file is None:
        return "".join(chunks)
    with open_text(path_or_file, "w") as f:
        for chunk in chunks:
            f.write(chunk)
    return None


def load_conllu(path_or_file, *, single_root=True, return_labels=False, labelled=False):
    """Load a CoNLL-U treebank as ``(X, y)`` for the dependency parsers.

    Parameters
    ----------
    path_or_file : str, path-like, file object or ConlluDocument
        The treebank (``.gz``/``.xz`` paths are read transparently).
    single_root : bool, default=True
        Require exactly one word attached to the root in every sentence.
    return_labels : bool, default=False
        Also return the DEPREL column as a third value (heads-only ``y``).
    labelled : bool, default=False
        Make ``y[i]`` the pair ``(heads, deprels)``, the labelled target
        the parsers learn labels from. Every word must then have a DEPREL
        (``_`` is an error naming the line). Not combined with
        ``return_labels``.

    Returns
    -------
    X : list of list of dict
        One list of token dicts per sentence, keys ``form``, ``lemma``,
        ``upos``, ``xpos``, ``feats`` (the file's strings, ``_`` meaning
        absent). Multiword-token lines and empty nodes are not tokens.
    y : list of ndarray of int64, or list of (ndarray, list of str)
        Heads, 1-based, 0 for the root; with ``labelled=True`` each paired
        with the sentence's DEPREL column.
    deprels : list of list of str
        Only when ``return_labels`` is True.

    Raises
    ------
    ValueError
        Naming the file and line: see :func:`read_conllu`, plus a non-integer
        or out-of-range head, a cycle, no root or (with ``single_root``)
        several roots, and with ``labelled`` a word without DEPREL.
    """
    if labelled and return_labels:
        raise ValueError("labelled=True already puts DEPREL into y; do not also pass "
                         "return_labels=True")
    doc = path_or_file if isinstance(path_or_file, ConlluDocument) else read_conllu(path_or_file)
    with gc_paused():
        X = doc.to_sentences()
        y = doc.heads(single_root=single_root)
        if labelled:
            y = list(zip(y, doc.deprels(missing="error")))
    if return_labels:
        return X, y, doc.deprels()
    return X, y

# ---------------------------------------------- pandas and the conllu package
# Both are optional (pip install sklearn-structured[pandas] or [conllu]) and
# imported only when a conversion is asked for.

FRAME_COLUMNS = ("sent_id", "token", "token_form", *COLUMNS)


def _sent_id(sentence, index):
    return sentence.metadata.get("sent_id", str(index + 1))


def _to_frame(document):
    """One row per syntactic word: ``sent_id``, the surface token the word belongs
    to (``token``: its ID, ``3-4`` for a multiword token, and ``token_form``), then
    the ten CoNLL-U columns, ``id`` and ``head`` as integers (``head`` missing
    where it is ``_``), the others the file's strings.

    What is not a word's (each sentence's comments, its multiword-token lines
    whole and its empty nodes) is kept in ``frame.attrs["conllu"]``, by
    ``sent_id``, for :func:`from_frame`.
    """
    pd = import_extra("pandas", "pandas")
    records, extra = [], {}
    for index, sentence in enumerate(document):
        sent_id = _sent_id(sentence, index)
        token = form = None
        last = n_words = 0
        others = []  # (words before it, row) of each line that is not a word
        for row in sentence.rows:
            first, dash, end = row[0].partition("-")
            if not row[0].isdigit():
                others.append((n_words, list(row)))
                if dash:
                    token, form, last = row[0], row[1], int(end)
                continue
            n_words += 1
            if n_words > last:
                token, form = row[0], row[1]
            head = int(row[6]) if row[6].isdigit() else None
            records.append((sent_id, token, form, n_words, *row[1:6], head, *row[7:]))
        extra[sent_id] = {"comments": list(sentence.comments), "rows": others,
                          "n_words": n_words}
    frame = pd.DataFrame.from_records(records, columns=list(FRAME_COLUMNS))
    frame["head"] = frame["head"].astype("Int64")
    frame.attrs["conllu"] = extra
    return frame


def _from_frame(frame):
    """The document of a table in :func:`to_frame`'s columns: a sentence for each run
    of rows with one ``sent_id``.

    A sentence whose ``sent_id`` and number of words are those
    ``frame.attrs["conllu"]`` keeps gets its comments, multiword tokens and
    empty nodes back from there, so that ``from_frame(to_frame(doc))`` writes
    what ``doc`` does; any other gets ``# sent_id`` alone and a multiword-token
    line (its other columns ``_``) wherever ``token`` is a range.
    """
    missing = [column for column in FRAME_COLUMNS if column not in frame.columns]
    if missing:
        raise ValueError(f"the table has no column {missing[0]!r}; it needs "
                         f"{', '.join(FRAME_COLUMNS)}")
    extra = frame.attrs.get("conllu", {})
    groups = {}  # sent_id -> its rows' records, in the table's order
    for record in frame[list(FRAME_COLUMNS)].itertuples(index=False):
        groups.setdefault(record[0], []).append(record)
    sentences = []
    for sent_id, records in groups.items():
        words = []
        for _, _, _, word_id, *columns in records:
            head = columns[5]
            columns[5] = "_" if head is None or head != head else str(int(head))  # NA != NA
            words.append([str(word_id), *columns])
        kept = extra.get(sent_id)
        if kept is not None and kept["n_words"] == len(words):
            comments, others = kept["comments"], kept["rows"]
        else:
            comments = [f"# sent_id = {sent_id}"]
            others = [(int(token.partition("-")[0]) - 1, [token, form] + ["_"] * 8)
                      for token, form in dict.fromkeys((r[1], r[2]) for r in records)
                      if isinstance(token, str) and "-" in token]
        rows, others = [], list(others)
        for n_before, word in enumerate(words):
            while others and others[0][0] == n_before:
                rows.append(list(others.pop(0)[1]))
            rows.append(word)
        rows += [list(row) for _, row in others]
        sentences.append(ConlluSentence(list(comments), rows))
    # the writer checks IDs and fields, and the reader gives the lines numbers
    return read_conllu(io.StringIO(write_conllu(ConlluDocument(sentences))))


def _to_token_lists(document):
    """The sentences as ``conllu.TokenList`` objects, parsed by the conllu package
    from this document's CoNLL-U."""
    conllu = import_extra("conllu", "conllu")
    return conllu.parse(write_conllu(document))


def _from_token_lists(token_lists):
    """The document of ``conllu.TokenList`` objects, read from their CoNLL-U."""
    return read_conllu(io.StringIO("".join(tokens.serialize() for tokens in token_lists)))
