"""UDPipe 1's full pipeline from word forms, beside ours, on a UD treebank.

Trains UDPipe 1 (the ``ufal.udpipe`` Python binding; its tagger, lemmatiser
and parser with their default settings, no tokenizer: gold tokenisation) on
the training split with the dev split as its held-out data (early stopping),
or where the treebank has no training split on the dev split with no
held-out data (as ``python -m benchmarks treebanks`` trains ours there),
applies it to the test split with every column but ID, FORM and MISC blanked
(the same input ``python -m benchmarks pipeline`` gives our pipeline), and scores its
output with ``sklearn-structured evaluate`` and, given ``--conll18 PATH`` (a
local copy of conll18_ud_eval.py: neither the library nor any package ships
it), the CoNLL 2018 shared-task scorer. ``--ours NAME=FILE`` names our
pipeline's output on the same input (``python -m benchmarks pipeline --work W`` leaves it
as ``W/<parser>.conllu``) so that both are scored by the same scorers in the
same run. Figures go to the
``udpipe`` section of benchmarks/RESULTS.md, one row per treebank, input,
system and scorer: a run replaces the rows it measured and keeps the others.

The tagger-parser model is trained in two steps, each kept in the work folder:
the tagger alone, then the parser with that tagger copied in (UDPipe's
``from_model``). UDPipe's parser learns from the output of the tagger its
model holds, so this gives the model of one joint training, and with
``--reuse-model`` a run cut off after the tagger resumes at the parser.

``--raw-text`` also trains UDPipe's tokeniser, alone (its defaults; each
model is kept in the work folder, so that with ``--reuse-model`` the
tokeniser and the tagger-parser model can be trained in separate sittings, or
at once on both cores, as ``--part`` does) and runs the two end to end on the
test file's raw text (the text that
``python -m benchmarks pipeline --conll18`` gives our ``parse --input-format text``);
``--ours`` then names our output on that text, and both are scored by the
CoNLL 2018 scorer, which aligns differing tokenisations (the rows whose
input is raw text).

UDPipe is not a dependency of the library; without it the script says so and
stops.

    pip install ufal.udpipe
    NUMBA_NUM_THREADS=1 SKLEARN_STRUCTURED_DATA=/path/to/data \\
        python -m benchmarks udpipe --work /tmp/udpipe \\
        --ours "ours (lowrank)=/tmp/pipe/lowrank.conllu" --conll18 conll18_ud_eval.py
"""

import argparse
import json
import lzma
import os
import re
from pathlib import Path


from benchmarks.base import (CONLL18_FIGURES, conll18_scores, data_home, timed, training_files,
                             treebank_file, write_rows)
from benchmarks.text.pipeline import cli, strip_to_forms


# The models --raw-text chains, in the order they run. UDPipe trains the tokeniser
# apart from the rest; the tagger-parser model's parser learns from its tagger's
# output rather than gold tags, as by default.
PARTS = ("tokenizer", "tagger-parser")

# the section's columns: what a row is (the keys), every figure either scorer gives
# (evaluate's Lemma under CoNLL's Lemmas; "+p": punctuation included), how UDPipe ran
KEYS = ["treebank", "input", "system", "scorer"]
FIGURES = [*CONLL18_FIGURES, "UAS +p", "LAS +p"]
HEADER = [*KEYS, *FIGURES, "UDPipe 1 run"]
FROM_FORMS, FROM_TEXT = "forms", "raw text"
EVALUATE, CONLL18 = "evaluate", "CoNLL 2018"
NOTE = (
    "UDPipe 1 (ufal.udpipe, method morphodita_parsito; tagger and parser options '' are "
    "UDPipe's defaults) is trained on the treebank's train split with dev as held-out data "
    "(on dev with no held-out data where there is no train split); "
    "its run column gives the training and tagging times and the model size. Input *forms*: "
    "no tokenizer (gold tokenisation); the test split with every column but ID, FORM and MISC "
    "blanked. Input *raw text*: UDPipe's tokenizer (trained alone) and tagger-parser end to end "
    "on the test file's raw text (its `# text` comments, paragraphs at `# newpar`/`# newdoc`). "
    "Scorer *evaluate*: `sklearn-structured evaluate` (syntactic words; UAS/LAS without "
    "punctuation, +p with; gold UPOS PUNCT). Scorer *CoNLL 2018*: the shared-task scorer "
    "(conll18_ud_eval.py, a local copy outside the repository; punctuation included, UFeats "
    "over the universal features, LAS over the universal part of DEPREL; it aligns differing "
    "tokenisations). The other systems are the named files of our pipeline on the same input, "
    "scored alike; a row 'X - UDPipe 1' is the difference; '-' is a figure the system does not "
    "predict or the scorer does not give. Published for UDPipe 1 on en_ewt from raw text "
    "(UD 2.5, its own models): UAS 80.2, LAS 77.0."
)
TITLE = "UDPipe 1 beside ours, from forms and from raw text"


