"""The scikit-learn estimator of the low-rank tensor parser (Lei et al., ACL 2014)."""

from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..kernels import chu_liu_edmonds_argmax, eisner_argmax, eisner_kbest_kernel
from ..kernels.eisner import nonprojective_arc_count
from ..kernels.hashing import feature_hash, kept_positions
from ..kernels.hill_climbing import ClimbSettings
from ..kernels.mst import single_root_by_penalty
from ..labelling import LabellingParserMixin
from ..metrics import attachment_score
from ..utils import (
    EpochResult,
    EpochTrainer,
    SentenceEstimator,
    Vocabulary,
    check_labelled_dependency_data,
    fit_vocabularies,
    map_ranges,
    pack_ragged,
)
from ..utils._compat import Interval, Options, StrOptions, _fit_context
from ..utils._training import check_resumable, float16_precision, prediction_weights
from ._features import (
    CORPUS_FIELDS,
    FIELD_OFFSET,
    N_ARC_BUCKETS,
    T_FORM,
    assemble_word_features,
    count_word_features,
    encode_sentences,
    word_feature_hashes,
)
from ._high_order import NO_HIGH_ORDER, third_order_decode, third_order_difference
from ._init import _PAIRS, svd_initialisation, tensor_entries
from ._kernels import Config, TokenArrays, Weights, passive_aggressive_update, sentence_arc_scores

# word features seen fewer times in the first training data get no column of U, V
MIN_WORD_FEATURE_COUNT = 2
# third-order decoding: the candidate heads' margin below a word's best arc score,
# in training and prediction, and restarts in a row without a better tree. EWT dev,
# one model trained on all of train with margin 1 / 2 (1.0 keeps 3.4 heads per
# word and misses 3.4% of the gold heads; 2.0 keeps 9.9 and misses 0.3%): UAS
# 89.28 / 89.99 parsed at margin 1 / 2 and patience 10, for 692 / 1,144 CPU s of
# training. Prediction patience 7 / 10 / 15 / 20: EWT dev 89.89 / 89.99 / 90.04 /
# 90.09, Bosque dev 90.93 / 90.96 / 91.01 / 91.01 (one model each); 15 decodes as
# fast as 7 did before the attach-score cache, 20 does not. Training on 2,000
# sentences with patience 10 instead of 3 gave no better model (dev 84.93 against
# 85.14) for 2.6 times the time.
HILL_CLIMBING = ClimbSettings(patience=15, margin=2.0, single_root=True)
TRAINING_PATIENCE = 3


def _single_root_tree(scores):
    heads, exact = single_root_by_penalty(scores)
    # the exact fallback for extreme score ranges is compiled only if needed
    return heads if exact else chu_liu_edmonds_argmax(scores, True)


# Chosen in Python, so that only the decoder in use gets compiled.
_DECODERS = {"chu_liu_edmonds": _single_root_tree, "eisner": eisner_argmax}
# decoder="auto" decodes projectively up to this share of non-projective training arcs
_MOSTLY_PROJECTIVE = 0.01
_PARAMETERS = ("theta", "U", "V", "W")


def _check_word_vectors(word_vectors):
    """``word_vectors`` as ``{word: float64 vector}``, all finite and of one dimension."""
    vectors = {}
    for word, vector in word_vectors.items():
        if not isinstance(word, str):
            raise ValueError(f"word_vectors keys must be word forms (str), got {word!r}")
        try:
            vector = np.asarray(vector, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"word_vectors[{word!r}] is not a vector of numbers") from None
        if vector.ndim != 1 or vector.size == 0:
            raise ValueError(f"word_vectors[{word!r}] must be a non-empty 1-D vector, "
                             f"got shape {vector.shape}")
        if vectors and vector.size != len(next(iter(vectors.values()))):
            raise ValueError(f"word_vectors[{word!r}] has {vector.size} dimensions; "
                             f"earlier vectors have {len(next(iter(vectors.values())))}")
        if not np.all(np.isfinite(vector)):
            raise ValueError(f"word_vectors[{word!r}] holds NaN or infinite values")
        vectors[word] = vector
    if not vectors:
        raise ValueError("word_vectors is empty; pass None to train without word vectors")
    return vectors


