"""Prediction speed of LowRankTensorParser with n_jobs=1 and n_jobs=2 (joblib threads).

The model is trained briefly (first 3,000 EWT training sentences, one epoch
after the initialisation pass): prediction cost depends on the feature spaces
and the sentences, not on how well the weights are trained. Timings alternate
between the two settings so that a change in machine load hits both; each
figure is the median of the repeats. Run it on a quiet machine: with the other
core busy, a second thread has nothing to run on.

    SKLEARN_STRUCTURED_DATA=... python -m benchmarks lowrank_threads
"""

import os
import statistics


from sklearn_structured import LowRankTensorParser

from benchmarks.base import data_home, load_treebank, markdown_table, timed, write_section

ROUNDS, REPEATS = 3, 5


def main(argv=None):
    data_home()
    X, y = load_treebank("en_ewt", "train")
    X_test, _ = load_treebank("en_ewt", "test")
    parser = LowRankTensorParser(n_epochs=1, random_state=0).fit(X[:3000], y[:3000])
    parser.predict(X_test[:50])  # compile before timing
    rates = {1: [], 2: []}
    loads = []
    for _ in range(ROUNDS):
        for n_jobs in (1, 2):
            parser.set_params(n_jobs=n_jobs)
            for _ in range(REPEATS):
                rates[n_jobs].append(len(X_test) / timed(lambda: parser.predict(X_test)).wall)
            loads.append(os.getloadavg()[0])
    one, two = statistics.median(rates[1]), statistics.median(rates[2])
    rows = [[1, f"{one:,.0f}", "1.00"], [2, f"{two:,.0f}", f"{two / one:.2f}"]]
    body = (
        f"EWT test ({len(X_test)} sentences), model trained on 3,000 EWT training sentences for one "
        f"epoch; median of {ROUNDS * REPEATS} timed `predict` calls per setting, settings "
        f"alternating; load average during the run {min(loads):.2f}-{max(loads):.2f}. "
        "Encoding the sentences (about a sixth of the time) runs in Python before the threads start.\n\n"
        + markdown_table(["n_jobs", "sentences/s", "speed-up"], rows)
    )
    write_section("lowrank_threads", "LowRankTensorParser: prediction with joblib threads", body)
    print(body)

