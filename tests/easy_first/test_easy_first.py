"""Estimator tests of EasyFirstBeamParser and EasyFirstBeamTagger."""

import re
from collections import Counter, defaultdict

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_structured.datasets import load_sample_treebank, load_ud_treebank
from sklearn_structured.easy_first import EasyFirstBeamParser, EasyFirstBeamTagger
from sklearn_structured.easy_first._edit_scripts import apply_script
from sklearn_structured.metrics import attachment_score
from sklearn_structured.utils import find_heads_error, training_step
from sklearn_structured.utils.estimator_checks import (assert_same_predictions,
                                                       check_structured_estimator)

X_TRAIN, Y_TRAIN = load_sample_treebank("train")
X_TEST, Y_TEST = load_sample_treebank("test")


def _tags(X, field):
    return [[token[field] for token in sentence] for sentence in X]


def _words_only(X):
    return [[{"form": token["form"]} for token in sentence] for sentence in X]


# --- API ---------------------------------------------------------------------

def test_parser_api():
    check_structured_estimator(
        EasyFirstBeamParser(beam_size=2, n_epochs=1, n_features=2**14, random_state=0),
        X_TRAIN[:40], Y_TRAIN[:40],
        param_grid={"beam_size": [1, 2], "n_epochs": [1, 2]},
        epochs_param="n_epochs",
    )


def test_tagger_api():
    check_structured_estimator(
        EasyFirstBeamTagger(beam_size=2, n_epochs=1, random_state=0),
        X_TRAIN[:40], _tags(X_TRAIN[:40], "upos"),
        param_grid={"beam_size": [1, 2], "n_epochs": [1, 2]},
        epochs_param="n_epochs",
    )


# --- learning ------------------------------------------------------------------

def _adjacent_baseline_uas(X, y):
    """The better of 'every word heads to its left' and 'to its right' neighbour."""
    left = [np.arange(len(h)) for h in y]
    right = [np.r_[np.arange(2, len(h) + 1), 0] for h in y]
    return max(attachment_score(y, left, X=X), attachment_score(y, right, X=X))


@pytest.mark.slow
def test_parser_learns_the_sample_beating_adjacent_baseline():
    baseline = _adjacent_baseline_uas(X_TEST, Y_TEST)  # about 0.46 on this sample
    parser = EasyFirstBeamParser(beam_size=2, n_epochs=5, n_features=2**18, random_state=0)
    parser.fit(X_TRAIN, Y_TRAIN)
    uas = parser.score(X_TEST, Y_TEST)
    assert uas >= 0.70 and uas > baseline + 0.2, (uas, baseline)
    predicted = parser.predict(X_TEST)
    assert all(find_heads_error(h) is None for h in predicted)
    assert parser.n_invalid_updates_ == 0 and parser.n_updates_ > 0
    # the attachment order is a permutation of the steps
    for order, heads in zip(parser.attachment_order(X_TEST[:10]), predicted[:10]):
        assert sorted(order) == list(range(len(heads) - 1)) + [len(heads) - 1]


@pytest.mark.slow
def test_tagger_learns_the_sample_beating_most_frequent_tag():
    counts = defaultdict(Counter)
    for sentence in X_TRAIN:
        for token in sentence:
            counts[token["form"].lower()][token["upos"]] += 1
    overall = Counter(t["upos"] for s in X_TRAIN for t in s).most_common(1)[0][0]
    baseline = np.mean([
        (counts[t["form"].lower()].most_common(1)[0][0] if t["form"].lower() in counts
         else overall) == t["upos"]
        for s in X_TEST for t in s
    ])  # 0.75 on this sample
    tagger = EasyFirstBeamTagger(beam_size=1, n_epochs=10, feature_min_count=1, random_state=0)
    accuracy = tagger.fit(X_TRAIN).score(X_TEST)
    assert accuracy > baseline + 0.04, (accuracy, baseline)
    assert tagger.n_invalid_updates_ == 0


