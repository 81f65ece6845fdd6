"""What every benchmark shares: its settings, the data, timing and the RESULTS writer.

A measure is a module of this package with a ``main(argv)``; ``python -m
benchmarks MEASURE ARGS`` runs it (see ``__main__.py``). The settings below
are set once by that entry point: where the sections go, and whether the
treebanks are replaced by a few sentences of the embedded sample (what the
CI check and a quick trial use).
"""

import datetime
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

RESULTS = Path(__file__).with_name("RESULTS.md")
REPOSITORY = Path(__file__).resolve().parents[1]
HEADER = (
    "# Benchmark results\n\n"
    "Written by the benchmarks in this folder; do not edit figures by hand. "
    "Each section names the command, the commit and the machine that produced it.\n"
)


@dataclass
class Settings:
    results: Path = RESULTS  # the file whose sections the measures rewrite
    sample: int = 0  # when > 0, every treebank is this many sentences of the embedded sample
    command: str = "python -m benchmarks"  # the command line, as the stamp shows it


SETTINGS = Settings()


class Timing(NamedTuple):
    result: Any  # what the last call returned
    wall: float  # median wall-clock seconds of a call
    cpu: float  # median CPU seconds of this process during a call


def timed(function, repeats=1):
    """Call ``function()`` ``repeats`` times and return the median wall and CPU time.

    Medians rather than best-of, because on these shared machines one quiet
    repeat says little about the others; CPU seconds beside wall seconds show
    how much of a slow call was waiting for a core.
    """
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        result = function()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return Timing(result, statistics.median(walls), statistics.median(cpus))


def data_home():
    """The folder of the real corpora, named by ``SKLEARN_STRUCTURED_DATA``.

    The library's loaders read the same variable, so measures call them without
    ``data_home=``; this check only makes a measure stop before any work, with
    a clear message, when the variable is unset or wrong. With the embedded
    sample standing in for the treebanks, there is nothing to check.
    """
    from sklearn_structured.datasets import get_data_home

    if SETTINGS.sample:
        return None
    if not os.environ.get("SKLEARN_STRUCTURED_DATA"):
        sys.exit("set SKLEARN_STRUCTURED_DATA to the folder of the real corpora (e.g. ../shared/data)")
    home = Path(get_data_home())
    if not home.is_dir():
        sys.exit(f"SKLEARN_STRUCTURED_DATA={home} is not a directory")
    return home


def load_treebank(name, split, *, as_document=False, **kwargs):
    """``load_ud_treebank(name, split, ...)``, or the embedded sample in its place.

    With ``SETTINGS.sample`` set, the training split is the start of the
    sample's training part and every other split the start of its test part,
    whatever ``name`` says.
    """
    from sklearn_structured.datasets import load_conllu, load_sample_treebank, load_ud_treebank

    if not SETTINGS.sample:
        return load_ud_treebank(name, split, as_document=as_document, **kwargs)
    document = load_sample_treebank("train" if split == "train" else "test", as_document=True)
    document.sentences = document.sentences[:SETTINGS.sample]
    return document if as_document else load_conllu(document, **kwargs)


def has_split(name, split):
    """Whether treebank ``name`` has the ``split`` (the sample has every split)."""
    try:
        load_treebank(name, split, as_document=True)
    except FileNotFoundError:
        return False
    return True


def training_files(name, folder):
    """``(split, train, dev)``: what a system is trained on (the train split, or the dev
    split where there is none) and the file held out for early stopping (the dev split
    beside a train split; None for none), written into ``folder``."""
    on = "train" if has_split(name, "train") else "dev"
    held_out = on == "train" and has_split(name, "dev")
    return (on, str(treebank_file(name, on, folder)),
            str(treebank_file(name, "dev", folder)) if held_out else None)


def treebank_file(name, split, folder):
    """Write one split (as :func:`load_treebank` reads it) into ``folder``; its path.

    For measures that hand files to a command line; reading and writing
    CoNLL-U loses nothing, so the copy holds what the corpus file holds.
    """
    from sklearn_structured.datasets import write_conllu

    path = Path(folder) / f"{name}-{split}.conllu"
    with open(path, "w", encoding="utf-8") as out:
        write_conllu(load_treebank(name, split, as_document=True), out)
    return path


# the CoNLL 2018 shared task's figures, in its own order
CONLL18_FIGURES = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas",
                   "UAS", "LAS", "CLAS", "MLAS", "BLEX")


