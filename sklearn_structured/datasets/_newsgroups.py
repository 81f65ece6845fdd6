"""The 20 Newsgroups "bydate" split from a local copy.

Reads ``20news/20news-bydate-{train,test}.jsonl.xz`` (one JSON object per
line with ``label``, ``doc_id`` and ``text``, the raw message) under
``data_home`` or the ``SKLEARN_STRUCTURED_DATA`` environment variable.
Nothing is downloaded.
"""

import json
import lzma
import os
import re
from pathlib import Path

_SUBSETS = ("train", "test")
_REMOVABLE = ("headers", "footers", "quotes")

# "In article <...>, someone writes:" and similar attribution lines
_ATTRIBUTION = re.compile(r"(writes|wrote|said|says)\s*:\s*$|^\s*in article\b", re.IGNORECASE)
_QUOTED = re.compile(r"^\s*(>|\|)")


def _data_file(subset, data_home):
    home = data_home if data_home is not None else os.environ.get("SKLEARN_STRUCTURED_DATA")
    if home is None:
        raise OSError(
            "20 Newsgroups is read from a local copy: pass data_home or set "
            "SKLEARN_STRUCTURED_DATA to the folder holding 20news/"
        )
    path = Path(home) / "20news" / f"20news-bydate-{subset}.jsonl.xz"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    return path


def strip_headers(text):
    """Drop the header block: everything up to the first blank line."""
    head, blank, body = text.partition("\n\n")
    return body if blank else text


def strip_footer(text):
    """Drop a trailing signature: what follows the last line made only of dashes."""
    lines = text.rstrip("\n").split("\n")
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i].strip()
        if len(line) >= 2 and set(line) == {"-"}:
            return "\n".join(lines[:i])
    return text


def strip_quotes(text):
    """Drop quoted lines (starting with ``>`` or ``|``) and attribution lines."""
    kept = [
        line for line in text.split("\n")
        if not _QUOTED.match(line) and not _ATTRIBUTION.search(line)
    ]
    return "\n".join(kept)


def load_20newsgroups(subset="train", data_home=None, remove=()):
    """Load the 20 Newsgroups bydate ``subset`` ("train", "test" or "all").

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
    data_home : str or path, optional
        Folder holding ``20news/``; defaults to ``$SKLEARN_STRUCTURED_DATA``.
    remove : tuple of {"headers", "footers", "quotes"}
        Parts of every message to strip, as in scikit-learn's
        ``fetch_20newsgroups(remove=...)``: headers are everything before
        the first blank line, the footer is what follows the last line of
        dashes, quotes are lines starting with ``>`` or ``|`` and the lines
        announcing them ("... writes:").

    Returns
    -------
    texts : list of str
    labels : list of str
        Newsgroup names such as ``"comp.graphics"``, in file order (sorted
        by newsgroup, then by document id).
    """
    if subset == "all":
        subsets = _SUBSETS
    elif subset in _SUBSETS:
        subsets = (subset,)
    else:
        raise ValueError(f"subset must be 'train', 'test' or 'all', got {subset!r}")
    if isinstance(remove, str):
        remove = (remove,)
    unknown = set(remove) - set(_REMOVABLE)
    if unknown:
        raise ValueError(f"remove may hold {_REMOVABLE}, got unknown {sorted(unknown)}")
    texts, labels = [], []
    for name in subsets:
        with lzma.open(_data_file(name, data_home), "rt", encoding="utf-8") as f:
            for line_number, line in enumerate(f, start=1):
                try:
                    record = json.loads(line)
                    text, label = record["text"], record["label"]
                except (ValueError, KeyError) as exc:
                    raise ValueError(
                        f"20news-bydate-{name}.jsonl.xz line {line_number}: malformed record ({exc})"
                    ) from None
                if "headers" in remove:
                    text = strip_headers(text)
                if "footers" in remove:
                    text = strip_footer(text)
                if "quotes" in remove:
                    text = strip_quotes(text)
                texts.append(text)
                labels.append(label)
    return texts, labels
