"""The default pipeline on every UD treebank of the data folder, from raw text to trees.

For each treebank (every folder of ``ud/`` with a test split, older releases
included, or those named by ``--treebanks``): train ``sklearn-structured train
--estimator pipeline`` with its defaults on the train split, the dev split
for early stopping and the pipeline's choices; where there is no train split,
on the dev split alone, with nothing held out (what a user with a small
treebank has); where there is no dev split, on the train split alone. Then
``parse --input-format text`` the test file's raw text (its ``# text``
comments, paragraphs at ``# newpar``/``# newdoc``), once to warm up and once
timed (the trainings follow one warm-up training on a few sample sentences,
so that numba's compilation is timed in neither), and score the output
against the gold test file with the library's CoNLL 2018 figures
(``aligned_scores``); with ``--conll18`` also by the shared task's own
script, and the last column gives the largest difference between
the two over every figure. With ``--udpipe``, UDPipe 1 (``ufal.udpipe``, its
tokenizer, tagger and parser with their defaults) is trained on the same
split with the same held-out file and run end to end on the same text, a row
beside ours (``benchmarks/text/udpipe.py`` trains and applies it). Where UDPipe 1's
and Stanza's published models report a treebank (LAS, MLAS and BLEX from raw
text, trained on the full train split of UD 2.5), their figures are rows too,
as context: another release and more training data than a dev-only row has.
``--plot FILE`` draws LAS per treebank from every row of the section, ours
against the others (matplotlib, the ``docs`` extra).

Every treebank's work is kept under ``--state-dir``, outside the repository:
the model once trained, the record of the training, the parse and its
figures once scored. A rerun skips what is done and resumes a treebank where
it stopped (a killed training starts again), so the measure can run over
several sittings; each finished treebank is written to the ``treebanks``
section of RESULTS.md at once, one row per treebank.

    NUMBA_NUM_THREADS=1 SKLEARN_STRUCTURED_DATA=/path/to/data \\
        python -m benchmarks treebanks --state-dir /path/outside/the/repository
"""

import argparse
import json
import time
from pathlib import Path

from benchmarks.base import (CONLL18_FIGURES, SETTINGS, conll18_scores, data_home, read_section,
                             table_rows, training_files, treebank_file, write_rows)
from benchmarks.text.pipeline import cli
from benchmarks.text.udpipe import (count_sentences, text_to_trees, trained_model,
                                    trained_tagger_parser)

FIGURES = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "Lemmas", "UAS", "LAS",
           "MLAS", "BLEX")
KEYS = ["treebank", "system"]
HEADER = [*KEYS, "trained on", "training sentences", "test words", *FIGURES,
          "training CPU s", "parse words / CPU s", "model MB",
          "largest difference to conll18_ud_eval"]
NOTE = (
    "The default pipeline (`sklearn-structured train --estimator pipeline`, its defaults) trained "
    "on the train split with the dev split for early stopping and choices; on the dev split alone "
    "where a treebank has no train split (nothing held out: no early stopping), on the train split "
    "alone where it has no dev split. Tested from raw text: `parse --input-format text` on the test "
    "file's `# text` comments, scored against the gold test file by the library's CoNLL 2018 "
    "figures (F1, %). Training CPU s: the whole `train` process; parse speed: gold words of the "
    "test file per CPU second of the whole `parse` process after a warm-up run; the trainings "
    "follow one on 50 sample sentences, so that neither figure counts numba's compilation. One "
    "core (NUMBA_NUM_THREADS=1). UDPipe 1: trained on the same split with the same held-out "
    "file; training CPU s of its tokenizer and tagger-parser models, speed of both applied in one "
    "process, each loading its model. Published rows: LAS, MLAS and BLEX of the UD 2.5 models of "
    "UDPipe 1 and Stanza 1.1.1, trained on full train splits of another release, as context. "
    "Older releases (`_r<version>` folders) are their own rows: their splits are not those of "
    "the current release."
)


