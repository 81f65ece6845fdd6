"""Raw text and its segmentation, read from CoNLL-U documents.

A treebank gives each sentence's text in ``# text`` and tells, by
``SpaceAfter=No`` in MISC, where a token is glued to the next one. A document
is turned back into running text the way the UD guidelines describe it:
paragraphs (``# newpar``, ``# newdoc``) are separated by a blank line, and the
sentences of a paragraph by one space, or by nothing where the last token of
a sentence has ``SpaceAfter=No``. A sentence without ``# text`` is rebuilt
from its FORMs and ``SpaceAfter`` (as the guidelines allow), and so is one
whose ``# text`` does not spell its tokens. Where such a sentence records no
``SpaceAfter=No`` at all, as older releases of Chinese and Japanese treebanks
do, a space is only put between tokens when neither side is a character of
the scripts written without spaces (Han, kana, their punctuation and
full-width forms): in the treebanks that do record spacing, no token
boundary touching such a character has a space.
"""

from typing import NamedTuple

PARAGRAPH_BREAK = "\n\n"
# characters of raw text read and tokenised at once (the tokeniser's arrays
# take about 100 bytes a character)
TEXT_CHUNK = 2**16
# a paragraph longer than this is cut at a line end, so that a text without
# blank lines is still read a bounded piece at a time
TEXT_CHUNK_MAX = 2**18
# tokens: longer predicted sentences are cut, as no treebank sentence of note is
# longer and a parser's time grows faster than a sentence's length
MAX_SENTENCE_LENGTH = 250


class Token(NamedTuple):
    """One token of raw text: its characters ``text[start:end]``, and its words.

    ``words`` holds the syntactic words of a multiword token (``"do"`` ->
    ``("de", "o")``); a plain token is one word, its form.
    """

    form: str
    start: int
    end: int
    words: tuple


class SegmentedText(NamedTuple):
    """A document's running text with its gold segmentation."""

    text: str
    sentences: list
    """Per sentence, its tokens (:class:`Token`, offsets into ``text``)."""
    rebuilt: int
    """How many sentences had their text rebuilt from FORM and SpaceAfter."""


def _space_after(row):
    return "SpaceAfter=No" not in row[9].split("|")


def sentence_tokens(sentence):
    """``(form, words, space_after)`` for each token of a ConlluSentence, in order."""
    tokens, rows, i = [], sentence.rows, 0
    while i < len(rows):
        row = rows[i]
        if "." in row[0]:
            i += 1
        elif "-" in row[0]:
            first, last = (int(part) for part in row[0].split("-"))
            words = tuple(r[1] for r in rows[i + 1:] if r[0].isdigit())[: last - first + 1]
            tokens.append((row[1], words, _space_after(row)))
            i += 1
            # past its words (and empty nodes among them), up to the next token
            while i < len(rows) and ("." in rows[i][0]
                                     or rows[i][0].isdigit() and int(rows[i][0]) <= last):
                i += 1
        else:
            tokens.append((row[1], (row[1],), _space_after(row)))
            i += 1
    return tokens


# Han (with its extensions and compatibility forms), kana, CJK symbols and punctuation,
# full-width and half-width forms
_UNSPACED_RANGES = ((0x3000, 0x30FF), (0x31F0, 0x31FF), (0x3300, 0x4DBF), (0x4E00, 0x9FFF),
                    (0xF900, 0xFAFF), (0xFF00, 0xFFEF), (0x20000, 0x3FFFF))


def _unspaced(char):
    """Whether ``char`` belongs to a script written without spaces between words."""
    point = ord(char)
    return any(low <= point <= high for low, high in _UNSPACED_RANGES)


def _records_spacing(tokens):
    return not all(space for _, _, space in tokens[:-1])


def _rebuilt(tokens):
    guess = not _records_spacing(tokens)
    pieces = []
    for (form, _, space), following in zip(tokens, [*tokens[1:], None]):
        if following is not None and space and guess:
            space = not (_unspaced(form[-1]) or _unspaced(following[0][0]))
        pieces.append(form + (" " if space else ""))
    return "".join(pieces).rstrip(" ")


def _token_offsets(text, tokens):
    """Where each token's form stands in ``text``, or None if the text does not spell them."""
    offsets, position = [], 0
    for form, _, _ in tokens:
        while position < len(text) and text[position].isspace():
            position += 1
        if not text.startswith(form, position):
            return None
        offsets.append(position)
        position += len(form)
    if text[position:].strip():
        return None
    return offsets


def segmented_text(document):
    """The running text of a ConlluDocument and its gold tokens and sentences.

    Raises
    ------
    ValueError
        Naming the file and line, when a sentence has no token with a
        non-empty FORM, or has no ``# text`` and ``_`` as every FORM (no
        text to learn from).
    """
    pieces, sentences, length, rebuilt = [], [], 0, 0
    glue = ""  # what joins the next sentence to the text so far
    guessed = False  # whether the last sentence's spacing was guessed (see _rebuilt)
    for index, sentence in enumerate(document):
        metadata = sentence.metadata
        tokens = sentence_tokens(sentence)
        where = f"{document.source or 'document'}:{sentence.line or index + 1}"
        if not any(form.strip() for form, _, _ in tokens):
            raise ValueError(f"{where}: a sentence without any FORM, so no text to learn from")
        text = metadata.get("text")
        if text is None and all(form == "_" for form, _, _ in tokens):
            # treebanks whose text is withheld for copyright write every FORM as _
            raise ValueError(f"{where}: no '# text' and every FORM is '_', so the text cannot "
                             "be rebuilt (a treebank whose text is withheld?)")
        comment_keys = {c[1:].strip().split(" ", 1)[0].split("=", 1)[0] for c in sentence.comments}
        if sentences and ({"newpar", "newdoc"} & comment_keys):
            glue = PARAGRAPH_BREAK
        offsets = None if text is None else _token_offsets(text, tokens)
        if offsets is None:
            rebuilt += 1
            text = _rebuilt(tokens)
            offsets = _token_offsets(text, tokens)
            if glue == " " and guessed and (_unspaced(pieces[-1][-1]) or _unspaced(text[0])):
                glue = ""
            guessed = not _records_spacing(tokens)
        else:
            guessed = False
        if sentences:
            pieces.append(glue)
            length += len(glue)
        start = length
        pieces.append(text)
        length += len(text)
        sentences.append([
            Token(form, start + offset, start + offset + len(form), words)
            for (form, words, _), offset in zip(tokens, offsets)
        ])
        glue = " " if tokens[-1][2] else ""
    return SegmentedText("".join(pieces), sentences, rebuilt)
