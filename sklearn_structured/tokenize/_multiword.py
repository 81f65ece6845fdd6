"""Which tokens are multiword tokens, and the words they stand for.

A token form seen in training is expanded as it was most often there (``do``
-> ``de o``, or left whole where it was mostly a word of its own). An unseen
form is expanded by a suffix rule learned from the training tokens: an edit
script says how many characters to cut from the end of the token, what to
put in their place to make the first word, and which words follow (``-lo``:
cut 4 from ``fazê-lo``, add ``er`` -> ``fazer``, then ``o``). A suffix's rule
is used when the distinct training forms with that suffix took it at least
half of the time and often enough; the longest such suffix wins. A form is
looked up as written first (``Nessa`` the name, ``nessa`` the contraction),
then lower-cased, and the case of the token is given back to its words.
"""

from collections import Counter, defaultdict

MAX_SUFFIX = 7


def _script(token, words):
    """The edit script turning ``token`` into ``words`` (all lower-cased)."""
    first = words[0]
    keep = 0
    while keep < min(len(token), len(first)) and token[keep] == first[keep]:
        keep += 1
    return len(token) - keep, first[keep:], tuple(words[1:])


def _apply(token, script):
    cut, added, rest = script
    return (token[:len(token) - cut] + added, *rest)


def _with_case(token, words):
    """``words`` (lower-cased) in the case of ``token``: its own characters where the words
    spell it (``L/C's`` -> ``L/C 's``), else all capitals, a capital first, or as is."""
    lower = token.lower()
    if len(lower) == len(token) and "".join(words) == lower:
        ends = [0]
        for word in words:
            ends.append(ends[-1] + len(word))
        return tuple(token[start:end] for start, end in zip(ends, ends[1:]))
    if len(token) > 1 and token.isupper():
        return tuple(w.upper() for w in words)
    if token[:1].isupper():
        return (words[0][:1].upper() + words[0][1:], *words[1:])
    return words


def _majority(counts):
    return {form: expansions.most_common(1)[0][0] for form, expansions in counts.items()}


def learn_expansions(tokens, min_count=3):
    """What :func:`expand` reads, learned from ``(form, words)`` pairs.

    A plain token's words are ``(form,)``. Returns ``(known, rules)``:
    ``known`` maps training forms, as written and lower-cased, to the words
    they most often stood for (an empty tuple where it was mostly a plain
    token), leaving out those the fallback expands alike (see :func:`expand`);
    ``rules`` maps a suffix to an edit script ``(cut, added, following
    words)``. A suffix's rule is learned from the distinct
    lower-cased forms with that suffix: kept when at least ``min_count`` of
    them took it and they are at least half of those forms. Only scripts
    that keep two characters or more of the token count towards a rule, so
    short closed-class forms (``pela`` -> ``por a``) make no rule for
    ``janela``.
    """
    as_written, lowered = defaultdict(Counter), defaultdict(Counter)
    for form, words in tokens:
        words = tuple(w.lower() for w in words) if len(words) > 1 else ()
        as_written[form][words] += 1
        lowered[form.lower()][words] += 1
    known = {"written": _majority(as_written), "lower": _majority(lowered)}
    by_suffix = defaultdict(Counter)
    for form, words in known["lower"].items():
        script = _script(form, words) if words else None
        if script is not None and len(form) - script[0] < 2:
            continue
        shortest = 1 if script is None else max(1, script[0])
        for length in range(shortest, min(MAX_SUFFIX, len(form) - 1) + 1):
            by_suffix[form[-length:]][script] += 1
    rules = {}
    for suffix, scripts in by_suffix.items():
        script, n = scripts.most_common(1)[0]
        if script is not None and n >= min_count and 2 * n >= sum(scripts.values()):
            rules[suffix] = script
    # keep only the forms the fallback would get wrong: a written form whose
    # lower-cased entry gives the same words, and a lower-cased form the rules
    # expand alike (mostly a plain word that no rule touches), add nothing but
    # load time (37,000 forms of EWT, a second of every parse)
    written, lowered = known["written"], known["lower"]
    known = {"written": {f: w for f, w in written.items() if w != lowered[f.lower()]},
             "lower": {f: w for f, w in lowered.items() if w != _by_rules(f, rules)}}
    return known, rules


def _by_rules(lower, rules):
    """The words the longest suffix with a rule makes of the lower-cased token
    ``lower``, or an empty tuple when no rule applies."""
    for length in range(min(MAX_SUFFIX, len(lower) - 1), 0, -1):
        script = rules.get(lower[-length:])
        if script is not None and script[0] < len(lower):
            return _apply(lower, script)
    return ()


def expand(form, known, rules):
    """The words of the token ``form`` (``(form,)`` for a plain token): as the
    form was written in training, else as its lower-cased form, else by the
    longest suffix with a rule."""
    words = known["written"].get(form)
    if words is None:
        lower = form.lower()
        words = known["lower"].get(lower)
        if words is None:
            words = _by_rules(lower, rules)
    return _with_case(form, words) if words else (form,)
