"""The arc labeller shared by the dependency parsers: relation labels for a finished tree.

A parser fitted on ``(heads, deprels)`` pairs trains this labeller on the
gold trees, next to its own training, and labels the trees it predicts. The
labeller is a multiclass averaged perceptron over hashed arc features (see
:mod:`._kernels`); its fitted state is one dict of plain values that the
parser keeps as ``labeller_``, so that it pickles and saves in the safe model
format:

``labels``        list of str, the relation labels (an id is a position)
``allowed``       bool array, the labels a word not attached to the root may get
``root_label``    int, the label of every word attached to the root
``vocabularies``  dict of :class:`~sklearn_structured.utils.Vocabulary`
``hash_bits``     int, the weight table has ``2 ** hash_bits`` cells
``cells``         uint32 array, the cells that training ever touched (sorted; int64
                  in labellers fitted before, which read the same)
``perceptron``    the training state of those cells, a
                  :func:`~sklearn_structured.utils.perceptron_state` of one
                  parameter, ``"table"`` (its count: the arcs trained on so
                  far); None once training is finished (:func:`finish_labeller`)
``weights``       float32 array, the averaged weights of those cells that
                  prediction uses; None while ``perceptron`` is kept
``n_iter``        int, passes made so far
``order_seed``    int, drawn by the first pass from the generator of the parser's
                  ``fit`` call (None until then): pass ``i`` visits the sentences in
                  the order ``numpy.random.default_rng([order_seed, i])`` draws, so
                  that ``k`` calls of ``partial_fit`` make the passes of ``fit`` with
                  ``k`` epochs

The root constraint: a label is a root label when most of its training
occurrences attach to the root (in UD, ``root``, and only it). Words attached
to the root get the most frequent root label; no other word gets a root label.

The table is kept large so that few feature-label pairs share a cell, and
stored sparse: on EWT fewer than one cell in seven is ever updated, so the
touched cells take less room than a dense table of a quarter of the size.
"""

import functools
import re

import numpy as np
from sklearn.utils import check_random_state

from ..fields import FEATS, LEMMA, LOWER, UPOS, XPOS
from ..utils import EpochResult, EpochTrainer, encode_corpus, fit_vocabularies, map_ranges
from ..utils._training import perceptron_state, prediction_weights
from ._kernels import (FREE, OBJECT, SUBJECT, LabelModel, LabelSentences, feats_signatures,
                       predict_labels, train_epoch)

FIELDS = (LOWER, UPOS, XPOS, LEMMA, FEATS)
# 2**22 cells shared by all feature-label pairs: on EWT dev, 2**20 (43% of the cells
# touched) lost 0.1 label accuracy on gold trees to collisions
HASH_BITS = 22
# the order seed of labellers made before it was drawn from random_state (saved models)
_FIXED_ORDER_SEED = 12011
# relations whose dependent follows its head in the words' (logical) order
_HEAD_FIRST = frozenset(("conj", "fixed", "flat", "goeswith", "appos"))


def _flat_heads(heads):
    return np.concatenate(heads).astype(np.int64) if heads else np.zeros(0, np.int64)


def _sentences(state, sentences, heads):
    corpus = encode_corpus(sentences, state["vocabularies"])
    return LabelSentences(corpus.offsets, corpus["lower"], corpus["upos"], corpus["xpos"],
                          corpus["lemma"], feats_signatures(corpus["feats"], corpus["feats_offsets"]),
                          _flat_heads(heads))


def _sentences_of_corpus(corpus, heads):
    """:func:`_sentences` from a corpus packed with root slots (by the parser, with
    :func:`shared_vocabularies`): the same arrays, root slots left out."""
    offsets = corpus.offsets
    words = np.ones(offsets[-1], bool)
    words[offsets[:-1]] = False
    feats = feats_signatures(corpus["feats"], corpus["feats_offsets"])
    return LabelSentences(offsets - np.arange(len(offsets)), *(
        corpus[field][words] for field in FIELDS[:4]),  # FEATS, ragged, follows
        feats[words], _flat_heads(heads))


def shared_vocabularies(state, vocabularies):
    """The vocabularies of one packed corpus for a parser and its labeller: the parser's
    ``vocabularies`` and the labeller's; None when the two give a field different ids."""
    own = state["vocabularies"]
    for field, vocabulary in own.items():
        theirs = vocabularies.get(field, vocabulary)
        if theirs is not vocabulary and theirs.itos != vocabulary.itos:
            return None
    return {**own, **vocabularies}


def _full_table(state, values, dtype=np.float64):
    """The table of ``2 ** hash_bits`` cells holding ``values`` at the stored cells, 0 elsewhere."""
    table = np.zeros(1 << state["hash_bits"], dtype)
    table[state["cells"]] = values
    return table


def _model(state, weights, sums=None, seen=None):
    return LabelModel(weights, weights if sums is None else sums,
                      np.zeros(1) if seen is None else seen, state["allowed"],
                      int(state["root_label"]), *_constraints(tuple(state["labels"])))


