"""Distributional word vectors: a truncated SVD of the positive pointwise mutual
information (PPMI) between words and the words around them (Levy, Goldberg &
Dagan, 2015), and clusters of those vectors at several granularities, the
discrete word classes that taggers and parsers read as features (Koo,
Carreras & Collins, 2008, read Brown clusters so)."""

import os
import threading
from collections import Counter
from numbers import Integral, Real

import numpy as np

from ..datasets._base import open_text
from ..kernels.cooccurrence import window_pairs
from ..utils import SentenceEstimator, check_sentences, token_values
from ..utils._base import check_fitted
from ..utils._compat import Interval

# tokens whose pairs are counted at once: bounds the memory of the pair arrays
_CHUNK_TOKENS = 1 << 21
DEFAULT_CLUSTERS = (32, 128, 512)


def _flat_forms(X, lowercase):
    """The forms of every token of X (lower-cased with ``lowercase``) and the sentence offsets."""
    sentences = check_sentences(X, require_any=True)
    forms = token_values(sentences, "form")
    if lowercase:
        forms = [f.lower() for f in forms]
    offsets = np.zeros(len(sentences) + 1, np.int64)
    np.cumsum([len(s) for s in sentences], out=offsets[1:])
    return forms, offsets


def _cooccurrences(ids, offsets, window, n_words):
    """The (n_words, n_words) sparse matrix of the window pairs' summed weights, built a
    chunk of sentences at a time."""
    from scipy import sparse

    total = sparse.csr_array((n_words, n_words), dtype=np.float64)
    start = 0
    while start < len(offsets) - 1:
        stop = int(np.searchsorted(offsets, offsets[start] + _CHUNK_TOKENS, side="right")) - 1
        stop = max(stop, start + 1)
        chunk = offsets[start:stop + 1]
        words, contexts, weights = window_pairs(ids[chunk[0]:chunk[-1]], chunk - chunk[0], window)
        total = total + sparse.coo_array((weights.astype(np.float64), (words, contexts)),
                                         shape=(n_words, n_words)).tocsr()
        start = stop
    return total


def _ppmi(counts, context_smoothing):
    """Positive PMI of a co-occurrence matrix, the context probabilities raised to
    ``context_smoothing`` and renormalised (which keeps rare contexts from dominating)."""
    counts = counts.tocsr()
    counts.sum_duplicates()
    word_totals = np.asarray(counts.sum(axis=1)).ravel()
    context_mass = np.asarray(counts.sum(axis=0)).ravel() ** context_smoothing
    context_p = context_mass / context_mass.sum()
    rows = np.repeat(np.arange(counts.shape[0]), np.diff(counts.indptr))
    pmi = np.log(counts.data) - np.log(word_totals[rows]) - np.log(context_p[counts.indices])
    counts.data = np.maximum(pmi, 0.0)
    counts.eliminate_zeros()
    return counts


def cluster_words(word_vectors, n_clusters=DEFAULT_CLUSTERS, *, random_state=0):
    """Clusters of word vectors at several granularities.

    Parameters
    ----------
    word_vectors : mapping of str to 1-D array
        As :meth:`PPMIWordVectors.word_vectors` gives them, or
        :func:`load_word_vectors` reads them.
    n_clusters : tuple of int
        The number of clusters of each granularity (at most one per word).
    random_state : int, RandomState or None
        Seeds the k-means of each granularity.

    Returns
    -------
    dict of str to tuple of int
        Each word's cluster at every granularity: what the taggers'
        ``word_clusters`` take.
    """
    from sklearn.cluster import MiniBatchKMeans

    words = list(word_vectors)
    if not words:
        raise ValueError("word_vectors is empty")
    vectors = np.asarray([word_vectors[w] for w in words], dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms > 0, norms, 1.0)
    columns = []
    for k in n_clusters:
        k = min(int(k), len(words))
        model = MiniBatchKMeans(n_clusters=k, n_init=3, batch_size=4096, random_state=random_state)
        columns.append(model.fit_predict(vectors))
    ids = np.stack(columns, axis=1).tolist()
    return {word: tuple(row) for word, row in zip(words, ids)}


