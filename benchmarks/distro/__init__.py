"""DISTRO: 20 Newsgroups, POS and morphological tagging, label geometry."""
