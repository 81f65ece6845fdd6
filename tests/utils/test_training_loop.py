"""The shared training contract: every iterative estimator, the same way.

Validation data comes as ``X_val``/``y_val`` (keyword only) or as a
``validation_fraction``; ``n_iter_no_change`` keeps the best epoch; every
epoch is a record of ``history_`` and, with ``verbose``, one progress line on
standard error. One test holds every iterative estimator (the nine and the tokeniser) to it.
"""

import inspect
import re

import numpy as np
import pytest
from sklearn.datasets import make_classification

from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.distro import DistroSequenceSVM, DistroSVM
from sklearn_structured.easy_first import EasyFirstBeamParser, EasyFirstBeamTagger
from sklearn_structured.lowrank import LowRankTensorParser
from sklearn_structured.rank_space import RankSpaceHMM, RankSpacePCFG
from sklearn_structured.spectral import NBestReranker, SpectralTreeScorer
from sklearn_structured.tokenize import Tokenizer
from sklearn_structured.utils import (
    EpochResult,
    EpochTrainer,
    progress_line,
    split_validation,
    training_step,
)

# estimator class -> small parameters for a quick fit. Each family's entry
# stands apart from the next so that its owners can change it alone.
SMALL = {
    LowRankTensorParser: dict(rank=4, n_epochs=3, n_features=2**14),

    EasyFirstBeamParser: dict(beam_size=2, n_epochs=3, n_features=2**14),

    EasyFirstBeamTagger: dict(beam_size=2, n_epochs=3, target="xpos"),

    SpectralTreeScorer: dict(n_components=4, method="em", n_epochs=3, n_init=1),

    NBestReranker: dict(parser=LowRankTensorParser(rank=4, n_epochs=2, n_features=2**14),
                        scorers=(SpectralTreeScorer(n_components=4, n_epochs=3, n_init=1),),
                        n_best=4, cv=2, n_epochs=3),

    DistroSVM: dict(n_rounds=1, n_epochs=1),

    DistroSequenceSVM: dict(n_rounds=1, n_epochs=1),

    RankSpacePCFG: dict(n_nonterminals=3, n_preterminals=4, rank=4, n_epochs=3, batch_size=8),

    RankSpaceHMM: dict(n_states=4, rank=4, n_epochs=3, batch_size=8),

    Tokenizer: dict(n_epochs=3, n_features=2**16),
}
ITERATIVE = list(SMALL)
UNSUPERVISED = (RankSpacePCFG, RankSpaceHMM, Tokenizer)  # fit(X) alone

# [Name] label: seconds s, loss L, validation score V, then "name value" fields
# and the time left, every part but the name and the label from the shared line
PROGRESS = re.compile(
    r"^(?:\[(?P<step>[^\]]+)\] )?\[(?P<name>\w+)\] (?P<label>[^:]+): (?P<seconds>\d+\.\d) s, "
    r"loss (?P<loss>\S+), validation score (?P<score>-?\d+\.\d{4})(?:, [^,]+ \S+)*"
    r"(?:, at most \d+ s left)?$"
)
HISTORY_KEYS = {"epoch", "label", "loss", "seconds", "elapsed", "validation_score"}


@pytest.fixture(scope="module")
def data():
    X, y = load_sample_treebank("train")
    X_val, y_val = load_sample_treebank("test")
    X, y, X_val, y_val = X[:40], y[:40], X_val[:15], y_val[:15]
    upos = [[t["upos"] for t in s] for s in X if len(s) >= 2]
    upos_val = [[t["upos"] for t in s] for s in X_val if len(s) >= 2]
    tags = [[t["xpos"] for t in s] for s in X]
    tags_val = [[t["xpos"] for t in s] for s in X_val]
    points, labels = make_classification(n_samples=120, n_features=8, n_informative=5,
                                         n_classes=3, random_state=0)
    parsing = (X, y, X_val, y_val)
    # the tokeniser learns from documents: the sample's cut into four
    train_doc = load_sample_treebank("train", as_document=True)
    documents = [train_doc[i:i + 75] for i in range(0, 300, 75)]
    return {
        LowRankTensorParser: parsing,
        EasyFirstBeamParser: parsing,
        EasyFirstBeamTagger: (X, tags, X_val, tags_val),
        SpectralTreeScorer: parsing,
        NBestReranker: parsing,
        DistroSVM: (points[:90], labels[:90], points[90:], labels[90:]),
        DistroSequenceSVM: (X, tags, X_val, tags_val),
        RankSpacePCFG: (upos, None, upos_val, None),
        RankSpaceHMM: (upos, None, upos_val, None),
        Tokenizer: (documents, None, [load_sample_treebank("test", as_document=True)], None),
    }


