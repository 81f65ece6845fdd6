"""
=====================================================
From raw text: sentences, tokens, words, then trees
=====================================================

A :class:`~sklearn_structured.TextPipeline` goes from a paragraph of text to
full Universal Dependencies annotation: its
:class:`~sklearn_structured.tokenize.Tokenizer` splits the text into
sentences, tokens and syntactic words (multiword tokens expanded), its taggers
predict UPOS, XPOS, FEATS and the lemma, and its parser the labelled tree.

This example trains one on the small EWT sample shipped with the package,
annotates a paragraph and prints the CoNLL-U, then scores it on the held-out
part's raw text with the CoNLL 2018 figures.
"""

# %%
# Train on CoNLL-U documents
# --------------------------
# Everything is read from the documents: the tokeniser's training text from
# their ``# text`` comments and ``SpaceAfter=No`` (or their FORMs where a
# sentence has no ``# text``), the taggers' and the parser's from their
# words. The parameters here are small for the sake of time; the defaults are
# those of ``sklearn-structured train --estimator pipeline``.
from sklearn_structured import TextPipeline, make_parsing_pipeline
from sklearn_structured.datasets import load_sample_treebank, write_conllu
from sklearn_structured.metrics import aligned_scores
from sklearn_structured.tokenize import Tokenizer, segmented_text

train = load_sample_treebank("train", as_document=True)
held_out = load_sample_treebank("test", as_document=True)
model = TextPipeline(
    Tokenizer(n_epochs=5, random_state=0),
    make_parsing_pipeline("lowrank", tagger_params={"n_epochs": 4},
                          parser_params={"rank": 20, "n_epochs": 4}, n_folds=3,
                          random_state=0),
).fit([train])

# %%
# Annotate a paragraph
# --------------------
# ``predict`` gives one CoNLL-U document per text, with ``# sent_id``,
# ``# text``, ``SpaceAfter=No`` and the predicted columns.
text = ("The new museum opens on Monday. Tickets cost $12, and students don't pay.\n\n"
        "Dr. Smith will give the first talk at 10 a.m. in the main hall.")
document = model.predict([text])[0]
print(write_conllu(document))

# %%
# How well does it do from raw text?
# ----------------------------------
# The held-out sentences' raw text, annotated and scored by the CoNLL 2018
# rules: words are aligned with gold's on their characters, so a word split
# wrongly costs its tags and its attachment too. With 300 training sentences
# the figures are far below those of a whole treebank (see the user guide's
# page "From raw text").
gold_text = segmented_text(held_out).text
scores = aligned_scores(held_out, model.predict([gold_text])[0])
for name in ("Tokens", "Sentences", "Words", "UPOS", "UFeats", "Lemmas", "LAS"):
    print(f"{name}: F1 {100 * scores[name].f1:.2f}")
