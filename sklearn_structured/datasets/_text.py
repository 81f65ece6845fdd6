"""Plain whitespace-tokenised text, one sentence per line (the PTB language-model files)."""

from pathlib import Path

from ._base import find_file, get_data_home, open_text

_PTB_LM_SPLITS = {"train": "train", "valid": "valid", "dev": "valid", "test": "test"}


def read_tokenized_text(path_or_file, *, eos=None):
    """Read one sentence per line, tokens separated by whitespace.

    Parameters
    ----------
    path_or_file : str, path-like or file object
        ``.gz``/``.xz`` paths are read transparently.
    eos : str, default=None
        When given, appended to every sentence (language models usually
        count an end-of-sentence token, e.g. ``"<eos>"`` for the PTB files).

    Returns
    -------
    sentences : list of list of str
        One list per non-blank line (blank lines are not sentences and are
        skipped); leading and trailing spaces are ignored.
    """
    with open_text(path_or_file, "r") as f:
        sentences = [line.split() for line in f]
    sentences = [s for s in sentences if s]
    if eos is not None:
        for s in sentences:
            s.append(eos)
    return sentences


def load_ptb_lm(split="train", data_home=None, *, eos=None):
    """Load Mikolov's Penn Treebank language-modelling text from a local copy.

    Looks for ``ptb_lm/ptb.<split>.txt[.xz]`` under ``data_home`` (or
    directly in it). The text is derived from LDC material and is never
    shipped with the package.

    Parameters
    ----------
    split : {"train", "valid", "test"}, default="train"
        ``"dev"`` is accepted for ``"valid"``.
    data_home : str or path-like, default=None
        See :func:`get_data_home`.
    eos : str, default=None
        See :func:`read_tokenized_text`.

    Returns
    -------
    sentences : list of list of str
    """
    if split not in _PTB_LM_SPLITS:
        raise ValueError(f"split must be 'train', 'valid' (or 'dev') or 'test', got {split!r}")
    name = f"ptb.{_PTB_LM_SPLITS[split]}.txt"
    home = Path(get_data_home(data_home))
    candidates = [
        folder / (name + suffix) for folder in (home / "ptb_lm", home) for suffix in (".xz", "", ".gz")
    ]
    return read_tokenized_text(find_file(candidates, f"the PTB language-model {split} file", data_home), eos=eos)
