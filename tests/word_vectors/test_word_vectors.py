"""PPMIWordVectors against a slow PPMI, the word2vec text format, clusters as tagger features."""

import numpy as np
import pytest

from sklearn_structured import EasyFirstBeamTagger, PPMIWordVectors
from sklearn_structured.datasets import load_sample_treebank
from sklearn_structured.kernels.cooccurrence import window_pairs
from sklearn_structured.word_vectors import cluster_words, load_word_vectors
from sklearn_structured.word_vectors._ppmi import _cooccurrences, _ppmi


def slow_cooccurrences(sentences, vocabulary, window):
    index = {w: i for i, w in enumerate(vocabulary)}
    counts = np.zeros((len(vocabulary), len(vocabulary)))
    for s in sentences:
        for i, w in enumerate(s):
            for j, c in enumerate(s):
                if i != j and abs(i - j) <= window and w in index and c in index:
                    counts[index[w], index[c]] += 1.0 / abs(i - j)
    return counts


def slow_ppmi(counts, smoothing):
    context = counts.sum(axis=0) ** smoothing
    context_p = context / context.sum()
    with np.errstate(divide="ignore"):
        pmi = np.log(counts) - np.log(counts.sum(axis=1, keepdims=True)) - np.log(context_p)
    return np.where(counts > 0, np.maximum(pmi, 0.0), 0.0)


def test_cooccurrences_and_ppmi_match_a_direct_count(monkeypatch):
    rng = np.random.default_rng(0)
    vocabulary = list("abcdef")
    sentences = [[vocabulary[k] if k < 6 else "oov" for k in rng.integers(0, 7, size=n)]
                 for n in (1, 5, 9, 3, 12)]
    index = {w: i for i, w in enumerate(vocabulary)}
    ids = np.array([index.get(w, -1) for s in sentences for w in s])
    offsets = np.cumsum([0] + [len(s) for s in sentences])
    # a small chunk size: the counts are summed over several chunks of sentences
    monkeypatch.setattr("sklearn_structured.word_vectors._ppmi._CHUNK_TOKENS", 7)
    for window in (1, 3):
        expected = slow_cooccurrences(sentences, vocabulary, window)
        counts = _cooccurrences(ids, offsets, window, len(vocabulary))
        np.testing.assert_allclose(counts.toarray(), expected, rtol=1e-6)
        np.testing.assert_allclose(_ppmi(counts, 0.75).toarray(), slow_ppmi(expected, 0.75),
                                   rtol=1e-6, atol=1e-9)
    words, contexts, weights = window_pairs(ids, offsets, 2)
    assert len(words) == len(contexts) == len(weights) and set(weights) <= {1.0, 0.5}


def corpus():
    """Sentences where the animals and the foods stand in the same places."""
    rng = np.random.default_rng(1)
    animals, foods = ["cat", "dog", "cow", "hen"], ["bread", "rice", "soup", "cake"]
    return [["the", rng.choice(animals), "eats", "the", rng.choice(foods), "."]
            for _ in range(400)]


def test_words_of_the_same_places_get_near_vectors_and_one_cluster():
    model = PPMIWordVectors(n_components=3, min_count=1, n_clusters=(2, 3), random_state=0)
    model.fit(corpus())
    vectors = model.word_vectors()
    np.testing.assert_allclose(np.linalg.norm(model.vectors_, axis=1), 1, rtol=1e-5)
    assert vectors["cat"] @ vectors["dog"] > 0.9 > vectors["cat"] @ vectors["rice"]
    clusters = model.word_clusters()
    assert len({clusters[w] for w in ("cat", "dog", "cow", "hen")}) == 1
    assert clusters["cat"] != clusters["rice"]
    # lower-cased lookups; an unknown word gets zeros
    out = model.transform([["The", "CAT", "zebra"]])[0]
    np.testing.assert_allclose(out[1], vectors["cat"])
    assert not out[2].any()


def test_word2vec_text_round_trip(tmp_path):
    model = PPMIWordVectors(n_components=3, min_count=1, n_clusters=(2,), random_state=0)
    model.fit(corpus())
    path = tmp_path / "vectors.txt"
    model.save_word2vec(path)
    assert path.read_text().splitlines()[0] == f"{len(model.vocabulary_)} 3"
    loaded = load_word_vectors(path)
    assert list(loaded) == model.vocabulary_
    for word, vector in model.word_vectors().items():
        np.testing.assert_allclose(loaded[word], vector, rtol=1e-5, atol=1e-6)
    # GloVe's files have no header line
    (tmp_path / "glove.txt").write_text("a 1 2\nb 3 4.5\n")
    assert load_word_vectors(tmp_path / "glove.txt")["b"].tolist() == [3.0, 4.5]


@pytest.mark.parametrize("text, message", [
    ("2 3\na 1 2 3\nb 1 2\n", r"line 3: 2 numbers where the file's vectors have 3"),
    ("a 1 x\n", r"line 1: the numbers after the word 'a' are not all numbers"),
    ("", "holds no word vectors"),
])
def test_bad_vector_files_are_named(tmp_path, text, message):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_word_vectors(path)


