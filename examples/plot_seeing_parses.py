"""
=====================================
Seeing parses: trees drawn as SVG
=====================================

A parse is easier to read as a picture than as CoNLL-U columns.
:mod:`sklearn_structured.display` draws a sentence's tree as a standalone SVG:
the words with their UPOS, an arc from each head to its dependent labelled
with the relation, an arrow onto the root and a bracket under the words of
each multiword token. A :class:`~sklearn_structured.datasets.ConlluDocument`
shows itself this way in Jupyter, and here in the gallery.

This example trains a small pipeline on the EWT sample shipped with the
package, draws the trees of a paragraph it annotates, then draws held-out
sentences as a parser trained on gold tags sees them against their gold
trees, its mistakes in red.
"""

# %%
# Annotate a paragraph and look at it
# -----------------------------------
# The parameters are small for the sake of time. The last expression of a
# cell is a document: the gallery (like Jupyter) shows its ``_repr_html_``,
# one picture a sentence.
import io

from sklearn_structured import EasyFirstBeamParser, TextPipeline, make_parsing_pipeline, parse
from sklearn_structured.datasets import load_conllu, load_sample_treebank
from sklearn_structured.display import Trees
from sklearn_structured.tokenize import Tokenizer

train = load_sample_treebank("train", as_document=True)
model = TextPipeline(
    Tokenizer(n_epochs=3, random_state=0),
    make_parsing_pipeline("easyfirst", targets=("upos", "lemma"),
                          tagger_params={"n_epochs": 3}, parser_params={"n_epochs": 3},
                          n_folds=2, random_state=0),
).fit([train])
document = parse(model, io.StringIO("The museum didn't open on Monday. Visitors waited "
                                    "outside in the rain."), input_format="text")
document

# %%
# Predicted against gold
# ----------------------
# A parser trained on the sample's gold tags parses held-out sentences; each
# is drawn twice, gold above and predicted below, the arcs whose head is
# wrong dashed red and the labels that are wrong on a right head in red.
held_out = load_sample_treebank("test", as_document=True)
parser = EasyFirstBeamParser(n_epochs=5, random_state=0).fit(
    *load_sample_treebank("train", labelled=True))
X, _ = load_conllu(held_out)
heads, labels = zip(*parser.predict(X))
predicted = held_out.with_heads(heads, labels, clear_deps=True)
wrong = [i for i, (p, g) in enumerate(zip(predicted, held_out))
         if 6 <= len(g.words) <= 12 and [r[6:8] for r in p.words] != [r[6:8] for r in g.words]]
Trees(predicted, gold=held_out, sentences=wrong[:3])
