import gc
import io
from pathlib import Path
import pickle
import subprocess
import sys

import joblib
import numpy as np
import pytest

from sklearn_structured.cli import main
from sklearn_structured.datasets import ConlluSentence, load_sample_treebank, read_conllu, write_conllu
from sklearn_structured.utils import load_model


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


def _word_lines(path):
    """The columns of the word lines of a CoNLL-U file, read as plain text."""
    lines = Path(path).read_text().splitlines()
    return [line.split("\t") for line in lines if line and line[0].isdigit()
            and line.split("\t")[0].isdigit()]


def test_train_parse_evaluate_round_trip(sample_files, tmp_path, capsys):
    train, test = sample_files
    model = tmp_path / "parser.model"
    main(["train", "--estimator", "lowrank", "--train", str(train), "--dev", str(test),
          "--out", str(model), "--param", "rank=8", "--param", "n_epochs=2"])
    progress = capsys.readouterr()
    assert "validation score" in progress.out + progress.err and model.exists()
    assert "label error rate" in progress.err  # a labelled parser: the file has DEPREL
    assert load_model(model).verbose == 0  # trained verbosely, saved quiet

    main(["parse", "--model", str(model), str(test)])
    parsed = tmp_path / "parsed.conllu"
    parsed.write_text(capsys.readouterr().out)
    gold = read_conllu(test)
    out = read_conllu(parsed)
    # only HEAD, DEPREL and DEPS may change; empty nodes go with the input's DEPS
    assert any("." in r[0] for g in gold for r in g.rows)
    for g, p in zip(gold, out):
        assert g.comments == p.comments
        assert ([r[:6] + r[9:] for r in g.rows if "." not in r[0]]
                == [r[:6] + r[9:] for r in p.rows])
    gold_words, words = _word_lines(test), _word_lines(parsed)
    assert len(words) == len(gold_words) > 1000
    assert any(w[8] != "_" for w in gold_words)  # the input had DEPS
    for columns in words:
        assert len(columns) == 10 and columns[8] == "_"
        assert (columns[6] == "0") == (columns[7] == "root"), columns
    labels = [w[7] for w in words]
    assert len(set(labels)) > 10
    # the labels are the model's, not the input's
    agree = sum(a[7] == b[7] for a, b in zip(words, gold_words)) / len(words)
    assert 0.5 < agree < 1.0
    main(["evaluate", str(test), str(parsed)])
    out = capsys.readouterr().out
    uas = float(out.split("UAS ")[1].split()[0])
    las = float(out.split("LAS ")[1].split()[0])
    assert 40 < las < uas < 100


def test_a_file_without_deprel_trains_an_unlabelled_parser(sample_files, tmp_path, capsys):
    train, test = sample_files
    doc = read_conllu(train)
    blank = tmp_path / "blank.conllu"
    write_conllu(doc.with_heads(doc.heads(), [[None] * len(h) for h in doc.heads()]), blank)
    model = tmp_path / "unlabelled.model"
    main(["train", "--estimator", "easyfirst", "--train", str(blank), "--out", str(model),
          "--param", "n_epochs=1", "--param", "beam_size=1"])
    assert "no DEPREL" in capsys.readouterr().err
    main(["parse", "--model", str(model), str(test), "-o", str(tmp_path / "parsed.conllu")])
    words = _word_lines(tmp_path / "parsed.conllu")
    assert all(w[7] == "_" and w[8] == "_" for w in words)
    capsys.readouterr()
    main(["evaluate", str(test), str(tmp_path / "parsed.conllu")])
    out = capsys.readouterr().out
    assert "UAS " in out and "LAS n/a" in out


