"""The tokeniser and sentence splitter: raw text to sentences of tokens and words."""

import re
import unicodedata
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from ..annotation import Annotator
from ..datasets import ConlluDocument, ConlluSentence
from ..fields import FORM
from ..registry import TOKENIZER
from ..datasets._base import gc_paused
from ..utils import (
    EARLY_STOPPING_CONSTRAINTS,
    EpochResult,
    EpochTrainer,
    perceptron_state,
    prediction_weights,
    split_validation,
)
from ..utils._base import (FormatVersionMixin, StructuredInputMixin, check_fitted,
                           check_power_of_two)
from ..utils._compat import Interval, StrOptions, _fit_context
from ._kernels import (
    CLASS_DIGIT,
    CLASS_FINAL_PUNCT,
    CLASS_LETTER,
    CLASS_LOWER,
    CLASS_NEWLINE,
    CLASS_PUNCT,
    CLASS_SPACE,
    CLASS_UPPER,
    INSIDE,
    JOINS_NEXT,
    JOINS_PREVIOUS,
    N_LABELS,
    N_TEMPLATES,
    N_TEMPLATES_WITHOUT_WEB,
    SENTENCE_END,
    TOKEN_END,
    known_tokens,
    label_spans,
    lowercase_words,
    perceptron_epoch,
    predict_labels,
    text_context,
    unbreakable_characters,
)
from ._multiword import expand, learn_expansions
from ._text import PARAGRAPH_BREAK, Token, segmented_text

# characters that end a sentence in some script (a class of their own)
_FINAL_PUNCTUATION = frozenset(".!?…。！？｡؟।॥።")

# the share of training token boundaries joining two letters with no space above which
# the known-token features are used: about two in three in Chinese and Japanese text,
# at most 0.04% in the spaced treebanks measured
UNSPACED_SHARE = 0.01

# combining marks (Mn, Mc, Me) and format characters (Cf)
_JOINING_CATEGORIES = frozenset({"Mn", "Mc", "Me", "Cf"})
_ZERO_WIDTH_JOINER = "\u200d"

# A web address: a scheme and "://", or "www.", not inside a word, up to white space.
_WEB_ADDRESS = re.compile(r"(?<![\w.@/-])(?P<prefix>[a-z][a-z0-9+.-]*://|www\.)\S+",
                          re.IGNORECASE)
# what usually follows an address in running text rather than belongs to it
_AFTER_ADDRESS = frozenset(".,;:!?'\"”’»)]}>")
_OPENING_BRACKET = {")": "(", "]": "[", "}": "{"}


def _web_address_spans(text):
    """``(start, end)`` of each web address of ``text``, without the punctuation that
    follows it in running text (a closing bracket stays when the address opened it)."""
    for match in _WEB_ADDRESS.finditer(text):
        start, end = match.span()
        while end > start and text[end - 1] in _AFTER_ADDRESS:
            closing = text[end - 1]
            opening = _OPENING_BRACKET.get(closing)
            address = text[start:end]
            if opening and address.count(opening) >= address.count(closing):
                break
            end -= 1
        if end > match.end("prefix"):
            yield start, end


def _keep_web_addresses(text, labels):
    """Make every web address one token: the treebanks keep them whole, and the model,
    which has seen few, may split one at a hyphen or a slash. A sentence end the model
    put inside an address moves to its end."""
    for start, end in _web_address_spans(text):
        inner = labels[start:end]
        last = SENTENCE_END if (inner == SENTENCE_END).any() else max(inner[-1], TOKEN_END)
        inner[:] = INSIDE
        inner[-1] = last
        if start > 0 and labels[start - 1] == INSIDE and not text[start - 1].isspace():
            labels[start - 1] = TOKEN_END


def _character_class(char):
    if char == "\n":
        return CLASS_NEWLINE
    if char.isspace():
        return CLASS_SPACE
    if char in _FINAL_PUNCTUATION:
        return CLASS_FINAL_PUNCT
    if char.isupper():
        return CLASS_UPPER
    if char.islower():
        return CLASS_LOWER
    if char.isalpha():
        return CLASS_LETTER
    if char.isdigit() or unicodedata.category(char).startswith("N"):
        return CLASS_DIGIT
    return CLASS_PUNCT


