"""Threads inside an estimator: always threads of this process.

The estimators parallelise their numba kernels (which release the GIL) over
threads. A joblib backend the caller chose with ``parallel_backend`` or
``parallel_config`` (Dask, Ray, loky) is for the outer loop, such as
GridSearchCV; if an estimator's inner calls went through it, every one would
ship the model (tens of MB) to the cluster. So ``n_jobs`` is resolved here
without looking at that context, and the threads are started with joblib's
threading backend explicitly.
"""

import os

from joblib import Parallel, delayed


def thread_count(n_jobs):
    """Threads for ``n_jobs``: None or 0 -> 1, -1 -> every core, -2 -> all but one, k -> k."""
    if not n_jobs:
        return 1
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return n_jobs


def run_in_threads(function, argument_tuples, n_threads):
    """``[function(*args) for args in argument_tuples]``, on up to ``n_threads`` local threads."""
    argument_tuples = list(argument_tuples)
    if n_threads <= 1 or len(argument_tuples) <= 1:
        return [function(*args) for args in argument_tuples]
    return Parallel(n_jobs=min(n_threads, len(argument_tuples)), backend="threading")(
        delayed(function)(*args) for args in argument_tuples
    )
