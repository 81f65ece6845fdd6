"""Character-level kernels of the tokeniser: context, features, perceptron, decoding.

Every character that is not white space gets one of three labels: it is
inside a token (``INSIDE``), it ends a token (``TOKEN_END``) or it ends a
token and a sentence (``SENTENCE_END``). A character followed by white space
(or by the end of the text) always ends a token, so only the sentence
decision is left there. The features of a character are hashed n-grams of
the lower-cased characters around it, the classes (case, digit,
punctuation, space) around it, and, from the white-space-delimited chunk it
stands in, what comes before and after it in that chunk, what the next
chunk starts with and whether the chunk looks like a web or e-mail address.
Where a chunk ends, sentence-level features look further: the chunk's place
in the stretch between two chunks that end in final punctuation, and whether
the next word is capitalised and known in lower case. For scripts written
without spaces, where a chunk is a whole sentence, the known tokens say where
words may end: the longest training token (seen at least twice) that ends at
a character, starts after it, or spans it and the next one. The weights are
a multiclass averaged perceptron.

Text arrives as arrays of one entry per character: ``codes`` (the
lower-cased code point), ``classes`` (see ``CLASS_*``) and, for decoding,
``joins`` (see ``JOINS_*``): a combining mark or a format character never
starts a token, whatever the weights say (see unbreakable_characters). The per-character
context is one int64 array of shape (n, ``N_CONTEXT``), columns ``CTX_*``.
"""

import numpy as np
from numba import njit

from ..kernels.hashing import feature_hash

INSIDE, TOKEN_END, SENTENCE_END = 0, 1, 2
N_LABELS = 3

CLASS_LOWER, CLASS_UPPER, CLASS_LETTER, CLASS_DIGIT = 0, 1, 2, 3
CLASS_FINAL_PUNCT, CLASS_PUNCT, CLASS_SPACE, CLASS_NEWLINE, CLASS_OUTSIDE = 4, 5, 6, 7, 8
# bits of what a character joins, whatever the model says: the character before it
# (a combining mark, a format character) and the one after it (a zero-width joiner)
JOINS_PREVIOUS, JOINS_NEXT = 1, 2

# context columns: hashes of the chunk's characters up to and after this one
# (at most PART characters each), their lengths and shapes (classes, runs
# collapsed), the first PART characters of the next chunk and its first
# class, the newlines before that chunk, the last three characters up to
# this one, the last PART characters of the previous chunk, and whether the
# chunk is a web or e-mail address (see _web_address); then, beyond the
# window, the sentence-level context (see _sentence_context): the chunk's
# place since the last chunk ending in final punctuation or a paragraph
# break, the chunks up to the next such one, the first class of the
# chunk after the next, and whether the next chunk's first word is
# capitalised and known in lower case (see lowercase_words); then the
# lengths of the longest known tokens ending at this character, starting after
# it and holding it and the next one (see known_tokens)
CTX_LEFT, CTX_RIGHT, CTX_LEFT_LEN, CTX_RIGHT_LEN = 0, 1, 2, 3
CTX_NEXT_WORD, CTX_NEXT_CLASS, CTX_NEWLINES, CTX_SUFFIX3 = 4, 5, 6, 7
CTX_LEFT_SHAPE, CTX_RIGHT_SHAPE, CTX_PREVIOUS_WORD, CTX_WEB = 8, 9, 10, 11
CTX_SINCE_FINAL, CTX_UNTIL_FINAL, CTX_NEXT2_CLASS, CTX_NEXT_CASE = 12, 13, 14, 15
CTX_KNOWN_END, CTX_KNOWN_START, CTX_KNOWN_ACROSS = 16, 17, 18
N_CONTEXT = 19
# values of CTX_NEXT_CASE
NEXT_NOT_CAPITAL, NEXT_CAPITAL_KNOWN_LOWER, NEXT_CAPITAL_UNKNOWN = 0, 1, 2
PART = 10
# known tokens: at most this many characters, seen at least this often in training
KNOWN_MAX_LENGTH, KNOWN_MIN_COUNT = 8, 2