def _joins(char):
    """The JOINS_* bits of a character: a combining mark or a format character (ZWJ and
    ZWNJ, bidi controls, U+FEFF, ...) belongs to the character before it, and a
    zero-width joiner also to the one after it (an emoji sequence)."""
    if unicodedata.category(char) not in _JOINING_CATEGORIES:
        return 0
    return JOINS_PREVIOUS | (JOINS_NEXT if char == _ZERO_WIDTH_JOINER else 0)


def encode_text(text):
    """``(codes, classes, joins)``: the lower-cased code point, the class and the JOINS_*
    bits of each character."""
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    distinct, inverse = np.unique(points, return_inverse=True)
    lowered = np.empty(len(distinct), np.int64)
    classes = np.empty(len(distinct), np.int8)
    joins = np.empty(len(distinct), np.int8)
    for k, point in enumerate(distinct):
        char = chr(point)
        lower = char.lower()
        lowered[k] = ord(lower) if len(lower) == 1 else point
        classes[k] = _character_class(char)
        joins[k] = _joins(char)
    return lowered[inverse], classes[inverse], joins[inverse]


def _gold_labels(segmented, classes):
    labels = np.zeros(len(segmented.text), np.int8)
    for sentence in segmented.sentences:
        for token in sentence:
            labels[token.end - 1] = TOKEN_END
        labels[sentence[-1].end - 1] = SENTENCE_END
    # a form with spaces inside is split at them: white space always ends a token
    spaces = (classes == CLASS_SPACE) | (classes == CLASS_NEWLINE)
    before_space = np.zeros(len(labels), bool)
    before_space[:-1] = spaces[1:] & ~spaces[:-1]
    labels[before_space & (labels == INSIDE)] = TOKEN_END
    return labels


def _unspaced_share(classes, gold):
    """The share of the tokens of a training text (its gold labels) that end in a letter
    directly followed by a letter: the sign of a script without spaces between words."""
    ends = np.flatnonzero(gold[:-1] != INSIDE)
    if not len(ends):
        return 0.0
    letters = np.isin(classes, (CLASS_LOWER, CLASS_UPPER, CLASS_LETTER))
    return float(np.mean(letters[ends] & letters[ends + 1]))


def _span_f1(gold, predicted):
    gold, predicted = set(gold), set(predicted)
    total = len(gold) + len(predicted)
    return 2 * len(gold & predicted) / total if total else 1.0


class _Text:
    """One text as the kernels see it: its characters, then (``with_context``) the
    context the features read, given what training knows."""

    def __init__(self, text):
        self.text = text
        self.codes, self.classes, self.joins = encode_text(text)

    def with_context(self, lexicon, known):
        """Give the text its context from the words known in lower case and the known
        tokens (see lowercase_words, known_tokens)."""
        self.context = text_context(self.codes, self.classes, lexicon, known)
        return self


class _TokenizerEpochs(EpochTrainer):
    """Perceptron epochs over the training text, paragraphs in a fresh order each."""

    def __init__(self, estimator, training, gold, segments, rng):
        self.estimator, self.training, self.gold = estimator, training, gold
        self.segments, self.rng = segments, rng
        self.state = estimator.training_state_
        # the characters the perceptron labels: all but white space
        self.n_labelled = max(int(np.count_nonzero(
            (training.classes != CLASS_SPACE) & (training.classes != CLASS_NEWLINE))), 1)

    def train_epoch(self):
        est, text, state = self.estimator, self.training, self.state
        order = self.rng.permutation(len(self.segments))
        mistakes = perceptron_epoch(order, self.segments, text.codes, text.classes,
                                    text.context, self.gold, state["weights"]["W"],
                                    state["sums"]["W"], state["count"], est.n_features - 1)
        est._store_prediction_weights()
        return EpochResult(f"epoch {len(est.history_) + 1}", mistakes / self.n_labelled,
                           (("mistakes", mistakes),))

    def validation_score(self, validation):
        """``score`` of the validation documents, segmented once before the epochs."""
        return self.estimator._score_segmented(validation)

    def snapshot(self):
        # fresh arrays after every epoch (_store_prediction_weights), never changed
        return self.estimator.kept_rows_, self.estimator.kept_weights_

    def restore(self, snapshot):
        self.estimator.kept_rows_, self.estimator.kept_weights_ = snapshot


