"""The arc labeller shared by the parsers: an oracle for its kernels, the root constraint,
learning on the embedded sample."""

from collections import defaultdict

import numpy as np
import pytest

from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.kernels.hashing import feature_hash
from sklearn_structured.labelling import label_trees, new_labeller, train_labeller
from sklearn_structured.labelling import _kernels as K
from sklearn_structured.labelling._labeller import _constraints, _sentences
from sklearn_structured.utils._training import averaged_weights


@pytest.fixture(scope="module")
def sample():
    X, y = load_sample_treebank("train", labelled=True)
    X_test, y_test = load_sample_treebank("test", labelled=True)
    heads, deprels = [h for h, _ in y], [d for _, d in y]
    return X, heads, deprels, X_test, [h for h, _ in y_test], [d for _, d in y_test]


# ---------------------------------------------------------------- a slow oracle


def _oracle_features(words, heads, m, labels):
    """The feature tuples of word m's arc, written out plainly from the kernel's docs.

    ``words`` are (lower, upos, xpos, lemma, FEATS signature) ids, ``heads`` 1-based
    with 0 for the root, ``labels`` the label ids the label templates read.
    """
    n = len(words)
    lower, upos, xpos, lemma, feats = (list(field) for field in zip(*words))

    def tag(i):
        return upos[i] if 0 <= i < n else K.OUTSIDE

    h = heads[m]
    mw, mu, mx, mlem, mf = lower[m], upos[m], xpos[m], lemma[m], feats[m]
    if h == 0:
        hw = hu = hx = hl = hr = gu = gw = head_label = hlem = hf = K.ROOT_VALUE
        direction, dist, next_w = 2, K.ROOT_DISTANCE, K.NO_WORD
    else:
        hw, hu, hx, hlem, hf = lower[h - 1], upos[h - 1], xpos[h - 1], lemma[h - 1], feats[h - 1]
        hl, hr = tag(h - 2), tag(h)
        gu = K.ROOT_VALUE if heads[h - 1] == 0 else upos[heads[h - 1] - 1]
        gw = K.ROOT_VALUE if heads[h - 1] == 0 else lower[heads[h - 1] - 1]
        next_w = lower[m - 1] if h - 1 < m else lower[m + 1]
        head_label = labels[h - 1]
        direction = 1 if h - 1 < m else 0
        d = abs(h - 1 - m)
        dist = {1: 0, 2: 1, 3: 2, 4: 3, 5: 4, 6: 4}.get(d, 5 if d <= 10 else 6)
    children = [k for k in range(n) if heads[k] == m + 1]
    left = [k for k in children if k < m]
    right = [k for k in children if k > m]
    lcw = lower[min(left)] if left else K.NO_WORD
    lcu = upos[min(left)] if left else K.NO_WORD
    rcu = upos[max(right)] if right else K.NO_WORD
    sib_u, sib_label, rank = K.NO_WORD, K.NO_WORD, 0
    if h > 0:
        between = range(h, m) if h - 1 < m else range(m + 1, h - 1)
        siblings = [k for k in between if heads[k] == h]
        if siblings:
            nearest = max(siblings) if h - 1 < m else min(siblings)
            sib_u, rank = upos[nearest], min(len(siblings), 3)
            sib_label = labels[nearest]
    ml, mr = tag(m - 1), tag(m + 1)

    def word(i):
        return lower[i] if 0 <= i < n else K.OUTSIDE

    def descends(k):  # whether k is in the subtree of m
        while k != m and heads[k] != 0:
            k = heads[k] - 1
        return k == m

    subtree = [k for k in range(n) if descends(k)]
    start, end = min(subtree), max(subtree)

    def hash_set(values):  # a sum of hashes, wrapping as int64 does
        total = sum(int(feature_hash(99, v, 0, 0, 0, 0)) for v in values)
        return (total + 2**63) % 2**64 - 2**63

    def tag_set(kids):
        return hash_set(upos[k] for k in kids)

    # siblings labelled before m: nearer the head, or as near and to the left
    earlier = [] if h == 0 else [
        k for k in range(n) if k != m and heads[k] == h
        and (abs(h - 1 - k), k) < (abs(h - 1 - m), m)]

    return [
        (K.T_BIAS,), (K.T_MW, mw), (K.T_MU, mu), (K.T_MX, mx), (K.T_HW, hw), (K.T_HU, hu),
        (K.T_HX, hx), (K.T_MW_MX, mw, mx), (K.T_HU_MU, hu, mu), (K.T_HX_MX, hx, mx),
        (K.T_HW_MW, hw, mw), (K.T_HW_MU, hw, mu), (K.T_HU_MW, hu, mw),
        (K.T_DIST, direction, dist), (K.T_DIST_HU_MU, direction, dist, hu, mu),
        (K.T_DIR_MU, direction, mu), (K.T_DIR_HX_MX, direction, hx, mx),
        (K.T_DIR_MW, direction, mw), (K.T_DIR_HW_MU, direction, hw, mu),
        (K.T_MU_CONTEXT, ml, mu, mr), (K.T_HU_MU_ML, hu, mu, ml, direction),
        (K.T_HU_MU_MR, hu, mu, mr, direction), (K.T_HU_HL_MU, hu, hl, mu, direction),
        (K.T_HU_HR_MU, hu, hr, mu, direction), (K.T_GU_HU_MU, gu, hu, mu, direction),
        (K.T_MU_LCW, mu, lcw), (K.T_MU_LCU, mu, lcu), (K.T_MU_RCU, mu, rcu),
        (K.T_HU_MU_LCW, hu, mu, lcw, direction), (K.T_HU_MU_SIB, hu, mu, sib_u, direction),
        (K.T_HU_MU_RANK, hu, mu, rank, direction), (K.T_DIR_HW_MX, direction, hw, mx),
        (K.T_MU_CHILDREN, mu, int(bool(left)), int(bool(right))),
        (K.T_HEAD_LABEL, head_label, mu, direction), (K.T_HEAD_LABEL_HU, head_label, hu, mu),
        (K.T_SIB_LABEL, sib_label, hu, mu, direction),
        (K.T_BEFORE_SPAN, mu, word(start - 1), direction),
        (K.T_AFTER_SPAN, mu, word(end + 1), direction),
        (K.T_SPAN_EDGES, hu, mu, tag(start - 1), tag(end + 1), direction),
        (K.T_LEFT_TAGS, mu, tag_set(left)), (K.T_RIGHT_TAGS, mu, tag_set(right)),
        (K.T_MLEM_HU, mlem, hu, direction), (K.T_HLEM_MU, hlem, mu, direction),
        (K.T_HLEM_MLEM, hlem, mlem), (K.T_MF_MU, mf, mu), (K.T_HF_MF, hf, mf, hu, mu, direction),
        (K.T_MF_HU, mf, mu, hu, direction), (K.T_GW_HU_MU, gw, hu, mu, direction),
        (K.T_SIBS_LABELS, hash_set(labels[k] for k in earlier), hu, mu, direction),
        (K.T_HEAD_LABEL_HW, head_label, hw, mu),
        (K.T_N_CHILDREN, mu, min(len(left), 3), min(len(right), 3)),
        (K.T_MU_NLCW, mu, lower[max(left)] if left else K.NO_WORD),
        (K.T_MU_RCW, mu, lower[max(right)] if right else K.NO_WORD),
        (K.T_NEXT_W, mu, next_w, direction),
    ]


