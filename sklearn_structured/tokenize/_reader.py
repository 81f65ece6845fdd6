"""Raw text read a bounded piece at a time and split into CoNLL-U documents.

A text (a ``str``, a path or a file object) is cut where a paragraph ends
into pieces of about ``TEXT_CHUNK`` characters, so that the tokeniser's
arrays (about 100 bytes a character) do not grow with the input; each piece
becomes one :class:`~sklearn_structured.datasets.ConlluDocument` of
sentences whose words are not yet annotated.
"""

import codecs
import contextlib
import os
import re
from copy import copy
from numbers import Integral

from ..datasets._base import source_name
from ..datasets import ConlluDocument, ConlluSentence
from ._text import MAX_SENTENCE_LENGTH, TEXT_CHUNK, TEXT_CHUNK_MAX
from ._tokenizer import to_document

# a blank line: a line break, white space other than line breaks, a line break
_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")
_GLUED = "SpaceAfter=No"


class TextReader:
    """Raw text from a path or a file object, decoded as UTF-8 block by block.

    Line endings (LF, CRLF, CR) become ``\\n`` and a byte-order mark at the
    start is dropped. A NUL or a byte that is not UTF-8 is a ValueError
    naming the line and the byte offset.
    """

    def __init__(self, source):
        self.source, self.name = source, source_name(source)
        self.n_bytes = 0  # bytes decoded so far
        self.n_lines = 0  # LF bytes among them
        self.decoder = codecs.getincrementaldecoder("utf-8")()

    def _open(self):
        if isinstance(self.source, (str, os.PathLike)):
            if os.path.isdir(self.source):
                raise ValueError(f"{self.name} is a directory, not a text file")
            return open(self.source, "rb")
        return contextlib.nullcontext(self.source)  # the caller's file stays open

    def _decoded(self, data, final):
        """``data`` (bytes, or str from a text file object) as text."""
        if isinstance(data, str):
            self.n_bytes += len(data.encode("utf-8"))
            self.n_lines += data.count("\n")
            return data
        nul = data.find(b"\0")
        if nul >= 0:  # no text has one; most binary files have many
            self._fail(data[:nul].count(b"\n"),
                       f"a NUL byte at byte offset {self.n_bytes + nul}: a binary file, not text")
        try:
            text = self.decoder.decode(data, final=final)
        except UnicodeDecodeError as error:
            # the decoder may still hold the first bytes of a character from the block before
            offset = self.n_bytes - (len(error.object) - len(data)) + error.start
            bad = error.object[error.start:error.start + 1].hex()
            self._fail(error.object[:error.start].count(b"\n"),
                       f"not UTF-8 (byte 0x{bad} at byte offset {offset})")
        self.n_bytes += len(data)
        self.n_lines += data.count(b"\n")
        return text

    def _fail(self, lines_before, message):
        raise ValueError(f"{self.name}:{self.n_lines + lines_before + 1}: {message}")

    def no_text(self):
        """Raise the error of an input without any token."""
        if self.n_bytes == 0:
            raise ValueError(f"{self.name} is empty: no text to parse")
        raise ValueError(f"{self.name} holds only white space ({self.n_bytes} bytes, "
                         f"{self.n_lines} line breaks): no text to parse")

    def pieces(self):
        """``(text, final)``: the decoded text, a read of TEXT_CHUNK at a time."""
        with self._open() as file:
            while True:
                data = file.read(TEXT_CHUNK)
                yield self._decoded(data, final=not data), not data
                if not data:
                    return


def _string_pieces(text):
    """:meth:`TextReader.pieces` of a str."""
    for start in range(0, len(text), TEXT_CHUNK):
        yield text[start:start + TEXT_CHUNK], False
    yield "", True


def _blocks(pieces):
    """The text of ``pieces`` without a leading byte-order mark, every line ending ``\\n``."""
    pending_cr, first = "", True
    for piece, final in pieces:
        text = pending_cr + piece
        if first and text.startswith("\ufeff"):
            text = text[1:]
        first = False
        # a CR at the end of a block may be the first half of a CRLF
        pending_cr = "\r" if not final and text.endswith("\r") else ""
        text = text[:len(text) - len(pending_cr)]
        if text:
            yield text.replace("\r\n", "\n").replace("\r", "\n")


