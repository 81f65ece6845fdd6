"""EasyFirstBeamParser: easy-first dependency parsing with beam search (Ma et al., 2013)."""

from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state

from ..annotation import ParserAnnotator
from ..fields import INPUT_TAG_FIELDS, tag_fallback
from ..labelling import LabellingParserMixin
from ..metrics import attachment_score
from ..utils import (
    check_labelled_dependency_data,
    encode_corpus,
    fit_vocabularies,
    split_validation,
)
from ..utils._base import DEPRECATED, check_power_of_two
from ..utils._compat import Hidden, Interval, StrOptions, _fit_context
from . import _parser_kernels as kernels
from ._base import EasyFirstBase


def _encode_sentences(sentences, vocabularies, pos):
    """The kernels' :class:`Sentences`: lower-cased form ids and POS ids."""
    corpus = encode_corpus(sentences, vocabularies)
    return kernels.Sentences(corpus["lower"], corpus[pos], corpus.offsets)


class EasyFirstBeamParser(ParserAnnotator, LabellingParserMixin, EasyFirstBase):
    """Easy-first dependency parser with beam search and valid early update.

    The parser of Ma et al. (2013): Goldberg & Elhadad's (2010) easy-first
    algorithm (repeatedly attach the partial tree whose attachment to a
    neighbour scores best) with a beam of ``beam_size`` action sequences,
    trained as a structured perceptron that updates towards the best correct
    extension of the beam's correct sequences as soon as none survives, which
    keeps every update valid despite spurious ambiguity.

    Features are the paper's Table 1 plus the base features of Goldberg &
    Elhadad, integer-hashed in numba into a table of ``n_features`` rows,
    one weight per row and action type. Input POS tags are read from each
    token's ``pos`` field, so in a pipeline after
    :class:`EasyFirstBeamTagger` use the same field as the tagger's ``target``.

    Fitted on ``(heads, deprels)`` pairs, the parser also trains the
    library's arc labeller on the gold trees (one perceptron pass per epoch
    of the parser) and predicts pairs: the tree, then a label per arc, with
    ``root`` (the label of root-attached words in training) on the word
    attached to the root and on no other word; :meth:`score` is then the
    LAS. Fitted on heads alone it is the unlabelled parser.

    Parameters
    ----------
    beam_size : int, default=8
        Number of action sequences kept (1 is greedy easy-first parsing).
    n_epochs : int, default=12
        Passes over the training sentences in ``fit``.
    average : bool, default=True
        Predict with the averaged perceptron weights.
    merge_states : bool, default=True
        Let action sequences that build the same arcs in different orders
        share one beam slot (the better-scoring one) instead of filling the
        beam with copies of one state. False is the paper's Algorithm 1
        verbatim. Updates stay valid either way.
    pos : {"upos", "xpos"}, default="upos"
        Token field holding the POS tag used by the features. A token
        without it reads the other tag field, then its form (the library's
        one reading of tokens, :func:`sklearn_structured.utils.token_values`).
    n_features : int, default=2**20
        Rows of the hashed weight table, a power of two (the name of
        scikit-learn's :class:`~sklearn.feature_extraction.FeatureHasher`).
    hash_bits : int, default="deprecated"
        The old name of the table's size, as its log2: ``hash_bits=b`` is
        ``n_features=2**b``. Deprecated; it will be removed in the next release.
    n_iter_no_change : int or None, default=None
        With validation data: keep the weights of the epoch with the best
        validation score and stop after this many epochs without a better
        one. None runs every epoch and keeps the last. The labeller makes
        its ``n_epochs`` passes either way.
    validation_fraction : float in (0, 1) or None, default=None
        Hold out this fraction of the training sentences (drawn with
        ``random_state``) as the validation data, instead of ``fit``'s
        ``X_val``, ``y_val``.
    random_state : int, RandomState instance or None, default=None
        Seeds, through one generator per ``fit`` call, the
        ``validation_fraction`` split, the shuffling of the training
        sentences before every epoch and the labeller's order of sentences.
    verbose : int, default=0
        Print one progress line per epoch on standard error: seconds, the
        mean perceptron loss (how far the prediction outscored the correct
        sequence at the update), the validation score (UAS or LAS, a
        fraction, as :meth:`score` returns it) when there is validation
        data, the number of updates and of early ones, and the fraction of
        training sentences parsed without one.
    n_jobs : int, default=None
        Threads used by ``predict`` (the kernels release the GIL). Training
        is sequential, as the perceptron is.

    Attributes
    ----------
    vocabularies_ : dict of Vocabulary
        Lower-cased forms (``"lower"``) and tags (the ``pos`` field) of the
        first training data; other words and tags share the unknown id.
    weights_ : ndarray of shape (n_features, 2), float32
        The perceptron weights parsing uses (averaged if ``average``).
    training_state_ : dict or None
        What training goes on from, the library's averaged-perceptron state
        (:func:`~sklearn_structured.utils.perceptron_state`): the current
        float64 weight table ``["weights"]["W"]``, its running sums
        ``["sums"]["W"]`` and the averaging counter ``["count"]``. Kept by
        :meth:`partial_fit`, None after :meth:`fit` (whose model parses only;
        ``partial_fit`` on it raises ``ValueError``).
    n_iter_ : int
        Epochs run so far (``fit`` resets, ``partial_fit`` adds one).
    history_ : list of dict
        One record per epoch (``fit`` starts it afresh, ``partial_fit``
        adds one): ``epoch``, ``label``, ``loss`` (the mean perceptron loss),
        ``seconds``, ``elapsed``, ``validation_score`` (None without
        validation data), ``updates``, ``early_updates`` (updates made before
        the end of the sentence, when no correct sequence was left in the
        beam) and ``training_sentences_correct``.
    n_updates_ : int
        Perceptron updates made so far.
    n_invalid_updates_ : int
        Updates whose correct sequence scored above the predicted one (zero
        by construction; kept as a check of Ma et al.'s argument).
    labeller_ : dict or None
        The fitted arc labeller (relation labels, root label, vocabularies
        and perceptron weights as plain arrays) when fitted on pairs; None
        when fitted on heads alone.

    References
    ----------
    Ji Ma, Jingbo Zhu, Tong Xiao and Nan Yang (2013). Easy-First POS Tagging
    and Dependency Parsing with Beam Search. ACL.
    Yoav Goldberg and Michael Elhadad (2010). An Efficient Algorithm for
    Easy-First Non-Directional Dependency Parsing. NAACL.
    """

    _requires_y = True

    _parameter_constraints = {
        **EasyFirstBase._parameter_constraints,
        "pos": [StrOptions(set(INPUT_TAG_FIELDS))],
        "n_features": [Interval(Integral, 2**8, 2**30, closed="both")],
        "hash_bits": [Interval(Integral, 8, 30, closed="both"), Hidden(StrOptions({DEPRECATED}))],
    }
    _renamed_params = {"hash_bits": ("n_features", lambda bits: 1 << bits)}

    def __init__(self, beam_size=8, n_epochs=12, *, average=True, merge_states=True, pos="upos",
                 n_features=2**20, n_iter_no_change=None, validation_fraction=None,
                 random_state=None, verbose=0, n_jobs=None, hash_bits=DEPRECATED):
        super().__init__(beam_size, n_epochs, average, merge_states, n_iter_no_change,
                         validation_fraction, random_state, verbose, n_jobs)
        self.pos = pos
        self.n_features = n_features
        self.hash_bits = hash_bits

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, X_val=None, y_val=None):
        """Train for ``n_epochs`` passes over ``(X, y)`` from zero weights.

        Parameters
        ----------
        X : list of sentences
            Tokens are mappings with ``form`` and the ``pos`` field, or plain
            strings (then the parser has words only).
        y : list of 1-D int arrays, or of (heads, deprels) pairs
            Gold heads, 1-based, 0 for the root; trees must be projective to
            be reachable (non-projective arcs simply stay unlearnt). Paired
            with relation labels (a sequence of str per sentence) they also
            train the labeller.
        X_val, y_val : list of sentences and their targets, optional
            Validation data (keyword only; or ``validation_fraction``), scored
            with :meth:`score` after every epoch for the progress line and
            ``history_``, and with ``n_iter_no_change`` to keep the best epoch.

        Returns
        -------
        self
        """
        rng = check_random_state(self.random_state)
        X, y, validation = split_validation(self, X, y, X_val, y_val, rng=rng)
        sentences, heads, deprels = check_labelled_dependency_data(X, y)
        data = self._training_data(sentences, heads, True, rng)
        self._fit_labels(sentences, heads, deprels, self.n_epochs, reset=True,
                         keep_training_state=False, rng=rng)
        return self._train(data, len(sentences), self.n_epochs, validation,
                           keep_training_state=False)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, *, X_val=None, y_val=None):
        """One more epoch over ``(X, y)``, continuing from the training state it keeps.

        ``X_val``, ``y_val`` as in :meth:`fit`. With ``(heads, deprels)``
        pairs the labeller makes one more pass too.
        """
        rng = check_random_state(self.random_state)
        X, y, validation = split_validation(self, X, y, X_val, y_val, rng=rng)
        sentences, heads, deprels = check_labelled_dependency_data(X, y)
        reset = self._check_resumable()
        data = self._training_data(sentences, heads, reset, rng)
        self._fit_labels(sentences, heads, deprels, 1, reset=reset, keep_training_state=True,
                         rng=rng)
        return self._train(data, len(sentences), 1, validation, keep_training_state=True)

    def _start(self, sentences, heads):
        self.vocabularies_ = fit_vocabularies(sentences, ("lower", self.pos))
        check_power_of_two(self, "n_features")
        return (self._param("n_features"), 2), self._encode_training(sentences, heads)

    def _encode_training(self, sentences, heads):
        encoded = _encode_sentences(sentences, self.vocabularies_, self.pos)
        offsets = encoded.offsets
        gold = np.concatenate(heads) - 1  # 0-based, -1 for the root
        n_children = np.zeros_like(gold)
        for i in range(len(sentences)):
            lo, hi = offsets[i], offsets[i + 1]
            attached = gold[lo:hi]
            n_children[lo:hi] = np.bincount(attached[attached >= 0], minlength=hi - lo)
        return encoded, kernels.Gold(gold, n_children)

    def _run_epoch(self, data, order, perceptron, records):
        return kernels.train_epoch(*data, order, perceptron, self._search(), records)

    def _parse(self, sentences):
        def parse_chunk(W, chunk):
            encoded = _encode_sentences(chunk, self.vocabularies_, self.pos)
            heads, order = kernels.parse(encoded, W, self._search())
            offsets = encoded.offsets
            return [(heads[offsets[i]:offsets[i + 1]], order[offsets[i]:offsets[i + 1]])
                    for i in range(len(chunk))]

        results = self._predict_chunks(sentences, parse_chunk)
        return [pair for chunk in results for pair in chunk]

    def predict(self, X):
        """Heads of every sentence: a list of 1-D int64 arrays, 1-based, 0 = root.

        A parser fitted on ``(heads, deprels)`` pairs returns pairs: the
        heads and a list of relation labels (str) per sentence.
        """
        sentences = self._check_prediction_input(X)
        heads = [heads for heads, _ in self._parse(sentences)]
        return self._with_labels(sentences, heads)

    def tag_fields(self):
        """The tag fields the parser reads, preferred first (the other is its fall-back)."""
        return (self.pos, tag_fallback(self.pos))

    def attachment_order(self, X):
        """For every sentence, the step (0-based) at which each word got its head.

        The root word of each sentence gets ``n - 1``; sorting the words by
        this value replays the easy-first order of the best sequence.
        """
        return [order for _, order in self._parse(self._check_prediction_input(X))]

    def score(self, X, y):
        """Attachment score without punctuation (UPOS ``PUNCT``).

        LAS when the parser was fitted on pairs and ``y`` holds
        ``(heads, deprels)`` pairs, UAS otherwise.
        """
        y = list(y)
        sentences, _, _ = check_labelled_dependency_data(X, y)
        return attachment_score(y, self.predict(sentences), X=sentences, punct="exclude")

