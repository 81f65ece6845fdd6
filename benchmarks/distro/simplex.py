"""Where DISTRO's learned label vectors end up on 20 Newsgroups.

Fits full-rank DistroSVM (d = M = 20) and measures the geometry of the label
vectors: the mean off-diagonal cosine against -1/(M-1), the cosine of a
regular simplex, the singular values of A (its numerical rank), the pairs
of labels furthest from the simplex, and the test accuracy beside the
one-hot baseline at the same alpha. Run from the repository root:

    NUMBA_NUM_THREADS=1 nice -n 19 python -m benchmarks distro_simplex
"""

import os
import time

# one core per fit: a threaded BLAS fighting for shared cores made each SVD of the
# proximal step about a hundred times slower
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer  # noqa: E402

from sklearn_structured.datasets import load_20newsgroups  # noqa: E402
from sklearn_structured.distro import DistroSVM, label_similarity  # noqa: E402

from benchmarks.base import data_home, markdown_table, write_section  # noqa: E402

# alpha as chosen on held-out training data by the distro measure for each feature set
SETTINGS = [("tf-idf", TfidfVectorizer(sublinear_tf=True, min_df=2), 3e-5),
            ("binary", CountVectorizer(binary=True, min_df=2), 1e-2)]


def main(argv=None):
    data_home()
    load_start = os.getloadavg()[0]
    texts, labels = load_20newsgroups("train")
    test_texts, test_labels = load_20newsgroups("test")
    rows, pair_lines = [], []
    for name, vectorizer, alpha in SETTINGS:
        X = vectorizer.fit_transform(texts)
        X_test = vectorizer.transform(test_texts)
        for init in ("random", "onehot"):
            model = DistroSVM(alpha=alpha, nuclear_penalty=1e-3, label_learning_rate=0.3,
                              init=init, random_state=0).fit(X, labels)
            onehot = DistroSVM(label_vectors="onehot", alpha=alpha, random_state=0).fit(X, labels)
            cos = label_similarity(model)
            M = cos.shape[0]
            off = cos[~np.eye(M, dtype=bool)]
            sigma = np.linalg.svd(model.label_vectors_, compute_uv=False)
            rank = int(np.sum(sigma > 1e-3 * sigma[0]))
            rows.append([name, f"{alpha:g}", init, f"{off.mean():+.4f}", f"{-1 / (M - 1):+.4f}",
                         f"{off.std():.3f}", f"{off.min():+.3f} / {off.max():+.3f}",
                         f"{sigma[-1] / sigma[0]:.3f}", rank,
                         f"{100 * model.score(X_test, test_labels):.2f}",
                         f"{100 * onehot.score(X_test, test_labels):.2f}",
                         f"{model.objective_:.4f}", f"{onehot.objective_:.4f}"])
            order = np.argsort(off)
            i, j = np.nonzero(~np.eye(M, dtype=bool))
            names = model.classes_
            lowest = [f"{names[i[k]]}/{names[j[k]]} {off[k]:+.3f}" for k in order[:6:2]]
            pair_lines.append(f"- {name}, init={init}: most negative pairs: " + ", ".join(lowest))
            print(time.strftime("%H:%M:%S"), rows[-1], flush=True)
    table = markdown_table(
        ["features", "alpha", "init", "mean off-diagonal cosine", "-1/(M-1)", "sd", "min / max",
         "smallest / largest singular value", "rank (sigma > 1e-3 sigma_max)",
         "DISTRO test acc %", "one-hot test acc % (same alpha)", "DISTRO objective",
         "one-hot objective"], rows)
    load_end = os.getloadavg()[0]
    body = (f"Full-rank DistroSVM (d = M = 20), nuclear_penalty=1e-3, label_learning_rate=0.3, "
            f"n_rounds=5, n_epochs=5, seed 0, on the whole bydate training set; the one-hot "
            f"baseline at the same alpha. Load average {load_start:.1f} at start, "
            f"{load_end:.1f} at end.\n\n{table}\n\n" + "\n".join(pair_lines) + "\n")
    write_section("distro_simplex", "DISTRO: the geometry of the learned label vectors (20 Newsgroups)",
                  body)

