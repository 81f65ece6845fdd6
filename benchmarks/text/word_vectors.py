"""Word vectors from the staged unannotated text, written for the pipeline's A/B.

Run from the repository root::

    SKLEARN_STRUCTURED_DATA=../shared/data python -m benchmarks word_vectors \\
        --out ../state/ppmi-20news-ptb.vec

Fits :class:`~sklearn_structured.word_vectors.PPMIWordVectors` (defaults,
``random_state=0``) on the 20 Newsgroups messages (train and test, headers
removed, every line split into runs of word characters and single other
characters) and the PTB language-model training text, and writes them in the
word2vec text format that ``train --word-features`` reads. The row gives the
text's size, the fit's cost, and how many of a treebank's dev tokens unseen in
its training split get a vector: what the vectors can add to the treebank.
"""

import argparse
import re
from pathlib import Path

from sklearn_structured.datasets import load_20newsgroups, load_ptb_lm
from sklearn_structured.word_vectors import PPMIWordVectors

from benchmarks.base import load_treebank, timed, write_rows

_TOKEN = re.compile(r"\w+|[^\w\s]")


def newsgroup_sentences():
    """Every non-empty line of the 20 Newsgroups messages (headers removed), tokenised."""
    texts, _ = load_20newsgroups("all", remove=("headers",))
    return [tokens for text in texts for line in text.split("\n") if (tokens := _TOKEN.findall(line))]


def unseen_coverage(vectors, treebank):
    """(dev tokens whose lower-cased form the training split lacks, those with a vector)."""
    X_train, _ = load_treebank(treebank, "train")
    X_dev, _ = load_treebank(treebank, "dev")
    seen = {token["form"].lower() for sentence in X_train for token in sentence}
    known = set(vectors.vocabulary_)
    unseen = [token["form"].lower() for sentence in X_dev for token in sentence
              if token["form"].lower() not in seen]
    return len(unseen), sum(form in known for form in unseen)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the word2vec text file to write")
    parser.add_argument("--treebank", default="UD_English-EWT",
                        help="the treebank whose unseen dev tokens the row counts")
    args = parser.parse_args(argv)
    sentences = newsgroup_sentences() + load_ptb_lm("train")
    vectors, wall, cpu = timed(lambda: PPMIWordVectors(random_state=0).fit(sentences))
    vectors.save_word2vec(args.out)
    n_unseen, n_covered = unseen_coverage(vectors, args.treebank)
    write_rows(
        "word_vectors", "Word vectors for the pipeline (PPMIWordVectors)",
        ["text", "tokens", "words with a vector", "fit wall s", "fit CPU s",
         f"{args.treebank} dev tokens unseen in train", "of them with a vector"],
        [["20 Newsgroups (headers removed) + PTB LM train", f"{vectors.n_tokens_:,}",
          f"{len(vectors.vocabulary_):,}", f"{wall:.1f}", f"{cpu:.1f}", f"{n_unseen:,}",
          f"{n_covered:,} ({100 * n_covered / max(n_unseen, 1):.1f}%)"]],
        key_columns=1,
        note=f"Written to `{args.out.name}`; `train --word-features` reads it.")


if __name__ == "__main__":
    main()