class Tokenizer(Annotator, StructuredInputMixin, FormatVersionMixin, BaseEstimator):
    """Splits raw text into sentences, tokens and syntactic words, learned from a UD treebank.

    Every character that is not white space is labelled by a multiclass
    averaged perceptron over hashed character n-grams, the
    white-space-delimited chunk around it and, where a chunk ends, the
    stretch of text since the last final punctuation and the case of the
    next word: inside a token, end of a token, or
    end of a token and a sentence. White space always ends a token, and a
    blank line (a paragraph break) or the end of the text always ends a
    sentence. Multiword tokens are then expanded into their words: a form
    seen in training as it was most often there, an unseen one by the
    suffix rules learned from the training tokens (edit scripts).

    The training text is read from the documents' ``# text`` comments and
    ``SpaceAfter=No`` (see :func:`segmented_text`); a sentence without
    ``# text`` is rebuilt from its FORMs.

    Parameters
    ----------
    n_epochs : int, default=8
        Perceptron passes over the training text.
    n_features : int, default=2**22
        Rows of the hashed weight table (a power of two). Few rows are ever
        updated (about 60,000 on EWT), but a feature unseen in training
        adds the weights of any trained feature that shares its row: a
        larger table lowers that noise (see the user guide). It costs memory
        in training only (24 bytes a row): the fitted model keeps the
        updated rows.
    multiword_min_count : int, default=3
        Training tokens a suffix rule for unseen multiword tokens needs.
    expand_multiword : bool, default=True
        Split multiword tokens into their words; False keeps every token one word.
    known_token_features : "auto" or bool, default="auto"
        Whether each decision also reads the training tokens around the
        character (see ``known_tokens_``). They find word boundaries where a
        script has no spaces between words, and elsewhere mislead the model
        into splitting chunks at a known prefix ("Super-Brugsen" after
        "Super"), most on small training sets. ``"auto"`` uses them when at
        least 1% of the training text's token boundaries join two letters
        with no space between them (two in three in the Chinese and Japanese
        treebanks, at most 0.04% in the others measured).
    n_iter_no_change : int or None, default=None
        With validation data, keep the epoch with the best validation score
        and stop after this many epochs without a better one.
    validation_fraction : float or None, default=None
        Hold out this fraction of the training documents as validation data.
    random_state : int, RandomState instance or None, default=None
        Seeds the ``validation_fraction`` split and the order of the
        paragraphs in every epoch, through one generator per ``fit`` call.
    verbose : int, default=0
        One progress line per epoch on standard error.

    Attributes
    ----------
    kept_rows_ : ndarray of shape (n_kept,), int64
        The rows of the hashed table (sorted) whose averaged perceptron
        weights are not all zero.
    kept_weights_ : ndarray of shape (n_kept + 1, 3), float32
        Their weights, one row later; row 0 (zeros) stands for every other
        row. Models saved before this compact form hold the whole table as
        ``weights_``, compacted when they first predict.
    n_templates_ : int
        The feature templates the weights were fitted with; models fitted
        before the web-address templates lack the attribute and use the 26
        they had (those fitted before the sentence-level templates have 28,
        those before the known-token templates 34).
    lowercase_words_ : ndarray of int64
        Sorted hashes of the words the training text has in lower case: a
        capitalised one of them after a chunk is a hint of a sentence start.
        Models fitted before the sentence-level templates lack it.
    known_tokens_ : ndarray of int64
        Sorted hashes of the training tokens of at most 8 characters: where
        a text has no spaces between words, the longest known token ending
        or starting at a character hints at a boundary. Empty when the
        known-token features are off. Models fitted before the known-token
        templates lack it.
    known_token_features_ : bool
        Whether the known-token features are used (``known_token_features``
        resolved on the training text). Models fitted before the choice lack
        it and read the known tokens they hold.
    expansions_ : dict
        Training forms, as written (``"written"``) and lower-cased
        (``"lower"``), to the words they stood for (an empty tuple for a
        plain token): only those that the lower-cased entry, or else the
        suffix rules, would expand otherwise.
    expansion_rules_ : dict
        Suffix to edit script ``(cut, added, following words)``.
    history_ : list of dict
        One record per epoch (see the user guide's training page).
    n_rebuilt_sentences_ : int
        Training sentences whose text was rebuilt from FORM and SpaceAfter.
    """

    _parameter_constraints = {
        "n_epochs": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 2**10, 2**26, closed="both")],
        "multiword_min_count": [Interval(Integral, 1, None, closed="left")],
        "expand_multiword": ["boolean"],
        "known_token_features": [StrOptions({"auto"}), "boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        **EARLY_STOPPING_CONSTRAINTS,
    }

    def __init__(self, *, n_epochs=8, n_features=2**22, multiword_min_count=3, expand_multiword=True,
                 known_token_features="auto", n_iter_no_change=None, validation_fraction=None,
                 random_state=None, verbose=0):
        self.n_epochs = n_epochs
        self.n_features = n_features
        self.multiword_min_count = multiword_min_count
        self.expand_multiword = expand_multiword
        self.known_token_features = known_token_features
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.verbose = verbose

    _requires_y = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        return tags

    def __setstate__(self, state):
        # pickles made before the choice read the known tokens they hold, whatever the script
        super().__setstate__({"known_token_features": True, **state})

    def _store_prediction_weights(self):
        self.kept_rows_, self.kept_weights_ = _kept_rows(
            prediction_weights(self.training_state_, "W"))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, X_val=None, y_val=None):
        """Learn from CoNLL-U documents.

        Parameters
        ----------
        X : list of ConlluDocument
            Training documents (:func:`~sklearn_structured.datasets.read_conllu`).
        y : None
            Ignored: the segmentation is read from the documents.
        X_val : list of ConlluDocument, default=None
            Validation documents, scored after every epoch (see ``score``).
        y_val : None
            Ignored.

        Returns
        -------
        self
        """
        check_power_of_two(self, "n_features")
        rng = check_random_state(self.random_state)
        X, _, X_val = split_validation(self, _documents(X, "X"), None, X_val, None, rng=rng,
                                       supervised=False)
        segmented = [segmented_text(doc) for doc in X]
        self.n_rebuilt_sentences_ = sum(s.rebuilt for s in segmented)
        text = PARAGRAPH_BREAK.join(s.text for s in segmented)
        training = _Text(text)
        gold = np.zeros(len(text), np.int8)
        offset, paragraphs = 0, []
        for s in segmented:
            gold[offset:offset + len(s.text)] = _gold_labels(s, training.classes[offset:offset + len(s.text)])
            start = offset
            for piece in s.text.split(PARAGRAPH_BREAK):
                paragraphs.append((start, start + len(piece)))
                start += len(piece) + len(PARAGRAPH_BREAK)
            offset += len(s.text) + len(PARAGRAPH_BREAK)
        self.lowercase_words_ = lowercase_words(training.codes, training.classes)
        self.known_token_features_ = (_unspaced_share(training.classes, gold) >= UNSPACED_SHARE
                                      if self.known_token_features == "auto"
                                      else self.known_token_features)
        if self.known_token_features_:
            self.known_tokens_ = known_tokens(training.codes, training.classes, gold, 1)
            training_known = known_tokens(training.codes, training.classes, gold)
        else:
            self.known_tokens_ = training_known = np.zeros(0, np.int64)
        training.with_context(self.lowercase_words_, training_known)
        self.expansions_, self.expansion_rules_ = learn_expansions(
            ((t.form, t.words) for s in segmented for sentence in s.sentences for t in sentence),
            self.multiword_min_count)
        self.training_state_ = perceptron_state({"W": np.zeros((self.n_features, N_LABELS))})
        self._store_prediction_weights()
        self.n_templates_ = N_TEMPLATES
        self.history_ = []
        validation = (None if X_val is None
                      else [segmented_text(doc) for doc in _documents(X_val, "X_val")])
        trainer = _TokenizerEpochs(self, training, gold, np.array(paragraphs, np.int64), rng)
        trainer.history = self.history_
        trainer.run(self.n_epochs, name=type(self).__name__, verbose=self.verbose,
                    validation=validation, patience=self.n_iter_no_change)
        del self.training_state_
        return self

    def _segment(self, text, presegmented=False):
        """Token spans (n, 2) and the index of the last token of every sentence."""
        # models saved before the sentence-level or known-token templates lack what they read
        none = np.zeros(0, np.int64)
        encoded = _Text(text).with_context(getattr(self, "lowercase_words_", none),
                                           getattr(self, "known_tokens_", none))
        # models saved before the web-address templates carry no n_templates_
        n_templates = getattr(self, "n_templates_", N_TEMPLATES_WITHOUT_WEB)
        if not hasattr(self, "kept_rows_"):  # saved before the compact form
            self.kept_rows_, self.kept_weights_ = _kept_rows(self.weights_)
        labels = predict_labels(encoded.codes, encoded.classes, encoded.context,
                                self._row_positions(), self.kept_weights_,
                                self.n_features - 1, n_templates)
        _keep_web_addresses(text, labels)
        # each character is labelled on its own: the constraint applies afterwards, and
        # to the ends that keeping a web address whole would make, too
        labels[unbreakable_characters(encoded.joins, encoded.classes)] = INSIDE
        spans, last_tokens = label_spans(labels, encoded.classes)
        if presegmented and len(spans):
            # a sentence is a line: it ends at the last token before each line break
            line = np.searchsorted(np.flatnonzero(encoded.classes == CLASS_NEWLINE), spans[:, 0])
            last_tokens = np.append(np.flatnonzero(np.diff(line)), len(spans) - 1)
        return spans, last_tokens

    def _row_positions(self):
        """Each row of the hashed table's row in ``kept_weights_`` (0: none), made once
        per fitted model (16 MB for 2**22 rows, where the table was 50 MB): indexing it
        reads as fast as the whole table did, where searching ``kept_rows_`` took a
        third longer."""
        def make():
            positions = np.zeros(self.n_features, np.int32)
            positions[self.kept_rows_] = np.arange(1, len(self.kept_rows_) + 1, dtype=np.int32)
            return positions

        return self._cached("row_positions", self.kept_rows_, make)

    def _words(self, form):
        if not self.expand_multiword:
            return (form,)
        return tuple(expand(form, self.expansions_, self.expansion_rules_))

    def predict(self, X, *, presegmented=False):
        """Split each raw text into sentences of tokens.

        Parameters
        ----------
        X : list of str
            Raw texts (paragraphs separated by blank lines).
        presegmented : bool, default=False
            Each line is one sentence: split the lines into tokens only.

        Returns
        -------
        sentences : list of list of list of Token
            For each text, its sentences; for each sentence its tokens
            (:class:`Token`: ``form``, ``start``, ``end`` offsets into the
            text, and ``words``, several for a multiword token).
        """
        check_fitted(self, ["kept_weights_", "weights_"], all_or_any=any)
        out = []
        for text in _texts(X):
            spans, last_tokens = self._segment(text, presegmented)
            words = {}  # the words of each distinct form, looked up once per text
            tokens = []
            # a Token per token and no reference cycles: the collector's scans of a
            # large process would otherwise take a third of the time on some calls
            with gc_paused():
                for start, end in spans.tolist():
                    form = text[start:end]
                    if form not in words:
                        words[form] = self._words(form)
                    tokens.append(Token(form, start, end, words[form]))
                bounds = [0, *(last_tokens + 1).tolist()]
                out.append([tokens[a:b] for a, b in zip(bounds, bounds[1:])])
        return out

    role, reads, writes = TOKENIZER, (), (FORM,)

    def annotate(self, document):
        """The CoNLL-U document of a raw text (a str): its sentences, tokens and words,
        the words not yet annotated (see :func:`to_document`)."""
        return to_document(document, self.predict([document])[0])

    def score(self, X, y=None):
        """The mean of the token and sentence F1 on documents' raw text.

        Tokens and sentences count as found when their character spans match
        gold's exactly (the CoNLL 2018 Tokens and Sentences figures).
        """
        check_fitted(self, ["kept_weights_", "weights_"], all_or_any=any)
        return self._score_segmented([segmented_text(doc) for doc in _documents(X, "X")])

    def _score_segmented(self, documents):
        """``score`` of documents already turned into :class:`SegmentedText`."""
        gold_tokens, gold_sentences, tokens, sentences = [], [], [], []
        for index, segmented in enumerate(documents):
            spans, last_tokens = self._segment(segmented.text)
            tokens += [(index, start, end) for start, end in spans.tolist()]
            first_tokens = [0, *(last_tokens[:-1] + 1).tolist()]
            sentences += [(index, int(spans[a, 0]), int(spans[b, 1]))
                          for a, b in zip(first_tokens, last_tokens.tolist())]
            gold_tokens += [(index, t.start, t.end) for s in segmented.sentences for t in s]
            gold_sentences += [(index, s[0].start, s[-1].end) for s in segmented.sentences]
        return (_span_f1(gold_tokens, tokens) + _span_f1(gold_sentences, sentences)) / 2


