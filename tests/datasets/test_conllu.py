"""CoNLL-U reading and writing: losslessness, the (X, y) view, and bad input."""

import gzip
import hashlib
import io
import lzma
import os
import re
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_structured.datasets import (
    ConlluDocument,
    ConlluSentence,
    load_conllu,
    read_conllu,
    write_conllu,
)

DATA = os.environ.get("SKLEARN_STRUCTURED_DATA")

# One sentence with a multiword token and an empty node, one plain sentence.
SAMPLE = (
    "# newdoc id = d1\n"
    "# sent_id = s1\n"
    "# text = I don't know.\n"
    "1\tI\tI\tPRON\tPRP\tCase=Nom\t4\tnsubj\t4:nsubj\t_\n"
    "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t4:aux\t_\n"
    "3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t4:advmod\t_\n"
    "4\tknow\tknow\tVERB\tVB\t_\t0\troot\t0:root\tSpaceAfter=No\n"
    "4.1\tknow\tknow\tVERB\tVB\t_\t_\t_\t4:conj\t_\n"
    "5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t4:punct\t_\n"
    "\n"
    "# sent_id = s2\n"
    "1\tYes\tyes\tINTJ\tUH\t_\t0\troot\t0:root\t_\n"
    "\n"
)


def test_sample_structure_kept():
    doc = read_conllu(io.StringIO(SAMPLE))
    assert len(doc) == 2
    first = doc[0]
    assert first.comments == ["# newdoc id = d1", "# sent_id = s1", "# text = I don't know."]
    assert [r[0] for r in first.rows] == ["1", "2-3", "2", "3", "4", "4.1", "5"]
    assert all(len(r) == 10 for r in first.rows)
    assert [r[1] for r in first.words] == ["I", "do", "n't", "know", "."]
    assert first.metadata["sent_id"] == "s1" and first.metadata["text"] == "I don't know."
    assert first.line == 1 and doc[1].line == 12
    assert write_conllu(doc) == SAMPLE


def test_load_conllu_view():
    X, y, deprels = load_conllu(io.StringIO(SAMPLE), return_labels=True)
    assert [t["form"] for t in X[0]] == ["I", "do", "n't", "know", "."]
    assert set(X[0][0]) == {"form", "lemma", "upos", "xpos", "feats"}
    assert X[0][0]["feats"] == "Case=Nom" and X[0][1]["feats"] == "_"
    assert y[0].dtype == np.int64
    np.testing.assert_array_equal(y[0], [4, 4, 4, 0, 4])
    np.testing.assert_array_equal(y[1], [0])
    assert deprels == [["nsubj", "aux", "advmod", "root", "punct"], ["root"]]


def test_paths_compression_and_binary_files(tmp_path):
    doc = read_conllu(io.StringIO(SAMPLE))
    for name in ["a.conllu", "a.conllu.gz", "a.conllu.xz"]:
        path = tmp_path / name
        write_conllu(doc, path)
        assert read_conllu(path) == doc
        assert read_conllu(str(path)) == doc
    assert gzip.open(tmp_path / "a.conllu.gz").read() == SAMPLE.encode()
    assert lzma.open(tmp_path / "a.conllu.xz").read() == SAMPLE.encode()
    buffer = io.BytesIO()
    write_conllu(doc, buffer)
    assert buffer.getvalue() == SAMPLE.encode()
    buffer.seek(0)
    assert read_conllu(buffer) == doc
    assert not buffer.closed  # the wrapper is detached, not closed
    with open(tmp_path / "a.conllu", "rb") as f:
        assert read_conllu(f) == doc


def test_crlf_and_missing_final_blank_line():
    crlf = SAMPLE.replace("\n", "\r\n")
    doc = read_conllu(io.BytesIO(crlf.encode()))
    assert doc.newline == "\r\n"
    assert doc[0].rows[-1][-1] == "_"  # no stray \r in MISC
    assert write_conllu(doc) == crlf
    truncated = read_conllu(io.StringIO(SAMPLE[:-1]))
    assert truncated == read_conllu(io.StringIO(SAMPLE))


