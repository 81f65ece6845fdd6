"""``python -m benchmarks [--results FILE] [--sample N] MEASURE [ARGS]``.

``ARGS`` mean what they meant to the script ``benchmarks/bench_MEASURE.py``
of earlier releases; ``python -m benchmarks MEASURE --help`` lists them.
"""

import argparse
import importlib
import shlex
import sys
from pathlib import Path

from benchmarks import MEASURES
from benchmarks.base import SETTINGS


def run(argv=None):
    """Set the shared settings from ``argv`` and run the measure it names."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=SETTINGS.results,
                        help="the file whose sections are rewritten (default: benchmarks/RESULTS.md)")
    parser.add_argument("--sample", type=int, default=0, metavar="N",
                        help="replace every treebank by N sentences of the embedded sample "
                             "(to check that a measure runs, not to measure)")
    parser.add_argument("measure", choices=sorted(MEASURES))
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the measure's own arguments")
    options = parser.parse_args(argv)
    SETTINGS.results, SETTINGS.sample = options.results, options.sample
    SETTINGS.command = "python -m benchmarks " + shlex.join(argv)
    importlib.import_module(MEASURES[options.measure]).main(options.args)


if __name__ == "__main__":
    run()
