"""The tokeniser and sentence splitter from raw text, against UDPipe 1's tokeniser.

For each treebank: fit :class:`~sklearn_structured.tokenize.Tokenizer` on
train (dev scored after every epoch for the progress line only), build the
test file's raw text from its ``# text`` comments (paragraphs at ``# newpar``
/ ``# newdoc``, as ``../shared/REFERENCES.md`` describes), split it, and score
Tokens, Sentences and Words F1 with the library's CoNLL 2018 evaluation
(and with the shared task's own script when ``--conll18-script`` names it, as
an outside check). Speed is sentences per second of ``predict`` on the whole
test text, median of five runs after a warm-up, on the threads
``NUMBA_NUM_THREADS`` allows (the kernels are single-threaded).

    SKLEARN_STRUCTURED_DATA=../shared/data NUMBA_NUM_THREADS=1 \\
        python -m benchmarks tokenize --treebanks en_ewt pt_bosque --seeds 0 1 2
"""

import argparse
import io
import time

import numpy as np

from sklearn_structured.datasets import write_conllu
from sklearn_structured.metrics import aligned_scores
from sklearn_structured.tokenize import Tokenizer, segmented_text, to_document

from benchmarks.base import conll18_scores, data_home, load_treebank, markdown_table, mean_sd, timed, write_section

# UDPipe 1's tokeniser trained here with its defaults (../shared/REFERENCES.md)
UDPIPE1 = {"en_ewt": (99.15, 85.61, 98.93), "pt_bosque": (99.77, 89.07, 99.66)}
FIGURES = ("Tokens", "Sentences", "Words")


def official_scores(script, gold, system):
    """F1 of FIGURES by the CoNLL 2018 script at path ``script``.

    The script reads trees, so the system's words get a chain (each attached
    to the one before), which the figures here do not look at.
    """
    system = system.with_heads([np.arange(len(s.words)) for s in system],
                               [["dep"] * len(s.words) for s in system])
    scores = conll18_scores(script, *(io.StringIO(write_conllu(doc)) for doc in (gold, system)))
    return {name: scores[name] for name in FIGURES}


def run(treebank, seed, args):
    train = load_treebank(treebank, "train", as_document=True)
    dev = load_treebank(treebank, "dev", as_document=True)
    test = load_treebank(treebank, "test", as_document=True)
    cpu = time.process_time()
    tokenizer = Tokenizer(random_state=seed, verbose=1).fit([train], X_val=[dev])
    fit_cpu = time.process_time() - cpu
    text = segmented_text(test).text
    tokenizer.predict([text])  # compiled and warm
    timing = timed(lambda: tokenizer.predict([text])[0], repeats=5)
    system = to_document(text, timing.result)
    ours = {name: 100 * score.f1 for name, score in aligned_scores(test, system).items()}
    official = official_scores(args.conll18_script, test, system) if args.conll18_script else None
    return {
        "treebank": treebank, "seed": seed, "ours": ours, "official": official, "fit_cpu": fit_cpu,
        "sentences": len(timing.result), "wall": timing.wall,
        "rebuilt": tokenizer.n_rebuilt_sentences_,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--treebanks", nargs="+", default=["en_ewt", "pt_bosque"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--conll18-script", help="path of conll18_ud_eval.py (outside the repository)")
    args = parser.parse_args(argv)
    data_home()
    results = [run(treebank, seed, args) for treebank in args.treebanks for seed in args.seeds]
    rows = []
    for treebank in args.treebanks:
        runs = [r for r in results if r["treebank"] == treebank]
        udpipe = " / ".join(f"{v:.2f}" for v in UDPIPE1.get(treebank, ())) or "–"
        for r in runs:
            ours = " / ".join(f"{r['ours'][name]:.2f}" for name in FIGURES)
            official = ("–" if r["official"] is None
                        else " / ".join(f"{r['official'][name]:.2f}" for name in FIGURES))
            rows.append([treebank, r["seed"], ours, official, udpipe,
                         f"{r['sentences'] / r['wall']:,.0f}", f"{r['fit_cpu']:.0f}", r["rebuilt"]])
        mean = " / ".join(mean_sd([r["ours"][name] for r in runs]) for name in FIGURES)
        rows.append([treebank, "mean ± sd", mean, "", udpipe,
                     mean_sd([r["sentences"] / r["wall"] for r in runs], digits=0),
                     mean_sd([r["fit_cpu"] for r in runs], digits=0), ""])
    body = (
        "Test raw text, CoNLL 2018 rules, F1 Tokens / Sentences / Words. `official` is the "
        "shared task's script on the same files (when given). UDPipe 1: its tokeniser trained "
        "here with defaults (../shared/REFERENCES.md). Speed: sentences per second of "
        "`predict` on the whole test text, median of 5 after a warm-up. Training: CPU s of "
        "`fit` (dev scored each epoch for the progress line). The seed orders the "
        "training paragraphs in every epoch.\n\n"
        + markdown_table(["treebank", "seed", "ours", "official script", "UDPipe 1", "sentences/s",
                          "training CPU s", "sentences rebuilt from FORM"], rows))
    write_section("tokenize", "Tokeniser and sentence splitter from raw text", body)
    print(body)

