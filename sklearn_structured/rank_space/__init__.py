"""Low-rank PCFG and HMM with inference in rank space (Yang, Liu & Tu, NAACL 2022)."""

from ._hmm import RankSpaceHMM
from ._pcfg import (
    RankSpacePCFG,
    left_branching_spans,
    pcfg_factor_gradients,
    pcfg_kernel_inputs,
    random_binary_spans,
    right_branching_spans,
    spans_to_brackets,
)

__all__ = [
    "RankSpaceHMM",
    "RankSpacePCFG",
    "left_branching_spans",
    "pcfg_factor_gradients",
    "pcfg_kernel_inputs",
    "random_binary_spans",
    "right_branching_spans",
    "spans_to_brackets",
]