# LAS / MLAS / BLEX from raw text of the published UD 2.5 models, CoNLL 2018 scorer:
# UDPipe 1's model documentation (ufal/udpipe, doc/manual_model_ud-2.5) and Stanza 1.1.1
# as tabulated in Trankit's documentation (docs/source/performance.rst); as printed there
PUBLISHED = {
    "UDPipe 1, published (UD 2.5)": {
        "UD_English-EWT": ("77.0", "67.7", "69.5"),
        "UD_Czech-CLTT": ("75.4", "60.0", "68.9"),
        "UD_Turkish-IMST": ("55.1", "45.2", "46.7"),
        "UD_Portuguese-Bosque": ("81.9", "68.0", "71.8"),
        "UD_German-GSD": ("72.7", "34.5", "61.4"),
        "UD_Spanish-GSD": ("82.0", "68.6", "69.3"),
        "UD_Japanese-GSD": ("73.7", "60.6", "62.6"),
        "UD_Chinese-GSD": ("57.8", "50.8", "54.7"),
        "UD_Basque-BDT": ("69.9", "57.4", "63.2"),
        "UD_Danish-DDT": ("76.0", "66.4", "66.8"),
    },
    "Stanza 1.1.1, published (UD 2.5)": {
        "UD_English-EWT": ("83.59", "76.02", "78.50"),
        "UD_Czech-CLTT": ("83.38", "70.70", "77.56"),
        "UD_Turkish-IMST": ("64.50", "56.04", "59.60"),
        "UD_Portuguese-Bosque": ("87.57", "76.78", "80.30"),
        "UD_German-GSD": ("80.61", "58.57", "71.24"),
        "UD_Spanish-GSD": ("86.73", "73.96", "79.19"),
        "UD_Japanese-GSD": ("80.16", "69.85", "71.01"),
        "UD_Chinese-GSD": ("69.82", "63.26", "66.81"),
        "UD_Basque-BDT": ("82.76", "73.56", "78.26"),
        "UD_Danish-DDT": ("84.19", "77.13", "78.46"),
    },
}
PUBLISHED_FIGURES = ("LAS", "MLAS", "BLEX")


def treebank_names(chosen):
    """The treebanks to run: ``chosen``, or every folder of ``ud/`` with a test split."""
    if chosen:
        return chosen
    from sklearn_structured.datasets import get_data_home

    root = Path(get_data_home()) / "ud"
    return sorted(folder.name for folder in root.iterdir()
                  if folder.is_dir() and any(folder.glob("*-ud-test.conllu*")))


def warm_up(folder):
    """Train the pipeline once on a few sentences of the embedded sample, so that numba
    compiles (or loads from its cache) the kernels before any training is timed."""
    from sklearn_structured.datasets import load_sample_treebank, write_conllu

    sample = folder / "warm-up.conllu"
    with open(sample, "w", encoding="utf-8") as out:
        write_conllu(load_sample_treebank("train", as_document=True)[:50], out)
    cli("train", "--estimator", "pipeline", "--train", str(sample),
        "--out", str(folder / "warm-up.model"))


def trained(name, folder):
    """Train our pipeline on one treebank unless a finished training is on record; the
    record (split trained on, its sentences, CPU seconds)."""
    record = folder / "training.json"
    if record.exists():
        return json.loads(record.read_text())
    on, train, dev = training_files(name, folder)
    arguments = ["train", "--estimator", "pipeline", "--train", train,
                 "--out", str(folder / "pipeline.model")]
    if dev is not None:
        arguments += ["--dev", dev]
    _, cpu, _ = cli(*arguments)
    done = {"trained on": on, "training sentences": count_sentences(train), "cpu": cpu}
    record.write_text(json.dumps(done))
    return done


def test_text(name, folder):
    """The gold test file and its raw text, written into ``folder``; their paths."""
    from sklearn_structured.datasets import read_conllu
    from sklearn_structured.tokenize import segmented_text

    gold = treebank_file(name, "test", folder)
    text = folder / "test.txt"
    text.write_text(segmented_text(read_conllu(gold)).text, encoding="utf-8")
    return gold, text


