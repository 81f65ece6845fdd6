"""One-word reattachments: the nearest wrong trees of a gold tree, on which a
tree scorer's within-sentence discrimination is measured."""

from ..utils import find_heads_error


def reattach_one_word(heads, rng, max_tries=1000):
    """A valid tree that differs from ``heads`` in the head of one word.

    The nearest wrong trees of a gold tree: how often a tree scorer (such
    as :meth:`SpectralTreeScorer.score_samples`) prefers the gold tree to
    such a tree measures how well it tells trees of one sentence apart.

    Parameters
    ----------
    heads : ndarray of int
        A tree: the head of every word, 1-based, 0 for the root.
    rng : numpy.random.Generator
        Draws the moves (a word and a new head) until one gives a tree.
    max_tries : int, default=1000
        Moves drawn before giving up.

    Returns
    -------
    tree : ndarray of int or None
        The moved tree (a copy), or None when no move gave a tree (a
        sentence of two words has no other single-root tree).
    """
    n = len(heads)
    for _ in range(max_tries):
        m, head = rng.integers(n), rng.integers(n + 1)
        if head in (m + 1, heads[m]):
            continue
        tree = heads.copy()
        tree[m] = head
        if find_heads_error(tree) is None:
            return tree
    return None
