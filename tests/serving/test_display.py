"""Trees drawn as SVG: every sentence of a treebank, gold against predicted, right to
left, multiword tokens, and the HTML of documents and of ``parse``."""

import os
import re
import xml.etree.ElementTree as ET

import pytest

from sklearn_structured.datasets import ConlluDocument, load_sample_treebank, read_conllu
from sklearn_structured.display import (Trees, document_html, html_page, is_right_to_left,
                                        sentence_svg)

SVG = "{http://www.w3.org/2000/svg}"


def _groups(svg, kind):
    """The ``<g>`` elements of class ``kind`` (among others) of an SVG picture."""
    root = ET.fromstring(svg)
    return [g for g in root.iter(f"{SVG}g") if kind in g.get("class", "").split()]


def _check_counts(svg, sentence, n_trees=1):
    words = sentence.words
    heads = [row[6] for row in words]
    assert len(_groups(svg, "word")) == n_trees * len(words)
    assert len(_groups(svg, "arc")) == n_trees * sum(h not in ("0", "_") for h in heads)
    assert len(_groups(svg, "root")) == n_trees * heads.count("0")
    assert len(_groups(svg, "mwt")) == n_trees * sum("-" in row[0] for row in sentence.rows)


def _parsed(gold):
    """``gold`` parsed by a small parser trained on the sample, on gold tags."""
    from sklearn_structured import EasyFirstBeamParser
    from sklearn_structured.datasets import load_conllu

    parser = EasyFirstBeamParser(n_epochs=1, beam_size=1, random_state=0).fit(
        *load_sample_treebank("train", labelled=True))
    X, _ = load_conllu(gold, single_root=False)
    return gold.with_heads(*zip(*parser.predict(X)), clear_deps=True)


def _treebank():
    """The EWT test file where the corpora are, else the embedded sample's test part."""
    data = os.environ.get("SKLEARN_STRUCTURED_DATA")
    if data:
        from sklearn_structured.datasets import load_ud_treebank

        return load_ud_treebank("UD_English-EWT", "test", data_home=data, as_document=True)
    return load_sample_treebank("test", as_document=True)


def test_every_sentence_gold_and_predicted_is_drawn_with_its_words_and_arcs():
    gold = _treebank()
    predicted = _parsed(gold)
    n_wrong = 0
    for gold_sentence, sentence in zip(gold, predicted):
        _check_counts(sentence_svg(gold_sentence), gold_sentence)
        both = sentence_svg(sentence, gold=gold_sentence)
        _check_counts(both, sentence, n_trees=2)
        wrong = {int(g.get("data-dependent")) for g in _groups(both, "wrong-head")}
        expected = {m for m, (p, g) in enumerate(zip(sentence.words, gold_sentence.words), 1)
                    if p[6] != g[6]}
        assert wrong == expected
        n_wrong += len(wrong)
    assert n_wrong  # a parser trained on 300 sentences gets some heads wrong


def test_wrong_labels_on_right_heads_are_marked():
    gold = load_sample_treebank("test", as_document=True)[:1]
    words = gold[0].words
    relabelled = gold.with_heads([[int(row[6]) for row in words]],
                                 [["dep"] + [row[7] for row in words[1:]]])
    svg = sentence_svg(relabelled[0], gold=gold[0])
    assert not _groups(svg, "wrong-head")
    assert [g.get("data-dependent") for g in _groups(svg, "wrong-label")] == (
        [] if words[0][7] == "dep" else ["1"])


def _x_of_words(svg):
    return [float(g.find(f"{SVG}text").get("x")) for g in _groups(svg, "word")]


def test_a_hebrew_sentence_runs_right_to_left():
    text = "# text = הילד אוכל תפוח .\n"
    rows = ["1\tהילד\tילד\tNOUN\t_\t_\t2\tnsubj\t_\t_",
            "2\tאוכל\tאכל\tVERB\t_\t_\t0\troot\t_\t_",
            "3\tתפוח\tתפוח\tNOUN\t_\t_\t2\tobj\t_\t_",
            "4\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_"]
    import io

    hebrew = read_conllu(io.StringIO(text + "\n".join(rows) + "\n\n"))[0]
    assert is_right_to_left("הילד אוכל") and not is_right_to_left("the child eats")
    xs = _x_of_words(sentence_svg(hebrew))
    assert xs == sorted(xs, reverse=True)  # word 1 at the right
    english = load_sample_treebank("test", as_document=True)[0]
    xs = _x_of_words(sentence_svg(english))
    assert xs == sorted(xs)
    _check_counts(sentence_svg(hebrew), hebrew)


def test_multiword_tokens_are_drawn_as_spans_over_their_words():
    gold = load_sample_treebank("test", as_document=True)
    sentence = next(s for s in gold if any("-" in row[0] for row in s.rows))
    svg = sentence_svg(sentence)
    token = next(row for row in sentence.rows if "-" in row[0])
    [span] = [g for g in _groups(svg, "mwt") if g.get("data-range") == token[0]]
    assert span.find(f"{SVG}text").text == token[1]


def test_text_is_escaped_and_other_words_are_refused():
    import io

    doc = read_conllu(io.StringIO("1\t<b>&\t_\tX\t_\t_\t0\troot\t_\t_\n\n"))
    svg = sentence_svg(doc[0])
    assert "<b>" not in svg and "&lt;b&gt;&amp;" in svg
    ET.fromstring(svg)
    other = read_conllu(io.StringIO("1\tother\t_\tX\t_\t_\t0\troot\t_\t_\n\n"))
    with pytest.raises(ValueError, match="other words"):
        sentence_svg(doc[0], gold=other[0])


def test_a_document_shows_its_trees_as_html():
    document = load_sample_treebank("test", as_document=True)
    fragment = document[:3]._repr_html_()
    assert fragment.count("<svg") == 3 and document[0].metadata["sent_id"] in fragment
    assert document_html(document, max_sentences=2).count("<svg") == 2
    chosen = Trees(document, gold=document, sentences=[2, 5])._repr_html_()
    assert chosen.count("<svg") == 2 and document[5].metadata["sent_id"] in chosen
    page = html_page(document[:2], gold=document[:2])
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 2
    assert "wrong-head" not in page.replace(".wrong-head", "")
    with pytest.raises(ValueError, match="sentences"):
        document_html(document[:2], gold=document[:3])
    assert isinstance(document, ConlluDocument)


def test_parse_writes_an_html_page(tmp_path):
    from sklearn_structured.cli import main

    from _serving import sample_model_path

    source = tmp_path / "in.txt"
    source.write_text("The cat sat on the mat. It was happy.\n", encoding="utf-8")
    out = tmp_path / "out.html"
    assert main(["parse", "--model", str(sample_model_path()), "--input-format", "text",
                 "--output-format", "html", "-o", str(out), str(source)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.count("<svg") == 2
    assert len(re.findall(r'<g class="word"', page)) >= 9
