"""DISTRO: structural SVMs with learned label vectors (Srikumar & Manning, 2014)."""

from ._multiclass import DistroSVM, label_similarity

__all__ = ["DistroSVM", "label_similarity"]
