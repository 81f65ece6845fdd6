"""Dependency relation labels for the trees of both parsers (one shared arc labeller)."""

from ._labeller import LabellingParserMixin, label_trees, new_labeller, train_labeller

__all__ = ["LabellingParserMixin", "label_trees", "new_labeller", "train_labeller"]
