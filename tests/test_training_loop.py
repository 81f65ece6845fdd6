"""The shared epoch loop: one way to pass validation data, one progress line, keep-best."""

import inspect
import re

import numpy as np
import pytest

from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.distro import DistroSequenceSVM
from sklearn_structured.easy_first import EasyFirstBeamParser, EasyFirstBeamTagger
from sklearn_structured.lowrank import LowRankTensorParser
from sklearn_structured.rank_space import RankSpaceHMM, RankSpacePCFG
from sklearn_structured.utils import EpochResult, EpochTrainer, progress_line

# estimator class -> whether fit learns from y (and so takes y_val)
ITERATIVE = {
    LowRankTensorParser: True,
    EasyFirstBeamParser: True,
    EasyFirstBeamTagger: True,
    DistroSequenceSVM: True,
    RankSpacePCFG: False,
    RankSpaceHMM: False,
}

# [Name] label: seconds s, loss L, validation score V, then any extra "name value" fields
PROGRESS = re.compile(
    r"^\[(?P<name>\w+)\] (?P<label>[^:]+): (?P<seconds>\d+\.\d) s, loss (?P<loss>\S+), "
    r"validation score (?P<score>-?\d+\.\d{4})(?:, [^,]+ \S+)*$"
)


@pytest.mark.parametrize("cls", list(ITERATIVE), ids=lambda cls: cls.__name__)
def test_validation_data_is_keyword_only(cls):
    supervised = ITERATIVE[cls]
    for method in ("fit", "partial_fit"):
        if not hasattr(cls, method):
            continue
        params = inspect.signature(getattr(cls, method)).parameters
        assert list(params)[:2] == ["self", "X"]
        names = ["X_val", "y_val"] if supervised else ["X_val"]
        for name in names:
            assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, (method, name)
            assert params[name].default is None
        assert ("y_val" in params) == supervised
        # nothing else may ride along as a keyword-only fit argument
        assert [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY] == names
    with pytest.raises(TypeError):
        cls().fit([["a", "b"]], None, [["a", "b"]])


@pytest.fixture(scope="module")
def data():
    X, y = load_sample_treebank("train")
    X_val, y_val = load_sample_treebank("test")
    X, y, X_val, y_val = X[:40], y[:40], X_val[:15], y_val[:15]
    upos = [[t["upos"] for t in s] for s in X if len(s) >= 2]
    upos_val = [[t["upos"] for t in s] for s in X_val if len(s) >= 2]
    tags = [[t["xpos"] for t in s] for s in X]
    tags_val = [[t["xpos"] for t in s] for s in X_val]
    return {
        LowRankTensorParser: (X, y, X_val, y_val),
        EasyFirstBeamParser: (X, y, X_val, y_val),
        EasyFirstBeamTagger: (X, tags, X_val, tags_val),
        DistroSequenceSVM: (X, tags, X_val, tags_val),
        RankSpacePCFG: (upos, None, upos_val, None),
        RankSpaceHMM: (upos, None, upos_val, None),
    }


SMALL = {
    LowRankTensorParser: dict(rank=4, n_epochs=2, n_features=2**14),
    EasyFirstBeamParser: dict(beam_size=2, n_epochs=2, hash_bits=14),
    EasyFirstBeamTagger: dict(beam_size=2, n_epochs=2, target="xpos"),
    DistroSequenceSVM: dict(n_rounds=1, n_epochs=2),
    RankSpacePCFG: dict(n_nonterminals=3, n_preterminals=4, rank=4, n_epochs=3, batch_size=8,
                        n_iter_no_change=1),
    RankSpaceHMM: dict(n_states=4, rank=4, n_epochs=3, batch_size=8),
}