def figures_of(gold_path, parsed, conll18):
    """The library's CoNLL 2018 figures of ``parsed``, the test words, and the largest
    difference to the shared task's script (None without it)."""
    from sklearn_structured.datasets import read_conllu
    from sklearn_structured.metrics import aligned_scores

    gold = read_conllu(gold_path)
    scores = aligned_scores(gold, read_conllu(parsed))
    library = {key: 100 * value.f1 for key, value in scores.items()}
    difference = None
    if conll18:
        official = conll18_scores(conll18, str(gold_path), str(parsed))
        difference = max(abs(official[key] - library[key]) for key in CONLL18_FIGURES)
    return {"figures": library, "test words": sum(len(s.words) for s in gold),
            "difference": difference}


def scored(name, folder, conll18):
    """Parse the test file's raw text with our model of the treebank and score it."""
    record = folder / "scores.json"
    if record.exists():
        return json.loads(record.read_text())
    gold, text = test_text(name, folder)
    parsed = folder / "test-from-text.conllu"
    parse = ("parse", "--model", str(folder / "pipeline.model"), "--input-format", "text",
             str(text), "-o", str(parsed))
    cli(*parse)  # warm-up: numba's cache, the file cache
    _, cpu, _ = cli(*parse)
    done = {**figures_of(gold, parsed, conll18), "parse cpu": cpu,
            "model MB": (folder / "pipeline.model").stat().st_size / 1e6}
    record.write_text(json.dumps(done))
    return done


def udpipe_scored(name, folder, conll18):
    """UDPipe 1 trained on the split ours was (its models kept in ``folder/udpipe``) and run
    end to end on the test file's raw text: its training record and figures."""
    import ufal.udpipe as udpipe

    record = folder / "udpipe-scores.json"
    if record.exists():
        return json.loads(record.read_text())
    work = folder / "udpipe"
    work.mkdir(exist_ok=True)
    on, train, dev = training_files(name, work)
    options = argparse.Namespace(reuse_model=True, tagger="", parser="")  # UDPipe's defaults
    none = udpipe.Trainer.NONE
    models = [trained_model(udpipe, options, work, "udpipe-tokenizer", ("", none, none), train,
                            dev),
              trained_tagger_parser(udpipe, options, work, train, dev)]
    (tokenizer, _), (tagger_parser, _) = models
    gold, text = test_text(name, work)
    tokens, parsed = work / "tokens.conllu", work / "test-from-text.conllu"

    text_to_trees(udpipe, tokenizer, tagger_parser, text, tokens, parsed)  # warm-up: file cache
    start = time.process_time()
    text_to_trees(udpipe, tokenizer, tagger_parser, text, tokens, parsed)
    cpu = time.process_time() - start
    done = {"training": {"trained on": on, "training sentences": count_sentences(train),
                         "cpu": sum(figures["cpu"] for _, figures in models)},
            **figures_of(gold, parsed, conll18), "parse cpu": cpu,
            "model MB": sum(model.stat().st_size for model, _ in models) / 1e6}
    record.write_text(json.dumps(done))
    return done


def row(name, system, training, scores):
    figures = scores["figures"]
    difference = scores["difference"]
    return [name, system, training["trained on"], training["training sentences"],
            scores["test words"], *(f"{figures[key]:.2f}" for key in FIGURES),
            f"{training['cpu']:.0f}", f"{scores['test words'] / scores['parse cpu']:.0f}",
            f"{scores['model MB']:.1f}", "-" if difference is None else f"{difference:.4f}"]


def write_section_rows(rows):
    write_rows("treebanks", "The default pipeline on every treebank, from raw text", HEADER, rows,
               len(KEYS), note=NOTE)


def published_rows(name):
    """The published models' rows of treebank ``name``, where they report it."""
    rows = []
    for system, treebanks in PUBLISHED.items():
        if name in treebanks:
            given = dict(zip(PUBLISHED_FIGURES, treebanks[name]))
            rows.append([name, system, "train (UD 2.5)", "-", "-",
                         *(given.get(key, "-") for key in FIGURES),
                         "-", "-", "-", "-"])
    return rows


