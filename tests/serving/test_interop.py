"""Our documents in other tools: spaCy Docs (from a pipeline and from CoNLL-U),
pandas tables and ``conllu.TokenList`` objects, and back."""

import io

import pytest

from sklearn_structured.datasets import (ConlluDocument, load_sample_treebank, read_conllu,
                                         write_conllu)

from _serving import sample_model_path


@pytest.fixture(scope="module")
def treebank():
    return load_sample_treebank("train", as_document=True)


@pytest.fixture(scope="module")
def nlp():
    from sklearn_structured.spacy_bridge import load_pipeline

    return load_pipeline(sample_model_path(), "en")


def _text():
    from sklearn_structured.tokenize import segmented_text

    return segmented_text(load_sample_treebank("test", as_document=True)).text


def _annotations(document):
    """Every word's form, UPOS, XPOS, FEATS, lemma, head and DEPREL."""
    return [[tuple(row[1:8]) for row in sentence.words] for sentence in document]


def test_spacy_docs_carry_what_parse_writes_token_for_token(nlp):
    from sklearn_structured import parse
    from sklearn_structured.utils import load_model

    text = _text()
    ours = parse(load_model(sample_model_path()), io.StringIO(text), input_format="text")
    doc = nlp(text)
    assert doc.text == text
    sentences = [[t for t in span if t.pos_ != "SPACE"] for span in doc.sents]
    assert len(sentences) == len(ours)
    for span, sentence in zip(sentences, ours):
        position = {token.i: k + 1 for k, token in enumerate(span)}  # SPACE tokens left out
        for token, row in zip(span, sentence.words, strict=True):
            head = 0 if token.head.i == token.i else position[token.head.i]
            features = "|".join(sorted(str(token.morph).split("|"), key=str.lower))
            assert (token.text, token.pos_ or "_", token.tag_ or "_",
                    features or "_", token.lemma_ or "_", str(head),
                    token.dep_) == (row[1], row[3], row[4], row[5], row[2], row[6], row[7])
        assert span[0].is_sent_start
    # and from_docs gives the same words back
    from sklearn_structured.spacy_bridge import from_docs

    assert _annotations(from_docs([doc])) == _annotations(ours)


def test_pipe_annotates_in_batches_as_one_call_does(nlp):
    texts = ["The cat sat on the mat. It was happy.", "  Two  spaces\tand a tab.",
             "", "Don't stop.\n\nA new paragraph.", " \n "]
    one_by_one = [nlp(text) for text in texts]
    batched = list(nlp.pipe(texts, batch_size=3))
    assert [d.text for d in batched] == texts
    assert [[(t.text, t.whitespace_, t.pos_, t.lemma_, t.head.i, t.dep_) for t in d]
            for d in batched] == [[(t.text, t.whitespace_, t.pos_, t.lemma_, t.head.i, t.dep_)
                                   for t in d] for d in one_by_one]
    assert [t.pos_ for t in nlp(" \n ")] == ["SPACE"]
    with_context = list(nlp.pipe(zip(texts, range(5)), as_tuples=True, batch_size=2))
    assert [context for _, context in with_context] == [0, 1, 2, 3, 4]


def test_conllu_to_spacy_and_back_keeps_what_spacy_holds(nlp, treebank):
    from sklearn_structured.spacy_bridge import from_docs, to_docs

    docs = to_docs(treebank, nlp.vocab)
    back = from_docs(docs)
    assert _annotations(back) == _annotations(treebank)
    for sentence, original in zip(back, treebank):
        spaces = [("SpaceAfter=No" in row[9]) for row in sentence.words][:-1]
        words, no_space, last = original.words, [], 0
        for row in original.rows:  # a multiword token's words: no space inside it
            first, dash, end = row[0].partition("-")
            if dash:
                last, token_no_space = int(end), "SpaceAfter=No" in row[9]
            elif row[0].isdigit():
                inside = int(row[0]) <= last
                no_space.append((int(row[0]) < last or token_no_space) if inside
                                else "SpaceAfter=No" in row[9])
        assert spaces == no_space[:len(words) - 1]
        assert sentence.metadata["text"] == original.metadata["text"] or any(
            "-" in row[0] for row in original.rows)


def test_a_table_has_a_row_a_word_and_gives_the_document_back(treebank):
    frame = treebank.to_frame()
    assert len(frame) == sum(len(sentence.words) for sentence in treebank)
    assert list(frame.columns[:3]) == ["sent_id", "token", "token_form"]
    assert frame["head"].dtype.name == "Int64" and (frame["head"] == 0).sum() == len(treebank)
    mwt = frame[frame["token"].str.contains("-")]
    assert len(mwt) and (mwt["token_form"] != mwt["form"]).all()
    assert write_conllu(ConlluDocument.from_frame(frame)) == write_conllu(treebank)
    # a table made elsewhere (no attrs): the words, sent_ids and multiword tokens
    bare = frame.copy()
    bare.attrs = {}
    rebuilt = ConlluDocument.from_frame(bare)
    assert _annotations(rebuilt) == _annotations(treebank)
    assert [s.metadata["sent_id"] for s in rebuilt] == [s.metadata["sent_id"] for s in treebank]
    assert [[r[:2] for r in s.rows if "-" in r[0]] for s in rebuilt] == [
        [r[:2] for r in s.rows if "-" in r[0]] for s in treebank]
    with pytest.raises(ValueError, match="no column 'deprel'"):
        ConlluDocument.from_frame(frame.drop(columns="deprel"))


def test_conllu_token_lists_round_trip(treebank):
    token_lists = treebank.to_token_lists()
    assert len(token_lists) == len(treebank)
    first = token_lists[0]
    assert first.metadata["sent_id"] == treebank[0].metadata["sent_id"]
    assert [token["form"] for token in first] == [row[1] for row in treebank[0].rows]
    assert write_conllu(ConlluDocument.from_token_lists(token_lists)) == write_conllu(treebank)


def test_the_bridges_import_their_packages_only_when_called():
    import subprocess
    import sys

    code = ("import sys, sklearn_structured.datasets as d, sklearn_structured.spacy_bridge; "
            "d.load_sample_treebank(as_document=True)._repr_html_(); "
            "print(sorted(m for m in ('conllu', 'spacy') if m in sys.modules))")
    # (not pandas: scikit-learn imports it whenever it is installed)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_read_conllu_is_the_reader_used(treebank):
    # the conversions go through the CoNLL-U reader, so their documents carry lines
    back = ConlluDocument.from_frame(treebank.to_frame())
    assert back[0].line == 1 and read_conllu(io.StringIO(write_conllu(back))) == back