@pytest.mark.slow
def test_pipeline_tags_then_parses_raw_words():
    pipe = make_pipeline(
        EasyFirstBeamTagger(beam_size=1, n_epochs=8, n_folds=3, random_state=0),
        EasyFirstBeamParser(beam_size=1, n_epochs=5, n_features=2**18, random_state=0),
    )
    pipe.fit(X_TRAIN, Y_TRAIN)  # the tagger learns from the upos field
    raw = _words_only(X_TEST)
    heads = pipe.predict(raw)
    assert all(find_heads_error(h) is None for h in heads)
    # the parser trained on jackknifed tags parses raw words well above the baseline
    uas = attachment_score(Y_TEST, heads, X=X_TEST)
    assert uas > _adjacent_baseline_uas(X_TEST, Y_TEST) + 0.1, uas
    tagged = pipe[0].transform(raw)
    assert all("upos" in token for sentence in tagged for token in sentence)
    assert "upos" not in raw[0][0]  # transform copies tokens


def test_fit_transform_jackknifes():
    tagger = EasyFirstBeamTagger(beam_size=1, n_epochs=3, n_folds=3, random_state=0)
    X = X_TRAIN[:90]
    jackknifed = tagger.fit_transform(X)
    direct = tagger.transform(X)
    gold = _tags(X, "upos")
    # tags of held-out folds are worse than those of the model that saw every sentence
    assert (np.mean([a == b for s, g in zip(_tags(jackknifed, "upos"), gold)
                     for a, b in zip(s, g)])
            < np.mean([a == b for s, g in zip(_tags(direct, "upos"), gold) for a, b in zip(s, g)]))


def test_fit_transform_progress_lines_name_the_model_and_the_fold(capsys):
    tagger = EasyFirstBeamTagger(beam_size=1, n_epochs=1, n_folds=3, verbose=1, n_jobs=2,
                                 random_state=0)
    with training_step("step 1"):
        tagger.fit_transform(X_TRAIN[:30])
    # each line is one write, but the folds' threads may interleave the newlines
    steps = re.findall(r"\[([^\]]+)\] \[EasyFirstBeamTagger\]", capsys.readouterr().err)
    assert sorted(steps) == ["step 1 / upos tagger"] + [
        f"step 1 / upos tagger, fold {k} of 3" for k in (1, 2, 3)]

def test_tagger_ignores_integer_y_from_a_pipeline():
    a = EasyFirstBeamTagger(beam_size=1, n_epochs=1, random_state=0).fit(X_TRAIN[:30], Y_TRAIN[:30])
    b = EasyFirstBeamTagger(beam_size=1, n_epochs=1, random_state=0).fit(X_TRAIN[:30])
    assert_same_predictions(a.predict(X_TEST[:5]), b.predict(X_TEST[:5]))



# --- training contract -----------------------------------------------------------

def _dense(weights):
    """The weight table as an ndarray (the tagger keeps it in CSR form)."""
    return weights.toarray() if hasattr(weights, "toarray") else weights


@pytest.mark.parametrize("Estimator", [EasyFirstBeamParser, EasyFirstBeamTagger])
def test_keep_best_restores_the_weights_of_the_best_epoch(Estimator):
    """With n_iter_no_change the fitted weights are those a plain fit for the best
    epoch's number of epochs gives, bit for bit, and partial_fit keeps the state that
    goes with them."""
    params = dict(beam_size=1, random_state=0)
    if Estimator is EasyFirstBeamParser:
        params["n_features"] = 2**14
    X, y = X_TRAIN[:100], Y_TRAIN[:100]  # the tagger ignores the heads
    model = Estimator(n_epochs=8, n_iter_no_change=1, **params).fit(
        X, y, X_val=X_TEST[:30], y_val=Y_TEST[:30])
    scores = [entry["validation_score"] for entry in model.history_]
    best = int(np.argmax(scores)) + 1
    assert model.n_iter_ == len(scores) and best < len(scores)  # it stopped, then went back
    plain = Estimator(n_epochs=best, **params).fit(X, y)
    np.testing.assert_array_equal(_dense(model.weights_), _dense(plain.weights_))
    assert [e["loss"] for e in plain.history_] == [e["loss"] for e in model.history_[:best]]
    resumable = Estimator(n_iter_no_change=1, **params)
    for _ in range(best):
        resumable.partial_fit(X, y, X_val=X_TEST[:30], y_val=Y_TEST[:30])
    np.testing.assert_array_equal(_dense(resumable.weights_), _dense(plain.weights_))
    assert resumable.training_state_["count"][0] == best * len(X)


# --- bad input -------------------------------------------------------------------

