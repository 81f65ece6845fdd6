"""The safe model format: round trips, atomic saves, and files that must not run code."""

import json
import os
import pickle

import numpy as np
import pytest

from sklearn_structured import DistroSVM, EasyFirstBeamParser, EasyFirstBeamTagger, LowRankTensorParser
from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.utils import is_model_file, load_model, save_model
from sklearn_structured.utils._persistence import _Decoder, _Encoder


@pytest.fixture(scope="module")
def sample():
    X, y = load_sample_treebank("train")
    X_test, _ = load_sample_treebank("test")
    return X[:80], y[:80], X_test


def _fitted(name, sample):
    X, y, _ = sample
    if name == "lowrank":
        return LowRankTensorParser(n_epochs=1, rank=5, n_features=2**16, random_state=0).fit(X, y)
    if name == "easyfirst":
        return EasyFirstBeamParser(n_epochs=1, beam_size=2, n_features=2**14).fit(X, y)
    return EasyFirstBeamTagger(n_epochs=2, beam_size=1).fit(X, [[t["xpos"] for t in s] for s in X])


@pytest.mark.parametrize("name", ["lowrank", "easyfirst", "tagger"])
def test_round_trip_predicts_identically(name, sample, tmp_path):
    model = _fitted(name, sample)
    path = tmp_path / "model.npz"
    save_model(model, path)
    assert is_model_file(path)
    loaded = load_model(path)
    assert type(loaded) is type(model) and loaded.get_params() == model.get_params()
    X_test = sample[2]
    for a, b in zip(model.predict(X_test), loaded.predict(X_test)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _labelled_parser(name, method="fit"):
    X, y = load_sample_treebank("train", labelled=True)
    X, y = X[:60], y[:60]
    if name == "lowrank":
        model = LowRankTensorParser(n_epochs=2, rank=5, n_features=2**16, random_state=0)
    else:
        model = EasyFirstBeamParser(n_epochs=2, beam_size=2, n_features=2**14, random_state=0)
    if method == "fit":
        return model.fit(X, y), X, y
    for _ in range(2):
        model.partial_fit(X, y)
    return model, X, y


def _predictions_equal(a, b):
    for (heads_a, labels_a), (heads_b, labels_b) in zip(a, b):
        np.testing.assert_array_equal(heads_a, heads_b)
        assert list(labels_a) == list(labels_b)


@pytest.mark.parametrize("name", ["lowrank", "easyfirst"])
def test_fit_keeps_only_prediction_weights(name, tmp_path):
    """fit drops the training state and keeps the weights it predicts with (float32;
    LowRank's hold float16 values);
    partial_fit keeps what it needs to go on, and both predict the same labelled trees."""
    fitted, X, y = _labelled_parser(name, "fit")
    resumable, _, _ = _labelled_parser(name, "partial_fit")
    assert fitted.training_state_ is None and resumable.training_state_ is not None
    assert fitted.labeller_["perceptron"] is None
    assert resumable.labeller_["perceptron"] is not None
    weights = ["theta_", "U_", "V_", "W_"] if name == "lowrank" else ["weights_"]
    for attribute in weights:
        values = getattr(fitted, attribute)
        assert values.dtype == np.float32
        if name == "lowrank":
            np.testing.assert_array_equal(values, values.astype(np.float16))
    assert fitted.labeller_["weights"].dtype == np.float32
    _predictions_equal(fitted.predict(X), resumable.predict(X))

    small, large = tmp_path / "fitted.npz", tmp_path / "resumable.npz"
    save_model(fitted, small)
    save_model(resumable, large)
    # (not half: both keep the labeller's int64 cell indices)
    assert small.stat().st_size < 0.7 * large.stat().st_size
    assert len(pickle.dumps(fitted)) < 0.4 * len(pickle.dumps(resumable))
    _predictions_equal(fitted.predict(X), load_model(small).predict(X))

    # a reloaded resumable model goes on exactly as the one in memory
    reloaded = load_model(large)
    reloaded.partial_fit(X, y)
    resumable.partial_fit(X, y)
    _predictions_equal(resumable.predict(X), reloaded.predict(X))
    with pytest.raises(ValueError, match="trained by fit"):
        fitted.partial_fit(X, y)


def test_tagger_table_is_stored_by_its_non_zero_cells(sample, tmp_path):
    model = _fitted("tagger", sample)
    weights = model.weights_
    assert model.training_state_ is None and weights.dtype == np.float32
    rows, columns = weights.shape
    assert weights.nnz < rows * columns / 4  # hashed features by tags: mostly zero
    save_model(model, tmp_path / "m.npz")
    assert (tmp_path / "m.npz").stat().st_size < rows * columns * 4 / 2
    loaded = load_model(tmp_path / "m.npz").weights_
    assert type(loaded) is type(weights) and loaded.dtype == weights.dtype
    np.testing.assert_array_equal(loaded.toarray(), weights.toarray())


def test_a_csr_array_round_trips_and_a_malformed_one_is_refused():
    from scipy.sparse import csr_array

    table = csr_array(np.array([[0, 1.5, 0], [2.0, 0, 0], [0, 0, 0]], np.float32))
    encoder = _Encoder()
    stored = encoder.encode(table, "w")
    loaded = _Decoder(encoder.arrays).decode(stored)
    assert type(loaded) is csr_array and loaded.dtype == np.float32
    np.testing.assert_array_equal(loaded.toarray(), table.toarray())
    _, counts, indices, _ = stored["__csr__"]
    for name, bad in ((counts, np.array([1, 1, 1])),     # more cells than values
                      (counts, np.array([2, -1, 0])),    # a negative count
                      (indices, np.array([1, 3]))):      # a column past the shape
        arrays = dict(encoder.arrays, **{name["__array__"]: bad})
        with pytest.raises(ValueError, match="malformed sparse"):
            _Decoder(arrays).decode(stored)


@pytest.mark.parametrize("kind", ["dense", "cells", "rows", "empty"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_sparse_storage_rebuilds_the_same_array(kind, dtype):
    rng = np.random.default_rng(0)
    value = rng.normal(size=(300, 20)).astype(dtype) + (dtype == np.int64)
    if kind == "cells":
        value[rng.random(value.shape) < 0.9] = 0
    elif kind == "rows":
        value[rng.random(300) < 0.6] = 0
    elif kind == "empty":
        value[:] = 0
    for array in (value, value.ravel(), value.reshape(30, 10, 20)):
        encoder = _Encoder()
        description = encoder.encode(array, "x")
        stored = sum(a.nbytes for a in encoder.arrays.values())
        assert stored <= array.nbytes
        if kind == "dense":
            assert "__array__" in description
        rebuilt = _Decoder(encoder.arrays).decode(json.loads(json.dumps(description)))
        assert rebuilt.dtype == array.dtype
        np.testing.assert_array_equal(rebuilt, array)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float16_valued_arrays_are_stored_as_float16(dtype):
    rng = np.random.default_rng(0)
    halves = rng.normal(size=(100, 30)).astype(np.float16).astype(dtype)
    # the edges of float16: subnormals, the largest value, infinities, a negative zero
    halves.flat[:6] = np.array([6e-8, -5.9e-5, 65504.0, np.inf, -np.inf, -0.0], np.float16)
    for array, narrowed in ((halves, True), (halves + 1e-4, False)):
        encoder = _Encoder()
        description = json.loads(json.dumps(encoder.encode(array, "x")))
        assert ({a.dtype for a in encoder.arrays.values()} == {np.dtype(np.float16)}) == narrowed
        rebuilt = _Decoder(encoder.arrays).decode(description)
        assert rebuilt.dtype == array.dtype
        np.testing.assert_array_equal(rebuilt, array)
        np.testing.assert_array_equal(np.signbit(rebuilt), np.signbit(array))


def test_string_arrays_are_stored_as_utf8():
    words = np.array(["a", "", "naïve", "日本", "😀 b", "x" * 140] * 300)
    big_endian = words.astype(words.dtype.newbyteorder(">"))
    for array in (words, words.reshape(2, -1), words[:0], big_endian):
        encoder = _Encoder()
        description = json.loads(json.dumps(encoder.encode(array, "x")))
        assert sum(a.nbytes for a in encoder.arrays.values()) <= max(array.nbytes, 4096)
        rebuilt = _Decoder(encoder.arrays).decode(description)
        assert rebuilt.dtype == array.dtype and rebuilt.shape == array.shape
        np.testing.assert_array_equal(rebuilt, array)
    encoder = _Encoder()
    encoder.encode(words, "x")
    assert sum(a.nbytes for a in encoder.arrays.values()) < words.nbytes / 10
    arrays = {"d": np.frombuffer(b"ab", np.uint8), "n": np.array([1, 5])}
    with pytest.raises(ValueError, match="string array"):
        _Decoder(arrays).decode({"__strings__": [[2], "<U5", {"__array__": "d"},
                                                 {"__array__": "n"}]})
    for data, message in ((b"\xff\xfe", "not UTF-8"), ("日本".encode(), "longer than")):
        arrays = {"d": np.frombuffer(data, np.uint8), "n": np.array([len(data)])}
        with pytest.raises(ValueError, match=message):
            _Decoder(arrays).decode({"__strings__": [[1], "<U1", {"__array__": "d"},
                                                     {"__array__": "n"}]})


@pytest.mark.parametrize("description", [
    {"__float16__": ["object", {"__array__": "h"}]},
    {"__float16__": ["float32", {"__array__": "v"}]},
])
def test_crafted_float16_arrays_are_refused(description):
    arrays = {"h": np.ones(3, np.float16), "v": np.ones(3)}
    with pytest.raises(ValueError, match="float16 array"):
        _Decoder(arrays).decode(description)


@pytest.mark.parametrize("description", [
    {"__cells__": [[4], {"__array__": "i"}, {"__array__": "v"}]},
    {"__rows__": [2, {"__array__": "i"}, {"__array__": "m"}]},
    {"__cells__": [[-1], {"__array__": "i"}, {"__array__": "v"}]},
    {"__cells__": [[5], {"__array__": "v"}, {"__array__": "v"}]},
])
def test_crafted_sparse_arrays_are_refused(description):
    arrays = {"i": np.array([1, 7]), "v": np.array([1.0, 2.0]), "m": np.ones((2, 3))}
    with pytest.raises(ValueError, match="sparse array"):
        _Decoder(arrays).decode(description)


def test_multiclass_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 5)), np.repeat(["a", "b", "c"], 20)
    model = DistroSVM(n_rounds=1, n_epochs=2, random_state=0).fit(X, y)
    save_model(model, tmp_path / "m")
    np.testing.assert_array_equal(load_model(tmp_path / "m").predict(X), model.predict(X))


class _RunsCode:
    """Unpickling this object would create ``marker``: proof that code ran."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_pickled_arrays_are_refused_without_running_them(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "evil.npz"
    document = json.dumps({"format": "sklearn-structured-model", "format_version": 1,
                           "model": {"__array__": "a0"}}).encode()
    np.savez(path, a0=np.array([_RunsCode(marker)], dtype=object),
             **{"model.json": np.frombuffer(document, dtype=np.uint8)})
    with pytest.raises(ValueError, match="not a safe"):
        load_model(path)
    assert not marker.exists()


@pytest.mark.parametrize("model", [
    {"__estimator__": "system", "params": {}, "state": {}},
    {"__estimator__": "os.system", "params": {}, "state": {}},
    {"__estimator__": "LowRankTensorParser", "params": {}, "state": {"__class__": "x"}},
    {"__estimator__": "LowRankTensorParser", "params": {}, "state": {"a b": 1}},
    {"__nothing__": 1},
    {"__array__": "missing"},
])
def test_crafted_descriptions_are_refused(model, tmp_path):
    path = tmp_path / "crafted.npz"
    document = json.dumps({"format": "sklearn-structured-model", "format_version": 1, "model": model})
    np.savez(path, **{"model.json": np.frombuffer(document.encode(), dtype=np.uint8)})
    with pytest.raises(ValueError):
        load_model(path)


def test_non_model_files_are_refused(tmp_path):
    text, pickled = tmp_path / "text", tmp_path / "pickled"
    text.write_text("not a model")
    pickled.write_bytes(pickle.dumps({"a": 1}))
    for path in (text, pickled):
        assert not is_model_file(path)
        with pytest.raises(ValueError, match="not a sklearn-structured model file"):
            load_model(path)


def _foreign_models():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return [LogisticRegression(), make_pipeline(StandardScaler()), {"not": "an estimator"}]


@pytest.mark.parametrize("model", _foreign_models(), ids=["sklearn", "pipeline", "dict"])
def test_what_load_model_would_refuse_is_not_saved(model, tmp_path):
    path = tmp_path / "m.npz"
    with pytest.raises(TypeError, match="cannot save.*(joblib|this library's estimators)"):
        save_model(model, path)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("missing", ["absent.npz", "no/such/folder/m.npz"])
def test_a_missing_model_file_is_file_not_found(missing, tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        load_model(tmp_path / missing)
    assert info.value.filename == str(tmp_path / missing)
    with pytest.raises(IsADirectoryError):
        load_model(tmp_path)


@pytest.mark.parametrize("compress", [0, 3, "gzip", "bz2", "xz", "lzma"])
def test_a_joblib_file_gets_the_hint_to_load_it_with_joblib(compress, tmp_path):
    import joblib

    path = tmp_path / "model.joblib"
    joblib.dump({"weights": np.zeros(3)}, path, compress=compress)
    with pytest.raises(ValueError, match="not a sklearn-structured model file.*joblib.load"):
        load_model(path)
    (tmp_path / "text").write_text("not a model")
    with pytest.raises(ValueError, match="model file$"):
        load_model(tmp_path / "text")


def test_saving_into_a_missing_folder_names_the_path(sample, tmp_path):
    path = tmp_path / "no" / "such" / "model.npz"
    with pytest.raises(FileNotFoundError, match="folder does not exist") as info:
        save_model(_fitted("tagger", sample), path)
    assert info.value.filename == str(path)
    assert ".tmp-" not in str(info.value)
    with pytest.raises(IsADirectoryError) as info:
        save_model(_fitted("tagger", sample), tmp_path)
    assert info.value.filename == str(tmp_path) and ".tmp-" not in str(info.value)
    assert os.listdir(tmp_path) == []


def test_failed_save_leaves_the_existing_model_intact(sample, tmp_path, monkeypatch):
    path = tmp_path / "model.npz"
    save_model(_fitted("tagger", sample), path)
    before = path.read_bytes()

    def savez_then_fail(file, **arrays):
        file.write(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", savez_then_fail)
    with pytest.raises(OSError, match="No space"):
        save_model(_fitted("tagger", sample), path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.npz"]  # no temporary file left behind


def test_unsupported_state_fails_at_save_time(sample, tmp_path):
    model = _fitted("tagger", sample)
    model.extra_ = object()
    with pytest.raises(TypeError, match="extra_"):
        save_model(model, tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize("name", ["lowrank", "easyfirst"])
def test_models_of_an_older_fitted_state_are_refused(name, sample, tmp_path):
    """Weights hashed by an earlier feature hash would predict garbage silently."""
    model = _fitted(name, sample)
    state = model.__getstate__()
    state.pop("_format_version")  # what a pickle of the first format holds
    with pytest.raises(ValueError, match="fit it again"):
        type(model).__new__(type(model)).__setstate__(state)
    assert isinstance(pickle.loads(pickle.dumps(model)), type(model))

    path = tmp_path / "model.npz"
    save_model(model, path)
    with np.load(path) as stored:
        arrays = dict(stored)
    document = json.loads(arrays["model.json"].tobytes().decode("utf-8"))
    document["format_version"] = 1
    arrays["model.json"] = np.frombuffer(json.dumps(document).encode("utf-8"), dtype=np.uint8)
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match="format version 1"):
        load_model(path)


def test_a_truncated_model_file_is_called_so(sample, tmp_path):
    path = tmp_path / "model.npz"
    save_model(_fitted("tagger", sample), path)
    content = path.read_bytes()
    for size in (len(content) // 2, 100):
        path.write_bytes(content[:size])
        with pytest.raises(ValueError, match="damaged or truncated"):
            load_model(path)


def test_equal_numeric_arrays_are_stored_once_and_loaded_apart():
    table = np.arange(3000, dtype=np.int64).reshape(1000, 3)
    value = {"one": table, "two": table.copy(), "other": table + 1}
    encoder = _Encoder()
    description = json.loads(json.dumps(encoder.encode(value, "x")))
    assert len(encoder.arrays) == 2
    rebuilt = _Decoder(encoder.arrays).decode(description)
    for name in value:
        np.testing.assert_array_equal(rebuilt[name], value[name])
    rebuilt["one"][0, 0] = -1  # a step updating its array leaves the other's as it was
    assert rebuilt["two"][0, 0] == 0


def test_equal_dictionaries_of_several_steps_are_stored_and_loaded_once():
    from sklearn_structured.utils._sentences import Vocabulary

    words = np.array([f"word{i}" for i in range(500)])
    vocabulary = Vocabulary(["b", "a", "b", "c"])
    value = {"one": [words, vocabulary], "two": [words.copy(), Vocabulary(["b", "a", "b", "c"])]}
    encoder = _Encoder()
    description = json.loads(json.dumps(encoder.encode(value, "x")))
    assert len(encoder.arrays) == 2 + 1  # the words' bytes and lengths, the vocabulary
    rebuilt = _Decoder(encoder.arrays).decode(description)
    one, two = rebuilt["one"], rebuilt["two"]
    assert one[0] is two[0] and one[1] is two[1]
    np.testing.assert_array_equal(one[0], words)
    assert one[1].itos == vocabulary.itos and one[1].stoi == vocabulary.stoi
    # a string numpy would cut (a trailing NUL) keeps the JSON list, as older files do
    odd = Vocabulary(["a\0", "b"])
    again = _Decoder({}).decode(json.loads(json.dumps(_Encoder().encode(odd, "x"))))
    assert again.itos == odd.itos
    with pytest.raises(ValueError, match="malformed vocabulary"):
        _Decoder({"v": np.array([1, 2])}).decode({"__vocabulary__": {"__array__": "v"}})
    # vocabularies are sliced from their decoded bytes, never a fixed-width array
    mixed = Vocabulary(["naïve", "日本語", "", "x" * 300, "ß"])
    encoder = _Encoder()
    again = _Decoder(encoder.arrays).decode(json.loads(json.dumps(encoder.encode(mixed, "x"))))
    assert again.itos == mixed.itos and again.stoi == mixed.stoi
    for shape, data, message in (([1, 1], b"ab", "malformed vocabulary"),
                                 ([1], b"\xff", "not UTF-8")):
        arrays = {"d": np.frombuffer(data, np.uint8), "n": np.array([len(data)])}
        strings = {"__strings__": [shape, "<U2", {"__array__": "d"}, {"__array__": "n"}]}
        with pytest.raises(ValueError, match=message):
            _Decoder(arrays).decode({"__vocabulary__": strings})
