"""Universal Dependencies treebanks: local copies and the sample shipped in the package."""

import re
from importlib import resources
from pathlib import Path

from ._base import describe_data_home, find_file, get_data_home
from ._conllu import ConlluDocument, load_conllu, read_conllu

SPLITS = ("train", "dev", "test")
_SUFFIXES = (".conllu", ".conllu.xz", ".conllu.gz")
# a folder of an older release of a treebank, beside the current one: UD_Swedish-LinES_r2.4
_OLDER_RELEASE = re.compile(r"_r\d+(\.\d+)*$")

SAMPLE_FILES = {
    "train": "en_ewt-ud-sample-train.conllu.gz",
    "test": "en_ewt-ud-sample-test.conllu.gz",
}


def _treebank_roots(data_home):
    """Folders that may hold one directory per treebank: ``<data_home>/ud`` or
    ``data_home`` itself (a UD release, or the ``ud`` folder given directly)."""
    home = Path(get_data_home(data_home))
    return [home / "ud", home]


def _older_release_only(name, split, files):
    """The error for a split that only folders of older releases hold."""
    listed = "\n  ".join(map(str, files))
    return FileNotFoundError(
        f"no {split} file for treebank {name!r} in its current release; an older release "
        f"holds one:\n  {listed}\npass that release's directory name "
        f"(e.g. {files[0].parent.name!r}) to use it"
    )


def _ud_file(name, split, data_home):
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    roots = _treebank_roots(data_home)
    if name.startswith("UD_"):
        candidates = []
        for root in roots:
            folder = root / name
            if folder.is_dir():
                found = sorted(folder.glob(f"*-ud-{split}.conllu*"))
                found = [p for p in found if p.name.endswith(_SUFFIXES)]
                if len(found) > 1:
                    raise ValueError(
                        f"{folder} holds several {split} files: {[p.name for p in found]}"
                    )
                if found:
                    return found[0]
                candidates.append(folder / f"*-ud-{split}.conllu[.xz|.gz]")
            else:
                candidates.append(folder)
        older = [p for root in roots for p in sorted(root.glob(f"{name}_r*/*-ud-{split}.conllu*"))
                 if _OLDER_RELEASE.search(p.parent.name) and p.name.endswith(_SUFFIXES)]
        if older:
            raise _older_release_only(name, split, older)
        return find_file(candidates, f"the {split} file of treebank {name!r}", data_home)
    # a file prefix such as "en_ewt": search every treebank directory for it
    stem = f"{name}-ud-{split}"
    current, older = [], []
    for root in roots:
        if root.is_dir():
            for folder in sorted(p for p in root.iterdir() if p.is_dir()):
                found = [folder / (stem + s) for s in _SUFFIXES if (folder / (stem + s)).is_file()]
                (older if _OLDER_RELEASE.search(folder.name) else current).extend(found)
    if len(current) > 1:
        listed = "\n  ".join(map(str, current))
        raise ValueError(
            f"{name!r} matches several {split} files:\n  {listed}\n"
            "pass the treebank's directory name (e.g. 'UD_English-EWT') to choose one"
        )
    if current:
        return current[0]
    if older:
        raise _older_release_only(name, split, older)
    looked = ", ".join(f"{root}/*/{stem}[.conllu|.conllu.xz|.conllu.gz]" for root in roots)
    raise FileNotFoundError(
        f"no {split} file for treebank {name!r}; looked for {looked}.\n"
        f"{describe_data_home(data_home)}."
    )


def load_ud_treebank(name, split="train", data_home=None, *, labelled=False, as_document=False,
                     **kwargs):
    """Load one split of a Universal Dependencies treebank from a local copy.

    Parameters
    ----------
    name : str
        The treebank's directory name (``"UD_English-EWT"``) or its file prefix
        (``"en_ewt"``). A prefix finds the split in the current release of the
        treebank, never in a folder of an older release beside it (named
        ``<directory>_r<version>``, such as ``UD_Swedish-LinES_r2.4``): the
        splits of two releases may share sentences, and figures on a mix of
        releases compare with nobody's. Such a folder is read when asked for
        by its name; when only an older release has the split, the error
        names it.
    split : {"train", "dev", "test"}, default="train"
    data_home : str or path-like, default=None
        A folder holding ``ud/<treebank directory>/``, or a folder with one
        directory per treebank (a UD release, or that ``ud`` folder itself).
        None uses :func:`get_data_home` (the ``SKLEARN_STRUCTURED_DATA``
        environment variable).
    labelled : bool, default=False
        ``y[i]`` is the pair ``(heads, deprels)`` instead of the heads alone
        (see :func:`load_conllu`).
    as_document : bool, default=False
        Return the :class:`ConlluDocument` (to write predictions back into
        it, for instance) instead of ``(X, y)``.
    **kwargs
        Passed to :func:`load_conllu` (``single_root``, ``return_labels``).

    Returns
    -------
    X, y (, deprels), or a ConlluDocument
        As :func:`load_conllu`.

    Raises
    ------
    FileNotFoundError
        When no file is found; the message lists where it looked and how to
        point the loader elsewhere, or the older releases that hold the split.
    ValueError
        For an unknown split, or a prefix matching files in the directories of
        several current treebanks.
    """
    path = _ud_file(name, split, data_home)
    if as_document:
        return read_conllu(path)
    return load_conllu(path, labelled=labelled, **kwargs)


def _sample_document(subset):
    if subset not in ("train", "test", "all"):
        raise ValueError(f"subset must be 'train', 'test' or 'all', got {subset!r}")
    parts = ["train", "test"] if subset == "all" else [subset]
    data = resources.files(__package__) / "data"
    docs = []
    for part in parts:
        with resources.as_file(data / SAMPLE_FILES[part]) as path:
            docs.append(read_conllu(path))
    if len(docs) == 1:
        return docs[0]
    sentences = [s for doc in docs for s in doc]
    return ConlluDocument(sentences, source=" + ".join(doc.source for doc in docs))


def load_sample_treebank(subset="train", *, return_labels=False, labelled=False,
                         as_document=False):
    """A small sample of UD English EWT shipped with the package.

    300 training sentences drawn from the EWT training split and 100 held-out
    sentences from its test split (release at commit ``15d613d8``; CC BY-SA
    4.0, see ``sklearn_structured/datasets/data/README-en_ewt-sample.txt``),
    so that examples and tests run with no data downloaded.

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        ``"all"`` is the training sentences followed by the test sentences.
    return_labels : bool, default=False
        Also return the DEPREL column.
    labelled : bool, default=False
        ``y[i]`` is the pair ``(heads, deprels)`` (see :func:`load_conllu`).
    as_document : bool, default=False
        Return the :class:`ConlluDocument` itself instead of ``(X, y)``.

    Returns
    -------
    X, y (, deprels), or a ConlluDocument
        As :func:`load_conllu`.
    """
    doc = _sample_document(subset)
    if as_document:
        return doc
    return load_conllu(doc, return_labels=return_labels, labelled=labelled)