@pytest.mark.parametrize("Estimator", [EasyFirstBeamParser, EasyFirstBeamTagger])
def test_not_fitted_and_bad_parameters(Estimator):
    with pytest.raises(NotFittedError):
        Estimator().predict(X_TEST[:2])
    with pytest.raises(InvalidParameterError):
        Estimator(beam_size=0).fit(X_TRAIN[:3], Y_TRAIN[:3])


def test_parser_rejects_bad_heads_naming_the_sentence():
    X = X_TRAIN[:3]
    bad = [h.copy() for h in Y_TRAIN[:3]]
    bad[1][0] = len(bad[1]) + 5
    with pytest.raises(ValueError, match=r"y\[1\].*out of range"):
        EasyFirstBeamParser().fit(X, bad)
    cyclic = [h.copy() for h in Y_TRAIN[:3]]
    cyclic[2][:] = np.r_[np.arange(2, len(cyclic[2]) + 1), 1]
    with pytest.raises(ValueError, match=r"y\[2\]"):
        EasyFirstBeamParser().fit(X, cyclic)
    with pytest.raises(ValueError, match=r"X\[1\] is an empty sentence"):
        EasyFirstBeamParser().fit([X[0], [], X[2]], Y_TRAIN[:3])
    with pytest.raises(ValueError, match="y has 2"):
        EasyFirstBeamParser().fit(X, Y_TRAIN[:2])


def test_tagger_rejects_bad_tags_naming_the_sentence():
    with pytest.raises(ValueError, match=r"X\[1\] has a token without a 'upos' field"):
        EasyFirstBeamTagger().fit([X_TRAIN[0], _words_only(X_TRAIN[1:2])[0]])
    with pytest.raises(ValueError, match=r"y\[0\] has 1 labels"):
        EasyFirstBeamTagger().fit(X_TRAIN[:1], [["NOUN"]])
    tagger = EasyFirstBeamTagger().partial_fit(X_TRAIN[:5])
    with pytest.raises(ValueError, match="not in the tag set"):
        tagger.partial_fit(X_TRAIN[:1], [["NEVER-SEEN"] * len(X_TRAIN[0])])


def test_plain_string_tokens_are_parsed_and_tagged():
    words = [[t["form"] for t in s] for s in X_TRAIN[:30]]
    parser = EasyFirstBeamParser(beam_size=1, n_epochs=1, n_features=2**14).fit(words, Y_TRAIN[:30])
    assert all(find_heads_error(h) is None for h in parser.predict(X_TRAIN[:5]))
    with pytest.raises(ValueError, match="no UPOS and no XPOS"):
        parser.predict(words[:5])  # it reads tags: bare forms would parse at chance
    tagger = EasyFirstBeamTagger(beam_size=1, n_epochs=1).fit(words, _tags(X_TRAIN[:30], "upos"))
    assert tagger.transform(words[:1])[0][0]["form"] == words[0][0]


# --- real data: Ma et al.'s valid updates -----------------------------------------

@pytest.mark.corpus
def test_every_update_on_real_data_is_valid():
    X, y = load_ud_treebank("en_ewt", "dev")
    X, y = X[:400], y[:400]
    for beam in (1, 4):
        parser = EasyFirstBeamParser(beam_size=beam, n_epochs=2, n_features=2**18, random_state=0)
        parser.fit(X, y)
        assert parser.n_updates_ > 100
        assert parser.n_invalid_updates_ == 0
        assert sum(entry["updates"] for entry in parser.history_) == parser.n_updates_
        # with a beam, early updates happen (and each is valid)
        assert sum(entry["early_updates"] for entry in parser.history_) > 0
    tagger = EasyFirstBeamTagger(beam_size=3, n_epochs=2, target="xpos", random_state=0).fit(X)
    assert tagger.n_updates_ > 100 and tagger.n_invalid_updates_ == 0


