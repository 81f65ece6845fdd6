"""The ``sklearn-structured`` command: evaluate, train, parse, demo, serve.

Each command is a module of this package, named after it, that gives its help
(``HELP``, ``DESCRIPTION``) and arguments (``add_arguments``) and prints what a
library function returns from ``run``. Usage errors print one line and exit
with status 2 (argparse's convention); any other failure prints one line
``sklearn-structured: error: ...`` and exits with status 1, with the traceback
only under ``--debug``; Ctrl-C exits with status 130.
"""

import argparse
import atexit
import gc
import importlib
import os
import sys
import types

from . import demo, evaluate, parse, serve, train
from ._common import HelpFormatter, ParserWithParams

COMMANDS = (evaluate, train, parse, demo, serve)


def build_parser():
    from .. import __version__

    ap = argparse.ArgumentParser(
        prog="sklearn-structured",
        description="Structured prediction for NLP with scikit-learn estimators: train, apply "
        "and evaluate dependency parsers and taggers on CoNLL-U files.",
        epilog="The first run compiles the numba kernels (about 20 s, cached afterwards).",
        formatter_class=HelpFormatter,
    )
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    debug = dict(action="store_true", help="show the full traceback of an error")
    ap.add_argument("--debug", **debug)
    sub = ap.add_subparsers(dest="command", required=True, parser_class=ParserWithParams)
    for command in COMMANDS:  # the module of each command is named after it
        parser = sub.add_parser(command.__name__.rpartition(".")[2], help=command.HELP,
                                description=command.DESCRIPTION, formatter_class=HelpFormatter)
        command.add_arguments(parser)
        parser.set_defaults(func=command.run)
    for parser in sub.choices.values():
        # --debug after the command too; SUPPRESS keeps one given before it
        parser.add_argument("--debug", default=argparse.SUPPRESS, **debug)
    return ap


def _error_message(error):
    if isinstance(error, OSError) and error.strerror:
        return f"{error.strerror}: {error.filename}" if error.filename else error.strerror
    return str(error) or type(error).__name__


class _DeferredModule(types.ModuleType):
    """Stands in for a module in ``sys.modules`` until code first reads one of its
    attributes, then imports the module and hands the attribute over."""

    def __getattr__(self, attribute):
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), attribute)


def _defer_import(name):
    """Import module ``name`` only when first used.

    scikit-learn imports SciPy's statistics at start-up but calls it only in
    functions the commands never reach; executing it costs about 0.8 s of every
    command, a sixth of parsing the EWT test text. Code that uses the module
    gets it in full on first touch.
    """
    if name not in sys.modules:
        sys.modules[name] = _DeferredModule(name)


def main(argv=None):
    _defer_import("scipy.stats")
    args = build_parser().parse_args(argv)
    try:
        from ..utils import announce_compilation

        announce_compilation()
        return args.func(args)
    except BrokenPipeError:
        # the reader stopped early (``| head``): stop quietly, and keep Python
        # from complaining while it flushes stdout at exit
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    except KeyboardInterrupt:
        print(f"sklearn-structured: interrupted{getattr(args, 'interrupted', '')}",
              file=sys.stderr)
        return 130
    except Exception as error:
        if args.debug:
            raise
        print(f"sklearn-structured: error: {_error_message(error)}", file=sys.stderr)
        return 1
    finally:
        gc.unfreeze()  # undo the freeze of load_model for callers in the same process


def console_main():
    """The installed command and ``python -m sklearn_structured``: :func:`main`, then exit.

    Once the command is done, the process ends without tearing the interpreter
    down: freeing every module and object one by one took about 0.4 s of CPU
    after each command, a twelfth of parsing the EWT test text. The exit
    handlers registered with :mod:`atexit` still run and the standard
    streams are flushed; every file a command writes is closed before it
    returns.
    """
    status = main()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away, a closed stream
            pass
    os._exit(status or 0)
