"""RankSpaceHMM training epoch: its matrix products' GFLOP/s against plain sgemm of the same shapes.

The products an epoch must do are counted from its batches and the model's
sizes: per batch, the rank-space forward and backward passes (a product of
the running sequences' rows, ``a_t x r``, by ``r x r`` at every step, once
forward and once backward, and ``K``'s gradient over all steps' rows at
once), ``K = V^T U`` and the two products that take its gradient back to
``U`` and ``V`` (``m x r x r`` each), and the neural parameterisation: ``U``
and ``V`` from the state embeddings and the projection (``m x d x r``, forward
and two products backward each), and every linear layer of the start and
word MLPs over their rows (forward and two products backward). The same
products, shape by shape and in the same order, are then run on their own
as ``numpy.dot`` of float32 arrays (the training dtype): that is the
machine's sgemm rate on these shapes. The ratio is how near the whole
epoch, with everything between the products, comes to it.

An epoch is one ``fit`` with ``n_epochs=1`` over a slice of PTB LM
training sentences (the first ``--per-length`` of each length in
``--lengths``, so that batches are as full as a full epoch's), set-up
included; ``n_jobs`` and the sgemm's BLAS threads are each of ``--threads``.
Repeats interleave the two (epoch, sgemm, epoch, ...); medians. Rates are
per wall-clock second and per CPU second (on two threads the CPU seconds of
both count).

    NUMBA_NUM_THREADS=2 SKLEARN_STRUCTURED_DATA=/path/to/data \\
        python -m benchmarks rank_space_gflops --states 2048 --rank 1024 --threads 1 2
"""

import argparse
import os

import numpy as np
from threadpoolctl import threadpool_limits

from sklearn_structured.rank_space import RankSpaceHMM

from benchmarks.base import data_home, timed, write_rows
from benchmarks.rank_space.epoch import add_slice_arguments, training_slice


def batch_products(lengths, n_states, rank, dim, n_words, weights):
    """``(rows, inner, cols)`` of every product of one training step on a batch of
    sequences of ``lengths`` (``<eos>`` included), in the order the step does them;
    ``weights``: the shapes of the MLPs' weights, by parameter name."""
    running = [int((lengths > t).sum()) for t in range(1, int(lengths.max()))]
    m, r, d = n_states, rank, dim
    products = [(m, d, r), (m, d, r)]  # U and V logits
    mlp_weights = {name: shape for name, shape in weights.items()
                   if name.startswith(("start_mlp", "word_mlp"))}
    for name, shape in mlp_weights.items():
        products.append((m if name.startswith("start_mlp") else n_words, *shape))
    products.append((r, m, r))  # K = V^T U
    products += [(a, r, r) for a in running]  # forward
    products += [(a, r, r) for a in reversed(running)]  # backward
    products.append((r, sum(running), r))  # K's gradient
    products += [(m, r, r), (m, r, r)]  # back to U and V
    products += [(d, m, r), (d, m, r), (m, r, d), (m, r, d)]  # the projection and embeddings
    for name, shape in mlp_weights.items():
        rows = m if name.startswith("start_mlp") else n_words
        products += [(shape[0], rows, shape[1]), (rows, shape[1], shape[0])]
    return products


def flops(products):
    return sum(2.0 * a * b * c for a, b, c in products)


def operands(products):
    """Three float32 buffers, each large enough for any operand or result of ``products``."""
    largest = max(max(a * b, b * c, a * c) for a, b, c in products)
    rng = np.random.default_rng(0)
    return [rng.random(largest, dtype=np.float32) for _ in range(3)]


def sgemm(products, pool, threads):
    """Run ``products`` as float32 ``numpy.dot`` on views of ``pool``."""
    with threadpool_limits(threads, "blas"):
        for a, b, c in products:
            np.dot(pool[0][:a * b].reshape(a, b), pool[1][:b * c].reshape(b, c),
                   pool[2][:a * c].reshape(a, c))


