"""DistroSequenceSVM: a first-order chain structural SVM with learned label vectors."""

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..kernels.chain import viterbi_batch
from ..kernels.hashing import kept_positions
from ..metrics import token_accuracy
from ..utils import (
    SentenceEstimator,
    Vocabulary,
    check_sentences,
    check_tagging_data,
    encode_corpus,
    fit_vocabularies,
    pack_ragged,
    split_validation,
    token_values,
    word_shape,
    word_type_ids,
    word_type_vocabulary,
)
from ..utils._compat import Interval, _fit_context
from . import _kernels, _sequence_kernels
from ._alternating import DistroParameters, Problem, class_ids, fit_label_model, objective


def _word_attributes(form):
    """Prefix and suffix of length 3 (the whole word when shorter), and the word shape."""
    return [form[:3], form[-3:], word_shape(form)]


class _SequenceProblem(Problem):
    has_transitions = True
    candidates = _sequence_kernels.ALL_LABELS
    onehot = False  # exact decoding reads A^T T A, whatever A is

    def __init__(self, tokens, offsets, y):
        self.tokens, self.offsets, self.y = tokens, offsets, y
        self.n_examples = len(offsets) - 1
        self.n_features = tokens.shape[1]
        self.max_length = int(np.max(np.diff(offsets)))
        # per token: a step corrects the tokens that were labelled wrong
        self.mean_squared_norm = 1.0 + tokens.multiply(tokens).sum() / max(tokens.shape[0], 1)

    def _rows(self):
        return _kernels.sparse_rows(self.tokens)

    def weight_epoch(self, order, A, iterates, alpha, t0):
        return _sequence_kernels.chain_weight_epoch(self._rows(), self.offsets, self.y,
                                                    self.candidates, order, A, self.onehot,
                                                    iterates, alpha, t0, self.max_length)

    def projections(self, V):
        return np.ascontiguousarray(self.tokens @ V[:-1] + V[-1])

    def label_epoch(self, order, A, V, T, rate, nuclear_penalty):
        Z = self.projections(V)
        eta = rate / max(np.mean(np.sum(Z**2, axis=1)), 1e-12)
        _sequence_kernels.chain_label_epoch(self._rows(), V, Z, self.offsets, self.y,
                                            self.candidates, order, A, T, eta, nuclear_penalty,
                                            self.max_length)

    def mean_hinge_loss(self, A, V, T):
        E = self.projections(V) @ A
        transitions = _sequence_kernels.label_transition_scores(A, T)
        return float(np.mean(_sequence_kernels.sequence_hinge_losses(E, self.offsets, self.y, transitions)))


class _CandidateSequenceProblem(_SequenceProblem):
    """The chain problem with every token restricted to its tag-dictionary candidates."""

    def __init__(self, tokens, offsets, y, candidates, onehot):
        super().__init__(tokens, offsets, y)
        self.candidates, self.onehot = candidates, onehot

    def label_epoch(self, order, A, V, T, rate, nuclear_penalty):
        # the mean squared norm of W phi + b, in slices (M x n_tokens floats may not fit)
        squared = sum(float(np.sum(self.tokens[i:i + 8192] @ V[:-1] + V[-1]) ** 2)
                      for i in range(0, self.tokens.shape[0], 8192))
        eta = rate / max(squared / self.tokens.shape[0], 1e-12)
        # the d-vectors are projected a sentence at a time: no Z
        _sequence_kernels.chain_label_epoch(self._rows(), V, np.zeros((0, A.shape[0])),
                                            self.offsets, self.y, self.candidates, order, A, T,
                                            eta, nuclear_penalty, self.max_length)

    def mean_hinge_loss(self, A, V, T):
        _, losses = _sequence_kernels.candidate_decode(self._rows(), V, self.offsets, self.y,
                                              self.candidates, A, T, self.onehot,
                                              self.max_length)
        return float(np.mean(losses))


# Suffix of the classes of rare and unseen words: on Basque UPOS|FEATS dev, length 2
# covers the gold tag of 98.6% of the tokens with 37 candidates on average, length 3
# 97.2% with 22 (tag_dictionary=20); most misses are unseen words.
SUFFIX_LENGTH = 2