@functools.lru_cache(maxsize=64)
def _constraints(labels):
    """:attr:`LabelModel.exclusive` and :attr:`LabelModel.head_first` of a labeller with
    these labels: UD's rules as its official validator checks them at level 3 (a
    predicate has at most one subject not subtyped ``:outer`` and one direct object;
    ``conj``, ``fixed``, ``flat``, ``goeswith`` and ``appos`` go from left to right)."""
    relations = [label.split(":")[0] for label in labels]
    exclusive = np.array([
        OBJECT if relation == "obj"
        else SUBJECT if "subj" in relation and not re.fullmatch(r"[nc]subj:outer", label)
        else FREE for label, relation in zip(labels, relations)], np.int64)
    head_first = np.array([relation in _HEAD_FIRST for relation in relations], np.bool_)
    return exclusive, head_first


def new_labeller(sentences, heads, deprels, *, hash_bits=HASH_BITS):
    """An untrained labeller state whose labels, root labels and vocabularies come from
    the training data."""
    counts, at_root = {}, {}
    for h, labels in zip(heads, deprels):
        for head, label in zip(h.tolist(), labels):
            counts[label] = counts.get(label, 0) + 1
            at_root[label] = at_root.get(label, 0) + (head == 0)
    labels = sorted(counts)
    root_count = np.array([at_root[label] for label in labels])
    is_root = 2 * root_count > np.array([counts[label] for label in labels])
    # the most frequent root label (or, if no label is one, the most frequent at the root)
    candidates = is_root if is_root.any() else root_count > 0
    root_label = int(np.argmax(np.where(candidates, root_count, -1)))
    allowed = ~is_root
    if not allowed.any():  # every label is a root label: nothing to keep apart
        allowed[:] = True
    return {
        "labels": labels,
        "allowed": allowed,
        "root_label": root_label,
        "vocabularies": fit_vocabularies(sentences, FIELDS),
        "hash_bits": int(hash_bits),
        "cells": np.zeros(0, np.uint32),
        "perceptron": perceptron_state({"table": np.zeros(0)}),
        "weights": None,
        "n_iter": 0,
        "order_seed": None,
    }


class LabellerEpochs(EpochTrainer):
    """Perceptron passes of the labeller over encoded gold trees.

    Trains full tables made from ``state``'s stored cells; :meth:`store`
    puts the touched cells back into ``state``. A parser that trains the
    labeller beside its own epochs calls :meth:`train_epoch` from its own,
    and keeps the labeller's best epoch with its :meth:`snapshot`. ``rng``,
    the generator of the parser's ``fit`` call, draws a new labeller's
    order seed when its first pass begins: after the parser's own first
    draws, which so stay what they were before the labeller had a seed.
    """

    def __init__(self, state, sentences, heads, deprels, rng):
        self.state, self.rng = state, rng
        self.data = _sentences(state, sentences, heads)
        ids = {label: i for i, label in enumerate(state["labels"])}
        # labels unseen when the state was made are not trained on
        self.gold = np.fromiter((ids.get(label, -1) for labels in deprels for label in labels),
                                np.int64, len(self.data.heads))
        perceptron = state["perceptron"]
        self.weights = _full_table(state, perceptron["weights"]["table"])
        self.sums = _full_table(state, perceptron["sums"]["table"])
        self.count = perceptron["count"].copy()

    def train_epoch(self):
        state = self.state
        if state.get("order_seed", _FIXED_ORDER_SEED) is None:
            state["order_seed"] = int(self.rng.randint(np.iinfo(np.int32).max))
        seed = state.get("order_seed", _FIXED_ORDER_SEED)
        order = np.random.default_rng([seed, state["n_iter"]]).permutation(
            len(self.data.offsets) - 1)
        before = self.count[0]
        errors = train_epoch(self.data, self.gold, order,
                             _model(state, self.weights, self.sums, self.count))
        state["n_iter"] += 1
        n_arcs = self.count[0] - before
        return EpochResult(f"labels, epoch {state['n_iter']}", errors / max(n_arcs, 1),
                           (("label errors", int(errors)),))

    def validation_score(self, validation):  # pragma: no cover - never given validation data
        raise NotImplementedError

    def store(self):
        """Put the touched cells and their training state into the labeller's state."""
        # uint32 positions: half the room of int64 in memory and in model files
        cells = np.flatnonzero((self.weights != 0) | (self.sums != 0)).astype(np.uint32)
        self.state.update(cells=cells, weights=None, perceptron={
            "weights": {"table": self.weights[cells]}, "sums": {"table": self.sums[cells]},
            "count": self.count.copy()})

    def snapshot(self):
        self.store()
        return {key: self.state[key] for key in ("cells", "perceptron", "n_iter")}

    def restore(self, snapshot):
        self.state.update(snapshot, weights=None)
        perceptron = snapshot["perceptron"]
        self.weights = _full_table(self.state, perceptron["weights"]["table"])
        self.sums = _full_table(self.state, perceptron["sums"]["table"])
        self.count = perceptron["count"].copy()