def _token_arrays(data):
    """The arrays of an encoded corpus that the arc-score kernels read."""
    return TokenArrays(data["form"], data["lemma"], data["tag"], data["ctag"],
                       data["wf_off"], data["wf_idx"], data["wf_val"])


def train_sentence(start, n, gold, tokens, params, sums, config, decode, counter, climb=None):
    """One passive-aggressive step on the sentence at ``start``: returns (loss, predicted heads).

    Cost-augmented decoding (score plus Hamming distance to ``gold``) finds
    the most violating tree, then :func:`passive_aggressive_update` moves
    ``params`` (and the averaging sums ``sums``, both :class:`Weights`) in
    place. The steps are separate kernels called from Python, a few
    microseconds per call: one kernel holding them all would be compiled,
    and optimised again as a whole, on first use, for seconds more. With
    ``climb`` settings (third order) the tree is found by hill climbing
    (``decode`` unused) and its third-order parts join theta's update.
    """
    scores, Uh, Vm, Wb = sentence_arc_scores(start, n, tokens, params, config)
    augmented = scores + 1.0
    augmented[gold, np.arange(1, n + 1)] -= 1.0
    if climb is not None:
        pred, scorer = third_order_decode(augmented, start, n, tokens, params.theta, config,
                                          climb._replace(seed=counter))
        high_order = third_order_difference(gold, pred, scorer)
    else:
        pred = decode(augmented)
        high_order = NO_HIGH_ORDER
    loss = passive_aggressive_update(start, n, gold, pred, scores, augmented, Uh, Vm, Wb,
                                     tokens, params, sums, config, counter, high_order)
    return loss, pred


class _PassiveAggressiveEpochs(EpochTrainer):
    """The passes of one ``fit``/``partial_fit`` call over encoded training data.

    While the tensor is not initialised (``init="svd"``), the first pass is
    the tensor-free one (gamma = 1) followed by the SVD initialisation; every
    other pass is an epoch of the model proper. Both are
    :meth:`LowRankTensorParser._epoch`.
    """

    def __init__(self, parser, data, heads):
        self.parser, self.data, self.heads = parser, data, heads

    def train_epoch(self):
        parser = self.parser
        if not parser.tensor_initialised_:
            loss, train_uas, pred = parser._epoch(self.data, self.heads, 1.0)
            parser._initialise_tensor(self.data, self.heads, pred)
            label = "init (gamma=1)"
        else:
            loss, train_uas, _ = parser._epoch(self.data, self.heads, parser.gamma)
            label = f"epoch {parser.n_iter_}"
        return EpochResult(label, loss, (("cost-augmented training UAS", train_uas),))

    def validation_score(self, validation):
        # the prediction weights are made only when used: averaging and
        # rounding every table per pass took a fifth of the demo's training
        self.parser._store_prediction_weights()
        return self.parser.score(*validation)


