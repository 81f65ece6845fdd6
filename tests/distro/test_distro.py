"""DistroSVM (multiclass DISTRO): scikit-learn checks, exactness against references, learning."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits
from sklearn.dummy import DummyClassifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_structured.distro import DistroSVM, label_similarity
from sklearn_structured.distro._kernels import proximal_nuclear_step

FAST = dict(n_rounds=1, n_epochs=2, random_state=0)


@parametrize_with_checks([
    DistroSVM(**FAST),
    DistroSVM(label_vectors="onehot", **FAST),
    DistroSVM(n_components=2, **FAST),
])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return train_test_split(X / 16.0, y, test_size=0.3, random_state=0, stratify=y)


def reference_onehot_svm(X, y, n_labels, alpha, n_rounds, n_epochs, seed):
    """Crammer-Singer structural SVM by plain averaged SGD, written out in numpy.

    Same schedule and example order as DistroSVM(label_vectors="onehot"):
    eta_t = eta0 / (1 + eta0 alpha t), one phase per round, iterates averaged
    within a phase, and the next phase started from that average.
    """
    rng = np.random.RandomState(seed)
    X1 = np.hstack([X, np.ones((len(X), 1))])  # intercept as a constant feature
    W = np.zeros((n_labels, X1.shape[1]))
    eta0 = 1.0 / (2.0 * np.mean(np.sum(X1**2, axis=1)))
    t = 0
    for _ in range(n_rounds + 1):
        total, steps = np.zeros_like(W), 0
        for _ in range(n_epochs):
            for i in rng.permutation(len(X)):
                scores = W @ X1[i]
                augmented = scores + (np.arange(n_labels) != y[i])
                predicted = int(np.argmax(augmented))
                eta = eta0 / (1.0 + eta0 * alpha * t)
                W *= 1.0 - eta * alpha
                if augmented[predicted] - scores[y[i]] > 0:
                    W[predicted] -= eta * X1[i]
                    W[y[i]] += eta * X1[i]
                t += 1
                total += W
                steps += 1
        W = total / steps
    return W


def test_onehot_equals_plain_structural_svm():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    y = rng.integers(0, 3, size=40)
    model = DistroSVM(label_vectors="onehot", alpha=0.01, n_rounds=2, n_epochs=3,
                      random_state=4).fit(X, y)
    W = reference_onehot_svm(X, y, 3, 0.01, 2, 3, seed=4)
    np.testing.assert_array_equal(model.label_vectors_, np.eye(3))
    np.testing.assert_allclose(model.coef_, W[:, :-1], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.intercept_, W[:, -1], rtol=1e-8, atol=1e-10)


def test_decision_function_is_the_tensor_product_score(digits):
    """Fast A^T (W phi) equals w^T vec(a_y (x) phi) with the explicit feature tensor."""
    X_train, X_test, y_train, _ = digits
    model = DistroSVM(n_components=6, random_state=0, n_rounds=1, n_epochs=1).fit(X_train, y_train)
    phi = np.hstack([X_test[:5], np.ones((5, 1))])
    w = np.hstack([model.coef_, model.intercept_[:, None]]).ravel()  # vec of the d x (F+1) W
    for i in range(5):
        explicit = [w @ np.kron(model.label_vectors_[:, l], phi[i]) for l in range(10)]
        np.testing.assert_allclose(model.decision_function(X_test[i:i + 1])[0], explicit)


def test_objective_decreases_and_matches_its_definition(digits):
    X_train, _, y_train, _ = digits
    alpha, nuclear = 1e-3, 1e-2
    model = DistroSVM(alpha=alpha, nuclear_penalty=nuclear, n_rounds=3, n_epochs=2,
                      random_state=0).fit(X_train, y_train)
    # the objective after every pass, labels' and weights', in the order they ran
    curve = [value for record in model.history_
             for value in (record.get("label_objective"), record.get("objective"))
             if value is not None]
    assert len(model.history_) == 2 * (1 + 3)  # one record per weight epoch
    assert len(curve) == 1 + 2 * 3  # first weight pass, then (labels, weights) per round
    assert curve[-1] == model.objective_
    assert curve[-1] < 0.7 * curve[0]
    # a label-vector pass keeps its best iterate, so it never raises the objective
    for before, after in zip(curve[0::2], curve[1::2]):
        assert after <= before + 1e-12
    # the recorded value is eq. (5) of the paper evaluated on the fitted model
    scores = (X_train @ model.coef_.T + model.intercept_) @ model.label_vectors_
    y_ids = np.searchsorted(model.classes_, y_train)
    rows = np.arange(len(y_ids))
    augmented = scores + (np.arange(10)[None, :] != y_ids[:, None])
    hinge = np.mean(augmented.max(axis=1) - scores[rows, y_ids])
    squared = np.sum(model.coef_**2) + np.sum(model.intercept_**2)
    nuclear_norm = np.linalg.svd(model.label_vectors_, compute_uv=False).sum()
    assert curve[-1] == pytest.approx(0.5 * alpha * squared + nuclear * nuclear_norm + hinge)
    assert model.objective(X_train, y_train) == pytest.approx(model.objective_)


def test_objective_scores_weights_set_from_elsewhere(digits):
    """Zero weights on a one-hot model: every class scores 0, so each sample's hinge loss is 1."""
    X_train, _, y_train, _ = digits
    model = DistroSVM(label_vectors="onehot", nuclear_penalty=0.0, n_rounds=1, n_epochs=1,
                      random_state=0).fit(X_train, y_train)
    model.coef_, model.intercept_ = np.zeros_like(model.coef_), np.zeros_like(model.intercept_)
    assert model.objective(X_train, y_train) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="not among classes_"):
        model.objective(X_train[:2], [0, 11])


