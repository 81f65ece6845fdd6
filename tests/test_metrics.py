import numpy as np
import pytest

from sklearn_structured.metrics import (
    attachment_score,
    bracket_f1,
    is_punctuation,
    perplexity,
    token_accuracy,
)

SENTENCE = [
    {"form": "Dogs", "upos": "NOUN"},
    {"form": "bark", "upos": "VERB"},
    {"form": "loudly", "upos": "ADV"},
    {"form": ".", "upos": "PUNCT"},
]
GOLD = [np.array([2, 0, 2, 2])]


def test_uas_excludes_punctuation_by_upos():
    pred = [np.array([2, 0, 1, 3])]  # "loudly" wrong, "." wrong
    assert attachment_score(GOLD, pred, [SENTENCE]) == pytest.approx(2 / 3)
    assert attachment_score(GOLD, pred, [SENTENCE], punct="include") == pytest.approx(2 / 4)


def test_punctuation_fallback_on_forms_without_upos():
    assert is_punctuation(".") and is_punctuation({"form": "--"})
    assert not is_punctuation("dog") and not is_punctuation({"form": "."  , "upos": "SYM"})


def test_exclude_without_X_is_an_error():
    with pytest.raises(ValueError, match="needs X"):
        attachment_score(GOLD, GOLD)


def test_las_and_complete_match():
    pred = [np.array([2, 0, 2, 1]), np.array([0, 1])]
    gold = GOLD + [np.array([0, 1])]
    X = [SENTENCE, ["Hi", "there"]]
    labels_gold = [["nsubj", "root", "advmod", "punct"], ["root", "dep"]]
    labels_pred = [["nsubj", "root", "obj", "punct"], ["root", "dep"]]
    scores = attachment_score(
        gold, pred, X, labels_true=labels_gold, labels_pred=labels_pred, return_all=True
    )
    assert scores.uas == pytest.approx(1.0)  # the only wrong head is punctuation
    assert scores.las == pytest.approx(4 / 5)
    assert scores.complete_match == pytest.approx(1.0)
    assert scores.n_words == 5


def test_length_mismatch_is_reported():
    with pytest.raises(ValueError, match="sentence 0"):
        attachment_score(GOLD, [np.array([0, 1])], punct="include")


def test_uas_matches_conll2018_definition_on_a_real_file(ewt_dev):
    """CoNLL 2018 UAS on gold segmentation: correct heads / all syntactic words."""
    X, y = ewt_dev
    rng = np.random.default_rng(0)
    pred = []
    for heads in y:
        p = heads.copy()
        flip = rng.random(len(p)) < 0.2
        p[flip] = rng.integers(0, len(p) + 1, flip.sum())
        pred.append(p)
    correct = sum(int((a == b).sum()) for a, b in zip(y, pred))
    words = sum(len(a) for a in y)
    assert attachment_score(y, pred, X, punct="include") == pytest.approx(correct / words)
    excluded = attachment_score(y, pred, X)
    assert 0 < excluded < 1 and excluded != pytest.approx(correct / words)


def test_token_accuracy():
    assert token_accuracy([["a", "b"], ["c"]], [["a", "x"], ["c"]]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        token_accuracy([["a"]], [["a", "b"]])


def test_bracket_f1_sentence_and_corpus():
    # n = 4: gold ((0 1) (2 3)) as spans (0,2) (2,4); prediction right-branching (1,4) (2,4)
    gold = [[(0, 4), (0, 2), (2, 4), (0, 1), (1, 2), (2, 3), (3, 4)]]
    pred = [[(0, 4), (1, 4), (2, 4), (0, 1), (1, 2), (2, 3), (3, 4)]]
    assert bracket_f1(gold, pred) == pytest.approx(0.5)
    assert bracket_f1(gold, pred, average="corpus") == pytest.approx(0.5)
    # a length-2 sentence has nothing to score and counts as perfect; length 1 is skipped
    assert bracket_f1(gold + [[(0, 2)], [(0, 1)]], pred + [[(0, 2)], [(0, 1)]]) == pytest.approx(0.75)


def test_corpus_f1_counts_duplicated_gold_spans():
    gold = [[(0, 2), (0, 2), (0, 3)]]  # a unary chain repeats (0, 2)
    assert bracket_f1(gold, [[(1, 3)]], average="corpus", lengths=[3]) == 0.0
    assert bracket_f1(gold, [[(0, 2)]], average="corpus", lengths=[3]) == pytest.approx(1.0)
    # two misses when the prediction lacks the repeated span
    recall_only = bracket_f1([[(0, 2), (0, 2), (1, 3)]], [[(1, 3)]], average="corpus", lengths=[3])
    assert recall_only == pytest.approx(2 * 1 * (1 / 3) / (1 + 1 / 3))


def test_perplexity():
    assert perplexity([np.log(0.5) * 3, np.log(0.5)], [3, 1]) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        perplexity([0.0], 0)