def _oracle_order(heads):
    """Words by depth, then by distance to their head (ties: left to right)."""
    def depth(m):
        d = 0
        while heads[m] != 0:
            m, d = heads[m] - 1, d + 1
        return d

    return sorted(range(len(heads)),
                  key=lambda m: (depth(m), abs(heads[m] - 1 - m) if heads[m] else 0, m))


def _cell(feature, label, mask):
    key = int(feature_hash(*(tuple(feature) + (0,) * (6 - len(feature)))))
    return (key + label * K.LABEL_STRIDE) & mask


def _oracle_sentences(data):
    """Per sentence, its (lower, upos, xpos, lemma, FEATS signature) ids and heads, from
    the encoded arrays."""
    out = []
    for s in range(len(data.offsets) - 1):
        lo, hi = data.offsets[s], data.offsets[s + 1]
        words = list(zip(*(field[lo:hi].tolist() for field in (
            data.lower, data.upos, data.xpos, data.lemma, data.feats))))
        out.append((words, data.heads[lo:hi].tolist()))
    return out


def _oracle_training(state, data, gold, n_epochs):
    """The averaged perceptron with a dict of weights, one key per (feature, label) cell."""
    mask = (1 << state["hash_bits"]) - 1
    allowed = state["allowed"]
    n_labels = len(allowed)
    w, sums, seen = defaultdict(float), defaultdict(float), 0
    sentences = _oracle_sentences(data)
    for epoch in range(n_epochs):
        order = np.random.default_rng([state["order_seed"], epoch]).permutation(len(sentences))
        for s in order:
            words, heads = sentences[s]
            lo = data.offsets[s]
            for m in range(len(words)):
                target = gold[lo + m]
                if heads[m] == 0 or target < 0 or not allowed[target]:
                    continue
                features = _oracle_features(words, heads, m, gold[lo:lo + len(words)])
                scores = [sum(w[_cell(f, label, mask)] for f in features)
                          for label in range(n_labels)]
                guess = max((label for label in range(n_labels) if allowed[label]),
                            key=lambda label: (scores[label], -label))
                if guess != target:
                    for f in features:
                        w[_cell(f, target, mask)] += 1
                        sums[_cell(f, target, mask)] += seen
                        w[_cell(f, guess, mask)] -= 1
                        sums[_cell(f, guess, mask)] -= seen
                seen += 1
    return {cell: w[cell] - sums[cell] / max(seen, 1) for cell in set(w) | set(sums)}, seen


