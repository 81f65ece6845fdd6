"""Spectral latent-variable dependency model (Dhillon et al., 2012) and n-best reranking."""

from ._perturb import reattach_one_word
from ._reranker import NBestReranker, cross_val_nbest
from ._scorer import SpectralTreeScorer

__all__ = ["NBestReranker", "SpectralTreeScorer", "cross_val_nbest", "reattach_one_word"]
