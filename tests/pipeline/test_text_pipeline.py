"""TextPipeline: raw text in, annotated CoNLL-U out."""

import io

import pytest

from sklearn_structured import TextPipeline, Tokenizer, make_parsing_pipeline, parse
from sklearn_structured.datasets import ConlluDocument, load_sample_treebank
from sklearn_structured.annotation import role_of
from sklearn_structured.registry import PIPELINE
from sklearn_structured.utils import load_model, save_model

TEXT = "The dog barks. It is loud.\n\nA new paragraph starts here."


def _small(targets=("upos", "feats", "lemma")):
    return TextPipeline(
        Tokenizer(n_epochs=2, random_state=0),
        make_parsing_pipeline("easyfirst", targets=targets,
                              tagger_params={"n_epochs": 2, "beam_size": 1},
                              parser_params={"n_epochs": 2}, n_folds=2, random_state=0))


@pytest.fixture(scope="module")
def fitted():
    return _small().fit([load_sample_treebank(as_document=True)])


def test_raw_text_gets_every_predicted_column(fitted):
    document = fitted.predict([TEXT])[0]
    assert isinstance(document, ConlluDocument)
    assert role_of(fitted) == PIPELINE
    words = [row for sentence in document for row in sentence.rows if "-" not in row[0]]
    # FORM from the text; LEMMA, UPOS, FEATS, HEAD, DEPREL predicted; XPOS not trained
    assert "".join(row[1] for row in words) == "".join(TEXT.split())
    for row in words:
        assert row[2] != "_" and row[3] != "_" and row[6] != "_" and row[7] != "_"
        assert row[4] == "_"
    assert document[2].comments[0] == "# newpar"


def test_parse_reads_text_from_a_file_object(fitted):
    from_file = parse(fitted, io.StringIO(TEXT), input_format="text")
    assert [s.rows for s in from_file] == [s.rows for s in fitted.predict([TEXT])[0]]


def test_only_a_text_pipeline_reads_raw_text(fitted):
    with pytest.raises(ValueError, match="has no tokeniser"):
        parse(fitted.annotator_, io.StringIO(TEXT), input_format="text")
    with pytest.raises(ValueError, match="input_format"):
        parse(fitted, io.StringIO(TEXT), input_format="html")


def test_saved_text_pipeline_annotates_identically(fitted, tmp_path):
    save_model(fitted, tmp_path / "model")
    loaded = load_model(tmp_path / "model")
    assert [s.rows for s in loaded.predict([TEXT])[0]] == [s.rows for s in fitted.predict([TEXT])[0]]


def test_score_is_the_aligned_las(fitted):
    score = fitted.score([load_sample_treebank(as_document=True)])
    assert 0.3 < score <= 1.0


def test_a_column_the_training_data_leave_empty_is_not_tagged():
    document = load_sample_treebank(as_document=True)
    no_xpos = document.with_tags([[None] * len(s) for s in document.to_sentences()], "xpos")
    with pytest.warns(UserWarning, match="no XPOS"):
        model = _small(("upos", "xpos", "feats")).fit([no_xpos])
    steps = model.annotator_.steps
    assert [name for name, _ in steps] == ["fields", "tag_upos", "tag_feats", "parser"]
    assert steps[0][1].fields == ("form", "upos", "feats")
    assert steps[2][1].input_tags == ("upos",)  # no tagger writes XPOS for it to read


CONLLU = ("# newdoc id = a\n# sent_id = 3651\n# text = Hi!\n"
          "1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\tSpaceAfter=No\n"
          "2\t!\t!\tPUNCT\t.\t_\t1\tpunct\t_\t_\n\n")


@pytest.mark.parametrize("conllu", [
    CONLLU,
    "\ufeff" + CONLLU,
    CONLLU.replace("\n", "\r\n"),
    CONLLU.split("\n", 3)[3],  # no comments
    CONLLU.replace("1\tHi", "1-2\tHi!\t_\t_\t_\t_\t_\t_\t_\t_\n1\tHi"),
])
def test_conllu_given_as_text_is_refused(fitted, conllu, tmp_path):
    path = tmp_path / "in.conllu"
    path.write_bytes(conllu.encode())
    for source in (path, str(path), io.StringIO(conllu), io.BytesIO(conllu.encode())):
        with pytest.raises(ValueError, match="is CoNLL-U, not raw text.*input_format='conllu'"):
            parse(fitted, source, input_format="text")
    assert len(parse(fitted, io.StringIO(conllu))) == 1


@pytest.mark.parametrize("text", [
    TEXT,
    "# A heading\n\nThe dog barks.",
    "\n  The dog barks.\tIt is loud.",  # a tab in prose does not make a word line
])
def test_text_given_as_conllu_gets_the_hint(fitted, text, tmp_path):
    path = tmp_path / "in.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match="looks like raw text.*input_format='text'"):
        parse(fitted, path)
    stream = io.StringIO(text)
    assert len(parse(fitted, stream, input_format="text")) >= 1


class _Trickle(io.RawIOBase):
    """A pipe that hands over a few bytes a read, as standard input may."""

    def __init__(self, data, size):
        self.data, self.size = data, size

    def readable(self):
        return True

    def readinto(self, buffer):
        piece, self.data = self.data[:self.size], self.data[self.size:]
        buffer[:len(piece)] = piece
        return len(piece)


@pytest.mark.parametrize("size", [3, 17, 40, 10**6])
def test_a_stream_looked_at_before_a_line_is_whole_is_judged_by_its_whole_lines(size):
    from sklearn_structured.datasets._input_format import check_input_format

    stream = io.BufferedReader(_Trickle(CONLLU.encode(), size))
    check_input_format(stream, "conllu")  # valid CoNLL-U, however it trickles in
    assert stream.read() == CONLLU.encode()  # and nothing consumed
    stream = io.BufferedReader(_Trickle(CONLLU.encode(), size))
    if size > len(CONLLU.split("\n1\t")[0]) + 50:  # a whole word line came with the first read
        with pytest.raises(ValueError, match="is CoNLL-U, not raw text"):
            check_input_format(stream, "text")
    else:
        check_input_format(stream, "text")