def _kept_rows(weights):
    """(the rows of a hashed weight table that are not all zero, their weights one row
    later below a row of zeros): what predicting reads, under a megabyte where the
    table (``n_features`` rows) is 50 MB that every process paid to allocate and load."""
    rows = np.flatnonzero(weights.any(axis=1))
    kept = np.zeros((len(rows) + 1, weights.shape[1]), np.float32)
    kept[1:] = weights[rows]
    return rows.astype(np.int64), kept


def _documents(X, name):
    if isinstance(X, ConlluDocument) or not isinstance(X, (list, tuple)):
        raise ValueError(f"{name} must be a list of CoNLL-U documents (read_conllu), "
                         f"got {type(X).__name__}")
    for i, doc in enumerate(X):
        if not isinstance(doc, ConlluDocument):
            raise ValueError(f"{name}[{i}] is a {type(doc).__name__}, not a CoNLL-U document "
                             "(read it with sklearn_structured.datasets.read_conllu)")
    return list(X)


def _texts(X):
    if isinstance(X, str) or not isinstance(X, (list, tuple)):
        raise ValueError(f"X must be a list of raw texts (str), got {type(X).__name__}")
    for i, text in enumerate(X):
        if not isinstance(text, str):
            raise ValueError(f"X[{i}] is a {type(text).__name__}, not a raw text (str)")
    return X


