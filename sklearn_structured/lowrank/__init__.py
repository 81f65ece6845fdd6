"""Low-rank tensor dependency parser (Lei, Xin, Zhang, Barzilay & Jaakkola, ACL 2014)."""

from ._estimator import LowRankTensorParser

__all__ = ["LowRankTensorParser"]
