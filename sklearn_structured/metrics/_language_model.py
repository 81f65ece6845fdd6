"""Perplexity from per-sentence log-likelihoods."""

import numpy as np


def perplexity(log_likelihoods, n_tokens):
    """``exp(-sum(log_likelihoods) / sum(n_tokens))``.

    ``log_likelihoods`` are natural-log probabilities of whole sentences;
    ``n_tokens`` is the total number of predicted tokens (a scalar) or one
    count per sentence. Whether an end-of-sentence token is counted is the
    caller's convention; the language models of this library count it.
    """
    total_ll = float(np.sum(log_likelihoods))
    total_tokens = float(np.sum(n_tokens))
    if total_tokens <= 0:
        raise ValueError("n_tokens must add up to a positive count")
    return float(np.exp(-total_ll / total_tokens))