def test_tagger_features_are_the_shared_hash_of_corpus_ids():
    """Static features, read independently in Python: form, affixes, shape, flags, context."""
    from sklearn_structured.easy_first._tagger_features import (fit_tagger_vocabularies,
                                                                static_feature_keys)
    from sklearn_structured.kernels.hashing import feature_hash
    from sklearn_structured.utils import word_shape

    train = [[{"form": "The"}, {"form": "dogs"}, "bark"], ["Dogs", "run", "e-mail", "x2"]]
    vocabularies = fit_tagger_vocabularies(train)
    words = ["The", "cats", "e-mail"]  # "cats" is unseen
    sentence = ["The", {"form": "cats", "upos": "NOUN"}, "e-mail"]
    keys, offsets = static_feature_keys([sentence], vocabularies)
    assert list(offsets) == [0, 3]

    form, lower, attrs = (vocabularies[f].stoi for f in ("form", "lower", "attributes"))
    outside = -2
    ids = [lower.get(w.lower(), 0) for w in words]
    for j, word in enumerate(words):
        expected = [feature_hash(0, 0, 0, 0, 0, 0), feature_hash(1, form.get(word, 0), 0, 0, 0, 0),
                    feature_hash(2, ids[j], 0, 0, 0, 0)]
        attributes = [word[:k] if len(word) >= k else None for k in (1, 2, 3, 4)]
        attributes += [word[-k:] if len(word) >= k else None for k in range(1, 8)]
        attributes.append(word_shape(word))
        attributes.append("-" if "-" in word else None)
        attributes.append("0" if any(c.isdigit() for c in word) else None)
        attributes.append("A" if any(c.isupper() for c in word) else None)
        t = 3
        for a in attributes:
            known = a is not None and a in attrs
            expected.append(feature_hash(t, attrs[a], 0, 0, 0, 0) if known else -1)
            t += 1
        context = [ids[q] if 0 <= q < 3 else outside for q in (j - 2, j - 1, j + 1, j + 2)]
        for v in context:
            expected.append(feature_hash(t, v, 0, 0, 0, 0))
            t += 1
        before, after = context[1], context[2]
        expected.append(feature_hash(t, before, ids[j], 0, 0, 0))
        expected.append(feature_hash(t + 1, ids[j], after, 0, 0, 0))
        expected.append(feature_hash(t + 2, before, after, 0, 0, 0))
        suffix = attrs.get(word[-3:], 0) if len(word) >= 3 else 0
        expected.append(feature_hash(t + 3, suffix, before, 0, 0, 0) if suffix else -1)
        expected.append(feature_hash(t + 4, suffix, after, 0, 0, 0) if suffix else -1)
        assert list(keys[j]) == expected, word
    # seen and unseen forms, present and absent flags were exercised
    assert lower["the"] > 0 and "cats" not in form and "-" in attrs and "A" in attrs


def test_ambiguity_classes_come_from_training_words_seen_often_enough():
    """The dictionary holds the lower-cased training words seen at least k times, with
    one id per tag set; a rare or unseen word has no class and no class features."""
    from sklearn_structured.easy_first._tagger_features import (jackknifed_class_ids,
                                                                static_feature_keys)

    train = [[{"form": "The", "upos": "DET"}, {"form": "run", "upos": "NOUN"}],
             [{"form": "the", "upos": "DET"}, {"form": "run", "upos": "VERB"},
              {"form": "Rare", "upos": "ADJ"}]]
    tagger = EasyFirstBeamTagger(n_epochs=1, ambiguity_min_count=2, random_state=0).fit(train)
    assert list(tagger.ambiguity_words_) == ["run", "the"]  # "rare" was seen once
    run, the = tagger.ambiguity_ids_
    assert run != the and min(run, the) > 0
    test = [["THE", "run", "rare", "walk"]]
    ids = tagger._dictionary_class_ids(test)
    assert list(ids) == [the, run, 0, 0]
    keys, _ = static_feature_keys(test, tagger.vocabularies_, ids)
    assert (keys[:, -3:] >= 0).all(axis=1).tolist() == [True, True, False, False]
    assert (keys[:, -5:-3] >= 0).all()  # the neighbours' classes, read for every word
    # another tagger whose training words have the same tag sets gives them the same ids
    again = EasyFirstBeamTagger(n_epochs=1, ambiguity_min_count=1).fit(train[::-1])
    assert set(tagger.ambiguity_ids_) < set(again.ambiguity_ids_)
    assert not hasattr(EasyFirstBeamTagger(n_epochs=1, ambiguity_min_count=None).fit(train),
                       "ambiguity_words_")

    # jackknifed: a word gets the class of the other folds' occurrences only
    words = ["a", "a", "b", "a", "b"]
    tags = ["X", "Y", "X", "Y", "X"]
    folds = [0, 1, 0, 2, 1]
    ids = jackknifed_class_ids(words, tags, folds, 1)
    assert ids[1] == ids[3] != ids[0]  # {X, Y} for folds 1 and 2's "a", {Y} for fold 0's
    assert ids[2] == ids[4] and ids[2] > 0
    assert list(jackknifed_class_ids(words, tags, folds, 2)) == [ids[0], ids[1], 0, ids[3], 0]


