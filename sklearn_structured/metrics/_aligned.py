"""The CoNLL 2018 shared task's figures, for system files tokenised their own way.

A system that starts from raw text splits tokens, words and sentences itself,
so its words need not be gold's. The shared task (Zeman et al., 2018) scores
such output by aligning the two files on their characters: with every space
removed, both files spell the same string, and every token, word and sentence
is a span of it.

- Tokens and sentences count as found when a system span equals a gold span.
- A word outside every multiword token is aligned with the gold word of the
  same span. Where a multiword token (in either file) covers the words, the
  words of the smallest region that both files close at the same character are
  aligned by the longest common subsequence of their lower-cased forms.
- Each figure counts the aligned words that agree: precision over the system's
  words, recall over gold's, and their F1. The tree figures follow a head
  through the alignment (a system head that is not aligned is wrong). CLAS,
  MLAS and BLEX count content words only; MLAS also checks the UPOS, universal
  features and relations of the function-word children of each content word.
  Relations are compared without their subtypes, features only on the
  universal ones, and a gold lemma ``_`` accepts any lemma.

This is the library's own implementation of those rules; the shared task's
script (``conll18_ud_eval.py`` of ufal/conll2018) gives the same figures, and
where it stops at a system file without heads this one reports the tag
figures and leaves the tree figures out, and it scores a system tree with
several roots, which the script refuses.
"""

import bisect
import unicodedata
from dataclasses import dataclass, field

from ..utils import find_heads_error

# Relations of content words and of function words, as the shared task lists them.
CONTENT_RELATIONS = frozenset({
    "nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "obl", "vocative", "expl",
    "dislocated", "advcl", "advmod", "discourse", "nmod", "appos", "nummod", "acl",
    "amod", "conj", "fixed", "flat", "compound", "list", "parataxis", "orphan",
    "goeswith", "reparandum", "root", "dep",
})
FUNCTION_RELATIONS = frozenset({"aux", "cop", "mark", "det", "clf", "case", "cc"})
# Features defined by the UD guidelines themselves; others are language-specific.
UNIVERSAL_FEATURES = frozenset({
    "PronType", "NumType", "Poss", "Reflex", "Foreign", "Abbr", "Gender", "Animacy",
    "Number", "Case", "Definite", "Degree", "VerbForm", "Mood", "Tense", "Aspect",
    "Voice", "Evident", "Polarity", "Person", "Polite",
})


@dataclass(frozen=True)
class AlignedScore:
    """One figure: how many units agree, out of gold's, the system's and the aligned."""

    correct: int
    gold: int
    system: int
    aligned: int = None

    @property
    def precision(self):
        return self.correct / self.system if self.system else 0.0

    @property
    def recall(self):
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self):
        total = self.gold + self.system
        return 2 * self.correct / total if total else 0.0

    @property
    def aligned_accuracy(self):
        """Agreement among the aligned words only (None for spans)."""
        if self.aligned is None:
            return None
        return self.correct / self.aligned if self.aligned else 0.0


@dataclass(eq=False)
class _Word:
    start: int  # the span of the word, or of the multiword token it is part of
    end: int
    in_multiword: bool
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str  # universal features only, sorted
    relation: str  # without subtype
    head: object = None  # the head _Word, None for the root
    function_children: list = field(default_factory=list)

    @property
    def content(self):
        return self.relation in CONTENT_RELATIONS


