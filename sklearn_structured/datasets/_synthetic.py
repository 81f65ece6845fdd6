"""Synthetic corpora with known ground truth.

``make_latent_tree_corpus`` samples dependency trees and their words from the
hidden-state tree model of Dhillon et al. (2012, Eq. 2): the root's state is
drawn from pi, each child's state from its head's state through T_L or T_R
(by the child's side), all children conditionally independent given the
head's state, and each word from its state through O. The exact
log-probability log p(words | tree) of every sample is returned, so estimators
of that model (``SpectralTreeScorer``) can be checked against the truth.
"""

from numbers import Integral, Real

import numpy as np
from numba import njit
from sklearn.utils import check_random_state

from ..kernels.latent_tree import exact_log_probs, sentence_tree
from ..utils import check_dependency_data, pack_ragged
from ..utils._compat import Interval, validate_params


@njit(cache=True, nogil=True)
def _draw(cdf):
    """Index of a categorical draw given a cumulative distribution."""
    i = np.searchsorted(cdf, np.random.random() * cdf[-1], side="right")
    return min(i, cdf.shape[0] - 1)


@njit(cache=True, nogil=True)
def _sample_trees(seed, n_sentences, max_length, mean_children, start_cdf,
                  transition_cdf, emission_cdf):
    """Sample packed (words, heads, offsets) top-down, then lay each tree out
    projectively: left subtrees in order, the head, then right subtrees."""
    np.random.seed(seed)
    words = np.empty(n_sentences * max_length, dtype=np.int64)
    heads = np.empty(n_sentences * max_length, dtype=np.int64)
    offsets = np.zeros(n_sentences + 1, dtype=np.int64)
    parent = np.empty(max_length, dtype=np.int64)
    side = np.empty(max_length, dtype=np.int64)
    state = np.empty(max_length, dtype=np.int64)
    word = np.empty(max_length, dtype=np.int64)
    size = np.empty(max_length, dtype=np.int64)
    begin = np.empty(max_length, dtype=np.int64)
    position = np.empty(max_length, dtype=np.int64)
    for s in range(n_sentences):
        # breadth-first growth: nodes are numbered so that heads come first
        parent[0] = -1
        state[0] = _draw(start_cdf)
        n = 1
        q = 0
        while q < n:
            for d in range(2):
                n_children = np.random.poisson(mean_children[d])
                for _ in range(n_children):
                    if n == max_length:
                        break
                    parent[n] = q
                    side[n] = d
                    state[n] = _draw(transition_cdf[d, state[q]])
                    n += 1
            q += 1
        for v in range(n):
            word[v] = _draw(emission_cdf[state[v]])
            size[v] = 1
        for v in range(n - 1, 0, -1):
            size[parent[v]] += size[v]
        # begin[v] = first position of v's subtree; children of v occupy
        # positions in node order, left ones before v, right ones after
        begin[0] = 0
        for v in range(n):
            cursor = begin[v]
            for c in range(v + 1, n):
                if parent[c] == v and side[c] == 0:
                    begin[c] = cursor
                    cursor += size[c]
            position[v] = cursor
            cursor += 1
            for c in range(v + 1, n):
                if parent[c] == v and side[c] == 1:
                    begin[c] = cursor
                    cursor += size[c]
        lo = offsets[s]
        for v in range(n):
            words[lo + position[v]] = word[v]
            heads[lo + position[v]] = 0 if v == 0 else position[parent[v]] + 1
        offsets[s + 1] = lo + n
    total = offsets[n_sentences]
    return words[:total].copy(), heads[:total].copy(), offsets


@njit(cache=True, nogil=True)
def _sample_on_trees(seed, heads, offsets, start_cdf, transition_cdf, emission_cdf):
    """Words of the packed trees ``heads``: states top-down, then one word per state."""
    np.random.seed(seed)
    words = np.empty(heads.shape[0], dtype=np.int64)
    for s in range(offsets.shape[0] - 1):
        lo, n, start, kids, order = sentence_tree(heads, offsets, s)
        state = np.empty(n + 1, dtype=np.int64)
        for t in range(n - 1, -1, -1):
            v = order[t]
            head = heads[lo + v - 1]
            if head == 0:
                state[v] = _draw(start_cdf)
            else:
                state[v] = _draw(transition_cdf[0 if v < head else 1, state[head]])
            words[lo + v - 1] = _draw(emission_cdf[state[v]])
    return words