def test_static_features_are_the_fitted_taggers_per_sentence():
    """Per sentence a row per token; a word of the ambiguity dictionary has the class
    templates, a rare one not; the keys are those the tagger keeps weights for."""
    train = [[{"form": "The", "upos": "DET"}, {"form": "run", "upos": "NOUN"}],
             [{"form": "the", "upos": "DET"}, {"form": "run", "upos": "VERB"},
              {"form": "Rare", "upos": "ADJ"}]]
    tagger = EasyFirstBeamTagger(n_epochs=1, ambiguity_min_count=2, feature_min_count=1,
                                 random_state=0).fit(train)
    short, longer = tagger.static_features([["the", "run"], ["THE", "run", "rare", "walk"]])
    assert short.shape[0] == 2 and longer.shape == (4, short.shape[1])
    assert (longer[:, -3:] >= 0).all(axis=1).tolist() == [True, True, False, False]
    # without ambiguity classes (jackknifed in training) the training tokens' keys are the kept ones
    plain = EasyFirstBeamTagger(n_epochs=1, ambiguity_min_count=None, feature_min_count=1).fit(train)
    training_keys = np.concatenate(plain.static_features(train))
    assert set(training_keys[training_keys >= 0]) == set(plain.feature_keys_)
    with pytest.raises(NotFittedError):
        EasyFirstBeamTagger().static_features(train)


# --- FEATS and LEMMA targets ------------------------------------------------------

def _seen_forms(X):
    return {t["form"] for s in X for t in s}


@pytest.mark.slow
def test_feats_tagger_predicts_whole_feats_strings():
    tagger = EasyFirstBeamTagger(beam_size=1, n_epochs=5, target="feats", random_state=0)
    tagger.fit(X_TRAIN)
    assert "_" in tagger.classes_  # no features is a class of its own
    predicted = tagger.predict(X_TEST)
    assert all(isinstance(v, str) for row in predicted for v in row)
    gold = _tags(X_TEST, "feats")
    accuracy = tagger.score(X_TEST)
    assert accuracy == np.mean([a == b for g, p in zip(gold, predicted) for a, b in zip(g, p)])
    # beats giving every word its most frequent FEATS in training (unseen words: "_")
    counts = defaultdict(Counter)
    for s in X_TRAIN:
        for t in s:
            counts[t["form"]][t["feats"]] += 1
    baseline = np.mean([(counts[t["form"]].most_common(1)[0][0] if t["form"] in counts
                         else "_") == t["feats"] for s in X_TEST for t in s])
    assert accuracy > baseline + 0.03, (accuracy, baseline)
    tagged = tagger.transform(_words_only(X_TEST[:5]))
    assert_same_predictions(_tags(tagged, "feats"), predicted[:5])


@pytest.mark.slow
def test_lemma_tagger_uses_the_dictionary_first_then_scripts():
    tagger = EasyFirstBeamTagger(beam_size=1, n_epochs=5, target="lemma", random_state=0)
    tagger.fit(X_TRAIN)
    assert all(c.count(":") >= 4 for c in tagger.classes_)  # the classes are edit scripts
    # a training form gets its most frequent training lemma, whatever the script says
    counts = defaultdict(Counter)
    for s in X_TRAIN:
        for t in s:
            counts[t["form"]][t["lemma"]] += 1
    lemmas = tagger.predict(_words_only(X_TEST))  # forms only: the form dictionary
    scripts = tagger.predict_classes(X_TEST)
    seen = unseen = 0
    for s, row, script_row in zip(X_TEST, lemmas, scripts):
        for t, lemma, script in zip(s, row, script_row):
            if t["form"] in counts:
                assert lemma == counts[t["form"]].most_common(1)[0][0]
                seen += 1
            else:
                assert lemma == apply_script(t["form"], script)
                unseen += 1
    assert seen > 0 and unseen > 0
    # the dictionary holds a form whose predicted script would give another lemma
    sentence = [{"form": "was"}, {"form": "better"}]
    assert tagger.predict([sentence]) == [["be", counts["better"].most_common(1)[0][0]]]
    # the score is the accuracy of the final lemmas, above keeping every form as it is
    accuracy = tagger.score(_words_only(X_TEST), _tags(X_TEST, "lemma"))
    gold = _tags(X_TEST, "lemma")
    assert accuracy == np.mean([a == b for g, p in zip(gold, lemmas) for a, b in zip(g, p)])
    as_is = np.mean([t["form"] == t["lemma"] for s in X_TEST for t in s])
    assert accuracy > 0.9 and accuracy > as_is + 0.1, (accuracy, as_is)


