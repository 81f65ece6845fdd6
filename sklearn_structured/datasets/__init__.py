"""Corpus readers and loaders.

CoNLL-U dependency treebanks (read and written losslessly), Universal
Dependencies treebanks found locally, a small sample of UD English EWT shipped
with the package, bracketed constituency trees and plain tokenised text.
Local corpora are found through ``data_home`` or the ``SKLEARN_STRUCTURED_DATA``
environment variable; nothing is downloaded.

The loaders other than CoNLL-U's are imported on first use: applying a model
reads and writes CoNLL-U only, and the synthetic corpus alone would load a
package of tree kernels.
"""

from .._lazy import lazy_attributes
from ._base import get_data_home
from ._conllu import ConlluDocument, ConlluSentence, load_conllu, read_conllu, write_conllu

# the other names, by the module that defines each
_LAZY = {
    "load_20newsgroups": "_newsgroups",
    "make_latent_tree_corpus": "_synthetic",
    "load_ptb_lm": "_text",
    "read_tokenized_text": "_text",
    "PTB_PUNCTUATION_TAGS": "_trees",
    "load_ptb_wsj_sample": "_trees",
    "read_bracketed_trees": "_trees",
    "load_sample_treebank": "_ud",
    "load_ud_treebank": "_ud",
}

__all__ = [
    "PTB_PUNCTUATION_TAGS",
    "ConlluDocument",
    "ConlluSentence",
    "get_data_home",
    "load_20newsgroups",
    "load_conllu",
    "load_ptb_lm",
    "load_ptb_wsj_sample",
    "load_sample_treebank",
    "load_ud_treebank",
    "make_latent_tree_corpus",
    "read_bracketed_trees",
    "read_conllu",
    "read_tokenized_text",
    "write_conllu",
]

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)
