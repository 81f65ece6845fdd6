"""DISTRO: structural SVMs with learned label vectors (Srikumar & Manning, 2014)."""

from ._multiclass import DistroSVM, label_similarity
from ._sequence import DistroSequenceSVM, emission_features

__all__ = ["DistroSVM", "DistroSequenceSVM", "emission_features", "label_similarity"]
