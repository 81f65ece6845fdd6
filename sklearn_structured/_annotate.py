"""``parse``: CoNLL-U or raw text in, annotated CoNLL-U out, a chunk at a time.

The input is read, annotated and written in chunks (``CONLLU_CHUNK``
sentences of CoNLL-U, or paragraphs of raw text of about ``TEXT_CHUNK``
characters),
so that memory does not grow with its length. This module imports the
pipeline module only inside its functions: ``TextPipeline.predict`` imports
``parse`` from here.
"""

import codecs
import contextlib
import os
import re
from numbers import Integral

from . import registry

# characters of raw text read and tokenised at once (the tokeniser's arrays
# take about 100 bytes a character)
TEXT_CHUNK = 2**16
# a paragraph longer than this is cut at a line end, so that a text without
# blank lines is still read a bounded piece at a time
TEXT_CHUNK_MAX = 2**18
CONLLU_CHUNK = 1000
# tokens: longer predicted sentences are cut, as no treebank sentence of note is
# longer and a parser's time grows faster than a sentence's length
MAX_SENTENCE_LENGTH = 250
# a blank line: a line break, white space other than line breaks, a line break
_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")


def parse(model, document, *, input_format="conllu", output=None, presegmented=False,
          token_ranges=False, expand_multiword=None, max_sentence_length=MAX_SENTENCE_LENGTH,
          sent_id_prefix=""):
    """Annotate a CoNLL-U document or raw text with a fitted parser, tagger or pipeline.

    Parameters
    ----------
    model : estimator
        A parser (writes HEAD and DEPREL: its labels if it learned them,
        ``_`` otherwise, and ``_`` in DEPS; never the input's), a tagger
        (writes its ``target`` column) or a parsing pipeline (writes the
        columns of its taggers, clears the other tag columns, and parses).
        See :mod:`sklearn_structured.registry`.
    document : str, path-like, file object or ConlluDocument
        The input (a path or a file object); every other column and line of
        a CoNLL-U input is kept.
    input_format : {"conllu", "text"}, default="conllu"
        ``"text"``: raw UTF-8 text, split into sentences, tokens and words by
        the tokeniser of a :class:`TextPipeline` (see :ref:`raw_text`).
        Paragraphs are separated by blank lines; LF, CRLF and CR line
        endings may be mixed.
    output : str, path-like, file object or None, default=None
        Where to write the annotated CoNLL-U, chunk by chunk as it is done
        (a path is written to a temporary file that replaces it only when
        the whole input is done). None: nothing is written, and the whole
        annotated document is returned.
    presegmented : bool, default=False
        Text only: each line is one sentence; it is split into tokens but
        never into several sentences.
    token_ranges : bool, default=False
        Text only: add ``TokenRange=start:end`` (UDPipe's convention) to the
        MISC of every token and of every word of a multiword token (the
        range of its token): offsets into the whole input, in characters,
        end excluded, after a byte-order mark, with every line ending
        (CRLF too) counted as one character.
    expand_multiword : bool or None, default=None
        Text only: False keeps every token one word (no multiword-token
        ranges); None does as the tokeniser was fitted to.
    max_sentence_length : int, default=250
        Text only: a predicted sentence of more tokens is cut into pieces of
        at most this many before it is tagged and parsed, so that a long
        line without sentence-final punctuation costs linear time.
    sent_id_prefix : str, default=""
        Text only: ``# sent_id`` is this prefix and the sentence's number,
        counted from 1 over the whole input.

    Returns
    -------
    ConlluDocument or int
        The annotated document when ``output`` is None; otherwise the number
        of sentences written (the document is not kept in memory).

    Raises
    ------
    ValueError
        For a model of another kind, an empty input, raw text that is not
        UTF-8, binary or only white space (naming the line and byte
        offset), a malformed CoNLL-U line (naming it), and (a parser alone)
        a sentence without any of the tags the parser reads, naming its
        lines. A file ``output`` is then not written.
    """
    from .datasets import ConlluDocument
    from .datasets._input_format import check_input_format

    kind = registry.kind_of(model)
    if kind is None:
        raise ValueError(f"a {type(model).__name__} cannot annotate CoNLL-U: give a parser, a "
                         "tagger or a parsing pipeline (make_parsing_pipeline)")
    check_input_format(document, input_format)
    if input_format == "text":
        chunks = _tokenized(model, document, presegmented=presegmented,
                            token_ranges=token_ranges, expand_multiword=expand_multiword,
                            max_sentence_length=max_sentence_length,
                            sent_id_prefix=sent_id_prefix)
    elif input_format != "conllu":
        raise ValueError(f"input_format must be 'conllu' or 'text', got {input_format!r}")
    elif presegmented or token_ranges or expand_multiword is not None or sent_id_prefix:
        raise ValueError("presegmented, token_ranges, expand_multiword and sent_id_prefix "
                         "apply to input_format='text' only")
    elif isinstance(document, ConlluDocument):
        chunks = (document[i:i + CONLLU_CHUNK] for i in range(0, len(document), CONLLU_CHUNK))
    else:
        from .datasets._conllu import read_conllu_batches

        chunks = read_conllu_batches(document, CONLLU_CHUNK)
    annotated = _annotated_chunks(model, kind, chunks)
    if output is None:
        sentences, first = [], None
        for chunk in annotated:
            first = first or chunk
            sentences += chunk.sentences
        _check_not_empty(first, document)
        return ConlluDocument(sentences, source=first.source, newline=first.newline)
    if isinstance(output, (str, os.PathLike)):
        from .datasets._base import open_text
        from .utils import atomic_path

        with atomic_path(output) as temporary, open_text(temporary, "w") as file:
            return _write(annotated, file, document)
    return _write(annotated, output, document)


