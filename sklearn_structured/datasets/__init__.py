"""Corpus readers and loaders.

CoNLL-U dependency treebanks (read and written losslessly), Universal
Dependencies treebanks found locally, a small sample of UD English EWT shipped
with the package, bracketed constituency trees and plain tokenised text.
Local corpora are found through ``data_home`` or the ``SKLEARN_STRUCTURED_DATA``
environment variable; nothing is downloaded.
"""

from ._base import get_data_home
from ._conllu import ConlluDocument, ConlluSentence, load_conllu, read_conllu, write_conllu
from ._newsgroups import load_20newsgroups
from ._synthetic import make_latent_tree_corpus
from ._text import load_ptb_lm, read_tokenized_text
from ._trees import PTB_PUNCTUATION_TAGS, load_ptb_wsj_sample, read_bracketed_trees
from ._ud import load_sample_treebank, load_ud_treebank

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
