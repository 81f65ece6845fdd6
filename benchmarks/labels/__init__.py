"""Labelled parsing: labels after the tree, and jointly with it."""
