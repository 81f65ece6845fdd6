"""Penn-Treebank-style bracketed constituency trees -> words and spans.

The spans are what unsupervised constituency parsing is evaluated on: for
every phrasal constituent that still covers at least one word after empty
elements (and, on request, punctuation) are removed, the fencepost pair
``(i, j)`` with ``0 <= i < j <= n`` of the words it covers.
"""

import os
import re
from pathlib import Path

from ._base import find_file, get_data_home, open_text, source_name

PTB_PUNCTUATION_TAGS = frozenset({"``", "''", ",", ".", ":", "-LRB-", "-RRB-", "#", "$"})
"""POS tags removed by ``remove_punctuation=True``: the quotes, comma, period,
colon (also dashes, semicolons and ellipses in the PTB), the round/curly
bracket tags and the currency signs ``#`` and ``$`` (tags, not words: a
``$`` tagged as such goes, ``US$`` tagged ``$`` goes too)."""

_EMPTY_TAG = "-NONE-"
_TOKEN = re.compile(r"\(|\)|[^\s()]+")
_FUNCTION_TAG = re.compile(r"[-=]")


def _strip_function_tags(label):
    # "NP-SBJ-1" -> "NP", "NP=2" -> "NP"; labels that start with "-" (-NONE-,
    # -LRB-) are whole names, not a category with a function tag.
    if not label or label[0] == "-":
        return label
    return _FUNCTION_TAG.split(label, 1)[0]


def _read_trees(lines, source):
    """Yield ``(line_number, tree)`` for each tree; a tree is ``(tag, word)`` for
    a leaf and ``(label, [children])`` for a constituent (label None when the
    bracket has none, like the PTB's outer one). Trees may span lines, but a
    line that starts with ``(`` in its first column starts a new tree (the
    layout of one-tree-per-line files and of ``.mrg`` files, whose
    continuation lines are indented), so an unclosed tree is reported instead
    of swallowing the next one."""
    stack = []
    start = None
    for lineno, line in enumerate(lines, start=1):
        if stack and line.startswith("("):
            raise ValueError(
                f"{source}:{start}: tree starting here is missing {len(stack)} ')' "
                f"(line {lineno} starts a new tree)"
            )
        for token in _TOKEN.findall(line):
            if token == "(":
                if not stack:
                    start = lineno
                stack.append([None, []])
            elif token == ")":
                if not stack:
                    raise ValueError(f"{source}:{lineno}: ')' with no matching '('")
                label, children = stack.pop()
                if label is not None and not children:
                    raise ValueError(
                        f"{source}:{lineno}: constituent {label!r} has no word or child"
                    )
                if not children:
                    raise ValueError(f"{source}:{lineno}: empty brackets '()'")
                if label is not None and len(children) == 1 and isinstance(children[0], str):
                    node = (label, children[0])
                elif any(isinstance(c, str) for c in children):
                    raise ValueError(
                        f"{source}:{lineno}: constituent {label!r} mixes words and brackets; "
                        "a word must be the only child of its POS tag"
                    )
                else:
                    node = (label, children)
                if stack:
                    stack[-1][1].append(node)
                else:
                    yield start, node
            elif not stack:
                raise ValueError(f"{source}:{lineno}: text {token!r} outside any bracket")
            elif stack[-1][0] is None and not stack[-1][1]:
                stack[-1][0] = token
            else:
                stack[-1][1].append(token)
    if stack:
        raise ValueError(f"{source}:{start}: tree starting here is missing {len(stack)} ')'")


def _tree_lines(path_or_lines):
    if isinstance(path_or_lines, (str, os.PathLike)) or hasattr(path_or_lines, "read"):
        with open_text(path_or_lines, "r") as f:
            yield from f
    else:
        yield from path_or_lines


