"""DISTRO: structural SVMs with learned label vectors (Srikumar & Manning, 2014)."""

from ._multiclass import DistroSVM, label_similarity
from ._sequence import DistroSequenceSVM

__all__ = ["DistroSVM", "DistroSequenceSVM", "label_similarity"]
