"""Every public estimator of the library, in one table.

The table is read by the package's lazy imports (``sklearn_structured.NAME``),
the safe model format (the only classes a model file may name), the command
line's ``--estimator`` and ``--parser`` choices, the API reference's test and
the common tests. A new estimator family is one subpackage and one line of
:data:`ESTIMATORS`. The table imports nothing, so that reading it stays cheap.

Each class declares its own role (see :mod:`sklearn_structured.annotation`);
the table repeats it only so that the command line can list its choices
without importing the estimators, and a test holds the two equal.
"""

import importlib
from typing import NamedTuple

# the roles of the annotators: a parser writes HEAD and DEPREL, a tagger one tag
# column, a pipeline tags and parses, a tokeniser makes the words of raw text and
# a field selector keeps some fields of the tokens it is given
PARSER, TAGGER, PIPELINE = "parser", "tagger", "pipeline"
TOKENIZER, SELECTOR = "tokenizer", "selector"


class Entry(NamedTuple):
    """One public estimator class."""

    name: str
    module: str
    """The subpackage (or module) of ``sklearn_structured`` that defines it."""
    role: str = None
    """What it writes into a CoNLL-U document (None: it is no annotator)."""
    command_name: str = None
    """Its name on the command line (``--estimator``), if it has one."""


ESTIMATORS = (
    Entry("LowRankTensorParser", "lowrank", PARSER, "lowrank"),
    Entry("EasyFirstBeamParser", "easy_first", PARSER, "easyfirst"),
    Entry("EasyFirstBeamTagger", "easy_first", TAGGER, "easyfirst-tagger"),
    Entry("SpectralTreeScorer", "spectral"),
    Entry("NBestReranker", "spectral", PARSER),
    Entry("DistroSVM", "distro"),
    Entry("DistroSequenceSVM", "distro"),
    Entry("RankSpacePCFG", "rank_space"),
    Entry("RankSpaceHMM", "rank_space"),
    Entry("PPMIWordVectors", "word_vectors"),
    Entry("Tokenizer", "tokenize", TOKENIZER),
    Entry("TokenFieldSelector", "pipeline", SELECTOR),
    Entry("TextPipeline", "pipeline", PIPELINE),
)
BY_NAME = {entry.name: entry for entry in ESTIMATORS}
BY_COMMAND = {entry.command_name: entry for entry in ESTIMATORS if entry.command_name}

# the public functions of the package root, by the module that defines each
FUNCTIONS = {
    "annotate": "annotation",
    "evaluate": "metrics",
    "make_parsing_pipeline": "pipeline",
    "parse": "_parse",
}


def names(role):
    """The command-line names of the estimators of ``role``, sorted."""
    return sorted(e.command_name for e in ESTIMATORS if e.command_name and e.role == role)


def estimator_class(name):
    """The class of a command-line name (``"lowrank"``) or a class name
    (``"LowRankTensorParser"``), imported on first use."""
    entry = BY_COMMAND.get(name) or BY_NAME.get(name)
    if entry is None:
        raise ValueError(f"unknown estimator {name!r}; known: "
                         f"{', '.join(sorted(BY_COMMAND) + sorted(BY_NAME))}")
    return getattr(importlib.import_module(f"{__package__}.{entry.module}"), entry.name)


def is_registered(value):
    """Whether ``value`` is an instance of one of the table's classes (not of a subclass)."""
    entry = BY_NAME.get(type(value).__name__)
    return entry is not None and type(value) is estimator_class(entry.name)
