"""
=========================================================
Label vectors learned by DISTRO on newsgroup-style labels
=========================================================

:class:`~sklearn_structured.DistroSVM` gives every class a unit vector and
scores class ``l`` as ``a_l^T W phi(x)``; the vectors are learned together
with the weights (Srikumar & Manning, 2014), so the cosine similarities of
the learned vectors show which labels the model treats as related.

With ``SKLEARN_STRUCTURED_DATA`` pointing at a folder that holds the
20 Newsgroups "bydate" files (``20news/``), the example learns from a part of
the real training set. Otherwise, as on a fresh machine without the corpus,
it builds a small synthetic problem with the same kind of label hierarchy:
four top-level groups (``comp``, ``rec``, ``sci``, ``talk``) of three
newsgroups each, where documents of one group share group words and each
newsgroup adds words of its own. The printed line says which data ran.
"""

# %%
# Data: the real 20 Newsgroups when available, else a synthetic hierarchy
# ------------------------------------------------------------------------
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.feature_extraction.text import TfidfTransformer, TfidfVectorizer
from sklearn.model_selection import train_test_split

from sklearn_structured.distro import DistroSVM, label_similarity


def synthetic_newsgroups(n_per_class=80, seed=0):
    """Bag-of-words counts for 12 labels in 4 groups of 3.

    A document draws 40% of its words from its group's vocabulary, 30% from
    its own label's and 30% from words shared by everyone.
    """
    rng = np.random.default_rng(seed)
    groups = {"comp": ["graphics", "hardware", "windows"],
              "rec": ["autos", "motorcycles", "hockey"],
              "sci": ["crypt", "med", "space"],
              "talk": ["guns", "mideast", "religion"]}
    n_group_words, n_label_words, n_common = 40, 20, 300
    labels = [f"{g}.{leaf}" for g, leaves in groups.items() for leaf in leaves]
    n_features = len(groups) * n_group_words + len(labels) * n_label_words + n_common
    rows, y = [], []
    for k, label in enumerate(labels):
        g = k // 3
        group_words = np.arange(g * n_group_words, (g + 1) * n_group_words)
        start = len(groups) * n_group_words + k * n_label_words
        label_words = np.arange(start, start + n_label_words)
        common = np.arange(n_features - n_common, n_features)
        for _ in range(n_per_class):
            length = rng.integers(10, 30)
            source = rng.choice(3, size=length, p=[0.3, 0.1, 0.6])
            words = np.where(source == 0, rng.choice(group_words, length),
                             np.where(source == 1, rng.choice(label_words, length),
                                      rng.choice(common, length)))
            rows.append(np.bincount(words, minlength=n_features))
            y.append(label)
    X = TfidfTransformer(sublinear_tf=True).fit_transform(np.array(rows))
    return X, np.array(y)


data_home = os.environ.get("SKLEARN_STRUCTURED_DATA")
if data_home and os.path.exists(os.path.join(data_home, "20news")):
    from sklearn_structured.datasets import load_20newsgroups

    texts, y = load_20newsgroups("train", remove=("headers", "footers", "quotes"))
    texts, y = texts[::2], np.array(y[::2])  # half of the training set keeps this under a minute
    X = TfidfVectorizer(sublinear_tf=True, min_df=3).fit_transform(texts)
    source = "the real 20 Newsgroups training set (every second document)"
    # the values benchmarks/bench_distro.py chose on held-out 20 Newsgroups data
    alpha, nuclear_penalty = 3e-5, 1e-3
else:
    X, y = synthetic_newsgroups()
    source = "the built-in synthetic hierarchy (20 Newsgroups not found)"
    # a small noisy problem needs a stronger L2 penalty; the nuclear penalty
    # makes the labels share directions
    alpha, nuclear_penalty = 1e-3, 3e-2
print(f"Data: {source}; {X.shape[0]} documents, {len(set(y))} labels")

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)

# %%
# Learn label vectors
# -------------------
# Full-rank label vectors started from the identity (``init="onehot"``), so
# that every change from the one-hot baseline was learned from the data, and
# a nuclear-norm penalty that pushes the labels to share directions. The
# one-hot structural SVM is fitted alongside for comparison.
model = DistroSVM(init="onehot", nuclear_penalty=nuclear_penalty, label_learning_rate=0.3,
                  alpha=alpha, n_rounds=3, n_epochs=3, random_state=0)
model.fit(X_train, y_train)
baseline = DistroSVM(label_vectors="onehot", alpha=alpha, n_rounds=3, n_epochs=3, random_state=0)
baseline.fit(X_train, y_train)
print(f"held-out accuracy: DISTRO {model.score(X_test, y_test):.3f}, "
      f"one-hot baseline {baseline.score(X_test, y_test):.3f}")

# %%
# Similarity of the label vectors
# -------------------------------
# Cosine similarities, with the labels in alphabetical order so that the
# groups are contiguous blocks.
similarity = label_similarity(model)
classes = model.classes_
groups = np.array([c.split(".")[0] for c in classes])
same_group = (groups[:, None] == groups[None, :]) & ~np.eye(len(classes), dtype=bool)
different_group = groups[:, None] != groups[None, :]
print(f"mean cosine within a group: {similarity[same_group].mean():+.3f}, "
      f"across groups: {similarity[different_group].mean():+.3f}")
print(f"mean |cosine| within a group: {np.abs(similarity[same_group]).mean():.3f}, "
      f"across groups: {np.abs(similarity[different_group]).mean():.3f}")

# %%
# The groups appear as blocks along the diagonal: labels of one group have
# larger cosines (in absolute value) with each other than with labels of
# other groups. The cosines inside a block are negative: a pass on ``A``
# moves the vector of a wrongly predicted label away from the documents that
# fooled it, and a sibling newsgroup is the usual culprit, so related labels
# end up contrasted within a shared subspace rather than pulled together.
# On the real 20 Newsgroups the blocks (``comp.*``, ``rec.*``) are faint;
# on the synthetic problem they are clear.

fig, ax = plt.subplots(figsize=(7, 6))
# colours scaled to the largest off-diagonal cosine, so weak blocks show
limit = np.abs(similarity[~np.eye(len(classes), dtype=bool)]).max()
image = ax.imshow(similarity, cmap="RdBu_r", vmin=-limit, vmax=limit)
ax.set_xticks(range(len(classes)), classes, rotation=90, fontsize=7)
ax.set_yticks(range(len(classes)), classes, fontsize=7)
ax.set_title(f"Cosine similarity of DISTRO label vectors\n({source})", fontsize=9)
fig.colorbar(image, ax=ax, shrink=0.8)
fig.tight_layout()
plt.show()