def _fit(cls, data, **params):
    X, y, X_val, y_val = data[cls]
    model = cls(**{**SMALL[cls], "random_state": 0, **params})
    if cls in UNSUPERVISED:
        model.fit(X, X_val=X_val)
        return model, model.score(X_val)
    model.fit(X, y, X_val=X_val, y_val=y_val)
    return model, model.score(X_val, y_val)


@pytest.mark.parametrize("cls", ITERATIVE, ids=lambda cls: cls.__name__)
def test_fit_signature_and_parameters(cls):
    for method in ("fit", "partial_fit"):
        if not hasattr(cls, method):
            continue
        params = inspect.signature(getattr(cls, method)).parameters
        positional = [n for n, p in params.items() if p.kind is p.POSITIONAL_OR_KEYWORD]
        assert positional == ["self", "X", "y"], (method, positional)
        keyword_only = [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY]
        assert keyword_only[:2] == ["X_val", "y_val"], (method, keyword_only)
        assert params["X_val"].default is None and params["y_val"].default is None
    defaults = cls(**SMALL[cls]).get_params()
    assert "n_iter_no_change" in defaults and "validation_fraction" in defaults
    assert defaults["validation_fraction"] is None


@pytest.mark.parametrize("cls", ITERATIVE, ids=lambda cls: cls.__name__)
def test_one_history_record_and_one_progress_line_per_epoch(cls, data, capsys):
    model, final = _fit(cls, data, verbose=1)
    out, err = capsys.readouterr()
    assert out == ""  # progress goes to standard error only
    lines = err.strip().splitlines()
    matches = [PROGRESS.match(line) for line in lines]
    assert all(matches), lines
    assert {m["name"] for m in matches} == {cls.__name__}
    history = model.history_
    assert len(lines) == len(history) >= 1
    for entry, match in zip(history, matches):
        assert HISTORY_KEYS <= set(entry)
        assert np.isfinite(entry["loss"]) and entry["elapsed"] >= entry["seconds"] >= 0
        assert entry["validation_score"] == pytest.approx(float(match["score"]), abs=5.1e-5)
    assert [entry["epoch"] for entry in history] == list(range(1, len(history) + 1))
    # without n_iter_no_change the model is the last epoch's
    if model.n_iter_no_change is None:
        assert history[-1]["validation_score"] == pytest.approx(final, abs=1e-9)


@pytest.mark.parametrize("cls", ITERATIVE, ids=lambda cls: cls.__name__)
def test_n_iter_no_change_keeps_the_best_epoch(cls, data):
    model, final = _fit(cls, data, n_iter_no_change=1)
    scores = [entry["validation_score"] for entry in model.history_]
    assert None not in scores
    assert len(scores) <= SMALL[cls]["n_epochs"] + 1  # + a first pass some families make
    assert final == pytest.approx(max(scores), abs=1e-9)
    best = int(np.argmax(scores))
    # training stopped at the first epoch without improvement after the best
    assert len(scores) - 1 - best <= 1


@pytest.mark.parametrize("cls", ITERATIVE, ids=lambda cls: cls.__name__)
def test_validation_fraction_holds_out_training_data(cls, data):
    X, y, _, _ = data[cls]
    model = cls(**SMALL[cls], random_state=0, validation_fraction=0.25)
    model.fit(X) if cls in UNSUPERVISED else model.fit(X, y)
    assert all(entry["validation_score"] is not None for entry in model.history_)
    again = cls(**SMALL[cls], random_state=0, validation_fraction=0.25)
    again.fit(X) if cls in UNSUPERVISED else again.fit(X, y)
    assert ([e["validation_score"] for e in again.history_]
            == [e["validation_score"] for e in model.history_])


@pytest.mark.parametrize("cls", ITERATIVE, ids=lambda cls: cls.__name__)
def test_a_seeded_generator_trains_the_model_of_its_seed(cls, data):
    # one generator per fit, passed on: the split of validation_fraction and the
    # draws after it continue one stream, whether fit makes it from a seed or is given it
    X, y, _, _ = data[cls]
    models = [cls(**SMALL[cls], random_state=seed, validation_fraction=0.25)
              for seed in (0, np.random.RandomState(0))]
    for model in models:
        model.fit(X) if cls in UNSUPERVISED else model.fit(X, y)
    first, second = ([(e["loss"], e["validation_score"]) for e in m.history_] for m in models)
    assert first == second


@pytest.mark.parametrize("cls", ITERATIVE, ids=lambda cls: cls.__name__)
def test_validation_data_given_two_ways_is_refused(cls, data):
    X, y, X_val, y_val = data[cls]
    model = cls(**SMALL[cls], validation_fraction=0.25)
    with pytest.raises(ValueError, match="not both"):
        model.fit(X, X_val=X_val) if cls in UNSUPERVISED else model.fit(X, y, X_val=X_val,
                                                                         y_val=y_val)
    # an estimator that needs y needs y_val too; one that can read its targets
    # from the tokens (a tagger) reads them from X_val's
    if cls(**SMALL[cls]).__sklearn_tags__().target_tags.required:
        with pytest.raises(ValueError, match="y_val"):
            cls(**SMALL[cls]).fit(X, y, X_val=X_val)