def test_label_vectors_are_unit_and_low_rank_with_strong_penalty(digits):
    X_train, _, y_train, _ = digits
    weak = DistroSVM(nuclear_penalty=0.0, random_state=0, n_rounds=2, n_epochs=2).fit(X_train, y_train)
    strong = DistroSVM(nuclear_penalty=0.3, label_learning_rate=0.5, random_state=0,
                       n_rounds=2, n_epochs=2).fit(X_train, y_train)
    for model in (weak, strong):
        np.testing.assert_allclose(np.linalg.norm(model.label_vectors_, axis=0), 1.0)
    nuclear = [np.linalg.svd(m.label_vectors_, compute_uv=False).sum() for m in (weak, strong)]
    assert nuclear[1] < nuclear[0]


def test_proximal_step_is_singular_value_soft_thresholding():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(4, 6))
    expected_u, s, vt = np.linalg.svd(A, full_matrices=False)
    shrunk = (expected_u * np.maximum(s - 0.7, 0)) @ vt
    expected = shrunk / np.linalg.norm(shrunk, axis=0)
    proximal_nuclear_step(A, 0.7)
    np.testing.assert_allclose(A, expected, atol=1e-12)


@pytest.mark.slow
def test_learns_digits_above_baseline(digits):
    X_train, X_test, y_train, y_test = digits
    model = DistroSVM(random_state=0, n_rounds=2, n_epochs=3).fit(X_train, y_train)
    baseline = DummyClassifier().fit(X_train, y_train).score(X_test, y_test)
    assert baseline < 0.15
    assert model.score(X_test, y_test) > 0.93
    low_rank = DistroSVM(n_components=5, random_state=0, n_rounds=2, n_epochs=3)
    assert low_rank.fit(X_train, y_train).score(X_test, y_test) > 0.85


def test_sparse_and_dense_input_give_the_same_model(digits):
    X_train, X_test, y_train, _ = digits
    dense = DistroSVM(**FAST).fit(X_train, y_train)
    sparse = DistroSVM(**FAST).fit(sp.csr_matrix(X_train), y_train)
    np.testing.assert_allclose(dense.decision_function(X_test),
                               sparse.decision_function(sp.csr_matrix(X_test)))


def test_n_init_keeps_the_lowest_objective(digits):
    X_train, _, y_train, _ = digits
    runs = [DistroSVM(n_init=1, random_state=s, n_rounds=1, n_epochs=1) for s in range(3)]
    many = DistroSVM(n_init=3, random_state=0, n_rounds=1, n_epochs=1).fit(X_train, y_train)
    finals = [r.fit(X_train, y_train).objective_ for r in runs]
    assert many.objective_ <= finals[0] + 1e-12
    # history_ holds every initialisation's epochs, the kept one's objective among them
    assert len(many.history_) == 3 * 2
    assert many.objective_ == min(r["objective"] for r in many.history_ if "objective" in r)


def test_keeps_the_best_weight_epoch_on_sparse_validation_data(digits):
    X_train, X_test, y_train, y_test = digits
    model = DistroSVM(n_iter_no_change=2, random_state=0, n_rounds=2, n_epochs=2)
    model.fit(sp.csr_matrix(X_train), y_train, X_val=sp.csr_matrix(X_test), y_val=y_test)
    scores = [record["validation_score"] for record in model.history_]
    # W, b and A are those of the best epoch, whose validation accuracy was recorded
    assert model.score(X_test, y_test) == pytest.approx(max(scores), abs=1e-12)
    held_out = DistroSVM(validation_fraction=0.2, **FAST)
    held_out.fit(sp.csr_matrix(X_train), y_train)
    assert all(record["validation_score"] is not None for record in held_out.history_)