def conll18_scores(script, gold, system):
    """F1 (in %) of every CONLL18_FIGURES name by the shared task's own scorer.

    ``script`` is the path of a local copy of conll18_ud_eval.py (neither the
    library nor any package ships it); ``gold`` and ``system`` are CoNLL-U
    paths or text file objects.
    """
    import importlib.util

    spec = importlib.util.spec_from_file_location("conll18_ud_eval", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    files = [open(f, encoding="utf-8") if isinstance(f, (str, Path)) else f for f in (gold, system)]
    try:
        scores = module.evaluate(*(module.load_conllu(f) for f in files))
    finally:
        for f, given in zip(files, (gold, system)):
            if f is not given:
                f.close()
    return {name: 100 * scores[name].f1 for name in CONLL18_FIGURES}


def machine_description():
    """Cores, Python, the thread count and the load average as the measure starts."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",) * 3
    threads = os.environ.get("NUMBA_NUM_THREADS", "default")
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"NUMBA_NUM_THREADS={threads}, load average at start {load[0]:.2f}"
    )


def code_description():
    """The commit checked out, and whether anything but RESULTS.md differs from it."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=REPOSITORY, capture_output=True,
                              text=True, check=True).stdout

    try:
        commit = git("rev-parse", "--short", "HEAD").strip()
        # RESULTS.md is rewritten by the measures themselves, so its edits do not count
        changed = [line for line in git("status", "--porcelain").splitlines()
                   if not line.endswith(f"benchmarks/{RESULTS.name}")]
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not run from a git checkout)"
    return f"{commit}, " + ("with uncommitted changes" if changed else "clean tree")


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _section_pattern(name):
    return re.compile(rf"<!-- BEGIN {re.escape(name)} -->\n.*?<!-- END {re.escape(name)} -->\n", re.S)


def read_section(name):
    """The text of section ``name`` in the results file, or ``""``."""
    path = SETTINGS.results
    match = _section_pattern(name).search(path.read_text()) if path.exists() else None
    return match.group(0) if match else ""


def _replace_section(name, section):
    path = SETTINGS.results
    text = path.read_text() if path.exists() else HEADER
    pattern = _section_pattern(name)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


def write_section(name, title, body):
    """Replace (or append) the section ``name`` of the results file with ``body``."""
    stamp = _now()
    section = (
        f"<!-- BEGIN {name} -->\n## {title}\n\n"
        f"- command: `{SETTINGS.command}`\n- date: {stamp}\n- commit: {code_description()}\n"
        f"- machine: {machine_description()}\n\n"
        f"{body.rstrip()}\n<!-- END {name} -->\n"
    )
    _replace_section(name, section)


# the columns write_rows adds to every row: where the row comes from
PROVENANCE = ("date", "commit", "machine", "command")


def write_rows(name, title, header, rows, key_columns, note=""):
    """Put ``rows`` into the one table of section ``name``, keeping its other rows.

    A row of an earlier run stays unless a new row has the same values in the
    first ``key_columns`` columns (the setting and the seed), which then takes
    its place. Every row carries its own date, commit, machine and command, so
    seeds run apart are rows of one table. ``note`` (optional) comes before the
    table and is rewritten.
    """
    stamp = _now()
    provenance = [stamp, code_description(), machine_description(), f"`{SETTINGS.command}`"]
    new = {tuple(map(str, row[:key_columns])): [str(cell) for cell in row] + provenance for row in rows}
    merged = {tuple(row[:key_columns]): row for row in table_rows(read_section(name))}
    merged.update(new)  # a rerun takes its earlier row's place; a new setting comes last
    body = markdown_table([*header, *PROVENANCE], list(merged.values()))
    section = f"<!-- BEGIN {name} -->\n## {title}\n\n"
    if note:
        section += f"{note.rstrip()}\n\n"
    section += f"{body}\n<!-- END {name} -->\n"
    _replace_section(name, section)


def table_rows(text):
    """The cells of every body row of the Markdown tables in ``text``."""
    lines = text.splitlines()
    body = [line for line, following in zip(lines, lines[1:] + [""])
            if line.startswith("| ") and not following.startswith("|---")]
    return [[cell.strip() for cell in line.strip()[1:-1].split(" | ")] for line in body]


def parameters(pairs):
    """``KEY=VALUE`` options (``--param``) as a dict, each value a Python literal."""
    import ast

    return {key: ast.literal_eval(value) for key, value in (p.split("=", 1) for p in pairs)}


def field_values(X, field):
    """The values of ``field`` of every token, a list per sentence (gold tags to score)."""
    return [[token[field] for token in sentence] for sentence in X]


def mean_sd(values, scale=1.0, digits=2):
    """``mean ± sd`` over seeds (population sd), or the single value of one seed."""
    import numpy as np  # not at the top: a measure sets its BLAS thread count before numpy loads

    values = scale * np.asarray(values, dtype=float)
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{values.mean():.{digits}f} ± {values.std():.{digits}f}"


def markdown_table(header, rows):
    """A GitHub table from a header list and rows of already formatted cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