def test_with_heads_changes_only_the_head_column():
    doc = read_conllu(io.StringIO(SAMPLE))
    new = doc.with_heads([np.array([2, 0, 2, 2, 4]), [0]])
    before = write_conllu(doc).split("\n")
    after = write_conllu(new).split("\n")
    changed = [(a, b) for a, b in zip(before, after) if a != b]
    assert len(before) == len(after)
    assert len(changed) == 4  # words 1, 2, 3 and 4 of sentence 1 (word 5 keeps head 4)
    for a, b in changed:
        ca, cb = a.split("\t"), b.split("\t")
        assert ca[:6] == cb[:6] and ca[7:] == cb[7:] and ca[6] != cb[6]
    np.testing.assert_array_equal(load_conllu(new)[1][0], [2, 0, 2, 2, 4])
    assert write_conllu(doc) == SAMPLE  # the original is untouched
    relabelled = doc.with_heads(load_conllu(doc)[1], deprels=[["a"] * 5, ["b"]])
    assert relabelled.deprels() == [["a"] * 5, ["b"]]
    with pytest.raises(ValueError, match="5 words"):
        doc.with_heads([[0, 1], [0]])
    with pytest.raises(ValueError, match="2 sentences"):
        doc.with_heads([[0]])


def test_with_heads_clear_deps_blanks_deps_and_leaves_out_empty_nodes():
    doc = read_conllu(io.StringIO(SAMPLE))
    assert any("." in row[0] for row in doc.sentences[0].rows)
    new = doc.with_heads(load_conllu(doc)[1], clear_deps=True)
    rows = [row for sentence in new.sentences for row in sentence.rows]
    assert not any("." in row[0] for row in rows)  # empty nodes live in the enhanced graph only
    assert all(row[8] == "_" for row in rows if row[0].isdigit())
    assert read_conllu(io.StringIO(write_conllu(new))).to_sentences() == doc.to_sentences()

def test_with_tag_columns_equals_one_column_at_a_time():
    doc = read_conllu(io.StringIO(SAMPLE))
    lengths = [len(s.words) for s in doc]
    upos = [["X"] * n for n in lengths]
    lemmas = [[f"l{i}" for i in range(n)] for n in lengths]
    both = doc.with_tag_columns({"upos": upos, "lemma": lemmas})
    assert write_conllu(both) == write_conllu(doc.with_tags(upos, "upos").with_tags(lemmas, "lemma"))
    with pytest.raises(ValueError, match="field must be one of"):
        doc.with_tag_columns({"upos": upos, "head": upos})
    with pytest.raises(ValueError, match="1 tag sequences"):
        doc.with_tag_columns({"lemma": lemmas[:1]})



def test_unparsed_input_reads_but_does_not_load():
    raw = "1\tHello\t_\t_\t_\t_\t_\t_\t_\t_\n2\tworld\t_\t_\t_\t_\t_\t_\t_\t_\n\n"
    doc = read_conllu(io.StringIO(raw))
    assert [t["form"] for t in doc.to_sentences()[0]] == ["Hello", "world"]
    with pytest.raises(ValueError, match=r"<stream>:1: HEAD '_' of word 1"):
        load_conllu(doc)
    assert write_conllu(doc.with_heads([[0, 1]])).splitlines()[1].split("\t")[6] == "1"


def _corrupt(line_number, new_line, *more):
    """SAMPLE with line ``line_number`` (1-based) replaced; ``more`` gives further pairs."""
    lines = SAMPLE.split("\n")
    changes = (line_number, new_line) + more
    for number, text in zip(changes[::2], changes[1::2]):
        lines[number - 1] = text
    return "\n".join(lines)


