"""Oracle tests of the easy-first numba kernels against brute-force enumeration."""


import numpy as np
import pytest

from sklearn_structured.easy_first import _parser_kernels as pk
from sklearn_structured.easy_first import _tagger_kernels as tk
from sklearn_structured.easy_first._beam import Perceptron, Search
from sklearn_structured.utils import find_heads_error

MASK = (1 << 12) - 1


def _sentence(rng, n):
    words = rng.integers(0, 6, size=n).astype(np.int64)
    tags = rng.integers(0, 3, size=n).astype(np.int64)
    return words, tags


class _State:
    """A plain-Python easy-first state, rebuilt from scratch for every action."""

    def __init__(self, n):
        self.pend = np.arange(n)
        self.r = n
        self.vl = np.zeros(n, np.int64)
        self.vr = np.zeros(n, np.int64)
        self.lc = np.full(n, -1, np.int64)
        self.rc = np.full(n, -1, np.int64)
        self.heads = np.full(n, -1, np.int64)

    def copy(self):
        other = _State(0)
        for name in ("pend", "vl", "vr", "lc", "rc", "heads"):
            setattr(other, name, getattr(self, name).copy())
        other.r = self.r
        return other

    def actions(self):
        return [(j, a) for j in range(self.r) for a in (pk.LEFT, pk.RIGHT)
                if not (a == pk.LEFT and j == 0) and not (a == pk.RIGHT and j == self.r - 1)]

    def score(self, j, a, words, tags, W):
        feats = np.empty(pk.N_FEATURES, np.int64)
        nf = pk.parser_features(self.pend, self.r, j, words, tags, self.vl, self.vr,
                                self.lc, self.rc, MASK, feats)
        assert nf == pk.N_FEATURES
        return W[feats[:nf], a].sum()

    def apply(self, j, a):
        new = self.copy()
        new.r = pk.apply_action(new.pend, new.r, j, a, new.vl, new.vr, new.lc, new.rc, new.heads)
        return new

    def final_heads(self):
        return np.where(self.heads < 0, 0, self.heads + 1)


def _all_sequences(state, words, tags, W, prefix=(), score=0.0):
    """Yield (actions, score, final state) for every complete action sequence."""
    if state.r == 1:
        yield prefix, score, state
        return
    for j, a in state.actions():
        yield from _all_sequences(state.apply(j, a), words, tags, W,
                                  prefix + ((int(state.pend[j]), a),),
                                  score + state.score(j, a, words, tags, W))


def _run(words, tags, gold, W, U, beam, train, merge=False):
    n = len(words)
    n_children = np.bincount(gold[gold >= 0], minlength=n).astype(np.int64)
    heads = np.empty(n, np.int64)
    order = np.empty(n, np.int64)
    records = np.zeros((1, 5))
    sentences = pk.Sentences(words, tags, np.array([0, n]))
    search = Search(beam, merge)
    if not train:
        heads, order = pk.parse(sentences, W, search)
        return heads, order, True, records[0]
    clean = pk.train_epoch(sentences, pk.Gold(gold, n_children), np.array([0]),
                           Perceptron(W, U, np.zeros(1)), search, records)
    return heads, order, clean == 1, records[0]


def _parse(words, tags, W, beam, merge=False):
    gold = np.zeros(len(words), np.int64)
    heads, order, _, _ = _run(words, tags, gold, W, W, beam, False, merge)
    return heads, order


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_wide_beam_finds_best_sequence_of_exhaustive_search(n):
    rng = np.random.default_rng(n)
    for trial in range(3):
        words, tags = _sentence(rng, n)
        W = rng.normal(size=(MASK + 1, 2))
        results = list(_all_sequences(_State(n), words, tags, W))
        assert len(results) == 2 ** (n - 1) * np.prod(np.arange(1, n))
        best_actions, best_score, best_state = max(results, key=lambda x: x[1])
        heads, order = _parse(words, tags, W, beam=len(results))
        assert np.array_equal(heads, best_state.final_heads()), (n, trial)
        assert find_heads_error(heads) is None
        # the attachment order replays the best sequence
        attached = [dep for dep, _ in best_actions]
        assert np.array_equal(np.argsort(order)[: n - 1], attached)