def test_progress_line_format():
    assert (progress_line("LowRankTensorParser", "epoch 3", 0.52, 3.6171, 0.76474)
            == "[LowRankTensorParser] epoch 3: 0.5 s, loss 3.617, validation score 0.7647")
    assert (progress_line("RankSpaceHMM", "epoch 12", 61.04, 4.56789, -4.5,
                          [("updates", np.int64(7)), ("rate", 0.123456)], remaining=122.4)
            == "[RankSpaceHMM] epoch 12: 61.0 s, loss 4.568, validation score -4.5000, "
               "updates 7, rate 0.1235, at most 122 s left")
    assert progress_line("X", "epoch 1", 1, 0, remaining=0.0) == "[X] epoch 1: 1.0 s, loss 0"
    with training_step("upos tagger, fold 2 of 5"):
        with training_step("epochs"):
            assert progress_line("X", "epoch 1", 1, 0) == (
                "[upos tagger, fold 2 of 5 / epochs] [X] epoch 1: 1.0 s, loss 0")
    assert progress_line("X", "epoch 1", 1, 0) == "[X] epoch 1: 1.0 s, loss 0"


class _Scripted(EpochTrainer):
    """Epoch k has parameters k and validation score scores[k - 1]; None ends training."""

    def __init__(self, scores):
        self.scores, self.params, self.n_scored, self.history = scores, 0, 0, []

    def train_epoch(self):
        if self.params == len(self.scores) or self.scores[self.params] is None:
            return None
        self.params += 1
        return EpochResult(f"epoch {self.params}", 1.0 / self.params, (("a field", 2),))

    def validation_score(self, validation):
        self.n_scored += 1
        return self.scores[self.params - 1]

    def snapshot(self):
        return self.params

    def restore(self, snapshot):
        self.params = snapshot


def test_loop_keeps_the_best_epoch_and_stops_after_patience():
    trainer = _Scripted([0.1, 0.3, 0.2, 0.25, 0.5])
    assert trainer.run(10, name="T", validation="val", patience=2) == 4
    assert trainer.params == 2  # epoch 2's parameters put back
    assert [r["validation_score"] for r in trainer.history] == [0.1, 0.3, 0.2, 0.25]
    assert [r["epoch"] for r in trainer.history] == [1, 2, 3, 4]
    assert all(r["a_field"] == 2 for r in trainer.history)
    assert all(r["seconds"] >= 0 and r["elapsed"] >= r["seconds"] for r in trainer.history)


def test_loop_scores_validation_data_after_every_epoch_and_prints_on_stderr(capsys):
    quiet = _Scripted([0.1, 0.2, 0.3])
    assert quiet.run(3, name="T") == 3
    assert quiet.n_scored == 0 and [r["validation_score"] for r in quiet.history] == [None] * 3
    loud = _Scripted([0.1, 0.2, 0.3])
    loud.run(3, name="T", verbose=1, validation="val")
    assert loud.n_scored == 3 and loud.params == 3  # no patience: no keep-best
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[-1].startswith(
        "[T] epoch 3: 0.0 s, loss 0.3333, validation score 0.3000, a field 2")


def test_loop_stops_when_an_epoch_returns_none():
    trainer = _Scripted([0.1, 0.2, None, 0.9])
    assert trainer.run(4, name="T", validation="val", patience=5) == 2
    assert len(trainer.history) == 2 and trainer.params == 2


class _Holder:
    def __init__(self, validation_fraction=None):
        self.validation_fraction = validation_fraction


def test_split_validation():
    X, y = [[str(i)] for i in range(8)], list(range(8))
    rng = np.random.RandomState(0)
    assert split_validation(_Holder(), X, y, rng=rng) == (X, y, None)
    X_tr, y_tr, (X_val, y_val) = split_validation(_Holder(0.25), X, y, rng=rng)
    assert len(X_val) == 2 and len(X_tr) == 6
    assert sorted(y_tr + y_val) == y and [[str(v)] for v in y_val] == X_val
    X_tr, y_tr, X_val = split_validation(_Holder(0.25), X, None, rng=rng, supervised=False)
    assert y_tr is None and len(X_val) == 2
    with pytest.raises(ValueError, match="not both"):
        split_validation(_Holder(0.5), X, y, X, y, rng=rng)
    with pytest.raises(ValueError, match="y_val"):
        split_validation(_Holder(), X, y, X, rng=rng)
    with pytest.raises(ValueError, match="validation_fraction"):
        split_validation(_Holder(0.01), X, y, rng=rng)
