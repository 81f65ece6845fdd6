"""Our pipelines inside spaCy, as ``spacy-stanza`` and ``spacy-udpipe`` put theirs.

:func:`load_pipeline` gives a spaCy ``Language`` whose tokeniser runs a
fitted :class:`~sklearn_structured.TextPipeline` and fills each ``Doc``: its
tokens are our syntactic words (a multiword token's words, with no space
between them), with ``whitespace_``, sentence starts, ``pos_`` (UPOS),
``tag_`` (XPOS), ``morph`` (FEATS), ``lemma_``, ``head`` and ``dep_``
(DEPREL). White space other than one space after a word becomes a space
token, as spaCy's own tokeniser makes them (``pos_`` ``SPACE``), so that
``doc.text`` is the input text, with its line endings made ``\n``, unless a
multiword token's words spell it otherwise. ``nlp.pipe`` annotates its texts a batch at a time.

:func:`to_docs` and :func:`from_docs` convert CoNLL-U to ``Doc`` objects and
back. spaCy holds one tree of words per sentence, so what a ``Doc`` cannot
carry is lost on the way: multiword-token lines, empty nodes, DEPS, MISC
other than ``SpaceAfter=No`` and the comments (``# sent_id`` and
``# text`` are written anew).

spaCy is optional (``pip install sklearn-structured[spacy]``) and imported
only by these functions.
"""

import bisect
import io
import itertools

from ._parse import parse
from .datasets import ConlluDocument, ConlluSentence
from .pipeline import TextPipeline
from .tokenize._text import sentence_tokens
from .utils import load_model
from .utils._base import import_extra

# what spaCy's own tokeniser and parser give a token of white space
_SPACE = {"upos": "SPACE", "xpos": "_SP", "feats": "", "deprel": "dep"}


def _value(text):
    return "" if text == "_" else text


def _doc(vocab, words, gaps):
    """A Doc of ``words`` (dicts of form, lemma, upos, xpos, feats, head, deprel, the
    head an index into ``words`` or None for a root) with
    ``gaps[i]`` the white space after word i (``gaps[-1]``, one more, before the
    first word)."""
    from spacy.tokens import Doc

    tokens, index_of_word = [], []
    leading = gaps[-1]
    if leading:
        # attached to the first word, or to itself in a text of white space alone
        tokens.append({"form": leading, "lemma": leading, "space": "",
                       "attach": 0 if words else None, **_SPACE})
    for i, (word, gap) in enumerate(zip(words, gaps)):
        index_of_word.append(len(tokens))
        space, rest = ("", gap) if not gap.startswith(" ") else (" ", gap[1:])
        tokens.append({**word, "space": space})
        if rest:  # attached to the word before it, as spaCy's parser attaches them
            tokens.append({"form": rest, "lemma": rest, "space": "", "attach": i, **_SPACE})
    heads = []
    for position, token in enumerate(tokens):
        if "attach" in token:
            heads.append(position if token["attach"] is None else index_of_word[token["attach"]])
        else:
            head = token["head"]
            heads.append(position if head is None else index_of_word[head])
    def column(name):
        return [token[name] for token in tokens]

    return Doc(vocab, words=column("form"), spaces=[bool(t["space"]) for t in tokens],
               pos=[t["upos"] or None for t in tokens], tags=column("xpos"),
               morphs=column("feats"), lemmas=column("lemma"), heads=heads,
               deps=column("deprel"))


def _sentence_words(sentence, offset):
    """The words of a sentence as :func:`_doc` takes them, heads shifted by
    ``offset`` (the words of the sentences before it)."""
    words = []
    for row in sentence.words:
        head = int(row[6]) if row[6].isdigit() else 0
        words.append({"form": row[1], "lemma": _value(row[2]), "upos": _value(row[3]),
                      "xpos": _value(row[4]), "feats": _value(row[5]),
                      "head": None if head == 0 else offset + head - 1,
                      "deprel": _value(row[7])})
    return words


def _word_spaces(sentence):
    """Whether a space follows each word (a multiword token's words: only after its last)."""
    return [space and i == len(words) - 1
            for _, words, space in sentence_tokens(sentence) for i in range(len(words))]


def to_docs(document, vocab):
    """``Doc`` objects of a CoNLL-U document: one per document (its sentences in turn),
    built in ``vocab`` (``nlp.vocab``). Spaces come from ``SpaceAfter=No``."""
    import_extra("spacy", "spacy")
    if not isinstance(document, ConlluDocument):
        raise TypeError(f"to_docs takes a ConlluDocument, not a {type(document).__name__}")
    words, gaps = [], []
    for sentence in document:
        words += _sentence_words(sentence, len(words))
        gaps += [" " if space else "" for space in _word_spaces(sentence)]
    return [_doc(vocab, words, gaps + [""])]


def _ud_features(morph):
    """FEATS as UD orders them (by name, ignoring case; spaCy's order heeds it)."""
    features = str(morph)
    if not features:
        return "_"
    return "|".join(sorted(features.split("|"), key=lambda pair: pair.split("=")[0].lower()))


