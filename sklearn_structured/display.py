"""Dependency trees drawn as standalone SVG, and documents as HTML pages.

A sentence is drawn as displaCy and UDPipe's web service draw one: its words
in order with their UPOS below, one arc above for every attachment, pointing
at the dependent and labelled with its DEPREL, a vertical arrow onto each
root, and a bracket under the words of each multiword token with the token's
surface form. A sentence whose strong characters are mostly right-to-left
(Hebrew, Arabic, ...) runs from right to left. Given a gold sentence too, both
trees are drawn one above the other, the predicted arcs with a wrong head and
the labels that are wrong on a right head marked in red.

The pictures need no script, stylesheet or font beyond the SVG itself: word
widths are estimated from the number of characters (East Asian wide
characters count double), so a word in a very wide font may touch its
neighbour. Empty nodes (``5.1``) belong to the enhanced graph and are not
drawn.
"""

import html
import unicodedata

_FORM_SIZE = 14  # px of the word forms; the other texts are smaller
_CHAR_WIDTH = 8.5  # px of an average character of the forms at that size
_MIN_WORD_WIDTH = 36
_WORD_GAP = 18
_LEVEL_HEIGHT = 26  # px an arc rises for each arc nested under it
_MARGIN = 12
_ROOT_RISE = 22  # px a root's arrow stands above the highest arc
_TREE_HEIGHT_BELOW = 52  # forms, UPOS and multiword brackets under the arcs' feet

_STYLE = (
    "<style>"
    ".form{font:14px sans-serif;fill:#111}"
    ".upos{font:11px sans-serif;fill:#5a6b7b}"
    ".deprel{font:11px sans-serif;fill:#1f4e79}"
    ".title{font:bold 12px sans-serif;fill:#333}"
    ".word rect{fill:#f3f6f9;stroke:#c8d3de}"
    ".arc path,.root path{fill:none;stroke:#1f4e79;stroke-width:1.3}"
    ".arc polygon,.root polygon{fill:#1f4e79}"
    ".label-bg{fill:#fff}"
    ".mwt path{fill:none;stroke:#888}"
    ".mwt text{font:italic 11px sans-serif;fill:#555}"
    ".wrong-head path{stroke:#c0392b;stroke-dasharray:4 2}"
    ".wrong-head polygon{fill:#c0392b}"
    ".wrong-head .deprel,.wrong-label .deprel{fill:#c0392b;font-weight:bold}"
    "</style>"
)


def is_right_to_left(text):
    """Whether most strong characters of ``text`` are right-to-left (Unicode
    bidirectional class R or AL)."""
    rtl = ltr = 0
    for char in text:
        kind = unicodedata.bidirectional(char)
        if kind in ("R", "AL"):
            rtl += 1
        elif kind == "L":
            ltr += 1
    return rtl > ltr


def _text_width(text, size=_FORM_SIZE):
    wide = sum(unicodedata.east_asian_width(char) in "WF" for char in text)
    return (len(text) + wide) * _CHAR_WIDTH * size / _FORM_SIZE


class _Tree:
    """The words, heads, labels and multiword tokens of one sentence."""

    def __init__(self, sentence):
        words = sentence.words
        self.forms = [row[1] for row in words]
        self.upos = ["" if row[3] == "_" else row[3] for row in words]
        self.heads = [int(row[6]) if row[6].isdigit() else None for row in words]
        self.deprels = ["" if row[7] == "_" else row[7] for row in words]
        self.tokens = []  # (first word, last word, surface form), 1-based
        for row in sentence.rows:
            first, dash, last = row[0].partition("-")
            if dash:
                self.tokens.append((int(first), int(last), row[1]))

    def __len__(self):
        return len(self.forms)


def _levels(heads):
    """The height, in nesting levels, of the arc onto each word (None for a root or
    an unknown head): one more than the highest arc within its span."""
    spans = sorted(((min(h, d), max(h, d), d) for d, h in enumerate(heads, start=1)
                    if h), key=lambda span: span[1] - span[0])
    levels = [None] * len(heads)
    done = []
    for lo, hi, d in spans:
        level = 1 + max((lv for l2, h2, lv in done if lo <= l2 and h2 <= hi), default=0)
        levels[d - 1] = level
        done.append((lo, hi, level))
    return levels