def test_tagger_from_the_command_line(sample_files, tmp_path, capsys):
    train, test = sample_files
    model = tmp_path / "tagger.model"
    main(["train", "--estimator", "easyfirst-tagger", "--train", str(train), "--out", str(model),
          "--param", "beam_size=1", "--param", "n_epochs=4", "--param", "target='xpos'"])
    capsys.readouterr()
    main(["parse", "--model", str(model), str(test)])
    tagged = read_conllu(io.StringIO(capsys.readouterr().out)).to_sentences()
    gold = read_conllu(test).to_sentences()
    pairs = [(g["xpos"], t["xpos"]) for gs, ts in zip(gold, tagged) for g, t in zip(gs, ts)]
    assert all(g["upos"] == t["upos"] for gs, ts in zip(gold, tagged) for g, t in zip(gs, ts))
    assert sum(a == b for a, b in pairs) / len(pairs) > 0.6


def test_taggers_and_the_parser_read_word_features_from_the_command_line(sample_files, tmp_path, capsys):
    from sklearn_structured import PPMIWordVectors

    train, test = sample_files
    X, _ = load_sample_treebank("train")
    vectors = tmp_path / "vectors.vec"
    PPMIWordVectors(n_components=4, min_count=1, n_clusters=(2, 4), random_state=0).fit(
        [[t["form"] for t in s] for s in X]).save_word2vec(vectors)
    model = tmp_path / "tagger.model"
    assert main(["train", "--estimator", "easyfirst-tagger", "--train", str(train), "--out",
                 str(model), "--param", "n_epochs=1", "--word-features", str(vectors)]) == 0
    tagger = load_model(model)
    assert tagger.word_clusters == str(vectors) and tagger.word_cluster_table_ is not None
    assert main(["train", "--estimator", "lowrank", "--train", str(train), "--out", str(model),
                 "--param", "n_epochs=1", "--param", "rank=2", "--word-features",
                 str(vectors)]) == 0
    assert load_model(model).word_vectors == str(vectors)
    capsys.readouterr()


def test_demo_reports_progress_and_held_out_uas(capsys):
    main(["demo", "--param", "rank=8", "--param", "n_epochs=2"])
    out = capsys.readouterr().out
    assert "300 training and 100 held-out sentences" in out
    # one held-out sentence as CoNLL-U lines with predicted heads and labels
    words = [line.split("\t") for line in out.splitlines() if line[:1].isdigit()
             and "\t" in line]
    assert 6 <= len(words) <= 10 and all(len(w) == 10 for w in words)
    assert [w[0] for w in words] == [str(i) for i in range(1, len(words) + 1)]
    assert sum(w[6] == "0" for w in words) >= 1
    assert all((w[6] == "0") == (w[7] == "root") for w in words)
    index = int(out.split("held-out sentence ")[1].split(",")[0]) - 1
    gold = load_sample_treebank("test", as_document=True)[index].words
    assert [w[1] for w in words] == [g[1] for g in gold]
    right = int(out.split("as parsed (")[1].split()[0])
    assert right == sum(w[6] == g[6] for w, g in zip(words, gold))
    held_out = out.split("held-out UAS ")[1]
    uas, las = float(held_out.split(",")[0]), float(held_out.split("LAS ")[1].split()[0])
    assert 0 < las < uas


def _one_line_error(capsys):
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return [line for line in err.splitlines() if line.startswith("sklearn-structured: error:")]