N_TEMPLATES = 37
# models fitted before the two address templates were added score with the others only
N_TEMPLATES_WITHOUT_WEB = 26
# and those fitted before the sentence-level templates with the address ones too
N_TEMPLATES_WITHOUT_SENTENCE = 28
# and those fitted before the known-token templates with the sentence-level ones too
N_TEMPLATES_WITHOUT_KNOWN = 34


@njit(cache=True, nogil=True)
def _chunk_hash(codes, start, stop):
    h = np.int64(1469598103934665603)
    for j in range(start, stop):
        h = feature_hash(99, h, codes[j], 0, 0, 0)
    return h


@njit(cache=True, nogil=True)
def _shape_hash(classes, start, stop):
    h = np.int64(7)
    previous = -1
    for j in range(start, stop):
        if classes[j] != previous:
            h = feature_hash(98, h, classes[j], 0, 0, 0)
            previous = classes[j]
    return h


_AT, _COLON, _SLASH, _W, _DOT = ord("@"), ord(":"), ord("/"), ord("w"), ord(".")
_COMMA = ord(",")


@njit(cache=True, nogil=True)
def _web_address(codes, start, stop):
    """1 when the chunk ``codes[start:stop]`` (lower-cased) looks like an e-mail or web
    address, which treebanks keep whole however much punctuation it holds: it holds
    ``@`` or ``://``, or starts with ``www.``; else 0."""
    for j in range(start, stop):
        if codes[j] == _AT:
            return 1
        if codes[j] == _COLON and j + 2 < stop and codes[j + 1] == _SLASH and codes[j + 2] == _SLASH:
            return 1
    if (stop - start > 4 and codes[start] == _W and codes[start + 1] == _W
            and codes[start + 2] == _W and codes[start + 3] == _DOT):
        return 1
    return 0


@njit(cache=True, nogil=True)
def _bucket(count):
    """A chunk count in a few classes: exact up to 6, then ever wider ranges."""
    if count <= 6:
        return count
    return 7 + (count > 8) + (count > 11) + (count > 15) + (count > 20) + (count > 30)


@njit(cache=True, nogil=True)
def _closes(classes, start, end):
    """Whether a chunk ends in final punctuation, maybe followed by closing punctuation
    (``mortos.``, ``afirmou».``, ``(zulu).``, ``disse.»``)."""
    for j in range(end - 1, max(start, end - 3) - 1, -1):
        if classes[j] == CLASS_FINAL_PUNCT:
            return True
        if classes[j] != CLASS_PUNCT:
            return False
    return False


@njit(cache=True, nogil=True)
def _word_key(codes, classes, start, end):
    """``(key, first class)`` of the word a chunk starts with: the hash of its letters
    past any opening punctuation (``«Cheia,`` -> ``cheia``), and the class of the
    first letter (CLASS_OUTSIDE when the chunk starts with no letter)."""
    j = start
    while j < end and (classes[j] == CLASS_PUNCT or classes[j] == CLASS_FINAL_PUNCT):
        j += 1
    # the letter classes are the three lowest
    first = classes[j] if j < end and classes[j] <= CLASS_LETTER else CLASS_OUTSIDE
    key = np.int64(17)
    while j < end and classes[j] <= CLASS_LETTER:
        key = feature_hash(97, key, codes[j], 0, 0, 0)
        j += 1
    return key, first


@njit(cache=True, nogil=True)
def lowercase_words(codes, classes):
    """Sorted distinct keys (see _word_key) of the words of a text written in lower
    case: a capitalised word among them is more likely to start a sentence than a
    name is."""
    chunk_starts, chunk_ends = _chunks(classes)
    keys = np.empty(len(chunk_starts), np.int64)
    n_keys = 0
    for c in range(len(chunk_starts)):
        key, first = _word_key(codes, classes, chunk_starts[c], chunk_ends[c])
        if first == CLASS_LOWER:
            keys[n_keys] = key
            n_keys += 1
    return np.unique(keys[:n_keys])


