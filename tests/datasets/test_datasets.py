"""Corpus loaders: data home, UD treebanks, the embedded sample, trees and text."""

import gzip
import io
import lzma
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_structured.datasets import (
    PTB_PUNCTUATION_TAGS,
    get_data_home,
    load_ptb_lm,
    load_ptb_wsj_sample,
    load_sample_treebank,
    load_ud_treebank,
    read_bracketed_trees,
    read_tokenized_text,
    write_conllu,
)
from sklearn_structured.utils import check_dependency_data

DATA = os.environ.get("SKLEARN_STRUCTURED_DATA")
PACKAGE_DATA = Path(__file__).resolve().parents[2] / "sklearn_structured" / "datasets" / "data"

TINY = "1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n2\t!\t!\tPUNCT\t.\t_\t1\tpunct\t_\t_\n\n"


# --- data home ---


def test_get_data_home(monkeypatch, tmp_path):
    monkeypatch.setenv("SKLEARN_STRUCTURED_DATA", str(tmp_path / "env"))
    assert get_data_home() == str(tmp_path / "env")
    assert get_data_home(tmp_path / "arg") == str(tmp_path / "arg")
    monkeypatch.delenv("SKLEARN_STRUCTURED_DATA")
    assert get_data_home() == os.path.expanduser("~/sklearn_structured_data")


# --- UD treebanks ---


def _fake_release(root):
    for folder, prefix in [("UD_Tiny-One", "xx_one"), ("UD_Tiny-Two", "xx_two"), ("UD_Tiny-Two_r1", "xx_two")]:
        (root / folder).mkdir(parents=True)
        (root / folder / f"{prefix}-ud-test.conllu").write_text(TINY)
    with lzma.open(root / "UD_Tiny-One" / "xx_one-ud-train.conllu.xz", "wt") as f:
        f.write(TINY * 2)


@pytest.mark.parametrize("layout", ["data_home", "ud_folder"])
def test_load_ud_treebank_layouts(tmp_path, layout):
    ud = tmp_path / "ud" if layout == "data_home" else tmp_path
    _fake_release(ud)
    for name in ["UD_Tiny-One", "xx_one"]:
        X, y = load_ud_treebank(name, "train", data_home=tmp_path)
        assert len(X) == 2 and [t["form"] for t in X[0]] == ["Hi", "!"]
        X, y, labels = load_ud_treebank(name, "test", data_home=tmp_path, return_labels=True)
        assert labels == [["root", "punct"]]
    doc = load_ud_treebank("xx_one", "test", data_home=tmp_path, as_document=True)
    assert write_conllu(doc) == TINY