def test_kernel_matches_a_dict_of_weights_perceptron(sample):
    X, heads, deprels, _, _, _ = sample
    X, heads, deprels = X[:5], heads[:5], deprels[:5]
    state = new_labeller(X, heads, deprels, hash_bits=16)
    train_labeller(state, X, heads, deprels, 3, random_state=0)
    data = _sentences(state, X, heads)
    ids = {label: i for i, label in enumerate(state["labels"])}
    gold = [ids[label] for labels in deprels for label in labels]
    averaged, seen = _oracle_training(state, data, gold, 3)
    perceptron = state["perceptron"]
    assert perceptron["count"][0] == seen == 3 * sum(int(np.sum(h != 0)) for h in heads)
    mask = (1 << state["hash_bits"]) - 1
    # the same weights, cell by cell
    # (in float64: the fitted labeller rounds the same average to float32)
    kernel = np.zeros(1 << state["hash_bits"])
    kernel[state["cells"]] = averaged_weights(perceptron["weights"]["table"],
                                              perceptron["sums"]["table"], perceptron["count"][0])
    touched = np.flatnonzero(kernel)
    assert len(touched) > 100
    for cell in touched.tolist():
        assert kernel[cell] == pytest.approx(averaged.get(cell, 0.0), abs=1e-9)
    # the same scores on other trees (each word headed by its left neighbour)
    n_labels = len(state["labels"])
    chains = [np.arange(len(s)) for s in X]
    chain_data = _sentences(state, X, chains)
    given = np.array(gold)
    scores = K.label_scores(chain_data, given, kernel, n_labels)
    for s, (words, tree) in enumerate(_oracle_sentences(chain_data)):
        lo = chain_data.offsets[s]
        for m in range(len(words)):
            features = _oracle_features(words, tree, m, given[lo:lo + len(words)])
            expected = [sum(averaged.get(_cell(f, label, mask), 0.0) for f in features)
                        for label in range(n_labels)]
            np.testing.assert_allclose(scores[lo + m], expected, atol=1e-9)
    # and the same labels, predicted top-down with the labels predicted so far
    unconstrained = np.full(n_labels, K.FREE), np.zeros(n_labels, np.bool_)
    predicted = K.predict_labels(chain_data, K.LabelModel(
        kernel, kernel, np.zeros(1), state["allowed"], state["root_label"], *unconstrained))
    allowed = [i for i in range(n_labels) if state["allowed"][i]]
    for s, (words, tree) in enumerate(_oracle_sentences(chain_data)):
        labels = [None] * len(words)
        for m in _oracle_order(tree):
            if tree[m] == 0:
                labels[m] = state["root_label"]
                continue
            features = _oracle_features(words, tree, m, labels)
            score = {label: sum(averaged.get(_cell(f, label, mask), 0.0) for f in features)
                     for label in allowed}
            labels[m] = max(allowed, key=lambda label: (score[label], -label))
        lo = chain_data.offsets[s]
        assert predicted[lo:lo + len(words)].tolist() == labels


