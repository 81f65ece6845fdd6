"""Training-epoch time of RankSpaceHMM / RankSpacePCFG before and after a change, in one process.

The code of ``--base`` (a git revision, ``main`` by default) is extracted from
git into a temporary folder and imported under another package name beside
the checked-out package, so both run in the same process on the same
sentences, their repeats interleaved (before, after, after by tokens, before,
...) so that changes in machine load hit them alike. An "epoch" is one pass
over a slice of the PTB LM training sentences (a full epoch of the old code
at 2^14 states takes over an hour): the first ``--per-length`` sentences of
each length in ``--lengths``, so that its batches are as full as those of a
full epoch (a slice of the first sentences would split into many
part-filled batches of one length, and overstate what batching by tokens
saves). Every fit starts from the same random_state and builds its
vocabulary from the slice. The figures are medians of wall-clock seconds
over ``--repeats`` repeats, after one warm-up fit of each package that
compiles the kernels; the table gives the number of batches of the slice and
of a full epoch with each batching.

Columns: ``before`` (base, ``--batch-size`` equal-length sentences a batch),
``after`` (this tree, the same batches), and ``after, B tokens`` (this tree,
batches of ``--batch-tokens``). Run from the repository root:

    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 SKLEARN_STRUCTURED_DATA=/path/to/data \\
        python -m benchmarks rank_space_epoch --model hmm --sizes 256 2048 16384
"""

import argparse
import importlib
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

import sklearn_structured.rank_space as after
from sklearn_structured.datasets import load_ptb_lm

from benchmarks.base import REPOSITORY, data_home, markdown_table, timed, write_section


def import_base(revision, folder):
    """The package as it is at ``revision``, imported as ``sklearn_structured_base``."""
    archive = Path(folder) / "base.tar"
    with open(archive, "wb") as out:
        subprocess.run(["git", "archive", revision, "sklearn_structured"], cwd=REPOSITORY,
                       stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    (Path(folder) / "sklearn_structured").rename(Path(folder) / "sklearn_structured_base")
    sys.path.insert(0, str(folder))
    return importlib.import_module("sklearn_structured_base.rank_space")


def make(package, model, size, args, **batching):
    common = dict(rank=args.rank, embedding_dim=args.dim, n_epochs=1, random_state=0, n_jobs=1)
    if model == "hmm":
        return package.RankSpaceHMM(n_states=size, **common, **batching)
    return package.RankSpacePCFG(n_nonterminals=size, n_preterminals=2 * size, **common, **batching)


def add_slice_arguments(parser, per_length):
    """The options that choose the slice of :func:`training_slice`."""
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 20, 30],
                        help="sentence lengths (in words) of the slice")
    parser.add_argument("--per-length", type=int, default=per_length)


def training_slice(lengths, per_length):
    """The first ``per_length`` PTB LM training sentences of each of ``lengths`` words, and
    the whole training text: batches of the slice are as full as those of an epoch."""
    full = load_ptb_lm("train")
    return [s for length in lengths for s in [t for t in full if len(t) == length][:per_length]], full


def arguments(argv):
    """The command line of this measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["hmm", "pcfg"], required=True)
    parser.add_argument("--sizes", type=int, nargs="+", required=True,
                        help="HMM: states; PCFG: nonterminals (preterminals are twice as many)")
    parser.add_argument("--base", default="main")
    parser.add_argument("--rank", type=int, default=512)
    parser.add_argument("--dim", type=int, default=256)
    add_slice_arguments(parser, per_length=256)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--batch-tokens", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=3)
    return parser.parse_args(argv)


def main(argv=None):
    args = arguments(argv)
    data_home()

    sentences, full = training_slice(args.lengths, args.per_length)
    extra = int(args.model == "hmm")  # the HMM's <eos>
    n_tokens = sum(len(s) + extra for s in sentences)

    def epoch_batches(corpus):
        """The batches of an epoch over ``corpus``, by sentences and by tokens."""
        return [make(after, args.model, 4, args, **batching).epoch_batches(corpus, random_state=0)
                for batching in ({"batch_size": args.batch_size}, {"batch_tokens": args.batch_tokens})]

    slice_batches, full_batches = epoch_batches(sentences), epoch_batches(full)
    counts = (*map(len, slice_batches), *map(len, full_batches))
    n_full = sum(map(len, full_batches[0]))  # the sentences an epoch trains on
    load = os.getloadavg()[0]
    revision = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=REPOSITORY,
                              capture_output=True, text=True, check=True).stdout.strip()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        before = import_base(args.base, folder)
        for package in (before, after):
            make(package, args.model, 4, argparse.Namespace(rank=4, dim=4), batch_size=8).fit(sentences[:50])
        for size in args.sizes:
            runs = {
                "before": lambda: make(before, args.model, size, args, batch_size=args.batch_size),
                "after": lambda: make(after, args.model, size, args, batch_size=args.batch_size),
                "tokens": lambda: make(after, args.model, size, args, batch_tokens=args.batch_tokens),
            }
            seconds = {name: [] for name in runs}
            for _ in range(args.repeats):
                for name, build in runs.items():
                    seconds[name].append(timed(lambda: build().fit(sentences)).wall)
                    print(size, name, f"{seconds[name][-1]:.1f} s", flush=True)
            median = {name: float(np.median(values)) for name, values in seconds.items()}
            rows.append((size, args.rank, f"{median['before']:.1f}", f"{median['after']:.1f}",
                         f"{median['before'] / median['after']:.1f}x", f"{median['tokens']:.1f}",
                         f"{median['before'] / median['tokens']:.1f}x"))
            batches = (f"Batches: {counts[0]} of {args.batch_size} sentences and {counts[1]} of up to "
                       f"{args.batch_tokens} tokens in the slice; {counts[2]} and {counts[3]} in a full epoch "
                       f"({n_full} sentences).")
            size_name = "states" if args.model == "hmm" else "NT (PT = 2 NT)"
            body = (
                f"One epoch over a slice of {len(sentences)} PTB LM training sentences, the first "
                f"{args.per_length} of {', '.join(map(str, args.lengths))} words ({n_tokens} tokens"
                + (", <eos> included" if args.model == "hmm" else "") + "), "
                f"neural parameterisation (d {args.dim}), one thread (NUMBA_NUM_THREADS=1, BLAS threads "
                f"limited to 1 by n_jobs=1); before = {args.base} ({revision}), imported from git into the "
                "same process; median wall-clock seconds of "
                f"{args.repeats} interleaved repeats after a warm-up. Load average at start {load:.1f}: "
                "the machine is shared (2 cores) and other work ran during the measurement, which is why "
                "before and after are interleaved in one process and compared as ratios.\n\n"
                + markdown_table([size_name, "rank", f"before, {args.batch_size} sentences (s)",
                                  f"after, {args.batch_size} sentences (s)", "speed-up",
                                  f"after, {args.batch_tokens} tokens (s)", "speed-up"], rows)
                + "\n\n" + batches
            )
            write_section(f"rank_space_epoch_{args.model}",
                          f"Rank-space {args.model.upper()}: training-epoch time before and after",
                          body)

