"""Reading speed of the dataset readers on the staged corpora.

Run from the repository root::

    SKLEARN_STRUCTURED_DATA=../shared/data python -m benchmarks datasets

Each reader is timed (median of ``--repeat`` runs) against a reference measured
in the same run: decompressing the same file and splitting it into lines and
fields with no further work, the least any reader must do. The ratio, not the
absolute time, is the figure to compare across (shared, noisy) machines.
"""

import argparse
import hashlib
import lzma
import os

from sklearn_structured.datasets import (
    load_conllu,
    load_ptb_lm,
    load_ptb_wsj_sample,
    read_conllu,
    write_conllu,
)

from benchmarks.base import data_home, markdown_table, timed, write_section


def split_only(path, separator):
    """The reference: decompress, decode and split into lines and fields."""
    text = lzma.open(path).read().decode("utf-8")
    return [line.split(separator) for line in text.split("\n")]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    data = data_home()
    load = os.getloadavg()[0]
    rows = []

    ewt = data / "ud" / "UD_English-EWT" / "en_ewt-ud-train.conllu.xz"
    t_ref = timed(lambda: split_only(ewt, "\t"), args.repeat).wall
    t_read = timed(lambda: read_conllu(ewt), args.repeat).wall
    (X, _), t_load, _ = timed(lambda: load_conllu(ewt), args.repeat)
    n_tokens = sum(map(len, X))
    rows.append(["`read_conllu` EWT train", f"{len(X):,} sentences", f"{t_read:.2f}", f"{t_ref:.2f}", f"{t_read / t_ref:.1f}"])
    rows.append(["`load_conllu` EWT train (X, y, validated)", f"{n_tokens:,} tokens", f"{t_load:.2f}", f"{t_ref:.2f}", f"{t_load / t_ref:.1f}"])

    files = sorted((data / "ud").glob("*/*.conllu.xz"))

    def round_trip():
        size = 0
        for path in files:
            original = lzma.open(path).read()
            size += len(original)
            written = write_conllu(read_conllu(path)).encode("utf-8")
            if hashlib.sha256(written).digest() != hashlib.sha256(original).digest():
                raise SystemExit(f"round trip changed {path}")
        return size

    size, t_round, _ = timed(round_trip)
    t_round_ref = timed(lambda: [split_only(path, "\t") for path in files]).wall
    rows.append([f"read + write + sha256 of all {len(files)} UD files", f"{size / 1e6:.0f} MB", f"{t_round:.2f}", f"{t_round_ref:.2f}", f"{t_round / t_round_ref:.1f}"])

    wsj = data / "ptb_wsj_sample" / "ptb_wsj_sample_nltk.mrg.xz"
    t_ref = timed(lambda: split_only(wsj, " "), args.repeat).wall
    (sentences, _), t_trees, _ = timed(lambda: load_ptb_wsj_sample(remove_punctuation=True), args.repeat)
    rows.append(["`load_ptb_wsj_sample` (spans, no punctuation)", f"{len(sentences):,} trees", f"{t_trees:.2f}", f"{t_ref:.2f}", f"{t_trees / t_ref:.1f}"])

    ptb = data / "ptb_lm" / "ptb.train.txt.xz"
    t_ref = timed(lambda: split_only(ptb, " "), args.repeat).wall
    lines, t_lm, _ = timed(lambda: load_ptb_lm("train"), args.repeat)
    rows.append(["`load_ptb_lm` train", f"{sum(map(len, lines)):,} tokens", f"{t_lm:.2f}", f"{t_ref:.2f}", f"{t_lm / t_ref:.1f}"])

    body = (
        f"Median wall time of {args.repeat} runs (the round trip: one run). Reference = decompress + decode + "
        "split into lines and fields, no objects built. Load average "
        f"{load:.2f} at start, on a shared machine, so absolute seconds are noisy; the "
        "round trip checked every file byte for byte.\n\n"
        + markdown_table(["reader", "size", "seconds", "reference s", "ratio"], rows)
    )
    print(body)
    write_section("datasets", "Dataset readers: reading speed", body)

