"""The brute-force tree oracle of ``_oracles`` checked against known counts."""

from _oracles import all_trees, is_projective, is_tree


def test_enumeration_counts_match_known_formulas():
    from math import comb

    for n in range(1, 7):
        # Cayley: (n+1)^(n-1) trees rooted at 0, n^(n-1) with one root child
        assert len(all_trees(n)) == (n + 1) ** (n - 1)
        assert len(all_trees(n, single_root=True)) == n ** (n - 1)
        # projective trees with the root at position 0 (OEIS A001764, A006013)
        assert len(all_trees(n, projective=True)) == comb(3 * n, n) // (2 * n + 1)
        assert len(all_trees(n, projective=True, single_root=True)) == comb(3 * n - 2, n - 1) // n


def test_projectivity_and_tree_checks():
    assert is_projective([2, 0, 2]) and not is_projective([3, 4, 0, 3])
    assert is_tree([2, 0, 2], single_root=True)
    assert not is_tree([2, 1, 0])  # 1 <-> 2 cycle
    assert not is_tree([0, 0], single_root=True) and is_tree([0, 0])
