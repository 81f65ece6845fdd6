"""
=====================================================
From raw text: sentences, tokens, words, then trees
=====================================================

A :class:`~sklearn_structured.tokenize.Tokenizer` learns from any UD
treebank where its tokens and sentences begin and end in running text, and
which tokens are multiword tokens. Chained with a parsing pipeline it takes a
user from a paragraph of text to labelled trees.

This example trains both on the small EWT sample shipped with the package,
splits a paragraph, parses its sentences and prints the CoNLL-U, then scores
the tokeniser on the held-out part with the CoNLL 2018 figures.
"""

# %%
# Learn to split text
# -------------------
# The tokeniser reads its training text from the documents' ``# text``
# comments and ``SpaceAfter=No``; every character that is not white space is
# labelled inside a token, end of a token, or end of a sentence.
from sklearn_structured import make_parsing_pipeline
from sklearn_structured.datasets import load_sample_treebank, write_conllu
from sklearn_structured.metrics import aligned_scores
from sklearn_structured.tokenize import Tokenizer, segmented_text, to_document

train = load_sample_treebank("train", as_document=True)
held_out = load_sample_treebank("test", as_document=True)
tokenizer = Tokenizer(n_epochs=5, random_state=0).fit([train])

text = ("The new museum opens on Monday. Tickets cost $12, and students don't pay.\n\n"
        "Dr. Smith will give the first talk at 10 a.m. in the main hall.")
sentences = tokenizer.predict([text])[0]
for sentence in sentences:
    print([(token.form, token.start, token.end) for token in sentence])

# %%
# Tag and parse the sentences
# ---------------------------
# The parsing pipeline (taggers, then a labelled parser) takes the words of
# each sentence; ``to_document`` writes CoNLL-U with ``# text``, ``SpaceAfter``
# and multiword-token lines, into which the trees are put.
X_train, y_train = load_sample_treebank("train", labelled=True)
pipe = make_parsing_pipeline(
    "lowrank", targets=("upos",), tagger_params={"beam_size": 1, "n_epochs": 4},
    parser_params={"rank": 20, "n_epochs": 4}, random_state=0,
).fit(X_train, y_train)

words = [[word for token in sentence for word in token.words] for sentence in sentences]
tagged = pipe[:-1].transform(words)
trees = pipe[-1].predict(tagged)
document = to_document(text, sentences).with_heads(
    [heads for heads, _ in trees], [deprels for _, deprels in trees])
print(write_conllu(document))

# %%
# How well does it split?
# -----------------------
# The held-out sentences' raw text, split by the tokeniser and scored by the
# CoNLL 2018 rules: a token or sentence counts when its characters match
# gold's, and words are aligned on their characters. With 300 training
# sentences the figures are below those on a whole treebank (see the user
# guide's page "From raw text").
gold_text = segmented_text(held_out).text
predicted = to_document(gold_text, tokenizer.predict([gold_text])[0])
scores = aligned_scores(held_out, predicted)
for name in ("Tokens", "Sentences", "Words"):
    print(f"{name}: F1 {100 * scores[name].f1:.2f}")
