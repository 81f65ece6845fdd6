"""Rebuild the UD English EWT sample shipped in sklearn_structured/datasets/data/.

Run from the repository root with the staged corpora available::

    SKLEARN_STRUCTURED_DATA=../shared/data python -m benchmarks.make_sample_treebank

The sample is 300 sentences drawn at random (seed 0) from EWT train and 100
from EWT test, among sentences of 3 to 40 words, kept in corpus order and
copied byte for byte (comments, multiword tokens and empty nodes included).
The gzip header carries no timestamp, so the output is reproducible.
"""

import gzip
from pathlib import Path

import numpy as np

from sklearn_structured.datasets import load_sample_treebank, load_ud_treebank, write_conllu

SIZES = {"train": 300, "test": 100}
MIN_WORDS, MAX_WORDS = 3, 40


def sample_file(split):
    """The file the package reads its sample ``split`` from (in the source tree when installed -e)."""
    return Path(load_sample_treebank(split, as_document=True).source)


def make_sample(split, size, seed=0):
    doc = load_ud_treebank("UD_English-EWT", split, as_document=True)
    eligible = [i for i, s in enumerate(doc) if MIN_WORDS <= len(s.words) <= MAX_WORDS]
    chosen = np.sort(np.random.RandomState(seed).choice(eligible, size=size, replace=False))
    sample = doc[:0]
    sample.sentences = [doc[i] for i in chosen]
    with open(sample_file(split), "wb") as raw, gzip.GzipFile(
        fileobj=raw, mode="wb", mtime=0, filename=""
    ) as compressed:
        write_conllu(sample, compressed)
    return sample


if __name__ == "__main__":
    for split, size in SIZES.items():
        sample = make_sample(split, size)
        n_words = sum(len(s.words) for s in sample)
        print(f"{split}: {len(sample)} sentences, {n_words} words -> {sample_file(split)}")
