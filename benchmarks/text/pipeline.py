"""Forms to labelled trees on a UD treebank (English EWT by default) through the command line.

Trains ``sklearn-structured train --estimator pipeline`` (the tokeniser, the
taggers of ``--targets``, every tag column by default, 10-fold jackknifing,
then the parser)
on the training split of ``--treebank``, with
the dev split for the progress lines only; strips every column but ID, FORM
and MISC from the test split; runs ``sklearn-structured parse`` on it as a
whole process, once to warm up (numba's cache) and then ``--repeats`` times
timed; scores the output with ``sklearn-structured evaluate`` against the
gold test file; with ``--conll18`` also by the CoNLL 2018 scorer, and parses
the test file's raw text end to end. Each run is one row (parser, treebank,
tagged fields, seed) of the ``pipeline_<parser>`` section of RESULTS.md, and
with ``--conll18`` two rows of ``pipeline_<parser>_conll18``; a rerun of a
setting replaces its rows. With ``--word-features`` (a vector file, or
``none`` for the arm without), the rows go to sections of their own,
``pipeline_<parser>_word_features`` and ``..._word_features_conll18``, whose
setting also names the vector file; with ``--param``, to sections ending in
``_params``, whose setting also names the parser parameters (an arm such as
``--param tag_feats=None`` beside the defaults).

    NUMBA_NUM_THREADS=1 SKLEARN_STRUCTURED_DATA=/path/to/data \\
        python -m benchmarks pipeline --parser lowrank --work /tmp/pipe
"""

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

from benchmarks.base import CONLL18_FIGURES, conll18_scores, data_home, treebank_file, write_rows


PIPELINE_FIGURES = ["test sentences", "UPOS", "XPOS", "UFeats", "Lemma", "UAS", "LAS", "UAS +p", "LAS +p",
                    "parse sent/s (wall / CPU, median)", "from raw text: parse sent/s (wall / CPU)",
                    "train s (wall / CPU)", "model MB", "MB per step", "load average"]
CONLL18_ROW = ["input", *CONLL18_FIGURES, "aligned_scores: largest difference"]
PIPELINE_NOTE = (
    "Train `sklearn-structured train --estimator pipeline` on the train split (dev for the progress "
    "lines only, `random_state` of every step set to the seed), test once on the test split with "
    "every column but ID, FORM and MISC blanked. Scored by `sklearn-structured evaluate` over "
    "syntactic words (UAS/LAS without and with punctuation, gold UPOS PUNCT). Speed: the whole "
    "`parse` process (start-up, reading, tagging, parsing, writing), the median of the runs after "
    "a warm-up (in brackets: the range of the wall figure), one core; from raw text, the same for "
    "`parse --input-format text` on the test file's `# text` comments, in gold sentences per second."
)
CONLL18_NOTE = (
    "CoNLL 2018 shared-task scorer (conll18_ud_eval.py, a local copy outside the repository) on "
    "the output from gold tokens and on the output of `parse --input-format text` given the test "
    "file's raw text (its `# text` comments, paragraphs at `# newpar`/`# newdoc`), end to end. "
    "The last column: the largest difference between the library's `aligned_scores` and the "
    "script over every figure of the row."
)


def strip_to_forms(source, destination):
    """Blank every column but ID, FORM and MISC (comments and token lines kept)."""
    with open(source, encoding="utf-8") as inp, open(destination, "w", encoding="utf-8") as out:
        for line in inp:
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                columns = line.split("\t")
                line = "\t".join([columns[0], columns[1]] + ["_"] * 7 + [columns[9]])
            out.write(line + "\n")