class LowRankTensorParser(LabellingParserMixin, SentenceEstimator):
    """First-order dependency parser with low-rank tensor arc scores (Lei et al., 2014).

    The score of an arc h -> m is

    ``(1 - gamma) * sum_i [U phi_h]_i [V phi_m]_i [W phi_hm]_i + gamma * <theta, phi_{h->m}>``

    where ``phi_h``/``phi_m`` are sparse word features of the head and the
    modifier, ``phi_hm`` the arc's direction and binned length, and
    ``phi_{h->m}`` the traditional MST-parser arc features. The score of a
    tree is the sum of its arcs; decoding finds the maximum spanning tree.
    Training is online passive-aggressive with cost-augmented decoding,
    alternating the pairs (theta, U), (theta, V), (theta, W).

    Fitted on ``(heads, deprels)`` pairs, the parser also trains the
    library's arc labeller on the gold trees (one perceptron pass per pass of
    the parser) and then predicts pairs: the tree first, then a label for
    each of its arcs, ``root`` (the label of root-attached words in
    training) on the word attached to the root and on no other word. Its
    :meth:`score` is then the LAS. Fitted on heads alone it is the
    unlabelled parser.

    Parameters
    ----------
    rank : int, default=50
        Rank r of the tensor (rows of U, V and W).
    gamma : float in [0, 1], default=0.3
        Weight of the traditional features; ``gamma=1`` is the tensor-free
        "NT-1st" parser, ``gamma=0`` the tensor alone.
    C : float, default=1.0
        Largest passive-aggressive step.
    n_epochs : int, default=10
        Passes over the training data. With ``init="svd"`` (and gamma < 1),
        one tensor-free pass precedes them to initialise the tensor.
    decoder : {"auto", "chu_liu_edmonds", "eisner"}, default="auto"
        Non-projective maximum spanning tree, or projective Eisner.
        ``"auto"`` takes Eisner when at most 1% of the training arcs are
        non-projective, else Chu-Liu-Edmonds (the choice is ``decoder_``): on
        nearly projective treebanks the projective constraint corrects more
        arcs than it forbids (EWT dev +0.6 UAS, +0.9 LAS; see the user guide).
    init : {"svd", "random"}, default="svd"
        Tensor initialisation: the paper's SVD of the unfolded weights of a
        tensor-free epoch, or small Gaussian values.
    average : bool, default=True
        Predict with the parameters averaged over all updates.
    use_pos : bool, default=True
        Use part-of-speech tags (XPOS, falling back to UPOS) in the features.
    word_vectors : mapping of str to 1-D array, default=None
        Optional embeddings; the vectors of a word and of its two neighbours
        are appended to its word features as real values.
    n_features : int, default=2**22
        Hash buckets of the traditional arc features (length of theta).
    order : {1, 3}, default=1
        1: arc-factored scores, decoded exactly. 3: the paper's third-order
        model, whose theta also weighs consecutive siblings, grandparents,
        grand-siblings, tri-siblings and head bigrams, decoded by randomized
        hill climbing (Zhang et al., 2014) restarted from ``decoder_``'s best
        trees under perturbed arc scores, which keeps to projective trees
        when ``decoder_`` is Eisner. The paper trains it with ``C=0.01``;
        on EWT dev ``C=1`` did better (84.65 against 84.04 UAS, 2,000
        training sentences, 2 epochs).
    random_state : int, RandomState or None, default=None
        Seeds the randomized SVD and the random initialisation.
    verbose : int, default=0
        Print one progress line per pass: seconds, mean passive-aggressive
        loss, the validation UAS (a fraction, as :meth:`score` returns it)
        when ``fit`` has ``X_val``, and the UAS of the cost-augmented
        decoding on the training data.
    n_jobs : int or None, default=None
        Threads used by ``predict`` and ``predict_nbest``.

    Attributes
    ----------
    theta_ : ndarray of shape (n_features,), float64 holding float16 values
        Weights of the hashed traditional arc features (averaged if ``average``).
    U_, V_ : ndarray of shape (``n_word_features_``, rank), float64 (float16 values)
        Head and modifier projections, stored feature-major (``U_.T`` is the
        paper's U).
    W_ : ndarray of shape (n_arc_buckets, rank), float64 (float16 values)
        Arc-feature projection (direction x length buckets, root and bias).
    training_state_ : dict or None
        What training goes on from (float64 current weights and running
        sums of the average, keyed ``"current"`` and ``"sums"``): kept by
        :meth:`partial_fit`, None after :meth:`fit`, whose model predicts
        only.
    n_word_features_ : int
        Columns of the word-feature space (hashed templates seen at least
        twice in the first training data, plus 3 x the word-vector dimension).
    decoder_ : {"chu_liu_edmonds", "eisner"}
        The first-order decoder used in training and prediction (``decoder``,
        or what ``"auto"`` chose from the first training data).
    n_iter_ : int
        Passes over training data so far, counting the initialisation pass.
    labeller_ : dict or None
        The fitted arc labeller (relation labels, root label, vocabularies
        and perceptron weights as plain arrays) when fitted on pairs; None
        when fitted on heads alone.
    """

    _parameter_constraints = {
        "rank": [Interval(Integral, 1, None, closed="left")],
        "gamma": [Interval(Real, 0, 1, closed="both")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "n_epochs": [Interval(Integral, 1, None, closed="left")],
        "decoder": [StrOptions({"auto", *_DECODERS})],
        "init": [StrOptions({"svd", "random"})],
        "average": ["boolean"],
        "use_pos": ["boolean"],
        "word_vectors": [Mapping, None],
        "n_features": [Interval(Integral, 16, 2**40, closed="both")],
        "order": [Options(Integral, {1, 3})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        rank=50,
        gamma=0.3,
        C=1.0,
        n_epochs=10,
        decoder="auto",
        init="svd",
        average=True,
        use_pos=True,
        word_vectors=None,
        n_features=2**22,
        order=1,
        random_state=None,
        verbose=0,
        n_jobs=None,
    ):
        self.rank = rank
        self.gamma = gamma
        self.C = C
        self.n_epochs = n_epochs
        self.decoder = decoder
        self.init = init
        self.average = average
        self.use_pos = use_pos
        self.word_vectors = word_vectors
        self.n_features = n_features
        self.order = order
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs


    # ------------------------------------------------------------ encoding

    def _set_feature_spaces(self, sentences):
        """Vocabularies and word-feature table, from the first training data."""
        self.vocabularies_ = fit_vocabularies(sentences, CORPUS_FIELDS)
        if self.word_vectors is not None:
            vectors = _check_word_vectors(self.word_vectors)
            self.vector_vocabulary_ = Vocabulary(vectors)
            dim = len(next(iter(vectors.values())))
            table = np.zeros((len(self.vector_vocabulary_) + FIELD_OFFSET, dim))
            for word, vector in vectors.items():
                table[self.vector_vocabulary_.stoi[word] + FIELD_OFFSET] = vector
            self.word_vector_table_ = table
        else:
            self.vector_vocabulary_ = None
            self.word_vector_table_ = np.zeros((FIELD_OFFSET, 0))
        encoded = encode_sentences(sentences, self.vocabularies_, self.vector_vocabulary_)
        hashes, counts = np.unique(self._word_hashes(encoded)[1], return_counts=True)
        self.word_feature_table_ = hashes[counts >= MIN_WORD_FEATURE_COUNT]
        self.n_word_features_ = len(self.word_feature_table_) + 3 * self.word_vector_table_.shape[1]
        return encoded

    def _word_hashes(self, encoded):
        counts = count_word_features(encoded["sent_off"], encoded["morph_off"], self.use_pos)
        hash_off = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=hash_off[1:])
        hashes = word_feature_hashes(encoded["sent_off"], encoded["form"], encoded["lemma"],
                                     encoded["tag"], encoded["morph_off"], encoded["morph"],
                                     self.use_pos, hash_off)
        return hash_off, hashes

    def _encode(self, sentences, encoded=None):
        """Integer fields plus ragged word-feature columns of sentences."""
        if encoded is None:
            encoded = encode_sentences(sentences, self.vocabularies_, self.vector_vocabulary_)
        hash_off, hashes = self._word_hashes(encoded)
        table = self.word_feature_table_
        columns = kept_positions(hashes, table)
        vector_id = encoded.get("vector_id", encoded["form"])
        encoded["wf_off"], encoded["wf_idx"], encoded["wf_val"] = assemble_word_features(
            encoded["sent_off"], hash_off, columns, vector_id, self.word_vector_table_,
            len(table))
        return encoded

    # ------------------------------------------------------------ training

    def _initialise(self, sentences):
        encoded = self._set_feature_spaces(sentences)
        rng = check_random_state(self.random_state)
        shapes = {
            "theta": (self.n_features,),
            "U": (self.n_word_features_, self.rank),
            "V": (self.n_word_features_, self.rank),
            "W": (N_ARC_BUCKETS, self.rank),
        }
        current = {name: np.zeros(shape) for name, shape in shapes.items()}
        if self.init == "random" and self.gamma < 1:
            for name in ("U", "V", "W"):
                current[name] = rng.normal(scale=0.1, size=shapes[name])
        self.training_state_ = {"current": current,
                                "sums": {name: np.zeros_like(v) for name, v in current.items()}}
        self.n_updates_ = 0
        self.n_iter_ = 0
        self.tensor_initialised_ = self.init == "random" or self.gamma == 1
        return encoded

    def _store_prediction_weights(self):
        """``theta_``, ``U_``, ``V_``, ``W_`` from the training state.

        Rounded to float16 values, so the saved model is a quarter of
        float64's size, and on EWT dev the parse is the same (2 of 25,147
        heads change, UAS/LAS equal to 0.01; issue 13). They are held as
        float64, the dtype training scores with, so that the scoring kernels
        compile once rather than once per dtype (about 5 s of the first run).
        """
        current, sums = self.training_state_["current"], self.training_state_["sums"]
        for name in _PARAMETERS:
            weights = float16_precision(prediction_weights(
                current[name], sums[name], self.n_updates_, self.average))
            setattr(self, name + "_", weights.astype(np.float64))

    def _epoch(self, data, heads, gamma):
        """One pass of passive-aggressive updates; returns (mean loss, training UAS)."""
        current, acc = self.training_state_["current"], self.training_state_["sums"]
        sent_off = data["sent_off"]
        tokens = _token_arrays(data)
        params = Weights(*(current[name] for name in _PARAMETERS))
        sums = Weights(*(acc[name] for name in _PARAMETERS))
        config = self._config(gamma)
        decode = _DECODERS[self.decoder_]
        climb = self._climb_settings(TRAINING_PATIENCE) if self.order == 3 else None
        pred = np.zeros_like(heads)
        losses = np.zeros(len(sent_off) - 1)
        counter = self.n_updates_
        for s in range(len(losses)):
            start = sent_off[s]
            n = sent_off[s + 1] - start - 1
            lo = start - s  # flat token offset: no root slot in heads and pred
            losses[s], pred[lo:lo + n] = train_sentence(
                start, n, heads[lo:lo + n], tokens, params, sums, config, decode, counter,
                climb)
            counter += 1
        self.n_updates_ = counter
        self.n_iter_ += 1
        return losses.mean(), float(np.mean(pred == heads)), pred

    def _initialise_tensor(self, data, heads, pred):
        """SVD initialisation from the tensor-free weights (gold and predicted arcs)."""
        sent_off = data["sent_off"]
        lengths = np.diff(sent_off) - 1
        sentence_of = np.repeat(np.arange(len(lengths)), lengths)
        modifier = np.arange(len(heads)) - (sent_off[sentence_of] - sentence_of) + 1
        arcs_h = np.concatenate([heads, pred])
        arcs_m = np.concatenate([modifier, modifier])
        arcs_sent = np.concatenate([sentence_of, sentence_of])
        entries = tensor_entries(sent_off, (arcs_sent, arcs_h, arcs_m), _token_arrays(data),
                                 self.word_feature_table_, self.training_state_["current"]["theta"],
                                 self._config(self.gamma), _PAIRS)
        rng = check_random_state(self.random_state)
        U, V, W = svd_initialisation(entries, self.n_word_features_, self.rank, rng)
        current, sums = self.training_state_["current"], self.training_state_["sums"]
        current.update(U=U, V=V, W=W)
        # the average starts with the model proper, after the initialisation pass
        for name in _PARAMETERS:
            sums[name] = np.zeros_like(current[name])
        self.n_updates_ = 0
        self.tensor_initialised_ = True

    def _run_epochs(self, data, heads, n_epochs, X_val, y_val):
        # the tensor-free initialisation pass, if still due, comes before the n_epochs
        n_passes = n_epochs + (0 if self.tensor_initialised_ else 1)
        _PassiveAggressiveEpochs(self, data, heads).run(
            n_passes, name=type(self).__name__, verbose=self.verbose,
            validation=None if X_val is None else (X_val, y_val))
        self._store_prediction_weights()

    def _training_data(self, X, y, reset):
        sentences, heads, deprels = check_labelled_dependency_data(X, y)
        encoded = self._initialise(sentences) if reset else None
        data = self._encode(sentences, encoded)
        flat, offsets = pack_ragged(heads)
        if reset:
            self.decoder_ = self._choose_decoder(flat, offsets)
        return data, flat, (sentences, heads, deprels)

    def _choose_decoder(self, heads, offsets):
        """The decoder to train and parse with: ``decoder``, or the choice of ``"auto"``
        (``heads``, ``offsets``: the training trees packed by :func:`pack_ragged`)."""
        if self.decoder != "auto":
            return self.decoder
        share = nonprojective_arc_count(heads, offsets) / max(len(heads), 1)
        return "eisner" if share <= _MOSTLY_PROJECTIVE else "chu_liu_edmonds"

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, X_val=None, y_val=None):
        """Train for ``n_epochs`` passes from scratch.

        Parameters
        ----------
        X : list of sentences
            Each a sequence of tokens (str forms or dicts of CoNLL-U fields).
        y : list of int arrays, or of (heads, deprels) pairs
            Gold heads, 1-based, 0 for the root; with their relation labels
            (a sequence of str per sentence) to train the labeller too.
        X_val, y_val : list of sentences and list of int arrays (or pairs), optional
            Validation data (keyword only), scored with :meth:`score` after
            every pass for the progress line when ``verbose`` is set; it does
            not change the model.

        Returns
        -------
        self
        """
        data, heads, labelled = self._training_data(X, y, reset=True)
        self._fit_labels(*labelled, self.n_epochs, reset=True, keep_training_state=False)
        self._run_epochs(data, heads, self.n_epochs, X_val, y_val)
        self.training_state_ = None  # only partial_fit needs it; it would double the model
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, *, X_val=None, y_val=None):
        """One more pass over ``(X, y)``; the first call also fixes the feature spaces.

        ``k`` calls equal ``fit`` with ``n_epochs=k`` on the same data;
        ``X_val``, ``y_val`` as in :meth:`fit`. With ``(heads, deprels)``
        pairs the labeller makes one more pass too. The model keeps its
        training state (``training_state_``) so that it can go on; a model
        trained by :meth:`fit` keeps only its prediction weights, and
        ``partial_fit`` on it raises ``ValueError``.
        """
        reset = not hasattr(self, "theta_")
        if not reset:
            check_resumable(self, self.training_state_)
        data, heads, labelled = self._training_data(X, y, reset=reset)
        self._fit_labels(*labelled, 1, reset=reset, keep_training_state=True)
        self._run_epochs(data, heads, 1, X_val, y_val)
        return self

    # ---------------------------------------------------------- prediction

    def _predict_data(self, X, vocabularies=None):
        """Validated sentences and their encoding, packed with ``vocabularies`` (default:
        the parser's; more fields may be packed for the labeller)."""
        check_is_fitted(self, "theta_")
        sentences = self._check_prediction_input(X)
        encoded = encode_sentences(sentences, vocabularies or self.vocabularies_,
                                   self.vector_vocabulary_)
        return sentences, self._encode(sentences, encoded)

    def _config(self, gamma):
        return Config(float(gamma), float(self.C), int(self.n_features), bool(self.use_pos))

    def _sentence_scores(self, data, s):
        """Arc score matrix of sentence ``s`` of an encoded corpus, under the fitted weights."""
        start = data["sent_off"][s]
        n = data["sent_off"][s + 1] - start - 1
        weights = Weights(self.theta_, self.U_, self.V_, self.W_)
        return sentence_arc_scores(start, n, _token_arrays(data), weights,
                                   self._config(self.gamma))[0]

    def _decode(self, data, s):
        """Heads of sentence ``s`` of an encoded corpus."""
        scores = self._sentence_scores(data, s)
        if self.order == 1:
            return _DECODERS[self.decoder_](scores)
        start = data["sent_off"][s]
        # one seed for every sentence: a parse does not depend on the batch
        return third_order_decode(scores, start, data["sent_off"][s + 1] - start - 1,
                                  _token_arrays(data), self.theta_, self._config(self.gamma),
                                  self._climb_settings(HILL_CLIMBING.patience))[0]

    def _climb_settings(self, patience):
        """Hill-climbing settings; the search keeps to projective trees when the
        first-order decoder does."""
        return HILL_CLIMBING._replace(patience=patience, projective=self.decoder_ == "eisner")

    def _map_sentences(self, data, function):
        """``[function(s) for s in sentences]`` over contiguous ranges, one per thread.

        The kernels release the GIL, so the threads decode in parallel.
        """
        chunks = map_ranges(lambda lo, hi: [function(s) for s in range(lo, hi)],
                            len(data["sent_off"]) - 1, self.n_jobs)
        return [result for chunk in chunks for result in chunk]

    def predict(self, X):
        """Heads of every sentence (list of int64 arrays, 1-based, 0 = root).

        A parser fitted on ``(heads, deprels)`` pairs returns pairs: the
        heads and a list of relation labels (str) per sentence.
        """
        check_is_fitted(self, "theta_")
        # one packed corpus for the parser and its labeller, when their vocabularies agree
        shared = self._labeller_vocabularies(self.vocabularies_)
        sentences, data = self._predict_data(X, shared)
        heads = self._map_sentences(data, lambda s: self._decode(data, s))
        return self._with_labels(sentences, heads, None if shared is None else data["corpus"])

    def tag_fields(self):
        """The tag fields the parser reads, preferred first (the other is its fall-back)."""
        return ("xpos", "upos") if self.use_pos else ()

    def predict_nbest(self, X, k):
        """The ``k`` best projective trees of every sentence, best first (unlabelled).

        Returns, per sentence, a list of ``(heads, score)`` pairs (fewer than
        ``k`` when the sentence has fewer projective trees); ``score`` is the
        sum of the tree's arc scores. Uses projective k-best decoding
        (Eisner hypergraph) whatever ``decoder`` is.
        """
        if not isinstance(k, Integral) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        _, data = self._predict_data(X)

        def nbest(s):
            trees, tree_scores = eisner_kbest_kernel(self._sentence_scores(data, s), int(k))
            return [(trees[j], float(tree_scores[j])) for j in range(len(tree_scores))]

        return self._map_sentences(data, nbest)

    def arc_scores(self, sentence):
        """Arc score matrix of one sentence: ``scores[h, m]`` for h in 0..n, m in 1..n.

        Column 0 and the diagonal (impossible arcs) are ``-inf``.
        """
        _, data = self._predict_data([sentence])
        scores = self._sentence_scores(data, 0)
        scores[:, 0] = -np.inf
        np.fill_diagonal(scores, -np.inf)
        return scores

    def word_embeddings(self, words, role="head"):
        """Learned low-rank vectors of word forms: rows of ``U_`` (heads) or ``V_`` (modifiers).

        The row of the word's form template (its own form, not its
        context), shape (len(words), rank); zero rows for forms unseen in
        training. Neighbours in this space are words the tensor treats
        alike (Lei et al. 2014, Table 5).
        """
        check_is_fitted(self, "theta_")
        if role not in ("head", "modifier"):
            raise ValueError(f"role must be 'head' or 'modifier', got {role!r}")
        matrix = self.U_ if role == "head" else self.V_
        ids = self.vocabularies_["form"].encode(words) + FIELD_OFFSET
        keys = np.array([feature_hash(T_FORM, i, 0, 0, 0, 0) for i in ids], dtype=np.int64)
        table = self.word_feature_table_
        columns = np.minimum(np.searchsorted(table, keys), len(table) - 1)
        known = (table[columns] == keys) & (ids != FIELD_OFFSET)
        out = np.zeros((len(ids), self.rank))
        out[known] = matrix[columns[known]]
        return out

    def score(self, X, y):
        """Attachment score without punctuation (a fraction in [0, 1]).

        LAS when the parser was fitted on pairs and ``y`` holds
        ``(heads, deprels)`` pairs, UAS otherwise.
        """
        return attachment_score(y, self.predict(X), X=X, punct="exclude")