@pytest.mark.parametrize(
    "text, message",
    [
        (_corrupt(4, "1\tI\tI\tPRON\tPRP\tCase=Nom\t4\tnsubj\t4:nsubj"), r"bad\.conllu:4: 9 tab-separated columns"),
        (_corrupt(4, "1\tI\tI\tPRON\tPRP\tCase=Nom\t4\tnsubj\t4:nsubj\t_\t_"), r"bad\.conllu:4: 11 tab"),
        (_corrupt(4, "1\tI\tI\tPRON\tPRP\tCase=Nom\tx\tnsubj\t4:nsubj\t_"), r"bad\.conllu:4: HEAD 'x' of word 1 is not"),
        (_corrupt(4, "1\tI\tI\tPRON\tPRP\tCase=Nom\t-1\tnsubj\t4:nsubj\t_"), r"bad\.conllu:4: HEAD '-1'"),
        (_corrupt(4, "1\tI\tI\tPRON\tPRP\tCase=Nom\t9\tnsubj\t4:nsubj\t_"), r"bad\.conllu:4: HEAD 9 of word 1 is out of range 0\.\.5"),
        (_corrupt(4, "1\tI\tI\tPRON\tPRP\tCase=Nom\t1\tnsubj\t4:nsubj\t_"), r"bad\.conllu:4: word 1 is its own head"),
        (_corrupt(4, "1\tI\tI\tPRON\tPRP\tCase=Nom\t0\tnsubj\t4:nsubj\t_"), r"bad\.conllu:1-10 \(sentence 1\): 2 tokens attach to the root"),
        (
            _corrupt(6, "2\tdo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_", 7, "3\tn't\tnot\tPART\tRB\t_\t2\tadvmod\t_\t_"),
            r"bad\.conllu:1-10 \(sentence 1\): cycle among tokens 2 -> 3 -> 2",
        ),
        (_corrupt(8, "4\tknow\tknow\tVERB\tVB\t_\t5\troot\t0:root\t_"), r"bad\.conllu:1-10 \(sentence 1\): no token attaches to the root"),
        (_corrupt(11, "\n"), r"bad\.conllu:12: empty sentence"),
        (_corrupt(12, "# comment only\n"), r"bad\.conllu:13: empty sentence"),
        (_corrupt(7, "4\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t4:advmod\t_"), r"bad\.conllu:7: word ID '4' where 3"),
        (_corrupt(5, "2_3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_"), r"bad\.conllu:5: ID '2_3'"),
        (_corrupt(6, "# late comment"), r"bad\.conllu:6: comment line inside a sentence"),
    ],
)
def test_bad_input_names_file_and_line(tmp_path, text, message):
    path = tmp_path / "bad.conllu"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load_conllu(path)


def test_several_roots_allowed_on_request(tmp_path):
    path = tmp_path / "two_roots.conllu"
    path.write_text(_corrupt(4, "1\tI\tI\tPRON\tPRP\tCase=Nom\t0\tnsubj\t4:nsubj\t_"))
    X, y = load_conllu(path, single_root=False)
    np.testing.assert_array_equal(y[0], [0, 4, 4, 0, 4])


def test_in_memory_errors_name_the_sentence():
    doc = ConlluDocument([ConlluSentence([], [["1", "a"] + ["_"] * 4 + ["2", "x", "_", "_"]])])
    with pytest.raises(ValueError, match=r"<document>: sentence 1, row 1: HEAD 2 of word 1 is out of range"):
        load_conllu(doc)


# --- property test: generated documents survive write -> read -> write ---

_field = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\t\n\r"),
    min_size=1,
    max_size=6,
)
_comment = _field.map(lambda s: "#" + s)


@st.composite
def _sentences(draw):
    n = draw(st.integers(1, 6))
    rows = []

    def empty_nodes(after):
        for k in range(1, draw(st.integers(0, 2)) + 1):
            rows.append([f"{after}.{k}"] + draw(st.lists(_field, min_size=9, max_size=9)))

    empty_nodes(0)
    covered = 0  # last word of the latest multiword range
    for m in range(1, n + 1):
        if m > covered and m < n and draw(st.booleans()):
            covered = draw(st.integers(m + 1, n))
            rows.append([f"{m}-{covered}"] + draw(st.lists(_field, min_size=9, max_size=9)))
        rows.append([str(m)] + draw(st.lists(_field, min_size=9, max_size=9)))
        empty_nodes(m)
    return ConlluSentence(draw(st.lists(_comment, max_size=3)), rows)


@settings(max_examples=60, deadline=None)
@given(st.lists(_sentences(), min_size=1, max_size=4), st.sampled_from(["\n", "\r\n"]))
def test_round_trip_property(sentences, newline):
    doc = ConlluDocument(sentences, newline=newline)
    text = write_conllu(doc)
    again = read_conllu(io.BytesIO(text.encode("utf-8")))
    assert again == doc
    assert write_conllu(again) == text


@settings(max_examples=60, deadline=None)
@given(st.lists(_sentences(), min_size=1, max_size=4), st.data())
def test_round_trip_keeps_each_line_ending(sentences, data):
    """Any mix of LF and CRLF comes back byte for byte, and no field keeps a CR."""
    lines = []
    for sentence in sentences:
        lines.extend(sentence.comments)
        lines.extend("\t".join(row) for row in sentence.rows)
        lines.append("")
    ending = st.sampled_from(["\n", "\r\n"])
    endings = data.draw(st.lists(ending, min_size=len(lines), max_size=len(lines)))
    text = "".join(line + ending for line, ending in zip(lines, endings))
    doc = read_conllu(io.BytesIO(text.encode("utf-8")))
    assert doc == ConlluDocument(sentences, newline=endings[0])
    assert not any("\r" in value for s in doc for row in s.rows for value in row)
    assert write_conllu(doc) == text
    assert write_conllu(doc[1:]) == text[len(write_conllu(doc[:1])):]


