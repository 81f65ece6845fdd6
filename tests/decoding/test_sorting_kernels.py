import numpy as np
import pytest

from sklearn_structured.kernels.sorting import sorted_position, stable_argsort


@pytest.mark.parametrize("size", [0, 1, 2, 7, 64, 129])
def test_stable_argsort_matches_numpy_stable_sort(size):
    keys = np.random.default_rng(size).integers(0, 5, size)  # many ties
    np.testing.assert_array_equal(stable_argsort(keys), np.argsort(keys, kind="stable"))


def test_sorted_position_finds_present_keys_and_only_those():
    table = np.array([-4, 1, 3, 9, 20], dtype=np.int64)
    for key in range(-6, 23):
        expected = int(np.flatnonzero(table == key)[0]) if key in table else -1
        assert sorted_position(table, key) == expected
    assert sorted_position(table[:0], 3) == -1
