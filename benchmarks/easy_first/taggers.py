"""Benchmark of EasyFirstBeamTagger as a FEATS tagger and a lemmatiser.

For each treebank, target and seed: train on train with the default settings
(10 epochs, ``feature_min_count=2``) at ``--beam``, then score dev and test:
token accuracy of the final strings (UFeats: the whole FEATS string; Lemma:
the lemma after the dictionary), and for lemmas the accuracy on forms seen in
training (the dictionary answers) and unseen (the predicted edit script
answers). UPOS is run for reference. Taggers see the forms only; the
lemmatiser sees the UPOS of a UPOS tagger trained with the same seed (its
dictionary is keyed by (form, UPOS) first), and is also scored with a
form-only dictionary and with gold UPOS (an upper bound).

Every (treebank, target, seed) result is stored in ``--store``/taggers_*.json,
and each run rewrites the ``taggers`` section of RESULTS.md from all stored
results. Run with ``NUMBA_NUM_THREADS=1`` and ``SKLEARN_STRUCTURED_DATA`` set.
"""

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from sklearn_structured.easy_first import EasyFirstBeamTagger

from benchmarks.base import (SETTINGS, data_home, field_values, load_treebank, markdown_table,
                             timed, write_section)


NAMES = {"upos": "UPOS", "feats": "UFeats", "lemma": "Lemma"}


def _accuracy(gold, predicted, mask=None):
    g = [a for row in gold for a in row]
    p = [a for row in predicted for a in row]
    hits = np.array([a == b for a, b in zip(g, p)])
    if mask is not None:
        hits = hits[np.asarray(mask)]
    return float(hits.mean()) if len(hits) else float("nan")


def run(treebank, target, seed, beam, epochs):
    X, _ = load_treebank(treebank, "train")
    seen = {t["form"] for s in X for t in s}
    started = time.perf_counter()
    tagger = EasyFirstBeamTagger(beam_size=beam, n_epochs=epochs, target=target,
                                 random_state=seed, verbose=1).fit(X)
    W = tagger.weights_  # CSR
    result = {"treebank": treebank, "target": target, "seed": seed, "beam": beam,
              "epochs": epochs, "train_s": time.perf_counter() - started,
              "n_classes": len(tagger.classes_),
              "weights_mb": sum(a.nbytes for a in (W.data, W.indices, W.indptr)) / 2**20}
    if target == "lemma":  # the lemmatiser reads the UPOS a UPOS tagger gives
        upos = EasyFirstBeamTagger(beam_size=beam, n_epochs=epochs, target="upos",
                                   random_state=seed).fit(X)
    for split in ("dev", "test"):
        Xe, _ = load_treebank(treebank, split)
        gold = field_values(Xe, target)
        raw = [[{"form": t["form"]} for t in s] for s in Xe]  # forms only
        if target == "lemma":
            raw = upos.transform(raw)
        predicted, seconds, _ = timed(lambda: tagger.predict(raw))
        result[split] = {"accuracy": _accuracy(gold, predicted),
                         "sent_per_s": len(Xe) / seconds, "load": os.getloadavg()[0]}
        if target == "lemma":
            known = [t["form"] in seen for s in Xe for t in s]
            forms_only = [[{"form": t["form"]} for t in s] for s in Xe]
            result[split].update(
                seen=_accuracy(gold, predicted, known),
                unseen=_accuracy(gold, predicted, [not k for k in known]),
                unseen_share=1 - float(np.mean(known)),
                upos_accuracy=_accuracy(field_values(Xe, "upos"), field_values(raw, "upos")),
                form_dictionary=_accuracy(gold, tagger.predict(forms_only)),
                gold_upos_dictionary=_accuracy(gold, tagger.predict(Xe)))
        print(treebank, target, seed, split, result[split], flush=True)
    return result


def _pct(x):
    return f"{100 * x:.2f}"


def render(store):
    results = [json.loads(p.read_text()) for p in sorted(store.glob("taggers_*.json"))]
    out = ["Token accuracy of the final strings (UFeats: the whole FEATS string; Lemma: "
           "after the dictionary), train on train, default settings, "
           "`NUMBA_NUM_THREADS=1`. The commands that produced the stored results are listed at the end; "
           "`--treebanks` with no value only re-renders this section."]
    rows = []
    for r in sorted(results, key=lambda r: (r["treebank"], r["target"], r["seed"])):
        rows.append([r["treebank"], NAMES[r["target"]], r["beam"], r["seed"], r["n_classes"],
                     _pct(r["dev"]["accuracy"]), _pct(r["test"]["accuracy"]),
                     f"{r['train_s']:.0f}", f"{r['test']['sent_per_s']:.0f}",
                     f"{r['test']['load']:.1f}", f"{r['weights_mb']:.0f}"])
    out.append(markdown_table(["treebank", "target", "beam", "seed", "classes", "dev", "test",
                               "train s", "test sent/s", "load avg", "weights MB"], rows))
    lemma = [r for r in results if r["target"] == "lemma"]
    if lemma:
        rows = [[r["treebank"], r["seed"], split, _pct(r[split]["accuracy"]),
                 _pct(r[split]["seen"]), _pct(r[split]["unseen"]),
                 _pct(r[split]["unseen_share"]), _pct(r[split]["upos_accuracy"]),
                 _pct(r[split]["form_dictionary"]), _pct(r[split]["gold_upos_dictionary"])]
                for r in sorted(lemma, key=lambda r: (r["treebank"], r["seed"]))
                for split in ("dev", "test")]
        out.append("Lemmas from forms only: a UPOS tagger (same seed and settings) tags the "
                   "forms, and the lemmatiser's dictionary is keyed by (form, predicted UPOS) "
                   "first, then by form; forms not seen in training take the predicted edit "
                   "script. Split by whether the form was seen in training. The last two "
                   "columns key the dictionary by form only, and by (form, gold UPOS) first "
                   "(an upper bound).\n\n" + markdown_table(
                       ["treebank", "seed", "split", "lemma", "seen forms", "unseen forms",
                        "unseen share", "UPOS used", "form-only dictionary",
                        "(form, gold UPOS) dictionary"], rows))
    commands = sorted({r["command"] for r in results})
    out.append("Commands:\n\n" + "\n".join(f"- `{c}`" for c in commands))
    return "\n\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--treebanks", nargs="*", default=["en_ewt"])
    parser.add_argument("--targets", nargs="*", default=["feats", "lemma", "upos"],
                        choices=sorted(NAMES))
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1])
    parser.add_argument("--beam", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--store", type=Path, default=Path("benchmarks"))
    args = parser.parse_args(argv)
    data_home()
    command = SETTINGS.command
    for treebank in args.treebanks:
        for target in args.targets:
            for seed in args.seeds:
                result = run(treebank, target, seed, args.beam, args.epochs)
                result["command"] = command
                path = args.store / f"taggers_{treebank}_{target}_beam{args.beam}_seed{seed}.json"
                path.write_text(json.dumps(result, indent=1))
    write_section("taggers", "Easy-first tagger: UFeats and lemmas", render(args.store))