@njit(cache=True, nogil=True)
def known_tokens(codes, classes, gold, min_count=KNOWN_MIN_COUNT):
    """Sorted distinct hashes (see _chunk_hash) of the tokens of a training text with
    its gold labels, of at most KNOWN_MAX_LENGTH characters, seen at least
    ``min_count`` times: where each is seen twice, a token seen once stands for the
    words a new text brings that training never saw."""
    spans, _ = label_spans(gold, classes)
    keys = np.empty(len(spans), np.int64)
    n_keys = 0
    for t in range(len(spans)):
        if spans[t, 1] - spans[t, 0] <= KNOWN_MAX_LENGTH:
            keys[n_keys] = _chunk_hash(codes, spans[t, 0], spans[t, 1])
            n_keys += 1
    keys = np.sort(keys[:n_keys])
    kept = np.empty(n_keys, np.int64)
    n_kept, run = 0, 0
    for k in range(n_keys):
        run = run + 1 if k > 0 and keys[k] == keys[k - 1] else 1
        if run == min_count:
            kept[n_kept] = keys[k]
            n_kept += 1
    return kept[:n_kept]


@njit(cache=True, nogil=True)
def _known(known, key):
    where = np.searchsorted(known, key)
    return where < len(known) and known[where] == key


@njit(cache=True, nogil=True)
def _known_context(codes, chunk_starts, chunk_ends, known, context):
    """Fill the known-token columns: for each span of a chunk that is a known token,
    its length at its last character, at the character before its first, and at
    every character it holds together with the next one."""
    if len(known) == 0:
        return
    for c in range(len(chunk_starts)):
        start, end = chunk_starts[c], chunk_ends[c]
        for a in range(start, end):
            key = _chunk_hash(codes, a, a)
            for b in range(a + 1, min(end, a + KNOWN_MAX_LENGTH) + 1):
                key = feature_hash(99, key, codes[b - 1], 0, 0, 0)  # _chunk_hash(codes, a, b)
                if not _known(known, key):
                    continue
                length = b - a
                last = b - 1
                context[last, CTX_KNOWN_END] = max(context[last, CTX_KNOWN_END], length)
                if a > start:
                    context[a - 1, CTX_KNOWN_START] = max(context[a - 1, CTX_KNOWN_START], length)
                for k in range(a, b - 1):
                    context[k, CTX_KNOWN_ACROSS] = max(context[k, CTX_KNOWN_ACROSS], length)


@njit(cache=True, nogil=True)
def _chunks(classes):
    """Where each chunk (a maximal run of characters that are not white space) starts
    and ends, in text order."""
    n = len(classes)
    chunk_starts = np.empty(n, np.int64)
    chunk_ends = np.empty(n, np.int64)
    m, i = 0, 0
    while i < n:
        if classes[i] == CLASS_SPACE or classes[i] == CLASS_NEWLINE:
            i += 1
            continue
        j = i
        while j < n and classes[j] != CLASS_SPACE and classes[j] != CLASS_NEWLINE:
            j += 1
        chunk_starts[m], chunk_ends[m] = i, j
        m += 1
        i = j
    return chunk_starts[:m], chunk_ends[:m]