def _chunks(blocks):
    """``(start, text)``: the text in pieces that end where a paragraph does, ``start``
    the offset of each in characters; a piece begins with the blank line before it."""
    buffer, start = "", 0
    for block in blocks:
        buffer += block
        if len(buffer) < TEXT_CHUNK:
            continue
        cut = _last_cut(buffer, len(buffer) >= TEXT_CHUNK_MAX)
        if cut:
            yield start, buffer[:cut]
            start += cut
            buffer = buffer[cut:]
    if buffer:
        yield start, buffer


def _last_cut(text, forced):
    """Where to cut ``text``: before its last blank line; when ``forced`` and it has
    none, after its last line break, else at its last white space, else at its end
    (inside a token, then). 0 for no cut. The white space ``text`` begins with (the
    blank line before its first paragraph) is no place to cut."""
    begin = len(text) - len(text.lstrip())
    last = None
    for last in _PARAGRAPH_BREAK.finditer(text, begin):
        pass
    if last is not None:
        return last.start()
    if not forced:
        return 0
    line_end = text.rfind("\n", begin)
    if line_end >= 0:
        return line_end + 1
    space = max(text.rfind(" ", begin), text.rfind("\t", begin))
    return space + 1 if space >= 0 else len(text)


def text_documents(tokenizer, source, *, presegmented=False, token_ranges=False,
                   expand_multiword=None, max_sentence_length=MAX_SENTENCE_LENGTH,
                   sent_id_prefix=""):
    """ConlluDocuments of raw text split by a fitted ``tokenizer``, a group of
    paragraphs each, their words not yet annotated.

    ``source`` is a str (the text itself) or a :class:`TextReader` (of a path
    or a file object); a text without any token gives no document. A token cut where the input is read
    a piece at a time (one longer than ``TEXT_CHUNK_MAX`` characters) ends
    its document with ``SpaceAfter=No``, so that the output spells the input.
    See :func:`sklearn_structured.parse` for the other parameters.

    Raises
    ------
    ValueError
        From a reader, for an input without any token, naming it, and for
        a file that is not UTF-8 text, naming the line and byte.
    """
    if not (isinstance(max_sentence_length, Integral) and max_sentence_length >= 1):
        raise ValueError(f"max_sentence_length must be a positive int, got {max_sentence_length!r}")
    if expand_multiword is not None and expand_multiword != tokenizer.expand_multiword:
        tokenizer = copy(tokenizer).set_params(expand_multiword=expand_multiword)
    reader = source if isinstance(source, TextReader) else None
    pieces = _string_pieces(source) if reader is None else reader.pieces()
    n_sentences, held, previous = 0, None, ""
    for start, text in _chunks(_blocks(pieces)):
        glued, previous = _cut_in_token(previous, text), text
        [sentences] = tokenizer.predict([text], presegmented=presegmented)
        sentences = [sentence[i:i + max_sentence_length] for sentence in sentences
                     for i in range(0, len(sentence), max_sentence_length)]
        if not sentences:
            continue
        if held is not None:
            # each document is held until it is known whether the next one continues its
            # last token
            yield _glued(held) if glued else held
        held = to_document(text, sentences, sent_id_prefix=sent_id_prefix,
                           first_id=n_sentences + 1, start=start, newdoc=not n_sentences,
                           token_ranges=token_ranges)
        n_sentences += len(sentences)
    if held is not None:
        yield held
    elif reader is not None:
        reader.no_text()


def _cut_in_token(before, after):
    """Whether the text ``before`` ends inside a token that ``after`` goes on with."""
    return bool(before) and not before[-1].isspace() and not after[0].isspace()


def _glued(document):
    """``document`` with ``SpaceAfter=No`` on its last token."""
    *sentences, last = document.sentences
    rows = [list(row) for row in last.rows]
    token_row, covered = None, 0  # the last token's row; the last word id of a range
    for row in rows:
        if "-" in row[0]:
            token_row, covered = row, int(row[0].split("-")[1])
        elif "." not in row[0] and int(row[0]) > covered:
            token_row = row
    misc = token_row[-1]
    token_row[-1] = _GLUED if misc == "_" else f"{_GLUED}|{misc}"
    return ConlluDocument([*sentences, ConlluSentence(last.comments, rows)],
                          source=document.source, newline=document.newline)