@pytest.mark.parametrize("n", [3, 4, 5])
def test_merged_beam_as_wide_as_the_trees_finds_best_sequence(n):
    """With merging, a beam holding every distinct state of a step is exhaustive.

    Scores depend on the state alone, so keeping the best sequence per state
    loses nothing: this is exact dynamic programming over states.
    """
    rng = np.random.default_rng(20 + n)
    layer = {(): _State(n)}
    widest = 1
    for _ in range(n - 1):
        layer = {tuple(s.heads): s for state in layer.values()
                 for s in (state.apply(j, a) for j, a in state.actions())}
        widest = max(widest, len(layer))
    n_trees = widest
    for trial in range(3):
        words, tags = _sentence(rng, n)
        W = rng.normal(size=(MASK + 1, 2))
        _, best_score, best_state = max(_all_sequences(_State(n), words, tags, W),
                                        key=lambda x: x[1])
        heads, _ = _parse(words, tags, W, beam=n_trees, merge=True)
        assert np.array_equal(heads, best_state.final_heads()), (n, trial)
        # without merging, that beam is too narrow to be exact in general, but valid
        heads, _ = _parse(words, tags, W, beam=n_trees, merge=False)
        assert find_heads_error(heads) is None


def test_greedy_and_narrow_beams_produce_valid_trees_and_never_beat_the_optimum():
    rng = np.random.default_rng(0)
    for n in (1, 2, 6, 9, 17):
        words, tags = _sentence(rng, n)
        W = rng.normal(size=(MASK + 1, 2))
        for beam in (1, 2, 4):
            heads, order = _parse(words, tags, W, beam)
            assert find_heads_error(heads) is None, (n, beam, heads)
            assert sorted(order[heads != 0]) == list(range(n - 1))


def _replay(actions, n):
    state = _State(n)
    for dep, a in actions:
        j = int(np.flatnonzero(state.pend[: state.r] == dep)[0])
        state = state.apply(j, a)
    return state


def _gold_reachable(state, gold, memo):
    key = (tuple(state.pend[: state.r]), tuple(state.heads))
    if key not in memo:
        if state.r == 1:
            memo[key] = np.array_equal(state.heads, gold)
        else:
            memo[key] = any(_gold_reachable(state.apply(j, a), gold, memo)
                            for j, a in state.actions())
    return memo[key]


def _projective_trees(n):
    """Every tree easy-first can build for n words, as 0-based heads (-1 = root)."""
    trees = set()
    rng = np.random.default_rng(0)
    W = np.zeros((MASK + 1, 2))
    words, tags = _sentence(rng, n)
    for _, _, state in _all_sequences(_State(n), words, tags, W):
        trees.add(tuple(state.heads))
    return [np.array(t) for t in sorted(trees)]


