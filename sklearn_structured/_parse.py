"""``parse``: CoNLL-U or raw text in, annotated CoNLL-U out, a chunk at a time.

The input is read, annotated and written in chunks (``CONLLU_CHUNK``
sentences of CoNLL-U, or paragraphs of raw text of about
:data:`~sklearn_structured.tokenize._reader.TEXT_CHUNK` characters), so that
memory does not grow with its length. Each chunk is annotated in memory by
:mod:`sklearn_structured.annotation`.
"""

import os

from .annotation import as_annotator
from .datasets import ConlluDocument, write_conllu
from .datasets._base import open_text, source_name
from .datasets._conllu import read_conllu_batches
from .datasets._input_format import check_input_format
from .pipeline import TextPipeline
from .tokenize._reader import TextReader, text_documents
from .tokenize._text import MAX_SENTENCE_LENGTH
from .utils import atomic_path

CONLLU_CHUNK = 1000


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
        See :mod:`sklearn_structured.annotation`.
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
    annotator, chunks = input_chunks(
        model, document, input_format=input_format, presegmented=presegmented,
        token_ranges=token_ranges, expand_multiword=expand_multiword,
        max_sentence_length=max_sentence_length, sent_id_prefix=sent_id_prefix)
    annotated = _annotated_chunks(annotator, chunks)
    if output is None:
        return joined(annotated, document)
    if isinstance(output, (str, os.PathLike)):
        with atomic_path(output) as temporary:
            return _write(annotated, temporary, document)
    return _write(annotated, output, document)


def input_chunks(model, document, *, input_format="conllu", presegmented=False,
                 token_ranges=False, expand_multiword=None,
                 max_sentence_length=MAX_SENTENCE_LENGTH, sent_id_prefix=""):
    """``(annotator, chunks)``: ``model`` as an annotator and :func:`parse`'s input as
    a lazy sequence of ConlluDocuments, the options checked as ``parse`` does."""
    annotator = as_annotator(model)
    check_input_format(document, input_format)
    if input_format == "text":
        if not isinstance(model, TextPipeline):
            raise ValueError(f"a {type(model).__name__} has no tokeniser to read raw text: give "
                             "a TextPipeline (sklearn-structured train --estimator pipeline)")
        return annotator, text_documents(
            model.tokenizer_, TextReader(document), presegmented=presegmented,
            token_ranges=token_ranges, expand_multiword=expand_multiword,
            max_sentence_length=max_sentence_length, sent_id_prefix=sent_id_prefix)
    if input_format != "conllu":
        raise ValueError(f"input_format must be 'conllu' or 'text', got {input_format!r}")
    if presegmented or token_ranges or expand_multiword is not None or sent_id_prefix:
        raise ValueError("presegmented, token_ranges, expand_multiword and sent_id_prefix "
                         "apply to input_format='text' only")
    if isinstance(document, ConlluDocument):
        return annotator, (document[i:i + CONLLU_CHUNK]
                           for i in range(0, len(document), CONLLU_CHUNK))
    return annotator, read_conllu_batches(document, CONLLU_CHUNK)


def joined(chunks, document):
    """The ConlluDocuments ``chunks`` of the input ``document`` as one document (with
    the first chunk's source and line ending); refuses an input without sentences."""
    sentences, first = [], None
    for chunk in chunks:
        first = first or chunk
        sentences += chunk.sentences
    _check_not_empty(first, document)
    return ConlluDocument(sentences, source=first.source, newline=first.newline)


def _check_not_empty(first_chunk, document):
    if first_chunk is None:
        name = document.source if isinstance(document, ConlluDocument) else source_name(document)
        raise ValueError(f"{name or 'the document'} holds no sentences")


def _write(chunks, file, document):
    """Write the chunks one after the other, flushing each; the number of sentences."""
    n_sentences, first = 0, None
    with open_text(file, "w") as text:
        for chunk in chunks:
            first = first or chunk
            write_conllu(chunk, text)
            text.flush()
            n_sentences += len(chunk)
    _check_not_empty(first, document)
    return n_sentences


def _annotated_chunks(annotator, chunks):
    """Annotate each ConlluDocument of ``chunks`` (the sentences before it counted, for
    the place named in an error)."""
    done = 0
    for chunk in chunks:
        yield annotator._annotated(chunk, done)
        done += len(chunk)
