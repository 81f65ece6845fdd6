"""Model files that load without executing code.

``joblib``/``pickle`` files can run arbitrary code when they are loaded, so the
command line saves models in a format of its own: one ``.npz`` archive,
written with ``allow_pickle=False``, holding every array of the model, plus a
JSON document (stored in the archive as bytes) describing everything else:
the estimator's class, chosen from a fixed list of this library's estimators,
its parameters and its fitted state as a tree of JSON values that refer to
the arrays by name. A model may also be a scikit-learn
:class:`~sklearn.pipeline.Pipeline` whose steps are all such estimators (a
parsing pipeline of taggers and a parser); the file then records the step
names and each step as above, and nothing else of the pipeline. Loading reads the JSON with :mod:`json`, the arrays with
``numpy.load(allow_pickle=False)``, and calls no constructor outside that
list, so a crafted file can at worst fail to load.

Weight tables are often mostly zero (a tagger's table of features by tags,
the rows of the low-rank parser's U and V for word features it never
updated), so a numeric array is stored whichever way is smallest: whole, by
its non-zero cells (flat positions and values), or by its non-zero rows
(row numbers and rows); and float arrays whose every value is a float16
(weights an estimator rounded so, see the low-rank parser) are stored as
float16; str arrays as UTF-8. An array is stored once however
many steps hold an equal one (the taggers of a pipeline each keep the same
dictionaries, and the same word clusters); str arrays and vocabularies are
loaded as one object those steps share, numeric arrays as a copy each.
Loading rebuilds the same array, of the same dtype.
A SciPy CSR array (the easy-first tagger's weights) is stored as its three
arrays and checked to describe one before it is rebuilt.

Saving is atomic: the archive is written to a temporary file beside the
destination and renamed over it only when complete, so a failed save leaves
an existing model intact.
"""

import contextlib
import errno
import hashlib
import json
import math
import os
import re
import tempfile
import zipfile

import numpy as np

from .. import registry
from ._corpus import Vocabulary

FORMAT = "sklearn-structured-model"
# The version of the fitted state, for model files and pickles alike; the changelog
# (docs/changelog.rst) says what each version changed.
FORMAT_VERSION = 11
_DOCUMENT = "model.json"
# the attribute of what an estimator derives from its fitted state for speed (see
# FormatVersionMixin._cached): never saved
CACHE_ATTRIBUTE = "_cache"
# how every zip archive (and so every file of this format) begins
_ZIP_SIGNATURE = b"PK\x03\x04"
# how a pickle (protocol 2 and later, as joblib.dump writes) begins, and the
# compressed streams joblib.dump(compress=...) writes: zlib, gzip, bz2, xz, lzma, lz4
_PICKLE_SIGNATURES = tuple(b"\x80" + bytes([protocol]) for protocol in range(2, 6))
_JOBLIB_COMPRESSED_SIGNATURES = (b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda",
                                 b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x5d\x00\x00",
                                 b"\x04\x22\x4d\x18")


def check_format_version(version, what):
    """Refuse fitted state of another format version: the one check for model files
    and pickles alike, since such state (e.g. weights of another feature hash)
    would predict garbage without an error."""
    if version != FORMAT_VERSION:
        raise ValueError(
            f"{what} is in model format version {version}; this version of "
            f"sklearn-structured reads version {FORMAT_VERSION}: fit it again"
        )


def _estimator_class(name):
    """A class of the library's public estimators (the registry's table), by name."""
    if not isinstance(name, str) or name not in registry.BY_NAME:
        raise ValueError(f"model file names an unknown estimator class {name!r}")
    return registry.estimator_class(name)


def _narrowest_uint(values):
    """The narrowest unsigned dtype that holds every value of ``values`` (non-negative)."""
    top = int(np.max(values, initial=0))
    return next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if top <= np.iinfo(t).max)


def _is_csr(value):
    """Whether ``value`` is a SciPy CSR array (the sparse weights of some estimators)."""
    return type(value).__name__ == "csr_array" and type(value).__module__.startswith("scipy.sparse")