def train_labeller(state, sentences, heads, deprels, n_epochs, *, name="labeller", verbose=0,
                   random_state=None):
    """``n_epochs`` passes over the gold trees, updating ``state`` in place.

    Labels unseen when the state was made are not trained on. The progress
    line's loss is the fraction of the pass's arcs whose label was wrong.
    ``random_state`` draws the order seed of a new state.
    """
    epochs = LabellerEpochs(state, sentences, heads, deprels, check_random_state(random_state))
    epochs.run(n_epochs, name=name, verbose=verbose)
    epochs.store()
    return state


def averaged_labeller_weights(state):
    """The full float32 table of averaged perceptron weights that prediction uses."""
    if state["perceptron"] is None:
        return _full_table(state, state["weights"], np.float32)
    return _full_table(state, prediction_weights(state["perceptron"], "table"), np.float32)


def finish_labeller(state):
    """Keep only what prediction uses: the float32 average of the touched cells."""
    if state["perceptron"] is not None:
        state["weights"] = prediction_weights(state["perceptron"], "table")
        state["perceptron"] = None


def label_trees(state, sentences, heads, n_jobs=None, *, corpus=None, table=None):
    """Relation labels (lists of str) for the trees ``heads`` over ``sentences``.

    ``corpus``: the sentences already packed with root slots and
    :func:`shared_vocabularies` (by the parser), instead of encoding them again.
    ``table``: :func:`averaged_labeller_weights` of ``state``, if the caller keeps it.
    """
    weights = averaged_labeller_weights(state) if table is None else table
    data = (_sentences(state, sentences, heads) if corpus is None
            else _sentences_of_corpus(corpus, heads))
    model = _model(state, weights)
    names = np.array(state["labels"], dtype=object)

    def chunk(lo, hi):
        start, end = data.offsets[lo], data.offsets[hi]
        part = LabelSentences(data.offsets[lo:hi + 1] - start,
                              *(field[start:end] for field in data[1:]))
        return predict_labels(part, model)

    ids = np.concatenate(map_ranges(chunk, len(sentences), n_jobs) or [np.zeros(0, np.int64)])
    labels = names[ids].tolist()
    ends = data.offsets.tolist()
    return [labels[ends[s]:ends[s + 1]] for s in range(len(sentences))]


class LabellingParserMixin:
    """What both parsers do with labelled ``y``: fit the labeller, return and score pairs.

    The parser calls :meth:`_fit_labels` from ``fit`` (``reset=True``; the
    labeller keeps only its averaged weights) and ``partial_fit`` (one pass,
    continuing; the training state is kept), and :meth:`_with_labels` at the
    end of ``predict``. A parser whose epochs also train the labeller (one
    progress line and ``history_`` record per epoch for both, keep-best for
    both) uses :meth:`_labeller_epochs` and :meth:`_store_labeller` instead
    of :meth:`_fit_labels`. A parser fitted on heads alone has ``labeller_ = None``
    and predicts heads, exactly as without the labeller.
    """

    def _fit_labels(self, sentences, heads, deprels, n_epochs, *, reset, keep_training_state,
                    rng):
        epochs = self._labeller_epochs(sentences, heads, deprels, reset=reset, rng=rng)
        if epochs is None:
            return
        epochs.run(n_epochs, name=type(self).__name__, verbose=self.verbose)
        self._store_labeller(epochs, keep_training_state)

    def _labeller_epochs(self, sentences, heads, deprels, *, reset, rng):
        """The :class:`LabellerEpochs` of a ``fit`` (``reset``) or ``partial_fit`` call,
        for a parser that runs them beside its own epochs; None for heads alone.
        ``rng``: the call's generator, which draws a new labeller's order seed."""
        if reset:
            self.labeller_ = None
        if deprels is None:
            return None
        if getattr(self, "labeller_", None) is None:
            self.labeller_ = new_labeller(sentences, heads, deprels)
        return LabellerEpochs(self.labeller_, sentences, heads, deprels, rng)

    def _store_labeller(self, epochs, keep_training_state):
        """The labeller's state after training (only its prediction weights unless
        ``keep_training_state``)."""
        epochs.store()
        if not keep_training_state:
            finish_labeller(self.labeller_)

    def _labeller_vocabularies(self, vocabularies):
        """What :meth:`_with_labels` needs of the parser's corpus: the vocabularies to pack
        it with (its own ``vocabularies`` and the labeller's), or None without a labeller
        or when the two clash."""
        state = getattr(self, "labeller_", None)
        return None if state is None else shared_vocabularies(state, vocabularies)

    def _with_labels(self, sentences, heads, corpus=None):
        """``heads`` as they are, or paired with their labels when the parser has a labeller.

        ``corpus``: the sentences as the parser packed them with
        :meth:`_labeller_vocabularies`, if it did.
        """
        state = getattr(self, "labeller_", None)
        if state is None:
            return heads
        # the dense table, made once per fitted labeller (its weights, or its training
        # state, are replaced, never changed in place, when it trains)
        table = self._cached("labeller_table", state["perceptron"] or state["weights"],
                             lambda: averaged_labeller_weights(state))
        return list(zip(heads, label_trees(state, sentences, heads, self.n_jobs, corpus=corpus,
                                           table=table)))