def _layout(trees):
    """The centre of each word (shared by every tree drawn) and the words' widths."""
    widths = [max(_MIN_WORD_WIDTH, _text_width(form) + 10,
                  *(_text_width(tree.upos[i], 11) + 10 for tree in trees))
              for i, form in enumerate(trees[0].forms)]
    centres, x = [], _MARGIN
    for width in widths:
        centres.append(x + width / 2)
        x += width + _WORD_GAP
    return centres, widths, x - _WORD_GAP + _MARGIN


def _draw_tree(out, tree, centres, widths, top, *, reference=None, title=None):
    """Append one tree's elements, from ``top`` down; the tree's height."""
    levels = _levels(tree.heads)
    rise = max((lv for lv in levels if lv), default=0) * _LEVEL_HEIGHT + _ROOT_RISE
    y = top + (30 if title else 0)  # the title clear of a root label below it
    if title:
        out.append(f'<text class="title" x="{_MARGIN}" y="{top + 12}">{html.escape(title)}</text>')
    feet = y + rise + 8  # where arcs end, just above the words' boxes
    for index, (head, label, level) in enumerate(zip(tree.heads, tree.deprels, levels)):
        if head is None:
            continue
        classes = "root" if head == 0 else "arc"
        if reference is not None:
            if head != reference.heads[index]:
                classes += " wrong-head"
            elif label != reference.deprels[index]:
                classes += " wrong-label"
        x_dep = centres[index]
        out.append(f'<g class="{classes}" data-dependent="{index + 1}" data-head="{head}">')
        if head == 0:
            path = f"M{x_dep:.1f},{y + 4} V{feet}"
            label_x, label_y = x_dep, y + 2
        else:
            # the arc leaves its head a little towards the dependent, so that the
            # arcs of one head to either side do not start at one point
            x_head = centres[head - 1] + (6 if centres[head - 1] < x_dep else -6)
            height = level * _LEVEL_HEIGHT
            crest = feet - height * 4 / 3  # a cubic's control points: its crest is 3/4 of this
            path = (f"M{x_head:.1f},{feet} C{x_head:.1f},{crest:.1f} "
                    f"{x_dep:.1f},{crest:.1f} {x_dep:.1f},{feet}")
            label_x, label_y = (x_head + x_dep) / 2, feet - height + 4
        out.append(f'<path d="{path}"/>')
        out.append(f'<polygon points="{x_dep - 4:.1f},{feet - 7} {x_dep + 4:.1f},{feet - 7} '
                   f'{x_dep:.1f},{feet}"/>')
        if label:
            half = _text_width(label, 11) / 2 + 2
            out.append(f'<rect class="label-bg" x="{label_x - half:.1f}" y="{label_y - 10}" '
                       f'width="{2 * half:.1f}" height="13"/>')
            out.append(f'<text class="deprel" x="{label_x:.1f}" y="{label_y}" '
                       f'text-anchor="middle">{html.escape(label)}</text>')
        out.append("</g>")
    box = feet + 2
    for index, (form, upos) in enumerate(zip(tree.forms, tree.upos)):
        x, width = centres[index], widths[index]
        out.append(f'<g class="word" data-id="{index + 1}">'
                   f'<rect x="{x - width / 2:.1f}" y="{box}" width="{width:.1f}" height="36" '
                   f'rx="4"/><text class="form" x="{x:.1f}" y="{box + 16}" '
                   f'text-anchor="middle">{html.escape(form)}</text>'
                   f'<text class="upos" x="{x:.1f}" y="{box + 30}" '
                   f'text-anchor="middle">{html.escape(upos)}</text></g>')
    bracket = box + 42
    for first, last, form in tree.tokens:
        words = range(first - 1, last)
        left = min(centres[i] - widths[i] / 2 for i in words)
        right = max(centres[i] + widths[i] / 2 for i in words)
        out.append(f'<g class="mwt" data-range="{first}-{last}"><path d="M{left:.1f},{bracket} '
                   f'V{bracket + 5} H{right:.1f} V{bracket}"/><text x="{(left + right) / 2:.1f}" '
                   f'y="{bracket + 17}" text-anchor="middle">{html.escape(form)}</text></g>')
    return box - top + _TREE_HEIGHT_BELOW + (14 if tree.tokens else 0)


