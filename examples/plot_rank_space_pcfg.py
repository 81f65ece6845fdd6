"""
========================================================
Unsupervised parsing with a rank-space PCFG
========================================================

:class:`~sklearn_structured.RankSpacePCFG` learns a probabilistic grammar
from raw sentences alone and parses by minimum Bayes risk: the binary tree
whose spans have the largest total posterior probability.

Real treebanks are not shipped with the package, so this example samples
sentences (and their gold trees) from a small English-like grammar, trains on
the words only, and compares the induced trees with the gold ones using
sentence-level bracket F1 (S-F1), next to the usual right-branching,
left-branching and random-tree baselines.
"""

# %%
# A toy grammar with known trees
# -------------------------------
# Every rule is binary, so a sampled tree is a set of spans; single words and
# the whole sentence are left out of the F1 as usual.
import matplotlib.pyplot as plt
import numpy as np

from sklearn_structured.metrics import bracket_f1
from sklearn_structured.rank_space import (
    RankSpacePCFG,
    left_branching_spans,
    random_binary_spans,
    right_branching_spans,
    spans_to_brackets,
)

WORDS = {
    "Det": ["the", "a", "every", "some"],
    "N": ["dog", "cat", "man", "park", "telescope", "city", "child"],
    "Adj": ["big", "small", "old", "red"],
    "V": ["saw", "liked", "chased", "found"],
    "Vi": ["slept", "ran", "laughed"],
    "P": ["in", "with", "near"],
}


def sample(symbol, rng, start, depth=0):
    """Return (words, spans) of a random derivation of ``symbol`` starting at ``start``."""

    def pair(a, b):
        left, ls = sample(a, rng, start, depth + 1)
        right, rs = sample(b, rng, start + len(left), depth + 1)
        words = left + right
        return words, ls + rs + [(start, start + len(words))]

    if symbol == "S":
        return pair("NP", "VP")
    if symbol == "NP":
        u = rng.random()
        if u < 0.15 and depth < 3:
            return pair("NP", "PP")
        return pair("Det", "Nbar")
    if symbol == "Nbar":
        return pair("Adj", "N") if rng.random() < 0.3 else sample("N", rng, start, depth)
    if symbol == "VP":
        u = rng.random()
        if u < 0.2 and depth < 3:
            return pair("VP", "PP")
        if u < 0.4:
            return sample("Vi", rng, start, depth)
        return pair("V", "NP")
    if symbol == "PP":
        return pair("P", "NP")
    return [WORDS[symbol][rng.integers(len(WORDS[symbol]))]], [(start, start + 1)]


rng = np.random.default_rng(0)
corpus = [sample("S", rng, 0) for _ in range(700)]
X = [words for words, _ in corpus]
gold = [spans for _, spans in corpus]
X_train, X_test, gold_test = X[:600], X[600:], gold[600:]
print(" ".join(X[0]), "|", len(X_train), "training sentences")

# %%
# Training on words only
# ----------------------
# The grammar has 10 nonterminals, 20 preterminals and rank 16; the "direct"
# parameterisation (a free logit per probability) learns fast on a corpus
# this small. The validation likelihood picks the best epoch.
model = RankSpacePCFG(
    n_nonterminals=10,
    n_preterminals=20,
    rank=16,
    parameterization="direct",
    learning_rate=0.1,
    batch_size=4,
    n_epochs=8,
    random_state=0,
    verbose=1,
)
model.fit(X_train, X_val=X_test)

# %%
# Bracket F1 against the baselines
# --------------------------------
predicted = model.predict(X_test)
tree_rng = np.random.default_rng(1)
scores = {
    "RankSpacePCFG (MBR)": bracket_f1(gold_test, predicted),
    "right-branching": bracket_f1(gold_test, [right_branching_spans(len(s)) for s in X_test]),
    "left-branching": bracket_f1(gold_test, [left_branching_spans(len(s)) for s in X_test]),
    "random trees": bracket_f1(gold_test, [random_binary_spans(len(s), tree_rng) for s in X_test]),
}
for name, value in scores.items():
    print(f"{name:22s} S-F1 {100 * value:5.1f}")

# %%
# A few parses
# ------------
# Each tree is drawn from its spans; the gold tree is shown in grey below
# the induced one.


def draw(ax, words, spans, y0, colour):
    """Draw a binary tree given as spans; a node's height is its width."""
    x = {(i, i + 1): i for i in range(len(words))}
    height = {(i, i + 1): 0 for i in range(len(words))}
    wide = sorted({(i, j) for i, j in spans if j - i >= 2}, key=lambda s: s[1] - s[0])
    for i, j in wide:
        k = next(k for k in range(i + 1, j) if (i, k) in x and (k, j) in x)
        x[i, j] = (x[i, k] + x[k, j]) / 2
        height[i, j] = max(height[i, k], height[k, j]) + 1
        for child in ((i, k), (k, j)):
            ax.plot([x[i, j], x[child]], [y0 + height[i, j], y0 + height[child]], color=colour)
    for i, w in enumerate(words):
        ax.text(i, y0 - 0.4, w, ha="center", va="top", fontsize=9)


fig, axes = plt.subplots(3, 1, figsize=(8, 9))
for ax, s in zip(axes, range(3)):
    words = X_test[s]
    draw(ax, words, predicted[s], 0, "tab:blue")
    draw(ax, words, gold_test[s], -len(words) - 1.5, "0.6")
    ax.set_title(spans_to_brackets(words, predicted[s]), fontsize=9)
    ax.axis("off")
fig.suptitle("induced (blue) and gold (grey) trees")
plt.tight_layout()
plt.show()
