"""Parsing a corpus with Dask: whole-corpus throughput on 1 and 2 worker processes.

``--input conllu`` (the default): a LowRankTensorParser trained on a slice of
UD English EWT (the point is throughput, not accuracy) parses all of EWT
train, kept losslessly as CoNLL-U sentences: a dask.bag of sentences, the
model sent to every worker once, ``predict`` per partition and one CoNLL-U
shard written per partition.

``--input text``: a TextPipeline (tokeniser, UPOS tagger and that parser,
trained on the same slice) annotates the raw text of EWT train, split at its
paragraph breaks: a dask.bag of paragraphs, and :func:`sklearn_structured.parse`
of each partition's text into its CoNLL-U shard.

The in-process single-thread run of the same model (``predict``, or ``parse``
of the whole text) is the reference measured in the same run. Every
configuration is timed ``--repeats`` times after a warm-up (kernels loaded
from numba's cache in every worker), and the median is reported. Run from
the repository root:

    NUMBA_NUM_THREADS=1 SKLEARN_STRUCTURED_DATA=/path/to/data python -m benchmarks dask [--input text]
"""

import argparse
import io
import os
import re
import tempfile


from sklearn_structured import (LowRankTensorParser, TextPipeline, Tokenizer, make_parsing_pipeline,
                                parse)
from sklearn_structured.datasets import ConlluDocument, write_conllu
from sklearn_structured.tokenize import segmented_text

from benchmarks.base import data_home, load_treebank, markdown_table, timed, write_section

# a blank line, possibly holding spaces, separates two paragraphs
PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")


def parse_shard(sentences, model, path):
    """Parse one partition of ConlluSentence objects and write it as a CoNLL-U shard."""
    document = ConlluDocument(sentences)
    write_conllu(document.with_heads(model.predict(document.to_sentences())), path)
    return len(sentences)


def parse_text_shard(paragraphs, model, path):
    """Annotate one partition of paragraphs of raw text and write it as a CoNLL-U shard,
    its sentence ids prefixed by the shard's name."""
    text = io.StringIO("\n\n".join(paragraphs))
    prefix = os.path.basename(path).split(".")[0] + "-"
    return parse(model, text, input_format="text", output=path, sent_id_prefix=prefix)


def parse_corpus(client, items, model, folder, n_partitions, shard=parse_shard):
    """The corpus-parsing recipe of the user guide: a bag (of sentences, or of paragraphs
    of text), the model broadcast once, one shard per partition."""
    import dask
    import dask.bag

    bag = dask.bag.from_sequence(items, npartitions=n_partitions)
    model_on_workers = client.scatter(model, broadcast=True)
    shards = [dask.delayed(shard)(part, model_on_workers, os.path.join(folder, f"{i:04d}.conllu"))
              for i, part in enumerate(bag.to_delayed())]
    return sum(dask.compute(*shards))


def _conllu_workload(corpus, args):
    """(items, model, shard function, in-process reference call) of CoNLL-U sentences."""
    X, y = load_treebank("UD_English-EWT", "train")
    model = LowRankTensorParser(n_epochs=args.epochs, random_state=0)
    model.fit(X[:args.train_sentences], y[:args.train_sentences])
    X_all = corpus.to_sentences()
    model.predict(X_all[:50])
    return list(corpus), model, parse_shard, lambda: model.predict(X_all)


def _text_workload(corpus, args):
    """(items, model, shard function, in-process reference call) of raw-text paragraphs."""
    model = TextPipeline(
        tokenizer=Tokenizer(random_state=0),
        annotator=make_parsing_pipeline("lowrank", targets=("upos",), n_folds=2, random_state=0,
                                        tagger_params={"n_epochs": args.epochs},
                                        parser_params={"n_epochs": args.epochs}))
    model.fit([corpus[:args.train_sentences]])
    text = segmented_text(corpus).text
    paragraphs = [p for p in PARAGRAPH_BREAK.split(text) if p.strip()]
    parse(model, io.StringIO("\n\n".join(paragraphs[:20])), input_format="text")

    def in_process():
        with tempfile.TemporaryDirectory() as folder:
            return parse(model, io.StringIO(text), input_format="text",
                         output=os.path.join(folder, "all.conllu"))
    return paragraphs, model, parse_text_shard, in_process


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train-sentences", type=int, default=2000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--input", choices=("conllu", "text"), default="conllu")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--partitions-per-worker", type=int, default=4)
    args = parser.parse_args(argv)
    data_home()
    from distributed import Client, LocalCluster

    corpus = load_treebank("UD_English-EWT", "train", as_document=True)
    workload = _text_workload if args.input == "text" else _conllu_workload
    items, model, shard, in_process = workload(corpus, args)
    reference = timed(in_process, args.repeats)
    n_sentences = len(corpus) if args.input == "conllu" else reference.result
    baseline = reference.wall
    what = "predict" if args.input == "conllu" else "parse of the whole text"
    rows = [[f"in-process {what}, 1 thread (reference)", "-", f"{n_sentences / baseline:,.0f}",
             "1.00"]]
    for n_workers in (1, 2):
        with LocalCluster(n_workers=n_workers, processes=True, threads_per_worker=1,
                          dashboard_address=None, env={"NUMBA_NUM_THREADS": "1"}) as cluster, \
                Client(cluster) as client, tempfile.TemporaryDirectory() as folder:
            n_partitions = n_workers * args.partitions_per_worker
            n_done = parse_corpus(client, items, model, folder, n_partitions, shard)
            seconds = timed(lambda: parse_corpus(client, items, model, folder, n_partitions, shard),
                            args.repeats).wall
            rows.append([f"Dask LocalCluster, {n_workers} worker process(es) x 1 thread", str(n_partitions),
                         f"{n_done / seconds:,.0f}", f"{baseline / seconds:.2f}"])
            print(rows[-1], flush=True)
    table = markdown_table(["configuration", "partitions", "sentences/s (whole corpus, median)",
                            "speed vs reference"], rows)
    if args.input == "conllu":
        body = (
            f"UD English EWT train ({len(corpus):,} sentences) parsed by a LowRankTensorParser "
            f"trained on its first {args.train_sentences} sentences for {args.epochs} epochs. Dask "
            f"rows include building the bag, sending the model to every worker, parsing, and "
            f"writing one CoNLL-U shard per partition; median of {args.repeats} runs after a "
            f"warm-up.\n\n{table}\n")
        write_section("dask_scaling", "Parsing a corpus with Dask", body)
        return
    body = (
        f"The raw text of UD English EWT train ({len(items):,} paragraphs; {n_sentences:,} "
        f"sentences as the tokeniser splits them in-process) annotated by a TextPipeline "
        f"(tokeniser, UPOS tagger, LowRankTensorParser) trained on its first "
        f"{args.train_sentences} sentences, the tagger and parser for {args.epochs} epochs. Dask "
        f"rows include building the bag of paragraphs, sending the model to every worker, "
        f"tokenising, tagging, parsing and writing one CoNLL-U shard per partition (sentences/s "
        f"counts the sentences the shards hold); median of {args.repeats} runs after a "
        f"warm-up.\n\n{table}\n")
    write_section("dask_text", "Parsing raw text with Dask", body)

