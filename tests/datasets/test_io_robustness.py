"""Regression tests of file I/O: ID order in CoNLL-U, writers that
only write what reads back, mixed line endings, and malformed bracketed trees."""

import io

import numpy as np
import pytest

from sklearn_structured.datasets import (
    ConlluDocument,
    ConlluSentence,
    read_bracketed_trees,
    read_conllu,
    write_conllu,
)


def _row(token_id, form="w", head="_"):
    return [token_id, form, "_", "X", "_", "_", head, "_", "_", "_"]


def _text(*ids):
    """A one-sentence file (a comment line first) with these IDs in this order."""
    return "# sent_id = s\n" + "".join("\t".join(_row(i)) + "\n" for i in ids) + "\n"


# --- class 4: the ID column is checked for order, not only for format ---


@pytest.mark.parametrize(
    "ids, line, message",
    [
        (["1", "2", "4-3", "3", "4"], 4, r"range '4-3' does not run forward"),
        (["1", "2-2", "2"], 3, r"range '2-2' does not run forward"),
        (["1-3", "1", "2"], 2, r"runs to word 3 but the sentence has 2 words"),
        (["1-2", "1", "2", "2-3", "3"], 5, r"range '2-3' overlaps the previous range"),
        (["1-3", "1", "2-3", "2", "3"], 4, r"range '2-3' overlaps"),
        (["1", "3-4", "2", "3", "4"], 3, r"range '3-4' after word 1"),
        (["1", "2", "2-3", "3"], 4, r"range '2-3' after word 2"),
        (["1-2", "0.1", "1", "2"], 3, r"between a multiword range and its first word 1"),
        (["1", "2-3"], 3, r"multiword range with no word after it"),
        (["1", "1.2", "2"], 3, r"empty node '1.2' where 1.1 was expected"),
        (["1", "1.1", "1.3", "2"], 4, r"empty node '1.3' where 1.2 was expected"),
        (["1", "2", "1.1"], 4, r"empty node '1.1' where 2.1 was expected"),
        (["1", "3.1", "2", "3"], 3, r"empty node '3.1' where 1.1 was expected"),
        (["1", "01.1"], 3, r"empty node '01.1' where 1.1 was expected"),
    ],
)
def test_reader_rejects_ids_out_of_order(ids, line, message):
    with pytest.raises(ValueError, match=rf"<stream>:{line}: .*{message}|:{line}: {message}"):
        read_conllu(io.StringIO(_text(*ids)))


@pytest.mark.parametrize(
    "ids",
    [
        ["0.1", "0.2", "1", "1.1", "2"],
        ["1-2", "1", "1.1", "2", "3-4", "3", "4", "4.1", "4.2"],
        ["1", "2-4", "2", "3", "4", "5-6", "5", "6"],
    ],
)
def test_reader_accepts_ordered_ids(ids):
    doc = read_conllu(io.StringIO(_text(*ids)))
    assert [r[0] for r in doc[0].rows] == ids
    assert write_conllu(doc) == _text(*ids)


# --- class 5: writers write what reads back, or raise naming sentence and token ---

_DOC = read_conllu(io.StringIO(_text("1", "2", "3")))


@pytest.mark.parametrize(
    "heads, message",
    [
        ([[0, 1, 7]], r"sentence 1\): head 7 of token 3 is out of range 0..3"),
        ([[0, 3, 2]], r"sentence 1\): .*cycle"),
        ([[0, 1.7, 1]], r"sentence 1\): heads \[0.0, 1.7, 1.0\] are not all whole numbers"),
        ([[0, None, 1]], r"not all whole numbers"),
        ([["0", "1", "1"]], r"not all whole numbers"),
    ],
)
def test_with_heads_refuses_what_would_not_read_back(heads, message):
    with pytest.raises(ValueError, match=message):
        _DOC.with_heads(heads)


def test_with_heads_takes_whole_floats_and_writes_none_labels_as_underscore():
    doc = _DOC.with_heads([np.array([0.0, 1.0, 1.0])], [["root", None, "obj"]])
    again = read_conllu(io.StringIO(write_conllu(doc)))
    np.testing.assert_array_equal(again.heads()[0], [0, 1, 1])
    assert again.deprels() == [["root", "_", "obj"]]


@pytest.mark.parametrize(
    "label, message",
    [
        ("a\tb", r"label of word 2 'a\\tb' is empty or holds a TAB"),
        ("a\nb", r"label of word 2 'a\\nb'"),
        ("a\rb", r"label of word 2 'a\\rb'"),
        ("", r"label of word 2 '' is empty"),
        (5, r"label of word 2 is 5, not a str"),
    ],
)
def test_labels_and_tags_refuse_what_would_not_read_back(label, message):
    with pytest.raises(ValueError, match=r"sentence 1\): " + message):
        _DOC.with_heads([[0, 1, 1]], [["root", label, "obj"]])
    with pytest.raises(ValueError, match=r"sentence 1\): " + message.replace("label", "tag")):
        _DOC.with_tags([["X", label, "X"]], field="xpos")