def to_document(text, sentences, *, sent_id_prefix="", first_id=1, start=0, newdoc=True,
                token_ranges=False):
    """A ConlluDocument of predicted sentences of ``text`` (words unannotated).

    Every sentence gets ``# sent_id`` and ``# text`` (its text with each run
    of white space as one space), multiword tokens their range line and
    words, and a token directly followed by the next one ``SpaceAfter=No``;
    ``# newpar`` marks each sentence that starts the document or follows a
    blank line.

    Parameters
    ----------
    text : str
        The raw text.
    sentences : list of list of Token
        Its sentences, as :meth:`Tokenizer.predict` returns them for it.
    sent_id_prefix : str, default=""
        Put before each sentence's number in ``# sent_id``.
    first_id : int, default=1
        The number of the first sentence.
    start : int, default=0
        Where ``text`` begins in the whole input, in characters: added to
        the offsets written by ``token_ranges``.
    newdoc : bool, default=True
        ``text`` begins a document: ``# newdoc`` and ``# newpar`` before its
        first sentence. False: it continues one, and its first sentence
        starts a paragraph only when ``text`` begins with a blank line
        (a line break before it and one ending it).
    token_ranges : bool, default=False
        Add ``TokenRange=start:end`` (UDPipe's character offsets, end
        excluded) to the MISC of every token, and of every word of a
        multiword token (the range of its token).
    """
    out = []
    with gc_paused():  # rows of small lists, as in predict
        tokens = [token for sentence in sentences for token in sentence]
        following = {id(a): b.start for a, b in zip(tokens, tokens[1:])}
        previous_end = 0
        for number, sentence in enumerate(sentences, start=first_id):
            comments = ["# newdoc"] if newdoc and not out else []
            if comments or text.count("\n", previous_end, sentence[0].start) >= 2:
                comments.append("# newpar")
            sentence_text = " ".join(text[sentence[0].start:sentence[-1].end].split())
            comments += [f"# sent_id = {sent_id_prefix}{number}", f"# text = {sentence_text}"]
            rows, n = [], 0
            for token in sentence:
                span = (f"TokenRange={start + token.start}:{start + token.end}"
                        if token_ranges else None)
                glued = following.get(id(token)) == token.end
                misc = "|".join(item for item in ("SpaceAfter=No" if glued else None, span) if item)
                if len(token.words) > 1:
                    rows.append([f"{n + 1}-{n + len(token.words)}", token.form, *"_" * 7,
                                 misc or "_"])
                    misc = span
                for word in token.words:
                    n += 1
                    rows.append([str(n), word, *"_" * 7, misc or "_"])
            out.append(ConlluSentence(comments, rows))
            previous_end = sentence[-1].end
    return ConlluDocument(out)
