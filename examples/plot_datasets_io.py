"""
======================================
Reading, editing and writing treebanks
======================================

The estimators take a list of sentences ``X`` and, for parsing, a list of head
arrays ``y``. This example shows where those come from and how predictions go
back into a file:

* the sample of UD English EWT shipped with the package, as a lossless
  CoNLL-U document (comments, multiword tokens and empty nodes kept) and as
  ``(X, y)``;
* writing predicted heads into the document, changing nothing else, and
  scoring them;
* bracketed constituency trees turned into words and unlabelled spans, the
  input and the gold standard of unsupervised constituency parsing.
"""

# %%
# The sample treebank as a document and as (X, y)
# ------------------------------------------------
import io

import matplotlib.pyplot as plt
import numpy as np

from sklearn_structured.datasets import (
    load_conllu,
    load_sample_treebank,
    read_bracketed_trees,
    read_conllu,
    write_conllu,
)
from sklearn_structured.metrics import attachment_score

doc = load_sample_treebank("test", as_document=True)
print(doc)
sentence = next(s for s in doc if any("-" in row[0] for row in s.rows))
print(sentence.metadata["text"])
for row in sentence.rows:
    print("\t".join(row[:8]))

# %%
# Multiword-token lines such as ``2-3`` stay in the document but are not
# tokens of ``X``: each token is a dict of the CoNLL-U fields the estimators
# use, and ``y`` holds 1-based heads with 0 for the root.
X, y = load_conllu(doc)
print(len(X), "sentences;", X[0][0])
print("heads of the first sentence:", y[0])

# %%
# Writing predictions back
# ------------------------
# A baseline that attaches every word to the next one (the last word to the
# root): English puts many heads right after their dependents (determiners,
# adjectives, subjects). ``with_heads`` replaces the HEAD column and nothing
# else, so the output is the input file with new trees.
chain = [np.append(np.arange(2, len(s) + 1), 0) for s in X]
predicted = doc.with_heads(chain)
buffer = io.StringIO()
write_conllu(predicted, buffer)
X_back, y_back = load_conllu(io.StringIO(buffer.getvalue()))
print("UAS of the next-word baseline:", round(attachment_score(y, y_back, X), 3))
unchanged = write_conllu(doc.with_heads(y)) == write_conllu(doc)
print("writing the gold heads back reproduces the file:", unchanged)

# %%
# Sentence lengths and head distances in the sample
# -------------------------------------------------
X_all, y_all = load_sample_treebank("all")
lengths = [len(s) for s in X_all]
distances = np.concatenate(
    [np.abs(h - np.arange(1, len(h) + 1))[h > 0] for h in y_all]
)
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.2))
left.hist(lengths, bins=20)
left.set(xlabel="words per sentence", ylabel="sentences", title="Sentence length")
right.hist(distances, bins=np.arange(1, 22) - 0.5)
right.set(xlabel="|head - dependent|", ylabel="arcs", title="Arc length")
fig.tight_layout()

# %%
# Bracketed constituency trees
# ----------------------------
# One tree per line, as in the Penn Treebank. Empty elements (``-NONE-``)
# and function tags are removed by default; punctuation on request. Spans are
# fenceposts ``(i, j)`` over the remaining words.
tree = (
    "( (S (NP-SBJ-1 (DT The) (NN cat)) (VP (VBD sat) (NP (-NONE- *-1)) "
    "(PP-LOC (IN on) (NP (DT the) (NN mat)))) (. .)) )"
)
words, spans = read_bracketed_trees([tree], remove_punctuation=True)
print(words[0])
for i, j in spans[0]:
    print((i, j), " ".join(words[0][i:j]))
_, labelled = read_bracketed_trees([tree], remove_punctuation=True, return_labels=True)
print(labelled[0])

# %%
# The same reader takes a file path (``.gz`` and ``.xz`` are decompressed on
# the fly), and :func:`~sklearn_structured.datasets.read_conllu` reads a path
# or any open file the same way.
print(read_conllu(io.StringIO(write_conllu(doc[:1]))) == doc[:1])
