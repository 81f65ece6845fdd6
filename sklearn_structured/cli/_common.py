"""What the commands share: one-line errors, reading input, building estimators and
loading model files."""

import argparse
import ast
import gc
import os
import sys

from .. import registry

PICKLE_WARNING = (
    "joblib/pickle model files can execute arbitrary code when loaded: "
    "load only files you made yourself or fully trust"
)


class CommandError(Exception):
    """A failure the user can act on, reported as one line."""


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows defaults, but not the None of required or unset options."""

    def _get_help_string(self, action):
        if action.required or action.default is None:
            return action.help
        return super()._get_help_string(action)


class ParserWithParams(argparse.ArgumentParser):
    """A command's parser whose help ends with the ``--param`` keys of its estimators,
    looked up only when help is printed (an ordinary run imports one estimator)."""

    estimator_names = ()

    def format_help(self):
        text = super().format_help()
        if not self.estimator_names:
            return text
        lines = ["", "--param keys (KEY=VALUE, VALUE a Python literal or a string):"]
        for name in self.estimator_names:
            defaults = registry.estimator_class(name)().get_params()
            keys = ", ".join(f"{key}={value!r}" for key, value in sorted(defaults.items()))
            lines.append(f"  {name}: {keys}")
        return text + "\n".join(lines) + "\n"


def parse_params(pairs, estimator_name):
    """``["rank=20", "gamma=0.5"]`` -> ``{"rank": 20, "gamma": 0.5}`` (Python literals or
    strings), keys checked against the estimator's parameters."""
    valid = registry.estimator_class(estimator_name)().get_params()
    params = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep:
            raise CommandError(f"--param expects KEY=VALUE, got {pair!r}")
        if key not in valid:
            raise CommandError(f"--param {key!r} is not a parameter of {estimator_name}; "
                               f"valid keys: {', '.join(sorted(valid))}")
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return params


def check_params(*estimators):
    """Check parameter values against each estimator's constraints now, before any data
    are read, rather than when fit starts."""
    for estimator in estimators:
        try:
            estimator._validate_params()  # scikit-learn's check of _parameter_constraints
        except ValueError as error:
            raise CommandError(f"--param: {error}") from None


def input_source(path):
    """What to read for the file argument ``path`` (``-``: standard input's bytes), and its
    name for progress lines; a directory is refused."""
    if path == "-":
        return sys.stdin.buffer, "standard input"
    if os.path.isdir(path):
        raise CommandError(f"{path} is a directory, not a file to read")
    return path, path


def read_document(path):
    """Read a CoNLL-U file (``-`` for standard input), with a progress line on stderr."""
    from ..datasets import read_conllu

    source, name = input_source(path)
    print(f"reading {name}", file=sys.stderr, flush=True)
    document = read_conllu(source)
    print(f"read {len(document)} sentences from {name}", file=sys.stderr)
    if len(document) == 0:
        raise CommandError(f"{name} holds no sentences")
    return document


def add_seed_and_size_arguments(parser):
    """``--seed`` and ``--max-sentences``, the options of a reproducible (quick) training."""
    parser.add_argument(
        "--seed", type=int, default=0,
        help="random_state of every step (tokeniser, taggers, parser), so that two runs "
        "train the same model; a random_state given by --param, --tagger-param or "
        "--tokenizer-param wins for its step")
    parser.add_argument("--max-sentences", type=int, metavar="N",
                        help="train on the first N sentences of --train only (a quick trial)")


def first_sentences(document, max_sentences):
    """The first ``max_sentences`` sentences of ``document`` (all for None), saying so on
    stderr when that leaves some out."""
    if max_sentences is None:
        return document
    if max_sentences < len(document):
        print(f"training on the first {max_sentences} of {len(document)} sentences "
              "(--max-sentences)", file=sys.stderr)
    return document[:max_sentences]


def check_output_path(path):
    """Fail before any work if ``path`` cannot be written."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise CommandError(f"output {path} is a directory")
    if not os.path.isdir(directory):
        raise CommandError(f"cannot write {path}: directory {directory} does not exist")
    if not os.access(directory, os.W_OK):
        raise CommandError(f"cannot write {path}: directory {directory} is not writable")


def load_model(path, allow_pickle):
    """A model file in the safe format, or with ``allow_pickle`` a joblib/pickle file.

    Loading imports most of the library, scikit-learn, SciPy and numba and
    builds the model's dictionaries: a million objects and no garbage. The
    cyclic collector is paused meanwhile, and what is alive afterwards is
    frozen (left out of later collections) until :func:`main` returns, since
    it lives as long as the command: together 0.3 s of CPU of the 5 s that
    ``parse`` takes on the EWT test text.
    """
    from ..datasets._base import gc_paused

    with gc_paused():
        model = _load_model(path, allow_pickle)
    gc.freeze()
    return model


def load_annotator(path, allow_pickle, command):
    """The parser, tagger or parsing pipeline of a model file, for ``command``; a
    CommandError for a model of any other kind."""
    model = load_model(path, allow_pickle)
    from ..annotation import role_of  # after the model: its loading imports the library

    if role_of(model) not in (registry.PARSER, registry.TAGGER, registry.PIPELINE):
        raise CommandError(f"{path} holds a {type(model).__name__}, which {command} cannot "
                           "apply: it takes a parser, a tagger or a parsing pipeline")
    return model


def _load_model(path, allow_pickle):
    from ..utils import is_model_file
    from ..utils import load_model as load_safe
    from ..utils._persistence import _is_damaged_archive

    if os.path.isdir(path):
        raise CommandError(f"model {path} is a directory, not a model file")
    if not os.path.isfile(path):
        raise CommandError(f"model file {path} does not exist")
    if is_model_file(path) or _is_damaged_archive(path):
        return load_safe(path)
    if not allow_pickle:
        raise CommandError(
            f"{path} is not a model file in the safe format; if it is a joblib/pickle file you "
            f"made yourself, pass --allow-pickle ({PICKLE_WARNING})")
    import joblib

    print(f"warning: {PICKLE_WARNING}", file=sys.stderr)
    try:
        return joblib.load(path)
    except Exception as error:  # a damaged pickle fails in many ways
        raise CommandError(f"cannot load {path} with joblib: {error}") from None