def load_word_vectors(path):
    """Word vectors from a text file in the word2vec / fastText / GloVe format.

    One word a line followed by its vector's numbers, separated by spaces; a
    first line of two integers (the number of words and the dimension, as
    word2vec and fastText write it) is read as a header. Paths ending in
    ``.gz`` or ``.xz`` are decompressed.

    Returns
    -------
    dict of str to ndarray of float32
    """
    vectors = {}
    dimension = None
    with open_text(path) as f:
        for number, line in enumerate(f, 1):
            parts = line.rstrip("\r\n").rstrip(" ").split(" ")
            if number == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                dimension = int(parts[1])
                continue
            if parts == [""]:
                continue
            try:
                vector = np.array(parts[1:], dtype=np.float32)
            except ValueError:
                raise ValueError(f"{path}, line {number}: the numbers after the word "
                                 f"{parts[0]!r} are not all numbers") from None
            if dimension is None:
                dimension = len(vector)
            if len(vector) != dimension or dimension == 0:
                raise ValueError(f"{path}, line {number}: {len(vector)} numbers where the "
                                 f"file's vectors have {dimension}")
            vectors[parts[0]] = vector
    if not vectors:
        raise ValueError(f"{path} holds no word vectors")
    return vectors


_per_file = {}
_per_file_lock = threading.RLock()  # clusters_of_file takes it inside vectors_of_file


def _once_per_file(path, what, make):
    """``make(path)``, computed once per process for the file as it is now."""
    status = os.stat(path)
    key = (what, os.path.realpath(path), status.st_mtime_ns, status.st_size)
    with _per_file_lock:
        if key not in _per_file:
            _per_file[key] = make(path)
        return _per_file[key]


def vectors_of_file(path):
    """:func:`load_word_vectors` of a file, read once per process for the file as it is
    now: the parser of a pipeline and each fit of it read them."""
    return _once_per_file(path, "vectors", load_word_vectors)


def clusters_of_file(path):
    """:func:`cluster_words` (default granularities, seed 0) of the vectors of a file of
    :func:`load_word_vectors`, computed once per process for the file as it is now:
    a pipeline's taggers and their jackknife folds all read them."""
    return _once_per_file(path, "clusters", lambda p: cluster_words(vectors_of_file(p)))