class _Encoder:
    """Turns a model into JSON values plus a dict of named arrays."""

    def __init__(self):
        self.arrays = {}
        # arrays by content, so that each is stored once (a pipeline's taggers hold the
        # same dictionaries, and the same table of a vector file's word clusters)
        self.stored = {}

    def array(self, value, where):
        if value.dtype.kind == "O":
            if not all(isinstance(v, str) for v in value.ravel()):
                raise TypeError(f"cannot save {where}: an object array holding non-strings")
            value = value.astype(str)
        if value.dtype.kind not in "biufcU":
            raise TypeError(f"cannot save {where}: arrays of dtype {value.dtype} are not supported")
        key = (value.dtype.str, value.shape, hashlib.sha256(value.tobytes()).digest())
        if key not in self.stored:
            self.stored[key] = self._described(value)
        return self.stored[key]

    def _described(self, value):
        if value.nbytes < 4096:  # small arrays stay whole: a sparse one costs two entries
            return self._store(value)
        if value.dtype.kind == "U":
            return self._strings(value)
        if value.dtype.kind in "iuf" and value.ndim >= 1:
            sparse = self._sparse(value)
            if sparse is not None:
                return sparse
        return self._store(value)

    def _store(self, value):
        name = f"a{len(self.arrays)}"
        if value.dtype.kind == "f" and value.itemsize > 2 and value.nbytes >= 4096:
            with np.errstate(over="ignore"):
                half = value.astype(np.float16)
            if np.array_equal(half.astype(value.dtype), value):
                self.arrays[name] = half
                return {"__float16__": [value.dtype.name, {"__array__": name}]}
        self.arrays[name] = value
        return {"__array__": name}

    def _strings(self, value):
        """A str array as its UTF-8 bytes and their lengths: numpy gives every string
        the width of the longest, four bytes a character."""
        encoded = [item.encode("utf-8") for item in value.ravel().tolist()]
        lengths = np.fromiter(map(len, encoded), np.int64, len(encoded))
        return {"__strings__": [list(value.shape), value.dtype.str,
                                self._store(np.frombuffer(b"".join(encoded), np.uint8)),
                                self._store(lengths)]}

    def _sparse(self, value):
        """``value`` by its non-zero cells or rows when that is smaller, else None."""
        index = np.int32 if value.size < 2**31 else np.int64
        cells = np.flatnonzero(value)
        size = {"cells": len(cells) * (value.itemsize + index().itemsize)}
        if value.ndim == 2:
            rows = np.flatnonzero(np.any(value != 0, axis=1))
            size["rows"] = len(rows) * (value.shape[1] * value.itemsize + index().itemsize)
        kind = min(size, key=size.get)
        if size[kind] >= value.nbytes:
            return None
        if kind == "cells":
            return {"__cells__": [list(value.shape), self._store(cells.astype(index)),
                                  self._store(value.ravel()[cells])]}
        return {"__rows__": [value.shape[0], self._store(rows.astype(index)),
                             self._store(value[rows])]}

    def encode(self, value, where):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
            return int(value)
        if isinstance(value, (float, np.floating)):
            value = float(value)
            return value if math.isfinite(value) else {"__float__": repr(value)}
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.ndarray):
            return self.array(value, where)
        if _is_csr(value):
            # each row's count of cells rather than indptr, and both in the narrowest
            # unsigned type: the file is not compressed
            counts = np.diff(value.indptr)
            return {"__csr__": [list(value.shape),
                                self.array(counts.astype(_narrowest_uint(counts)), where),
                                self.array(value.indices.astype(_narrowest_uint(value.shape[1])),
                                           where),
                                self.array(value.data, where)]}
        if isinstance(value, list):
            return [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, tuple):
            return {"__tuple__": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
        if isinstance(value, dict):
            return {"__dict__": [[self.encode(k, f"a key of {where}"), self.encode(v, f"{where}[{k!r}]")]
                                 for k, v in value.items()]}
        if isinstance(value, Vocabulary):
            # as a str array, stored once for every step that has the same one; numpy
            # would drop a trailing NUL, so such a vocabulary stays a JSON list
            if any(s.endswith("\0") for s in value.itos):
                return {"__vocabulary__": list(value.itos)}
            return {"__vocabulary__": self.array(np.array(value.itos, dtype=str), where)}
        if registry.is_registered(value):
            return self.estimator(value, where)
        if _is_pipeline(value):
            return self.pipeline(value, where)
        raise TypeError(
            f"cannot save {where}: values of type {type(value).__name__} are not supported "
            "by the safe model format (use joblib from Python for such models)"
        )

    def estimator(self, estimator, where):
        params = estimator.get_params(deep=False)
        state = {k: v for k, v in vars(estimator).items()
                 if k not in params and k != CACHE_ATTRIBUTE}
        return {
            "__estimator__": type(estimator).__name__,
            "params": {k: self.encode(v, f"{where}.{k}") for k, v in params.items()},
            "state": {k: self.encode(v, f"{where}.{k}") for k, v in state.items()},
        }


    def pipeline(self, pipeline, where):
        steps = []
        for name, step in pipeline.steps:
            if not registry.is_registered(step):
                raise TypeError(
                    f"cannot save {where}: step {name!r} is a {type(step).__name__}; the safe "
                    "model format holds pipelines of this library's estimators only"
                )
            steps.append([name, self.estimator(step, f"{where}[{name!r}]")])
        return {"__pipeline__": {"steps": steps, "verbose": bool(pipeline.verbose)}}


def _is_pipeline(value):
    from sklearn.pipeline import Pipeline

    return (type(value) is Pipeline and value.memory is None
            and getattr(value, "transform_input", None) is None)


def _vocabulary(strings):
    vocabulary = Vocabulary()
    vocabulary.itos = list(strings)
    vocabulary.stoi = {s: i for i, s in enumerate(vocabulary.itos)}
    return vocabulary


def _decoded(data, lengths):
    """The UTF-8 bytes ``data`` as one str, and where each item (``lengths`` bytes
    each) begins and ends in it, in characters."""
    try:
        text = data.tobytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("model file holds a string array that is not UTF-8") from None
    # an item's characters are its bytes that do not continue a UTF-8 sequence
    starts_char = np.concatenate([[0], np.cumsum((data & 0xC0) != 0x80)])
    byte_ends = np.cumsum(lengths)
    return text, starts_char[byte_ends - lengths], starts_char[byte_ends]


def _str_array(data, lengths, dtype):
    """The str array of ``dtype`` (``<U<width>``, say) whose items are the UTF-8 bytes
    ``data``, ``lengths`` bytes each, built without a Python str per item (a list of
    them took a third of a second for a parsing pipeline's dictionaries)."""
    text, begins, ends = _decoded(data, lengths)
    codes = np.frombuffer(text.encode("utf-32-le"), np.uint32)
    chars = ends - begins
    width = np.dtype(dtype).itemsize // 4
    if len(chars) and chars.max() > width:
        raise ValueError("model file holds a string longer than its array's width")
    table = np.zeros((len(chars), width), np.uint32)
    item = np.repeat(np.arange(len(chars)), chars)
    table[item, np.arange(len(codes)) - np.repeat(np.cumsum(chars) - chars, chars)] = codes
    items = table.view(f"<U{width}").reshape(len(chars))
    return items if items.dtype == np.dtype(dtype) else items.astype(dtype)


class _Decoder:
    def __init__(self, arrays):
        self.arrays = arrays
        # str arrays and vocabularies stored once for several steps, decoded once
        self.shared = {}
        # the names of the numeric arrays handed out: a step that refers to one again
        # gets a copy, so that no two steps share an array one of them might update
        self.handed_out = set()

    def decode(self, value):
        if not isinstance(value, (dict, list)):
            return value
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if "__estimator__" in value:
            return self.estimator(value)
        if len(value) != 1:
            raise ValueError(f"model file holds a malformed value with keys {sorted(value)}")
        (kind, content), = value.items()
        if kind == "__array__":
            if content not in self.arrays:
                raise ValueError(f"model file refers to a missing array {content!r}")
            if content in self.handed_out:
                return self.arrays[content].copy()
            self.handed_out.add(content)
            return self.arrays[content]
        if kind == "__strings__":
            return self._once(value, lambda: self._strings(content))
        if kind == "__float16__":
            dtype, stored = content
            stored = self.decode(stored)
            if dtype not in ("float32", "float64") or not (
                    isinstance(stored, np.ndarray) and stored.dtype == np.float16):
                raise ValueError("model file holds a malformed float16 array")
            return stored.astype(dtype)
        if kind == "__cells__":
            shape, cells, values = content
            return self._scatter(shape, cells, values, lambda out: out.reshape(-1))
        if kind == "__rows__":
            n_rows, rows, values = content
            return self._scatter([n_rows], rows, values, lambda out: out)
        if kind == "__csr__":
            return self._csr(*content)
        if kind == "__float__":
            return float(content)  # "nan", "inf", "-inf" only: float() parses nothing else of note
        if kind == "__tuple__":
            return tuple(self.decode(v) for v in content)
        if kind == "__dict__":
            return {self._key(self.decode(k)): self.decode(v) for k, v in content}
        if kind == "__pipeline__":
            return self.pipeline(content)
        if kind == "__vocabulary__":
            if isinstance(content, list):  # older files, or a string ending in NUL
                if not all(isinstance(s, str) for s in content):
                    raise ValueError("model file holds a malformed vocabulary")
                return _vocabulary(content)
            return self._once(value, lambda: _vocabulary(self._str_list(content)))
        raise ValueError(f"model file holds an unknown value kind {kind!r}")

    def _once(self, value, build):
        """``build()``, made once for all the equal ``value``s of the file (references to
        the same stored arrays), so that the steps holding them share one object."""
        key = json.dumps(value)
        if key not in self.shared:
            self.shared[key] = build()
        return self.shared[key]

    def _string_parts(self, content):
        """(shape, dtype, bytes, lengths) of a ``__strings__`` value, checked."""
        shape, dtype, data, lengths = content
        data, lengths = self.decode(data), self.decode(lengths)
        if not (isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape)
                and isinstance(dtype, str) and re.fullmatch(r"[<>|]U\d+", dtype)
                and isinstance(data, np.ndarray) and data.dtype == np.uint8
                and isinstance(lengths, np.ndarray) and lengths.dtype.kind in "iu"
                and lengths.ndim == 1 and len(lengths) == math.prod(shape)
                and np.all(lengths >= 0) and lengths.sum() == data.size):
            raise ValueError("model file holds a malformed string array")
        return shape, dtype, data, lengths

    def _strings(self, content):
        shape, dtype, data, lengths = self._string_parts(content)
        return _str_array(data, lengths, dtype).reshape(shape)

    def _str_list(self, content):
        if isinstance(content, dict) and list(content) == ["__strings__"]:
            # sliced from the decoded text: a fixed-width array first (as wide as the
            # longest string, often a URL) cost a parsing pipeline's load 0.3 CPU s
            shape, _, data, lengths = self._string_parts(content["__strings__"])
            if len(shape) != 1:
                raise ValueError("model file holds a malformed vocabulary")
            text, begins, ends = _decoded(data, lengths)
            return [text[b:e] for b, e in zip(begins.tolist(), ends.tolist())]
        strings = self.decode(content)
        if not (isinstance(strings, np.ndarray) and strings.dtype.kind == "U" and strings.ndim == 1):
            raise ValueError("model file holds a malformed vocabulary")
        return strings.tolist()

    def _scatter(self, shape, index, values, view):
        """A zero array of ``shape`` (plus the values' trailing axes) with
        ``view(array)[index] = values``, after checking the parts are consistent."""
        index, values = self.decode(index), self.decode(values)
        if not (isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape)
                and isinstance(index, np.ndarray) and index.ndim == 1
                and index.dtype.kind in "iu" and isinstance(values, np.ndarray)
                and values.dtype.kind in "iuf" and len(values) == len(index)):
            raise ValueError("model file holds a malformed sparse array")
        out = np.zeros(tuple(shape) + values.shape[1:], dtype=values.dtype)
        target = view(out)
        if len(index) and (index.min() < 0 or index.max() >= len(target)):
            raise ValueError("model file holds a sparse array with positions out of range")
        target[index] = values
        return out

    def _csr(self, shape, counts, indices, data):
        """A SciPy CSR array from its rows' cell counts, column indices and values, after
        checking that they describe one."""
        from scipy.sparse import csr_array

        counts, indices, data = self.decode(counts), self.decode(indices), self.decode(data)
        if not (isinstance(shape, list) and len(shape) == 2
                and all(isinstance(d, int) and d >= 0 for d in shape)
                and all(isinstance(a, np.ndarray) and a.ndim == 1 for a in (counts, indices, data))
                and counts.dtype.kind in "iu" and indices.dtype.kind in "iu"
                and data.dtype.kind in "iuf" and len(counts) == shape[0]
                and len(indices) == len(data) and np.all(counts >= 0)
                and counts.sum(dtype=np.int64) == len(data)
                and (len(indices) == 0 or 0 <= indices.min() <= indices.max() < shape[1])):
            raise ValueError("model file holds a malformed sparse (CSR) array")
        indptr = np.zeros(shape[0] + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        index = np.int32 if max(shape[1], len(data)) < 2**31 else np.int64
        return csr_array((data, indices.astype(index), indptr.astype(index)), shape=tuple(shape))

    @staticmethod
    def _key(key):
        return tuple(key) if isinstance(key, list) else key

    def pipeline(self, content):
        from sklearn.pipeline import Pipeline

        steps = []
        for name, step in content["steps"]:
            if not isinstance(name, str) or not isinstance(step, dict) or "__estimator__" not in step:
                raise ValueError("model file holds a malformed pipeline step")
            steps.append((name, self.estimator(step)))
        if not steps:
            raise ValueError("model file holds a pipeline of no steps")
        return Pipeline(steps, verbose=bool(content.get("verbose", False)))

    def estimator(self, content):
        cls = _estimator_class(content["__estimator__"])
        params = {k: self.decode(v) for k, v in content["params"].items()}
        # files of the last release name renamed parameters by their old names (every
        # estimator with renamed parameters has a FormatVersionMixin to upgrade them)
        if hasattr(cls, "_upgraded_params"):
            params = cls._upgraded_params(params)
        estimator = cls(**params)
        for name, value in content["state"].items():
            if not name.isidentifier() or name.startswith("__"):
                raise ValueError(f"model file sets a forbidden attribute {name!r}")
            setattr(estimator, name, self.decode(value))
        return estimator


def _new_file_mode(path):
    """The mode of the file at ``path`` if it exists, else 0o666 less the umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path beside ``path`` that replaces ``path`` only on success.

    The temporary name keeps ``path``'s suffixes (so writers that compress
    ``.gz``/``.xz`` by name still do); if the block raises, the temporary file
    is removed and an existing file at ``path`` is left as it was.
    """
    path = os.fspath(path)
    if os.path.isdir(path):  # os.replace would name the temporary file
        raise IsADirectoryError(errno.EISDIR, "a folder, not a file to write", path)
    directory, name = os.path.split(os.path.abspath(path))
    suffix = name[name.index("."):] if "." in name else ""
    try:
        handle, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=suffix, dir=directory)
    except OSError as error:
        # name the user's path, not the temporary file it was not allowed to be
        reason = ("its folder does not exist" if isinstance(error, FileNotFoundError)
                  else error.strerror)
        raise type(error)(error.errno, f"cannot write there: {reason}", path) from None
    os.close(handle)
    try:
        yield temporary
        # mkstemp makes the file private; give it the mode a plain open() would
        os.chmod(temporary, _new_file_mode(path))
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def save_model(estimator, path):
    """Save a fitted estimator of this library in the safe model format.

    Parameters
    ----------
    estimator : estimator of sklearn_structured, or Pipeline of them
        A :class:`~sklearn.pipeline.Pipeline` (without ``memory``) is saved
        when every step is an estimator of the library. Its parameters and fitted state may hold numbers, strings, None,
        numpy arrays (not of objects other than strings), lists, tuples,
        dicts and other estimators of the library.
    path : str or path-like
        Destination. Written atomically: a failed save leaves any existing
        file at ``path`` as it was.

    Raises
    ------
    TypeError
        For an estimator of another library, or state the format cannot
        hold; nothing is written.
    FileNotFoundError
        If the folder of ``path`` does not exist.

    See Also
    --------
    load_model : the inverse.
    """
    from .. import __version__

    if not (registry.is_registered(estimator) or _is_pipeline(estimator)):
        # load_model would refuse the file: write none
        raise TypeError(
            f"cannot save a {type(estimator).__name__}: the safe model format holds this "
            "library's estimators and pipelines of them only (use joblib.dump for others)")
    encoder = _Encoder()
    document = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "model": (encoder.pipeline(estimator, "pipeline") if _is_pipeline(estimator)
                  else encoder.estimator(estimator, "estimator")),
    }
    arrays = dict(encoder.arrays)
    arrays[_DOCUMENT] = np.frombuffer(json.dumps(document).encode("utf-8"), dtype=np.uint8)
    with atomic_path(path) as temporary, open(temporary, "wb") as file:
        np.savez(file, **arrays)
        file.flush()
        os.fsync(file.fileno())