@njit(cache=True, nogil=True)
def text_context(codes, classes, lexicon, known):
    """The (n, N_CONTEXT) context array of a text, given the sorted keys of words known
    in lower case (lowercase_words of the training text) and of the known tokens
    (known_tokens); linear in its length."""
    n = len(codes)
    context = np.zeros((n, N_CONTEXT), np.int64)
    # each character's chunk, -1 for white space
    chunk_starts, chunk_ends = _chunks(classes)
    starts = np.full(n, -1, np.int64)
    ends = np.full(n, -1, np.int64)
    for c in range(len(chunk_starts)):
        starts[chunk_starts[c]:chunk_ends[c]] = chunk_starts[c]
        ends[chunk_starts[c]:chunk_ends[c]] = chunk_ends[c]
    # walk backwards to know the next chunk and the newlines before it
    next_start = n  # where the chunk after the current one starts
    newlines = 0
    i = n - 1
    while i >= 0:
        if starts[i] < 0:
            if classes[i] == CLASS_NEWLINE:
                newlines += 1
            i -= 1
            continue
        start, end = starts[i], ends[i]
        if next_start < n:
            next_word = _chunk_hash(codes, next_start, min(ends[next_start], next_start + PART))
            next_class = classes[next_start]
        else:
            next_word = 0
            next_class = CLASS_OUTSIDE
        previous_word = 0
        if start > 0:
            j = start - 1
            while j >= 0 and starts[j] < 0:
                j -= 1
            if j >= 0:
                previous_word = _chunk_hash(codes, max(starts[j], j - PART + 1), j + 1)
        web = _web_address(codes, start, end)
        for k in range(start, end):
            context[k, CTX_WEB] = web
            context[k, CTX_PREVIOUS_WORD] = previous_word
            context[k, CTX_LEFT_SHAPE] = _shape_hash(classes, max(start, k - PART + 1), k + 1)
            context[k, CTX_RIGHT_SHAPE] = _shape_hash(classes, k + 1, min(end, k + 1 + PART))
            context[k, CTX_LEFT] = _chunk_hash(codes, max(start, k - PART + 1), k + 1)
            context[k, CTX_RIGHT] = _chunk_hash(codes, k + 1, min(end, k + 1 + PART))
            context[k, CTX_LEFT_LEN] = min(k + 1 - start, PART)
            context[k, CTX_RIGHT_LEN] = min(end - k - 1, PART)
            context[k, CTX_NEXT_WORD] = next_word
            context[k, CTX_NEXT_CLASS] = next_class
            context[k, CTX_NEWLINES] = min(newlines, 2)
            context[k, CTX_SUFFIX3] = _chunk_hash(codes, max(start, k - 2), k + 1)
        next_start = start
        newlines = 0
        i = start - 1
    _sentence_context(codes, classes, chunk_starts, chunk_ends, lexicon, context)
    _known_context(codes, chunk_starts, chunk_ends, known, context)
    return context


@njit(cache=True, nogil=True)
def _sentence_context(codes, classes, chunk_starts, chunk_ends, lexicon, context):
    """Fill the sentence-level columns, which reach past the character window: a
    headline without a full stop is short and followed by a capital; a sentence
    that runs on past a capital has been long already."""
    m = len(chunk_starts)
    # a run of chunks ends after one that closes or before a paragraph break
    run_end = np.zeros(m, np.bool_)
    for c in range(m):
        end = chunk_ends[c]
        run_end[c] = _closes(classes, chunk_starts[c], end) or c == m - 1
        if not run_end[c]:
            breaks = 0
            for j in range(end, chunk_starts[c + 1]):
                breaks += classes[j] == CLASS_NEWLINE
            run_end[c] = breaks >= 2
    since = 0
    for c in range(m):
        since += 1
        for k in range(chunk_starts[c], chunk_ends[c]):
            context[k, CTX_SINCE_FINAL] = _bucket(since)
        if run_end[c]:
            since = 0
    until = 0
    for c in range(m - 1, -1, -1):
        if run_end[c]:
            until = 0
        until += 1
        after_next = classes[chunk_starts[c + 2]] if c + 2 < m else CLASS_OUTSIDE
        case = NEXT_NOT_CAPITAL
        if c + 1 < m:
            key, first = _word_key(codes, classes, chunk_starts[c + 1], chunk_ends[c + 1])
            if first == CLASS_UPPER:
                where = np.searchsorted(lexicon, key)
                known = where < len(lexicon) and lexicon[where] == key
                case = NEXT_CAPITAL_KNOWN_LOWER if known else NEXT_CAPITAL_UNKNOWN
        for k in range(chunk_starts[c], chunk_ends[c]):
            context[k, CTX_UNTIL_FINAL] = _bucket(until)
            context[k, CTX_NEXT2_CLASS] = after_next
            context[k, CTX_NEXT_CASE] = case


