"""Top-k selection of beam candidates, shared by the parser and tagger kernels."""

from numba import njit

from ..kernels.hashing import feature_hash

_DECISION_TEMPLATE = 1


@njit(cache=True, nogil=True, inline="always")
def action_key(position, value):
    """A pseudo-random 63-bit key of one decision (an arc, or a word's tag).

    A state's signature is the XOR of the keys of its decisions, so two action
    sequences that make the same decisions in different orders (spurious
    ambiguity) have the same signature.
    """
    return feature_hash(_DECISION_TEMPLATE, position, value, 0, 0, 0)


@njit(cache=True, nogil=True)
def offer_candidate(score, signature, b, j, a, top_score, top_sig, top_b, top_j, top_a, count,
                    size, merge):
    """Insert a candidate into the descending top-``size`` list; ties keep the earlier one.

    With ``merge``, a candidate whose signature is already listed keeps only
    the better-scoring of the two, so the beam holds distinct states.
    """
    if merge:
        for k in range(count):
            if top_sig[k] == signature:
                if top_score[k] >= score:
                    return count
                for m in range(k, count - 1):  # drop the worse duplicate
                    top_score[m] = top_score[m + 1]
                    top_sig[m] = top_sig[m + 1]
                    top_b[m] = top_b[m + 1]
                    top_j[m] = top_j[m + 1]
                    top_a[m] = top_a[m + 1]
                count -= 1
                break
    if count == size and score <= top_score[size - 1]:
        return count
    pos = count if count < size else size - 1
    while pos > 0 and top_score[pos - 1] < score:
        top_score[pos] = top_score[pos - 1]
        top_sig[pos] = top_sig[pos - 1]
        top_b[pos] = top_b[pos - 1]
        top_j[pos] = top_j[pos - 1]
        top_a[pos] = top_a[pos - 1]
        pos -= 1
    top_score[pos] = score
    top_sig[pos] = signature
    top_b[pos] = b
    top_j[pos] = j
    top_a[pos] = a
    return count + 1 if count < size else size
