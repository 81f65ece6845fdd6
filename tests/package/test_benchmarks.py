"""The benchmarks still run: each measure on a few sentences of the embedded sample.

The figures mean nothing at this size; what fails here is a measure that
no longer imports (a renamed library name) or no longer runs through to its
RESULTS section, or one that reaches into the library's private names, which
may change without notice.
"""

import ast
import json
import importlib
import sys
from pathlib import Path

import pytest

# the repository root holds the benchmarks package; it is not installed with the library
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "benchmarks" / "__init__.py").is_file())
sys.path.insert(0, str(ROOT))

from benchmarks import MEASURES  # noqa: E402
from benchmarks.__main__ import run  # noqa: E402
from benchmarks.base import PROVENANCE, SETTINGS, Settings, table_rows, write_rows  # noqa: E402

SAMPLE = 12  # sentences of the embedded sample per split

# measure -> its arguments for a run of seconds; measures missing here need
# corpora, programs or packages outside the repository (20 Newsgroups, PTB,
# UDPipe, a Dask cluster, git worktrees) and are only imported
TINY_RUNS = {
    "decoders": ["--sentences", "2", "--repeats", "1", "--sizes", "10"],
    "lowrank": ["--treebanks", "en_ewt", "--configs", "full", "full_pruned", "--n-epochs", "1",
                "--cache-dir", "{tmp}"],
    "lowrank_threads": [],
    "hill_climbing": ["--sentences", "3", "--patience", "2", "--margin", "1.0", "--reference", "3"],
    "labels": ["--parser", "lowrank", "--param", "n_epochs=1"],
    "easy_first": ["--parts", "parser", "tagger", "--beams", "1", "--epochs", "1", "--tagger-beams", "1",
                   "--tagger-epochs", "1", "--repeats", "1", "--store", "{tmp}", "--skip-crfsuite"],
    "taggers": ["--targets", "upos", "--seeds", "0", "--epochs", "1", "--store", "{tmp}"],
    "tokenize": ["--treebanks", "en_ewt", "--seeds", "0"],
    "pipeline": ["--work", "{tmp}/work", "--repeats", "1", "--param", "n_epochs=1", "--tagger-param", "n_epochs=1"],
    "treebanks": ["--state-dir", "{tmp}/treebanks"],
    "spectral": ["--parts", "ewt_fit", "speed", "rerank", "--em-seeds", "0", "--spectral-components", "4",
                 "--repeats", "1", "--rerank-seeds", "0", "--selection-seeds", "0", "--parser-epochs", "1",
                 "--n-best", "3", "--perceptron-epochs", "1", "--cache-dir", "{tmp}/spectral"],
    "distro": ["--quick", "--skip-news", "--no-exact-pos"],
    "distro_morph": ["--seeds", "0", "--n-rounds", "1", "--n-epochs", "1", "--alphas", "1e-5",
                     "--nuclear-penalties", "0", "--skip-pruning", "--skip-easy-first"],
}


def private_uses(tree):
    """``(line, what)`` of every private name of the library that ``tree`` (a module) uses.

    Private: a module path of sklearn_structured with a component starting with an
    underscore, a name starting with one imported from the library, and an attribute
    ``x._name`` that the module does not define itself (dunders are not private).
    """
    own = {node.name for node in ast.walk(tree)
           if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    own |= {target.attr for node in ast.walk(tree) if isinstance(node, ast.Assign)
            for target in node.targets if isinstance(target, ast.Attribute)}

    def private(name):
        return name.startswith("_") and not name.endswith("__")

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sklearn_structured"):
            names = [*node.module.split("."), *(alias.name for alias in node.names)]
            found += [(node.lineno, f"from {node.module} import {name}") for name in names
                      if private(name)]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, f"import {alias.name}") for alias in node.names
                      if alias.name.startswith("sklearn_structured")
                      and any(private(part) for part in alias.name.split("."))]
        elif isinstance(node, ast.Attribute) and private(node.attr) and node.attr not in own:
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_private_uses_are_found():
    source = (
        "import sklearn_structured._parse\n"
        "from sklearn_structured.lowrank._kernels import score\n"
        "from sklearn_structured.labelling import _kernels\n"
        "from sklearn_structured import LowRankTensorParser\n"
        "class Own:\n"
        "    def __init__(self):\n"
        "        self._cache = {}\n"
        "    def _helper(self):\n"
        "        return self._cache, self.__class__\n"
        "parser._predict_data(X)\n"
    )
    assert [line for line, _ in private_uses(ast.parse(source))] == [1, 2, 3, 10]


