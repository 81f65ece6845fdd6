"""The shared epoch loop: one way to pass validation data, one progress line, keep-best."""

import numpy as np

from sklearn_structured.utils import EpochResult, EpochTrainer, progress_line


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
