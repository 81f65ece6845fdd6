"""Threads inside an estimator: always threads of this process.

The estimators parallelise their numba kernels (which release the GIL) over
threads. A joblib backend the caller chose with ``parallel_backend`` or
``parallel_config`` (Dask, Ray, loky) is for the outer loop, such as
GridSearchCV; if an estimator's inner calls went through it, every one would
ship the model (tens of MB) to the cluster. So ``n_jobs`` is resolved here
without looking at that context, and the threads are started with joblib's
threading backend explicitly.
"""

import contextvars
import os

import numpy as np
from joblib import Parallel, delayed


def thread_count(n_jobs):
    """Threads for ``n_jobs``: None or 0 -> 1, -1 -> every core, -2 -> all but one, k -> k."""
    if not n_jobs:
        return 1
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return n_jobs


def run_in_threads(function, argument_tuples, n_threads):
    """``[function(*args) for args in argument_tuples]``, on up to ``n_threads`` local threads.

    Each call runs in a copy of the caller's context, so what the caller set
    in context variables (the step label of progress lines) holds in the threads.
    """
    argument_tuples = list(argument_tuples)
    if n_threads <= 1 or len(argument_tuples) <= 1:
        return [function(*args) for args in argument_tuples]
    return Parallel(n_jobs=min(n_threads, len(argument_tuples)), backend="threading")(
        delayed(contextvars.copy_context().run)(function, *args) for args in argument_tuples
    )


def map_ranges(function, n_items, n_jobs, work=None):
    """``function(lo, hi)`` on contiguous ranges covering ``range(n_items)``, one per thread.

    The ranges hold about equal numbers of items, or about equal total
    ``work`` (one non-negative cost per item) when it is given. Returns the
    results in the order of the ranges (an empty list when there are no
    items).
    """
    n_chunks = min(thread_count(n_jobs), n_items)
    if n_chunks <= 0:
        return []
    if n_chunks == 1:  # one range: no bounds to compute (a server runs this on every request)
        return [function(np.int64(0), np.int64(n_items))]
    if work is None:
        bounds = np.linspace(0, n_items, n_chunks + 1).astype(np.int64)
    else:
        total = np.cumsum(work)
        inner = np.searchsorted(total, total[-1] * np.arange(1, n_chunks) / n_chunks, "right")
        bounds = np.unique(np.concatenate([[0], inner, [n_items]]))
    return run_in_threads(function, zip(bounds[:-1], bounds[1:]), len(bounds) - 1)