class _Spelled:
    """One file as the alignment sees it: the spans of its tokens, words and sentences."""

    def __init__(self, document, name, single_root):
        self.name, self.single_root = name, single_root
        self.pieces, self.length = [], 0
        self.tokens, self.sentences, self.words = [], [], []
        self.token_lines = []  # the file line of each token (None when built in memory)
        self.has_heads = True
        for index, sentence in enumerate(document):
            self._add_sentence(document, index, sentence)
        self.characters = "".join(self.pieces)

    def _spell(self, form, sentence, row_index):
        # spaces inside a form (allowed in some treebanks) do not count; every
        # space separator is whitespace to isspace, so most forms skip the test
        letters = form
        if any(c.isspace() for c in form):
            letters = "".join(c for c in form if unicodedata.category(c) != "Zs")
        if not letters:
            line = sentence.row_line(row_index)
            raise ValueError(f"{self.name}:{line or 'a sentence built in memory'}: FORM "
                             f"{form!r} has no character other than spaces")
        start = self.length
        self.token_lines.append(sentence.row_line(row_index))
        self.pieces.append(letters)
        self.length += len(letters)
        self.tokens.append((start, self.length))
        return start, self.length

    def _add_sentence(self, document, index, sentence):
        sentence_start, first_word = self.length, len(self.words)
        range_end, span = 0, None
        heads = []
        for row_index, row in enumerate(sentence.rows):
            token_id = row[0]
            if "." in token_id:
                continue  # empty nodes are not words
            if "-" in token_id:
                span = self._spell(row[1], sentence, row_index)
                range_end = int(token_id.split("-")[1])
                continue
            in_multiword = int(token_id) <= range_end
            form = row[1]
            if not in_multiword:
                span = self._spell(form, sentence, row_index)
                form = self.pieces[-1]
            feats = "|".join(sorted(
                f for f in row[5].split("|") if f.split("=", 1)[0] in UNIVERSAL_FEATURES))
            self.words.append(_Word(span[0], span[1], in_multiword, form.lower(), row[2],
                                    row[3], row[4], feats, row[7].split(":")[0]))
            heads.append(row[6])
        self.sentences.append((sentence_start, self.length))
        if not all(h.isdigit() for h in heads):
            self.has_heads = False
            return
        heads = [int(h) for h in heads]
        error = find_heads_error(heads, single_root=self.single_root)
        if error:
            line = sentence.line or f"sentence {index + 1}"
            raise ValueError(f"{self.name}:{line}: {error}")
        words = self.words[first_word:]
        for word, head in zip(words, heads):
            if head:
                word.head = words[head - 1]
                if word.relation in FUNCTION_RELATIONS:
                    word.head.function_children.append(word)


def _matching_spans(gold, system):
    """How many spans of the two sorted lists are equal."""
    correct, g, s = 0, 0, 0
    while g < len(gold) and s < len(system):
        if gold[g][0] == system[s][0]:
            correct += gold[g][1] == system[s][1]
            g += 1
            s += 1
        elif gold[g][0] < system[s][0]:
            g += 1
        else:
            s += 1
    return correct


def _past(words, i, end):
    """Whether ``words[i]`` lies beyond a multiword region that ends at ``end``."""
    if i >= len(words):
        return True
    word = words[i]
    return word.start >= end if word.in_multiword else word.end > end


def _multiword_region(gold, system, g, s):
    """The smallest stretch of words around a multiword token that both files close
    at the same character: ``(g0, s0, g1, s1)``, the words ``gold[g0:g1]`` and
    ``system[s0:s1]``."""
    if gold[g].in_multiword:
        end = gold[g].end
        if not system[s].in_multiword and system[s].start < gold[g].start:
            s += 1
    else:
        end = system[s].end
        if not gold[g].in_multiword and gold[g].start < system[s].start:
            g += 1
    g0, s0 = g, s
    while not (_past(gold, g, end) and _past(system, s, end)):
        if g < len(gold) and (s >= len(system) or gold[g].start <= system[s].start):
            word, g = gold[g], g + 1
        else:
            word, s = system[s], s + 1
        if word.in_multiword:
            end = max(end, word.end)
    return g0, s0, g, s


