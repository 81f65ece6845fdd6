"""The scikit-learn estimator of the low-rank tensor parser (Lei et al., ACL 2014)."""

import os
import sys
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from ..annotation import ParserAnnotator
from ..fields import XPOS, tag_fallback
from ..kernels import chu_liu_edmonds_argmax, eisner_argmax, eisner_kbest_kernel
from ..kernels.eisner import nonprojective_arc_count
from ..kernels.hill_climbing import ClimbSettings
from ..kernels.mst import single_root_by_penalty
from ..labelling import LabellingParserMixin
from ..metrics import attachment_score
from ..utils import (
    EARLY_STOPPING_CONSTRAINTS,
    EpochResult,
    EpochTrainer,
    SentenceEstimator,
    check_labelled_dependency_data,
    map_ranges,
    pack_ragged,
    perceptron_state,
    prediction_weights,
    split_validation,
)
from ..utils._base import check_fitted
from ..utils._compat import Interval, Options, StrOptions, _fit_context
from ..utils._persistence import _Decoder, _Encoder
from ..utils._training import check_resumable, float16_precision
from ._encoding import Encoding, encode, fit_encoding, form_columns, with_feats_in_fine_tag
from ._features import N_ARC_BUCKETS
from ._high_order import NO_HIGH_ORDER, part_scorer, third_order_decode, third_order_difference
from ._init import _PAIRS, svd_initialisation, tensor_entries
from ._kernels import (
    ALL_ARCS,
    PRUNED_SCORE,
    Config,
    TokenArrays,
    Weights,
    passive_aggressive_update,
    sentence_arc_scores,
)
from ._pruning import kept_arcs, pruner_scores, train_pruner

# third-order decoding: the candidate heads' margin below a word's best arc score,
# in training and prediction, and restarts in a row without a better tree (in
# prediction; training's patience is shorter). The user guide's third-order section
# gives the measurements they were chosen by.
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
# the tag fields the features read, the fine tag first
_POS_FIELDS = (XPOS, tag_fallback(XPOS))


# the gold heads kept_arcs adds in prediction: none
_NO_HEADS = np.zeros(0, dtype=np.int64)

# the fitted arrays that pickles hold as the safe model format does (see __getstate__)
_COMPACT_IN_PICKLES = tuple(name + "_" for name in _PARAMETERS) + ("pruner_theta_",)


def _token_arrays(data):
    """The arrays of an encoded corpus that the arc-score kernels read."""
    return TokenArrays(data["form"], data["lemma"], data["xpos"], data["upos"],
                       data["wf_off"], data["wf_idx"], data["wf_val"])


