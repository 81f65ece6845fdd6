"""Top-k selection of beam candidates, shared by the parser and tagger kernels."""

from numba import njit


@njit(cache=True, nogil=True)
def offer_candidate(score, b, j, a, top_score, top_b, top_j, top_a, count, size):
    """Insert a candidate into the descending top-``size`` list; ties keep the earlier one."""
    if count == size and score <= top_score[size - 1]:
        return count
    pos = count if count < size else size - 1
    while pos > 0 and top_score[pos - 1] < score:
        top_score[pos] = top_score[pos - 1]
        top_b[pos] = top_b[pos - 1]
        top_j[pos] = top_j[pos - 1]
        top_a[pos] = top_a[pos - 1]
        pos -= 1
    top_score[pos] = score
    top_b[pos] = b
    top_j[pos] = j
    top_a[pos] = a
    return count + 1 if count < size else size
