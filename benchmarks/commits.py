"""Accuracy and speed of two commits of the library, measured in one run.

Checks out ``--old`` and ``--new`` (any git revisions) into temporary
worktrees and runs the same training and prediction in fresh processes
against each, interleaved (old, new, old, new, ...) so that changes in
machine load hit both alike. Each commit gets its own numba cache, and the
kernels are compiled before the timed part. Times are process CPU seconds
of one thread (prediction: the median of five calls); the table gives
per-seed figures, the medians over the seeds, and the old/new ratio of the
medians (above 1: the new commit is faster).

Parts, all on UD English EWT train -> test with gold tags: ``lowrank``
(LowRankTensorParser, default settings), ``easyfirst`` (EasyFirstBeamParser
at ``--beam``, UAS), ``tagger`` (EasyFirstBeamTagger of XPOS at ``--beam``,
token accuracy) and ``distro`` (DistroSequenceSVM of XPOS with the EWT
settings of the ``distro`` section, token accuracy).
Run from the repository root:

    NUMBA_NUM_THREADS=1 SKLEARN_STRUCTURED_DATA=/path/to/data \\
        python -m benchmarks commits --old 945fc52 --new HEAD --part easyfirst --seeds 0 1 2
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.base import REPOSITORY, data_home, load_treebank, markdown_table, timed, write_section



# part -> (what is trained, what the score column means)
_PARTS = {
    "lowrank": ("LowRankTensorParser", "UAS without punctuation"),
    "easyfirst": ("EasyFirstBeamParser, beam {beam}", "UAS without punctuation"),
    "tagger": ("EasyFirstBeamTagger of XPOS, beam {beam}", "token accuracy"),
    "distro": ("DistroSequenceSVM of XPOS, d=20, alpha=1e-5, label learning rate 0.3",
               "token accuracy"),
}

def measure(part, seed, beam):
    """Train and predict with whichever package is first on sys.path; runs in a child
    process whose PYTHONPATH starts with the checked-out tree."""

    X, y = load_treebank("en_ewt", "train")
    X_test, y_test = load_treebank("en_ewt", "test")
    if part == "lowrank":
        from sklearn_structured import LowRankTensorParser

        def make(**kw):
            return LowRankTensorParser(**kw)
    elif part == "easyfirst":
        from sklearn_structured import EasyFirstBeamParser

        def make(**kw):
            return EasyFirstBeamParser(beam_size=beam, **kw)
    elif part == "tagger":
        from sklearn_structured import EasyFirstBeamTagger

        def make(**kw):
            return EasyFirstBeamTagger(beam_size=beam, target="xpos", **kw)
        y = y_test = None  # the tagger reads its gold tags from the tokens
    else:
        from sklearn_structured import DistroSequenceSVM

        def make(**kw):
            return DistroSequenceSVM(n_components=20, alpha=1e-5, label_learning_rate=0.3, **kw)
        y, y_test = ([[t["xpos"] for t in s] for s in data] for data in (X, X_test))
    make(n_epochs=1).fit(X[:30], y and y[:30]).predict(X_test[:30])  # compile outside the timing
    model, _, train = timed(lambda: make(random_state=seed).fit(X, y))
    predict = timed(lambda: model.predict(X_test), 5).cpu  # prediction is short: median of five
    return {"accuracy": 100 * model.score(X_test, y_test), "train": train, "predict": predict}


def checkout(revision, folder):
    subprocess.run(["git", "-C", str(REPOSITORY), "worktree", "add", "--detach", str(folder),
                    revision], check=True, capture_output=True)
    commit = subprocess.run(["git", "-C", str(folder), "rev-parse", "--short", "HEAD"],
                            check=True, capture_output=True, text=True).stdout.strip()
    return commit


def run(tree, cache, part, seed, beam):
    # the checked-out package first; this harness (benchmarks.base) from here
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree), str(REPOSITORY)]),
               NUMBA_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", part, str(seed),
                          str(beam)], env=env, check=True, capture_output=True, text=True,
                         cwd=tree).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", default="HEAD")
    ap.add_argument("--part", choices=list(_PARTS), required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--beam", type=int, default=1, help="easy-first beam size (parser, tagger)")
    args = ap.parse_args(argv)
    data_home()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        trees, commits = {}, {}
        try:
            for side in ("old", "new"):
                trees[side] = scratch / side
                commits[side] = checkout(getattr(args, side), trees[side])
            results = {"old": [], "new": []}
            for seed in args.seeds:
                for side in ("old", "new"):
                    figures = run(trees[side], scratch / f"cache-{side}", args.part, seed,
                                  args.beam)
                    results[side].append(figures)
                    print(side, commits[side], seed, figures, flush=True)
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", str(REPOSITORY), "worktree", "remove", "--force",
                                str(tree)], capture_output=True)
    rows = []
    for side in ("old", "new"):
        r = results[side]
        rows.append([f"{side} ({commits[side]})", ", ".join(f"{x['accuracy']:.2f}" for x in r),
                     f"{statistics.mean(x['accuracy'] for x in r):.2f}",
                     f"{statistics.median(x['train'] for x in r):.1f}",
                     f"{statistics.median(x['predict'] for x in r):.2f}"])
    ratio = {k: statistics.median(x[k] for x in results["old"])
             / statistics.median(x[k] for x in results["new"]) for k in ("train", "predict")}
    name, metric = _PARTS[args.part]
    name = name.format(beam=args.beam)
    body = (
        f"{name} on UD English EWT (train -> test, gold tags, {metric}), "
        f"seeds {', '.join(map(str, args.seeds))}, runs interleaved old/new; CPU seconds of one "
        f"thread, medians over the seeds; load average at start {load:.2f}.\n\n"
        + markdown_table(["commit", "test score per seed", "mean", "train s", "predict s"], rows)
        + f"\n\nSpeed ratio old/new (above 1: new is faster): training {ratio['train']:.2f}, "
        f"prediction {ratio['predict']:.2f}.\n"
    )
    print(body)
    section = f"{args.part}_beam{args.beam}" if args.part in ("easyfirst", "tagger") else args.part
    write_section(f"commits_{section}", f"Two commits compared: {name}", body)


if __name__ == "__main__":  # one measurement in a child process, started by run()
    part, seed, beam = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    print(json.dumps(measure(part, seed, beam)))
