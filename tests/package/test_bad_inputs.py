"""About thirty bad inputs a new user hit: each gets one clear line
that names the place (file and line, parameter, or X[i]) and says what was expected.

The command line runs in-process through ``main``; two cases run the installed
entry point in a subprocess, to see what a shell sees.
"""

import pickle
import subprocess
import sys

import pytest

from sklearn_structured import (EasyFirstBeamParser, TextPipeline, Tokenizer,
                                make_parsing_pipeline)
from sklearn_structured.cli import main
from sklearn_structured.datasets import load_sample_treebank, read_conllu, write_conllu
from sklearn_structured.utils import save_model

HEADER = "# sent_id = 1\n"


def _word(i, form, head, upos="NOUN"):
    return f"{i}\t{form}\t_\t{upos}\t_\t_\t{head}\tdep\t_\t_\n"


GOOD = HEADER + _word(1, "Dogs", 2) + _word(2, "bark", 0) + "\n"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bad")
    X, y = load_sample_treebank("train")
    parser = EasyFirstBeamParser(beam_size=1, n_epochs=1, n_features=2**12, random_state=0)
    save_model(parser.fit(X[:20], y[:20]), folder / "parser.model")
    (folder / "parser.pickle").write_bytes(pickle.dumps(parser))
    truncated = (folder / "parser.model").read_bytes()
    (folder / "truncated.model").write_bytes(truncated[:len(truncated) // 2])
    (folder / "models").mkdir()
    document = load_sample_treebank("test", as_document=True)[:3]
    write_conllu(document, folder / "gold.conllu")
    forms = document.with_tags([[None] * len(s.words) for s in document], "upos")
    write_conllu(forms.with_tags([[None] * len(s.words) for s in document], "xpos"),
                 folder / "forms.conllu")
    many = "".join(GOOD for _ in range(400))  # longer than one decoding chunk
    contents = {
        "empty.conllu": b"",
        "binary.conllu": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        "latin1.conllu": (HEADER + _word(1, "caf\xe9", 0)).encode("latin-1"),
        "late-latin1.conllu": (many + HEADER + _word(1, "caf\xe9", 0)).encode("latin-1"),
        "bom.conllu": b"\xef\xbb\xbf" + GOOD.encode(),
        "crlf.conllu": GOOD.replace("\n", "\r\n").encode(),
        "nine-columns.conllu": (HEADER + "1\tDogs\t_\tNOUN\t_\t_\t0\troot\t_\n\n").encode(),
        "word-order.conllu": (HEADER + _word(1, "Dogs", 0) + _word(3, "bark", 1) + "\n").encode(),
        "out-of-range.conllu": (HEADER + _word(1, "Dogs", 0) + _word(2, "bark", 9) + "\n").encode(),
        "cycle.conllu": (HEADER + _word(1, "Dogs", 0) + _word(2, "bark", 3)
                         + _word(3, "loud", 2) + "\n").encode(),
        "no-root.conllu": (HEADER + _word(1, "Dogs", 2) + _word(2, "bark", 1) + "\n").encode(),
        "zero-tokens.conllu": (GOOD + HEADER + "\n").encode(),
        "missing-head.conllu": (HEADER + _word(1, "Dogs", "_") + _word(2, "bark", 0) + "\n").encode(),
        "comment-inside.conllu": (HEADER + _word(1, "Dogs", 0) + "# late\n" + "\n").encode(),
        "carriage-return.conllu": (HEADER + _word(1, "Do\rgs", 0) + "\n").encode(),
        "plain-text.txt": b"Dogs bark.\nCats sleep.\n",
        "other-text.conllu": (GOOD + GOOD).encode(),
        "empty.txt": b"",
        "binary.txt": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        "latin1.txt": "Dogs bark.\n\nCaf\xe9 au lait.\n".encode("latin-1"),
        "blank.txt": b"  \n\t\r\n\n",
        "mixed.txt": b"Dogs bark.\r\nCats sleep.\n\r\nBirds sing",
        # a treebank whose text is withheld: no # text and every FORM _
        "withheld.conllu": (HEADER + _word(1, "_", 2) + _word(2, "_", 0) + "\n").encode(),
    }
    for name, content in contents.items():
        (folder / name).write_bytes(content)
    text_model = TextPipeline(Tokenizer(n_epochs=1), make_parsing_pipeline(
        "easyfirst", targets=("upos",), tagger_params={"n_epochs": 1, "beam_size": 1},
        parser_params={"n_epochs": 1, "beam_size": 1}, n_folds=2, random_state=0))
    save_model(text_model.fit([load_sample_treebank("train", as_document=True)[:40]]),
               folder / "text.model")
    return folder


def _one_line(argv, files, capsys, status=1):
    """Run the command; it must fail with ``status`` and one error line, returned."""
    argv = [str(files / a[1:]) if a.startswith("@") else a for a in argv]
    assert main(argv) == status
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = [line for line in captured.err.splitlines() if line.startswith("sklearn-structured:")]
    assert len(lines) == 1, captured.err
    return lines[0]


TRAIN = ["train", "--estimator", "easyfirst", "--out", "@out.model", "--param", "n_epochs=1",
         "--train"]


@pytest.mark.parametrize("argv, expected", [
    (TRAIN + ["@empty.conllu"], ["empty.conllu holds no sentences"]),
    (TRAIN + ["@binary.conllu"], ["binary.conllu:1: not UTF-8 (byte 0x89)"]),
    (TRAIN + ["@latin1.conllu"], ["latin1.conllu:2: not UTF-8 (byte 0xe9)"]),
    (TRAIN + ["@late-latin1.conllu"], [f"late-latin1.conllu:{400 * 4 + 2}: not UTF-8 (byte 0xe9)"]),
    (TRAIN + ["@nine-columns.conllu"], ["nine-columns.conllu:2:", "9 tab-separated columns"]),
    (TRAIN + ["@word-order.conllu"], ["word-order.conllu:3:", "word ID '3'"]),
    (TRAIN + ["@out-of-range.conllu"], ["out-of-range.conllu:3:", "HEAD 9 of word 2"]),
    (TRAIN + ["@cycle.conllu"], ["cycle.conllu:1-4", "cycle among tokens"]),
    (TRAIN + ["@no-root.conllu"], ["no-root.conllu:1-3", "no token attaches to the root"]),
    (TRAIN + ["@zero-tokens.conllu"], ["zero-tokens.conllu:6:", "empty sentence"]),
    (TRAIN + ["@missing-head.conllu"], ["missing-head.conllu:2:", "HEAD '_' of word 1"]),
    (TRAIN + ["@comment-inside.conllu"], ["comment-inside.conllu:3:", "comment line inside"]),
    (TRAIN + ["@carriage-return.conllu"], ["carriage-return.conllu:2:", "carriage return"]),
    (TRAIN + ["@plain-text.txt"], ["plain-text.txt:1:", "1 tab-separated columns"]),
    (TRAIN + ["@no-such.conllu"], ["No such file or directory", "no-such.conllu"]),
    (TRAIN + ["@models"], ["models is a directory"]),
    # parameters are checked before the (here missing) data are read
    (TRAIN + ["@no-such.conllu", "--param", "beam_size=0"], ["beam_size", "EasyFirstBeamParser"]),
    (TRAIN + ["@gold.conllu", "--param", "bogus=1"], ["'bogus' is not a parameter", "valid keys"]),
    (TRAIN + ["@gold.conllu", "--param", "beam_size"], ["KEY=VALUE", "'beam_size'"]),
    (["train", "--train", "@gold.conllu", "--out", "@no-dir/out.model"], ["no-dir", "does not exist"]),
    (["parse", "--model", "@no-such.model", "@gold.conllu"], ["no-such.model does not exist"]),
    (["parse", "--model", "@models", "@gold.conllu"], ["models is a directory, not a model file"]),
    (["parse", "--model", "@truncated.model", "@gold.conllu"], ["truncated.model", "damaged or truncated"]),
    (["parse", "--model", "@parser.pickle", "@gold.conllu"], ["parser.pickle", "--allow-pickle"]),
    (["parse", "--model", "@parser.model", "@forms.conllu"],
     ["forms.conllu:1-", "no UPOS and no XPOS", "--estimator pipeline"]),
    (["parse", "--model", "@parser.model", "@empty.conllu"], ["empty.conllu holds no sentences"]),
    (["evaluate", "@gold.conllu", "@other-text.conllu"],
     ["gold.conllu:", "other-text.conllu:", "spell different text"]),
])
def test_command_line_names_the_place(argv, expected, files, capsys):
    line = _one_line(argv, files, capsys)
    for part in expected:
        assert part in line, line
    assert not (files / "out.model").exists()


PARSE_TEXT = ["parse", "--model", "@text.model", "--input-format", "text", "-o", "@out.conllu"]


@pytest.mark.parametrize("name, expected", [
    ("empty.txt", ["empty.txt is empty"]),
    ("binary.txt", ["binary.txt:3:", "NUL byte at byte offset 8", "binary file"]),
    ("latin1.txt", ["latin1.txt:3:", "not UTF-8 (byte 0xe9 at byte offset 15)"]),
    ("blank.txt", ["blank.txt holds only white space"]),
    ("no-such.txt", ["No such file or directory", "no-such.txt"]),
    ("models", ["models is a directory"]),
])
def test_bad_text_names_the_place_and_writes_no_file(name, expected, files, capsys):
    line = _one_line(PARSE_TEXT + ["@" + name], files, capsys)
    for part in expected:
        assert part in line, line
    assert not [p.name for p in files.iterdir() if p.name.startswith((".tmp-", "out."))]


def test_mixed_line_endings_and_no_final_newline_are_read(files, capsys):
    argv = [str(files / a[1:]) if a.startswith("@") else a for a in PARSE_TEXT + ["@mixed.txt"]]
    assert main(argv) == 0
    document = read_conllu(files / "out.conllu")
    (files / "out.conllu").unlink()
    assert sum("# newpar" in s.comments for s in document) == 2
    assert "".join(row[1] for s in document for row in s.words) == "Dogsbark.Catssleep.Birdssing"


def test_a_treebank_without_text_cannot_train_a_tokeniser(files, capsys):
    line = _one_line(["train", "--estimator", "pipeline", "--out", "@out.model", "--train",
                      "@withheld.conllu"], files, capsys)
    assert "withheld.conllu:1: no '# text' and every FORM is '_'" in line, line
    assert not (files / "out.model").exists()
    document = read_conllu(files / "withheld.conllu")
    for estimator in (Tokenizer(n_epochs=1), TextPipeline(Tokenizer(n_epochs=1))):
        with pytest.raises(ValueError, match=r"withheld.conllu:1: no '# text' and every FORM "
                                             r"is '_', so the text cannot be rebuilt"):
            estimator.fit([document])


def test_a_byte_order_mark_and_crlf_are_read(files, capsys):
    for name in ("bom.conllu", "crlf.conllu"):
        assert read_conllu(files / name)[0].words[0][1] == "Dogs"
        assert main(["evaluate", str(files / name), str(files / name)]) == 0
        assert "UAS 100.00" in capsys.readouterr().out


def test_debug_after_the_command_shows_the_traceback(files):
    with pytest.raises(ValueError, match="not UTF-8"):
        main(["evaluate", str(files / "latin1.conllu"), str(files / "gold.conllu"), "--debug"])
    with pytest.raises(ValueError, match="not UTF-8"):
        main(["--debug", "evaluate", str(files / "latin1.conllu"), str(files / "gold.conllu")])


def test_ctrl_c_while_training_says_the_model_was_not_written(files, capsys, monkeypatch):
    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(EasyFirstBeamParser, "fit", interrupted)
    argv = [str(files / a[1:]) if a.startswith("@") else a for a in TRAIN + ["@gold.conllu"]]
    assert main(argv) == 130
    assert capsys.readouterr().err.splitlines()[-1] == (
        "sklearn-structured: interrupted; model not written")
    assert not (files / "out.model").exists()


@pytest.fixture(scope="module")
def parser(files):
    from sklearn_structured.utils import load_model

    return load_model(files / "parser.model")


@pytest.mark.parametrize("X, error, expected", [
    ([["The", "cat", "sat"]], ValueError, r"X\[0\] has no UPOS and no XPOS on any token.*"
                                          r"tag the sentences first.*make_parsing_pipeline"),
    ([[{"form": "The"}, {"form": "cat"}]], ValueError, r"X\[0\] has no UPOS and no XPOS"),
    ([[{"form": "Dogs", "upos": "NOUN"}], ["bark"]], ValueError, r"X\[1\] has no UPOS"),
    (None, TypeError, r"X must be a list of sentences, each a list of tokens.*got None"),
    ({"form": "x"}, TypeError, r"X must be a list of sentences.*got a dict"),
    ("The cat sat", TypeError, r"X must be a list of sentences.*got a str"),
    (3, TypeError, r"X must be a list of sentences.*got a int"),
    ([{"form": "x"}], TypeError, r"X\[0\] is a dict; X must be a list of sentences"),
    ([[]], ValueError, r"X\[0\] is an empty sentence"),
    ([["Dogs", 3]], TypeError, r"X\[0\]\[1\] is a int"),
])
def test_python_names_what_was_expected(parser, X, error, expected):
    with pytest.raises(error, match=expected):
        parser.predict(X)


def test_python_score_refuses_bare_forms_too(parser):
    X, y = load_sample_treebank("test")
    bare = [[token["form"] for token in sentence] for sentence in X[:3]]
    with pytest.raises(ValueError, match="has no UPOS and no XPOS"):
        parser.score(bare, y[:3])
    assert 0 <= parser.score(X[:3], y[:3]) <= 1  # with the tags it reads, it scores


@pytest.mark.parametrize("argv, status, expected", [
    (["evaluate", "@latin1.conllu", "@gold.conllu"], 1, "latin1.conllu:2: not UTF-8 (byte 0xe9)"),
    (["train", "--estimator", "nonsense"], 2, "--estimator: invalid choice: 'nonsense'"),
])
def test_the_installed_command_prints_one_line(argv, status, expected, files):
    argv = [str(files / a[1:]) if a.startswith("@") else a for a in argv]
    run = subprocess.run([sys.executable, "-m", "sklearn_structured", *argv],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == status and run.stdout == ""
    errors = [line for line in run.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and expected in errors[0], run.stderr