def test_lemma_dictionary_of_form_and_upos_comes_first():
    X = ([[{"form": "saw", "upos": "VERB", "lemma": "see"}]] * 2
         + [[{"form": "saw", "upos": "NOUN", "lemma": "saw"}]])
    tagger = EasyFirstBeamTagger(beam_size=1, n_epochs=1, target="lemma").fit(X)
    assert tagger.predict([[{"form": "saw", "upos": "NOUN"}], [{"form": "saw"}],
                           [{"form": "saw", "upos": "ADJ"}], ["saw"]]) == [
        ["saw"], ["see"], ["see"], ["see"]]  # an unseen pair falls back to the form
    # trained without UPOS, the tagger ignores the UPOS of its input
    plain = EasyFirstBeamTagger(beam_size=1, n_epochs=1, target="lemma").fit(
        [[{"form": t["form"], "lemma": t["lemma"]} for t in s] for s in X])
    assert plain.predict([[{"form": "saw", "upos": "NOUN"}]]) == [["see"]]


@pytest.mark.slow
def test_lemma_scripts_generalise_to_unseen_forms():
    tagger = EasyFirstBeamTagger(beam_size=1, n_epochs=8, target="lemma", random_state=0)
    tagger.fit(X_TRAIN)
    seen = _seen_forms(X_TRAIN)
    pairs = [(t["form"], t["lemma"], p) for s, row in zip(X_TEST, tagger.predict(X_TEST))
             for t, p in zip(s, row) if t["form"] not in seen]
    accuracy = np.mean([lemma == p for _, lemma, p in pairs])
    as_is = np.mean([lemma == form for form, lemma, _ in pairs])
    lowered = np.mean([lemma == form.lower() for form, lemma, _ in pairs])
    assert accuracy > max(as_is, lowered) + 0.03, (accuracy, as_is, lowered)


def test_lemma_transform_writes_lemmas_and_keeps_other_fields():
    tagger = EasyFirstBeamTagger(beam_size=1, n_epochs=2, target="lemma", random_state=0)
    X = X_TRAIN[:60]
    tagger.fit(X)
    tagged = tagger.transform(X_TEST[:5])
    assert_same_predictions(_tags(tagged, "lemma"), tagger.predict(X_TEST[:5]))
    assert _tags(tagged, "upos") == _tags(X_TEST[:5], "upos")
    # plain string tokens work too
    words = [[t["form"] for t in s] for s in X_TEST[:3]]
    assert_same_predictions(_tags(tagger.transform(words), "lemma"), tagger.predict(X_TEST[:3]))


def test_lemma_and_feats_underscore_are_values():
    # "_" in FEATS is "no features"; a lemma "_" (as EWT gives some typos) is kept
    X = [[{"form": "Dogs", "lemma": "dog", "feats": "Number=Plur"},
          {"form": "barkz", "lemma": "_", "feats": "_"}]] * 3
    for target, expected in (("feats", ["Number=Plur", "_"]), ("lemma", ["dog", "_"])):
        tagger = EasyFirstBeamTagger(beam_size=1, n_epochs=3, target=target,
                                     feature_min_count=1).fit(X)
        assert tagger.predict(X[:1]) == [expected]
    with pytest.raises(ValueError, match=r"X\[0\] has a token without a 'lemma' field"):
        EasyFirstBeamTagger(target="lemma").fit([[{"form": "a"}]])


def test_lemma_of_the_form_underscore_is_never_empty():
    # Turkish IMST writes some words as "_"; parse stopped on the empty lemma it got
    X = [[{"form": "on", "lemma": "on"}, {"form": "_", "lemma": "lira"}],
         [{"form": "kitaplar", "lemma": "kitap"}]] * 3
    tagger = EasyFirstBeamTagger(beam_size=1, n_epochs=2, target="lemma",
                                 feature_min_count=1).fit(X)
    assert tagger.predict([["on", "_"]]) == [["on", "lira"]]  # the form dictionary
    lemmas = tagger.predict([["_", "_"], [{"form": "_", "upos": "NOUN"}]])
    assert all(lemma for row in lemmas for lemma in row), lemmas


