"""Spectral latent-variable dependency model (Dhillon et al., 2012) and n-best reranking."""

from ._reranker import NBestReranker
from ._scorer import SpectralTreeScorer

__all__ = ["NBestReranker", "SpectralTreeScorer"]