def test_too_little_text_is_named():
    with pytest.raises(ValueError, match="too few for n_components=100"):
        PPMIWordVectors().fit([["a", "b", "a"]])


def test_cluster_words_gives_every_word_a_cluster_per_granularity():
    vectors = {w: np.array(v, float) for w, v in
               {"a": [1, 0], "b": [0.9, 0.1], "c": [0, 1], "d": [0.1, 1]}.items()}
    clusters = cluster_words(vectors, (2, 10), random_state=0)
    assert clusters["a"][0] == clusters["b"][0] != clusters["c"][0] == clusters["d"][0]
    assert all(len(c) == 2 and 0 <= c[1] < 4 for c in clusters.values())


def test_a_tagger_reads_clusters_as_features_and_keeps_them_fitted():
    X, _ = load_sample_treebank("train")
    X_test, _ = load_sample_treebank("test")
    forms = {token["form"].lower() for s in X for token in s}
    clusters = {form: (len(form) % 3, len(form)) for form in forms}
    plain = EasyFirstBeamTagger(n_epochs=1, random_state=0).fit(X)
    with_clusters = EasyFirstBeamTagger(n_epochs=1, random_state=0, word_clusters=clusters).fit(X)
    extra = with_clusters.static_features(X_test[:1])[0].shape[1] - \
        plain.static_features(X_test[:1])[0].shape[1]
    assert extra == 4 * 2  # the word's, its two neighbours', the word's with its suffix
    predicted = with_clusters.predict(X_test)
    assert predicted != plain.predict(X_test)
    with_clusters.set_params(word_clusters=None)  # prediction reads the fitted table
    assert with_clusters.predict(X_test) == predicted


@pytest.mark.parametrize("clusters, message", [
    ({"a": (1, 2), "b": (1,)}, "the same number"),
    ({"a": ("x",)}, "integer cluster ids"),
    ({"a": (-1,)}, "negative cluster id"),
])
def test_bad_clusters_are_named(clusters, message):
    X, _ = load_sample_treebank("train")
    with pytest.raises(ValueError, match=message):
        EasyFirstBeamTagger(n_epochs=1, word_clusters=clusters).fit(X[:5])


def test_a_tagger_given_a_vector_file_clusters_it_once_and_saves_no_copy(tmp_path):
    from sklearn_structured.utils import load_model, save_model
    from sklearn_structured.word_vectors import clusters_of_file

    X, _ = load_sample_treebank("train")
    X_test, _ = load_sample_treebank("test")
    model = PPMIWordVectors(n_components=4, min_count=1, n_clusters=(2,), random_state=0)
    model.fit([[token["form"] for token in s] for s in X])
    path = tmp_path / "vectors.txt"
    model.save_word2vec(path)
    assert clusters_of_file(path) is clusters_of_file(str(path))  # computed once
    by_path = EasyFirstBeamTagger(n_epochs=1, random_state=0, word_clusters=str(path)).fit(X)
    by_mapping = EasyFirstBeamTagger(n_epochs=1, random_state=0,
                                     word_clusters=cluster_words(load_word_vectors(path))).fit(X)
    assert by_path.predict(X_test) == by_mapping.predict(X_test)
    save_model(by_path, tmp_path / "path.model")
    save_model(by_mapping, tmp_path / "mapping.model")
    assert (tmp_path / "path.model").stat().st_size < (tmp_path / "mapping.model").stat().st_size
    assert load_model(tmp_path / "path.model").predict(X_test) == by_path.predict(X_test)


def test_the_parser_given_a_vector_file_reads_it_as_the_mapping_and_saves_no_copy(tmp_path):
    from sklearn_structured import LowRankTensorParser
    from sklearn_structured.utils import load_model, save_model

    X, y = load_sample_treebank("train")
    X_test, _ = load_sample_treebank("test")
    model = PPMIWordVectors(n_components=4, min_count=1, n_clusters=(2,), random_state=0)
    model.fit([[token["form"] for token in s] for s in X])
    path = tmp_path / "vectors.txt"
    model.save_word2vec(path)
    settings = dict(rank=2, n_epochs=1, n_features=2**12, random_state=0)
    by_path = LowRankTensorParser(word_vectors=str(path), **settings).fit(X[:30], y[:30])
    by_mapping = LowRankTensorParser(word_vectors=load_word_vectors(path), **settings).fit(
        X[:30], y[:30])
    predicted = by_path.predict(X_test)
    assert all((a == b).all() for a, b in zip(predicted, by_mapping.predict(X_test)))
    save_model(by_path, tmp_path / "path.model")
    save_model(by_mapping, tmp_path / "mapping.model")
    assert (tmp_path / "path.model").stat().st_size < (tmp_path / "mapping.model").stat().st_size
    loaded = load_model(tmp_path / "path.model")
    assert all((a == b).all() for a, b in zip(loaded.predict(X_test), predicted))
