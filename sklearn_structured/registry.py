"""The library's estimators by name, and what each predicts.

One list for the command line (``--estimator NAME``), the parsing pipeline
(``make_parsing_pipeline(parser=NAME)``) and whoever applies a fitted model to
a CoNLL-U file (:func:`sklearn_structured.parse`), in place of guessing an
estimator's task from the attributes it happens to have.
"""

PARSER, TAGGER, PIPELINE = "parser", "tagger", "pipeline"

# every public estimator class -> what it predicts of a CoNLL-U file: the heads (and
# relations) of its words, one token field, or None (not a CoNLL-U annotator)
ESTIMATOR_CLASSES = {
    "LowRankTensorParser": PARSER,
    "EasyFirstBeamParser": PARSER,
    "EasyFirstBeamTagger": TAGGER,
    "SpectralTreeScorer": None,
    "NBestReranker": PARSER,
    "DistroSVM": None,
    "DistroSequenceSVM": None,
    "RankSpacePCFG": None,
    "RankSpaceHMM": None,
    "Tokenizer": None,
    "TextPipeline": PIPELINE,
}

# the short names of the command line -> class names; "pipeline" (taggers, then
# one of the parsers) is built by make_parsing_pipeline
ESTIMATOR_NAMES = {
    "lowrank": "LowRankTensorParser",
    "easyfirst": "EasyFirstBeamParser",
    "easyfirst-tagger": "EasyFirstBeamTagger",
}


def names(kind):
    """The short names of the estimators of ``kind`` (PARSER or TAGGER), sorted."""
    return sorted(n for n, cls in ESTIMATOR_NAMES.items() if ESTIMATOR_CLASSES[cls] == kind)


def estimator_class(name):
    """The class of a short name (``"lowrank"``) or a class name (``"LowRankTensorParser"``)."""
    import sklearn_structured

    class_name = ESTIMATOR_NAMES.get(name, name)
    if class_name not in ESTIMATOR_CLASSES:
        raise ValueError(f"unknown estimator {name!r}; known: "
                         f"{', '.join(sorted(ESTIMATOR_NAMES) + sorted(ESTIMATOR_CLASSES))}")
    return getattr(sklearn_structured, class_name)


def kind_of(model):
    """PARSER, TAGGER or PIPELINE (taggers then a parser, as make_parsing_pipeline
    builds, or a TextPipeline: a tokeniser before them), or None for any other model."""
    from sklearn.pipeline import Pipeline

    from .pipeline import TokenFieldSelector

    if type(model) is Pipeline:
        *steps, final = [step for _, step in model.steps]
        if kind_of(final) == PARSER and all(
                type(step) is TokenFieldSelector or kind_of(step) == TAGGER for step in steps):
            return PIPELINE
        return None
    kind = ESTIMATOR_CLASSES.get(type(model).__name__)
    return kind if kind and type(model) is estimator_class(type(model).__name__) else None