# ---------------------------------------------------------------- root constraint


@pytest.mark.parametrize("root_name", ["root", "ROOT"])
def test_root_words_and_only_they_get_the_root_label(sample, root_name):
    X, heads, deprels, X_test, heads_test, _ = sample
    renamed = [[root_name if label == "root" else label for label in labels] for labels in deprels]
    state = new_labeller(X, heads, renamed)
    train_labeller(state, X, heads, renamed, 2, random_state=0)
    assert state["labels"][state["root_label"]] == root_name
    rng = np.random.default_rng(0)
    # gold trees, and trees with several roots: the constraint holds on any tree
    many_roots = [np.where(rng.random(len(h)) < 0.3, 0, h) for h in heads_test]
    for trees in (heads_test, many_roots):
        for h, labels in zip(trees, label_trees(state, X_test, trees)):
            assert [label == root_name for label in labels] == list(h == 0)


def test_a_label_seen_mostly_elsewhere_stays_available(sample):
    X, heads, deprels, _, _, _ = sample
    # one sentence whose root word is labelled "nsubj": nsubj is still for ordinary words
    deprels = [list(labels) for labels in deprels]
    deprels[0][int(np.flatnonzero(heads[0] == 0)[0])] = "nsubj"
    state = new_labeller(X, heads, deprels)
    allowed = dict(zip(state["labels"], state["allowed"]))
    assert allowed["nsubj"] and not allowed["root"]
    assert state["labels"][state["root_label"]] == "root"


# ---------------------------------------------------------------- UD's own constraints


def test_labels_keep_to_the_validators_rules_on_any_tree(sample):
    X, heads, deprels, X_test, heads_test, _ = sample
    state = new_labeller(X, heads, deprels)
    train_labeller(state, X, heads, deprels, 2, random_state=0)
    # gold trees, and flat trees where every word hangs from the first or the last word:
    # many rivals, and every word on one side of its head
    first = [np.r_[0, np.ones(len(h) - 1, np.int64)] for h in heads_test]
    last = [np.r_[np.full(len(h) - 1, len(h)), 0] for h in heads_test]
    for trees in (heads_test, first, last):
        for h, labels in zip(trees, label_trees(state, X_test, trees)):
            for head in set(h.tolist()):
                relations = [labels[m] for m in np.flatnonzero(h == head)]
                assert sum("subj" in r.split(":")[0] and not r.endswith(":outer")
                           for r in relations) <= 1
                assert sum(r.split(":")[0] == "obj" for r in relations) <= 1
            for m, (head, label) in enumerate(zip(h, labels), 1):
                assert not (m < head and label.split(":")[0] in ("conj", "flat", "fixed",
                                                                 "goeswith", "appos"))


