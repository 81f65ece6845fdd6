"""Measures of accuracy and speed on the real corpora, one module per family.

Run one with ``python -m benchmarks MEASURE [ARGS]`` from the repository
root; ``python -m benchmarks --help`` lists them. Shared pieces live in
:mod:`benchmarks.base`.
"""

# measure name (as on the command line) -> module that holds its main(argv)
MEASURES = {
    "datasets": "benchmarks.datasets",
    "decoders": "benchmarks.decoders",
    "lowrank": "benchmarks.lowrank.accuracy",
    "lowrank_threads": "benchmarks.lowrank.threads",
    "hill_climbing": "benchmarks.lowrank.hill_climbing",
    "tag_inputs": "benchmarks.lowrank.tag_inputs",
    "labels": "benchmarks.labels.parsing",
    "easy_first": "benchmarks.easy_first.parser",
    "taggers": "benchmarks.easy_first.taggers",
    "spectral": "benchmarks.spectral",
    "distro": "benchmarks.distro.news_pos",
    "distro_morph": "benchmarks.distro.morph",
    "distro_simplex": "benchmarks.distro.simplex",
    "rank_space": "benchmarks.rank_space.training",
    "rank_space_epoch": "benchmarks.rank_space.epoch",
    "rank_space_gflops": "benchmarks.rank_space.gflops",
    "rank_space_speed": "benchmarks.rank_space.speed",
    "tokenize": "benchmarks.text.tokenize",
    "pipeline": "benchmarks.text.pipeline",
    "treebanks": "benchmarks.text.treebanks",
    "udpipe": "benchmarks.text.udpipe",
    "dask": "benchmarks.text.dask_scaling",
    "serve_load": "benchmarks.text.serve_load",
    "word_vectors": "benchmarks.text.word_vectors",
    "commits": "benchmarks.commits",
}
