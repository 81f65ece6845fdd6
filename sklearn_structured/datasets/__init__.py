"""Corpus readers and loaders."""
from ._base import get_data_home
from ._conllu import ConlluDocument, ConlluSentence, load_conllu, read_conllu, write_conllu
from ._ud import load_sample_treebank, load_ud_treebank