# --- every staged UD file, byte for byte ---


def _expected_sha256():
    """sha256 of the uncompressed files, as published in DATA.md."""
    table = Path(DATA, "DATA.md").read_text(encoding="utf-8")
    return dict(re.findall(r"`(ud/[^`]+\.conllu\.xz)`.*`([0-9a-f]{64})`", table))


@pytest.mark.slow
@pytest.mark.corpus
def test_every_ud_file_round_trips_byte_for_byte():
    files = sorted(Path(DATA, "ud").glob("*/*.conllu.xz"))
    assert len(files) >= 40
    published = _expected_sha256()
    assert len(published) == len(files)
    started = time.perf_counter()
    for path in files:
        original = hashlib.sha256(lzma.open(path).read()).hexdigest()
        written = hashlib.sha256(write_conllu(read_conllu(path)).encode("utf-8")).hexdigest()
        assert written == original, path
        assert written == published[path.relative_to(DATA).as_posix()], path
    # guard the reader's speed: about 100 MB of CoNLL-U in all
    assert time.perf_counter() - started < 120


@pytest.mark.corpus
def test_ewt_train_counts_match_data_md():
    X, y = load_conllu(Path(DATA, "ud", "UD_English-EWT", "en_ewt-ud-train.conllu.xz"))
    assert len(X) == 12544
    assert sum(len(s) for s in X) == 204577
    assert all(len(s) == len(h) for s, h in zip(X, y))
    assert sum(int((h == 0).sum()) for h in y) == 12544


def test_labelled_targets_pair_heads_with_deprels(tmp_path):
    from sklearn_structured.datasets import load_conllu, load_sample_treebank

    X, y = load_sample_treebank("test")
    _, pairs = load_sample_treebank("test", labelled=True)
    _, _, deprels = load_sample_treebank("test", return_labels=True)
    assert len(pairs) == len(y)
    for (heads, labels), h, d in zip(pairs, y, deprels):
        assert heads.dtype == np.int64 and np.array_equal(heads, h)
        assert labels == d and all(isinstance(label, str) for label in labels)
        # UD: the root word, and only it, is labelled root
        assert [label == "root" for label in labels] == list(h == 0)
    text = "1\tDogs\t_\tNOUN\t_\t_\t2\tnsubj\t_\t_\n2\tbark\t_\tVERB\t_\t_\t0\t_\t_\t_\n\n"
    path = tmp_path / "blank.conllu"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"blank.conllu:2: word 2 has no DEPREL"):
        load_conllu(path, labelled=True)
    assert len(load_conllu(path)[1]) == 1  # heads only: a blank DEPREL is fine
    with pytest.raises(ValueError, match="return_labels"):
        load_conllu(path, labelled=True, return_labels=True)


def test_bad_utf8_is_located_by_file_and_line_in_any_source(tmp_path):
    good = "1\tDogs\t_\tNOUN\t_\t_\t0\troot\t_\t_\n\n"
    data = (good * 3000 + "1\tcaf\xe9\t_\tNOUN\t_\t_\t0\troot\t_\t_\n").encode("latin-1")
    path = tmp_path / "bad.conllu.gz"
    with gzip.open(path, "wb") as f:
        f.write(data)
    with pytest.raises(ValueError, match=r"bad\.conllu\.gz:6001: not UTF-8 \(byte 0xe9\)$"):
        read_conllu(path)
    with pytest.raises(ValueError, match=r"^<stream>:6001: not UTF-8 \(byte 0xe9\)$"):
        read_conllu(io.BytesIO(data))


def test_a_byte_order_mark_is_skipped():
    text = "# sent_id = 1\n1\tDogs\t_\tNOUN\t_\t_\t0\troot\t_\t_\n\n"
    document = read_conllu(io.BytesIO(b"\xef\xbb\xbf" + text.encode()))
    assert document[0].comments == ["# sent_id = 1"]
    assert write_conllu(document) == text