def test_label_similarity():
    A = np.array([[1.0, 0.0, 1.0], [0.0, 2.0, 1.0]])
    S = label_similarity(A)
    np.testing.assert_allclose(S, [[1, 0, 2**-0.5], [0, 1, 2**-0.5], [2**-0.5, 2**-0.5, 1]])
    model = DistroSVM(label_vectors="onehot", **FAST).fit([[0.0], [1.0], [2.0]], [0, 1, 2])
    np.testing.assert_allclose(label_similarity(model), np.eye(3))
    with pytest.raises(ValueError, match="d x M"):
        label_similarity(np.ones(3))


def test_bad_parameters_and_input():
    X, y = np.eye(4), [0, 1, 2, 0]
    onehot = DistroSVM(n_components=2, label_vectors="onehot", **FAST).fit(X, y)
    np.testing.assert_array_equal(onehot.label_vectors_, np.eye(3))
    with pytest.raises(ValueError, match="onehot"):
        DistroSVM(n_components=2, init="onehot").fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        DistroSVM().fit(X, [1, 1, 1, 1])
    with pytest.raises(ValueError, match="label_vectors"):
        DistroSVM(label_vectors="random").fit(X, y)
    model = DistroSVM(**FAST).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(np.eye(3))


@pytest.mark.corpus
@pytest.mark.slow
def test_20newsgroups_slice_in_a_pipeline_with_grid_search():
    from sklearn_structured.datasets import load_20newsgroups

    groups = {"comp.graphics", "comp.sys.mac.hardware", "rec.autos", "rec.motorcycles",
              "sci.space", "talk.politics.guns"}
    def slice_(subset, per_group):
        texts, labels = load_20newsgroups(subset, remove=("headers", "footers", "quotes"))
        kept, seen = [], {}
        for text, label in zip(texts, labels):
            if label in groups and seen.get(label, 0) < per_group:
                seen[label] = seen.get(label, 0) + 1
                kept.append((text, label))
        return [t for t, _ in kept], [l for _, l in kept]

    X_train, y_train = slice_("train", 120)
    X_test, y_test = slice_("test", 60)
    pipe = make_pipeline(TfidfVectorizer(sublinear_tf=True, min_df=2),
                         DistroSVM(n_rounds=1, n_epochs=3, random_state=0))
    search = GridSearchCV(pipe, {"distrosvm__n_components": [3, None],
                                 "distrosvm__alpha": [1e-4, 1e-3]}, cv=2, error_score="raise")
    search.fit(X_train, y_train)
    accuracy = search.score(X_test, y_test)
    # stated baseline: always predicting the most frequent class scores 1/6
    assert accuracy > 0.70
    assert search.best_estimator_[-1].label_vectors_.shape[1] == 6


def test_newsgroups_stripping():
    from sklearn_structured.datasets._newsgroups import strip_footer, strip_headers, strip_quotes

    message = "From: a@b.c\nSubject: hi\n\nBody line\n\nmore body\n--\nsignature"
    assert strip_headers(message) == "Body line\n\nmore body\n--\nsignature"
    assert strip_footer(strip_headers(message)) == "Body line\n\nmore body"
    quoted = "In article <1@x>, joe@y.z writes:\n> old text\n| older\nmy reply"
    assert strip_quotes(quoted) == "my reply"
    assert strip_headers("no blank line") == "no blank line"


def test_newsgroups_loader_arguments(tmp_path):
    from sklearn_structured.datasets import load_20newsgroups

    with pytest.raises(ValueError, match="subset"):
        load_20newsgroups("validation", data_home=tmp_path)
    with pytest.raises(ValueError, match="remove"):
        load_20newsgroups("train", data_home=tmp_path, remove=("signatures",))
    with pytest.raises(FileNotFoundError, match="20news-bydate-train"):
        load_20newsgroups("train", data_home=tmp_path)


@pytest.mark.corpus
def test_newsgroups_loader_reads_the_bydate_split():
    from sklearn_structured.datasets import load_20newsgroups

    texts, labels = load_20newsgroups("test", remove=("headers",))
    assert len(texts) == 7532 and len(set(labels)) == 20
    assert labels.count("talk.religion.misc") == 251
    assert not any(t.startswith("From:") for t in texts[:50])