def read_bracketed_trees(
    path_or_lines,
    *,
    remove_empty=True,
    strip_function_tags=True,
    remove_punctuation=False,
    lowercase=False,
    return_labels=False,
    return_tags=False,
):
    """Read PTB-style bracketed trees and return their words and spans.

    Parameters
    ----------
    path_or_lines : str, path-like, file object or iterable of str
        A file (``.gz``/``.xz`` read transparently) or lines. Usually one tree
        per line; a tree may also span several lines (the ``.mrg`` layout).
        An unlabelled outer bracket ``( (S ...) )`` is unwrapped.
    remove_empty : bool, default=True
        Drop ``-NONE-`` empty elements (traces, null complementisers).
    strip_function_tags : bool, default=True
        Reduce labels to their category: ``NP-SBJ-1`` and ``NP=2`` become ``NP``.
    remove_punctuation : bool or collection of str, default=False
        True drops the leaves whose POS tag is in :data:`PTB_PUNCTUATION_TAGS`;
        a collection of tags drops those instead.
    lowercase : bool, default=False
        Lowercase the words.
    return_labels : bool, default=False
        Give spans as ``(i, j, label)`` triples, one per constituent (a unary
        chain gives several), instead of the set of unlabelled ``(i, j)``.
    return_tags : bool, default=False
        Also return the POS tags of the kept words.

    Returns
    -------
    sentences : list of list of str
        The words of each tree.
    spans : list of list of tuple
        Per tree, sorted unlabelled pairs ``(i, j)`` (``0 <= i < j <= n``) of
        every phrasal constituent covering at least one kept word, duplicates
        merged; the whole-sentence span and single-word phrases are included
        (:func:`sklearn_structured.metrics.bracket_f1` discards them). With
        ``return_labels``, ``(i, j, label)`` triples in top-down, left-to-right
        order. Constituents left with no words are dropped.
    tags : list of list of str
        Only when ``return_tags`` is True.

    Raises
    ------
    ValueError
        Naming the file and line, for unbalanced brackets (a tree still open
        when a line starts with ``(`` in its first column, or a ``)`` too
        many), text outside a bracket, a bracket with a label and nothing
        else (``(NN)``) or nothing at all, or a tree with no words left after
        the removals.
    """
    if remove_punctuation is True:
        dropped_tags = set(PTB_PUNCTUATION_TAGS)
    elif remove_punctuation is False or remove_punctuation is None:
        dropped_tags = set()
    else:
        dropped_tags = set(remove_punctuation)
    if remove_empty:
        dropped_tags.add(_EMPTY_TAG)
    source = (
        source_name(path_or_lines)
        if isinstance(path_or_lines, (str, os.PathLike)) or hasattr(path_or_lines, "read")
        else "<lines>"
    )

    sentences, all_spans, all_tags = [], [], []
    for lineno, tree in _read_trees(_tree_lines(path_or_lines), source):
        label, children = tree
        if label is None and isinstance(children, list) and len(children) == 1:
            tree = children[0]
        words, tags, spans = [], [], []
        # iterative pre-order walk; a constituent's span is filled in on exit
        stack = [(tree, False, 0)]
        while stack:
            node, leaving, slot = stack.pop()
            label, content = node
            if isinstance(content, str):
                if label not in dropped_tags:
                    words.append(content.lower() if lowercase else content)
                    tags.append(label)
                continue
            if leaving:
                start = spans[slot]
                spans[slot] = (start, len(words), label) if len(words) > start else None
                continue
            if label is None:
                label = ""
            elif strip_function_tags:
                label = _strip_function_tags(label)
            spans.append(len(words))
            slot = len(spans) - 1
            stack.append(((label, content), True, slot))
            stack.extend((child, False, 0) for child in reversed(content))
        if not words:
            raise ValueError(f"{source}:{lineno}: tree has no words left after removing tags {sorted(dropped_tags)}")
        spans = [s for s in spans if s is not None]
        if not return_labels:
            spans = sorted({(i, j) for i, j, _ in spans})
        sentences.append(words)
        all_spans.append(spans)
        all_tags.append(tags)
    if return_tags:
        return sentences, all_spans, all_tags
    return sentences, all_spans


_WSJ_SAMPLE = "ptb_wsj_sample_nltk.mrg"


def load_ptb_wsj_sample(data_home=None, **kwargs):
    """Load the NLTK 10% sample of the Penn Treebank WSJ (3,914 trees) from a local copy.

    Looks for ``ptb_wsj_sample/ptb_wsj_sample_nltk.mrg[.xz]`` under
    ``data_home`` (or directly in it). The data is LDC material for
    non-commercial use and is never shipped with the package.

    Parameters
    ----------
    data_home : str or path-like, default=None
        See :func:`get_data_home`.
    **kwargs
        Options of :func:`read_bracketed_trees`.

    Returns
    -------
    As :func:`read_bracketed_trees`.
    """
    home = Path(get_data_home(data_home))
    candidates = [
        folder / (_WSJ_SAMPLE + suffix)
        for folder in (home / "ptb_wsj_sample", home)
        for suffix in (".xz", "", ".gz")
    ]
    path = find_file(candidates, "the PTB WSJ sample", data_home)
    return read_bracketed_trees(path, **kwargs)
