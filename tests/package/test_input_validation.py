"""Bad input to the estimators: a clear ValueError naming the place, never silent garbage.

One test per class of defect found by an attack on the library:
non-finite user input, fitting on nothing, divergence, wrong types.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sklearn_structured import (
    DistroSequenceSVM,
    EasyFirstBeamParser,
    EasyFirstBeamTagger,
    LowRankTensorParser,
    NBestReranker,
    RankSpaceHMM,
    RankSpacePCFG,
    SpectralTreeScorer,
)
from sklearn_structured.datasets import load_sample_treebank


@pytest.fixture(scope="module")
def sample():
    X, y = load_sample_treebank("train")
    return X[:30], y[:30]


def _tags(X):
    return [[t["upos"] for t in s] for s in X]


# --- class 1: non-finite or empty numeric input ----------------------------------

@pytest.mark.parametrize("vectors, message", [
    ({"the": [0.1, np.nan]}, "NaN or infinite"),
    ({"the": [0.1, 0.2], "a": [np.inf, 0.0]}, "NaN or infinite"),
    ({}, "empty"),
    ({"the": [0.1, 0.2], "a": [0.3]}, "dimensions"),
    ({"the": [[0.1, 0.2]]}, "1-D"),
    ({"the": ["x", "y"]}, "not a vector of numbers"),
    ({3: [0.1]}, "word forms"),
])
def test_word_vectors_are_checked(vectors, message, sample):
    X, y = sample
    with pytest.raises(ValueError, match=message):
        LowRankTensorParser(word_vectors=vectors, n_epochs=1, rank=2).fit(X, y)


# --- class 2: fitting on nothing ------------------------------------------------

SUPERVISED = [
    lambda: LowRankTensorParser(n_epochs=1),
    lambda: EasyFirstBeamParser(n_epochs=1),
    lambda: SpectralTreeScorer(),
    lambda: NBestReranker(LowRankTensorParser(n_epochs=1)),
]


@pytest.mark.parametrize("make", SUPERVISED)
def test_fit_on_no_sentences_raises(make):
    with pytest.raises(ValueError, match="no sentences"):
        make().fit([], [])


@pytest.mark.parametrize("make", [lambda: EasyFirstBeamTagger(n_epochs=1),
                                  lambda: DistroSequenceSVM(n_epochs=1)])
def test_taggers_fit_on_no_sentences_raises(make):
    with pytest.raises(ValueError, match="no sentences"):
        make().fit([], [])


@pytest.mark.parametrize("make", [RankSpaceHMM, RankSpacePCFG])
def test_grammars_fit_on_no_sentences_raises(make):
    with pytest.raises(ValueError, match="no sentences"):
        make().fit([])


def test_tagger_from_field_on_no_sentences_raises():
    with pytest.raises(ValueError, match="no sentences"):
        EasyFirstBeamTagger(n_epochs=1).fit([])


# --- class 3: divergence --------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: RankSpaceHMM(n_states=8, rank=4, n_epochs=3, learning_rate=1e6, batch_size=8,
                         random_state=0),
    lambda: RankSpacePCFG(n_nonterminals=4, n_preterminals=4, rank=4, n_epochs=3,
                          learning_rate=1e6, batch_size=8, random_state=0),
])
def test_grammar_divergence_warns_and_keeps_finite_parameters(make, sample):
    X, _ = sample
    X = [[t["form"] for t in s][:12] for s in X]
    model = make()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X)
    diverged = [w for w in caught if issubclass(w.category, ConvergenceWarning)
                and "diverged" in str(w.message)]
    assert diverged, "the huge learning rate should make training diverge"
    assert all(np.all(np.isfinite(v)) for v in model.params_.values())
    assert np.isfinite(model.score(X))


# --- class 6: wrong types -------------------------------------------------------

def _with_token(X, **fields):
    X = [list(s) for s in X]
    X[2] = list(X[2])
    X[2][1] = {**X[2][1], **fields}
    return X


@pytest.mark.parametrize("fields, message", [
    ({"form": 123}, r"X\[2\]\[1\] has form 123"),
    ({"form": None}, r"X\[2\]\[1\] has form None"),
    ({"feats": {"Number": "Sing"}}, r"X\[2\]\[1\]: 'feats' must be a str"),
    ({"upos": 7}, r"X\[2\]\[1\]: 'upos' must be a str"),
])
@pytest.mark.parametrize("make", SUPERVISED[:2] + [lambda: SpectralTreeScorer()])
def test_malformed_tokens_name_the_token(fields, message, make, sample):
    X, y = sample
    with pytest.raises(ValueError, match=message):
        make().fit(_with_token(X, **fields), y)


def test_token_without_form_is_rejected_everywhere(sample):
    X, y = sample
    bad = [list(s) for s in X]
    bad[0][0] = {k: v for k, v in bad[0][0].items() if k != "form"}
    for estimator, target in [(LowRankTensorParser(n_epochs=1), y),
                              (EasyFirstBeamParser(n_epochs=1), y),
                              (EasyFirstBeamTagger(n_epochs=1), _tags(X)),
                              (DistroSequenceSVM(n_epochs=1), _tags(X))]:
        with pytest.raises(ValueError, match=r"X\[0\]\[0\] has form None"):
            estimator.fit(bad, target)
    with pytest.raises(ValueError, match=r"X\[0\]\[0\] has form None"):
        RankSpaceHMM(n_epochs=1).fit(bad)


@pytest.mark.parametrize("bad_heads, message", [
    (lambda h: h.reshape(-1, 1), "1-D"),
    (lambda h: h + 0.7, "integers"),
    (lambda h: h.astype(bool), "integers"),
    (lambda h: np.array(["1"] * len(h)), "integers"),
])
@pytest.mark.parametrize("make", SUPERVISED[:2])
def test_malformed_heads_name_the_sentence(bad_heads, message, make, sample):
    X, y = sample
    y = list(y)
    y[4] = bad_heads(np.asarray(y[4]))
    with pytest.raises(ValueError, match=r"y\[4\].*" + message):
        make().fit(X, y)


@pytest.mark.parametrize("make", [lambda: EasyFirstBeamTagger(n_epochs=1),
                                  lambda: DistroSequenceSVM(n_epochs=1)])
def test_mixed_label_kinds_are_rejected(make, sample):
    X, _ = sample
    tags = _tags(X)
    tags[3][2] = 5
    with pytest.raises(ValueError, match=r"y\[3\]\[2\] is a int"):
        make().fit(X, tags)
    tags[3][2] = 5.0
    with pytest.raises(ValueError, match=r"y\[3\]\[2\] is a float"):
        make().fit(X, tags)


def test_nbest_k_must_be_a_positive_integer(sample):
    X, y = sample
    parser = LowRankTensorParser(n_epochs=1, rank=2, n_features=2**12).fit(X, y)
    for k in (True, 0, -1, 2.0, "3"):
        with pytest.raises(ValueError, match="k must be a positive integer"):
            parser.predict_nbest(X[:2], k)


def test_sentences_a_step_made_are_not_checked_again(sample):
    """A tagger's output goes to the next step as it is; a copy of it is checked again."""
    from sklearn_structured.utils import CheckedSentences, check_sentences

    X, _ = sample
    tagged = EasyFirstBeamTagger(beam_size=1, n_epochs=1, random_state=0).fit(X).transform(X)
    assert type(tagged) is CheckedSentences
    assert check_sentences(tagged) is tagged
    broken = tagged[:]
    broken[0] = [{"form": None}]
    with pytest.raises(ValueError, match=r"X\[0\]\[0\] has form None"):
        check_sentences(broken)