@pytest.mark.parametrize("path", sorted((ROOT / "benchmarks").rglob("*.py")),
                         ids=lambda path: str(path.relative_to(ROOT)))
def test_benchmarks_use_the_public_api_only(path):
    found = private_uses(ast.parse(path.read_text(encoding="utf-8")))
    assert not found, "\n".join(f"{path.name}:{line}: {what}" for line, what in found)


@pytest.fixture
def results(tmp_path):
    """Point the harness at a scratch RESULTS file, and restore its settings afterwards."""
    yield tmp_path / "RESULTS.md"
    for field, value in vars(Settings()).items():
        setattr(SETTINGS, field, value)


@pytest.mark.parametrize("measure", sorted(MEASURES))
def test_every_measure_imports_and_has_a_main(measure):
    module = importlib.import_module(MEASURES[measure])
    assert callable(module.main)


@pytest.mark.parametrize("measure", sorted(TINY_RUNS))
def test_measure_runs_on_the_sample(measure, results, tmp_path):
    argv = [a.format(tmp=tmp_path) for a in TINY_RUNS[measure]]
    run(["--results", str(results), "--sample", str(SAMPLE), measure, *argv])
    text = results.read_text() if results.exists() else ""
    assert "<!-- BEGIN " in text, f"{measure} wrote no section"
    assert f"python -m benchmarks --results {results} --sample {SAMPLE} {measure}" in text


def test_write_rows_keeps_other_seeds_and_replaces_a_rerun(results):
    SETTINGS.results = results
    header = ["treebank", "seed", "UAS"]
    write_rows("demo", "Demo", header, [["en_ewt", 0, "80.00"], ["en_ewt", 1, "81.00"]], 2)
    write_rows("demo", "Demo", header, [["en_ewt", 1, "82.00"], ["en_ewt", 2, "83.00"]], 2)
    rows = table_rows(results.read_text())
    assert [row[:3] for row in rows] == [["en_ewt", "0", "80.00"], ["en_ewt", "1", "82.00"],
                                         ["en_ewt", "2", "83.00"]]
    assert all(len(row) == len(header) + len(PROVENANCE) for row in rows)


def test_a_treebank_without_a_train_split_is_trained_on_dev_alone(results, tmp_path, monkeypatch):
    """The treebanks measure, on a treebank that gives only dev and test (as the sample
    stands in here): trained on dev, nothing held out, and the row says so."""
    import benchmarks.base

    monkeypatch.setattr(benchmarks.base, "has_split", lambda name, split: split != "train")
    run(["--results", str(results), "--sample", str(SAMPLE), "treebanks",
         "--state-dir", str(tmp_path / "state")])
    [row] = [r for r in table_rows(results.read_text()) if r[0] == "sample"]
    assert row[1:4] == ["ours", "dev", str(SAMPLE)]
    assert json.loads((tmp_path / "state" / "sample" / "training.json").read_text())[
        "trained on"] == "dev"


def test_the_treebanks_measure_adds_the_published_rows_and_draws_every_row(results, tmp_path):
    """Beside a treebank's own rows come the published models' rows for it, with only the
    figures they report; ``--report-only --plot`` runs nothing and draws them all."""
    pytest.importorskip("matplotlib")
    from benchmarks.text.treebanks import HEADER, published_rows

    SETTINGS.results = results
    rows = published_rows("UD_Czech-CLTT")
    assert [r[1] for r in rows] == ["UDPipe 1, published (UD 2.5)", "Stanza 1.1.1, published (UD 2.5)"]
    assert all(len(r) == len(HEADER) for r in rows)
    assert rows[0][HEADER.index("LAS")] == "75.4" and rows[0][HEADER.index("UPOS")] == "-"
    assert published_rows("sample") == []
    ours = ["UD_Czech-CLTT", "ours", "train", "467", "100", *["80.00"] * 11, "60", "3000", "20.0",
            "0.0000"]
    write_rows("treebanks", "Treebanks", HEADER, [ours], 2)
    plot = tmp_path / "las.svg"
    run(["--results", str(results), "treebanks", "--state-dir", str(tmp_path / "state"),
         "--report-only", "--plot", str(plot)])
    systems = [r[1] for r in table_rows(results.read_text())]
    assert systems == ["ours", "UDPipe 1, published (UD 2.5)", "Stanza 1.1.1, published (UD 2.5)"]
    assert plot.read_text().startswith("<?xml") and not (tmp_path / "state").exists()