def sentence_svg(sentence, *, gold=None):
    """A standalone SVG picture of one sentence's dependency tree.

    Parameters
    ----------
    sentence : ConlluSentence
        The sentence to draw (a word whose HEAD is ``_`` gets no arc).
    gold : ConlluSentence, default=None
        The same sentence's gold tree: both are drawn, gold above, and the
        predicted arcs whose head differs from gold's (class ``wrong-head``)
        or whose label does on a right head (``wrong-label``) are marked.

    Returns
    -------
    str
        An ``<svg>`` element. Each word is a ``<g class="word">``, each
        attachment a ``<g class="arc">``, each root a ``<g class="root">`` and
        each multiword token a ``<g class="mwt">``.

    Raises
    ------
    ValueError
        For a sentence without words, or a gold sentence of other words.
    """
    tree = _Tree(sentence)
    if not len(tree):
        raise ValueError("a sentence without words cannot be drawn")
    trees = [tree]
    if gold is not None:
        reference = _Tree(gold)
        if reference.forms != tree.forms:
            raise ValueError(f"the gold sentence has other words ({len(reference)}: "
                             f"{' '.join(reference.forms)[:80]!r}) than the predicted one "
                             f"({len(tree)}: {' '.join(tree.forms)[:80]!r})")
        trees = [reference, tree]
    centres, widths, width = _layout(trees)
    rtl = is_right_to_left(sentence.metadata.get("text") or " ".join(tree.forms))
    if rtl:
        centres = [width - x for x in centres]
    out, top = [], _MARGIN
    if gold is None:
        top += _draw_tree(out, tree, centres, widths, top)
    else:
        top += _draw_tree(out, trees[0], centres, widths, top, title="gold")
        top += _draw_tree(out, tree, centres, widths, top, reference=trees[0],
                          title="predicted (red: wrong head or label)")
    direction = ' direction="rtl"' if rtl else ""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="dependency-tree" '
            f'width="{width:.0f}" height="{top:.0f}" viewBox="0 0 {width:.0f} {top:.0f}"'
            f'{direction}>{_STYLE}{"".join(out)}</svg>')


def document_html(document, *, gold=None, max_sentences=None):
    """An HTML fragment: each sentence's id, text and tree (see :func:`sentence_svg`).

    Parameters
    ----------
    document : ConlluDocument
    gold : ConlluDocument, default=None
        The gold trees of the same sentences, drawn against the predicted ones.
    max_sentences : int, default=None
        Draw only the first ones and say how many more there are.
    """
    shown = len(document) if max_sentences is None else min(max_sentences, len(document))
    return _figures(document, gold, range(shown))


def _figures(document, gold, indices):
    """The HTML of the sentences ``indices`` of ``document`` (against ``gold``'s)."""
    if gold is not None and len(gold) != len(document):
        raise ValueError(f"the gold document has {len(gold)} sentences, the predicted one "
                         f"{len(document)}")
    parts = ['<div class="sklearn-structured-trees">']
    for index in indices:
        sentence = document[index]
        metadata = sentence.metadata
        heading = html.escape(metadata.get("sent_id", str(index + 1)))
        text = metadata.get("text")
        if text is not None:
            heading += f": {html.escape(text)}"
        svg = sentence_svg(sentence, gold=None if gold is None else gold[index])
        parts.append(f'<figure class="sentence"><figcaption>{heading}</figcaption>'
                     f'<div style="overflow-x:auto">{svg}</div></figure>')
    if len(indices) < len(document):
        parts.append(f"<p>{len(indices)} of {len(document)} sentences shown</p>")
    parts.append("</div>")
    return "\n".join(parts)


class Trees:
    """Sentences of a document drawn where HTML is shown (Jupyter, a docs gallery).

    Parameters
    ----------
    document : ConlluDocument
    gold : ConlluDocument, default=None
        Gold trees of the same sentences, drawn against the predicted ones.
    sentences : list of int, default=None
        The indices of the sentences to draw; None: all of them.
    """

    def __init__(self, document, *, gold=None, sentences=None):
        self.document = document
        self.gold = gold
        self.sentences = sentences

    def _repr_html_(self):
        indices = range(len(self.document)) if self.sentences is None else self.sentences
        return _figures(self.document, self.gold, indices)


def html_page(document, *, gold=None, title="Dependency trees"):
    """A whole HTML page holding :func:`document_html` of every sentence."""
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>body{{font-family:sans-serif;margin:1em}}"
            "figcaption{margin:.5em 0}figure{margin:0 0 1.5em}</style></head><body>\n"
            f"{document_html(document, gold=gold)}\n</body></html>\n")