class PPMIWordVectors(SentenceEstimator):
    """Word vectors and word clusters learned from unannotated sentences.

    Counts how often each word occurs near each other word (within
    ``window`` positions, weighted by one over the distance), turns the counts
    into positive pointwise mutual information with smoothed context
    probabilities, and keeps the ``n_components`` leading dimensions of its
    truncated SVD, each weighted by the square root of its singular value
    (Levy, Goldberg & Dagan, 2015). Rows are scaled to unit length. The
    vectors are then clustered by k-means at every granularity of
    ``n_clusters``: the clusters are the discrete word classes that
    :class:`~sklearn_structured.EasyFirstBeamTagger` reads (``word_clusters``),
    and the vectors what :class:`~sklearn_structured.LowRankTensorParser`
    reads (``word_vectors``).

    Parameters
    ----------
    n_components : int, default=100
        Dimension of the vectors.
    window : int, default=2
        Positions on each side of a word that count as its context.
    min_count : int, default=5
        A word seen fewer times gets no vector.
    max_vocabulary : int, default=100000
        At most this many words (the most frequent) get a vector.
    context_smoothing : float, default=0.75
        Exponent of the context counts in the PMI's context probabilities.
    lowercase : bool, default=True
        Read every form lower-cased (the taggers and the parser look a word
        up by its form, then by its lower-cased form).
    n_clusters : tuple of int, default=(32, 128, 512)
        Clusters of each granularity.
    random_state : int, RandomState or None, default=None
        Seeds the randomized SVD and the k-means.

    Attributes
    ----------
    vocabulary_ : list of str
        The words with a vector, most frequent first.
    vectors_ : ndarray of shape (n_words, n_components), float32
        Row ``i`` is the vector of ``vocabulary_[i]``.
    clusters_ : ndarray of shape (n_words, len(n_clusters)), int64
        Row ``i`` holds the clusters of ``vocabulary_[i]``.
    singular_values_ : ndarray of shape (n_components,)
    n_tokens_ : int
        Tokens read in training.
    """

    _requires_y = False
    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "window": [Interval(Integral, 1, None, closed="left")],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "max_vocabulary": [Interval(Integral, 2, None, closed="left")],
        "context_smoothing": [Interval(Real, 0, 1, closed="both")],
        "lowercase": ["boolean"],
        "n_clusters": [tuple, list],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=100, *, window=2, min_count=5, max_vocabulary=100000,
                 context_smoothing=0.75, lowercase=True, n_clusters=DEFAULT_CLUSTERS,
                 random_state=None):
        self.n_components = n_components
        self.window = window
        self.min_count = min_count
        self.max_vocabulary = max_vocabulary
        self.context_smoothing = context_smoothing
        self.lowercase = lowercase
        self.n_clusters = n_clusters
        self.random_state = random_state

    def fit(self, X, y=None):
        """Learn the vectors and clusters from sentences.

        Parameters
        ----------
        X : list of sentences
            Each a list of tokens (strings, or token dicts with a ``form``).
        y : None
            Ignored.

        Returns
        -------
        self
        """
        from sklearn.decomposition import TruncatedSVD
        from sklearn.utils import check_random_state

        self._validate_params()
        if not all(isinstance(k, Integral) and k >= 1 for k in self.n_clusters):
            raise ValueError(f"n_clusters must hold positive integers, got {self.n_clusters!r}")
        forms, offsets = _flat_forms(X, self.lowercase)
        counts = Counter(forms)
        vocabulary = [w for w, c in counts.most_common(self.max_vocabulary) if c >= self.min_count]
        if len(vocabulary) <= self.n_components:
            raise ValueError(f"{len(vocabulary)} words are seen min_count={self.min_count} times "
                             f"or more: too few for n_components={self.n_components} "
                             "(give more text, or lower either)")
        index = {w: i for i, w in enumerate(vocabulary)}
        ids = np.fromiter((index.get(f, -1) for f in forms), np.int64, count=len(forms))
        ppmi = _ppmi(_cooccurrences(ids, offsets, self.window, len(vocabulary)),
                     self.context_smoothing)
        rng = check_random_state(self.random_state)
        svd = TruncatedSVD(self.n_components, algorithm="randomized", n_iter=5,
                           random_state=rng.randint(2**31 - 1))
        scaled = svd.fit_transform(ppmi)  # U * S
        s = svd.singular_values_
        vectors = scaled / np.where(s > 0, np.sqrt(s), 1.0)  # U * S^(1/2)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self.vectors_ = (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        self.vocabulary_ = vocabulary
        self.singular_values_ = s
        self.n_tokens_ = len(forms)
        clusters = cluster_words(dict(zip(vocabulary, self.vectors_)), tuple(self.n_clusters),
                                 random_state=rng.randint(2**31 - 1))
        self.clusters_ = np.array([clusters[w] for w in vocabulary], np.int64).reshape(
            len(vocabulary), len(self.n_clusters))
        return self

    def transform(self, X):
        """The vector of every token (zeros for a word without one), an array per sentence.

        Parameters
        ----------
        X : list of sentences

        Returns
        -------
        list of ndarray of shape (n_tokens, n_components)
        """
        check_fitted(self, "vectors_")
        forms, offsets = _flat_forms(X, self.lowercase)
        index = self._index()
        ids = np.fromiter((index.get(f, -1) for f in forms), np.int64, count=len(forms))
        out = np.where((ids >= 0)[:, None], self.vectors_[np.maximum(ids, 0)], 0.0)
        return [out[lo:hi].astype(np.float32) for lo, hi in zip(offsets[:-1], offsets[1:])]

    def score(self, X, y=None):
        """The share of the tokens of X that have a vector (their coverage).

        What :class:`~sklearn.model_selection.GridSearchCV` maximises by
        default; the vectors' worth is best judged by the tagger or parser
        that reads them.
        """
        check_fitted(self, "vectors_")
        forms, _ = _flat_forms(X, self.lowercase)
        index = self._index()
        return float(np.mean([f in index for f in forms]))

    def _index(self):
        return self._cached("index", self.vectors_,
                            lambda: {w: i for i, w in enumerate(self.vocabulary_)})

    def word_vectors(self):
        """``{word: vector}``, what the parser's ``word_vectors`` takes."""
        check_fitted(self, "vectors_")
        return dict(zip(self.vocabulary_, self.vectors_))

    def word_clusters(self):
        """``{word: (cluster at each granularity)}``, what the taggers' ``word_clusters`` take."""
        check_fitted(self, "clusters_")
        return {w: tuple(row) for w, row in zip(self.vocabulary_, self.clusters_.tolist())}

    def save_word2vec(self, path):
        """Write the vectors in the word2vec text format (a header line, then a word
        and its numbers a line), which :func:`load_word_vectors` and other tools read."""
        check_fitted(self, "vectors_")
        with open_text(path, "w") as f:
            f.write(f"{len(self.vocabulary_)} {self.vectors_.shape[1]}\n")
            for word, vector in zip(self.vocabulary_, self.vectors_):
                f.write(word + " " + " ".join(f"{v:.6g}" for v in vector) + "\n")