@pytest.mark.parametrize("cls", list(ITERATIVE), ids=lambda cls: cls.__name__)
def test_one_progress_line_per_epoch_in_one_format(cls, data, capsys):
    X, y, X_val, y_val = data[cls]
    model = cls(**SMALL[cls], random_state=0, verbose=1)
    if ITERATIVE[cls]:
        model.fit(X, y, X_val=X_val, y_val=y_val)
        final = model.score(X_val, y_val)
    else:
        model.fit(X, X_val=X_val)
        final = model.score(X_val)
    lines = capsys.readouterr().out.strip().splitlines()
    if cls is DistroSequenceSVM:  # plus one objective line per pass, not an epoch line
        lines = [line for line in lines if "training objective" not in line]
    matches = [PROGRESS.match(line) for line in lines]
    assert all(matches), lines
    assert {m["name"] for m in matches} == {cls.__name__}
    assert all(np.isfinite(float(m["loss"])) for m in matches)
    n_epochs = SMALL[cls]["n_epochs"]
    if cls is LowRankTensorParser:
        expected = n_epochs + 1  # the SVD initialisation pass first
    elif cls is DistroSequenceSVM:
        expected = (SMALL[cls]["n_rounds"] + 1) * n_epochs  # the weight epochs
    elif cls in (RankSpacePCFG, RankSpaceHMM):
        expected = len(model.history_)  # early stopping may end sooner
    else:
        expected = n_epochs
    assert len(lines) == expected
    scores = [float(m["score"]) for m in matches]
    # in the unit score returns: the last epoch is the model (the best one where kept)
    kept = max(scores) if cls in (RankSpacePCFG, RankSpaceHMM) else scores[-1]
    assert kept == pytest.approx(final, abs=5.1e-5)


def test_progress_line_format():
    assert (progress_line("LowRankTensorParser", "epoch 3", 0.52, 3.6171, 0.76474)
            == "[LowRankTensorParser] epoch 3: 0.5 s, loss 3.617, validation score 0.7647")
    assert (progress_line("RankSpaceHMM", "epoch 12", 61.04, 4.56789, -4.5,
                          [("updates", np.int64(7)), ("rate", 0.123456)])
            == "[RankSpaceHMM] epoch 12: 61.0 s, loss 4.568, validation score -4.5000, "
               "updates 7, rate 0.1235")
    assert progress_line("X", "epoch 1", 1, 0) == "[X] epoch 1: 1.0 s, loss 0"


class _Scripted(EpochTrainer):
    """Epoch k has parameters k and validation score scores[k - 1]; None ends training."""

    def __init__(self, scores):
        self.scores, self.params, self.n_scored, self.records = scores, 0, 0, []

    def train_epoch(self):
        if self.params == len(self.scores) or self.scores[self.params] is None:
            return None
        self.params += 1
        return EpochResult(f"epoch {self.params}", 1.0 / self.params)

    def validation_score(self, validation):
        self.n_scored += 1
        return self.scores[self.params - 1]

    def snapshot(self):
        return self.params

    def restore(self, snapshot):
        self.params = snapshot

    def epoch_done(self, record):
        self.records.append(record)


def test_loop_keeps_the_best_epoch_and_stops_after_patience():
    trainer = _Scripted([0.1, 0.3, 0.2, 0.25, 0.5])
    assert trainer.run(10, name="T", validation="val", patience=2) == 4
    assert trainer.params == 2  # epoch 2's parameters put back
    assert [r.validation_score for r in trainer.records] == [0.1, 0.3, 0.2, 0.25]
    assert all(r.seconds >= 0 and r.elapsed >= r.seconds for r in trainer.records)


def test_loop_scores_validation_only_when_the_score_is_used(capsys):
    quiet = _Scripted([0.1, 0.2, 0.3])
    assert quiet.run(3, name="T", validation="val") == 3
    assert quiet.n_scored == 0 and quiet.params == 3
    assert capsys.readouterr().out == ""
    loud = _Scripted([0.1, 0.2, 0.3])
    loud.run(3, name="T", verbose=1, validation="val")
    assert loud.n_scored == 3 and loud.params == 3  # no patience: no keep-best
    assert capsys.readouterr().out.splitlines()[-1] == (
        "[T] epoch 3: 0.0 s, loss 0.3333, validation score 0.3000")


def test_loop_stops_when_an_epoch_returns_none():
    trainer = _Scripted([0.1, 0.2, None, 0.9])
    assert trainer.run(4, name="T", validation="val", patience=5) == 2
    assert len(trainer.records) == 2 and trainer.params == 2


def test_validation_data_leaves_the_distro_model_unchanged(data):
    X, y, X_val, y_val = data[DistroSequenceSVM]
    params = dict(SMALL[DistroSequenceSVM], random_state=0)
    plain = DistroSequenceSVM(**params).fit(X, y)
    watched = DistroSequenceSVM(**params, verbose=2).fit(X, y, X_val=X_val, y_val=y_val)
    for name in ("coef_", "intercept_", "label_vectors_", "transition_matrix_"):
        np.testing.assert_array_equal(getattr(plain, name), getattr(watched, name))
    with pytest.raises(ValueError, match="y_val"):
        DistroSequenceSVM(**params).fit(X, y, X_val=X_val)