def train_sentence(start, n, gold, tokens, params, sums, config, decode, counter, climb=None,
                   keep=ALL_ARCS):
    """One passive-aggressive step on the sentence at ``start``: returns (loss, predicted heads).

    Cost-augmented decoding (score plus Hamming distance to ``gold``) finds
    the most violating tree, then :func:`passive_aggressive_update` moves
    ``params`` (and the averaging sums ``sums``, both :class:`Weights`) in
    place. The steps are separate kernels called from Python, a few
    microseconds per call: one kernel holding them all would be compiled,
    and optimised again as a whole, on first use, for seconds more. With
    ``climb`` settings (third order) the tree is found by hill climbing
    (``decode`` unused) and its third-order parts join theta's update. ``keep``:
    the arcs the pruner kept (all by default).
    """
    scores, Uh, Vm, Wb = sentence_arc_scores(start, n, tokens, params, config, keep)
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
    other pass is an epoch of the model proper (both are
    :meth:`LowRankTensorParser._epoch`) and, when the parser learns labels,
    a pass of its arc labeller too (``labels``, the labeller's
    :class:`~sklearn_structured.labelling._labeller.LabellerEpochs`): one
    record, one progress line and one keep-best snapshot for both, so that
    the validation LAS scores the tree and the labels of the same epoch.
    """

    def __init__(self, parser, data, heads, labels, rng, keep):
        self.parser, self.data, self.heads, self.labels = parser, data, heads, labels
        self.rng, self.keep = rng, keep
        self.history = parser.history_
        # the pass just made was the initialisation, before the labels' first epoch
        self.labels_untrained = False

    def train_epoch(self):
        parser = self.parser
        self.labels_untrained = False
        if not parser.tensor_initialised_:
            loss, train_uas, pred = parser._epoch(self.data, self.heads, 1.0, self.keep)
            parser._initialise_tensor(self.data, self.heads, pred, self.rng)
            self.labels_untrained = self.labels is not None
            return EpochResult("init (gamma=1)", loss, (("cost-augmented training UAS", train_uas),))
        loss, train_uas, _ = parser._epoch(self.data, self.heads, parser.gamma, self.keep)
        fields = (("cost-augmented training UAS", train_uas),)
        if self.labels is not None:
            labels = self.labels.train_epoch()
            fields += (("label error rate", labels.loss), *labels.fields)
        # the epochs of the model proper, as n_epochs counts them: the init pass is not one
        return EpochResult(f"epoch {parser.n_iter_ - self.init_passes}", loss, fields)

    @property
    def init_passes(self):
        """The passes of ``n_iter_`` that were the tensor-free initialisation (0 or 1)."""
        return int(self.parser.init == "svd" and self.parser.gamma != 1)

    def validation_score(self, validation):
        if self.labels_untrained:
            # the LAS of labels not yet trained (about 0.05) says nothing: not scored
            return None
        # the prediction weights are made only when used: averaging and
        # rounding every table per pass took a fifth of the demo's training
        self.parser._store_prediction_weights()
        if self.labels is not None:
            self.labels.store()
        return self.parser.score(*validation)

    def snapshot(self):
        state = self.parser.training_state_
        return ({part: {name: array.copy() for name, array in state[part].items()}
                 for part in ("weights", "sums")}, state["count"].copy(),
                None if self.labels is None else self.labels.snapshot())

    def restore(self, snapshot):
        arrays, count, labels = snapshot
        self.parser.training_state_ = {**arrays, "count": count}
        if labels is not None:
            self.labels.restore(labels)


class LowRankTensorParser(ParserAnnotator, LabellingParserMixin, SentenceEstimator):
    """Dependency parser with low-rank tensor arc scores (Lei et al., 2014), first or third order.

    The score of an arc h -> m is

    ``(1 - gamma) * sum_i [U phi_h]_i [V phi_m]_i [W phi_hm]_i + gamma * <theta, phi_{h->m}>``

    where ``phi_h``/``phi_m`` are sparse word features of the head and the
    modifier, ``phi_hm`` the arc's direction and binned length, and
    ``phi_{h->m}`` the traditional MST-parser arc features. The score of a
    tree is the sum of its arcs; decoding finds the maximum spanning tree.
    Training is online passive-aggressive with cost-augmented decoding,
    alternating the pairs (theta, U), (theta, V), (theta, W).

    Fitted on ``(heads, deprels)`` pairs, the parser also trains the
    library's arc labeller on the gold trees (one perceptron pass in each
    epoch of the parser, after the initialisation pass) and then predicts pairs: the tree first, then a label for
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
        arcs than it forbids (the user guide compares the two).
    init : {"svd", "random"}, default="svd"
        Tensor initialisation: the paper's SVD of the unfolded weights of a
        tensor-free epoch, or small Gaussian values.
    average : bool, default=True
        Predict with the parameters averaged over all updates.
    pos : ("xpos", "upos") or None, default=("xpos", "upos")
        The tag fields the features read, by their CoNLL-U names: XPOS as
        the fine tag and UPOS as the coarse tag (a missing one falls back on
        the other, then on the form); None reads no tags (word features
        only). The same parameter as
        :class:`~sklearn_structured.easy_first.EasyFirstBeamParser`'s
        ``pos``, whose features read one field; this parser's read both.
        ``"both"``, the old name of ``("xpos", "upos")``, is deprecated and
        will stop working in the next release.
    tag_feats : tuple of str or None, default=None
        Names of FEATS features (such as ``("Case", "Number", "Gender",
        "VerbForm")``) whose values join the fine tag: a word's XPOS (UPOS
        when it has none) is read as, say, ``Noun|Case=Nom|Number=Sing``, by
        the arc features and the labeller alike. Where the XPOS carries
        little morphology (Turkish IMST's), the arc templates then see what
        marks a word's role. None (or empty) reads the tags as they are.
        :func:`~sklearn_structured.make_parsing_pipeline` sets it when it
        tags FEATS.
    word_vectors : mapping of str to 1-D array, path or None, default=None
        Optional embeddings, or the path of a file of them (word2vec,
        fastText or GloVe text, read once per process, see
        :func:`~sklearn_structured.word_vectors.vectors_of_file`), e.g.
        learned from unannotated text by
        :class:`~sklearn_structured.word_vectors.PPMIWordVectors`. A word is
        looked up by its form, then lower-cased; the vectors of a word and of
        its two neighbours are appended to its word features as real values.
        The fitted parser keeps them at float16 precision, so prediction needs
        nothing more, and a path keeps the model file small (a mapping is
        saved with the parameters).
    n_features : int, default=2**22
        Hash buckets of the traditional arc features (length of theta).
    order : {1, 3}, default=1
        1: arc-factored scores, decoded exactly. 3: the paper's third-order
        model, whose theta also weighs consecutive siblings, grandparents,
        grand-siblings, tri-siblings and head bigrams, decoded by randomized
        hill climbing (Zhang et al., 2014) restarted from ``decoder_``'s best
        trees under perturbed arc scores, which keeps to projective trees
        when ``decoder_`` is Eisner. The paper trains it with ``C=0.01``
        (the user guide compares that with the default).
    prune_margin : float or None, default=None
        Arc pruning, as in the paper's code: ``fit`` first trains a cheap
        first-order pruner (a third of the arc features, no in-between tags,
        ten passes in which each word picks its head on its own), and the
        full model then scores, in training and prediction, only the arcs
        whose pruner score is within ``prune_margin`` of the word's best
        head, at most ``prune_max_heads`` of them (training also keeps the
        gold arcs). The other arcs score so low that a tree uses one only
        when the kept arcs make no tree. Sentences of at most
        ``prune_max_heads`` words are scored in full. None scores every arc.
    prune_max_heads : int, default=20
        The most heads kept per word when pruning.
    n_iter_no_change : int or None, default=None
        With validation data (``X_val`` or ``validation_fraction``), stop
        after this many passes without a better validation score and keep
        the parameters (and the labeller's) of the best pass. None runs all
        ``n_epochs``.
    validation_fraction : float in (0, 1) or None, default=None
        Hold out this fraction of the training sentences (drawn with
        ``random_state``) as validation data, instead of giving ``X_val``.
    random_state : int, RandomState or None, default=None
        Seeds, through one generator per ``fit`` call, the
        ``validation_fraction`` split, the random initialisation, the
        labeller's order of sentences and the randomized SVD.
    verbose : int, default=0
        Print one progress line per pass on standard error: seconds, mean
        passive-aggressive loss, the validation score (a fraction, as
        :meth:`score` returns it) when there is validation data, the UAS of
        the cost-augmented decoding on the training data and, when labels
        are learnt, the labeller's errors on the pass.
    n_jobs : int or None, default=None
        Threads used by ``predict`` and ``predict_nbest``.

    Attributes
    ----------
    theta_ : ndarray of shape (n_features,), float32 holding float16 values
        Weights of the hashed traditional arc features (averaged if ``average``).
    U_, V_ : ndarray of shape (``n_word_features_``, rank), float32 (float16 values)
        Head and modifier projections, stored feature-major (``U_.T`` is the
        paper's U).
    W_ : ndarray of shape (n_arc_buckets, rank), float32 (float16 values)
        Arc-feature projection (direction x length buckets, root and bias).
    training_state_ : dict or None
        What training goes on from: the averaged-perceptron state of
        :func:`~sklearn_structured.utils.perceptron_state` over ``"theta"``,
        ``"U"``, ``"V"``, ``"W"`` (float64 weights, running sums, and the
        count of updates since the average started). Kept by
        :meth:`partial_fit`, None after :meth:`fit`, whose model predicts
        only.
    history_ : list of dict
        One record per pass (the initialisation pass included): ``epoch``,
        ``label``, ``loss``, ``seconds``, ``elapsed``, ``validation_score``
        (None without validation data), ``cost-augmented_training_UAS`` and,
        when labels are learnt, ``label_error_rate`` and ``label_errors``.
        :meth:`fit` starts it afresh, :meth:`partial_fit` continues it.
    n_word_features_ : int
        Columns of the word-feature space (hashed templates seen at least
        twice in the first training data, plus 3 x the word-vector dimension).
    decoder_ : {"chu_liu_edmonds", "eisner"}
        The first-order decoder used in training and prediction (``decoder``,
        or what ``"auto"`` chose from the first training data).
    n_iter_ : int
        Passes over training data so far, counting the initialisation pass.
    tag_feats_ : tuple of str
        The FEATS names joined to the fine tag in training (``tag_feats``),
        which prediction joins too; empty when none are.
    pruner_theta_ : ndarray of shape (2**20,), float32 holding float16 values, or None
        The pruner's weights (with ``prune_margin``); None without pruning.
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
        "pos": [Options(tuple, {_POS_FIELDS}), StrOptions({"both"}, deprecated={"both"}), None],
        "tag_feats": [tuple, list, None],
        "word_vectors": [Mapping, str, os.PathLike, None],
        "n_features": [Interval(Integral, 16, 2**40, closed="both")],
        "order": [Options(Integral, {1, 3})],
        "prune_margin": [Interval(Real, 0, None, closed="left"), None],
        "prune_max_heads": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "n_jobs": [Integral, None],
        **EARLY_STOPPING_CONSTRAINTS,
    }
    _renamed_params = {"pos": ("pos", lambda pos: _POS_FIELDS if pos == "both" else pos)}

    def __init__(
        self,
        rank=50,
        *,
        gamma=0.3,
        C=1.0,
        n_epochs=10,
        decoder="auto",
        init="svd",
        average=True,
        pos=_POS_FIELDS,
        tag_feats=None,
        word_vectors=None,
        n_features=2**22,
        order=1,
        prune_margin=None,
        prune_max_heads=20,
        n_iter_no_change=None,
        validation_fraction=None,
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
        self.pos = pos
        self.tag_feats = tag_feats
        self.word_vectors = word_vectors
        self.n_features = n_features
        self.order = order
        self.prune_margin = prune_margin
        self.prune_max_heads = prune_max_heads
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs


    # ------------------------------------------------------------ training

    def _encoding(self):
        """The fitted :class:`~._encoding.Encoding`."""
        return Encoding(self.vocabularies_, self.vector_vocabulary_, self.word_vector_table_,
                        self.word_feature_table_, self.pos is not None)

    def _checked_tag_feats(self):
        """``tag_feats`` as a tuple of names (empty when the tags are not read)."""
        names = tuple(self.tag_feats or ())
        if not all(isinstance(name, str) and name and "=" not in name and "|" not in name
                   for name in names):
            raise ValueError(f"tag_feats must hold FEATS feature names such as 'Case', "
                             f"got {self.tag_feats!r}")
        return names if self.pos is not None else ()

    def _fitted_tag_feats(self):
        # models fitted before tag_feats existed join no FEATS to the tag
        return getattr(self, "tag_feats_", ())

    def _given_word_vectors(self):
        """``word_vectors`` as a mapping (a path's read once per process)."""
        if isinstance(self.word_vectors, (str, os.PathLike)):
            from ..word_vectors import vectors_of_file

            return vectors_of_file(self.word_vectors)
        return self.word_vectors

    def _initialise(self, encoding, rng):
        """Fitted encoding and initial training state, from the first training data's encoding."""
        (self.vocabularies_, self.vector_vocabulary_, self.word_vector_table_,
         self.word_feature_table_) = encoding[:4]
        self.n_word_features_ = encoding.n_word_features
        shapes = {
            "theta": (self.n_features,),
            "U": (self.n_word_features_, self.rank),
            "V": (self.n_word_features_, self.rank),
            "W": (N_ARC_BUCKETS, self.rank),
        }
        initial = {name: np.zeros(shape) for name, shape in shapes.items()}
        if self.init == "random" and self.gamma < 1:
            for name in ("U", "V", "W"):
                initial[name] = rng.normal(scale=0.1, size=shapes[name])
        self.training_state_ = perceptron_state(initial)
        self.n_iter_ = 0
        self.tensor_initialised_ = self.init == "random" or self.gamma == 1

    def _store_prediction_weights(self):
        """``theta_``, ``U_``, ``V_``, ``W_`` from the training state.

        float32 rounded to float16 values, so the saved model is a quarter of
        float64's size and parses as well (the user guide gives the
        measurement). The scoring kernels
        add them up in float64, so they score exactly as the same values
        held in float64 did; the price is a second compilation of those
        kernels (training scores with the float64 training state), paid once
        thanks to numba's cache.
        """
        for name in _PARAMETERS:
            setattr(self, name + "_", float16_precision(
                prediction_weights(self.training_state_, name, self.average)))

    def _epoch(self, data, heads, gamma, keep):
        """One pass of passive-aggressive updates; returns (mean loss, training UAS, heads).

        ``keep``: the kept arcs of each sentence, or None without pruning."""
        state = self.training_state_
        sent_off = data["sent_off"]
        tokens = _token_arrays(data)
        params = Weights(*(state["weights"][name] for name in _PARAMETERS))
        sums = Weights(*(state["sums"][name] for name in _PARAMETERS))
        config = self._config(gamma)
        decode = _DECODERS[self.decoder_]
        climb = self._climb_settings(TRAINING_PATIENCE) if self.order == 3 else None
        pred = np.zeros_like(heads)
        losses = np.zeros(len(sent_off) - 1)
        counter = int(state["count"][0])
        for s in range(len(losses)):
            start = sent_off[s]
            n = sent_off[s + 1] - start - 1
            lo = start - s  # flat token offset: no root slot in heads and pred
            losses[s], pred[lo:lo + n] = train_sentence(
                start, n, heads[lo:lo + n], tokens, params, sums, config, decode, counter,
                climb, ALL_ARCS if keep is None else keep[s])
            counter += 1
        state["count"][0] = counter
        self.n_iter_ += 1
        return losses.mean(), float(np.mean(pred == heads)), pred

    def _initialise_tensor(self, data, heads, pred, rng):
        """SVD initialisation from the tensor-free weights (gold and predicted arcs)."""
        sent_off = data["sent_off"]
        lengths = np.diff(sent_off) - 1
        sentence_of = np.repeat(np.arange(len(lengths)), lengths)
        modifier = np.arange(len(heads)) - (sent_off[sentence_of] - sentence_of) + 1
        arcs_h = np.concatenate([heads, pred])
        arcs_m = np.concatenate([modifier, modifier])
        arcs_sent = np.concatenate([sentence_of, sentence_of])
        state = self.training_state_
        entries = tensor_entries(sent_off, (arcs_sent, arcs_h, arcs_m), _token_arrays(data),
                                 self.word_feature_table_, state["weights"]["theta"],
                                 self._config(self.gamma), _PAIRS)
        U, V, W = svd_initialisation(entries, self.n_word_features_, self.rank, rng)
        state["weights"].update(U=U, V=V, W=W)
        # the average starts with the model proper, after the initialisation pass
        for name in _PARAMETERS:
            state["sums"][name] = np.zeros_like(state["weights"][name])
        state["count"][0] = 0
        self.tensor_initialised_ = True

    def _train(self, X, y, X_val, y_val, *, n_epochs, reset):
        """The passes of ``fit`` (``reset``) or ``partial_fit`` over ``(X, y)``, with the
        labeller's when ``y`` holds labels; one generator, ``random_state``'s, draws
        the validation split, the initial tensor and the labeller's seed."""
        rng = check_random_state(self.random_state)
        X, y, validation = split_validation(self, X, y, X_val, y_val, rng=rng)
        sentences, heads, deprels = check_labelled_dependency_data(X, y)
        if reset:
            self.tag_feats_ = self._checked_tag_feats()
        sentences = with_feats_in_fine_tag(sentences, self._fitted_tag_feats())
        if reset:
            encoding, data = fit_encoding(sentences, self._given_word_vectors(),
                                          self.pos is not None)
            self._initialise(encoding, rng)
            self.history_ = []
        else:
            data = encode(sentences, self._encoding())
        flat, offsets = pack_ragged(heads)
        if reset:
            self.decoder_ = self._choose_decoder(flat, offsets)
            self.pruner_theta_ = None if self.prune_margin is None else float16_precision(
                train_pruner(data, flat, self.pos is not None, self.C))
        keep = self._training_arcs(data, flat)
        labels = self._labeller_epochs(sentences, heads, deprels, reset=reset, rng=rng)
        # the tensor-free initialisation pass, if still due, comes before the n_epochs
        n_passes = n_epochs + (0 if self.tensor_initialised_ else 1)
        _PassiveAggressiveEpochs(self, data, flat, labels, rng, keep).run(
            n_passes, name=type(self).__name__, verbose=self.verbose, validation=validation,
            patience=self.n_iter_no_change)
        self._store_prediction_weights()
        return labels

    def _training_arcs(self, data, heads):
        """The arcs the pruner keeps in each training sentence, gold arcs included (None
        without a pruner); with ``verbose``, their number per word and the share of
        gold heads kept before the gold arcs were added."""
        if self._pruner() is None:
            return None
        sent_off = data["sent_off"]
        keep, recalled, kept = [], 0, 0
        for s in range(len(sent_off) - 1):
            n = sent_off[s + 1] - sent_off[s] - 1
            gold = heads[sent_off[s] - s:sent_off[s] - s + n]
            pruned = self._kept_arcs(data, s)
            if pruned is ALL_ARCS:
                recalled, kept = recalled + n, kept + n * n
            else:
                recalled += int(pruned[gold, np.arange(1, n + 1)].sum())
                kept += int(pruned.sum())
                pruned[gold, np.arange(1, n + 1)] = True
            keep.append(pruned)
        if self.verbose:
            print(f"[{type(self).__name__}] pruner: {kept / max(len(heads), 1):.2f} heads kept "
                  f"per training word, gold heads among them {recalled / max(len(heads), 1):.4f}",
                  file=sys.stderr, flush=True)
        return keep

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
            Validation data (keyword only; or ``validation_fraction``),
            scored with :meth:`score` after every pass, for ``history_``, the
            progress line and ``n_iter_no_change``.

        Returns
        -------
        self
        """
        labels = self._train(X, y, X_val, y_val, n_epochs=self.n_epochs, reset=True)
        if labels is not None:
            self._store_labeller(labels, keep_training_state=False)
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
        labels = self._train(X, y, X_val, y_val, n_epochs=1, reset=reset)
        if labels is not None:
            self._store_labeller(labels, keep_training_state=True)
        return self

    # ------------------------------------------------------------ pickling

    def __getstate__(self):
        # the weights go into pickles as the safe model format stores them (by their
        # non-zero cells or rows, as float16 where that is exact), with its code:
        # theta_ is mostly zero, and dense it made pickles 8 times the size of model files
        state = super().__getstate__()
        encoder = _Encoder()
        packed = {name: encoder.array(state.pop(name), name)
                  for name in _COMPACT_IN_PICKLES if state.get(name) is not None}
        if packed:
            state["_packed_weights"] = (packed, encoder.arrays)
        return state

    def __setstate__(self, state):
        # pickles made before pruning or tag_feats existed: no pruning, plain tags
        super().__setstate__({"prune_margin": None, "prune_max_heads": 20, "tag_feats": None,
                              **state})
        packed = self.__dict__.pop("_packed_weights", None)
        if packed is not None:
            descriptions, arrays = packed
            decoder = _Decoder(arrays)
            for name, description in descriptions.items():
                setattr(self, name, decoder.decode(description))

    # ---------------------------------------------------------- prediction

    def _predict_data(self, X, vocabularies=None):
        """Validated sentences and their encoding, packed with ``vocabularies`` (default:
        the parser's; more fields may be packed for the labeller)."""
        check_fitted(self, "theta_")
        sentences = with_feats_in_fine_tag(self._check_prediction_input(X),
                                           self._fitted_tag_feats())
        return sentences, encode(sentences, self._encoding(), vocabularies)

    def _config(self, gamma):
        return Config(float(gamma), float(self.C), int(self.n_features), self.pos is not None)

    def _pruner(self):
        # model files saved before pruning existed have no pruner
        return getattr(self, "pruner_theta_", None)

    def _kept_arcs(self, data, s):
        """The arcs of sentence ``s`` of an encoded corpus that the pruner keeps:
        ``ALL_ARCS`` without a pruner and for a sentence of at most ``prune_max_heads``
        words, whose arcs are few enough that the pruner would cost more than it saves."""
        start = data["sent_off"][s]
        n = data["sent_off"][s + 1] - start - 1
        pruner = self._pruner()
        if pruner is None or n <= self.prune_max_heads:
            return ALL_ARCS
        # the table's own length: a model keeps the size it was trained with
        scores = pruner_scores(start, n, data["form"], data["xpos"], data["upos"],
                               self.pos is not None, pruner, len(pruner))
        return kept_arcs(scores, float(self.prune_margin), int(self.prune_max_heads), _NO_HEADS)

    def _sentence_scores(self, data, s):
        """Arc score matrix of sentence ``s`` of an encoded corpus, under the fitted
        weights (pruned arcs at the pruned score)."""
        start = data["sent_off"][s]
        n = data["sent_off"][s + 1] - start - 1
        weights = Weights(self.theta_, self.U_, self.V_, self.W_)
        return sentence_arc_scores(start, n, _token_arrays(data), weights,
                                   self._config(self.gamma), self._kept_arcs(data, s))[0]

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
        check_fitted(self, "theta_")
        # one packed corpus for the parser and its labeller, when their vocabularies agree
        shared = self._labeller_vocabularies(self.vocabularies_)
        sentences, data = self._predict_data(X, shared)
        heads = self._map_sentences(data, lambda s: self._decode(data, s))
        return self._with_labels(sentences, heads, None if shared is None else data["corpus"])

    def tag_fields(self):
        """The tag fields the parser reads, preferred first (the other is its fall-back)."""
        return _POS_FIELDS if self.pos is not None else ()

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

        Column 0, the diagonal (impossible arcs) and the arcs the pruner dropped
        are ``-inf``.
        """
        _, data = self._predict_data([sentence])
        scores = self._sentence_scores(data, 0)
        scores[scores == PRUNED_SCORE] = -np.inf
        scores[:, 0] = -np.inf
        np.fill_diagonal(scores, -np.inf)
        return scores

    def kept_arcs(self, X):
        """The arcs the pruner keeps: per sentence a bool array ``keep[h, m]`` of shape
        (n + 1, n + 1), h in 0..n (0 the root), m in 1..n. Every arc is kept without
        pruning (``prune_margin=None``) and in a sentence of at most ``prune_max_heads``
        words."""
        check_fitted(self, "theta_")
        _, data = self._predict_data(X)

        def kept(s):
            keep = self._kept_arcs(data, s)
            if keep is ALL_ARCS:
                n = data["sent_off"][s + 1] - data["sent_off"][s] - 1
                keep = ~np.eye(n + 1, dtype=bool)
                keep[:, 0] = False
            return keep

        return self._map_sentences(data, kept)

    def third_order_scorer(self, sentence, theta=None):
        """The scorer of one sentence's third-order parts, for hill-climbing decoding.

        With :meth:`arc_scores` it is what
        :func:`~sklearn_structured.kernels.hill_climbing.hill_climbing_decode`
        searches over: the parts (siblings, grandparents, grand-siblings,
        tri-siblings, head bigrams) read the sentence's words and tags through
        the parser's templates, and each feature's weight is read from
        ``theta``, scaled by ``gamma``. A parser of ``order=3`` decodes this
        way with its own settings; this method lets the search be run, and
        timed, with others.

        Parameters
        ----------
        sentence : sequence of tokens
            One sentence (str forms or dicts of CoNLL-U fields).
        theta : ndarray of shape (n_features,), default=None
            The feature weights; by default the fitted ``theta_`` (whose
            high-order cells are zero unless ``order=3``).

        Returns
        -------
        scorer : ~sklearn_structured.kernels.hill_climbing.PartScorer
        """
        _, data = self._predict_data([sentence])
        weights = self.theta_ if theta is None else np.asarray(theta)
        if weights.shape != (self.n_features,):
            raise ValueError(f"theta must have shape ({self.n_features},), got {weights.shape}")
        return part_scorer(data["sent_off"][0], len(sentence), _token_arrays(data), weights,
                           self.n_features, self.gamma)

    def word_embeddings(self, words, role="head"):
        """Learned low-rank vectors of word forms: rows of ``U_`` (heads) or ``V_`` (modifiers).

        The row of the word's form template (its own form, not its
        context), shape (len(words), rank); zero rows for forms unseen in
        training. Neighbours in this space are words the tensor treats
        alike (Lei et al. 2014, Table 5).
        """
        check_fitted(self, "theta_")
        if role not in ("head", "modifier"):
            raise ValueError(f"role must be 'head' or 'modifier', got {role!r}")
        matrix = self.U_ if role == "head" else self.V_
        columns = form_columns(words, self._encoding())
        known = columns >= 0
        out = np.zeros((len(columns), self.rank))
        out[known] = matrix[columns[known]]
        return out

    def score(self, X, y):
        """Attachment score without punctuation (a fraction in [0, 1]).

        LAS when the parser was fitted on pairs and ``y`` holds
        ``(heads, deprels)`` pairs, UAS otherwise.
        """
        return attachment_score(y, self.predict(X), X=X, punct="exclude")
