"""
=========================================
Decoding dependency trees from arc scores
=========================================

Every parser in this library scores the possible arcs of a sentence and then
asks a decoder for the best tree. This example runs the decoders of
:mod:`sklearn_structured.decoding` on the sample treebank shipped with the
package, with arc scores made from the gold trees plus increasing noise:

* with no noise the maximum spanning tree (Chu-Liu-Edmonds) recovers every
  gold tree, while Eisner's algorithm, which only builds projective trees,
  misses the arcs of the few non-projective sentences;
* as noise grows both decoders degrade towards the UAS they reach on purely
  random scores (dotted lines), but
  Eisner more slowly: most gold trees are projective, so restricting the
  search to projective trees rules out many wrong trees that noise favours;
* arc marginals from the inside-outside algorithm give a confidence for each
  predicted arc.
"""

# %%
# Load the sample and build noisy oracle scores
# ---------------------------------------------
import matplotlib.pyplot as plt
import numpy as np

from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.decoding import chu_liu_edmonds, eisner, eisner_marginals
from sklearn_structured.metrics import attachment_score

X, y = load_sample_treebank("all")
rng = np.random.default_rng(0)


def oracle_scores(heads, noise):
    """Score 1 for each gold arc, 0 elsewhere, plus Gaussian noise."""
    n = len(heads)
    scores = noise * rng.standard_normal((n + 1, n + 1))
    scores[heads, np.arange(1, n + 1)] += 1.0
    return scores


noise_levels = [0.0, 0.25, 0.5, 1.0, 2.0, 4.0]
uas = {"Eisner (projective)": [], "Chu-Liu-Edmonds": []}
for noise in noise_levels:
    scores = [oracle_scores(heads, noise) for heads in y]
    uas["Eisner (projective)"].append(attachment_score(y, [eisner(s) for s in scores], X))
    uas["Chu-Liu-Edmonds"].append(attachment_score(y, [chu_liu_edmonds(s) for s in scores], X))

for name, values in uas.items():
    print(name, " ".join(f"{100 * v:.1f}" for v in values))

# Purely random scores (no oracle at all): the floor every decoder degrades to.
random_scores = [rng.standard_normal((len(h) + 1, len(h) + 1)) for h in y]
random_uas = {
    "Eisner (projective)": attachment_score(y, [eisner(s) for s in random_scores], X),
    "Chu-Liu-Edmonds": attachment_score(y, [chu_liu_edmonds(s) for s in random_scores], X),
}
for name, value in random_uas.items():
    print(f"{name} on random scores: UAS {100 * value:.1f}")

# %%
# UAS against the noise level
# ---------------------------
fig, ax = plt.subplots(figsize=(6, 4))
for (name, values), colour in zip(uas.items(), ("C0", "C1")):
    ax.plot(noise_levels, [100 * v for v in values], marker="o", color=colour, label=name)
    ax.axhline(100 * random_uas[name], color=colour, linestyle=":", label=f"{name}, random scores")
ax.set_xlabel("standard deviation of the noise added to the oracle scores")
ax.set_ylabel("UAS without punctuation (%)")
ax.legend()
fig.tight_layout()

# %%
# Confidence from arc marginals
# -----------------------------
# The marginal probability of each arc under a distribution proportional to
# ``exp(score of the tree)`` over projective trees. Arcs that the decoder gets
# right tend to carry more probability mass than the ones it gets wrong.
right, wrong = [], []
for heads in y:
    scores = oracle_scores(heads, 1.0)
    marginals, log_z = eisner_marginals(scores)
    pred = eisner(scores)
    mass = marginals[pred, np.arange(1, len(pred) + 1)]
    right.extend(mass[pred == heads])
    wrong.extend(mass[pred != heads])
print(f"mean marginal of correct arcs {np.mean(right):.2f}, of wrong arcs {np.mean(wrong):.2f}")

fig, ax = plt.subplots(figsize=(6, 4))
ax.hist([right, wrong], bins=20, label=["correct arcs", "wrong arcs"])
ax.set_xlabel("arc marginal probability")
ax.set_ylabel("arcs")
ax.legend()
fig.tight_layout()
plt.show()
