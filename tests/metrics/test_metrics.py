import io

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


# --- malformed input is refused, not scored --------------------------------------

@pytest.mark.parametrize("y_true, y_pred, message", [
    (["NN"], [["N", "N"]], r"y_true\[0\] is a str"),
    ([["NN", "VB"]], ["NV"], r"y_pred\[0\] is a str"),
    ([["NN"]], [5], r"y_pred\[0\] is a int"),
])
def test_token_accuracy_refuses_strings_for_sequences(y_true, y_pred, message):
    from sklearn_structured.metrics import token_accuracy

    with pytest.raises(ValueError, match=message):
        token_accuracy(y_true, y_pred)


@pytest.mark.parametrize("gold, pred, lengths, message", [
    ([[(0, 3), (2, 1)]], [[(0, 3)]], None, r"gold_spans\[0\]: span \(2, 1\)"),
    ([[(0, 3)]], [[(1, 1)]], None, r"pred_spans\[0\]: span \(1, 1\)"),
    ([[(0, 3)]], [[(-1, 2)]], None, "0 <= i < j"),
    ([[(0, 3)]], [[(0, 4)]], [3], "<= 3"),
    ([[(0, 3)]], [[(0.5, 2)]], None, "integers"),
    ([[(0, 3)]], [[(0, 1, 2)]], None, "not a pair"),
])
def test_bracket_f1_refuses_malformed_spans(gold, pred, lengths, message):
    from sklearn_structured.metrics import bracket_f1

    with pytest.raises(ValueError, match=message):
        bracket_f1(gold, pred, lengths=lengths)


@pytest.mark.parametrize("pred, labels_pred, message", [
    ([np.array([[2], [0]])], None, r"y_pred\[0\].*1-D"),
    ([np.array([2.5, 0])], None, r"y_pred\[0\].*integers"),
    ([np.array([2, 0])], ["nsubjroot"], r"labels_pred\[0\] is a str"),
    ([np.array([2, 0])], [["nsubj"]], "1 predicted labels"),
])
def test_attachment_score_refuses_malformed_heads_and_labels(pred, labels_pred, message):
    from sklearn_structured.metrics import attachment_score

    labels_true = [["nsubj", "root"]] if labels_pred is not None else None
    with pytest.raises(ValueError, match=message):
        attachment_score([np.array([2, 0])], pred, punct="include",
                         labels_true=labels_true, labels_pred=labels_pred)


def test_pairs_give_las_and_heads_give_uas():
    from sklearn_structured.metrics import attachment_score

    X = [[{"form": "Dogs", "upos": "NOUN"}, {"form": "bark", "upos": "VERB"},
          {"form": ".", "upos": "PUNCT"}]]
    gold = [(np.array([2, 0, 2]), ["nsubj", "root", "punct"])]
    # right heads, one wrong label on a scored word, one on punctuation (not scored)
    pred = [(np.array([2, 0, 2]), ["obj", "root", "dep"])]
    assert attachment_score(gold, pred, X) == 0.5
    assert attachment_score(gold, pred, X, punct="include") == pytest.approx(1 / 3)
    # heads only on either side: UAS
    assert attachment_score(gold, [np.array([2, 0, 2])], X) == 1.0
    assert attachment_score([np.array([2, 0, 2])], pred, X) == 1.0
    scores = attachment_score(gold, pred, X, return_all=True)
    assert (scores.uas, scores.las) == (1.0, 0.5)
    # the keyword labels keep their meaning: the float is the UAS
    assert attachment_score([gold[0][0]], [pred[0][0]], X, labels_true=[gold[0][1]],
                            labels_pred=[pred[0][1]]) == 1.0


@pytest.mark.parametrize("pred, message", [
    ([(np.array([2, 0]), ["nsubj"])], r"y_pred\[0\] has 2 heads but 1 labels"),
    ([(np.array([2, 0]), ["nsubj", 3])], r"y_pred\[0\]: label 1 is 3"),
    ([(np.array([2, 0]), ["nsubj", ""])], r"y_pred\[0\]: label 1 is ''"),
    ([(np.array([2, 0]), ["a", "root"]), np.array([2, 0])], r"y_pred\[1\] holds heads only"),
])
def test_malformed_pairs_name_the_sentence(pred, message):
    from sklearn_structured.metrics import attachment_score

    gold = [(np.array([2, 0]), ["nsubj", "root"])] * len(pred)
    with pytest.raises(ValueError, match=message):
        attachment_score(gold, pred, punct="include")


def test_scorers_on_pairs():
    from sklearn_structured.metrics import las_scorer, uas_scorer

    X = [["a", "b", "c"]]
    gold = [(np.array([2, 0, 2]), ["x", "root", "y"])]

    class Fixed:
        def __init__(self, prediction):
            self.prediction = prediction

        def predict(self, X):
            return self.prediction

    # word 2: right head, wrong label; word 3: wrong head
    labelled = Fixed([(np.array([2, 0, 1]), ["x", "dep", "y"])])
    assert uas_scorer(labelled, X, gold) == pytest.approx(2 / 3)
    assert las_scorer(labelled, X, gold) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="the prediction holds heads only"):
        las_scorer(Fixed([np.array([2, 0, 2])]), X, gold)
    with pytest.raises(ValueError, match="y holds heads only"):
        las_scorer(labelled, X, [np.array([2, 0, 2])])


def _document(heads, upos, deprels=("nsubj", "root", "advmod", "punct")):
    """SENTENCE as a CoNLL-U document with these columns."""
    from sklearn_structured.datasets import read_conllu

    rows = [f"{i}\t{t['form']}\t_\t{u}\t_\t_\t{h}\t{d}\t_\t_"
            for i, (t, u, h, d) in enumerate(zip(SENTENCE, upos, heads, deprels), start=1)]
    return read_conllu(io.StringIO("\n".join(rows) + "\n\n"))


def test_evaluate_scores_conllu_documents_column_by_column():
    from sklearn_structured import evaluate

    gold = _document(GOLD[0], [t["upos"] for t in SENTENCE])
    pred = _document([2, 0, 1, 3], ["NOUN", "VERB", "ADJ", "PUNCT"],
                     ("nsubj", "root", "amod", "punct"))
    scores = evaluate(gold, pred)
    assert scores["upos"] == pytest.approx(3 / 4)
    assert scores["xpos"] is None and scores["feats"] is None and scores["lemma"] is None
    assert scores["uas"] == pytest.approx(2 / 3) and scores["las"] == pytest.approx(2 / 3)
    assert scores["n_words"] == 3 and scores["n_sentences"] == 1
    assert evaluate(gold, pred, punct="include")["uas"] == pytest.approx(2 / 4)
    # a tagger's output: no HEAD, no DEPREL; the tags are scored, the trees are not
    tagged = _document(["_"] * 4, [t["upos"] for t in SENTENCE], ["_"] * 4)
    scores = evaluate(gold, tagged)
    assert scores["upos"] == 1.0 and scores["uas"] is None and scores["las"] is None
    # heads without relations: UAS, and no LAS
    unlabelled = evaluate(gold, _document(GOLD[0], ["_"] * 4, ["_"] * 4))
    assert unlabelled["uas"] == 1.0 and unlabelled["las"] is None and unlabelled["upos"] is None


def test_evaluate_refuses_other_words():
    from sklearn_structured import evaluate

    gold = _document(GOLD[0], [t["upos"] for t in SENTENCE])
    other = _document(GOLD[0], [t["upos"] for t in SENTENCE])
    other[0].words[0][1] = "Cats"
    with pytest.raises(ValueError, match="sentence 1 of .* has other words"):
        evaluate(gold, other)
