"""
==========================================================
From word forms to a labelled tree: the parsing pipeline
==========================================================

A parser trained on gold part-of-speech tags has none at prediction time when
it is given raw words. :func:`~sklearn_structured.make_parsing_pipeline`
chains taggers and a parser in one scikit-learn
:class:`~sklearn.pipeline.Pipeline`: a UPOS tagger, an XPOS tagger, then a
labelled parser. While the pipeline is fitted, every tagger tags the training
sentences by jackknifing (each fold by a model that did not see it), so the
parser learns from tags as noisy as those it will meet.

This example fits the pipeline on the small EWT sample shipped with the
package, scores it on held-out sentences given as word forms only, saves and
reloads it as one model file, and prints the CoNLL-U of a new sentence.
"""

# %%
# Fit on the sample
# -----------------
# The sentences carry gold UPOS and XPOS, which the taggers learn; ``y`` holds
# ``(heads, deprels)`` pairs, which the parser learns. Few epochs and a
# greedy tagger keep the example quick; the defaults are meant for real
# treebanks.
import io
import tempfile
from pathlib import Path

from sklearn_structured import annotate, make_parsing_pipeline
from sklearn_structured.datasets import (
    ConlluDocument,
    ConlluSentence,
    load_sample_treebank,
    write_conllu,
)
from sklearn_structured.utils import load_model, save_model

X_train, y_train = load_sample_treebank("train", labelled=True)
X_test, y_test = load_sample_treebank("test", labelled=True)

pipe = make_parsing_pipeline(
    "lowrank", targets=("upos", "xpos"),
    tagger_params={"beam_size": 1, "n_epochs": 5},
    parser_params={"rank": 20, "n_epochs": 5},
    random_state=0,
)
pipe.fit(X_train, y_train)
print([name for name, _ in pipe.steps])

# %%
# Score from word forms
# ---------------------
# The held-out sentences are given as lists of strings: no tag at all. The
# pipeline's ``score`` is its parser's, the labelled attachment score. With
# 300 training sentences the figures are far below those on a full treebank
# (see the user guide).
forms = [[token["form"] for token in sentence] for sentence in X_test]
print(f"held-out LAS from forms: {100 * pipe.score(forms, y_test):.1f}")

# %%
# One model file
# --------------
# :func:`~sklearn_structured.utils.save_model` writes the whole pipeline in
# the safe format (it loads without running code from the file); the reloaded
# pipeline predicts the same trees.
with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "pipeline.model"
    save_model(pipe, path)
    reloaded = load_model(path)
same = all((a[0] == b[0]).all() for a, b in zip(pipe.predict(forms), reloaded.predict(forms)))
print(f"reloaded pipeline predicts the same trees: {same}")

# %%
# A new sentence as CoNLL-U
# -------------------------
# :func:`~sklearn_structured.annotate` writes every predicted column into a
# CoNLL-U document of the words.
words = "The new library parses sentences from plain words .".split()
rows = [[str(i), form, *"_" * 8] for i, form in enumerate(words, start=1)]
document = ConlluDocument([ConlluSentence(["# text = " + " ".join(words)], rows)])
text = io.StringIO()
write_conllu(annotate(reloaded, document), text)
print(text.getvalue())