def step_megabytes(model):
    """Stored MB of each pipeline step of a safe-format model file, ``{name: MB}``."""

    def arrays(value):  # the archive entries a step's description refers to
        if isinstance(value, dict):
            return ([value["__array__"]] if "__array__" in value else
                    [a for v in value.values() for a in arrays(v)])
        return [a for v in value for a in arrays(v)] if isinstance(value, list) else []

    with np.load(model, allow_pickle=False) as archive:
        document = json.loads(archive["model.json"].tobytes().decode("utf-8"))
    with zipfile.ZipFile(model) as archive:  # .npy entries, stored uncompressed
        stored = {info.filename[:-4]: info.compress_size for info in archive.infolist()}
    content = document["model"]
    parts = {}
    if content.get("__estimator__") == "TextPipeline":  # the tokeniser, then the pipeline
        parts["tokenizer"] = content["state"]["tokenizer_"]
        content = content["state"]["annotator_"]
    parts.update(content["__pipeline__"]["steps"])
    return {name: sum(stored[a] for a in arrays(part)) / 1e6 for name, part in parts.items()}


def cli(*args, stdout=None):
    """Run ``python -m sklearn_structured ARGS``; return (wall s, CPU s of the child, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "sklearn_structured", *args], check=True,
                          stdout=stdout or subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def arguments(argv):
    """The command line of this measure."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parser", choices=("lowrank", "easyfirst"), default="lowrank")
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--work", required=True, help="folder for the model and the parsed file")
    ap.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                    help="parser parameter, passed to train")
    ap.add_argument("--targets", help="fields the pipeline tags, passed to train (default: "
                    "train's, every tag column)")
    ap.add_argument("--tagger-param", action="append", default=[], metavar="KEY=VALUE",
                    help="tagger parameter, passed to train")
    ap.add_argument("--seed", type=int, default=0, help="random_state of the tokeniser, the "
                    "taggers and the parser (default 0)")
    ap.add_argument("--repeats", type=int, default=3, help="timed parse runs after the warm-up")
    ap.add_argument("--word-features", metavar="PATH|none",
                    help="word vectors passed to train (none: the arm without, in the same tables)")
    ap.add_argument("--reuse-model", action="store_true", help="skip training if the model exists")
    ap.add_argument("--conll18", help="path of conll18_ud_eval.py: also score with the CoNLL 2018 "
                    "scorer and the library's aligned evaluation, from gold tokens and, from the "
                    "test file's raw text, end to end")
    return ap.parse_args(argv)