def test_with_tags_writes_none_as_underscore():
    doc = _DOC.with_tags([["NOUN", None, "VERB"]])
    again = read_conllu(io.StringIO(write_conllu(doc)))
    assert [r[3] for r in again[0].words] == ["NOUN", "_", "VERB"]


@pytest.mark.parametrize(
    "sentence, message",
    [
        (ConlluSentence([], [_row("1", form="a\tb")]), r"sentence 0, row 1: row .* is not ten fields"),
        (ConlluSentence([], [_row("1", form="a\nb")]), r"sentence 0, row 1: row"),
        (ConlluSentence([], [_row("1", form=None)]), r"sentence 0, row 1: .*not a str"),
        (ConlluSentence([], [_row("1")[:9]]), r"sentence 0, row 1: row"),
        (ConlluSentence([], [_row("2")]), r"sentence 0, row 1: word ID '2' where 1"),
        (ConlluSentence([], [_row("1"), _row("1.2")]), r"sentence 0, row 2: empty node"),
        (ConlluSentence(["# a\n# b"], [_row("1")]), r"sentence 0: comment '# a\\n# b'"),
        (ConlluSentence(["no hash"], [_row("1")]), r"sentence 0: comment 'no hash'"),
        (ConlluSentence([], [_row("0.1")]), r"sentence 0: empty sentence"),
    ],
)
def test_write_conllu_refuses_what_would_not_read_back(sentence, message):
    doc = ConlluDocument([ConlluSentence([], [_row("1", head="0")]), sentence])
    with pytest.raises(ValueError, match=message.replace("sentence 0", "sentence 2")):
        write_conllu(doc)


# --- class 7: each line keeps its own ending, and no CR reaches a field ---


@pytest.mark.parametrize(
    "text",
    [
        "# a\r\n1\tw\t_\t_\t_\t_\t0\t_\t_\t_\n\n",
        "# a\n1\tw\t_\t_\t_\t_\t0\t_\t_\t_\r\n\n",
        "1\tw\t_\t_\t_\t_\t0\t_\t_\t_\n\r\n1\tv\t_\t_\t_\t_\t0\t_\t_\t_\r\n\r\n",
        "1\tw\t_\t_\t_\t_\t0\t_\t_\t_\r\n\n",
    ],
)
def test_mixed_line_endings_round_trip_without_cr_in_fields(text):
    doc = read_conllu(io.BytesIO(text.encode()))
    assert all(row[-1] == "_" for s in doc for row in s.rows)
    assert write_conllu(doc) == text
    np.testing.assert_array_equal(doc.with_heads([[0]] * len(doc)).heads()[0], [0])
    assert write_conllu(doc.with_tags([["X"]] * len(doc))) == text.replace("\tw\t_\t_", "\tw\t_\tX").replace(
        "\tv\t_\t_", "\tv\t_\tX"
    )


def test_carriage_return_inside_a_line_is_rejected():
    with pytest.raises(ValueError, match=r"<stream>:2: carriage return inside a line"):
        read_conllu(io.StringIO("# a\n1\tw\r\t_\t_\t_\t_\t0\t_\t_\t_\n\n"))


# --- class 8: bracketed trees that are unbalanced or have an empty bracket ---


@pytest.mark.parametrize(
    "lines, message",
    [
        (["(S (NP (DT a))", "(S (NP (DT b))))"], r"<lines>:1: tree starting here is missing 1 '\)' \(line 2"),
        (["(S (NP (DT a)) (VP (VB b)", "(S (NP (DT c)))))"], r"<lines>:1: .*missing 2"),
        (["(S (NP (NN)))"], r"<lines>:1: constituent 'NN' has no word or child"),
        (["(S (NP (DT a))", "  (VP ))"], r"<lines>:2: constituent 'VP' has no word"),
        (["(S (DT a) ())"], r"<lines>:1: empty brackets"),
    ],
)
def test_malformed_trees_are_rejected(lines, message):
    with pytest.raises(ValueError, match=message):
        read_bracketed_trees(lines)


def test_tree_continued_on_indented_lines_still_reads():
    sentences, spans = read_bracketed_trees(["(S (NP (DT a))", "   (VP (VB b)))", "(S (DT c))"])
    assert sentences == [["a", "b"], ["c"]]
    assert spans == [[(0, 1), (0, 2), (1, 2)], [(0, 1)]]
