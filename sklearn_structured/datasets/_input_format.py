"""Telling CoNLL-U from raw text by the first lines of an input.

Read with the wrong format, either one gives no error of note: raw text read
as CoNLL-U fails on its first line with a message about columns, and
CoNLL-U read as raw text is tokenised into sentences such as ``# text = #
newdoc # sent_id = 3651``. :func:`check_input_format` looks at the beginning
of the input, without consuming it, and refuses it with a hint that names the
right format.
"""

import io
import lzma
import os
import re

from ._base import open_text, source_name

# the characters read to decide: enough for the comments and first words of a sentence
_HEAD = 2**16
# the ID of a word, a multiword range or an empty node, then a tab: how a word line begins
_ID = r"(\d+|\d+-\d+|\d+\.\d+)\t"
# a whole word line: the ID and nine more columns
_WORD_LINE = re.compile(_ID + r"[^\t\n]*(\t[^\t\n]*){8}\r?")


def _head(source):
    """``(text, whole)``: the first characters of ``source`` (a path or a file object),
    leaving a file object where it was, and whether they are the whole input; None
    when they cannot be read so (the reader then reports why)."""
    try:
        if isinstance(source, (str, os.PathLike)):
            with open_text(source) as file:
                text = file.read(_HEAD)
            return text, len(text) < _HEAD
        if hasattr(source, "peek"):  # a buffered binary stream, standard input's too
            # what the stream holds so far: maybe not up to the end of a line
            data, whole = source.peek(_HEAD)[:_HEAD], False
        elif source.seekable():
            position = source.tell()
            data = source.read(_HEAD)
            source.seek(position)
            whole = len(data) < _HEAD
        else:
            return None
    except (OSError, ValueError, EOFError, lzma.LZMAError, AttributeError):
        return None
    if isinstance(data, bytes):
        data = data.decode("utf-8", errors="replace")
    return data, whole


def check_input_format(source, input_format):
    """Refuse CoNLL-U given as raw text (``input_format="text"``), and raw text given
    as CoNLL-U, with a ValueError naming the line that tells and the right format.

    ``source`` is what :func:`~sklearn_structured.parse` reads: a path or a file
    object (a document read already, or an input that cannot be looked at ahead
    without consuming it, is let through).
    """
    head = _head(source) if isinstance(source, (str, os.PathLike, io.IOBase)) else None
    if head is None:
        return
    text, whole = head
    lines = text.lstrip("\ufeff").split("\n")
    if not whole:
        lines.pop()  # maybe cut short
    name = source_name(source)
    for number, line in enumerate(lines, start=1):
        # CoNLL-U begins with comments and blank lines, then a word line
        if not line.strip() or line.startswith("#"):
            continue
        if input_format == "text" and _WORD_LINE.fullmatch(line):
            raise ValueError(
                f"{name}:{number} is a CoNLL-U word line (ten tab-separated columns): the "
                "input is CoNLL-U, not raw text; read it as CoNLL-U (input_format='conllu', "
                "the command line's default: drop --input-format text)")
        if input_format == "conllu" and not re.match(_ID, line):
            raise ValueError(
                f"{name}:{number} is neither a comment nor a word line: the input looks like raw "
                "text, not CoNLL-U; to tokenise it with a text pipeline, pass "
                "input_format='text' (--input-format text)")
        return
