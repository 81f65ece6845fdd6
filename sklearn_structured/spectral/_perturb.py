"""One-word reattachments: the nearest wrong trees of a gold tree, on which a
tree scorer's within-sentence discrimination is measured."""

from ..utils import find_heads_error


def reattach_one_word(heads, rng, max_tries=1000):
    """A different valid tree with one word moved to another head, or None
    when none is found (a two-word sentence has no other single-root tree).

    ``rng`` is a numpy ``Generator``; candidate moves are drawn at random
    until one gives a tree.
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