def _align_by_forms(gold, system):
    """Pairs of a longest common subsequence of the words' forms, the earliest
    gold word first where there is a choice."""
    n, m = len(gold), len(system)
    # longest[i][j]: the longest common subsequence of gold[i:] and system[j:]
    longest = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            if gold[i].form == system[j].form:
                longest[i][j] = 1 + longest[i + 1][j + 1]
            else:
                longest[i][j] = max(longest[i + 1][j], longest[i][j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if gold[i].form == system[j].form:
            pairs.append((gold[i], system[j]))
            i, j = i + 1, j + 1
        elif longest[i][j] == longest[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


def _align(gold, system):
    """The aligned (gold word, system word) pairs, in order."""
    pairs, g, s = [], 0, 0
    while g < len(gold) and s < len(system):
        if gold[g].in_multiword or system[s].in_multiword:
            g0, s0, g, s = _multiword_region(gold, system, g, s)
            pairs.extend(_align_by_forms(gold[g0:g], system[s0:s]))
        elif (gold[g].start, gold[g].end) == (system[s].start, system[s].end):
            pairs.append((gold[g], system[s]))
            g, s = g + 1, s + 1
        elif gold[g].start <= system[s].start:
            g += 1
        else:
            s += 1
    return pairs


def _first_difference(gold, system):
    n = 0
    while n < min(len(gold), len(system)) and gold[n] == system[n]:
        n += 1
    return n


def _place(spelled, character):
    """``file:line`` of the token holding ``character`` (or the end of the file)."""
    index = bisect.bisect_right([start for start, _ in spelled.tokens], character) - 1
    line = spelled.token_lines[index] if 0 <= index < len(spelled.token_lines) else None
    return spelled.name if line is None else f"{spelled.name}:{line}"


def aligned_scores(gold, system, *, gold_name="gold", system_name="system"):
    """The CoNLL 2018 figures of ``system`` against ``gold``, whatever their tokenisation.

    Parameters
    ----------
    gold, system : ConlluDocument
        Documents as :func:`~sklearn_structured.datasets.read_conllu` reads
        them. Both must spell the same characters once spaces are removed.
    gold_name, system_name : str
        How error messages name the two files.

    Returns
    -------
    scores : dict
        ``"Tokens"``, ``"Sentences"``, ``"Words"``, ``"UPOS"``, ``"XPOS"``,
        ``"UFeats"``, ``"AllTags"``, ``"Lemmas"`` and, when the system file
        has heads, ``"UAS"``, ``"LAS"``, ``"CLAS"``, ``"MLAS"`` and ``"BLEX"``,
        each an :class:`AlignedScore` (``precision``, ``recall``, ``f1``,
        ``aligned_accuracy``).

    Raises
    ------
    ValueError
        When the two files spell different text (naming the first character
        that differs), a FORM is empty, a gold tree is not a tree with one
        root, or a system tree has a cycle.
    """
    gold_spelled = _Spelled(gold, gold_name, single_root=True)
    # a system tree may have several roots (scored as it is; the script refuses it)
    system_spelled = _Spelled(system, system_name, single_root=False)
    if not gold_spelled.has_heads:
        raise ValueError(f"{gold_name}: the gold file has words without a HEAD")
    a, b = gold_spelled.characters, system_spelled.characters
    if a != b:
        n = _first_difference(a, b)
        raise ValueError(
            f"{_place(gold_spelled, n)} and {_place(system_spelled, n)} spell different text "
            f"(spaces aside) from character {n}: {a[n:n + 20]!r} against {b[n:n + 20]!r}")
    pairs = _align(gold_spelled.words, system_spelled.words)
    to_gold = {id(s): g for g, s in pairs}

    # A key reads a word through ``mapped``, which takes a word of the same file
    # to the gold word it stands for: itself in gold, its aligned word (or
    # "not aligned") in the system file; a head of None is the root.
    def in_gold(word):
        return word

    def through_alignment(word):
        return None if word is None else to_gold.get(id(word), "not aligned")

    def count(key, content_only=False):
        def kept(word):
            return not content_only or word.content
        n_gold = sum(map(kept, gold_spelled.words))
        n_system = sum(map(kept, system_spelled.words))
        aligned = [(g, s) for g, s in pairs if kept(g)]
        correct = sum(key(g, g, in_gold) == key(s, g, through_alignment) for g, s in aligned)
        return AlignedScore(correct, n_gold, n_system, len(aligned))

    def lemma(word, gold_word, mapped):
        return "_" if gold_word.lemma == "_" else word.lemma

    def attachment(word, gold_word, mapped):
        return mapped(word.head), word.relation

    def morphology(word, gold_word, mapped):
        children = [(mapped(c), c.relation, c.upos, c.feats) for c in word.function_children]
        return mapped(word.head), word.relation, word.upos, word.feats, children

    def lexical(word, gold_word, mapped):
        return (*attachment(word, gold_word, mapped), lemma(word, gold_word, mapped))

    scores = {
        "Tokens": AlignedScore(_matching_spans(gold_spelled.tokens, system_spelled.tokens),
                               len(gold_spelled.tokens), len(system_spelled.tokens)),
        "Sentences": AlignedScore(
            _matching_spans(gold_spelled.sentences, system_spelled.sentences),
            len(gold_spelled.sentences), len(system_spelled.sentences)),
        "Words": AlignedScore(len(pairs), len(gold_spelled.words), len(system_spelled.words)),
        "UPOS": count(lambda w, g, mapped: w.upos),
        "XPOS": count(lambda w, g, mapped: w.xpos),
        "UFeats": count(lambda w, g, mapped: w.feats),
        "AllTags": count(lambda w, g, mapped: (w.upos, w.xpos, w.feats)),
        "Lemmas": count(lemma),
    }
    if system_spelled.has_heads:
        scores.update({
            "UAS": count(lambda w, g, mapped: mapped(w.head)),
            "LAS": count(attachment),
            "CLAS": count(attachment, content_only=True),
            "MLAS": count(morphology, content_only=True),
            "BLEX": count(lexical, content_only=True),
        })
    return scores
