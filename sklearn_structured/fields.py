"""The fields of a CoNLL-U word, named once for the whole library.

A file has ten columns; an estimator reads a token as a mapping of the
token fields (the form and its tags) and writes some of them. Every list of
fields elsewhere is built from the names here, so that adding or reading a
field has one place to look. This module imports nothing.
"""

ID, FORM, LEMMA, UPOS, XPOS, FEATS = "id", "form", "lemma", "upos", "xpos", "feats"
HEAD, DEPREL, DEPS, MISC = "head", "deprel", "deps", "misc"
# the lower-cased form: no column, a field the corpus packing derives from FORM
LOWER = "lower"

# the columns of a word line, in file order
COLUMNS = (ID, FORM, LEMMA, UPOS, XPOS, FEATS, HEAD, DEPREL, DEPS, MISC)
# where each column stands in a word line
COLUMN_INDEX = {name: i for i, name in enumerate(COLUMNS)}

# what a token of a sentence holds: its form and the tag fields, in file order
TOKEN_FIELDS = (FORM, LEMMA, UPOS, XPOS, FEATS)
# the columns a tagger writes (a pipeline's targets), in the order a pipeline tags
# them by default and the scores print them: the coarse tag first, the lemma last
TAG_FIELDS = (UPOS, XPOS, FEATS, LEMMA)
DEFAULT_TARGETS = TAG_FIELDS
# the tags an earlier tagger writes that a later one can read as features
INPUT_TAG_FIELDS = (UPOS, XPOS)
# the tag fields whose ``_`` is a value of its own (no features; a lemma or XPOS a
# treebank leaves unspecified), which a tagger learns; elsewhere ``_`` is a missing value
UNDERSCORE_IS_A_VALUE = (FEATS, LEMMA, XPOS)

# where a reader looks when a token has no value for a field, in order: a parser
# reading XPOS reads UPOS instead where XPOS is missing, and the form last of all
FALLBACKS = {
    LEMMA: (FORM,),
    UPOS: (XPOS, FORM),
    XPOS: (UPOS, FORM),
}


def tag_fallback(field):
    """The other tag a reader of the tag ``field`` (UPOS or XPOS) falls back to."""
    return FALLBACKS[field][0]
