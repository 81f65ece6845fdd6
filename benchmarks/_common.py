"""Helpers every benchmark script shares: timing, and finding the corpora.

Scripts are run as ``python benchmarks/bench_x.py`` with the package
installed, so this folder is on ``sys.path`` and ``from _common import ...``
needs no path setup.
"""

import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple


class Timing(NamedTuple):
    result: Any  # what the last call returned
    wall: float  # median wall-clock seconds of a call
    cpu: float  # median CPU seconds of this process during a call


def timed(function, repeats=1):
    """Call ``function()`` ``repeats`` times and return the median wall and CPU time.

    Medians rather than best-of, because on these shared machines one quiet
    repeat says little about the others; CPU seconds beside wall seconds show
    how much of a slow call was waiting for a core.
    """
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        result = function()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return Timing(result, statistics.median(walls), statistics.median(cpus))


def data_home():
    """The folder of the real corpora, named by ``SKLEARN_STRUCTURED_DATA``.

    The library's loaders read the same variable, so scripts call them without
    ``data_home=``; this check only makes a script stop before any work, with
    a clear message, when the variable is unset or wrong.
    """
    from sklearn_structured.datasets import get_data_home

    if not os.environ.get("SKLEARN_STRUCTURED_DATA"):
        sys.exit("set SKLEARN_STRUCTURED_DATA to the folder of the real corpora (e.g. ../shared/data)")
    home = Path(get_data_home())
    if not home.is_dir():
        sys.exit(f"SKLEARN_STRUCTURED_DATA={home} is not a directory")
    return home


# the CoNLL 2018 shared task's figures, in its own order
CONLL18_FIGURES = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas",
                   "UAS", "LAS", "CLAS", "MLAS", "BLEX")


def conll18_scores(script, gold, system):
    """F1 (in %) of every CONLL18_FIGURES name by the shared task's own scorer.

    ``script`` is the path of a local copy of conll18_ud_eval.py (neither the
    library nor any package ships it); ``gold`` and ``system`` are CoNLL-U
    paths or text file objects.
    """
    import importlib.util

    spec = importlib.util.spec_from_file_location("conll18_ud_eval", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    files = [open(f, encoding="utf-8") if isinstance(f, (str, Path)) else f for f in (gold, system)]
    try:
        scores = module.evaluate(*(module.load_conllu(f) for f in files))
    finally:
        for f, given in zip(files, (gold, system)):
            if f is not given:
                f.close()
    return {name: 100 * scores[name].f1 for name in CONLL18_FIGURES}