def _random_model(rng, n_states, vocabulary_size, emission_concentration):
    """Well-conditioned random parameters: each transition column leans on a
    different state for each side, each state favours its own words."""
    start = rng.dirichlet(np.ones(n_states))
    transitions = np.empty((2, n_states, n_states))
    for d in range(2):
        shift = rng.permutation(n_states)
        for h in range(n_states):
            column = 0.5 * rng.dirichlet(np.ones(n_states))
            column[shift[h]] += 0.5
            transitions[d, :, h] = column
    emissions = rng.dirichlet(np.full(vocabulary_size, emission_concentration), size=n_states).T
    return start, transitions, emissions


@validate_params(
    {
        "n_sentences": [Interval(Integral, 1, None, closed="left")],
        "n_states": [Interval(Integral, 1, None, closed="left")],
        "vocabulary_size": [Interval(Integral, 1, None, closed="left")],
        "max_length": [Interval(Integral, 1, None, closed="left")],
        "mean_children": [tuple, list],
        "emission_concentration": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "return_model": ["boolean"],
        "trees": [list, None],
    },
    prefer_skip_nested_validation=True,
)
def make_latent_tree_corpus(
    n_sentences=1000,
    n_states=4,
    vocabulary_size=300,
    *,
    max_length=20,
    mean_children=(0.4, 0.5),
    emission_concentration=0.1,
    random_state=None,
    return_model=False,
    trees=None,
):
    """Sample (sentence, tree) pairs from a latent-state dependency model.

    The model is the one of Dhillon et al. (2012, Eq. 2), with a tree prior
    added to make it generative: every node draws Poisson(``mean_children[0]``)
    left and Poisson(``mean_children[1]``) right children (at most
    ``max_length`` nodes per sentence), independently of all states. States
    and words then follow Eq. 2. The random parameters are drawn first from
    ``random_state``, the sentences after them, so two calls with the same
    ``random_state`` and different ``n_sentences`` share the model and the
    shorter corpus is a prefix of the longer one.

    Parameters
    ----------
    n_sentences : int
        Number of sentences.
    n_states : int
        Number of hidden states k.
    vocabulary_size : int
        Number of word types; words are the strings ``"w0"``, ``"w1"``, ...
    max_length : int
        Cap on the number of tokens per sentence.
    mean_children : (float, float)
        Mean number of left and right children of a node.
    emission_concentration : float
        Dirichlet concentration of each state's word distribution (smaller
        means states own more distinct words).
    random_state : int, RandomState instance or None
        Seeds the model and the samples.
    return_model : bool
        Also return the parameters.
    trees : list of array-like of int, optional
        Tree shapes to lay the words on (heads, 1-based, 0 for the root),
        for example the trees of a treebank, instead of sampled ones; then
        ``n_sentences`` must equal ``len(trees)`` and ``max_length`` and
        ``mean_children`` are not used.

    Returns
    -------
    X : list of list of str
        Sentences.
    y : list of ndarray of int64
        Heads, 1-based, 0 for the root (projective trees).
    log_prob : ndarray of shape (n_sentences,)
        Exact log p(words | tree) under the model (natural log).
    model : dict, only if ``return_model``
        ``start_probs`` (k,), ``transitions`` (2, k, k) indexed
        ``[side, child_state, head_state]`` with side 0 = left,
        ``emissions`` (vocabulary_size, k) indexed ``[word, state]``.
    """
    if len(mean_children) != 2 or min(mean_children) < 0:
        raise ValueError(f"mean_children must be two non-negative means, got {mean_children!r}")
    rng = check_random_state(random_state)
    start, transitions, emissions = _random_model(rng, n_states, vocabulary_size,
                                                  emission_concentration)
    seed = int(rng.randint(np.iinfo(np.int32).max))
    cdfs = (np.cumsum(start), np.cumsum(transitions.transpose(0, 2, 1), axis=2),
            np.cumsum(emissions.T, axis=1))
    if trees is None:
        words, heads, offsets = _sample_trees(
            seed, n_sentences, max_length, np.asarray(mean_children, dtype=np.float64), *cdfs)
    else:
        if len(trees) != n_sentences:
            raise ValueError(f"n_sentences={n_sentences} but {len(trees)} trees were given")
        _, trees = check_dependency_data([["w"] * len(h) for h in trees], trees, single_root=False)
        heads, offsets = pack_ragged(trees)
        words = _sample_on_trees(seed, heads, offsets, *cdfs)
    log_prob = exact_log_probs(words, heads, offsets, start, transitions, emissions)
    names = np.array([f"w{i}" for i in range(vocabulary_size)], dtype=object)
    X = [names[words[offsets[i]:offsets[i + 1]]].tolist() for i in range(n_sentences)]
    y = [heads[offsets[i]:offsets[i + 1]].copy() for i in range(n_sentences)]
    if return_model:
        model = {"start_probs": start, "transitions": transitions, "emissions": emissions}
        return X, y, log_prob, model
    return X, y, log_prob
