"""EasyFirstBeamTagger: easy-first POS tagging with beam search (Ma et al., 2013)."""

import contextvars
import os
from collections import Counter
from collections.abc import Mapping
from itertools import repeat
from numbers import Integral

import numpy as np
from sklearn.base import TransformerMixin, clone
from sklearn.utils import check_random_state

from ..annotation import TaggerAnnotator
from ..metrics import token_accuracy
from ..utils import (
    CheckedSentences,
    carried_fields,
    check_sentences,
    check_tagging_data,
    is_labelled_target,
    run_in_threads,
    split_validation,
    thread_count,
    token_field,
    token_values,
    training_step,
)
from ..fields import INPUT_TAG_FIELDS, TAG_FIELDS, UNDERSCORE_IS_A_VALUE
from ..utils._base import DEPRECATED, check_fitted
from ..utils._compat import Hidden, Interval, StrOptions, _fit_context
from . import _tagger_kernels as kernels
from ._base import _TABLE, EasyFirstBase
from ._edit_scripts import apply_script, encode_script, lemma_dictionary
from ._tagger_features import (
    ambiguity_dictionary,
    cluster_table,
    fit_tagger_vocabularies,
    jackknifed_class_ids,
    kept_feature_keys,
    lemma_stems,
    static_feature_keys,
    static_feature_rows,
    tag_context_values,
    tag_parts,
    word_describer,
)

# Lemma scripts seen fewer times in the first training data are trained as the
# most frequent script: they are mostly one irregular word each, which the
# dictionary lemmatises, and each would cost a weight column.
_MIN_SCRIPT_COUNT = 2


def _gold_value(token, field):
    """A token's gold value of ``field``. For FEATS, LEMMA and XPOS the CoNLL-U ``_`` is a
    value of its own (no features; a lemma or XPOS left unspecified, as treebanks do for
    a few words: 3 XPOS of Turkish IMST train), which the taggers learn and the CoNLL 2018
    scorer compares like any other."""
    if field in UNDERSCORE_IS_A_VALUE:
        return token.get(field) if isinstance(token, Mapping) else None
    return token_field(token, field)


def _form(token):
    """The form as written: a lemma is made from it, and a form ``_`` (real text in
    some treebanks, Turkish IMST's for one) must not turn into an empty lemma."""
    return token if isinstance(token, str) else token["form"]


def _forms(sentences):
    return [[_form(token) for token in sentence] for sentence in sentences]


def _form_pos_keys(sentences):
    """``form<TAB>upos`` for every token that has a UPOS, else ``""`` (a key never stored)."""
    keys = []
    for sentence in sentences:
        for token in sentence:
            upos = token_field(token, "upos")
            keys.append(f"{_form(token)}\t{upos}" if upos else "")
    return keys


def _with_target(sentence, field, tags):
    """A copy of ``sentence`` whose tokens carry ``tags`` in ``field``."""
    # dicts first: the ABC check is slow per token
    return [{**token, field: tag} if type(token) is dict or isinstance(token, Mapping)
            else {"form": token, field: tag} for token, tag in zip(sentence, tags)]