def test_of_two_rivals_the_surer_keeps_its_label():
    # labels: 0 nsubj, 1 obj, 2 obl, 3 nsubj:pass; three words under head 1 (1-based)
    exclusive = np.array([K.SUBJECT, K.OBJECT, K.FREE, K.SUBJECT])
    heads = np.array([0, 1, 1, 1])
    block = np.array([1, 2, 3])
    # obj is taken (by word 3), so each nsubj's alternative is obl
    scores = np.array([[5.0, 4.0, 1.0, 0.0],   # nsubj, by 4 over obl
                       [6.0, 5.0, 4.0, 0.0],   # nsubj, by 2 over obl (obj would be 5)
                       [0.0, 3.0, 1.0, 2.0]])  # obj
    allowed = np.ones((3, 4), np.bool_)
    labels = np.array([2, 0, 0, 1])
    K._one_per_head(block, heads, 0, labels, scores, allowed, exclusive)
    assert labels.tolist() == [2, 0, 2, 1]
    # with nothing left outside the class, a word keeps its label
    labels = np.array([2, 0, 0, 1])
    only = np.array([[True, False, False, True]] * 3)
    K._one_per_head(block, heads, 0, labels, scores, only, exclusive)
    assert labels.tolist() == [2, 0, 0, 1]


def test_subjects_objects_and_head_first_relations_by_name():
    labels = ("appos", "conj", "csubj", "nsubj", "nsubj:outer", "nsubj:pass", "obj", "obl")
    exclusive, head_first = _constraints(labels)
    assert exclusive.tolist() == [K.FREE, K.FREE, K.SUBJECT, K.SUBJECT, K.FREE, K.SUBJECT,
                                  K.OBJECT, K.FREE]
    assert head_first.tolist() == [True, True] + [False] * 6


# ---------------------------------------------------------------- learning


@pytest.mark.slow
def test_labels_gold_trees_of_held_out_sentences(sample):
    X, heads, deprels, X_test, heads_test, deprels_test = sample
    state = new_labeller(X, heads, deprels)
    train_labeller(state, X, heads, deprels, 8, random_state=0)
    predicted = label_trees(state, X_test, heads_test)
    correct = sum(a == b for p, g in zip(predicted, deprels_test) for a, b in zip(p, g))
    accuracy = correct / sum(map(len, deprels_test))
    # baseline: the most frequent training label of the word's UPOS
    by_tag = defaultdict(lambda: defaultdict(int))
    for sentence, labels in zip(X, deprels):
        for token, label in zip(sentence, labels):
            by_tag[token["upos"]][label] += 1
    baseline = sum(
        max(by_tag[t["upos"]], key=by_tag[t["upos"]].get, default=None) == label
        for sentence, labels in zip(X_test, deprels_test) for t, label in zip(sentence, labels)
    ) / sum(map(len, deprels_test))
    # 300 training sentences: the tag baseline is near 0.55, the labeller above 0.8
    assert accuracy > 0.8, accuracy
    assert accuracy > baseline + 0.15, (accuracy, baseline)


def test_feats_signature_ignores_item_order_and_is_zero_without_feats():
    items = np.array([3, 5, 5, 3, 7], np.int64)
    # words: {3, 5}, {5, 3}, none, {7}
    signatures = K.feats_signatures(items, np.array([0, 2, 4, 4, 5], np.int64))
    assert signatures[0] == signatures[1] != 0
    assert signatures[2] == 0
    assert len(set(signatures.tolist())) == 3


def test_labels_sentences_of_bare_forms(sample):
    # no tags, lemmas or FEATS: every field falls back to the form, and the labeller
    # still learns (less well than with tags)
    X, heads, deprels, X_test, heads_test, deprels_test = sample
    forms = [[t["form"] for t in s] for s in X]
    state = new_labeller(forms, heads, deprels)
    train_labeller(state, forms, heads, deprels, 8, random_state=0)
    predicted = label_trees(state, [[t["form"] for t in s] for s in X_test], heads_test)
    correct = sum(a == b for p, g in zip(predicted, deprels_test) for a, b in zip(p, g))
    assert correct / sum(map(len, deprels_test)) > 0.6