def test_xpos_underscore_is_a_value_unless_every_xpos_is():
    # Turkish IMST train leaves 3 XPOS of 37,522 as "_": the tagger still trains
    X = [[{"form": "on", "xpos": "Num"}, {"form": "biri", "xpos": "_"}]] * 3
    tagger = EasyFirstBeamTagger(beam_size=1, n_epochs=3, target="xpos",
                                 feature_min_count=1).fit(X)
    assert tagger.predict([["on", "biri"]]) == [["Num", "_"]]
    # a treebank without XPOS (Portuguese Bosque) has nothing to learn: said, not fitted
    with pytest.raises(ValueError, match="no token has an XPOS"):
        EasyFirstBeamTagger(target="xpos").fit([[{"form": "a", "xpos": "_"}]])
    with pytest.raises(ValueError, match=r"X\[0\] has a token without a 'xpos' field"):
        EasyFirstBeamTagger(target="xpos").fit([[{"form": "a"}]])


@pytest.mark.parametrize("target", ["feats", "lemma"])
def test_feats_and_lemma_tagger_api(target):
    check_structured_estimator(
        EasyFirstBeamTagger(beam_size=2, n_epochs=1, target=target, random_state=0),
        X_TRAIN[:40], _tags(X_TRAIN[:40], target),
        param_grid={"beam_size": [1, 2], "n_epochs": [1, 2]},
        epochs_param="n_epochs",
    )


def test_lemma_tagger_saves_in_the_safe_format(tmp_path):
    from sklearn_structured.utils import load_model, save_model

    tagger = EasyFirstBeamTagger(beam_size=1, n_epochs=2, target="lemma", random_state=0)
    tagger.fit(X_TRAIN[:80])
    save_model(tagger, tmp_path / "lemma.npz")
    loaded = load_model(tmp_path / "lemma.npz")
    assert_same_predictions(loaded.predict(X_TEST), tagger.predict(X_TEST))
    np.testing.assert_array_equal(loaded.lemma_forms_, tagger.lemma_forms_)
    assert loaded.get_params() == tagger.get_params()


def test_many_tags_share_context_values():
    # more tags than the context block keeps: the rare ones share one value
    from sklearn_structured.easy_first._tagger_features import MAX_CONTEXT_TAGS

    tagger = EasyFirstBeamTagger(beam_size=1, n_epochs=1, target="feats").fit(X_TRAIN)
    values = tagger.tag_context_values_
    assert len(tagger.classes_) > MAX_CONTEXT_TAGS
    assert values.max() == MAX_CONTEXT_TAGS - 1
    shared = values == values.max()
    assert shared.sum() == len(values) - (MAX_CONTEXT_TAGS - 1)
    upos = EasyFirstBeamTagger(beam_size=1, n_epochs=1).fit(X_TRAIN[:50])
    assert np.array_equal(upos.tag_context_values_, np.arange(len(upos.classes_)))


def test_feats_tags_are_also_read_as_their_feature_value_pairs(tmp_path):
    from sklearn_structured.utils import load_model, save_model

    tagger = EasyFirstBeamTagger(beam_size=1, n_epochs=2, target="feats", random_state=0)
    tagger.fit(X_TRAIN[:80])
    pairs = sorted({p for t in tagger.classes_ if t != "_" for p in t.split("|")})
    for tag, ids in zip(tagger.classes_, tagger.tag_parts_):
        expected = [] if tag == "_" else [pairs.index(p) for p in tag.split("|")]
        assert list(ids[ids >= 0]) == expected and (ids[len(expected):] == -1).all()
    assert tagger.weights_.shape[1] == len(tagger.classes_) + len(pairs)
    save_model(tagger, tmp_path / "feats.npz")
    assert_same_predictions(load_model(tmp_path / "feats.npz").predict(X_TEST), tagger.predict(X_TEST))

    whole = EasyFirstBeamTagger(beam_size=1, n_epochs=2, target="feats", decompose_feats=False,
                                random_state=0).fit(X_TRAIN[:80])
    assert whole.tag_parts_.shape == (len(whole.classes_), 0)
    assert whole.weights_.shape[1] == len(whole.classes_)
    upos = EasyFirstBeamTagger(beam_size=1, n_epochs=1).fit(X_TRAIN[:20])
    assert upos.tag_parts_.shape == (len(upos.classes_), 0)