def _suffix_key(form):
    return "s " + form[-SUFFIX_LENGTH:]


def _dictionary_key(form, counts, min_count):
    """A token's entry in the tag dictionary: its word when the word was seen at
    least ``min_count`` times in training, else its suffix class."""
    if counts.get(form, 0) >= min_count:
        return "w " + form
    return _suffix_key(form)


def _fit_tag_dictionary(forms, y_ids, min_count):
    """(keys, offsets, labels): the sorted labels seen in training with every key."""
    counts = {}
    for form in forms:
        counts[form] = counts.get(form, 0) + 1
    seen = {}
    for form, label in zip(forms, y_ids.tolist()):
        key = _dictionary_key(form, counts, min_count)
        seen.setdefault(key, set()).add(label)
        if key[0] == "w":  # suffix classes are built from every word with that suffix
            seen.setdefault(_suffix_key(form), set()).add(label)
    keys = sorted(seen)
    labels, offsets = pack_ragged([sorted(seen[k]) for k in keys])
    return np.array(keys, dtype=str), offsets, labels


class DistroSequenceSVM(DistroParameters, SentenceEstimator):
    """First-order sequence labeller: structural SVM with learned label vectors (DISTRO).

    Every tag ``l`` has a unit vector ``a_l`` in R^d (a column of ``A``). A
    tag sequence ``y`` of a sentence ``x`` scores

        sum_t a_{y_t}^T (W phi(x, t) + b) + sum_t a_{y_t}^T T a_{y_{t+1}}

    (atomic emission parts and compositional transition parts, Srikumar &
    Manning 2014, section 3.1), with ``W`` d x n_features and ``T`` d x d.
    It is decoded with Viterbi (:mod:`sklearn_structured.kernels.chain`).
    Training minimises alpha/2 (||W||^2 + ||T||^2) + nuclear_penalty ||A||_*
    plus the mean structured hinge loss with Hamming cost, alternating
    averaged stochastic sub-gradient passes on (W, T) with stochastic
    proximal passes on A. ``label_vectors="onehot"`` is the ordinary
    first-order structural SVM.

    Parameters
    ----------
    n_components : int or None, default=None
        Dimension d of the tag vectors; None means the number of tags.
    label_vectors : {"learned", "onehot"}, default="learned"
    alpha : float, default=1e-5
        L2 penalty on W and T.
    nuclear_penalty : float, default=1e-3
        Nuclear-norm penalty on the tag matrix A.
    label_learning_rate : float, default=0.05
        Step size of the tag-vector passes in units of the mean squared
        norm of a token's ``W phi + b``, divided by sqrt(1 + k) on pass k.
    init : {"random", "onehot"}, default="random"
        Start of the learned tag vectors, as in :class:`DistroSVM`.
    n_rounds, n_epochs, n_init :
        As in :class:`DistroSVM`: rounds of alternation after the first
        weight pass, epochs per pass, random restarts of A (the restart
        with the lowest training objective is kept).
    features : callable or None, default=None
        ``features(sentence)`` returns, for every token, an iterable of
        feature strings, which replace the built-in features. None uses the
        paper's POS features: the word, its prefix and suffix of length 3,
        the previous and next words and the word shape, read from the
        ``form`` field with the library's one reading of tokens
        (:func:`sklearn_structured.utils.token_values`).
    tag_dictionary : int or None, default=None
        None decodes over every tag (M^2 per token). An int ``k`` prunes the
        tags a token may take, in training (loss-augmented decoding) and
        prediction: a word seen at least ``k`` times in training may take
        the tags seen with it; any other word the tags seen in training
        with words of the same 2-letter suffix, or every tag when no
        training word has that suffix. Decoding then costs the products of
        neighbouring candidate counts, which is what makes ~1,000 tags
        (morphological tags) affordable.
    n_iter_no_change, validation_fraction : int or None, float or None, default=None
        As in :class:`DistroSVM`, with the validation token accuracy
        (``validation_fraction`` holds out whole sentences).
    random_state : int, RandomState instance or None, default=None
    verbose : int, default=0
        As in :class:`DistroSVM`: a progress line per weight epoch on
        standard error (with the validation token accuracy when there is
        validation data); 2 adds the label-vector epochs.

    Attributes
    ----------
    classes_ : ndarray of the tags
    label_vectors_ : ndarray (n_components, n_tags)
    coef_ : ndarray (n_components, n_used_features)
        Emission weights, one column per feature seen in training
        (``feature_keys_``).
    intercept_ : ndarray (n_components,)
    transition_matrix_ : ndarray (n_components, n_components)
        ``T``; tag ``i`` followed by tag ``j`` scores ``a_i^T T a_j``.
    vocabularies_ : dict of Vocabulary
        Forms (``"form"``) and their prefixes, suffixes and shapes
        (``"attributes"``) of the training data; with ``features``, the
        feature strings of the training data (``"features"``).
    feature_keys_ : int64 ndarray
        Sorted hashes (:func:`sklearn_structured.kernels.hashing.feature_hash`)
        of the features seen in training; the i-th is column i of ``coef_``.
    objective_, history_ :
        As in :class:`DistroSVM`; the validation score is the token accuracy.
    dictionary_keys_, dictionary_offsets_, dictionary_labels_ : ndarray
        With ``tag_dictionary``: the entries (``"w <word>"`` or
        ``"s <suffix>"``), sorted, and the tag ids each may take
        (``dictionary_labels_[dictionary_offsets_[i]:dictionary_offsets_[i + 1]]``).
    """

    _parameter_constraints = {
        **DistroParameters._parameter_constraints,
        "features": [callable, None],
        "tag_dictionary": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, n_components=None, *, label_vectors="learned", alpha=1e-5,
                 nuclear_penalty=1e-3, label_learning_rate=0.05, init="random", n_rounds=5,
                 n_epochs=5, n_init=1, features=None, tag_dictionary=None, n_iter_no_change=None,
                 validation_fraction=None, random_state=None, verbose=0):
        super().__init__(n_components, label_vectors, alpha, nuclear_penalty, label_learning_rate,
                         init, n_rounds, n_epochs, n_init, n_iter_no_change, validation_fraction,
                         random_state, verbose)
        self.features = features
        self.tag_dictionary = tag_dictionary

    def _custom_strings(self, sentences):
        """The strings of ``features(sentence)``, one list per token."""
        per_token = []
        for i, sentence in enumerate(sentences):
            token_features = [list(f) for f in self.features(sentence)]
            if len(token_features) != len(sentence):
                raise ValueError(
                    f"features(X[{i}]) gave {len(token_features)} feature lists "
                    f"for {len(sentence)} tokens"
                )
            per_token.extend(token_features)
        return per_token

    def _fit_vocabularies(self, sentences):
        if self.features is not None:
            strings = self._custom_strings(sentences)
            return {"features": Vocabulary(f for token in strings for f in token)}
        vocabularies = fit_vocabularies(sentences, ("form",))
        vocabularies["attributes"] = word_type_vocabulary(token_values(sentences, "form"),
                                                          _word_attributes)
        return vocabularies

    def _feature_keys(self, sentences):
        """Hashed features of every token as (indptr, keys), and sentence offsets."""
        lengths = np.fromiter((len(s) for s in sentences), np.int64, len(sentences))
        offsets = np.zeros(len(sentences) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        if self.features is not None:
            strings = self._custom_strings(sentences)
            indptr = np.zeros(len(strings) + 1, np.int64)
            np.cumsum([len(token) for token in strings], out=indptr[1:])
            ids = self.vocabularies_["features"].encode(f for token in strings for f in token)
            return indptr, _sequence_kernels.custom_feature_keys(ids), offsets
        corpus = encode_corpus(sentences, {"form": self.vocabularies_["form"]})
        attributes = word_type_ids(token_values(sentences, "form"), _word_attributes,
                                   self.vocabularies_["attributes"])
        keys = _sequence_kernels.emission_feature_keys(corpus["form"], attributes, offsets)
        return np.arange(0, keys.size + 1, keys.shape[1]), keys.ravel(), offsets

    def _encode(self, sentences):
        """Token feature matrix over the features seen in training, and sentence offsets."""
        indptr, keys, offsets = self._feature_keys(sentences)
        columns = kept_positions(keys, self.feature_keys_)
        rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
        known = columns >= 0
        tokens = sp.csr_matrix(  # a feature listed twice for a token counts twice
            (np.ones(known.sum()), (rows[known], columns[known])),
            shape=(len(indptr) - 1, len(self.feature_keys_)),
        )
        tokens.sort_indices()
        return tokens, offsets

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, X_val=None, y_val=None):
        """Learn from sentences ``X`` and their tag sequences ``y``.

        Parameters
        ----------
        X : list of sentences
        y : list of tag sequences
        X_val, y_val : list of sentences and list of tag sequences, optional
            Validation data (keyword only), scored with :meth:`score` after
            every weight epoch (the averaged weights so far), for the
            progress line, the ``history_`` and, with ``n_iter_no_change``,
            keep-best.

        Returns
        -------
        self
        """
        sentences, tags = check_tagging_data(X, y)
        rng = check_random_state(self.random_state)
        sentences, tags, validation = split_validation(self, sentences, tags, X_val, y_val,
                                                       rng=rng)
        flat_tags = [tag for sequence in tags for tag in sequence]
        self.classes_ = np.unique(flat_tags)
        y_ids = class_ids(self.classes_, flat_tags)
        self.vocabularies_ = self._fit_vocabularies(sentences)
        _, keys, _ = self._feature_keys(sentences)
        self.feature_keys_ = np.unique(keys[keys >= 0])
        if self.tag_dictionary is not None:
            (self.dictionary_keys_, self.dictionary_offsets_,
             self.dictionary_labels_) = _fit_tag_dictionary(token_values(sentences, "form"),
                                                            y_ids, self.tag_dictionary)
        problem = self._problem(sentences, y_ids)
        scorer = None if validation is None else self._validation_scorer(*validation)
        self.transition_matrix_ = fit_label_model(self, problem, len(self.classes_), rng,
                                                   scorer)
        return self

    def _validation_scorer(self, X_val, y_val):
        """``score(A, V, T)``: token accuracy on the validation data of the model (A, V, T)."""
        sentences, tags = check_tagging_data(X_val, y_val)
        tokens, offsets = self._encode(sentences)
        forms = token_values(sentences, "form")

        def score(A, V, T):
            coef = np.ascontiguousarray(V[:-1].T)
            return token_accuracy(tags, self._decode(tokens, offsets, A, coef, V[-1], T, forms))

        return score

    def _candidates(self, forms):
        """The tag-dictionary candidates of every token (:class:`~._sequence_kernels.Candidates`)."""
        index = {key: i for i, key in enumerate(self.dictionary_keys_.tolist())}
        every = np.arange(len(self.classes_))
        lists = []
        for form in forms:
            i = index.get("w " + form, index.get(_suffix_key(form)))
            lists.append(every if i is None else
                         self.dictionary_labels_[self.dictionary_offsets_[i]:
                                                 self.dictionary_offsets_[i + 1]])
        return _sequence_kernels.Candidates(*pack_ragged(lists))

    def _decode(self, tokens, offsets, label_vectors, coef, intercept, transition_matrix,
                forms=None):
        """Viterbi tag sequences of encoded sentences under the given model arrays.

        With a tag dictionary, ``forms`` (every token's word) gives the candidates.
        """
        if self.tag_dictionary is not None:
            V = np.vstack([coef.T, intercept])
            flat, _ = _sequence_kernels.candidate_decode(
                _kernels.sparse_rows(tokens), V, offsets,
                np.zeros(0, np.int64), self._candidates(forms), label_vectors,
                transition_matrix, self.label_vectors == "onehot",
                int(np.max(np.diff(offsets), initial=1)))
            tags = self.classes_[flat]
            return [tags[offsets[i]:offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]
        emissions = np.ascontiguousarray((tokens @ coef.T + intercept) @ label_vectors)
        transitions = _sequence_kernels.label_transition_scores(label_vectors, transition_matrix)
        zeros = np.zeros(len(self.classes_))
        flat = viterbi_batch(emissions, offsets, transitions, zeros, zeros)
        tags = self.classes_[flat]
        return [tags[offsets[i]:offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]

    def predict(self, X):
        """The highest-scoring tag sequence of every sentence (lists of tags)."""
        check_is_fitted(self)
        sentences = check_sentences(X)
        tokens, offsets = self._encode(sentences)
        return self._decode(tokens, offsets, self.label_vectors_, self.coef_, self.intercept_,
                            self.transition_matrix_, token_values(sentences, "form"))

    def _problem(self, sentences, y_ids):
        """The training problem of encoded ``sentences`` with gold tag ids ``y_ids``:
        over every tag, or over each token's candidates with a tag dictionary."""
        tokens, offsets = self._encode(sentences)
        if self.tag_dictionary is None:
            return _SequenceProblem(tokens, offsets, y_ids)
        return _CandidateSequenceProblem(tokens, offsets, y_ids,
                                         self._candidates(token_values(sentences, "form")),
                                         self.label_vectors == "onehot")

    def candidate_tags(self, X):
        """The tags the tag dictionary lets every token take (see ``tag_dictionary``).

        A token whose gold tag is not among its candidates cannot be tagged
        right; the share of such tokens on held-out data is what a
        ``tag_dictionary`` setting costs in accuracy at the most.

        Parameters
        ----------
        X : list of sentences
            Sentences of tokens (forms or CoNLL-U dicts), as :meth:`predict`
            takes them.

        Returns
        -------
        candidates : list of list of ndarray
            Per sentence, per token, the candidate tags (a subset of
            ``classes_``, in its order); every tag when ``tag_dictionary``
            is None.
        """
        check_is_fitted(self)
        sentences = check_sentences(X)
        forms = token_values(sentences, "form")
        if self.tag_dictionary is None:
            every = self.classes_.copy()
            return [[every for _ in sentence] for sentence in sentences]
        candidates = self._candidates(forms)
        tags = [self.classes_[candidates.labels[lo:hi]]
                for lo, hi in zip(candidates.offsets[:-1], candidates.offsets[1:])]
        ends = np.cumsum([len(sentence) for sentence in sentences])
        return [tags[end - len(sentence):end] for sentence, end in zip(sentences, ends)]

    def token_features(self, X):
        """The emission features of every token, as the fitted tagger reads them.

        Another learner trained on these rows (a token classifier, a CRF)
        compares with the tagger on the same evidence.

        Parameters
        ----------
        X : list of sentences
            The sentences whose tokens become rows, as for :meth:`predict`.

        Returns
        -------
        tokens : sparse matrix of shape (n_tokens, n_used_features)
            One row per token, the sentences' tokens back to back; column
            ``j`` is the feature ``feature_keys_[j]`` (the weights
            ``coef_[:, j]``). Features unseen in training are left out.
        """
        check_is_fitted(self)
        return self._encode(check_sentences(X))[0]

    def objective(self, X, y):
        """The training objective of the fitted weights on ``(X, y)``.

        ``alpha / 2 (||W||^2 + ||b||^2 + ||T||^2) + nuclear_penalty ||A||_* +``
        the mean sentence hinge loss with Hamming cost (over the tag
        dictionary's candidates when ``tag_dictionary`` is set), with this
        model's ``alpha`` and ``nuclear_penalty``: on the training data,
        what ``objective_`` holds. Weights set from another solver
        (``coef_``, ``intercept_``, ``transition_matrix_`` of a one-hot
        model) are scored on the same scale.

        Parameters
        ----------
        X : list of sentences
        y : list of tag sequences
            Tags among ``classes_``.

        Returns
        -------
        value : float
        """
        check_is_fitted(self)
        sentences, tags = check_tagging_data(X, y)
        problem = self._problem(sentences,
                                class_ids(self.classes_, [tag for seq in tags for tag in seq]))
        V = np.vstack([self.coef_.T, self.intercept_])
        return objective(problem, self.label_vectors_, V, self.transition_matrix_, self.alpha,
                         self.nuclear_penalty)

    def score(self, X, y):
        """Token accuracy of the predicted tags."""
        return token_accuracy(y, self.predict(X))
