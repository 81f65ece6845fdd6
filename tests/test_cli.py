import io

import numpy as np
import pytest

from sklearn_structured.cli import main
from sklearn_structured.datasets import load_sample_treebank, read_conllu, write_conllu


@pytest.fixture
def gold_and_pred(tmp_path):
    doc = load_sample_treebank("test", as_document=True)
    heads = doc.heads()
    # every third word attached to the root instead: a known, lower UAS
    wrong = [np.where(np.arange(len(h)) % 3 == 0, 0, h) for h in heads]
    gold, pred = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    write_conllu(doc, gold)
    write_conllu(doc.with_heads(wrong), pred)
    return gold, pred, heads, wrong


def test_evaluate_prints_scores(gold_and_pred, capsys):
    gold, pred, heads, wrong = gold_and_pred
    assert main(["evaluate", str(gold), str(gold)]) == 0
    out = capsys.readouterr().out
    assert "UAS 100.00" in out and "LAS 100.00" in out and "complete match 100.00" in out

    main(["evaluate", str(gold), str(pred), "--punct", "include"])
    out = capsys.readouterr().out
    expected = sum(int((a == b).sum()) for a, b in zip(heads, wrong)) / sum(map(len, heads))
    assert f"UAS {100 * expected:.2f}" in out


@pytest.fixture
def sample_files(tmp_path):
    train, test = tmp_path / "train.conllu", tmp_path / "test.conllu"
    write_conllu(load_sample_treebank("train", as_document=True), train)
    write_conllu(load_sample_treebank("test", as_document=True), test)
    return train, test


def test_train_parse_evaluate_round_trip(sample_files, tmp_path, capsys):
    train, test = sample_files
    model = tmp_path / "parser.joblib"
    main(["train", "--estimator", "lowrank", "--train", str(train), "--dev", str(test),
          "--out", str(model), "--param", "rank=8", "--param", "n_epochs=2"])
    progress = capsys.readouterr()
    assert "validation UAS" in progress.out + progress.err and model.exists()

    main(["parse", "--model", str(model), str(test)])
    parsed = tmp_path / "parsed.conllu"
    parsed.write_text(capsys.readouterr().out)
    gold = read_conllu(test)
    out = read_conllu(parsed)
    # only the HEAD column may change
    for g, p in zip(gold, out):
        assert g.comments == p.comments
        assert [r[:6] + r[7:] for r in g.rows] == [r[:6] + r[7:] for r in p.rows]
    main(["evaluate", str(test), str(parsed)])
    uas = float(capsys.readouterr().out.split("UAS ")[1].split()[0])
    assert 40 < uas < 100


def test_tagger_from_the_command_line(sample_files, tmp_path, capsys):
    train, test = sample_files
    model = tmp_path / "tagger.joblib"
    main(["train", "--estimator", "easyfirst-tagger", "--train", str(train), "--out", str(model),
          "--param", "beam_size=1", "--param", "n_epochs=4", "--param", "target='xpos'"])
    capsys.readouterr()
    main(["parse", "--model", str(model), str(test)])
    tagged = read_conllu(io.StringIO(capsys.readouterr().out)).to_sentences()
    gold = read_conllu(test).to_sentences()
    pairs = [(g["xpos"], t["xpos"]) for gs, ts in zip(gold, tagged) for g, t in zip(gs, ts)]
    assert all(g["upos"] == t["upos"] for gs, ts in zip(gold, tagged) for g, t in zip(gs, ts))
    assert sum(a == b for a, b in pairs) / len(pairs) > 0.6


def test_demo_reports_progress_and_held_out_uas(capsys):
    main(["demo", "--param", "rank=8", "--param", "n_epochs=2"])
    out = capsys.readouterr().out
    assert "300 training and 100 held-out sentences" in out
    assert "held-out UAS (without punctuation)" in out