def read_text(path):
    opener = lzma.open if str(path).endswith(".xz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return f.read()


def udpipe_sentences(udpipe, text):
    """A ``ufal.udpipe.Sentences`` read from CoNLL-U text."""
    reader = udpipe.InputFormat.newConlluInputFormat()
    reader.setText(text)
    error = udpipe.ProcessingError()
    sentences = udpipe.Sentences()
    sentence = udpipe.Sentence()
    while reader.nextSentence(sentence, error):
        sentences.push_back(sentence)
        sentence = udpipe.Sentence()
    if error.occurred():
        raise ValueError(f"UDPipe could not read the CoNLL-U: {error.message}")
    return sentences


def train_udpipe(udpipe, train, dev, model, tokenizer_options, tagger_options, parser_options):
    """Train and save a model (each of the three parts with its options: "" for
    UDPipe's defaults, ``Trainer.NONE`` for none) on ``train``, ``dev`` (or None:
    none) held out; return the CPU and wall seconds."""
    training = udpipe_sentences(udpipe, read_text(train))
    heldout = udpipe.Sentences() if dev is None else udpipe_sentences(udpipe, read_text(dev))
    error = udpipe.ProcessingError()
    trained, wall, seconds = timed(lambda: udpipe.Trainer.train(
        "morphodita_parsito", training, heldout, tokenizer_options, tagger_options,
        parser_options, error))
    if error.occurred():
        raise RuntimeError(f"UDPipe training failed: {error.message}")
    Path(model).write_bytes(trained)
    return seconds, wall


def trained_model(udpipe, args, work, stem, options, train, dev, earlier=None):
    """The model ``work/<stem>.model`` and its training record, trained with the
    (tokenizer, tagger, parser) ``options`` unless ``--reuse-model`` finds both.

    ``earlier``: the record of the step whose model this one copies in; its
    seconds count as this model's, and its tagger options are this model's.
    """
    model, record = work / f"{stem}.model", work / f"{stem}-training.json"
    if not (args.reuse_model and model.exists() and record.exists()):
        load = os.getloadavg()[0]
        cpu, wall = train_udpipe(udpipe, train, dev, model, *options)
        figures = {"cpu": cpu, "wall": wall, "load": [load, os.getloadavg()[0]],
                   "tagger": options[1], "parser": options[2]}
        if earlier:
            figures.update(cpu=earlier["cpu"] + cpu, wall=earlier["wall"] + wall,
                           load=[earlier["load"][0], figures["load"][1]],
                           tagger=earlier["tagger"])
        record.write_text(json.dumps(figures))
    return model, json.loads(record.read_text())


def trained_tagger_parser(udpipe, args, work, train, dev):
    """UDPipe's tagger-parser model ``work/udpipe.model`` and its record: the tagger
    trained alone (``udpipe-tagger.model``), then the parser with it copied in."""
    none = udpipe.Trainer.NONE
    done = work / "udpipe.model", work / "udpipe-training.json"
    if args.reuse_model and all(path.exists() for path in done):
        return done[0], json.loads(done[1].read_text())
    tagger, tagger_record = trained_model(udpipe, args, work, "udpipe-tagger",
                                          (none, args.tagger, none), train, dev)
    options = (none, f"from_model=file:{tagger}", args.parser)
    return trained_model(udpipe, args, work, "udpipe", options, train, dev, earlier=tagger_record)


def apply_udpipe(udpipe, model, source, destination, input_format="conllu", annotate=True):
    """Tag and parse ``source`` into ``destination`` (with ``annotate=False``, only
    tokenise: a tokeniser-only model); ``source`` is CoNLL-U, or raw text to split
    given ``input_format="tokenize"``. Return the wall seconds."""
    loaded = udpipe.Model.load(str(model))
    if loaded is None:
        raise RuntimeError(f"UDPipe could not load {model}")
    annotation = udpipe.Pipeline.DEFAULT if annotate else udpipe.Pipeline.NONE
    pipeline = udpipe.Pipeline(loaded, input_format, annotation, annotation, "conllu")
    error = udpipe.ProcessingError()
    text = read_text(source)
    output, wall, _ = timed(lambda: pipeline.process(text, error))
    if error.occurred():
        raise RuntimeError(f"UDPipe failed on {source}: {error.message}")
    Path(destination).write_text(output, encoding="utf-8")
    return wall


def text_to_trees(udpipe, tokenizer, tagger_parser, text, tokens, predicted):
    """UDPipe end to end on the raw ``text``: its tokenizer model writes ``tokens``, its
    tagger-parser model ``predicted``; the wall seconds of both."""
    return (apply_udpipe(udpipe, tokenizer, text, tokens, "tokenize", annotate=False)
            + apply_udpipe(udpipe, tagger_parser, tokens, predicted))


def evaluate(gold, predicted):
    """``sklearn-structured evaluate`` figures: {name: str}."""
    report = cli("evaluate", str(gold), str(predicted))[2]
    figures = dict(re.findall(r"^(UPOS|XPOS|UFeats|Lemma) ([\d.]+)$", report, re.M))
    if "Lemma" in figures:  # the CoNLL 2018 scorer's name, the section's column
        figures["Lemmas"] = figures.pop("Lemma")
    for uas, las, punct in re.findall(r"^UAS ([\d.]+)  LAS ([\d.n/a]+)  \(punctuation (\w+)d\)$",
                                      report, re.M):
        suffix = "" if punct == "exclude" else " +p"
        figures["UAS" + suffix], figures["LAS" + suffix] = uas, las
    return figures


def count_sentences(path):
    """The sentences of a CoNLL-U file: its words numbered 1 (older releases have no
    ``# sent_id``)."""
    return sum(1 for line in open(path, encoding="utf-8") if line.startswith("1\t"))


def compared_systems(udpipe_output, ours):
    """(name, path) of UDPipe's output, then of each ``--ours NAME=FILE``."""
    return [("UDPipe 1", udpipe_output)] + [tuple(o.split("=", 1)) for o in ours]


def add_difference_row(rows):
    """Append the second system's row minus UDPipe's (the first), "-" where either has none."""
    if len(rows) > 1:
        first, second = rows[0], rows[1]
        name = f"{second[2]} - UDPipe 1"
        rows.append([*first[:2], name, first[3]] + [
            "-" if "-" in (a, b) else f"{float(b) - float(a):+.2f}"
            for a, b in zip(first[len(KEYS):-1], second[len(KEYS):-1])] + ["-"])


def figure_row(keys, figures, run="-"):
    """A row of the section: its keys, ``figures`` (name -> formatted value) by FIGURES."""
    return [*keys, *(figures.get(name, "-") for name in FIGURES), run]


def write(rows):
    write_rows("udpipe", TITLE, HEADER, rows, key_columns=len(KEYS), note=NOTE)


def write_raw_text_rows(udpipe, args, models, gold, work):
    """UDPipe 1 end to end from the test file's raw text (built from its ``# text``
    comments as ``segmented_text`` does, the text ``python -m benchmarks pipeline --conll18`` gives
    our ``parse``), beside ``--ours``, by the CoNLL 2018 scorer.

    ``models`` maps each of PARTS to its model and training record.
    """
    from sklearn_structured.datasets import read_conllu
    from sklearn_structured.tokenize import segmented_text

    (tokenizer, _), (tagger_parser, _) = (models[part] for part in PARTS)
    text = work / "test.txt"
    text.write_text(segmented_text(read_conllu(gold)).text, encoding="utf-8")
    tokens = work / "udpipe-tokens.conllu"
    predicted = work / "udpipe-from-text.conllu"

    def run():
        return text_to_trees(udpipe, tokenizer, tagger_parser, text, tokens, predicted)

    run()  # warm-up
    wall = run()
    n_sentences = count_sentences(gold)
    trained = ", ".join(f"{part} {record['cpu']:.0f} CPU s ({record['wall']:.0f} s wall, "
                        f"{model.stat().st_size / 1e6:.1f} MB)"
                        for part, (model, record) in models.items())
    udpipe_run = (f"{udpipe_version(udpipe)}, tokenizer, tagger and parser with their defaults; "
                  f"trained {trained}; end to end on the text of {n_sentences} gold sentences in "
                  f"{wall:.1f} s wall ({n_sentences / wall:.0f} sent/s, model loaded)")
    rows = []
    for name, path in compared_systems(predicted, args.ours):
        scores = conll18_scores(args.conll18, gold, path)
        rows.append(figure_row([args.treebank, FROM_TEXT, name, CONLL18],
                               {c: f"{scores[c]:.2f}" for c in CONLL18_FIGURES},
                               udpipe_run if not rows else "-"))
    add_difference_row(rows)
    write(rows)


def udpipe_version(udpipe):
    version = udpipe.Version.current()
    return f"ufal.udpipe {version.major}.{version.minor}.{version.patch}"


def arguments(argv):
    """The command line of this measure."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--work", required=True, help="folder for the model and the tagged files")
    ap.add_argument("--ours", action="append", default=[], metavar="NAME=FILE",
                    help="our pipeline's output on the same blanked test input, scored alike")
    ap.add_argument("--tagger", default="", help="UDPipe tagger options (default: its defaults)")
    ap.add_argument("--parser", default="", help="UDPipe parser options (default: its defaults)")
    ap.add_argument("--conll18", help="path of conll18_ud_eval.py, the CoNLL 2018 scorer")
    ap.add_argument("--reuse-model", action="store_true", help="skip training if the model exists")
    ap.add_argument("--raw-text", action="store_true",
                    help="also train UDPipe's tokeniser and run it and the tagger-parser end "
                         "to end from the test file's raw text (needs --conll18; --ours then "
                         "names our `parse --input-format text` output on the same text)")
    ap.add_argument("--part", choices=PARTS,
                    help="with --raw-text: only train this model (e.g. both at once, one per "
                         "core), then stop")
    args = ap.parse_args(argv)
    if args.part and not args.raw_text:
        ap.error("--part applies to --raw-text only")
    if args.raw_text and not args.part and not args.conll18:
        ap.error("--raw-text needs --conll18: only the CoNLL 2018 scorer aligns tokenisations")
    return args


def main(argv=None):
    args = arguments(argv)
    data_home()
    try:
        import ufal.udpipe as udpipe
    except ImportError:
        print("ufal.udpipe is not installed (pip install ufal.udpipe); nothing measured")
        return

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    _, train, dev = training_files(args.treebank, work)
    test = str(treebank_file(args.treebank, "test", work))
    none = udpipe.Trainer.NONE

    def trained(part):
        if part == "tokenizer":
            return trained_model(udpipe, args, work, "udpipe-tokenizer", ("", none, none),
                                 train, dev)
        return trained_tagger_parser(udpipe, args, work, train, dev)

    if args.part:  # training only: leaves the test files to the run that scores
        trained(args.part)
        return
    gold = work / "test-gold.conllu"
    gold.write_text(read_text(test), encoding="utf-8")
    forms = work / "test-forms.conllu"
    strip_to_forms(gold, forms)
    if args.raw_text:
        models = {part: trained(part) for part in PARTS}
        write_raw_text_rows(udpipe, args, models, gold, work)
        return
    model, record = trained("tagger-parser")
    predicted = work / "udpipe.conllu"
    apply_udpipe(udpipe, model, forms, predicted)  # warm-up (page cache, model load)
    wall = apply_udpipe(udpipe, model, forms, predicted)
    n_sentences = count_sentences(gold)

    udpipe_run = (
        f"{udpipe_version(udpipe)}, tagger options {record['tagger']!r}, parser options "
        f"{record['parser']!r}; trained {record['cpu']:.0f} CPU s ({record['wall']:.0f} s wall, "
        f"load average {record['load'][0]:.1f} -> {record['load'][1]:.1f}), model "
        f"{model.stat().st_size / 1e6:.1f} MB; tagged and parsed {n_sentences} test sentences in "
        f"{wall:.1f} s wall ({n_sentences / wall:.0f} sent/s, model loaded)")
    write(scored_from_forms(args, gold, compared_systems(predicted, args.ours), udpipe_run))


def scored_from_forms(args, gold, systems, udpipe_run):
    """The rows of every system's output from forms: by evaluate, then by the CoNLL 2018
    scorer when given (only the figures evaluate gives the system, and MLAS and BLEX)."""
    # evaluate leaves out a tag column a system does not fill (all '_'): "-" for both scorers
    figures = [evaluate(gold, path) for _, path in systems]
    rows = [figure_row([args.treebank, FROM_FORMS, name, EVALUATE], found,
                       udpipe_run if i == 0 else "-")
            for i, ((name, _), found) in enumerate(zip(systems, figures))]
    add_difference_row(rows)
    if args.conll18:
        for (name, path), found in zip(systems, figures):
            scored = conll18_scores(args.conll18, gold, path)
            filled = {"UPOS", "XPOS", "UFeats", "Lemmas", "UAS", "LAS"} & set(found)
            filled |= {"MLAS", "BLEX"}
            rows.append(figure_row([args.treebank, FROM_FORMS, name, CONLL18],
                                   {c: f"{scored[c]:.2f}" for c in filled}))
    return rows