def test_input_tags_are_features():
    # the FEATS value follows the UPOS, which the form does not tell
    rng = np.random.default_rng(0)
    def sentences(n):
        out = []
        for _ in range(n):
            tags = rng.choice(["NOUN", "VERB"], size=6)
            out.append([{"form": "w", "upos": t, "feats": "Kind=N" if t == "NOUN" else "Kind=V"}
                        for t in tags])
        return out
    train, test = sentences(60), sentences(20)
    params = {"beam_size": 1, "n_epochs": 3, "target": "feats", "random_state": 0}
    reading = EasyFirstBeamTagger(input_tags=("upos",), **params).fit(train)
    assert reading.score(test) == 1.0
    assert EasyFirstBeamTagger(**params).fit(train).score(test) < 0.8
    assert "upos" in reading.vocabularies_


def test_jackknife_folds_go_without_an_input_tag_their_sentences_lack():
    """An input tag that only a few training words carry is absent from some folds: their
    models go without it instead of refusing the data, and the whole tagger reads it."""
    rng = np.random.default_rng(0)
    train = [[{"form": "w", "upos": t, "feats": f"Kind={t[0]}"}
              for t in rng.choice(["NOUN", "VERB"], 5)] for _ in range(12)]
    train[0][0]["xpos"] = "NN"
    tagger = EasyFirstBeamTagger(target="feats", input_tags=("upos", "xpos"), n_folds=4,
                                 beam_size=1, n_epochs=1, random_state=0)
    tagged = tagger.fit_transform(train)
    assert len(tagged) == len(train) and tagger.input_tags == ("upos", "xpos")


def test_lemma_endings_tell_the_inflection_of_unseen_forms():
    # stems in "o" take "da" (Loc) and stems in "od" take "a" (Dat): both forms end in
    # "oda", so only where the training lemma ends tells the two apart in a new form
    rng = np.random.default_rng(0)
    endings = {"": "Case=Nom", "a": "Case=Dat", "da": "Case=Loc", "n": "Case=Gen",
               "lar": "Case=Nom|Number=Plur"}
    letters = list("bcfgklmprstuie")
    train, test = [], []
    for k in range(300):
        stem = "".join(rng.choice(letters, size=4)) + ("o" if k % 2 else "od")
        held_out = ("da" if k % 2 else "a") if k % 4 < 2 else None
        for ending, feats in endings.items():
            token = {"form": stem + ending, "lemma": stem, "feats": feats}
            (test if ending == held_out else train).append([token])
    params = {"beam_size": 1, "n_epochs": 5, "target": "feats", "random_state": 0}
    reading = EasyFirstBeamTagger(**params).fit(train)
    assert reading.score(test) > 0.95
    assert EasyFirstBeamTagger(lemma_endings=False, **params).fit(train).score(test) < 0.7
    assert len(reading.stems_.split("\n")) == 300


def test_models_without_stems_read_no_ending(tmp_path):
    """A model saved before lemma_endings has no stems_ and tags as it did."""
    from sklearn_structured.utils import load_model, save_model

    params = {"beam_size": 1, "n_epochs": 2, "target": "feats", "random_state": 0}
    without = EasyFirstBeamTagger(lemma_endings=False, **params).fit(X_TRAIN[:60])
    assert without.stems_ == ""
    expected = without.predict(X_TEST[:20])
    del without.stems_
    save_model(without, tmp_path / "old.npz")
    assert load_model(tmp_path / "old.npz").predict(X_TEST[:20]) == expected


@pytest.mark.parametrize("input_tags, match", [
    (("feats",), "input_tags must be"),
    (("upos", "upos"), "input_tags must be"),
    (("xpos",), "no training token has a 'xpos'"),
])
def test_bad_input_tags_are_refused(input_tags, match):
    train = [[{"form": "w", "upos": "NOUN", "feats": "Kind=N"}]] * 3
    with pytest.raises(ValueError, match=match):
        EasyFirstBeamTagger(target="feats", input_tags=input_tags, n_epochs=1).fit(train)
    with pytest.raises(ValueError, match="input_tags must be"):
        EasyFirstBeamTagger(target="upos", input_tags=("upos",), n_epochs=1).fit(train)