@pytest.mark.parametrize("n", [3, 4, 5])
def test_action_correctness_matches_reachability(n):
    rng = np.random.default_rng(10 + n)
    trees = _projective_trees(n)
    for gold in trees[:: max(1, len(trees) // 6)]:
        n_children = np.bincount(gold[gold >= 0], minlength=n).astype(np.int64)
        memo = {}
        # walk random correct states and check every action at each of them
        for _ in range(4):
            state = _State(n)
            while state.r > 1:
                assert _gold_reachable(state, gold, memo)
                good = []
                for j, a in state.actions():
                    claimed = pk.action_is_correct(state.pend, state.r, j, a, state.vl,
                                                   state.vr, gold, n_children)
                    assert claimed == _gold_reachable(state.apply(j, a), gold, memo)
                    if claimed:
                        good.append((j, a))
                j, a = good[rng.integers(len(good))]
                state = state.apply(j, a)


def _correct_sequences(n, gold, length):
    n_children = np.bincount(gold[gold >= 0], minlength=n).astype(np.int64)

    def extend(state, prefix):
        if len(prefix) == length:
            yield prefix
            return
        for j, a in state.actions():
            if pk.action_is_correct(state.pend, state.r, j, a, state.vl, state.vr, gold,
                                    n_children):
                yield from extend(state.apply(j, a), prefix + ((int(state.pend[j]), a),))

    return list(extend(_State(n), ()))


def _sequence_score(actions, n, words, tags, W):
    state = _State(n)
    total = 0.0
    for dep, a in actions:
        j = int(np.flatnonzero(state.pend[: state.r] == dep)[0])
        total += state.score(j, a, words, tags, W)
        state = state.apply(j, a)
    return total


def _train_one(words, tags, gold, W, beam, merge=False):
    _, _, ok, record = _run(words, tags, gold, W, np.zeros_like(W), beam, True, merge)
    return ok, record


def test_figure_1_update_uses_pruned_correct_extension_not_a_higher_scoring_one():
    """Ma et al. Figure 1: two correct sequences, the better one pruned earlier.

    Search random weights for a sentence where, when the last correct
    sequence falls off the beam, some other correct sequence of that length
    scores higher than the beam's best (so updating towards it would be
    invalid). The kernel must update towards a correct sequence that scores
    no higher than the prediction.
    """
    rng = np.random.default_rng(1)
    n = 5
    trees = _projective_trees(n)
    found = 0
    for _ in range(400):
        words, tags = _sentence(rng, n)
        gold = trees[rng.integers(len(trees))]
        W = rng.normal(size=(MASK + 1, 2))
        W_before = W.copy()
        ok, record = _train_one(words, tags, gold, W, beam=1)
        if ok or record[3] != 1.0:
            continue
        length = int(record[4])
        correct = _correct_sequences(n, gold, length)
        scores = [_sequence_score(c, n, words, tags, W_before) for c in correct]
        assert record[1] == pytest.approx(max(s for s in scores if s <= record[1] + 1e-9))
        assert record[1] <= record[2] + 1e-9
        if max(scores) > record[2] + 1e-9:
            found += 1
            # the update moved the weights: the chosen correct sequence gained
            # its features, and W changed only by the two sequences' features
            assert not np.array_equal(W, W_before)
    assert found >= 3, "the search should meet the Figure 1 situation a few times"


def test_no_update_when_greedy_parse_is_correct():
    rng = np.random.default_rng(3)
    n = 4
    words, tags = _sentence(rng, n)
    trees = _projective_trees(n)
    W = rng.normal(size=(MASK + 1, 2))
    heads, _ = _parse(words, tags, W, beam=1)
    gold = heads - 1
    W_before = W.copy()
    ok, record = _train_one(words, tags, gold, W, beam=1)
    assert ok and record[0] == 0.0
    assert np.array_equal(W, W_before)
    wrong = next(t for t in trees if not np.array_equal(t, gold))
    ok, record = _train_one(words, tags, wrong, W, beam=1)
    assert not ok and record[0] == 1.0 and record[1] <= record[2]


@pytest.mark.parametrize("beam", [1, 3])
def test_repeated_updates_learn_every_tree_of_a_sentence(beam):
    """Perceptron convergence on separable data: each gold tree is learnt from zero weights."""
    rng = np.random.default_rng(4)
    n = 5
    words, tags = _sentence(rng, n)
    words = np.arange(n, dtype=np.int64)  # distinct words make every tree separable
    for gold in _projective_trees(n)[::7]:
        W = np.zeros((MASK + 1, 2))
        for _ in range(30):
            ok, record = _train_one(words, tags, gold, W, beam=beam)
            assert record[1] <= record[2] + 1e-9
            if ok:
                break
        heads, _ = _parse(words, tags, W, beam)
        assert np.array_equal(heads, gold + 1)


# --- tagger ----------------------------------------------------------------------

def _tagger_problem(rng, n, n_tags, n_static_rows=30, k=3, values=None, parts=None):
    """Static rows, weights and the tag context (identity unless ``values`` are given;
    ``parts``: each tag's part ids, -1 padded, or None for tags without parts)."""
    static_rows = rng.integers(0, n_static_rows, size=(n, k)).astype(np.int64)
    context = tk.tag_context(n_static_rows, np.arange(n_tags) if values is None else values,
                             np.zeros((n_tags, 0)) if parts is None else parts)
    rows = n_static_rows + tk.n_dynamic_rows(context.n_values, context.n_parts)
    return static_rows, rng.normal(size=(rows, n_tags + context.n_parts)), context


def _tag_action_score(static_rows, tags, j, t, W, n_tags, context):
    """The score of tagging word j with t, read independently of the kernels: each static
    feature's weights of t and of t's parts, and the tag-context features' of t."""
    rows = np.empty(tk.n_dynamic_features(context), np.int64)
    tk.dynamic_rows(tags, j, context, rows)
    assert (rows[:tk.N_DYNAMIC] >= 0).all()
    columns = [t] + [n_tags + p for p in context.parts[t] if p >= 0]
    static = sum(W[r, columns].sum() for r in static_rows[j] if r > 0)
    return static + W[rows[rows >= 0], t].sum()


def test_a_neighbours_tag_parts_are_tag_context_features():
    # tags 0..2 with parts {0, 1}, {1}, {}; three words, the outer two tagged 0 and 2
    context = tk.tag_context(10, np.arange(3), [[0, 1], [1, -1], [-1, -1]])
    rows = np.empty(tk.n_dynamic_features(context), np.int64)
    tk.dynamic_rows(np.array([0, -1, 2]), 1, context, rows)
    part_base = 10 + tk.n_dynamic_rows(context.n_values, 0)
    assert list(rows[tk.N_DYNAMIC:]) == [part_base, part_base + 1, -1, -1]
    tk.dynamic_rows(np.array([2, -1, 1]), 1, context, rows)
    assert list(rows[tk.N_DYNAMIC:]) == [-1, -1, part_base + 2 + 1, -1]  # right side: +2
    assert 10 + tk.n_dynamic_rows(context.n_values, context.n_parts) == part_base + 4


def _all_taggings(static_rows, W, n_tags, base, tags=None, score=0.0):
    n = len(static_rows)
    tags = np.full(n, -1, np.int64) if tags is None else tags
    if np.all(tags >= 0):
        yield score, tags.copy()
        return
    for j in np.flatnonzero(tags < 0):
        for t in range(n_tags):
            gain = _tag_action_score(static_rows, tags, j, t, W, n_tags, base)
            tags[j] = t
            yield from _all_taggings(static_rows, W, n_tags, base, tags, score + gain)
            tags[j] = -1


def _run_tagger(static_rows, gold, W, U, n_tags, base, beam, train, merge=False, resume=False):
    n = len(static_rows)
    tags = np.empty(n, np.int64)
    order = np.empty(n, np.int64)
    records = np.zeros((1, 5))
    offsets = np.array([0, n])
    search = Search(beam, merge)
    if not train:
        tags, order = tk.tag(static_rows, offsets, W, base, search)
        return tags, order, True, records[0]
    clean = tk.train_epoch(static_rows, offsets, gold, np.array([0]),
                           Perceptron(W, U, np.zeros(1)), base, search, resume, records)
    return tags, order, clean == 1, records[0]


_PARTS = [[0, 1], [1, -1], [-1, -1]]  # three tags: two parts, one part, none


@pytest.mark.parametrize("n, n_tags, values, parts", [
    (1, 3, None, None), (2, 2, None, None), (3, 2, None, None), (3, 3, None, None),
    (3, 3, [0, 1, 1], None), (4, 3, [0, 0, 0], None), (3, 3, None, _PARTS),
    (4, 3, [0, 1, 1], _PARTS)])
def test_tagger_wide_beam_finds_best_of_exhaustive_search(n, n_tags, values, parts):
    # values: tags sharing a context value (as the rare tags of a large tag set do);
    # parts: tags made of parts, as FEATS strings of Feature=Value pairs
    rng = np.random.default_rng(100 + n)
    for _ in range(3):
        static_rows, W, base = _tagger_problem(rng, n, n_tags, values=values, parts=parts)
        results = list(_all_taggings(static_rows, W, n_tags, base))
        best_score, best_tags = max(results, key=lambda x: x[0])
        gold = np.zeros(n, np.int64)
        tags, order, _, _ = _run_tagger(static_rows, gold, W, W, n_tags, base, len(results), False)
        assert np.array_equal(tags, best_tags)
        assert sorted(order) == list(range(n))


@pytest.mark.parametrize("beam", [1, 3])
@pytest.mark.parametrize("parts", [None, [[0, 2], [1, -1], [-1, -1], [0, 1], [2, -1],
                                          [-1, -1], [1, 2]]])
def test_tagger_reads_a_csr_table_as_the_dense_one(beam, parts):
    """The CSR form a fitted tagger keeps, with its densest rows stored dense, tags and
    orders exactly as the dense table."""
    from scipy.sparse import csr_array

    rng = np.random.default_rng(5)
    n_tags = 7
    lengths = rng.integers(1, 9, size=20)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    static_rows, W, context = _tagger_problem(rng, int(offsets[-1]), n_tags,
                                              values=[0, 1, 2, 3, 3, 3, 3], parts=parts)
    # mostly zero, as a fitted table is; every other row almost empty, so that the
    # scoring table keeps both sparse and dense rows
    zero = rng.random(W.shape) < np.where(np.arange(len(W)) % 2, 0.5, 0.98)[:, None]
    W[zero] = 0.0
    W[context.base:, n_tags:] = 0.0  # training never sets a tag-context part cell
    W = W.astype(np.float32)
    scorer = tk.scoring_table(csr_array(W))
    assert 0 < len(scorer[-1]) < len(W)
    search = Search(beam, True)
    dense = tk.tag(static_rows, offsets, W, context, search)
    sparse = tk.tag(static_rows, offsets, scorer, context, search)
    for a, b in zip(dense, sparse):
        np.testing.assert_array_equal(a, b)


def test_a_dense_row_of_the_scoring_table_adds_only_the_cells_out_holds():
    """A tag-context row is added to the tags' columns only, though the table also has
    part columns: nothing is written past them."""
    from scipy.sparse import csr_array

    W = np.zeros((3, 16), np.float32)
    W[1, :3] = [1, 2, 3]  # a row stored dense (beyond out, cells out must not get)
    W[1, 3:6] = 9.0
    W[2, 0] = 4.0  # a row left sparse
    scorer = tk.scoring_table(csr_array(W))
    assert scorer[3].tolist() == [-1, 0, -1]
    buffer = np.full(16, -7.0)
    tk._add_sparse_row(scorer, 1, buffer[:3])
    tk._add_sparse_row(scorer, 2, buffer[:3])
    assert buffer.tolist() == [-2.0, -5.0, -4.0] + [-7.0] * 13


@pytest.mark.parametrize("average", [True, False])
def test_prediction_table_is_the_csr_of_the_prediction_weights(average):
    from sklearn_structured.utils import perceptron_state, prediction_weights

    rng = np.random.default_rng(3)
    state = perceptron_state({"W": rng.normal(size=(40, 6)) * (rng.random((40, 6)) < 0.3)})
    state["sums"]["W"][:] = rng.normal(size=(40, 6)) * (rng.random((40, 6)) < 0.3)
    state["count"][0] = 17.0
    indptr, indices, data = tk.prediction_table(state["weights"]["W"], state["sums"]["W"],
                                                17.0, average)
    dense = np.zeros((40, 6), np.float32)
    for i in range(40):
        dense[i, indices[indptr[i]:indptr[i + 1]]] = data[indptr[i]:indptr[i + 1]]
    expected = prediction_weights(state, "W", average)
    np.testing.assert_array_equal(dense, expected)
    assert len(data) == np.count_nonzero(expected)


@pytest.mark.parametrize("resume", [False, True])
@pytest.mark.parametrize("parts", [None, [[0, 1], [1, -1], [-1, -1], [0, -1]]])
def test_tagger_updates_are_valid_and_learn_the_gold_tags(resume, parts):
    rng = np.random.default_rng(7)
    n, n_tags = 6, 4
    static_rows, W, base = _tagger_problem(rng, n, n_tags, parts=parts)
    static_rows[:, 0] = np.arange(1, n + 1)  # a distinct feature per word: separable
    gold = rng.integers(0, n_tags, size=n).astype(np.int64)
    for beam in (1, 3):
        W = np.zeros_like(W)
        U = np.zeros_like(W)
        for _ in range(40):
            _, _, ok, record = _run_tagger(static_rows, gold, W, U, n_tags, base, beam, True,
                                           resume=resume)
            assert record[1] <= record[2] + 1e-9
            if ok:
                break
        tags, _, _, _ = _run_tagger(static_rows, gold, W, W, n_tags, base, beam, False)
        assert np.array_equal(tags, gold)


@pytest.mark.parametrize("beam", [1, 3])
def test_tagger_resuming_after_an_update_learns_from_the_whole_sentence(beam):
    # the early update learns from a sentence's first mistake only, resuming (LaSO)
    # from every mistake of the pass: it needs fewer passes to tag the sentence right
    n, n_tags = 8, 5
    rng = np.random.default_rng(4)
    static_rows, _, base = _tagger_problem(rng, n, n_tags)
    static_rows[:, 0] = np.arange(1, n + 1)  # one distinct feature per word
    static_rows[:, 1:] = 0
    gold = rng.integers(0, n_tags, size=n).astype(np.int64)
    passes = {}
    for resume in (False, True):
        W = np.zeros((base.base + tk.n_dynamic_rows(base.n_values, 0), n_tags))
        U = np.zeros_like(W)
        for passes[resume] in range(1, 50):
            if _run_tagger(static_rows, gold, W, U, n_tags, base, beam, True, resume=resume)[2]:
                break
    assert passes[True] < passes[False] < 49