def from_docs(docs):
    """A CoNLL-U document of ``Doc`` objects: a sentence for each of their sentences,
    without their space tokens, ``SpaceAfter=No`` where a word has no whitespace."""
    sentences = []
    for doc in docs:
        for span in doc.sents:
            words = [token for token in span if not (token.is_space and token.pos_ == "SPACE")]
            number = {token.i: n for n, token in enumerate(words, start=1)}
            rows = []
            for token in words:
                followed = token.whitespace_ or (token.i + 1 < len(doc) and doc[token.i + 1].is_space)
                head = 0 if token.head.i == token.i else number[token.head.i]
                rows.append([str(number[token.i]), token.text, token.lemma_ or "_",
                             token.pos_ or "_", token.tag_ or "_", _ud_features(token.morph),
                             str(head), token.dep_ or "_", "_",
                             "_" if followed else "SpaceAfter=No"])
            if rows:
                comments = [f"# sent_id = {len(sentences) + 1}", f"# text = {span.text.strip()}"]
                sentences.append(ConlluSentence(comments, rows))
    return ConlluDocument(sentences)


class PipelineTokenizer:
    """A spaCy tokeniser that annotates with a fitted TextPipeline; see
    :func:`load_pipeline`."""

    def __init__(self, model, vocab, batch_size=64):
        self.model = model
        self.vocab = vocab
        self.batch_size = batch_size

    def __call__(self, text):
        [doc] = self._docs([text])
        return doc

    def pipe(self, texts, batch_size=None):
        """Docs of ``texts``, annotated ``batch_size`` texts at a time (one call of the
        pipeline each); a Doc among them is passed on as it is."""
        from spacy.tokens import Doc

        texts = iter(texts)
        while batch := list(itertools.islice(texts, batch_size or self.batch_size)):
            docs = iter(self._docs([text for text in batch if not isinstance(text, Doc)]))
            yield from (text if isinstance(text, Doc) else next(docs) for text in batch)

    def _docs(self, texts):
        # the texts of a batch as paragraphs of one input: a sentence never runs over a
        # blank line, and each token's range tells which text it is in
        starts, parts, position = [], [], 0
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"spaCy's input is text, not a {type(text).__name__}")
            normal = text.replace("\r\n", "\n").replace("\r", "\n")  # as parse counts
            starts.append(position)
            parts.append(normal)
            position += len(normal) + 2
        joined = "\n\n".join(parts)
        document = parse(self.model, io.StringIO(joined), input_format="text", token_ranges=True) \
            if joined.strip() else ConlluDocument()
        per_text = [[] for _ in texts]
        for sentence in document:
            ranges = _ranges(sentence)
            per_text[bisect.bisect_right(starts, ranges[0][0]) - 1].append((sentence, ranges))
        return [self._doc_of(text, start, sentences)
                for text, start, sentences in zip(parts, starts, per_text)]

    def _doc_of(self, text, start, sentences):
        """The Doc of one text from its ``(sentence, word ranges)`` pairs."""
        words, ends, begins = [], [], []
        for sentence, ranges in sentences:
            words += _sentence_words(sentence, len(words))
            for begin, end in ranges:
                begins.append(begin - start)
                ends.append(end - start)
        gaps = [text[end:next_begin] for end, next_begin in zip(ends, begins[1:] + [len(text)])]
        return _doc(self.vocab, words, gaps + [text[:begins[0]] if begins else text])


def _ranges(sentence):
    """The character range of each word's token (its TokenRange, which parse writes
    into the MISC of every word)."""
    ranges = []
    for row in sentence.words:
        misc = dict(item.split("=", 1) for item in row[9].split("|") if "=" in item)
        begin, end = misc["TokenRange"].split(":")
        ranges.append((int(begin), int(end)))
    return ranges


def load_pipeline(model, lang="xx", *, batch_size=64):
    """A spaCy ``Language`` that annotates text with one of our pipelines.

    Parameters
    ----------
    model : TextPipeline or path
        A fitted pipeline with a tokeniser, or a model file written by
        ``sklearn-structured train --estimator pipeline``.
    lang : str, default="xx"
        spaCy's language code, for its lexical attributes (``is_stop``, ...);
        ``"xx"`` is spaCy's multi-language class.
    batch_size : int, default=64
        Texts that ``nlp.pipe`` annotates at once.

    Returns
    -------
    spacy.language.Language
        ``nlp(text)`` and ``nlp.pipe(texts)`` give annotated Docs; components
        added to it (``nlp.add_pipe``) run after ours.
    """
    spacy = import_extra("spacy", "spacy")
    if not isinstance(model, TextPipeline):
        model = load_model(model)
        if not isinstance(model, TextPipeline):
            raise ValueError(f"a {type(model).__name__} does not read text: give a "
                             "TextPipeline (sklearn-structured train --estimator pipeline)")
    base = spacy.util.get_lang_class(lang)

    class Language(base):
        def pipe(self, texts, *, as_tuples=False, batch_size=None, **options):
            size = batch_size or self.tokenizer.batch_size
            if not as_tuples:
                return super().pipe(self.tokenizer.pipe(texts, size), batch_size=batch_size,
                                    **options)
            pairs = iter(texts)

            def docs_with_contexts():
                while batch := list(itertools.islice(pairs, size)):
                    docs = self.tokenizer.pipe([text for text, _ in batch], size)
                    yield from zip(docs, [context for _, context in batch])

            return super().pipe(docs_with_contexts(), as_tuples=True, batch_size=batch_size,
                                **options)

    Language.__name__ = Language.__qualname__ = f"{base.__name__}WithSklearnStructured"
    nlp = Language()
    nlp.tokenizer = PipelineTokenizer(model, nlp.vocab, batch_size)
    return nlp