def arguments(argv):
    """The command line of this measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=2048)
    parser.add_argument("--rank", type=int, default=1024)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--batch-tokens", type=int, default=8192)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    add_slice_arguments(parser, per_length=512)
    parser.add_argument("--repeats", type=int, default=3)
    return parser.parse_args(argv)


def main(argv=None):
    args = arguments(argv)
    data_home()
    sentences, _ = training_slice(args.lengths, args.per_length)

    def model(threads):
        return RankSpaceHMM(args.states, rank=args.rank, embedding_dim=args.dim,
                            batch_tokens=args.batch_tokens, n_epochs=1, random_state=0,
                            n_jobs=threads)

    warm = model(1).fit(sentences[:64])  # numba compiles the kernels here
    weights = {k: v.shape for k, v in warm.params_.items() if k.endswith(".weight")}
    batches = model(1).epoch_batches(sentences, random_state=0)
    lengths = np.array([len(s) + 1 for s in sentences])  # <eos>
    products = None
    rows = []
    for threads in args.threads:
        epochs, plain = [], []
        for _ in range(args.repeats):
            epochs.append(timed(lambda: model(threads).fit(sentences)))
            if products is None:
                n_words = len(epochs[-1].result.vocabulary_)
                products = [p for batch in batches for p in batch_products(
                    np.sort(lengths[batch])[::-1], args.states, args.rank, args.dim, n_words,
                    weights)]
                total = flops(products)
                pool = operands(products)
                print(f"{len(batches)} batches, {len(products)} products, "
                      f"{total / 1e9:.1f} GFLOP", flush=True)
            plain.append(timed(lambda: sgemm(products, pool, threads)))
            print(threads, f"epoch {epochs[-1].wall:.1f} s ({epochs[-1].cpu:.1f} CPU s), "
                  f"sgemm {plain[-1].wall:.1f} s ({plain[-1].cpu:.1f} CPU s)", flush=True)
        epoch_wall, epoch_cpu = (float(np.median([getattr(t, k) for t in epochs]))
                                 for k in ("wall", "cpu"))
        plain_wall, plain_cpu = (float(np.median([getattr(t, k) for t in plain]))
                                 for k in ("wall", "cpu"))
        rows.append([args.states, args.rank, args.batch_tokens, threads,
                     f"{total / 1e9:.1f}", f"{epoch_wall:.1f} / {epoch_cpu:.1f}",
                     f"{total / epoch_wall / 1e9:.1f} / {total / epoch_cpu / 1e9:.1f}",
                     f"{total / plain_wall / 1e9:.1f} / {total / plain_cpu / 1e9:.1f}",
                     f"{100 * plain_wall / epoch_wall:.0f}% / {100 * plain_cpu / epoch_cpu:.0f}%",
                     f"{os.getloadavg()[0]:.1f}"])
    n_tokens = int(lengths.sum())
    write_rows(
        "rank_space_gflops", "RankSpaceHMM: an epoch's matrix products against sgemm",
        ["states", "rank", "batch tokens", "threads", "GFLOP counted",
         "epoch s (wall / CPU)", "epoch GFLOP/s (wall / CPU)", "sgemm GFLOP/s (wall / CPU)",
         "epoch / sgemm (wall / CPU)", "load average at end"],
        rows, key_columns=4,
        note=f"One epoch (`fit`, `n_epochs=1`, set-up included) over {len(sentences)} PTB LM "
             f"training sentences, the first {args.per_length} of "
             f"{', '.join(map(str, args.lengths))} words ({n_tokens} tokens with <eos>, "
             f"{len(batches)} batches), neural parameterisation (d {args.dim}), float32; "
             "GFLOP counted: the rank-space passes, `K = V^T U` and its gradients, the "
             "parameterisation's products (see the measure's docstring); sgemm: the same "
             "products alone, as `numpy.dot`, on as many BLAS threads; medians of "
             f"{args.repeats} interleaved repeats.")


if __name__ == "__main__":
    main()
