"""Chunking work over threads: contiguous ranges that cover every item once."""

import numpy as np
import pytest

from sklearn_structured.utils import map_ranges


@pytest.mark.parametrize("n_items", [0, 1, 2, 7, 100])
@pytest.mark.parametrize("n_jobs", [None, 1, 2, 3])
def test_ranges_cover_every_item_once_in_order(n_items, n_jobs):
    ranges = map_ranges(lambda lo, hi: (lo, hi), n_items, n_jobs)
    assert [i for lo, hi in ranges for i in range(lo, hi)] == list(range(n_items))
    assert len(ranges) <= max(1, n_jobs or 1)


def test_ranges_balance_the_given_work():
    work = np.array([100.0] + [1.0] * 100)  # one heavy item, then many light ones
    ranges = map_ranges(lambda lo, hi: (lo, hi), len(work), 2, work=work)
    assert ranges == [(0, 1), (1, 101)]
