"""
================================================================
Inside time against the number of symbols: rank space vs TD-PCFG
================================================================

With a CPD-decomposed rule tensor ``T[A, B, C] = sum_q U[A, q] V[B, q] W[C, q]``
the inside algorithm can keep each span as a vector over nonterminals
(TD-PCFG, Yang et al. 2021b: O(n^3 r + n^2 m r)) or, after marginalising the
symbols once per grammar, as a vector over the rank only (Yang, Liu & Tu
2022: O(n^3 r + n^2 r^2), after an O(m r^2) precomputation). This example
times the span recursions of both (:mod:`sklearn_structured.kernels.rank_space`)
on random grammars of growing size at a fixed rank. The rank-space time
stays flat as m grows a hundredfold, while TD-PCFG's grows about linearly;
for the smallest grammars TD-PCFG is the faster of the two (its m r per
span is then below r^2), and the printed figures show where the lines
cross on the machine that built these pages. The work both share before
the recursion, projecting each word's
emission vector onto the rank (O(n m r)) and, for rank space, the two
``r x r`` matrices (O(m r^2)), is done once per batch and left out, as in the
paper's complexity.
"""

# %%
import time

import matplotlib.pyplot as plt
import numpy as np

from sklearn_structured.kernels.rank_space import rank_space_leaves, rank_space_recursion, td_pcfg_recursion


def random_grammar(rng, nt, pt, rank, n_words):
    def normalise(x, axis):
        return x / x.sum(axis=axis, keepdims=True)

    s = nt + pt
    U = normalise(rng.random((nt, rank)), 1)
    V = normalise(rng.random((s, rank)), 0)
    W = normalise(rng.random((s, rank)), 0)
    root = normalise(rng.random(nt), 0)
    emission = normalise(rng.random((pt, n_words)), 1)
    return root, U, V, W, emission


def cpu_seconds(fn, calls=3):
    """CPU time of one call, averaged over a few back-to-back calls."""
    start = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - start) / calls


rng = np.random.default_rng(0)
rank, batch, n, n_words = 64, 8, 20, 500
sizes = [10, 30, 100, 250, 500, 1000]  # nonterminals; preterminals are twice as many
recursions = []
for nt in sizes:
    root, U, V, W, emission = (a.astype(np.float32) for a in random_grammar(rng, nt, 2 * nt, rank, n_words))
    words = rng.integers(0, n_words, size=(batch, n))
    leaf = np.ascontiguousarray(emission[:, words].transpose(1, 2, 0))
    VP, WP, VN, WN = (np.ascontiguousarray(a) for a in (V[nt:], W[nt:], V[:nt], W[:nt]))
    # the per-grammar precomputation of rank space, outside the timed recursion
    ML, MR, root_rank = U.T @ VN, U.T @ WN, root @ U
    leaves = rank_space_leaves(leaf, VP, WP)[:3]

    def rank_space(leaves=leaves, ML=ML, MR=MR, root_rank=root_rank):
        return rank_space_recursion(*leaves, ML, MR, root_rank)[0]

    def td_pcfg(leaves=leaves, U=U, VN=VN, WN=WN, root=root):
        return td_pcfg_recursion(*leaves, U, VN, WN, root)

    assert np.allclose(rank_space(), td_pcfg(), rtol=1e-3)  # also compiles both
    recursions.append((rank_space, td_pcfg))

# Timings on a shared machine drift: every round times every size once, in
# turn, so a slow spell hits all sizes alike, and the median over rounds is kept.
n_rounds = 7
rounds = np.array([[[cpu_seconds(f) for f in pair] for pair in recursions] for _ in range(n_rounds)])
rank_times, td_times = np.median(rounds, axis=0).T
for nt, r_time, t_time in zip(sizes, rank_times, td_times):
    print(f"m = {3 * nt:5d}: rank space {1000 * r_time:6.2f} ms, TD-PCFG {1000 * t_time:7.2f} ms")
print(f"from m = {3 * sizes[0]} to m = {3 * sizes[-1]}: rank space x{rank_times[-1] / rank_times[0]:.1f}, "
      f"TD-PCFG x{td_times[-1] / td_times[0]:.1f}")

# %%
m = [3 * nt for nt in sizes]
fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(m, 1000 * np.array(rank_times), "o-", label="rank-space recursion")
ax.plot(m, 1000 * np.array(td_times), "s-", label="TD-PCFG recursion")
ax.set_xlabel("number of symbols m = NT + PT")
ax.set_ylabel(f"CPU ms per batch ({batch} sentences of {n} words),\nmedian of {n_rounds} rounds")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_title(f"inside pass at rank {rank}, float32, one thread")
ax.legend()
plt.tight_layout()
plt.show()
