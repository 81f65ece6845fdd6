"""The corpus encoding layer: one reading of tokens, packed into integer arrays."""

import numpy as np
import pytest

from sklearn_structured.utils import (
    FIELDS,
    ROOT_ID,
    encode_corpus,
    fit_vocabularies,
    token_values,
)

SENTENCES = [
    [
        {"form": "Dogs", "lemma": "dog", "upos": "NOUN", "xpos": "NNS",
         "feats": "Number=Plur", "deprel": "nsubj"},
        {"form": "bark", "lemma": "_", "upos": "VERB", "xpos": "_", "feats": "_",
         "deprel": "root"},
    ],
    ["Cats", "sleep", "."],
]


def test_fall_backs_are_one_documented_policy():
    assert token_values(SENTENCES, "form") == ["Dogs", "bark", "Cats", "sleep", "."]
    assert token_values(SENTENCES, "lower") == ["dogs", "bark", "cats", "sleep", "."]
    # a missing lemma is the form; a missing tag is the other tag, then the form
    assert token_values(SENTENCES, "lemma") == ["dog", "bark", "Cats", "sleep", "."]
    assert token_values(SENTENCES, "upos") == ["NOUN", "VERB", "Cats", "sleep", "."]
    assert token_values(SENTENCES, "xpos") == ["NNS", "VERB", "Cats", "sleep", "."]
    assert token_values(SENTENCES, "feats") == [["Number=Plur"], [], [], [], []]
    assert token_values(SENTENCES, "deprel") == ["nsubj", "root", None, None, None]


def test_packed_fields_with_and_without_root_slots():
    vocabularies = fit_vocabularies(SENTENCES, FIELDS)
    plain = encode_corpus(SENTENCES, vocabularies)
    np.testing.assert_array_equal(plain.offsets, [0, 2, 5])
    assert plain.n_sentences == 2
    itos = vocabularies["upos"].itos
    assert [itos[i] for i in plain["upos"]] == token_values(SENTENCES, "upos")

    rooted = encode_corpus(SENTENCES, vocabularies, root=True)
    np.testing.assert_array_equal(rooted.offsets, [0, 3, 7])
    for field in FIELDS:
        if field == "feats":
            continue
        ids = rooted[field]
        assert ids[0] == ids[3] == ROOT_ID
        np.testing.assert_array_equal(np.delete(ids, [0, 3]), plain[field])
    # the ragged field: one run of item ids per slot, none at the root slots
    np.testing.assert_array_equal(rooted["feats_offsets"], [0, 0, 1, 1, 1, 1, 1, 1])
    assert vocabularies["feats"].itos[rooted["feats"][0]] == "Number=Plur"


def test_unseen_and_missing_values_get_the_unknown_id():
    vocabularies = fit_vocabularies(SENTENCES, ("form", "deprel"))
    corpus = encode_corpus([["Birds", "bark"]], vocabularies)
    assert corpus["form"][0] == 0 and corpus["form"][1] != 0
    assert list(corpus["deprel"]) == [0, 0]  # str tokens carry no relation


def test_unknown_field_names_are_refused():
    with pytest.raises(ValueError, match="unknown corpus fields"):
        fit_vocabularies(SENTENCES, ("form", "pos"))


def test_word_type_ids_are_the_ids_of_each_forms_strings():
    from sklearn_structured.utils import Vocabulary, word_type_ids

    def describe(form):
        return [form[:1] or None, form[-2:] if len(form) >= 2 else None]

    forms = ["dogs", "a", "", "dogs", "cats", "zz"]
    vocabulary = Vocabulary(["d", "gs", "ts", "a", "c"])
    expected = [[vocabulary.stoi.get(s, 0) for s in describe(f)] for f in forms]
    assert word_type_ids(forms, describe, vocabulary).tolist() == expected


def test_kept_positions_match_a_dictionary_look_up():
    from sklearn_structured.kernels.hashing import kept_positions

    rng = np.random.default_rng(0)
    kept = np.unique(rng.integers(0, 2**62, 500))
    # kept and unseen hashes, absent features (-1), in random order, as a 2-D block
    keys = np.concatenate([rng.choice(kept, 300), rng.integers(0, 2**62, 100),
                           np.full(50, -1)]).reshape(90, 5)
    rng.shuffle(keys.ravel())
    index = {k: i for i, k in enumerate(kept.tolist())}
    expected = [[index.get(k, -1) for k in row] for row in keys.tolist()]
    assert kept_positions(keys, kept).tolist() == expected
    assert kept_positions(keys, kept[:0]).tolist() == [[-1] * 5] * 90
