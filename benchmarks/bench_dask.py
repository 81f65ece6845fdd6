"""Parsing a corpus with Dask: whole-corpus throughput on 1 and 2 worker processes.

A LowRankTensorParser trained on a slice of UD English EWT (the point is
throughput, not accuracy) parses all of EWT train, kept losslessly as
CoNLL-U sentences: a dask.bag of sentences, the model sent to every worker
once, ``predict`` per partition and one CoNLL-U shard written per partition.
The in-process single-thread ``predict`` is the reference measured in the
same run. Every configuration is timed ``--repeats`` times after a warm-up
(kernels loaded from numba's cache in every worker), and the median is
reported. Run from the repository root:

    NUMBA_NUM_THREADS=1 SKLEARN_STRUCTURED_DATA=/path/to/data python benchmarks/bench_dask.py
"""

import argparse
import os
import tempfile

from _common import data_home, timed
from _results import markdown_table, write_section

from sklearn_structured import LowRankTensorParser
from sklearn_structured.datasets import ConlluDocument, load_ud_treebank, write_conllu


def parse_shard(sentences, model, path):
    """Parse one partition of ConlluSentence objects and write it as a CoNLL-U shard."""
    document = ConlluDocument(sentences)
    write_conllu(document.with_heads(model.predict(document.to_sentences())), path)
    return len(sentences)


def parse_corpus(client, sentences, model, folder, n_partitions):
    """The corpus-parsing recipe of the user guide: a bag, the model broadcast once, shards."""
    import dask
    import dask.bag

    bag = dask.bag.from_sequence(sentences, npartitions=n_partitions)
    model_on_workers = client.scatter(model, broadcast=True)
    shards = [dask.delayed(parse_shard)(part, model_on_workers, os.path.join(folder, f"{i:04d}.conllu"))
              for i, part in enumerate(bag.to_delayed())]
    return sum(dask.compute(*shards))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train-sentences", type=int, default=2000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--partitions-per-worker", type=int, default=4)
    args = parser.parse_args()
    data_home()
    from distributed import Client, LocalCluster

    X, y = load_ud_treebank("UD_English-EWT", "train")
    corpus = load_ud_treebank("UD_English-EWT", "train", as_document=True)
    sentences = list(corpus)
    model = LowRankTensorParser(n_epochs=args.epochs, random_state=0)
    model.fit(X[:args.train_sentences], y[:args.train_sentences])
    X_all = corpus.to_sentences()
    model.predict(X_all[:50])
    rows = []
    baseline = timed(lambda: model.predict(X_all), args.repeats).wall
    rows.append(["in-process predict, 1 thread (reference)", "-", f"{len(sentences) / baseline:,.0f}", "1.00"])
    for n_workers in (1, 2):
        with LocalCluster(n_workers=n_workers, processes=True, threads_per_worker=1,
                          dashboard_address=None, env={"NUMBA_NUM_THREADS": "1"}) as cluster, \
                Client(cluster) as client, tempfile.TemporaryDirectory() as folder:
            n_partitions = n_workers * args.partitions_per_worker
            assert parse_corpus(client, sentences, model, folder, n_partitions) == len(sentences)
            seconds = timed(lambda: parse_corpus(client, sentences, model, folder, n_partitions),
                            args.repeats).wall
            rows.append([f"Dask LocalCluster, {n_workers} worker process(es) x 1 thread", str(n_partitions),
                         f"{len(sentences) / seconds:,.0f}", f"{baseline / seconds:.2f}"])
            print(rows[-1], flush=True)
    table = markdown_table(["configuration", "partitions", "sentences/s (whole corpus, median)",
                            "speed vs reference"], rows)
    body = (
        f"UD English EWT train ({len(sentences):,} sentences) parsed by a LowRankTensorParser "
        f"trained on its first {args.train_sentences} sentences for {args.epochs} epochs. Dask "
        f"rows include building the bag, sending the model to every worker, parsing, and writing "
        f"one CoNLL-U shard per partition; median of {args.repeats} runs after a warm-up.\n\n"
        f"{table}\n"
    )
    write_section("dask_scaling", "Parsing a corpus with Dask (issue 15)", body)


if __name__ == "__main__":
    main()