def test_load_ud_treebank_errors(tmp_path, monkeypatch):
    _fake_release(tmp_path / "ud")
    (tmp_path / "ud" / "UD_Tiny-Again").mkdir()
    (tmp_path / "ud" / "UD_Tiny-Again" / "xx_one-ud-test.conllu").write_text(TINY)
    with pytest.raises(ValueError, match="several test files") as info:
        load_ud_treebank("xx_one", "test", data_home=tmp_path)
    assert "UD_Tiny-Again" in str(info.value) and "directory name" in str(info.value)
    assert len(load_ud_treebank("UD_Tiny-Two_r1", "test", data_home=tmp_path)[0]) == 1
    with pytest.raises(FileNotFoundError) as info:
        load_ud_treebank("xx_one", "dev", data_home=tmp_path)
    message = str(info.value)
    assert str(tmp_path / "ud") in message and "data_home" in message
    assert "SKLEARN_STRUCTURED_DATA" in message
    with pytest.raises(FileNotFoundError, match="UD_Missing"):
        load_ud_treebank("UD_Missing", "test", data_home=tmp_path)
    with pytest.raises(ValueError, match="split must be one of"):
        load_ud_treebank("xx_one", "validation", data_home=tmp_path)
    monkeypatch.delenv("SKLEARN_STRUCTURED_DATA", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    with pytest.raises(FileNotFoundError, match="SKLEARN_STRUCTURED_DATA is not set"):
        load_ud_treebank("UD_English-EWT", "test")


def test_a_prefix_reads_the_current_release_and_an_older_one_only_by_name(tmp_path):
    _fake_release(tmp_path / "ud")
    older = tmp_path / "ud" / "UD_Tiny-Two_r1"
    (older / "xx_two-ud-test.conllu").write_text(TINY * 3)
    (older / "xx_two-ud-train.conllu.xz").write_bytes(lzma.compress(TINY.encode() * 2))
    assert len(load_ud_treebank("xx_two", "test", data_home=tmp_path)[0]) == 1
    assert len(load_ud_treebank("UD_Tiny-Two_r1", "test", data_home=tmp_path)[0]) == 3
    assert len(load_ud_treebank("UD_Tiny-Two_r1", "train", data_home=tmp_path)[0]) == 2
    # the current release has no train file: the older one is named, not read
    for name in ("xx_two", "UD_Tiny-Two"):
        with pytest.raises(FileNotFoundError, match="older release") as info:
            load_ud_treebank(name, "train", data_home=tmp_path)
        assert str(older / "xx_two-ud-train.conllu.xz") in str(info.value)
        assert "'UD_Tiny-Two_r1'" in str(info.value)
    with pytest.raises(FileNotFoundError, match="looked for"):  # no release has a dev file
        load_ud_treebank("xx_two", "dev", data_home=tmp_path)


@pytest.mark.corpus
@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_one_rule_for_every_split_of_a_treebank_with_an_older_release(split):
    current = Path(DATA) / "ud" / "UD_Swedish-LinES"
    if (current / f"sv_lines-ud-{split}.conllu.xz").exists():
        doc = load_ud_treebank("sv_lines", split, as_document=True)
        assert str(current) in doc.source
    else:
        with pytest.raises(FileNotFoundError, match="UD_Swedish-LinES_r2.4"):
            load_ud_treebank("sv_lines", split)
    doc = load_ud_treebank("UD_Swedish-LinES_r2.4", split, as_document=True)
    assert "UD_Swedish-LinES_r2.4" in doc.source


@pytest.mark.corpus
def test_load_ud_treebank_real():
    X, y = load_ud_treebank("en_ewt", "dev")
    assert len(X) == 2001 and sum(map(len, X)) == 25147
    X2, y2 = load_ud_treebank("UD_English-EWT", "dev", data_home=Path(DATA) / "ud")
    assert X2 == X and all(np.array_equal(a, b) for a, b in zip(y, y2))


# --- embedded sample ---


def test_sample_treebank_sizes_and_validity():
    X, y = load_sample_treebank()
    Xt, yt, labels = load_sample_treebank("test", return_labels=True)
    Xa, ya = load_sample_treebank("all")
    assert (len(X), len(Xt), len(Xa)) == (300, 100, 400)
    assert Xa == X + Xt
    assert all(3 <= len(s) <= 40 for s in Xa)
    check_dependency_data(Xa, ya)  # heads form single-rooted trees
    assert all(len(s) == len(lab) for s, lab in zip(Xt, labels))
    assert any(t["upos"] == "PUNCT" for s in X for t in s)
    with pytest.raises(ValueError, match="subset"):
        load_sample_treebank("dev")


def test_sample_treebank_ships_small_with_its_licence():
    total = sum(p.stat().st_size for p in PACKAGE_DATA.iterdir())
    assert total < 1_000_000
    licence = (PACKAGE_DATA / "LICENSE-UD_English-EWT.txt").read_text()
    assert "Attribution-ShareAlike 4.0 International" in licence
    readme = (PACKAGE_DATA / "README-en_ewt-sample.txt").read_text()
    assert "15d613d8447b3478787d4c278730a1e48a945efb" in readme and "CC BY-SA 4.0" in readme
    pyproject = (PACKAGE_DATA.parents[2] / "pyproject.toml").read_text()
    assert '"sklearn_structured.datasets" = ["data/*"]' in pyproject


@pytest.mark.corpus
def test_sample_sentences_are_verbatim_ewt_sentences():
    for split in ["train", "test"]:
        full = {s.metadata["sent_id"]: s for s in load_ud_treebank("en_ewt", split, as_document=True)}
        sample = load_sample_treebank(split, as_document=True)
        assert all(full[s.metadata["sent_id"]] == s for s in sample)


# --- bracketed trees ---

TREE = (
    "( (S (NP-SBJ-1 (DT The) (NN cat)) (, ,) (VP (VBD sat) (NP (-NONE- *-1)) "
    "(PP-LOC (IN on) (NP (DT the) (NN mat)))) (. .)) )"
)


def test_bracketed_tree_defaults():
    sentences, spans = read_bracketed_trees([TREE])
    assert sentences == [["The", "cat", ",", "sat", "on", "the", "mat", "."]]
    # S, NP, VP, PP, NP; the NP holding only the trace is gone
    assert spans == [[(0, 2), (0, 8), (3, 7), (4, 7), (5, 7)]]


def test_bracketed_tree_options():
    sentences, spans, tags = read_bracketed_trees(
        [TREE], remove_punctuation=True, lowercase=True, return_labels=True, return_tags=True
    )
    assert sentences == [["the", "cat", "sat", "on", "the", "mat"]]
    assert tags == [["DT", "NN", "VBD", "IN", "DT", "NN"]]
    assert spans == [[(0, 6, "S"), (0, 2, "NP"), (2, 6, "VP"), (3, 6, "PP"), (4, 6, "NP")]]
    sentences, spans = read_bracketed_trees(
        [TREE], remove_empty=False, strip_function_tags=False, return_labels=True
    )
    assert sentences[0][4] == "*-1"
    assert (0, 2, "NP-SBJ-1") in spans[0] and (4, 5, "NP") in spans[0] and (5, 8, "PP-LOC") in spans[0]
    sentences, _ = read_bracketed_trees([TREE], remove_punctuation={","})
    assert sentences[0] == ["The", "cat", "sat", "on", "the", "mat", "."]
    assert {"``", "''", ",", ".", ":", "-LRB-", "-RRB-", "#", "$"} == PTB_PUNCTUATION_TAGS


def test_bracketed_trees_unary_chain_and_multiline(tmp_path):
    text = "(ROOT\n  (S (NP (PRP It))\n     (VP (VBZ works))))\n\n(X (Y (Z a) (Z b)))\n"
    path = tmp_path / "trees.mrg"
    path.write_text(text)
    sentences, spans = read_bracketed_trees(path)
    assert sentences == [["It", "works"], ["a", "b"]]
    assert spans == [[(0, 1), (0, 2), (1, 2)], [(0, 2)]]
    _, labelled = read_bracketed_trees(io.StringIO(text), return_labels=True)
    assert labelled[0] == [(0, 2, "ROOT"), (0, 2, "S"), (0, 1, "NP"), (1, 2, "VP")]


@pytest.mark.parametrize(
    "lines, message",
    [
        (["(S (NP (DT a))", " (NP b (DT c)))"], r"<lines>:2: constituent 'NP' mixes words"),
        (["(S (NP (DT a)))", ")"], r"<lines>:2: '\)' with no matching"),
        (["(S (NP (DT a))"], r"<lines>:1: tree starting here is missing 1"),
        (["word (S (DT a))"], r"<lines>:1: text 'word' outside"),
        (["(S (X (-NONE- *T*)))"], r"<lines>:1: tree has no words left"),
    ],
)
def test_bracketed_tree_errors(lines, message):
    with pytest.raises(ValueError, match=message):
        read_bracketed_trees(lines)


@st.composite
def _trees(draw, depth=0):
    """A random tree as (bracketed string, words, set of phrase spans relative to its start)."""
    if depth >= 3 or draw(st.booleans()):
        word = draw(st.sampled_from(["a", "b", "c"]))
        tag = draw(st.sampled_from(["DT", "NN", ",", "-NONE-"]))
        return f"({tag} {word})", [(tag, word)]
    children = draw(st.lists(_trees(depth=depth + 1), min_size=1, max_size=3))
    label = draw(st.sampled_from(["NP", "VP-SBJ", "S-2"]))
    return f"({label} " + " ".join(c[0] for c in children) + ")", [leaf for c in children for leaf in c[1]]


def _spans_by_brute_force(text, dropped):
    """Spans found by scanning the bracket string with a counter of kept leaves."""
    tokens = text.replace("(", " ( ").replace(")", " ) ").split()
    spans, opened, n, i = set(), [], 0, 0
    while i < len(tokens):
        if tokens[i] == "(" and tokens[i + 3] == ")" and tokens[i + 2] != "(":
            n += tokens[i + 1] not in dropped
            i += 4
        elif tokens[i] == "(":
            opened.append(n)
            i += 2
        else:
            start = opened.pop()
            if n > start:
                spans.add((start, n))
            i += 1
    return sorted(spans)


@settings(max_examples=80, deadline=None)
@given(_trees(), st.booleans())
def test_bracketed_tree_spans_property(tree, remove_punctuation):
    text, leaves = tree
    dropped = {"-NONE-"} | ({","} if remove_punctuation else set())
    kept = [w for t, w in leaves if t not in dropped]
    if not kept:
        with pytest.raises(ValueError, match="no words left"):
            read_bracketed_trees([text], remove_punctuation=remove_punctuation)
        return
    sentences, spans = read_bracketed_trees([text], remove_punctuation=remove_punctuation)
    assert sentences == [kept]
    assert spans == [_spans_by_brute_force(text, dropped)]


@pytest.mark.corpus
def test_ptb_wsj_sample_matches_data_md():
    sentences, spans = load_ptb_wsj_sample()
    assert len(sentences) == 3914 and sum(map(len, sentences)) == 94084
    with_empty, _ = load_ptb_wsj_sample(remove_empty=False)
    assert sum(map(len, with_empty)) == 100676
    no_punct, spans_np = load_ptb_wsj_sample(remove_punctuation=True)
    for words, s in zip(no_punct, spans_np):
        n = len(words)
        assert (0, n) in s and all(0 <= i < j <= n for i, j in s)
        open_ends = []  # the spans must nest: no two brackets cross
        for i, j in sorted(s, key=lambda span: (span[0], -span[1])):
            while open_ends and open_ends[-1] <= i:
                open_ends.pop()
            assert not open_ends or j <= open_ends[-1]
            open_ends.append(j)


def test_ptb_wsj_sample_locations(tmp_path):
    with pytest.raises(FileNotFoundError, match="ptb_wsj_sample_nltk.mrg"):
        load_ptb_wsj_sample(data_home=tmp_path)
    (tmp_path / "ptb_wsj_sample_nltk.mrg").write_text(TREE + "\n")  # data_home is the folder itself
    assert load_ptb_wsj_sample(data_home=tmp_path, lowercase=True)[0][0][:2] == ["the", "cat"]


# --- tokenised text ---


def test_read_tokenized_text(tmp_path):
    path = tmp_path / "lm.txt.gz"
    with gzip.open(path, "wt") as f:
        f.write(" the cat sat \n\n a dog\n")
    assert read_tokenized_text(path) == [["the", "cat", "sat"], ["a", "dog"]]
    assert read_tokenized_text(io.StringIO(" x y\n"), eos="<eos>") == [["x", "y", "<eos>"]]


@pytest.mark.corpus
def test_ptb_lm_matches_data_md():
    valid = load_ptb_lm("valid")
    assert len(valid) == 3370 and sum(map(len, valid)) == 70390
    test = load_ptb_lm("test", eos="<eos>")
    assert len(test) == 3761 and sum(map(len, test)) == 82430 and test[0][-1] == "<eos>"
    assert load_ptb_lm("dev") == valid
    with pytest.raises(ValueError, match="split"):
        load_ptb_lm("validation")


def test_ptb_lm_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"ptb\.test\.txt"):
        load_ptb_lm("test", data_home=tmp_path)