def _check_not_empty(first_chunk, document):
    if first_chunk is None:
        from .datasets import ConlluDocument
        from .datasets._base import source_name

        name = document.source if isinstance(document, ConlluDocument) else source_name(document)
        raise ValueError(f"{name or 'the document'} holds no sentences")


def _write(chunks, file, document):
    """Write the chunks one after the other, flushing each; the number of sentences."""
    from .datasets import write_conllu
    from .datasets._base import open_text

    n_sentences, first = 0, None
    with open_text(file, "w") as text:
        for chunk in chunks:
            first = first or chunk
            write_conllu(chunk, text)
            text.flush()
            n_sentences += len(chunk)
    _check_not_empty(first, document)
    return n_sentences


def _annotated_chunks(model, kind, chunks):
    """Annotate each ConlluDocument of ``chunks`` (the sentences before it counted, for
    the place named in an error)."""
    done = 0
    for chunk in chunks:
        yield _annotated(model, kind, chunk, done)
        done += len(chunk)


def _annotated(model, kind, document, done):
    from .datasets._base import gc_paused
    from .datasets._conllu import _TAG_COLUMNS, _where
    from .pipeline import annotate, pipeline_targets
    from .utils._sentences import check_token_fields

    # a few small containers per word and no reference cycles of note: with the
    # model's and the document's objects alive, the collector's full scans would
    # otherwise cost a tenth of the run
    with gc_paused():
        X = document.to_sentences()
        if kind == registry.TAGGER:
            return document.with_tags(model.predict(X), model.target)
        if kind == registry.PIPELINE:
            targets = pipeline_targets(model)
            tagged, predicted = annotate(model, X)
            # the pipeline reads only the forms: the tag columns it does not
            # predict are cleared, not copied from the input
            document = document.with_tag_columns({
                field: [[token.get(field) if field in targets else None for token in sentence]
                        for sentence in tagged] for field in _TAG_COLUMNS})
        else:
            def where(index, row=None):
                return _where(document.source, done + index, document[index], row)

            check_token_fields(X, model.tag_fields(), reader=type(model).__name__, where=where)
            predicted = model.predict(X)
        if predicted and isinstance(predicted[0], tuple):
            heads, deprels = [h for h, _ in predicted], [d for _, d in predicted]
        else:
            heads, deprels = predicted, [[None] * len(h) for h in predicted]
        return document.with_heads(heads, deprels, clear_deps=True)


def _tokenized(model, source, *, presegmented=False, token_ranges=False, expand_multiword=None,
               max_sentence_length=MAX_SENTENCE_LENGTH, sent_id_prefix=""):
    """ConlluDocuments of raw text (a path or a file object) split by the tokeniser of a
    TextPipeline, a group of paragraphs each, their words not yet annotated."""
    from .pipeline import TextPipeline
    from .tokenize import to_document

    if not isinstance(model, TextPipeline):
        raise ValueError(f"a {type(model).__name__} has no tokeniser to read raw text: give a "
                         "TextPipeline (sklearn-structured train --estimator pipeline)")
    if not (isinstance(max_sentence_length, Integral) and max_sentence_length >= 1):
        raise ValueError(f"max_sentence_length must be a positive int, got {max_sentence_length!r}")
    tokenizer = model.tokenizer_
    if expand_multiword is not None and expand_multiword != tokenizer.expand_multiword:
        from copy import copy

        tokenizer = copy(tokenizer).set_params(expand_multiword=expand_multiword)
    n_sentences = 0
    reader = _TextReader(source)
    for start, text in reader.chunks():
        [sentences] = tokenizer.predict([text], presegmented=presegmented)
        sentences = [sentence[i:i + max_sentence_length] for sentence in sentences
                     for i in range(0, len(sentence), max_sentence_length)]
        if sentences:
            yield to_document(text, sentences, sent_id_prefix=sent_id_prefix,
                              first_id=n_sentences + 1, start=start, newdoc=not n_sentences,
                              token_ranges=token_ranges)
        n_sentences += len(sentences)
    if not n_sentences:
        reader.no_text()


class _TextReader:
    """Raw text from a path or a file object, decoded as UTF-8 block by block.

    Line endings (LF, CRLF, CR) become ``\\n`` and a byte-order mark at the
    start is dropped. A NUL or a byte that is not UTF-8 is a ValueError
    naming the line and the byte offset.
    """

    def __init__(self, source):
        from .datasets._base import source_name

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

    def _blocks(self):
        """The text, a block of about TEXT_CHUNK characters at a time."""
        pending_cr, first = "", True
        with self._open() as file:
            while True:
                data = file.read(TEXT_CHUNK)
                text = pending_cr + self._decoded(data, final=not data)
                if first and text.startswith("\ufeff"):
                    text = text[1:]
                first = False
                # a CR at the end of a block may be the first half of a CRLF
                pending_cr = "\r" if data and text.endswith("\r") else ""
                text = text[:len(text) - len(pending_cr)]
                if text:
                    yield text.replace("\r\n", "\n").replace("\r", "\n")
                if not data:
                    return

    def chunks(self):
        """``(start, text)``: the text in pieces that end where a paragraph does, ``start``
        the offset of each in characters; a piece begins with the blank line before it."""
        buffer, start = "", 0
        for block in self._blocks():
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
    none, after its last line break, else at its last white space, else at its end.
    0 for no cut. The white space ``text`` begins with (the blank line before its
    first paragraph) is no place to cut."""
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
