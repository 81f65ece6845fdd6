import numpy as np
import pytest

from sklearn_structured.cli import main
from sklearn_structured.datasets import load_sample_treebank, write_conllu


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
