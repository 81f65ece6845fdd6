"""
=====================================================================
Spectral tree probabilities: consistency and n-best reranking
=====================================================================

:class:`~sklearn_structured.spectral.SpectralTreeScorer` estimates the
latent-state dependency model of Dhillon et al. (2012) from moments of word
embeddings over head-child-neighbour triples, and returns
log p(words | tree). First we check on synthetic data drawn from the model
itself that the estimate converges to the exact probability as the training
corpus grows (the paper's Theorem 3.1). Then we use it as a feature to
rerank the 10-best trees of a dependency parser on the small English sample
shipped with the package, like Section 4 of the paper.
"""

# %%
# Consistency on data from the model
# ----------------------------------
# ``make_latent_tree_corpus`` samples trees and words from a random model
# with 3 hidden states and 100 words and returns the exact log-probability of
# every pair. We fit the scorer on growing prefixes of the corpus and measure
# the relative error, the absolute value of p_hat / p - 1, on 500 held-out pairs.
import matplotlib.pyplot as plt
import numpy as np

from sklearn_structured.datasets import make_latent_tree_corpus
from sklearn_structured.spectral import SpectralTreeScorer

X, y, log_prob = make_latent_tree_corpus(30500, n_states=3, vocabulary_size=100, random_state=0)
X_test, y_test, truth = X[-500:], y[-500:], log_prob[-500:]
sizes = [300, 1000, 3000, 10000, 30000]
mean_error, median_error = [], []
for n in sizes:
    scorer = SpectralTreeScorer(n_components=3, method="spectral", min_count=1,
                                random_state=0).fit(X[:n], y[:n])
    error = np.abs(np.exp(scorer.score_samples(X_test, y_test) - truth) - 1)
    mean_error.append(error.mean())
    median_error.append(np.median(error))
    print(f"{n:6d} trees: mean |p_hat/p - 1| = {error.mean():.3f}, median = {np.median(error):.3f}")

fig, ax = plt.subplots(figsize=(5, 3.5))
ax.loglog(sizes, mean_error, "o-", label="mean")
ax.loglog(sizes, median_error, "s-", label="median")
ax.loglog(sizes, median_error[0] * np.sqrt(sizes[0] / np.array(sizes)), "k:", label="1/sqrt(N)")
ax.set_xlabel("training trees N")
ax.set_ylabel("|p_hat / p - 1| on held-out pairs")
ax.legend()
fig.tight_layout()

# %%
# Reranking a parser's 10-best trees
# ----------------------------------
# The base parser is a low-rank tensor parser trained briefly on 300
# sentences. :class:`~sklearn_structured.spectral.NBestReranker` parses each
# training sentence with a parser trained on the other folds, fits the
# spectral scorer on the same folds, and trains an averaged perceptron on
# the parser's score, two POS templates, and (optionally) the spectral
# log-probability. Here the scorer models the UPOS tags, which this small
# sample estimates better than its words.
from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.lowrank import LowRankTensorParser
from sklearn_structured.metrics import attachment_score
from sklearn_structured.spectral import NBestReranker, cross_val_nbest

X_train, y_train = load_sample_treebank("train")
X_test, y_test = load_sample_treebank("test")
parser = LowRankTensorParser(n_epochs=3, decoder="eisner", random_state=0)
train_lists = cross_val_nbest(parser, X_train, y_train, n_best=10, cv=3, random_state=0)
parser.fit(X_train, y_train)
test_lists = parser.predict_nbest(X_test, 10)

uas = {"base parser": attachment_score(y_test, [lst[0][0] for lst in test_lists], X=X_test)}
spectral = SpectralTreeScorer(n_components=5, token_field="upos")
for name, scorers in (("+ POS templates", ()), ("+ spectral log p", (spectral,))):
    reranker = NBestReranker(parser, scorers=scorers, n_best=10, cv="prefit", random_state=0)
    reranker.fit(X_train, y_train, train_nbest=train_lists)
    uas[name] = attachment_score(y_test, reranker.predict(X_test, nbest=test_lists), X=X_test)
uas["oracle of 10-best"] = np.mean([
    max(attachment_score([gold], [heads], X=[sentence]) for heads, _ in lst)
    for sentence, gold, lst in zip(X_test, y_test, test_lists)
])
for name, value in uas.items():
    print(f"{name:>20s}: UAS {100 * value:.1f}")

fig, ax = plt.subplots(figsize=(5, 3.5))
ax.barh(list(uas), [100 * v for v in uas.values()], color=["grey", "C0", "C1", "lightgrey"])
ax.set_xlim(min(100 * v for v in uas.values()) - 5, 100)
ax.set_xlabel("UAS on the sample's test split (%)")
fig.tight_layout()
plt.show()