@njit(cache=True, nogil=True)
def _at(array, i, outside):
    return array[i] if 0 <= i < len(array) else outside


@njit(cache=True, nogil=True)
def position_features(i, codes, classes, context, mask, out):
    """Write the weight rows of character ``i``'s features into ``out`` and return how
    many: up to N_TEMPLATES of them, or the ones a model fitted before the later
    templates knows, ``len(out)`` of them at most (N_TEMPLATES_WITHOUT_WEB,
    N_TEMPLATES_WITHOUT_SENTENCE or N_TEMPLATES_WITHOUT_KNOWN)."""
    c0 = codes[i]
    cm2, cm1 = _at(codes, i - 2, -1), _at(codes, i - 1, -1)
    c1, c2 = _at(codes, i + 1, -1), _at(codes, i + 2, -1)
    k1, k2 = _at(classes, i + 1, CLASS_OUTSIDE), _at(classes, i + 2, CLASS_OUTSIDE)
    window = 0
    for d in range(-3, 4):
        window = window * 16 + _at(classes, i + d, CLASS_OUTSIDE)
    ctx = context[i]
    left, right = ctx[CTX_LEFT], ctx[CTX_RIGHT]
    out[0] = feature_hash(0, 0, 0, 0, 0, 0) & mask
    out[1] = feature_hash(1, c0, 0, 0, 0, 0) & mask
    out[2] = feature_hash(2, c1, 0, 0, 0, 0) & mask
    out[3] = feature_hash(3, cm1, c0, 0, 0, 0) & mask
    out[4] = feature_hash(4, c0, c1, 0, 0, 0) & mask
    out[5] = feature_hash(5, c1, c2, 0, 0, 0) & mask
    out[6] = feature_hash(6, cm1, c0, c1, 0, 0) & mask
    out[7] = feature_hash(7, c0, c1, c2, 0, 0) & mask
    out[8] = feature_hash(8, cm2, cm1, c0, 0, 0) & mask
    out[9] = feature_hash(9, window, 0, 0, 0, 0) & mask
    out[10] = feature_hash(10, classes[i], k1, k2, 0, 0) & mask
    out[11] = feature_hash(11, left, 0, 0, 0, 0) & mask
    out[12] = feature_hash(12, right, 0, 0, 0, 0) & mask
    out[13] = feature_hash(13, left, right, 0, 0, 0) & mask
    out[14] = feature_hash(14, ctx[CTX_SUFFIX3], c1, k1, 0, 0) & mask
    out[15] = feature_hash(15, left, ctx[CTX_NEXT_CLASS], ctx[CTX_NEWLINES], k1, 0) & mask
    out[16] = feature_hash(16, c0, ctx[CTX_NEXT_WORD], k1, 0, 0) & mask
    out[17] = feature_hash(17, ctx[CTX_NEXT_WORD], 0, 0, 0, 0) & mask
    out[18] = feature_hash(18, classes[i], ctx[CTX_NEXT_CLASS], ctx[CTX_NEWLINES], k1, 0) & mask
    out[19] = feature_hash(19, ctx[CTX_LEFT_LEN], ctx[CTX_RIGHT_LEN], k1, classes[i], 0) & mask
    out[20] = feature_hash(20, left, c1, 0, 0, 0) & mask
    out[21] = feature_hash(21, ctx[CTX_SUFFIX3], ctx[CTX_NEXT_CLASS], ctx[CTX_NEWLINES],
                           ctx[CTX_RIGHT_LEN] == 0, 0) & mask
    out[22] = feature_hash(22, ctx[CTX_PREVIOUS_WORD], left, 0, 0, 0) & mask
    out[23] = feature_hash(23, ctx[CTX_LEFT_SHAPE], ctx[CTX_RIGHT_SHAPE], 0, 0, 0) & mask
    out[24] = feature_hash(24, ctx[CTX_LEFT_SHAPE], ctx[CTX_NEXT_CLASS], ctx[CTX_NEWLINES],
                           k1, 0) & mask
    out[25] = feature_hash(25, left, ctx[CTX_NEXT_WORD], 0, 0, 0) & mask
    if len(out) == N_TEMPLATES_WITHOUT_WEB:
        return N_TEMPLATES_WITHOUT_WEB
    km1 = _at(classes, i - 1, CLASS_OUTSIDE)
    out[26] = feature_hash(26, ctx[CTX_WEB], km1, classes[i], k1, 0) & mask
    out[27] = feature_hash(27, ctx[CTX_WEB], c0, c1, 0, 0) & mask
    if len(out) == N_TEMPLATES_WITHOUT_SENTENCE:
        return N_TEMPLATES_WITHOUT_SENTENCE
    n = N_TEMPLATES_WITHOUT_SENTENCE
    if len(out) == N_TEMPLATES:
        end, start = ctx[CTX_KNOWN_END], ctx[CTX_KNOWN_START]
        out[n] = feature_hash(34, end, start, 0, 0, 0) & mask
        out[n + 1] = feature_hash(35, ctx[CTX_KNOWN_ACROSS], end, start, 0, 0) & mask
        out[n + 2] = feature_hash(36, c0, c1, end > 0, ctx[CTX_KNOWN_ACROSS] > 0, 0) & mask
        n += 3
    if ctx[CTX_RIGHT_LEN] > 0:
        # inside a chunk the sentence-level templates say nothing: left out
        return n
    since = ctx[CTX_SINCE_FINAL]
    out[n] = feature_hash(28, since, classes[i], ctx[CTX_NEXT_CLASS], ctx[CTX_NEXT2_CLASS],
                          ctx[CTX_NEWLINES]) & mask
    out[n + 1] = feature_hash(29, since, ctx[CTX_UNTIL_FINAL], ctx[CTX_NEXT_CLASS], classes[i],
                              0) & mask
    out[n + 2] = feature_hash(30, since, ctx[CTX_NEXT_WORD], 0, 0, 0) & mask
    out[n + 3] = feature_hash(31, since, left, ctx[CTX_NEXT_CLASS], 0, 0) & mask
    out[n + 4] = feature_hash(32, since, ctx[CTX_NEXT_CASE], classes[i], ctx[CTX_NEXT2_CLASS],
                              0) & mask
    out[n + 5] = feature_hash(33, left, ctx[CTX_NEXT_CASE], 0, 0, 0) & mask
    return n + 6


