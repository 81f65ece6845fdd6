"""Edit scripts from forms to lemmas, and the training dictionary."""

import pytest

from sklearn_structured.datasets import load_sample_treebank, load_ud_treebank
from sklearn_structured.easy_first._edit_scripts import (
    apply_script,
    encode_script,
    lemma_dictionary,
    script_applies,
)


def _pairs(X):
    return [(t["form"], t["lemma"]) for s in X for t in s]


@pytest.mark.parametrize("form, lemma, script", [
    ("dogs", "dog", "l:0:1:0:"),
    ("Dogs", "dog", "l:0:1:0:"),        # same script as the lower-case form
    ("The", "the", "l:0:0:0:"),
    ("Al", "Al", "t:0:0:0:"),           # first letter upper
    ("APPLES", "Apple", "t:0:1:0:"),
    ("NASA", "NASA", "k:0:0:0:"),       # as is
    ("studies", "study", "l:0:3:0:y"),
    ("unhappy", "happy", "l:2:0:0:"),   # a cut at the start
    ("went", "go", "l:0:4:0:go"),       # nothing in common
    ("a:b", "x:b", "l:1:0:1:x"),        # a colon in the added text
])
def test_known_scripts(form, lemma, script):
    assert encode_script(form, lemma) == script
    assert apply_script(form, script) == lemma


def test_a_script_generalises_to_other_forms():
    assert apply_script("Cats", encode_script("dogs", "dog")) == "cat"
    assert apply_script("carries", encode_script("studies", "study")) == "carry"
    assert apply_script("Paris", encode_script("Al", "Al")) == "Paris"


def test_a_script_that_does_not_fit_falls_back_to_the_form():
    script = encode_script("studies", "study")  # cuts 3 characters
    assert not script_applies("is", script)
    assert apply_script("is", script) == "is"
    assert script_applies("ties", script) and apply_script("ties", script) == "ty"


def _assert_round_trip(pairs):
    bad = [(f, l) for f, l in pairs if apply_script(f, encode_script(f, l)) != l]
    assert not bad, bad[:10]


def test_round_trip_on_the_sample():
    X, _ = load_sample_treebank("train")
    Xt, _ = load_sample_treebank("test")
    pairs = set(_pairs(X) + _pairs(Xt))
    assert len(pairs) > 1000
    _assert_round_trip(pairs)


@pytest.mark.slow
@pytest.mark.corpus
def test_round_trip_on_ewt_train():
    X, _ = load_ud_treebank("en_ewt", "train")
    pairs = set(_pairs(X))
    assert len(pairs) > 20000
    _assert_round_trip(pairs)  # every pair is representable: the 'k' rule always is


def test_dictionary_keeps_the_most_frequent_lemma():
    forms = ["saw", "saw", "saw", "dogs", "Zeta"]
    lemmas = ["see", "saw", "see", "dog", "Zeta"]
    keys, values = lemma_dictionary(forms, lemmas)
    assert keys.dtype.kind == values.dtype.kind == "U"
    assert dict(zip(keys.tolist(), values.tolist())) == {"saw": "see", "dogs": "dog",
                                                          "Zeta": "Zeta"}
