"""Files the readers must refuse and documents the writers must not write (issue 15).

Classes: CoNLL-U IDs in a wrong order (4), writers producing files that do not
read back (5), mixed line endings (7), malformed bracketed trees (8).
"""

import io

import numpy as np
import pytest

from sklearn_structured.datasets import read_bracketed_trees, read_conllu, write_conllu


def _row(token_id, form="w", head="0", deprel="root"):
    return "\t".join([token_id, form, "_", "X", "_", "_", head, deprel, "_", "_"])


def _document(*ids):
    """A one-sentence file whose ID column is ``ids`` (heads are not checked by the reader)."""
    return "\n".join(_row(i) for i in ids) + "\n\n"


GOOD = _document("1-2", "1", "2", "3", "3.1", "3.2", "4", "5-6", "5", "6")


def test_well_formed_ids_are_accepted():
    document = read_conllu(io.StringIO(GOOD))
    assert write_conllu(document) == GOOD


@pytest.mark.parametrize("ids, message", [
    (("1", "3-2", "2", "3"), "lower to a higher"),
    (("1", "2-2", "2", "3"), "lower to a higher"),
    (("1", "2-4", "2", "3"), "reaches word 4 but the sentence has 3"),
    (("1-2", "1", "2-3", "2", "3"), "overlaps the previous range"),
    (("1-3", "1", "2", "2-3"), "before word 2"),
    (("1-2", "1", "2", "2-3", "3"), "here the next word is 3"),
    (("1", "3-4", "2", "3", "4"), "must come right before word 3; here the next word is 2"),
    (("1", "2", "1.1", "3"), "must follow word 1"),
    (("1", "1.2", "2"), "where 1.1 was expected"),
    (("1", "1.1", "1.3", "2"), "where 1.2 was expected"),
    (("1", "2", "3.1"), "must follow word 3"),
    (("0.2", "1"), "where 0.1 was expected"),
])
def test_ids_out_of_order_name_the_line(ids, message):
    with pytest.raises(ValueError, match=message) as error:
        read_conllu(io.StringIO(_document(*ids)))
    assert str(error.value).startswith("<stream>:") or ":" in str(error.value).split(" ")[0]


# --- writers ---------------------------------------------------------------------

@pytest.fixture
def document():
    return read_conllu(io.StringIO(_document("1", "2", "3")))


@pytest.mark.parametrize("tags, message", [
    (["NN", "V\tB", "X"], "tabs"),
    (["NN", "VB\n", "X"], "line breaks"),
    (["NN", "", "X"], "non-empty"),
    (["NN", " VB", "X"], "whitespace"),
    (["NN", 7, "X"], "is a int"),
])
def test_tags_that_would_not_read_back_are_refused(document, tags, message):
    with pytest.raises(ValueError, match=message):
        document.with_tags([tags], "xpos")


def test_none_is_written_as_underscore(document):
    written = write_conllu(document.with_tags([["NN", None, "X"]], "upos")
                           .with_heads([[2, 0, 2]], [["nsubj", "root", None]]))
    again = read_conllu(io.StringIO(written))
    assert [r[3] for r in again[0].rows] == ["NN", "_", "X"]
    assert [r[7] for r in again[0].rows] == ["nsubj", "root", "_"]
    assert "None" not in written


@pytest.mark.parametrize("heads, message", [
    ([2, 0, 4], "out of range"),
    ([2, 3, 1], "no token attaches to the root"),
    ([0, 3, 2], "cycle"),
    ([2, 0, 1.7], "integers"),
    ([2, 0, np.nan], "integers"),
    ([[2], [0], [2]], "shape"),
])
def test_heads_that_are_not_a_tree_are_refused(document, heads, message):
    with pytest.raises(ValueError, match=message):
        document.with_heads([np.asarray(heads)])


def test_rows_with_tabs_or_line_breaks_are_not_written(document):
    document[0].rows[1][9] = "SpaceAfter=No\nEvil"
    with pytest.raises(ValueError, match="sentence 0, row 2"):
        write_conllu(document)
    document[0].rows[1][9] = None
    with pytest.raises(ValueError, match="must be a str"):
        write_conllu(document)


# --- line endings --------------------------------------------------------------

@pytest.mark.parametrize("text", [
    _row("1") + "\r\n" + _row("2", head="1", deprel="x") + "\n\n" + _row("1") + "\n\r\n",
    _row("1") + "\n" + _row("2", head="1", deprel="x") + "\r\n\n",
    "# c\r\n" + _row("1") + "\n\r\n" + _row("1") + "\r\n\r\n",
])
def test_mixed_line_endings_round_trip_byte_for_byte(text):
    document = read_conllu(io.BytesIO(text.encode()))
    assert all("\r" not in field for s in document for row in s.rows for field in row)
    out = io.BytesIO()
    write_conllu(document, out)
    assert out.getvalue() == text.encode()


# --- bracketed trees -----------------------------------------------------------

@pytest.mark.parametrize("lines, message", [
    (["(S (NP (DT a) (NN b)) (VP (VBZ c))", "(S (NP (DT d)) (VP (VBZ e))))"],
     r"<lines>:1: tree starting here is missing 1 '\)' \(another tree starts at line 2\)"),
    (["(S (NP (DT a) (NN)) (VP (VBZ c)))"], r"bracket \(NN\) has no word"),
    (["(S (NP (DT a)) ())"], r"bracket \(\) has no word"),
])
def test_malformed_trees_are_refused(lines, message):
    with pytest.raises(ValueError, match=message):
        read_bracketed_trees(lines)


def test_multi_line_trees_with_indented_continuations_still_read():
    words, spans = read_bracketed_trees(["( (S (NP (DT a))", "    (VP (VBZ b))))"])
    assert words == [["a", "b"]] and (0, 2) in spans[0]