def plot_las(path):
    """Draw LAS per treebank, one bar per system, from every row of the section."""
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed (pip install 'sklearn-structured[docs]'); no plot")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    las, on = HEADER.index("LAS"), HEADER.index("trained on")
    scores, trained_on = {}, {}
    for cells in table_rows(read_section("treebanks")):
        if cells[las] != "-":
            scores.setdefault(cells[1], {})[cells[0]] = float(cells[las])
        if cells[1] == "ours":
            trained_on[cells[0]] = cells[on]
    treebanks = sorted(scores.get("ours", {}), key=lambda name: -scores["ours"][name])
    systems = ["ours", *(s for s in scores if s != "ours")]
    width = 0.8 / len(systems)
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(treebanks) + 2), 5))
    for i, system in enumerate(systems):
        shown = [(j, scores[system][name]) for j, name in enumerate(treebanks)
                 if name in scores[system]]
        if shown:
            positions, values = zip(*shown)
            label = system if "published" in system else f"{system}, trained here"
            ax.bar([p + (i - (len(systems) - 1) / 2) * width for p in positions], values,
                   width, label=label)
    ax.set_xticks(range(len(treebanks)))
    ax.set_xticklabels([f"{name.removeprefix('UD_')}\n(on {trained_on[name]})"
                        for name in treebanks], rotation=35, ha="right")
    ax.set_ylabel("LAS from raw text (F1, %)")
    ax.set_ylim(0, 100)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2,
              frameon=False)
    fig.tight_layout()
    fig.savefig(path)
    print(f"plot written to {path}")


def arguments(argv):
    """The command line of this measure."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--state-dir", required=True, type=Path,
                    help="folder for the models, parses and records, outside the repository")
    ap.add_argument("--treebanks", nargs="+", metavar="NAME",
                    help="treebank folders or file prefixes (default: every folder of ud/ with "
                    "a test split)")
    ap.add_argument("--conll18", help="path of conll18_ud_eval.py: check the figures against "
                    "the CoNLL 2018 scorer")
    ap.add_argument("--udpipe", action="store_true",
                    help="also train and run UDPipe 1 (pip install ufal.udpipe) on each treebank")
    ap.add_argument("--plot", type=Path, metavar="FILE",
                    help="draw LAS per treebank from the section's rows into FILE (.svg, .png)")
    ap.add_argument("--report-only", action="store_true",
                    help="run no treebank: only draw the plot of --plot")
    return ap.parse_args(argv)


def main(argv=None):
    args = arguments(argv)
    if not args.report_only:
        data_home()
    if args.udpipe:
        try:
            import ufal.udpipe  # noqa: F401
        except ImportError:
            print("ufal.udpipe is not installed (pip install ufal.udpipe); nothing measured")
            return
    if args.report_only:
        names = []
    elif SETTINGS.sample and not args.treebanks:
        names = ["sample"]
    else:
        names = treebank_names(args.treebanks)
    untrained = [name for name in names if not (args.state_dir / name / "training.json").exists()]
    if untrained:
        args.state_dir.mkdir(parents=True, exist_ok=True)
        warm_up(args.state_dir)
    for name in names:
        folder = args.state_dir / name
        folder.mkdir(parents=True, exist_ok=True)
        training = trained(name, folder)
        scores = scored(name, folder, args.conll18)
        rows = [row(name, "ours", training, scores)]
        if args.udpipe:
            theirs = udpipe_scored(name, folder, args.conll18)
            rows.append(row(name, "UDPipe 1", theirs["training"], theirs))
        write_section_rows(rows)
        print(f"{name}: LAS " + ", ".join(f"{r[1]} {r[len(KEYS) + 3 + FIGURES.index('LAS')]}"
                                         for r in rows), flush=True)
    measured = {cells[0] for cells in table_rows(read_section("treebanks"))}
    context = [cells for name in sorted(measured) for cells in published_rows(name)]
    if context:
        write_section_rows(context)
    if args.plot:
        plot_las(args.plot)
