"""Lemmas as edit scripts: the tag a lemmatising tagger predicts for a word.

A script turns a form into its lemma in two parts:

- a case rule: ``k`` edits the form as it is; ``l`` edits the lower-cased
  form; ``t`` edits the lower-cased form and then upper-cases the first
  letter of the result;
- a string edit around the longest common substring of the (possibly
  lower-cased) form and the lemma: cut ``cut_start`` characters at the start
  and ``cut_end`` at the end, then prepend ``add_start`` and append
  ``add_end``.

So "Dogs" -> "dog" is ``l``, cut 1 at the end; "better" -> "good" (nothing in
common) cuts the whole form and adds the lemma, a script that only this word
uses. Scripts are written as strings ``"<case>:<cut_start>:<cut_end>:<n>:<add_start><add_end>"``
where ``n`` is the length of ``add_start``; the numbers never hold a colon,
so the string decodes unambiguously whatever the added text holds.

The case rule tried first is ``l`` when the lemma is lower-case, ``t`` when
only its first letter is upper-case, and ``k`` otherwise or when the first
choice does not reproduce the lemma; ``k`` always does, so every (form,
lemma) pair has a script.
"""

from collections import Counter, defaultdict

import numpy as np


def _longest_common_substring(a, b):
    """(start in a, start in b, length) of the longest common substring.

    Ties go to the earliest start in ``a``, then in ``b``; no common
    character gives length 0 at (0, 0).
    """
    best = (0, 0, 0)
    previous = [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        current = [0] * (len(b) + 1)
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                length = previous[j - 1] + 1
                current[j] = length
                start_a, start_b = i - length, j - length
                if (length > best[2] or (length == best[2]
                                         and (start_a, start_b) < (best[0], best[1]))):
                    best = (start_a, start_b, length)
        previous = current
    return best


def _string_edit(source, target):
    i, j, length = _longest_common_substring(source, target)
    return i, len(source) - i - length, target[:j], target[j + length:]


def _format(case, cut_start, cut_end, add_start, add_end):
    return f"{case}:{cut_start}:{cut_end}:{len(add_start)}:{add_start}{add_end}"


def _parse(script):
    case, cut_start, cut_end, n, added = script.split(":", 4)
    n = int(n)
    return case, int(cut_start), int(cut_end), added[:n], added[n:]


def _candidate_cases(lemma):
    if lemma == lemma.lower():
        return ("l", "k")
    if lemma[:1].isupper() and lemma[1:] == lemma[1:].lower():
        return ("t", "k")
    return ("k",)


def encode_script(form, lemma):
    """The edit script turning ``form`` into ``lemma`` (a string, see the module doc)."""
    for case in _candidate_cases(lemma):
        source = form if case == "k" else form.lower()
        target = lemma if case == "k" else lemma.lower()
        script = _format(case, *_string_edit(source, target))
        if case == "k" or apply_script(form, script) == lemma:
            return script
    raise AssertionError("unreachable: the 'k' rule reproduces any lemma")


def apply_script(form, script):
    """The lemma ``script`` gives for ``form``; the form itself when the script does not
    fit it (cuts more characters than the form has, or leaves an empty lemma)."""
    case, cut_start, cut_end, add_start, add_end = _parse(script)
    source = form if case == "k" else form.lower()
    if cut_start + cut_end > len(source):
        return form
    lemma = add_start + source[cut_start:len(source) - cut_end] + add_end
    if case == "t":
        lemma = lemma[:1].upper() + lemma[1:]
    return lemma or form


def script_applies(form, script):
    """Whether ``script`` fits ``form`` (cuts no more characters than it has)."""
    case, cut_start, cut_end, _, _ = _parse(script)
    return cut_start + cut_end <= len(form if case == "k" else form.lower())


def lemma_dictionary(forms, lemmas):
    """Each form's most frequent lemma (ties: the one seen first), as two aligned arrays
    of str sorted by form, so that a model stores it as plain arrays."""
    counts = defaultdict(Counter)
    for form, lemma in zip(forms, lemmas):
        counts[form][lemma] += 1
    keys = sorted(counts)
    values = [counts[k].most_common(1)[0][0] for k in keys]
    return np.array(keys, dtype=str), np.array(values, dtype=str)
