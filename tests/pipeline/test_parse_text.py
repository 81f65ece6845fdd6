"""parse(input_format="text"): raw text in, CoNLL-U out, read and written a chunk at a time."""

import io
import re
import subprocess
import sys
import time

import pytest

from sklearn_structured import TextPipeline, Tokenizer, make_parsing_pipeline, parse
from sklearn_structured import _parse
from sklearn_structured.tokenize import _reader
from sklearn_structured.datasets import (ConlluDocument, load_sample_treebank, load_ud_treebank,
                                         read_conllu, write_conllu)
from sklearn_structured.tokenize import segmented_text


@pytest.fixture(scope="module")
def model():
    return TextPipeline(
        Tokenizer(n_epochs=2, random_state=0),
        make_parsing_pipeline("easyfirst", targets=("upos",),
                              tagger_params={"n_epochs": 1, "beam_size": 1},
                              parser_params={"n_epochs": 1, "beam_size": 1}, n_folds=2,
                              random_state=0)).fit([load_sample_treebank(as_document=True)])


def _with_tokenizer(model, treebank):
    """The model with a tokeniser fitted on ``treebank``'s first training sentences instead
    (enough to learn its multiword tokens, and quick)."""
    other = TextPipeline()
    train = list(load_ud_treebank(treebank, "train", as_document=True))[:1000]
    other.tokenizer_ = Tokenizer(n_epochs=2, random_state=0).fit([ConlluDocument(train)])
    other.annotator_ = model.annotator_
    return other


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of a few paragraphs, so that a short text takes several."""
    monkeypatch.setattr(_reader, "TEXT_CHUNK", 2**11)
    monkeypatch.setattr(_reader, "TEXT_CHUNK_MAX", 2**13)


def _tokens(document):
    """``(form, start, end, space_after)`` of every token (multiword tokens once)."""
    out = []
    for sentence in document:
        words_of_token = 0
        for row in sentence.rows:
            if words_of_token:
                words_of_token -= 1
                continue
            if "-" in row[0]:
                first, last = map(int, row[0].split("-"))
                words_of_token = last - first + 1
            misc = dict(item.split("=", 1) for item in row[9].split("|") if "=" in item)
            start, end = map(int, misc["TokenRange"].split(":"))
            out.append((row[1], start, end, misc.get("SpaceAfter") != "No"))
    return out


def _check_gives_the_text_back(document, text):
    """Every token spells its range of ``text``, only white space lies between tokens,
    SpaceAfter=No exactly where none does, and the paragraphs are marked."""
    tokens = _tokens(document)
    assert tokens[0][1] == len(text) - len(text.lstrip())
    assert not text[tokens[-1][2]:].strip()
    for (form, start, end, space), following in zip(tokens, tokens[1:] + [None]):
        assert text[start:end] == form
        if following is not None:
            between = text[end:following[1]]
            assert not between.strip() and bool(between) == space, (form, between)
    rebuilt = "".join(form + (" " if space else "") for form, _, _, space in tokens)
    assert rebuilt.strip() == " ".join(text.split())
    comments = [sentence.comments for sentence in document]
    assert comments[0][:2] == ["# newdoc", "# newpar"]
    assert sum("# newdoc" in c for c in comments) == 1
    paragraphs = [p for p in re.split(r"\n[^\S\n]*\n", text) if p.strip()]
    assert sum("# newpar" in c for c in comments) == len(paragraphs)
    assert [s.metadata["sent_id"] for s in document] == [str(i) for i in range(1, len(document) + 1)]
    for sentence in document:
        words = [row[1] for row in sentence.rows if "-" not in row[0]]
        assert len(words) == len(sentence.words)


@pytest.mark.corpus
@pytest.mark.parametrize("treebank", ["UD_English-EWT", "UD_Portuguese-Bosque"])
def test_the_raw_text_of_a_test_file_comes_back(model, treebank, small_chunks, tmp_path):
    model = _with_tokenizer(model, treebank)
    text = segmented_text(load_ud_treebank(treebank, "test", as_document=True)).text
    path = tmp_path / "test.txt"
    path.write_text(text, encoding="utf-8")
    n_written = parse(model, path, input_format="text", output=tmp_path / "out.conllu",
                      token_ranges=True)
    document = read_conllu(tmp_path / "out.conllu")  # valid CoNLL-U
    assert n_written == len(document) > 100
    _check_gives_the_text_back(document, text)
    ranges = sum("-" in row[0] for sentence in document for row in sentence.rows)
    if treebank == "UD_Portuguese-Bosque":
        assert ranges > 500  # "do" = "de o" ...
        unexpanded = parse(model, path, input_format="text", expand_multiword=False)
        assert not any("-" in row[0] for sentence in unexpanded for row in sentence.rows)
        assert len(unexpanded) == len(document)


def test_line_endings_a_byte_order_mark_and_no_final_newline(model):
    raw = "\ufeffThe dog barks.\r\nIt is loud.\r\n\r\nA new one.\n\nThe end.\r\rLast one"
    text = raw[1:].replace("\r\n", "\n").replace("\r", "\n")
    document = parse(model, io.BytesIO(raw.encode()), input_format="text", token_ranges=True)
    _check_gives_the_text_back(document, text)
    assert sum("# newpar" in s.comments for s in document) == 4


def test_parse_writes_each_chunk_before_reading_the_rest(model, small_chunks):
    paragraph = "The dog barks at the cat. It is loud and the cat runs away.\n\n"
    written = []

    class Input(io.BytesIO):
        def read(self, size=-1):
            written.append(output.tell())
            return super().read(size)

    output = io.StringIO()
    n = parse(model, Input(paragraph.encode() * 200), input_format="text", output=output)
    assert n >= 400 and output.getvalue().count("# newpar") == 200
    # output was written while input was still to be read
    assert 0 < written[len(written) // 2] < written[-1]


def test_conllu_input_is_annotated_in_batches(model, monkeypatch):
    monkeypatch.setattr(_parse, "CONLLU_CHUNK", 7)
    document = load_sample_treebank("test", as_document=True)
    text = write_conllu(document)
    written = []

    class Input(io.StringIO):
        def __next__(self):
            written.append(output.tell())
            return super().__next__()

    output = io.StringIO()
    assert parse(model, Input(text), output=output) == len(document)
    assert 0 < written[len(written) // 2] < written[-1]
    whole = parse(model, document)
    assert isinstance(whole, ConlluDocument)
    assert read_conllu(io.StringIO(output.getvalue())) == whole


def test_presegmented_input_keeps_one_sentence_a_line(model):
    text = "Dogs bark. Cats sleep. Birds sing\nOne more line. Yes\n\nNew paragraph here"
    document = parse(model, io.StringIO(text), input_format="text", presegmented=True)
    assert [s.metadata["text"] for s in document] == [
        "Dogs bark. Cats sleep. Birds sing", "One more line. Yes", "New paragraph here"]
    assert ["# newpar" in s.comments for s in document] == [True, False, True]
    assert len(parse(model, io.StringIO(text), input_format="text")) > 3


def test_words_of_a_multiword_token_get_its_range(model):
    tokenizer = model.tokenizer_
    saved = tokenizer.expansions_
    tokenizer.expansions_ = {**saved, "don't": ("do", "n't")}
    try:
        document = parse(model, io.StringIO("I don't know."), input_format="text",
                         token_ranges=True)
    finally:
        tokenizer.expansions_ = saved
    rows = [row for row in document[0].rows]
    token = next(row for row in rows if "-" in row[0])
    assert token[1] == "don't" and token[9] == "TokenRange=2:7"
    words = rows[rows.index(token) + 1:rows.index(token) + 3]
    assert [w[1] for w in words] == ["do", "n't"]
    assert [w[9] for w in words] == ["TokenRange=2:7"] * 2


def test_a_long_line_without_punctuation_is_cut_and_takes_linear_time(model):
    parse(model, io.StringIO("word " * 300), input_format="text")
    times = []
    for n_words in (5_000, 20_000):  # the longer line is 100,000 characters
        start = time.perf_counter()
        document = parse(model, io.StringIO("word " * n_words), input_format="text",
                         max_sentence_length=100)
        times.append(time.perf_counter() - start)
        assert sum(len(s.words) for s in document) == n_words
        assert max(len(s.words) for s in document) == 100
    assert times[1] < 8 * times[0] + 1


def test_a_paragraph_longer_than_a_chunk_is_cut_at_a_line_end(model, small_chunks):
    lines = ["A long paragraph goes on here and on"] * 600  # no blank line at all
    text = "\n".join(lines)
    document = parse(model, io.StringIO(text), input_format="text", token_ranges=True)
    _check_gives_the_text_back(document, text)


@pytest.mark.parametrize("content, message", [
    (b"", "in.txt is empty"),
    (b" \n\t\r\n  \n", "in.txt holds only white space"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "in.txt:3: a NUL byte at byte offset 8"),
    ("Caf\xe9 au lait.\nOui.".encode("latin-1"), r"in.txt:1: not UTF-8 \(byte 0xe9 at byte offset 3\)"),
])
def test_bad_text_is_named_and_leaves_no_output(model, tmp_path, content, message):
    (tmp_path / "in.txt").write_bytes(content)
    with pytest.raises(ValueError, match=message):
        parse(model, tmp_path / "in.txt", input_format="text", output=tmp_path / "out.conllu")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]


def test_a_late_bad_byte_is_placed_and_leaves_no_partial_file(model, tmp_path, small_chunks):
    good = "The dog barks. It is loud.\n\n" * 500
    (tmp_path / "in.txt").write_bytes(good.encode() + b"Bad \xff byte.\n")
    with pytest.raises(ValueError, match=rf"in.txt:1001: not UTF-8 \(byte 0xff at byte offset "
                                         rf"{len(good) + 4}\)"):
        parse(model, tmp_path / "in.txt", input_format="text", output=tmp_path / "out.conllu")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]


def test_text_options_need_text_input(model):
    document = load_sample_treebank("test", as_document=True)
    with pytest.raises(ValueError, match="input_format='text' only"):
        parse(model, document, token_ranges=True)
    with pytest.raises(ValueError, match="max_sentence_length"):
        parse(model, io.StringIO("x"), input_format="text", max_sentence_length=0)


def test_a_token_longer_than_the_chunk_limit_is_glued_across_the_cut(model, small_chunks):
    long_token = "x" * (2 * 2**13 + 700)  # twice the longest piece read at once
    text = f"The dog barks. {long_token} It is loud."
    document = parse(model, io.StringIO(text), input_format="text", token_ranges=True)
    _check_gives_the_text_back(document, text)
    # the cuts made pieces of the long token, each glued to the next
    pieces = [form for form, *_ in _tokens(document) if set(form) == {"x"}]
    assert len(pieces) >= 2 and "".join(pieces) == long_token


def test_an_empty_text_gives_an_empty_document(model):
    documents = model.predict(["The dog barks.", "", "A cat.", " \n\n "])
    assert [len(document) for document in documents[1::2]] == [0, 0]
    assert [s.rows for s in documents[0]] == [s.rows for s in model.predict(["The dog barks."])[0]]
    assert len(documents[2]) == 1


def test_parsing_with_a_text_pipeline_of_the_lowrank_parser_imports_only_what_it_uses():
    # a fresh interpreter: the modules that applying such a model loads (the model
    # file decoder imports the same) leave the other corpus loaders and the
    # easy-first parser and its kernels unloaded until they are asked for
    code = (
        "import sys\n"
        "import sklearn_structured._parse, sklearn_structured.pipeline, "
        "sklearn_structured.lowrank, sklearn_structured.utils._persistence\n"
        "unused = ['sklearn_structured.datasets._synthetic', 'sklearn_structured.datasets._ud',\n"
        "          'sklearn_structured.datasets._trees', 'sklearn_structured.datasets._text',\n"
        "          'sklearn_structured.datasets._newsgroups', 'sklearn_structured.easy_first._parser',\n"
        "          'sklearn_structured.easy_first._parser_kernels']\n"
        "assert not [m for m in unused if m in sys.modules], [m for m in unused if m in sys.modules]\n"
        "from sklearn_structured.datasets import load_sample_treebank\n"
        "from sklearn_structured.easy_first import EasyFirstBeamParser\n"
        "assert 'sklearn_structured.datasets._ud' in sys.modules and EasyFirstBeamParser.role\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
