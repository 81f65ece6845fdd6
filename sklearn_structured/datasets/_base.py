"""Shared plumbing of the dataset readers: where local corpora live, and opening
paths or file objects (plain, ``.gz`` or ``.xz``) as UTF-8 text."""

import contextlib
import gc
import gzip
import io
import lzma
import os
from pathlib import Path

DATA_ENV = "SKLEARN_STRUCTURED_DATA"
_DEFAULT_DATA_HOME = "~/sklearn_structured_data"

_COMPRESSED = {".gz": gzip.open, ".xz": lzma.open, ".lzma": lzma.open}


def get_data_home(data_home=None):
    """Return the folder where local copies of the corpora are looked for.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Used as given when not None. Otherwise the ``SKLEARN_STRUCTURED_DATA``
        environment variable, and failing that ``~/sklearn_structured_data``.
        Nothing is downloaded and the folder is not created.

    Returns
    -------
    data_home : str
        The folder, with ``~`` expanded.
    """
    if data_home is None:
        data_home = os.environ.get(DATA_ENV) or _DEFAULT_DATA_HOME
    return os.path.expanduser(os.fspath(data_home))


def describe_data_home(data_home):
    """One sentence telling the user how the folder was chosen and how to change it."""
    if data_home is not None:
        origin = "the data_home argument"
    elif os.environ.get(DATA_ENV):
        origin = f"the {DATA_ENV} environment variable"
    else:
        origin = f"the default ({DATA_ENV} is not set)"
    return (
        f"data_home {get_data_home(data_home)!r} came from {origin}; pass data_home=... "
        f"or set {DATA_ENV} to the folder holding the corpora"
    )


def source_name(path_or_file):
    """A name for error messages: the path, or the file object's name."""
    if isinstance(path_or_file, (str, os.PathLike)):
        return os.fspath(path_or_file)
    name = str(getattr(path_or_file, "name", "<stream>"))
    # the command line's wording, in messages that name sys.stdin (or its buffer) too
    return "standard input" if name == "<stdin>" else name


def _is_binary(file):
    if isinstance(file, io.TextIOBase):
        return False
    if isinstance(file, (io.RawIOBase, io.BufferedIOBase)):
        return True
    return "b" in getattr(file, "mode", "")


@contextlib.contextmanager
def open_text(path_or_file, mode="r"):
    """Open a path or wrap a file object as UTF-8 text with no newline translation.

    Paths ending in ``.gz``, ``.xz`` or ``.lzma`` are (de)compressed on the fly.
    A binary file object is wrapped (and detached again, so the caller's object
    stays open); a text file object is used as it is. Lines keep their ``\\n``
    terminators exactly as in the file (``newline="\\n"`` on reading), so that
    readers can reproduce the input byte for byte.
    """
    newline = "\n" if mode == "r" else ""
    if isinstance(path_or_file, (str, os.PathLike)):
        path = Path(path_or_file)
        opener = _COMPRESSED.get(path.suffix.lower(), open)
        with opener(path, mode + "t", encoding="utf-8", newline=newline) as f:
            yield f
        return
    if not _is_binary(path_or_file):
        yield path_or_file
        return
    wrapper = io.TextIOWrapper(path_or_file, encoding="utf-8", newline=newline)
    try:
        yield wrapper
    finally:
        if mode != "r":
            wrapper.flush()
        wrapper.detach()


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while building many small containers.

    Reading a treebank creates millions of lists, strings and dicts and no
    reference cycles; the collector's repeated full scans would otherwise take
    most of the reading time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def find_file(candidates, what, data_home):
    """Return the first existing path of ``candidates`` or raise FileNotFoundError
    listing every path tried and how to point the loader elsewhere."""
    for path in candidates:
        if os.path.isfile(path):
            return path
    tried = "\n  ".join(os.fspath(p) for p in candidates)
    raise FileNotFoundError(
        f"could not find {what}; looked at:\n  {tried}\n{describe_data_home(data_home)}."
    )
