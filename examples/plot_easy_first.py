"""
==========================================================
Easy-first dependency parsing with beam search
==========================================================

:class:`~sklearn_structured.easy_first.EasyFirstBeamParser` builds a tree by
repeatedly attaching the partial tree whose attachment to a neighbour scores
best, the "easiest" decision first (Goldberg & Elhadad, 2010). Ma et al.
(2013) keep a beam of the best action sequences instead of one and train the
weights with a structured perceptron whose early updates stay valid despite
the many action sequences that build the same tree.

This example trains the parser on the small EWT sample shipped with the
package for several beam sizes, plots accuracy and speed against the beam,
and shows in which order the parser attached the words of one sentence.
"""

# %%
# Accuracy and speed against the beam size
# ----------------------------------------
# The sample has 300 training and 100 test sentences, so the figures are far
# below those of the full treebank (see the user guide). On 100 sentences the
# UAS itself is uncertain by a few points: the error bars are 95% bootstrap
# intervals over the test sentences, and differences between beams smaller
# than them are noise. The speed is one timing of 100 sentences, noisy on a
# shared machine; the user guide has the beam's cost measured on the full
# test set.
import time

import matplotlib.pyplot as plt
import numpy as np

from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.easy_first import EasyFirstBeamParser
from sklearn_structured.metrics import attachment_score

X_train, y_train = load_sample_treebank("train")
X_test, y_test = load_sample_treebank("test")


def bootstrap_interval(correct, scored, rng, n_resamples=2000):
    """95% interval of corpus UAS when the test sentences are resampled."""
    picks = rng.integers(0, len(correct), size=(n_resamples, len(correct)))
    resampled = 100 * correct[picks].sum(axis=1) / scored[picks].sum(axis=1)
    return np.percentile(resampled, [2.5, 97.5])


beams = [1, 2, 4, 8]
rng = np.random.default_rng(0)
uas, intervals, speed, parsers = [], [], [], {}
for beam in beams:
    parser = EasyFirstBeamParser(beam_size=beam, n_epochs=6, n_features=2**18, random_state=0)
    parser.fit(X_train, y_train)
    parser.predict(X_test[:2])  # compile once before timing
    started = time.perf_counter()
    predicted = parser.predict(X_test)
    speed.append(len(X_test) / (time.perf_counter() - started))
    per_sentence = [attachment_score([g], [p], [x], return_all=True)
                    for g, p, x in zip(y_test, predicted, X_test)]
    scored = np.array([s.n_words for s in per_sentence])
    correct = np.array([s.uas * s.n_words for s in per_sentence])
    uas.append(100 * correct.sum() / scored.sum())
    intervals.append(bootstrap_interval(correct, scored, rng))
    parsers[beam] = parser
    print(f"beam {beam}: UAS {uas[-1]:.1f} (95% interval {intervals[-1][0]:.1f}-"
          f"{intervals[-1][1]:.1f}), {speed[-1]:.0f} sentences/s")

intervals = np.array(intervals)
fig, ax_uas = plt.subplots(figsize=(6, 3.5))
ax_uas.errorbar(beams, uas, yerr=[uas - intervals[:, 0], intervals[:, 1] - uas], fmt="o-",
                color="tab:blue", capsize=3)
# a 20-point window: wide enough that the bootstrap noise looks like what it is
middle = float(np.mean(uas))
ax_uas.set_ylim(middle - 10, middle + 10)
ax_uas.set_xlabel("beam size")
ax_uas.set_ylabel("UAS without punctuation (%)", color="tab:blue")
ax_uas.set_xscale("log", base=2)
ax_speed = ax_uas.twinx()
ax_speed.plot(beams, speed, "s--", color="tab:red")
ax_speed.set_ylabel("sentences per second", color="tab:red")
ax_uas.set_title("EasyFirstBeamParser on the embedded EWT sample")
fig.tight_layout()

# %%
# The order of attachments
# ------------------------
# :meth:`~sklearn_structured.easy_first.EasyFirstBeamParser.attachment_order`
# gives the step at which each word received its head. Easy-first parsing
# attaches determiners, adjectives and other local modifiers first and leaves
# the attachments of the main verb and its arguments for the end.
sentence = next(s for s in X_test if 9 <= len(s) <= 12)
heads = parsers[8].predict([sentence])[0]
order = parsers[8].attachment_order([sentence])[0]
words = [token["form"] for token in sentence]
for step in np.argsort(order):
    head = "ROOT" if heads[step] == 0 else words[heads[step] - 1]
    print(f"step {order[step]:2d}: {words[step]:>12s} -> {head}")

fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(words)), 3))
for m, h in enumerate(heads, start=1):
    if h == 0:
        continue
    centre, radius = (m + h) / 2, abs(m - h) / 2
    theta = np.linspace(0, np.pi, 50)
    ax.plot(centre + radius * np.cos(theta), radius * np.sin(theta), color="0.6")
    ax.annotate(str(order[m - 1] + 1), (centre, radius), ha="center", va="bottom", fontsize=9,
                color="tab:red")
ax.set_xticks(range(1, len(words) + 1), words, rotation=45, ha="right")
ax.set_yticks([])
ax.set_title("predicted arcs, labelled with the step that made them (beam 8)")
for side in ("left", "right", "top"):
    ax.spines[side].set_visible(False)
fig.tight_layout()
plt.show()