@njit(cache=True, nogil=True)
def _labels_allowed(i, classes, context):
    """(lowest allowed label, forced label or -1) of character ``i``."""
    if context[i, CTX_RIGHT_LEN] > 0:
        return INSIDE, -1
    # the character ends its chunk: a token ends here; a paragraph break or
    # the end of the text ends the sentence too
    if context[i, CTX_NEWLINES] >= 2 or context[i, CTX_NEXT_CLASS] == CLASS_OUTSIDE:
        return TOKEN_END, SENTENCE_END
    return TOKEN_END, -1


@njit(cache=True, nogil=True)
def _highest_predicted(i, codes, classes):
    """TOKEN_END for a point or comma between two digits, else SENTENCE_END: no sentence
    ends inside a number (none does in the UD treebanks measured, yet a model trained on
    few decimals in Chinese text ended sentences there). Decoding only: training on the
    constrained labels changed the model's token ends elsewhere."""
    if ((codes[i] == _DOT or codes[i] == _COMMA) and 0 < i < len(codes) - 1
            and classes[i - 1] == CLASS_DIGIT and classes[i + 1] == CLASS_DIGIT):
        return TOKEN_END
    return SENTENCE_END


@njit(cache=True, nogil=True)
def _best(rows, weights, lowest, highest):
    best, best_score = lowest, -np.inf
    for label in range(lowest, highest + 1):
        score = 0.0
        for r in rows:
            score += weights[r, label]
        if score > best_score:
            best, best_score = label, score
    return best