class EasyFirstBeamTagger(TaggerAnnotator, TransformerMixin, EasyFirstBase):
    """Easy-first tagger with beam search and valid early update: POS, FEATS or lemmas.

    Tags the words of a sentence in easy-first order: at every step the
    best-scoring (word, tag) pair among untagged words is chosen, so a word
    can use the tags already given to neighbours on both sides (Shen et al.,
    2007). Beam search and training are those of
    :class:`EasyFirstBeamParser` (Ma et al., 2013, Algorithms 1 and 2).

    Features: those of Shen et al. (2007) -- the word, its prefixes and
    suffixes up to length 4, its shape, the words at distance 1 and 2 on
    each side, and the tags of the neighbours: ``t-1``, ``t+1``,
    ``t-2 t-1``, ``t+1 t+2``, ``t-1 t+1`` (a neighbour not yet tagged has
    its own value) -- plus suffixes of length 5 to 7, flags for a hyphen, a
    digit and an upper-case letter, the lower-cased word, the pairs
    ``w-1 w+1``, ``suffix3 w-1`` and ``suffix3 w+1``. With more than 64
    tags (FEATS strings, lemma scripts) the neighbours' tag features tell
    apart the 63 most frequent tags and lump the others together.

    What is predicted depends on ``target``:

    - ``"upos"``, ``"xpos"``: the tag.
    - ``"feats"``: the whole FEATS string is one tag; ``"_"`` (no features)
      is a tag of its own.
    - ``"lemma"``: the tag is an edit script from the form to its lemma (a
      case rule -- lower-case, first letter upper, or as is -- and the
      characters to cut and add at the start and end around the longest
      common substring; see ``classes_``). Forms seen in training take
      their most frequent training lemma (the dictionary): of the form with
      the token's UPOS when the token has a UPOS (a UPOS tagger's output, for
      instance) and that pair was seen in training, else of the form. Other
      forms take the predicted script applied to the form, or the form itself
      when the script cuts more characters than the form has. Scripts seen
      once in training are trained as the most frequent script.

    ``predict``, ``transform`` and ``score`` work with the final strings
    (lemmas, not scripts); :meth:`predict_classes` gives the scripts.

    As a transformer it writes the predictions into each token's ``target``
    field, so that ``make_pipeline(EasyFirstBeamTagger(target="upos"),
    EasyFirstBeamParser(pos="upos"))`` parses raw words. ``fit_transform``
    uses k-fold jackknifing, so the next step trains on tags as noisy as
    those it will see at prediction time.

    Parameters
    ----------
    beam_size, n_epochs : int, default=3 and 10
        As in :class:`EasyFirstBeamParser`: the action sequences kept (1 is
        greedy easy-first tagging) and the passes over the training sentences.
    target : {"upos", "xpos", "feats", "lemma"}, default="upos"
        Token field that holds the gold values (when ``y`` is not given) and
        that ``transform`` overwrites.
    average, merge_states : bool, default=True
        As in :class:`EasyFirstBeamParser`; the states merged are sequences
        giving the same tags in different orders.
    feature_min_count : int, default=2
        Static features seen fewer times in the first training data are dropped.
    ambiguity_min_count : int or None, default=1
        Lower-cased words seen at least this many times in the first training
        data have an ambiguity class (the set of tags they were seen with),
        read as a feature of the word and of its neighbours; rarer and unseen
        words have none. Training sentences get their words' classes from the
        other folds of ``n_folds`` (sentence i in fold i mod ``n_folds``), so
        that, as in new text, a class may lack the word's tag. None: no
        ambiguity-class features (the user guide measures them).
    n_folds : int, default=10
        Folds of the jackknifing in ``fit_transform`` and of the training
        sentences' ambiguity classes.
    update : {"resume", "early"}, default="resume"
        What training does once it has updated on a sentence. ``"early"``:
        leave the rest of the sentence, as Ma et al.'s early update does.
        ``"resume"``: go on from the best correct sequence, every score
        recomputed with the new weights (LaSO, Daume and Marcu, 2005), so
        that each epoch learns from whole sentences. Early errors are common
        with large tag sets, where ``"early"`` learns little beyond each
        sentence's first words (the user guide compares the two).
    decompose_feats : bool, default=True
        ``target="feats"`` only: also read a FEATS string as its ``Feature=Value``
        pairs. A tag's score adds to its own weights those of each of its pairs
        (for the word's static features), and each pair of a neighbour's tag is
        a feature of its own, so that what is learnt of ``Case=Gen`` serves
        every tag that has it, rare ones included (the user guide measures it).
    input_tags : tuple of {"upos", "xpos"}, default=()
        Token fields whose tags (an earlier tagger's output, in a pipeline) are
        features too: the word's tag, alone and with its 3-letter suffix, and
        each neighbour's. Every training token needs them, and new text is
        then tagged as well as its input tags are. In
        :func:`make_parsing_pipeline` each tagger reads the UPOS and XPOS
        tagged before it (the user guide measures what they add).
    lemma_endings : bool, default=True
        When the training tokens have lemmas (or the target is ``"lemma"``),
        a word's ending after the longest training lemma that begins it
        (lower-cased, the lemma of two characters or more, the ending of one
        or more) is a feature too: ``evlerinden`` after ``ev`` reads
        ``lerinden``. In agglutinative and fusional languages it spells the
        inflection of words never seen in training (the user guide measures
        it).
    word_clusters : mapping of str to tuple of int, path or None, default=None
        Word classes learned from unannotated text, each word's cluster at
        one or more granularities (as
        :meth:`~sklearn_structured.word_vectors.PPMIWordVectors.word_clusters`
        or :func:`~sklearn_structured.word_vectors.cluster_words` give them),
        or the path of a word-vector file (word2vec, fastText or GloVe text),
        whose vectors are clustered so (once per process, see
        :func:`~sklearn_structured.word_vectors.clusters_of_file`). A word is
        looked up by its form, then lower-cased; its clusters and its
        neighbours' are features, read as input tags are. The fitted tagger
        keeps a table of them, so prediction needs nothing more, and a path
        keeps the model file small (a mapping is saved with the parameters).
    n_iter_no_change, validation_fraction : int or None, float or None, default=None
        Keep the best epoch on validation data, which ``fit`` is given or
        holds out; as in :class:`EasyFirstBeamParser`.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling of the training sentences and the folds.
    verbose : int, default=0
        Print one progress line per epoch on standard error: seconds, the
        mean perceptron loss, the validation token accuracy when there is
        validation data, the number of updates and of early ones, and the
        fraction of training sentences tagged without one.
    n_jobs : int, default=None
        Threads used by ``predict`` and by the folds of ``fit_transform``
        (the kernels release the GIL). Training one model is sequential.
    min_feature_count : int, default="deprecated"
        The old name of ``feature_min_count``. Deprecated; it will be removed
        in the next release.

    Attributes
    ----------
    classes_ : ndarray of str
        The tag set; for ``target="lemma"`` the edit scripts, written
        ``"<case>:<cut at start>:<cut at end>:<length of the text added at
        the start>:<text added at the start><text added at the end>"`` with
        case ``l`` (edit the lower-cased form), ``t`` (the same, then the first
        letter upper-cased) or ``k`` (edit the form as is): ``"l:0:1:0:"``
        turns "Dogs" into "dog", ``"l:0:3:0:y"`` "studies" into "study".
    lemma_forms_, lemma_lemmas_ : ndarray of str
        ``target="lemma"`` only: the training forms, sorted, and the most
        frequent training lemma of each (the dictionary).
    lemma_form_pos_, lemma_form_pos_lemmas_ : ndarray of str
        ``target="lemma"`` only: the (form, UPOS) pairs of the training
        tokens that have a UPOS, written ``form<TAB>upos`` and sorted, and
        the most frequent lemma of each.
    default_script_ : str
        ``target="lemma"`` only: the most frequent script, which rare
        scripts train as.
    stems_ : str
        With ``lemma_endings``: the distinct lower-cased training lemmas of
        two characters or more, sorted, one per line (empty without lemmas).
    ambiguity_words_, ambiguity_ids_ : ndarray of str, ndarray of int64
        With ``ambiguity_min_count``: the lower-cased training words that have
        an ambiguity class, sorted, and the id of each one's class (a checksum
        of its tag set; for lemmas, of its edit scripts).
    tag_context_values_ : ndarray of int
        The value each tag gives in its neighbours' tag features.
    tag_parts_ : ndarray of int, shape (n_tags, n)
        With ``decompose_feats`` and ``target="feats"``: the ids of each tag's
        ``Feature=Value`` pairs, -1 padded; no columns otherwise. Pair ``p`` has
        weight column ``n_tags + p``.
    vocabularies_ : dict of Vocabulary
        Forms (``"form"``), lower-cased forms (``"lower"``), the tags of each
        of ``input_tags``, and the prefixes, suffixes and shapes of the
        training forms (``"attributes"``), from the first training data.
    feature_keys_ : ndarray of int64
        Sorted hashes (:func:`sklearn_structured.kernels.hashing.feature_hash`)
        of the static features kept; the i-th is row ``i + 1`` of the
        weight table.
    weights_ : scipy.sparse.csr_array of shape (n_rows, n_tags), float32
        The perceptron weights tagging uses (averaged if ``average``), in
        CSR form: almost all of them are zero.
    training_state_ : dict or None
        What training goes on from, as in :class:`EasyFirstBeamParser`.
    n_iter_, n_updates_, n_invalid_updates_ : int
        As in :class:`EasyFirstBeamParser`.
    history_ : list of dict
        One record per epoch, as in :class:`EasyFirstBeamParser`; the
        validation score is the token accuracy.

    Notes
    -----
    ``y`` holds the tag sequences. When ``y`` holds a parser's targets
    instead (heads, or ``(heads, deprels)`` pairs, as a
    :class:`~sklearn.pipeline.Pipeline` passes the final step's target to
    every step), it is ignored and the tags are read from the ``target``
    field.
    """

    _parameter_constraints = {
        **EasyFirstBase._parameter_constraints,
        "target": [StrOptions(set(TAG_FIELDS))],
        "feature_min_count": [Interval(Integral, 1, None, closed="left")],
        "min_feature_count": [Interval(Integral, 1, None, closed="left"),
                              Hidden(StrOptions({DEPRECATED}))],
        "n_folds": [Interval(Integral, 2, None, closed="left")],
        "ambiguity_min_count": [Interval(Integral, 1, None, closed="left"), None],
        "update": [StrOptions({"resume", "early"})],
        "decompose_feats": ["boolean"],
        "input_tags": [tuple, list],
        "lemma_endings": ["boolean"],
        "word_clusters": [Mapping, str, os.PathLike, None],
    }
    _renamed_params = {"min_feature_count": ("feature_min_count", lambda count: count)}

    def __init__(self, beam_size=3, n_epochs=10, *, target="upos", average=True,
                 merge_states=True, feature_min_count=2, ambiguity_min_count=1, n_folds=10,
                 update="resume", decompose_feats=True, input_tags=(), lemma_endings=True,
                 word_clusters=None, n_iter_no_change=None, validation_fraction=None, random_state=None, verbose=0,
                 n_jobs=None, min_feature_count=DEPRECATED):
        super().__init__(beam_size, n_epochs, average, merge_states, n_iter_no_change,
                         validation_fraction, random_state, verbose, n_jobs)
        self.target = target
        self.feature_min_count = feature_min_count
        self.min_feature_count = min_feature_count
        self.ambiguity_min_count = ambiguity_min_count
        self.n_folds = n_folds
        self.update = update
        self.decompose_feats = decompose_feats
        self.input_tags = input_tags
        self.lemma_endings = lemma_endings
        self.word_clusters = word_clusters

    # --- data -----------------------------------------------------------
    def _gold_tags(self, X, y):
        """Validated sentences and gold values (tags, FEATS strings or lemmas), from ``y``
        or the ``target`` field."""
        if y is not None:
            y = list(y)
            if not any(_is_parser_target(tags) for tags in y):
                return check_tagging_data(X, y)
        sentences = check_sentences(X, require_any=True)
        tags = []
        for i, sentence in enumerate(sentences):
            row = [_gold_value(token, self.target) for token in sentence]
            if any(t is None for t in row):
                raise ValueError(
                    f"X[{i}] has a token without a {self.target!r} field; give the tags as y "
                    "or fill the field"
                )
            tags.append(row)
        if self.target == "xpos" and all(t == "_" for row in tags for t in row):
            raise ValueError("no token has an XPOS (every one is '_'); this treebank has "
                             "none to learn")
        return sentences, tags

    def _classes_of(self, sentences, values):
        """The class sequences the kernels learn: the values themselves, or for lemmas
        the edit scripts from each form to its lemma."""
        if self.target != "lemma":
            return values
        return [[encode_script(form, lemma) for form, lemma in zip(forms, row)]
                for forms, row in zip(_forms(sentences), values)]

    def _encode(self, sentences, class_ids=None, share=False):
        """(weight rows of the static features, one row of templates per token; offsets).

        ``class_ids``: the tokens' ambiguity classes, by default the dictionary's.
        ``share``: reuse the word ids of the tagger before (see static_feature_keys).
        """
        if class_ids is None:
            class_ids = self._dictionary_class_ids(sentences)
        return static_feature_rows(sentences, self.vocabularies_, self.feature_keys_, class_ids,
                                   self.input_tags, self._describer(), share, self._clusters())

    def _fit_cluster_table(self):
        clusters = self.word_clusters
        if clusters is None:
            return None
        if isinstance(clusters, (str, os.PathLike)):
            from ..word_vectors import clusters_of_file

            clusters = clusters_of_file(clusters)
        return cluster_table(clusters)

    def _clusters(self):
        """The fitted word-cluster table (models saved before ``word_clusters`` have none)."""
        return getattr(self, "word_cluster_table_", None)

    def _describer(self):
        """The word attributes of the fitted features (models saved before
        ``lemma_endings`` have no ``stems_`` and read no ending)."""
        return word_describer(getattr(self, "stems_", ""))

    def _dictionary_class_ids(self, sentences):
        """Each token's class id in the ambiguity dictionary (0: not in it), or None
        without ambiguity classes."""
        if self.ambiguity_min_count is None:
            return None
        # a dict, made once per fitted model: searching the sorted str array took
        # 0.1 s per tagger on EWT test, a third of a second of a three-tagger parse
        classes = self._cached("ambiguity_classes", self.ambiguity_words_, lambda: dict(
            zip(self.ambiguity_words_.tolist(), self.ambiguity_ids_.tolist())))
        return np.fromiter(map(classes.get, token_values(sentences, "lower"), repeat(0)),
                           np.int64)

    def _flat_classes(self, sentences, tags):
        """The classes of every training token laid end to end (see :meth:`_classes_of`)."""
        return [t for row in self._classes_of(sentences, tags) for t in row]

    def _training_class_ids(self, sentences, classes):
        """The training tokens' ambiguity class ids (``classes``: their flat classes), each
        from the folds without its sentence (sentence i in fold i mod ``n_folds``), or None
        without ambiguity classes."""
        if self.ambiguity_min_count is None:
            return None
        words = token_values(sentences, "lower")
        folds = [i % self.n_folds for i, s in enumerate(sentences) for _ in s]
        return jackknifed_class_ids(words, classes, folds, self.ambiguity_min_count)

    def _context(self):
        return kernels.tag_context(self.dynamic_base_, self.tag_context_values_,
                                   self.tag_parts_)

    def _store_prediction_weights(self):
        """``weights_`` in CSR form: with many tags almost every cell is zero (FEATS on
        EWT: 0.7% are not), and the kernels then add only the others."""
        from scipy.sparse import csr_array

        state = self.training_state_
        table = state["weights"][_TABLE]
        indptr, indices, data = kernels.prediction_table(
            table, state["sums"][_TABLE], float(state["count"][0]), bool(self.average))
        self.weights_ = csr_array((data, indices, indptr), shape=table.shape)

    # --- EasyFirstBase hooks -----------------------------------------------
    def _check_input_tags(self, sentences):
        tags = tuple(self.input_tags)
        bad = [t for t in tags if t not in INPUT_TAG_FIELDS or t == self.target]
        if bad or len(set(tags)) != len(tags):
            raise ValueError(f"input_tags must be distinct fields among {INPUT_TAG_FIELDS} "
                             f"other than the target {self.target!r}, got {tags!r}")
        carried = carried_fields(sentences, tags)
        for field in tags:
            if field not in carried:
                raise ValueError(f"input_tags names {field!r}, but no training token has a "
                                 f"{field!r} (tag it first, or leave it out of input_tags)")

    def _start(self, sentences, tags):
        self._check_input_tags(sentences)
        # for lemmas the classes are edit scripts, costly to derive: once per call
        classes = self._flat_classes(sentences, tags)
        counts = Counter(classes)
        if self.target == "lemma":
            forms = [f for row in _forms(sentences) for f in row]
            lemmas = [t for row in tags for t in row]
            self.lemma_forms_, self.lemma_lemmas_ = lemma_dictionary(forms, lemmas)
            keys = _form_pos_keys(sentences)
            self.lemma_form_pos_, self.lemma_form_pos_lemmas_ = lemma_dictionary(
                [k for k in keys if k], [lemma for k, lemma in zip(keys, lemmas) if k])
            self.default_script_ = counts.most_common(1)[0][0]
            counts = Counter({t: c for t, c in counts.items()
                              if c >= _MIN_SCRIPT_COUNT or t == self.default_script_})
        self.classes_ = np.array(sorted(counts))
        self.tag_context_values_ = tag_context_values(counts, self.classes_)
        if self.target == "feats" and self.decompose_feats:
            self.tag_parts_ = tag_parts(self.classes_)
        else:
            self.tag_parts_ = np.zeros((len(self.classes_), 0), np.int64)
        self.stems_ = ""
        if self.lemma_endings:  # the gold lemmas, without token_values' fall-back to the form
            self.stems_ = lemma_stems(lemmas if self.target == "lemma" else (
                token_field(token, "lemma") for sentence in sentences for token in sentence))
        self.vocabularies_ = fit_tagger_vocabularies(sentences, self.input_tags,
                                                     self._describer())
        self.word_cluster_table_ = self._fit_cluster_table()
        if self.ambiguity_min_count is not None:
            self.ambiguity_words_, self.ambiguity_ids_ = ambiguity_dictionary(
                token_values(sentences, "lower"), classes, self.ambiguity_min_count)
        class_ids = self._training_class_ids(sentences, classes)
        keys, _ = static_feature_keys(sentences, self.vocabularies_, class_ids, self.input_tags,
                                      self._describer(), clusters=self._clusters())
        self.feature_keys_ = kept_feature_keys(keys, self._param("feature_min_count"))
        self.dynamic_base_ = len(self.feature_keys_) + 1  # row 0: features not kept
        n_values = int(self.tag_context_values_.max()) + 1
        n_parts = self._context().n_parts
        # a column per tag, then one per part (see decompose_feats)
        shape = (self.dynamic_base_ + kernels.n_dynamic_rows(n_values, n_parts),
                 len(self.classes_) + n_parts)
        return shape, self._training_arrays(sentences, classes, class_ids)

    def _encode_training(self, sentences, tags):
        classes = self._flat_classes(sentences, tags)
        return self._training_arrays(sentences, classes,
                                     self._training_class_ids(sentences, classes))

    def _training_arrays(self, sentences, classes, class_ids):
        """Static features, gold class indices and offsets of the training tokens
        (``classes``: their flat classes, ``class_ids``: their ambiguity class ids)."""
        static, offsets = self._encode(sentences, class_ids)
        index = {t: k for k, t in enumerate(self.classes_)}
        if self.target == "lemma":  # rare scripts train as the most frequent one
            default = index[self.default_script_]
            gold = np.array([index.get(t, default) for t in classes], np.int64)
            return static, gold, offsets
        try:
            gold = np.array([index[t] for t in classes], np.int64)
        except KeyError as exc:
            raise ValueError(
                f"tag {exc.args[0]!r} was not in the tag set of the first training data"
            ) from None
        return static, gold, offsets

    def _run_epoch(self, data, order, perceptron, records):
        static, gold, offsets = data
        return kernels.train_epoch(static, offsets, gold, order, perceptron, self._context(),
                                   self._search(), self.update == "resume", records)

    # --- public API -----------------------------------------------------
    def _split_validation(self, X, y, X_val, y_val, rng):
        """``split_validation``, with ``y_val`` read from the ``target`` field of
        ``X_val``'s tokens when it is not given (as ``y`` may be)."""
        if X_val is not None and y_val is None:
            X_val, y_val = self._gold_tags(X_val, None)
        return split_validation(self, X, y, X_val, y_val, rng=rng)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, X_val=None, y_val=None):
        """Train for ``n_epochs`` passes from zero weights.

        Parameters
        ----------
        X : list of sentences
        y : list of tag sequences, optional
            Without it the tags come from each token's ``target`` field.
        X_val, y_val : list of sentences and list of tag sequences, optional
            Validation data (keyword only; or ``validation_fraction``), scored
            with :meth:`score` after every epoch for the progress line and
            ``history_``, and with ``n_iter_no_change`` to keep the best epoch.
            Without ``y_val`` its tags come from the ``target`` field of
            ``X_val``'s tokens.

        Returns
        -------
        self
        """
        rng = check_random_state(self.random_state)
        X, y, validation = self._split_validation(X, y, X_val, y_val, rng)
        sentences, tags = self._gold_tags(X, y)
        data = self._training_data(sentences, tags, True, rng)
        return self._train(data, len(sentences), self.n_epochs, validation,
                           keep_training_state=False)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, *, X_val=None, y_val=None):
        """One more epoch; the tag set and features are fixed by the first call.

        ``X_val``, ``y_val`` as in :meth:`fit`.
        """
        rng = check_random_state(self.random_state)
        X, y, validation = self._split_validation(X, y, X_val, y_val, rng)
        sentences, tags = self._gold_tags(X, y)
        data = self._training_data(sentences, tags, self._check_resumable(), rng)
        return self._train(data, len(sentences), 1, validation, keep_training_state=True)

    def _tag(self, X):
        sentences = check_sentences(X)

        def tag_chunk(W, chunk):
            static, offsets = self._encode(chunk, share=True)
            scorer = self._cached("scorer", W, lambda: kernels.scoring_table(W))
            tags, order = kernels.tag(static, offsets, scorer, self._context(), self._search())
            return [(tags[offsets[i]:offsets[i + 1]], order[offsets[i]:offsets[i + 1]])
                    for i in range(len(chunk))]

        results = self._predict_chunks(sentences, tag_chunk)
        return sentences, [pair for chunk in results for pair in chunk]

    def _values(self, sentences, tagged):
        """The strings written into ``target``: the predicted tags, or for lemmas the
        dictionary lemma of a training form and else the predicted script's lemma."""
        if self.target != "lemma":
            return [self.classes_[tags].tolist() for tags, _ in tagged]
        forms = _forms(sentences)
        flat = [f for row in forms for f in row]
        # dicts, made once per fitted model: a sorted-array search per call built a
        # fixed-width str array of every token (0.2 s on EWT test)
        by_form = self._cached("lemma_forms", self.lemma_forms_, lambda: dict(
            zip(self.lemma_forms_.tolist(), self.lemma_lemmas_.tolist())))
        by_pair = self._cached("lemma_form_pos", self.lemma_form_pos_, lambda: dict(
            zip(self.lemma_form_pos_.tolist(), self.lemma_form_pos_lemmas_.tolist())))
        scripts = [script for tags, _ in tagged for script in self.classes_[tags].tolist()]
        lemmas = []
        for form, key, script in zip(flat, _form_pos_keys(sentences), scripts):
            lemma = by_pair.get(key)
            if lemma is None:
                lemma = by_form.get(form)
            lemmas.append(apply_script(form, script) if lemma is None else lemma)
        ends = np.cumsum([len(row) for row in forms])
        return [lemmas[end - len(row):end] for row, end in zip(forms, ends)]

    def predict(self, X):
        """Predicted values, a list of lists of str: tags or FEATS strings, or lemmas
        (not their scripts) when ``target="lemma"``."""
        sentences, tagged = self._tag(X)
        return self._values(sentences, tagged)

    def predict_classes(self, X):
        """The predicted classes (for lemmas the edit scripts, see ``classes_``)."""
        _, tagged = self._tag(X)
        return [self.classes_[tags].tolist() for tags, _ in tagged]

    def static_features(self, X):
        """The static feature keys of every token, as the fitted tagger reads them.

        These are the features that do not depend on the tags chosen so far
        (words, word shapes, ambiguity classes, ``input_tags``), before the
        ``feature_min_count`` cut; another learner trained on them (a CRF,
        say) compares with the tagger on the same evidence.

        Parameters
        ----------
        X : list of sentences
            As for :meth:`predict`.

        Returns
        -------
        keys : list of ndarray of shape (n_tokens, n_templates), int64
            Per sentence, one row per token: the hashed key of each feature
            template, -1 where the template does not apply.
        """
        check_fitted(self, "weights_")
        sentences = check_sentences(X)
        keys, offsets = static_feature_keys(sentences, self.vocabularies_,
                                            self._dictionary_class_ids(sentences),
                                            self.input_tags, self._describer(),
                                            clusters=self._clusters())
        return [keys[lo:hi] for lo, hi in zip(offsets[:-1], offsets[1:])]

    def tagging_order(self, X):
        """For every sentence, the step (0-based) at which each word was tagged."""
        _, tagged = self._tag(X)
        return [order for _, order in tagged]

    def transform(self, X):
        """Sentences whose tokens carry the predicted tags in the ``target`` field."""
        sentences, tagged = self._tag(X)
        return CheckedSentences(_with_target(s, self.target, values)
                                for s, values in zip(sentences, self._values(sentences, tagged)))

    def fit_transform(self, X, y=None, **fit_params):
        """Fit on all of X, and tag X by jackknifing (each fold by a model not trained on it)."""
        from sklearn.model_selection import KFold  # here: it costs tagging-only processes imports

        sentences, tags = self._gold_tags(X, y)
        # progress lines say which model they belong to
        step = f"{self.target} tagger"
        with training_step(step):
            self.fit(sentences, tags, **fit_params)
        folds = KFold(n_splits=min(self.n_folds, len(sentences)), shuffle=True,
                      random_state=self.shuffle_seed_)
        n_folds = folds.get_n_splits()

        def tag_fold(k, train, held_out):
            fold = [sentences[i] for i in train]
            # an input tag that no sentence of the fold carries (a field given to a few
            # words) would be a constant feature there: the fold's model goes without it
            model = clone(self).set_params(n_jobs=None,
                                           input_tags=carried_fields(fold, self.input_tags))
            with training_step(f"{step}, fold {k + 1} of {n_folds}"):
                model.fit(fold, [tags[i] for i in train])
            return held_out, model.transform([sentences[i] for i in held_out])

        # the kernels release the GIL, so folds train in parallel threads; each thread
        # runs in a copy of this context, so that the labels of outer steps reach it
        context = contextvars.copy_context()
        results = run_in_threads(lambda k, split: context.copy().run(tag_fold, k, *split),
                                 enumerate(folds.split(sentences)), thread_count(self.n_jobs))
        out = [None] * len(sentences)
        for held_out, tagged in results:
            for i, sentence in zip(held_out, tagged):
                out[i] = sentence
        return out

    def score(self, X, y=None):
        """Token accuracy of :meth:`predict` against ``y`` (or the ``target`` field when y
        is None): for lemmas, of the final lemmas, not of the scripts."""
        sentences, tags = self._gold_tags(X, y)
        return token_accuracy(tags, self.predict(sentences))


def _is_parser_target(values):
    """Whether ``values`` is a parser's target: heads, or (heads, deprels)."""
    if is_labelled_target(values):
        return True
    array = np.asarray(values)
    return array.ndim == 1 and array.size > 0 and np.issubdtype(array.dtype, np.number)
