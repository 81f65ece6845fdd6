"""
==========================================================
Low-rank tensor dependency parsing: learning curves
==========================================================

:class:`~sklearn_structured.lowrank.LowRankTensorParser` scores an arc
``h -> m`` with a low-rank tensor over head, modifier and arc features,
mixed with the classic MST-parser features by ``gamma`` (Lei et al., 2014).
``gamma=1`` is the tensor-free parser ("NT-1st"), ``gamma=0`` the tensor
alone. We train the three on the small English sample shipped with the
package, one ``partial_fit`` pass at a time, and plot the held-out
unlabelled attachment score after every pass, like Figure 1 of the paper.
Then we look at the words closest to a few others in the learned head
embedding space (the paper's Table 5).
"""

# %%
# Learning curves
# ---------------
import matplotlib.pyplot as plt
import numpy as np

from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.lowrank import LowRankTensorParser

X_train, y_train = load_sample_treebank("train")
X_test, y_test = load_sample_treebank("test")
n_epochs = 8

curves = {}
parsers = {}
for gamma in (0.0, 0.3, 1.0):
    parser = LowRankTensorParser(rank=50, gamma=gamma, random_state=0)
    curves[gamma] = []
    for epoch in range(n_epochs):
        parser.partial_fit(X_train, y_train)
        curves[gamma].append(100 * parser.score(X_test, y_test))
    parsers[gamma] = parser
    print(f"gamma={gamma}: test UAS after {n_epochs} epochs = {curves[gamma][-1]:.1f}")

fig, ax = plt.subplots(figsize=(6, 4))
for gamma, curve in curves.items():
    ax.plot(np.arange(1, n_epochs + 1), curve, marker="o", label=f"gamma = {gamma}")
ax.set_xlabel("epoch (partial_fit passes)")
ax.set_ylabel("test UAS without punctuation (%)")
ax.set_title("300 training sentences of UD English EWT")
ax.legend()
fig.tight_layout()

# %%
# Nearest neighbours in the head embedding space
# ----------------------------------------------
# Each word form has a row of ``U`` (its role as a head) learned by the
# tensor; cosine neighbours among the frequent training words show which
# words the parser treats alike.
from collections import Counter

counts = Counter(tok["form"] for sentence in X_train for tok in sentence)
vocabulary = [w for w, c in counts.items() if c >= 3 and w.isalpha()]
parser = parsers[0.3]
embedding = parser.word_embeddings(vocabulary, role="head")
norms = np.linalg.norm(embedding, axis=1)
unit = embedding / np.where(norms > 0, norms, 1)[:, None]

for query in ("is", "in", "he", "good", "said"):
    if query not in vocabulary:
        continue
    similarity = unit @ unit[vocabulary.index(query)]
    nearest = [vocabulary[i] for i in np.argsort(-similarity) if vocabulary[i] != query][:5]
    print(f"{query:>6}: {', '.join(nearest)}")