def test_evaluate_refuses_a_prediction_of_another_text(gold_and_pred, tmp_path, capsys):
    gold, pred, _, _ = gold_and_pred
    document = read_conllu(pred)
    document[3].words[0][1] = "Different"  # same lengths, another word
    other = tmp_path / "other.conllu"
    write_conllu(document, other)
    assert main(["evaluate", str(gold), str(other)]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    (line,) = [line for line in captured.err.splitlines() if "error:" in line]
    assert "spell different text" in line
    assert "tokenised differently" not in captured.out and captured.out == ""


def test_evaluate_of_another_text_tokenised_otherwise_prints_only_the_error(
        gold_and_pred, tmp_path, capsys):
    gold, _, _, _ = gold_and_pred
    document = read_conllu(gold)
    document.sentences[:] = document.sentences[5:]  # another text: not the same sentences
    other = tmp_path / "other.conllu"
    write_conllu(document, other)
    assert main(["evaluate", str(gold), str(other)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "spell different text" in captured.err


def test_evaluate_refuses_standard_input_twice(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert main(["evaluate", "-", "-"]) == 1
    (line,) = _one_line_error(capsys)
    assert "both be standard input" in line


def test_evaluate_aligns_a_prediction_tokenised_otherwise(gold_and_pred, tmp_path, capsys):
    gold, _, _, _ = gold_and_pred
    document = read_conllu(gold)
    words = document[0].words
    # the first two words of sentence 1 become one word of the prediction, whose
    # words there attach each to the one before
    merged = [words[0][0], words[0][1] + words[1][1], *words[0][2:]]
    rows = [[str(i + 1), *row[1:6], str(i), *row[7:]] for i, row in enumerate([merged, *words[2:]])]
    document.sentences[0] = ConlluSentence(document[0].comments, rows)
    other = tmp_path / "retokenised.conllu"
    write_conllu(document, other)
    assert main(["evaluate", str(gold), str(other)]) == 0
    out = capsys.readouterr().out
    assert "tokenised differently" in out and "UAS 100" not in out
    n_words = sum(len(s.words) for s in read_conllu(gold))
    assert f"Words {100 * 2 * (n_words - 2) / (2 * n_words - 1):.2f}" in out


@pytest.mark.parametrize("argv, message", [
    (["train", "--train", "TRAIN", "--out", "/nonexistent-dir/model"], "does not exist"),
    (["train", "--train", "missing.conllu", "--out", "OUT"], "missing.conllu"),
    (["train", "--train", "TRAIN", "--out", "OUT", "--param", "bogus=1"], "valid keys"),
    (["train", "--train", "TRAIN", "--out", "OUT", "--param", "rank"], "KEY=VALUE"),
    (["train", "--train", "TRAIN", "--out", "OUT", "--param", "rank=-3"], "rank"),
    (["train", "--train", "EMPTY", "--out", "OUT"], "no sentences"),
    (["train", "--estimator", "easyfirst", "--train", "TRAIN", "--out", "OUT",
      "--word-features", "TRAIN"], "applies to taggers, the lowrank parser and pipelines"),
    (["train", "--estimator", "pipeline", "--train", "TRAIN", "--out", "OUT",
      "--word-features", "missing.vec"], "missing.vec: no readable file there"),
    (["parse", "--model", "missing.model", "TEST"], "does not exist"),
    (["parse", "--model", "CORRUPT", "TEST"], "damaged or truncated"),
    (["parse", "--model", "CORRUPT", "TEST", "--allow-pickle"], "damaged or truncated"),
])
def test_errors_are_one_line_with_status_1(argv, message, sample_files, tmp_path, capsys):
    train, test = sample_files
    (tmp_path / "empty.conllu").write_text("")
    (tmp_path / "corrupt.model").write_bytes(b"PK\x03\x04 truncated")
    names = {"TRAIN": train, "TEST": test, "OUT": tmp_path / "out.model",
             "EMPTY": tmp_path / "empty.conllu", "CORRUPT": tmp_path / "corrupt.model"}
    argv = [str(names.get(a, a)) for a in argv]
    assert main(argv) == 1
    (line,) = _one_line_error(capsys)
    assert message in line
    assert not (tmp_path / "out.model").exists()


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["train", "--estimator", "nonsense"])
    assert exit_.value.code == 2
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and "sklearn-structured" in capsys.readouterr().out


def test_help_lists_defaults_and_param_keys(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    assert "(default: safe)" in out and "lowrank: C=1.0" in out and "pickle" in out
    # required options and options without a default show none
    assert "(default: None)" not in " ".join(out.split())


def test_pipeline_model_is_saved_quiet(pipeline_model):
    model = load_model(pipeline_model)
    assert model.tokenizer_.verbose == 0
    assert all(step.get_params().get("verbose", 0) == 0 for _, step in model.annotator_.steps)


def test_evaluate_scores_a_taggers_output(tagger_model, sample_files, tmp_path, capsys):
    """A tagger's output has HEAD '_': its tag accuracy, and the attachment scores as n/a."""
    _, test = sample_files
    blank, tagged = tmp_path / "blank.conllu", tmp_path / "tagged.conllu"
    _blank_all_but_forms(test, blank)
    assert main(["parse", "--model", str(tagger_model), str(blank), "-o", str(tagged)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(test), str(tagged)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("UPOS ") and float(out.split()[1]) > 60
    assert "UAS n/a  LAS n/a" in out


class _RunsCode:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_parse_refuses_pickles_by_default(sample_files, tmp_path, capsys):
    _, test = sample_files
    marker, model = tmp_path / "ran", tmp_path / "evil.joblib"
    joblib.dump(_RunsCode(marker), model)
    assert main(["parse", "--model", str(model), str(test)]) == 1
    assert "--allow-pickle" in _one_line_error(capsys)[0]
    model.write_bytes(pickle.dumps(_RunsCode(marker)))
    assert main(["parse", "--model", str(model), str(test)]) == 1
    assert not marker.exists()


@pytest.fixture(scope="module")
def tagger_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tagger")
    train = folder / "train.conllu"
    write_conllu(load_sample_treebank("train", as_document=True), train)
    model = folder / "tagger.model"
    assert main(["train", "--estimator", "easyfirst-tagger", "--train", str(train), "--out",
                 str(model), "--param", "beam_size=1", "--param", "n_epochs=1"]) == 0
    return model


def test_parse_reads_stdin_and_writes_output_file(tagger_model, sample_files, tmp_path, monkeypatch,
                                                  capsys):
    _, test = sample_files
    out = tmp_path / "tagged.conllu"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(test.read_bytes())))
    assert main(["parse", "--model", str(tagger_model), "-", "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert len(read_conllu(out)) == len(read_conllu(test))


def test_failed_training_keeps_the_existing_model(tagger_model, sample_files, tmp_path, capsys):
    train, _ = sample_files
    model = tmp_path / "model"
    model.write_bytes(tagger_model.read_bytes())
    assert main(["train", "--estimator", "easyfirst-tagger", "--train", str(train), "--out",
                 str(model), "--param", "beam_size=0"]) == 1
    assert model.read_bytes() == tagger_model.read_bytes()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_closed_pipe_is_not_an_error(tagger_model, sample_files):
    _, test = sample_files
    parse = subprocess.Popen(
        [sys.executable, "-m", "sklearn_structured", "parse", "--model", str(tagger_model), str(test)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    parse.stdout.readline()
    parse.stdout.close()  # like `| head -1`
    err = parse.stderr.read().decode()
    parse.wait(timeout=120)
    assert "Traceback" not in err and "Broken pipe" not in err


def test_the_installed_command_writes_all_its_output(tagger_model, sample_files, tmp_path):
    # the command ends without tearing the interpreter down: its output must
    # still be flushed whole, and a model load must leave no frozen objects to
    # the process that calls main()
    _, test = sample_files
    assert main(["parse", "--model", str(tagger_model), str(test), "-o", str(tmp_path / "in.conllu")]) == 0
    assert gc.get_freeze_count() == 0
    run = subprocess.run([sys.executable, "-m", "sklearn_structured", "parse", "--model",
                          str(tagger_model), str(test)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == (tmp_path / "in.conllu").read_text()
    assert run.stderr.endswith(f"wrote {len(read_conllu(test).sentences)} sentences to standard output\n")


def _blank_all_but_forms(source, destination):
    """Blank every column but ID, FORM and MISC, as plain text."""
    lines = []
    for line in Path(source).read_text().splitlines():
        if line and not line.startswith("#"):
            columns = line.split("\t")
            line = "\t".join(columns[:2] + ["_"] * 7 + columns[9:])
        lines.append(line)
    Path(destination).write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def pipeline_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pipeline")
    train = folder / "train.conllu"
    write_conllu(load_sample_treebank("train", as_document=True), train)
    model = folder / "pipeline.model"
    assert main(["train", "--estimator", "pipeline", "--parser", "lowrank", "--train", str(train),
                 "--out", str(model), "--param", "rank=8", "--param", "n_epochs=3",
                 "--tagger-param", "beam_size=1", "--tagger-param", "n_epochs=3",
                 "--n-folds", "3"]) == 0
    return model


def test_pipeline_fills_every_column_from_forms(pipeline_model, sample_files, tmp_path, capsys):
    _, test = sample_files
    blank, parsed = tmp_path / "blank.conllu", tmp_path / "parsed.conllu"
    _blank_all_but_forms(test, blank)
    assert all(w[2:9] == ["_"] * 7 for w in _word_lines(blank))
    assert main(["parse", "--model", str(pipeline_model), str(blank), "-o", str(parsed)]) == 0
    gold_words, words = _word_lines(test), _word_lines(parsed)
    assert len(words) == len(gold_words) > 1000
    for g, w in zip(gold_words, words):
        assert len(w) == 10 and w[:2] == g[:2] and w[9] == g[9]
        assert w[3] != "_" and w[4] != "_" and w[6] != "_" and w[7] != "_" and w[8] == "_"
        assert (w[6] == "0") == (w[7] == "root")
    for column in (3, 4):  # UPOS, XPOS: predicted, mostly right
        agree = sum(g[column] == w[column] for g, w in zip(gold_words, words)) / len(words)
        assert 0.6 < agree < 1.0
    # the same model given the gold file: the same predictions, nothing of the input's tags,
    # DEPREL or DEPS copied
    assert main(["parse", "--model", str(pipeline_model), str(test)]) == 0
    (tmp_path / "from_gold.conllu").write_text(capsys.readouterr().out)
    from_gold = _word_lines(tmp_path / "from_gold.conllu")
    assert [w[2:] for w in from_gold] == [w[2:] for w in words]

    capsys.readouterr()
    assert main(["evaluate", str(test), str(parsed)]) == 0
    out = capsys.readouterr().out.splitlines()
    names = [line.split()[0] for line in out]
    # every tag column is predicted by default
    assert names[:4] == ["UPOS", "XPOS", "UFeats", "Lemma"]
    upos = float(out[0].split()[1])
    agree = sum(g[3] == w[3] for g, w in zip(gold_words, words)) / len(words)
    assert upos == pytest.approx(100 * agree, abs=0.006)
    excluded, included = [line for line in out if line.startswith("UAS ")]
    assert "(punctuation excluded)" in excluded and "(punctuation included)" in included
    uas, las = float(excluded.split()[1]), float(excluded.split()[3])
    assert 30 < las < uas < 100


def test_parser_alone_refuses_input_without_tags(sample_files, tmp_path, capsys):
    train, test = sample_files
    blank = tmp_path / "blank.conllu"
    _blank_all_but_forms(test, blank)
    for estimator, params, fields in [("lowrank", ["rank=4", "n_epochs=1"], "no XPOS and no UPOS"),
                                      ("easyfirst", ["beam_size=1", "n_epochs=1"],
                                       "no UPOS and no XPOS")]:
        model = tmp_path / f"{estimator}.model"
        argv = ["train", "--estimator", estimator, "--train", str(train), "--out", str(model)]
        for p in params:
            argv += ["--param", p]
        assert main(argv) == 0
        capsys.readouterr()
        assert main(["parse", "--model", str(model), str(blank)]) == 1
        captured = capsys.readouterr()
        assert captured.out == ""
        (line,) = [line for line in captured.err.splitlines() if "error" in line]
        assert fields in line and "--estimator pipeline" in line, line
        # with the tags it reads, it parses
        assert main(["parse", "--model", str(model), str(test)]) == 0


def test_evaluate_scores_tags_lemmas_and_feats(gold_and_pred, tmp_path, capsys):
    gold, _, _, _ = gold_and_pred
    document = read_conllu(gold)
    changed = 0
    for sentence in document:
        for row in sentence.words[::4]:  # every fourth word: another UPOS, lemma and FEATS
            row[2], row[3], row[5] = "x", "X", "Foo=Bar"
            changed += 1
    pred = tmp_path / "pred.conllu"
    write_conllu(document, pred)
    n_words = sum(len(s.words) for s in read_conllu(gold))
    capsys.readouterr()
    assert main(["evaluate", str(gold), str(pred)]) == 0
    scores = dict(line.split()[:2] for line in capsys.readouterr().out.splitlines()
                  if line.split()[0] in ("UPOS", "XPOS", "UFeats", "Lemma"))
    assert scores["XPOS"] == "100.00"
    # a few gold words already had X, Foo=Bar or x: count them as right
    golds = [row for s in read_conllu(gold) for row in s.words]
    preds = [row for s in document for row in s.words]
    for name, column in (("UPOS", 3), ("UFeats", 5), ("Lemma", 2)):
        expected = sum(g[column] == p[column] for g, p in zip(golds, preds)) / n_words
        assert float(scores[name]) == pytest.approx(100 * expected, abs=0.006)
        assert float(scores[name]) < 100 * (1 - changed / n_words) + 1


def test_pipeline_with_lemma_and_feats_taggers_fills_those_columns(sample_files, tmp_path):
    train, test = sample_files
    model, blank, parsed = (tmp_path / name for name in ("m.model", "blank.conllu", "p.conllu"))
    assert main(["train", "--estimator", "pipeline", "--parser", "easyfirst", "--train",
                 str(train), "--out", str(model), "--targets", "upos,feats,lemma",
                 "--param", "beam_size=1", "--param", "n_epochs=1",
                 "--tagger-param", "beam_size=1", "--tagger-param", "n_epochs=2",
                 "--n-folds", "2"]) == 0
    _blank_all_but_forms(test, blank)
    assert main(["parse", "--model", str(model), str(blank), "-o", str(parsed)]) == 0
    gold_words, words = _word_lines(test), _word_lines(parsed)
    assert len(words) == len(gold_words)
    for column in (2, 5):  # LEMMA and FEATS: predicted, mostly right
        agree = sum(g[column] == w[column] for g, w in zip(gold_words, words)) / len(words)
        assert 0.5 < agree < 1.0
    assert all(w[4] == "_" for w in words)  # XPOS was not tagged: '_'


@pytest.fixture(scope="module")
def text_model(tmp_path_factory):
    """A small TextPipeline (tokeniser, UPOS tagger, parser) saved as a model file."""
    from sklearn_structured import TextPipeline, Tokenizer, make_parsing_pipeline
    from sklearn_structured.utils import save_model

    model = TextPipeline(
        Tokenizer(n_epochs=2, random_state=0),
        make_parsing_pipeline("easyfirst", targets=("upos",),
                              tagger_params={"n_epochs": 1, "beam_size": 1},
                              parser_params={"n_epochs": 1, "beam_size": 1}, n_folds=2,
                              random_state=0)).fit([load_sample_treebank(as_document=True)])
    path = tmp_path_factory.mktemp("text") / "text.model"
    save_model(model, path)
    return path


TEXT = "The museum opens today. Tickets cost $12.\r\n\r\nIt closes at six.\nBring a friend"


def test_parse_turns_text_from_stdin_into_conllu(text_model, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TEXT.encode())))
    assert main(["parse", "--model", str(text_model), "--input-format", "text"]) == 0
    captured = capsys.readouterr()
    document = read_conllu(io.StringIO(captured.out))
    assert document[0].comments[:2] == ["# newdoc", "# newpar"]
    assert sum("# newpar" in s.comments for s in document) == 2
    assert [s.metadata["sent_id"] for s in document] == [str(i) for i in range(1, len(document) + 1)]
    forms = "".join(row[1] for s in document for row in s.words)
    assert forms == "".join(TEXT.split())
    assert all(row[3] != "_" and row[6] != "_" for s in document for row in s.words)
    assert "parsing standard input" in captured.err
    assert f"wrote {len(document)} sentences to standard output" in captured.err


def test_parse_text_options(text_model, tmp_path, capsys):
    text = tmp_path / "in.txt"
    text.write_text(TEXT, encoding="utf-8")
    out = tmp_path / "out.conllu"
    assert main(["parse", "--model", str(text_model), "--input-format", "text", str(text), "-o",
                 str(out), "--presegmented", "--token-ranges", "--no-multiword",
                 "--max-sentence-length", "5"]) == 0
    assert capsys.readouterr().out == ""
    document = read_conllu(out)
    # a line is never split into sentences, only cut at 5 tokens; CRLF counts as one character
    texts = [s.metadata["text"] for s in document]
    assert texts[0] == "The museum opens today." and texts[-2:] == ["It closes at six.",
                                                                   "Bring a friend"]
    assert " ".join(texts[:-2]) == "The museum opens today. Tickets cost $12."
    assert max(len(s.words) for s in document) == 5
    assert document[2].words[0][9] == f"TokenRange={TEXT.index('It') - 2}:{TEXT.index('It')}"
    assert not any("-" in row[0] for s in document for row in s.rows)


@pytest.mark.parametrize("argv, message", [
    (["--token-ranges"], "--token-ranges only apply to --input-format text"),
    (["--input-format", "text", "--max-sentence-length", "0"], "must be at least 1"),
])
def test_parse_text_flags_are_checked(argv, message, text_model, sample_files, capsys):
    _, test = sample_files
    assert main(["parse", "--model", str(text_model), str(test), *argv]) == 1
    (line,) = _one_line_error(capsys)
    assert message in line


def test_scipy_stats_is_executed_only_when_used():
    # a fresh interpreter: the commands defer scikit-learn's start-up import of
    # scipy.stats, which still works in full once touched
    code = (
        "import sys\n"
        "from sklearn_structured.cli import _defer_import\n"
        "_defer_import('scipy.stats')\n"
        "import sklearn.pipeline\n"
        "assert 'scipy.stats._stats_py' not in sys.modules\n"
        "import scipy.stats\n"
        "from scipy.stats import kendalltau\n"
        "assert scipy.stats.norm.cdf(0.0) == 0.5 and callable(kendalltau)\n"
        "assert type(sys.modules['scipy.stats']).__name__ == 'module'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("stdin", [False, True])
def test_parse_refuses_conllu_given_as_text_and_text_given_as_conllu(
        text_model, sample_files, tmp_path, monkeypatch, capsys, stdin):
    _, conllu = sample_files
    text = tmp_path / "in.txt"
    text.write_text(TEXT, encoding="utf-8")
    for given, flags, hint in [(conllu, ["--input-format", "text"], "drop --input-format text"),
                               (text, [], "--input-format text")]:
        source = str(given)
        if stdin:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(given.read_bytes())))
            source = "-"
        out = tmp_path / "out.conllu"
        assert main(["parse", "--model", str(text_model), *flags, source, "-o", str(out)]) == 1
        (line,) = _one_line_error(capsys)
        assert hint in line and not out.exists()


def _train(args, tmp_path, name, capsys):
    out = tmp_path / name
    assert main(["train", *args, "--out", str(out)]) == 0
    return out.read_bytes(), capsys.readouterr().err


@pytest.mark.parametrize("estimator", [
    ["--estimator", "lowrank", "--param", "rank=4", "--param", "n_epochs=1"],
    ["--estimator", "easyfirst", "--param", "n_epochs=1", "--param", "beam_size=1"],
    ["--estimator", "pipeline", "--parser", "easyfirst", "--targets", "upos", "--n-folds", "2",
     "--param", "n_epochs=1", "--tagger-param", "n_epochs=1", "--tokenizer-param",
     "n_epochs=1", "--max-sentences", "60"],
])
def test_two_trainings_give_the_same_model_file_and_the_seed_changes_it(
        estimator, sample_files, tmp_path, capsys):
    train, _ = sample_files
    args = ["--train", str(train), *estimator]
    first, err = _train(args, tmp_path, "a.model", capsys)
    second, _ = _train(args, tmp_path, "b.model", capsys)
    assert first == second
    assert "seed 0" in err
    other, err = _train([*args, "--seed", "7"], tmp_path, "c.model", capsys)
    assert "seed 7" in err and other != first
    loaded = load_model(tmp_path / "c.model")
    seeds = ([loaded.random_state] if not hasattr(loaded, "tokenizer_") else
             [loaded.tokenizer_.random_state,
              *(step.random_state for _, step in loaded.annotator_.steps[1:])])
    assert seeds and set(seeds) == {7}


def test_a_random_state_param_wins_over_the_seed(sample_files, tmp_path, capsys):
    train, _ = sample_files
    _train(["--train", str(train), "--estimator", "easyfirst", "--param", "n_epochs=1",
            "--param", "random_state=3", "--seed", "7"], tmp_path, "m.model", capsys)
    assert load_model(tmp_path / "m.model").random_state == 3


def test_max_sentences_caps_the_training_sentences(sample_files, tmp_path, capsys):
    train, _ = sample_files
    _, err = _train(["--train", str(train), "--estimator", "easyfirst-tagger", "--param",
                     "n_epochs=1", "--max-sentences", "25"], tmp_path, "m.model", capsys)
    assert "training on the first 25 of 300 sentences" in err
    model = load_model(tmp_path / "m.model")
    assert model.history_[0]["loss"] is not None
    for option, message in [("--max-sentences=0", "--max-sentences must be at least 1"),
                            ("--seed=-1", "--seed must be from 0")]:
        assert main(["train", "--train", str(train), option, "--out",
                     str(tmp_path / "n.model")]) == 1
        (line,) = _one_line_error(capsys)
        assert message in line


def test_epochs_are_numbered_as_n_epochs_counts_them(sample_files, tmp_path, capsys):
    train, test = sample_files
    _, err = _train(["--train", str(train), "--dev", str(test), "--estimator", "lowrank",
                     "--param", "rank=4", "--param", "n_epochs=3", "--max-sentences", "60"],
                    tmp_path, "m.model", capsys)
    lines = [line for line in err.splitlines() if line.startswith("[LowRankTensorParser]")]
    labels = [line.split("]", 1)[1].split(":", 1)[0].strip() for line in lines]
    assert labels == ["init (gamma=1)", "epoch 1", "epoch 2", "epoch 3"]
    # the LAS of labels not trained yet is no score to read: left out of the init line
    assert "validation score" not in lines[0]
    assert all("validation score" in line for line in lines[1:])


class _Stdin(io.BytesIO):
    name = "<stdin>"  # as sys.stdin.buffer names itself


def test_messages_count_sentences_from_1_and_name_standard_input_one_way(
        sample_files, tmp_path, monkeypatch, capsys):
    _, test = sample_files
    document = read_conllu(test)
    words = document[2].words
    words[[row[6] for row in words].index("0") - 1][6] = "0"  # two roots in the third sentence
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(_Stdin(write_conllu(document).encode())))
    assert main(["train", "--train", "-", "--estimator", "easyfirst",
                 "--out", str(tmp_path / "m.model")]) == 1
    captured = capsys.readouterr()
    (line,) = [line for line in captured.err.splitlines() if "error:" in line]
    assert f"standard input:{document[2].line}-" in line and "(sentence 3)" in line
    assert "<stdin>" not in captured.err and "reading standard input" in captured.err