def main(argv=None):
    args = arguments(argv)
    data_home()

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    train, dev, test = (str(treebank_file(args.treebank, s, work)) for s in ("train", "dev", "test"))
    forms = work / "test-forms.conllu"
    strip_to_forms(test, forms)
    model = work / f"{args.parser}.model"
    load_start = os.getloadavg()[0]

    train_args = ["train", "--estimator", "pipeline", "--parser", args.parser, "--train", train,
                  "--dev", dev, "--out", str(model)]
    if args.targets:
        train_args += ["--targets", args.targets]
    for p in args.param:
        train_args += ["--param", p]
    for p in args.tagger_param:
        train_args += ["--tagger-param", p]
    if args.word_features and args.word_features != "none":
        train_args += ["--word-features", args.word_features]
    for option in ("--param", "--tagger-param", "--tokenizer-param"):
        train_args += [option, f"random_state={args.seed}"]
    record = work / f"{args.parser}-training.json"
    if not (args.reuse_model and model.exists()):
        train_wall, train_cpu, _ = cli(*train_args)
        record.write_text(json.dumps({"wall": train_wall, "cpu": train_cpu}))
    # a reused model keeps the training time measured when it was trained
    trained = json.loads(record.read_text()) if record.exists() else None
    parsed = work / f"{args.parser}.conllu"
    cli("parse", "--model", str(model), str(forms), "-o", str(parsed))  # warm-up
    timings = [cli("parse", "--model", str(model), str(forms), "-o", str(parsed))[:2]
               for _ in range(args.repeats)]
    _, _, report = cli("evaluate", test, str(parsed))
    print(report)
    n_sentences = sum(1 for line in open(test, encoding="utf-8") if line.startswith("# sent_id"))

    figures = dict(re.findall(r"^(UPOS|XPOS|UFeats|Lemma) ([\d.]+)$", report, re.M))
    attachment = {punct: (uas, las) for uas, las, punct in
                  re.findall(r"^UAS ([\d.]+)  LAS ([\d.n/a]+)  \(punctuation (\w+)d\)$",
                             report, re.M)}
    # the machine is shared: the median of the repeats, with the spread of the wall times
    median_wall = statistics.median(w for w, _ in timings)
    median_cpu = statistics.median(c for _, c in timings)
    spread = f"{n_sentences / max(w for w, _ in timings):.0f}-{n_sentences / min(w for w, _ in timings):.0f}"
    targets = args.targets or "default targets"
    names, setting, suffix = ["parser", "treebank", "tagged fields"], [args.parser, args.treebank, targets], ""
    title = f"Forms-only pipeline ({args.parser})"
    if args.word_features:
        names.append("word features")
        setting.append(Path(args.word_features).name)
        suffix += "_word_features"
        title += " with and without word features"
    if args.param:
        names.append("parser params")
        setting.append(", ".join(args.param))
        suffix += "_params"
        title += ", parser parameters set"
    names.append("seed")
    setting.append(args.seed)
    section = f"pipeline_{args.parser}{suffix}"
    raw_text_speed, conll18_rows = (conll18_figures(args, model, test, parsed, n_sentences, work)
                                    if args.conll18 else ("-", []))
    row = [
        *setting, n_sentences, *(figures.get(name, "-") for name in ("UPOS", "XPOS", "UFeats", "Lemma")),
        *attachment["exclude"], *attachment["include"],
        f"{n_sentences / median_wall:.0f} / {n_sentences / median_cpu:.0f} ({spread})", raw_text_speed,
        "-" if trained is None else f"{trained['wall']:.0f} / {trained['cpu']:.0f}",
        f"{model.stat().st_size / 1e6:.1f}",
        " / ".join(f"{name} {mb:.1f}" for name, mb in step_megabytes(model).items()),
        f"{load_start:.1f} -> {os.getloadavg()[0]:.1f}",
    ]
    write_rows(section, f"{title}: tags and trees from forms", [*names, *PIPELINE_FIGURES], [row],
               len(setting), note=PIPELINE_NOTE)
    if conll18_rows:
        write_rows(f"{section}_conll18", f"{title}: CoNLL 2018 figures, from gold tokens and raw text",
                   [*names, *CONLL18_ROW], [setting + r for r in conll18_rows], len(setting) + 1,
                   note=CONLL18_NOTE)


def conll18_figures(args, model, gold, parsed, n_sentences, work):
    """The raw-text parse speed and the CoNLL 2018 rows (gold tokens, raw text) of one run.

    The raw text is the test file's ``# text`` comments, as ``segmented_text``
    builds it; each row also says how far the library's ``aligned_scores``
    is from the shared task's scorer."""
    from sklearn_structured.datasets import read_conllu
    from sklearn_structured.metrics import aligned_scores
    from sklearn_structured.tokenize import segmented_text

    text = work / "test.txt"
    text.write_text(segmented_text(read_conllu(gold)).text, encoding="utf-8")
    from_text = work / f"{args.parser}-from-text.conllu"
    parse_text = ("parse", "--model", str(model), "--input-format", "text", str(text),
                  "-o", str(from_text))
    cli(*parse_text)  # warm-up
    timings = [cli(*parse_text)[:2] for _ in range(args.repeats)]
    rows = []
    for name, system in (("gold tokens", parsed), ("raw text", from_text)):
        official = conll18_scores(args.conll18, gold, system)
        library = {k: 100 * v.f1 for k, v in aligned_scores(read_conllu(gold),
                                                             read_conllu(system)).items()}
        difference = max(abs(official[k] - library[k]) for k in library)
        rows.append([name, *(f"{official[k]:.2f}" for k in CONLL18_FIGURES), f"{difference:.4f}"])
    wall = statistics.median(w for w, _ in timings)
    cpu = statistics.median(c for _, c in timings)
    return f"{n_sentences / wall:.0f} / {n_sentences / cpu:.0f}", rows