@njit(cache=True, nogil=True)
def perceptron_epoch(order, segments, codes, classes, context, gold, weights, sums, count,
                     mask):
    """One pass over the text segments in ``order``; returns the number of mistakes.

    ``segments`` is (n_segments, 2) character ranges; ``gold`` the labels;
    ``weights``/``sums`` (n_rows, N_LABELS) float64 and ``count`` (1,) form the
    averaged perceptron (sums get ``count * delta``). White space is skipped.
    """
    rows = np.empty(N_TEMPLATES, np.int64)
    mistakes = 0
    for s in order:
        for i in range(segments[s, 0], segments[s, 1]):
            if classes[i] == CLASS_SPACE or classes[i] == CLASS_NEWLINE:
                continue
            lowest, forced = _labels_allowed(i, classes, context)
            if forced >= 0:
                continue
            used = rows[:position_features(i, codes, classes, context, mask, rows)]
            predicted = _best(used, weights, lowest, SENTENCE_END)
            count[0] += 1.0
            if predicted != gold[i]:
                mistakes += 1
                c = count[0]
                for r in used:
                    weights[r, gold[i]] += 1.0
                    weights[r, predicted] -= 1.0
                    sums[r, gold[i]] += c
                    sums[r, predicted] -= c
    return mistakes


@njit(cache=True, nogil=True)
def unbreakable_characters(joins, classes):
    """Whether each character must stay inside its token, given ``joins`` (JOINS_* bits
    of each character): the next one, in the same chunk, belongs to it (a combining
    mark or a format character), or it joins the next one (a zero-width joiner), or
    it and all before it in its chunk belong to a character that is not there (a
    chunk that begins with a mark): they go with what follows, never a token alone."""
    n = len(classes)
    out = np.zeros(n, np.bool_)
    chunk_start, leading = True, False
    for i in range(n):
        if classes[i] == CLASS_SPACE or classes[i] == CLASS_NEWLINE:
            chunk_start = True
            continue
        leading = (joins[i] & JOINS_PREVIOUS) != 0 and (chunk_start or leading)
        chunk_start = False
        if i + 1 < n and classes[i + 1] != CLASS_SPACE and classes[i + 1] != CLASS_NEWLINE:
            out[i] = ((joins[i + 1] & JOINS_PREVIOUS) != 0 or (joins[i] & JOINS_NEXT) != 0
                      or leading)
    return out


@njit(cache=True, nogil=True)
def predict_labels(codes, classes, context, positions, weights, mask, n_templates):
    """The label of every character (white space gets INSIDE), from the first
    ``n_templates`` templates (those the weights were fitted with).

    ``positions`` gives each row of the hashed table (of ``mask + 1`` rows) its
    row in ``weights``, 0 (a row of zeros) for a row that training left at zero.
    """
    n = len(codes)
    labels = np.zeros(n, np.int8)
    rows = np.empty(n_templates, np.int64)
    for i in range(n):
        if classes[i] == CLASS_SPACE or classes[i] == CLASS_NEWLINE:
            continue
        lowest, forced = _labels_allowed(i, classes, context)
        if forced >= 0:
            labels[i] = forced
            continue
        used = rows[:position_features(i, codes, classes, context, mask, rows)]
        for j in range(len(used)):
            used[j] = positions[used[j]]
        labels[i] = _best(used, weights, lowest, _highest_predicted(i, codes, classes))
    return labels


@njit(cache=True, nogil=True)
def label_spans(labels, classes):
    """Token spans (n_tokens, 2) and the index of each sentence's last token."""
    n = len(labels)
    spans = np.empty((n, 2), np.int64)
    sentence_ends = np.empty(n, np.int64)
    n_tokens, n_sentences, start = 0, 0, -1
    for i in range(n):
        if classes[i] == CLASS_SPACE or classes[i] == CLASS_NEWLINE:
            continue
        if start < 0:
            start = i
        if labels[i] != INSIDE:
            spans[n_tokens, 0] = start
            spans[n_tokens, 1] = i + 1
            if labels[i] == SENTENCE_END:
                sentence_ends[n_sentences] = n_tokens
                n_sentences += 1
            n_tokens += 1
            start = -1
    return spans[:n_tokens], sentence_ends[:n_sentences]