def is_model_file(path):
    """Whether ``path`` is a file in the safe model format (checked without loading it)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return f"{_DOCUMENT}.npy" in archive.namelist()
    except (zipfile.BadZipFile, OSError):
        return False


def _is_damaged_archive(path):
    """Whether ``path`` begins as a zip archive but cannot be read as one (a model file
    cut short: the archive's directory is at its end)."""
    try:
        with open(path, "rb") as file:
            if file.read(len(_ZIP_SIGNATURE)) != _ZIP_SIGNATURE:
                return False
        with zipfile.ZipFile(path):
            return False
    except zipfile.BadZipFile:
        return True
    except OSError:
        return False


def load_model(path):
    """Load an estimator saved by :func:`save_model`, executing no code from the file.

    Raises
    ------
    FileNotFoundError, IsADirectoryError, PermissionError
        If ``path`` cannot be opened as a file.
    ValueError
        If the file is not a model file of this format (with a hint when it
        is a joblib or pickle file), is damaged or truncated, or is of
        another format version.
    """
    with open(path, "rb") as file:  # FileNotFoundError, IsADirectoryError, ... as they are
        head = file.read(8)
    if _is_damaged_archive(path):
        raise ValueError(f"{path}: the model file is damaged or truncated (not a whole archive)")
    if not is_model_file(path):
        hint = ""
        if head.startswith(_PICKLE_SIGNATURES + _JOBLIB_COMPRESSED_SIGNATURES):
            hint = (": it looks like a joblib or pickle file, which loads with joblib.load "
                    "(only from a source you trust: loading a pickle runs code)")
        raise ValueError(f"{path} is not a sklearn-structured model file{hint}")
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except (zipfile.BadZipFile, EOFError, OSError) as error:
        raise ValueError(f"{path}: the model file is damaged or truncated ({error})") from None
    except ValueError as error:
        # numpy refuses object arrays when allow_pickle=False
        raise ValueError(f"{path} is not a safe sklearn-structured model file ({error})") from None
    try:
        document = json.loads(arrays.pop(_DOCUMENT).tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: the model description is damaged ({error})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"{path} is not a sklearn-structured model file")
    check_format_version(document.get("format_version"), path)
    model = document.get("model")
    if not isinstance(model, dict) or not ("__estimator__" in model or "__pipeline__" in model):
        raise ValueError(f"{path}: the model description holds no estimator")
    try:
        return _Decoder(arrays).decode(model)
    except (KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"{path}: the model description is damaged ({error!r})") from None
