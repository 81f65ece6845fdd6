"""The CoNLL 2018 figures for files tokenised differently from gold."""

import io

import pytest

from sklearn_structured.datasets import read_conllu
from sklearn_structured.metrics import aligned_scores


def document(*sentences):
    """A CoNLL-U document from sentences given as lists of tokens.

    A token is ``"form"`` (one word) or ``"form=w1+w2"`` (a multiword token
    and its words). Every word attaches to the previous word (the first to
    the root) with relation ``dep``, unless ``rows`` overrides columns.
    """
    lines = []
    for tokens in sentences:
        n = 0
        for token in tokens:
            form, _, words = token.partition("=")
            words = words.split("+") if words else [form]
            if len(words) > 1:
                lines.append(f"{n + 1}-{n + len(words)}\t{form}" + "\t_" * 8)
            for word in words:
                n += 1
                lines.append(f"{n}\t{word}\t{word.lower()}\tX\t_\t_\t{n - 1}\tdep\t_\t_")
        lines.append("")
    return read_conllu(io.StringIO("\n".join(lines) + "\n"))


def edit(doc, sentence, word, **columns):
    """Set columns of one word (1-based ``word`` among the sentence's word rows)."""
    names = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")
    row = doc[sentence].words[word - 1]
    for name, value in columns.items():
        row[names.index(name)] = str(value)
    return doc


def f1(scores, name):
    return scores[name].f1


def words_found(gold, system):
    scores = aligned_scores(document(gold), document(system))
    return scores["Words"].correct, scores["Words"].gold, scores["Words"].system


@pytest.mark.parametrize("gold, system, correct", [
    (["a", "b", "c"], ["a", "b", "c"], 3),
    # the words of a multiword token align with plain tokens of the same forms
    (["xyz=x+y+z"], ["x", "y", "z"], 3),
    (["p", "qr=q+r", "s"], ["p", "q", "r", "s"], 4),
    (["wxyz=w+x+y+z"], ["wx=w+x", "yz=y+z"], 4),
    # a token the system splits or merges loses every word it touches
    (["abcd"], ["a", "b", "c", "d"], 0),
    (["ab", "c"], ["a", "b", "c"], 1),
    (["p", "qr", "s"], ["p", "q", "r", "s"], 2),
    # inside a multiword region, words pair up by their lower-cased forms
    (["vo=de+o", "gato"], ["vo=De+O", "gato"], 3),
    (["vo=de+o", "gato"], ["vo=da+o", "gato"], 2),
    (["p", "qr=q+r", "s"], ["p", "q", "rs"], 2),
    (["mnop=m+N+o", "st=s+t"], ["mn=m+n", "op=o+p", "st=s+t"], 5),
])
def test_words_are_aligned_on_characters_then_forms(gold, system, correct):
    n_gold = sum(len(t.partition("=")[2].split("+")) if "=" in t else 1 for t in gold)
    n_system = sum(len(t.partition("=")[2].split("+")) if "=" in t else 1 for t in system)
    assert words_found(gold, system) == (correct, n_gold, n_system)


def test_identical_files_score_one_everywhere():
    gold = document(["The", "cat", "sat"], ["vo=de+o"])
    scores = aligned_scores(gold, document(["The", "cat", "sat"], ["vo=de+o"]))
    assert all(score.f1 == 1.0 for score in scores.values())
    assert set(scores) == {"Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags",
                           "Lemmas", "UAS", "LAS", "CLAS", "MLAS", "BLEX"}


def test_tokens_and_sentences_are_spans():
    gold = document(["a", "b"], ["c", "d"])
    system = document(["a", "b", "c", "d"])  # one sentence where gold has two
    scores = aligned_scores(gold, system)
    assert scores["Sentences"].correct == 0 and scores["Sentences"].system == 1
    assert scores["Tokens"].f1 == 1.0 and scores["Words"].f1 == 1.0
    # a multiword token is one token
    scores = aligned_scores(document(["vo=de+o"]), document(["v", "o"]))
    assert (scores["Tokens"].correct, scores["Tokens"].gold, scores["Tokens"].system) == (0, 1, 2)


def test_heads_are_followed_through_the_alignment():
    gold = document(["a", "bc", "d"])
    # the system splits "bc": d's head is the word "c", which aligns with nothing
    system = document(["a", "b", "c", "d"])
    scores = aligned_scores(gold, system)
    assert scores["Words"].correct == 2
    assert scores["UAS"].correct == 1  # a (the root) is right, d's head is not aligned
    assert scores["UAS"].precision == 1 / 4 and scores["UAS"].recall == 1 / 3
    assert scores["UAS"].aligned_accuracy == 1 / 2


def test_relations_without_subtypes_and_universal_features_only():
    gold = edit(document(["a", "b"]), 0, 2, deprel="obl:tmod", feats="Case=Nom|Foo=Bar")
    system = edit(document(["a", "b"]), 0, 2, deprel="obl:npmod", feats="Case=Nom|Foo=Baz")
    scores = aligned_scores(gold, system)
    assert f1(scores, "LAS") == 1.0 and f1(scores, "UFeats") == 1.0


def test_a_gold_lemma_underscore_accepts_any_lemma():
    gold = edit(document(["a", "b"]), 0, 2, lemma="_")
    system = edit(document(["a", "b"]), 0, 2, lemma="anything")
    assert f1(aligned_scores(gold, system), "Lemmas") == 1.0
    assert f1(aligned_scores(system, gold), "Lemmas") == 0.5


def test_content_words_and_their_function_children():
    def sentence(case_feats):
        doc = document(["in", "house"])  # "in" (case) attaches to "house" (root)
        edit(doc, 0, 1, head=2, deprel="case", feats=case_feats)
        return edit(doc, 0, 2, head=0, deprel="root")
    gold, system = sentence("Case=Loc"), sentence("Case=Dat")
    scores = aligned_scores(gold, system)
    assert scores["CLAS"].gold == 1  # only "house" is a content word
    assert f1(scores, "CLAS") == 1.0 and f1(scores, "LAS") == 1.0
    assert f1(scores, "MLAS") == 0.0  # its case child's features differ
    assert f1(scores, "BLEX") == 1.0


def test_a_system_file_without_heads_gets_the_tag_figures():
    gold = document(["a", "b"])
    system = edit(edit(document(["a", "b"]), 0, 1, head="_"), 0, 2, head="_")
    scores = aligned_scores(gold, system)
    assert "UAS" not in scores and f1(scores, "UPOS") == 1.0


def test_different_text_is_refused_with_the_place():
    with pytest.raises(ValueError, match=r"character 3: 'd' against 'x'"):
        aligned_scores(document(["ab", "cd"]), document(["ab", "cx"]))


def test_spaces_inside_forms_do_not_count():
    gold = document(["New York", "is"])
    system = document(["New", "York", "is"])
    scores = aligned_scores(gold, system)
    assert scores["Words"].correct == 1 and scores["Tokens"].correct == 1


def test_a_cycle_in_either_file_is_refused():
    system = edit(edit(document(["a", "b", "c"]), 0, 1, head=2), 0, 2, head=1)
    with pytest.raises(ValueError, match="system"):
        aligned_scores(document(["a", "b", "c"]), system)
