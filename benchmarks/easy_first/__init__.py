"""The easy-first beam parser and tagger."""
