"""Speed of the rank-space inference kernels.

1. At two settings (NT 30 / PT 60, r 100 and NT 1000 / PT 2000,
   r 500; batch 16, n 20, float32, one core), the numba kernels against the
   same recursion in plain numpy (vectorised over the spans of one width),
   forward (log Z) and forward + backward (gradients w.r.t. root, U, V, W and
   the emissions). Both include the per-batch O(m r^2) precomputation. The
   authors' PyTorch timings (REFERENCE_MS, quoted) are printed beside them.
2. Time against the number of symbols m = NT + PT in {90, 750, 3000} at fixed
   rank: rank-space inside (flat in m) against the TD-PCFG inside (linear in m).

Timings are medians of repeated runs after a warm-up; the machine is shared,
so the load average is recorded with them.
"""

import argparse
import os

import numpy as np
from numba import set_num_threads
from threadpoolctl import threadpool_limits

from sklearn_structured.kernels.rank_space import (
    rank_space_inside,
    rank_space_leaves,
    rank_space_outside,
    rank_space_recursion,
    td_pcfg_recursion,
)
from sklearn_structured.rank_space import pcfg_factor_gradients, pcfg_kernel_inputs

from benchmarks.base import markdown_table, timed, write_section

# the authors' PyTorch code, one thread, wall milliseconds (forward, forward+backward), quoted
REFERENCE_MS = {(30, 60, 100): (16, 74), (1000, 2000, 500): (355, 1400)}
N_WORDS = 2000


def random_factors(rng, nt, pt, rank):
    def normalise(x, axis):
        return x / x.sum(axis=axis, keepdims=True)

    s = nt + pt
    return {
        "root": normalise(rng.random(nt), 0),
        "U": normalise(np.exp(rng.standard_normal((nt, rank))), 1),
        "V": normalise(np.exp(rng.standard_normal((s, rank))), 0),
        "W": normalise(np.exp(rng.standard_normal((s, rank))), 0),
        "emission": normalise(np.exp(rng.standard_normal((pt, N_WORDS))), 1),
    }


# ---- the same recursion in plain numpy ---------------------------------------------------
def numpy_inside(leaf, VP, WP, ML, MR, root_rank):
    b, n, _ = leaf.shape
    r = VP.shape[1]
    dtype = VP.dtype
    left = np.zeros((b, n + 1, n, r), dtype)
    right = np.zeros((b, n + 1, n, r), dtype)
    alpha = np.zeros((b, n + 1, n, r), dtype)
    lognorm = np.full((b, n + 1, n), -np.inf)
    biggest = leaf.max(axis=2)
    scaled = leaf / biggest[..., None]
    lognorm[:, 1] = np.log(biggest)
    left[:, 1] = scaled @ VP
    right[:, 1] = scaled @ WP
    both = np.concatenate([ML, MR], axis=1)
    for w in range(2, n + 1):
        spans = n - w + 1
        d = np.arange(1, w)[:, None]  # width of the left child
        starts = np.arange(spans)[None, :]
        L = left[:, 1:w, :spans]  # (b, w-1, spans, r)
        R = right[:, w - d, starts + d]
        c = lognorm[:, 1:w, :spans] + lognorm[:, w - d, starts + d]
        top = c.max(axis=1)
        weights = np.exp(c - top[:, None]).astype(dtype)
        acc = np.einsum("bds,bdsr->bsr", weights, L * R)
        big = acc.max(axis=2)
        alpha[:, w, :spans] = acc / big[..., None]
        lognorm[:, w, :spans] = top + np.log(big)
        if w < n:
            products = alpha[:, w, :spans] @ both
            left[:, w, :spans] = products[..., :r]
            right[:, w, :spans] = products[..., r:]
    log_z = lognorm[:, n, 0] + np.log(alpha[:, n, 0] @ root_rank)
    return log_z, alpha, left, right, lognorm, scaled


def numpy_outside(leaf, VP, WP, ML, MR, root_rank, alpha, left, right, lognorm, scaled):
    """Backward of numpy_inside, gathering from the parents one parent width at a time."""
    b, n, _ = leaf.shape
    r = VP.shape[1]
    dtype = VP.dtype
    alpha_grad = np.zeros_like(alpha)
    total = alpha[:, n, 0] @ root_rank
    alpha_grad[:, n, 0] = root_rank[None, :] / total[:, None]
    root_rank_grad = (alpha[:, n, 0] / total[:, None]).sum(axis=0)
    ML_grad = np.zeros((r, r), dtype)
    MR_grad = np.zeros((r, r), dtype)
    both_t = np.concatenate([ML, MR], axis=1).T
    for w in range(n - 1, 0, -1):
        spans = n - w + 1
        gl = np.zeros((b, spans, r), dtype)
        gr = np.zeros((b, spans, r), dtype)
        own = lognorm[:, w, :spans]
        for p in range(w + 1, n + 1):  # parent width
            k = n - p + 1  # parents of width p start at 0..k-1
            # as a left child: span (i, i+w) of parent (i, i+p), sibling (i+w, i+p)
            weight = np.exp(own[:, :k] + lognorm[:, p - w, w : w + k] - lognorm[:, p, :k]).astype(dtype)
            gl[:, :k] += weight[..., None] * alpha_grad[:, p, :k] * right[:, p - w, w : w + k]
            # as a right child: span (i, i+w) of parent (i-p+w, i+w), sibling (i-p+w, i)
            weight = np.exp(own[:, p - w : p - w + k] + lognorm[:, p - w, :k] - lognorm[:, p, :k]).astype(dtype)
            gr[:, p - w : p - w + k] += weight[..., None] * alpha_grad[:, p, :k] * left[:, p - w, :k]
        if w == 1:
            break
        a = alpha[:, w, :spans].reshape(-1, r)
        alpha_grad[:, w, :spans] = (np.concatenate([gl, gr], axis=2) @ both_t)
        ML_grad += a.T @ gl.reshape(-1, r)
        MR_grad += a.T @ gr.reshape(-1, r)
    flat = scaled.reshape(-1, scaled.shape[-1])
    VP_grad = flat.T @ gl.reshape(-1, r)
    WP_grad = flat.T @ gr.reshape(-1, r)
    leaf_grad = (gl @ VP.T + gr @ WP.T) * np.exp(-lognorm[:, 1])[..., None].astype(dtype)
    return None, leaf_grad, VP_grad, WP_grad, ML_grad, MR_grad, root_rank_grad


# ---- timing --------------------------------------------------------------------------------
def median_seconds(fn, repeats):
    """Median wall-clock and median CPU seconds of ``fn`` after a warm-up call (one
    thread, so CPU time is the cost on one core without the waiting a loaded machine adds)."""
    fn()
    return timed(fn, repeats)[1:]


def make_steps(factors, nt, words, inside, outside):
    def forward():
        return inside(*pcfg_kernel_inputs(factors, nt, words, np.float32))[0]

    def forward_backward():
        inputs = pcfg_kernel_inputs(factors, nt, words, np.float32)
        log_z, *charts = inside(*inputs)
        return pcfg_factor_gradients(factors, nt, words, outside(*inputs, *charts)[1:])

    return forward, forward_backward


def fmt(seconds):
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def setting_rows(rng, batch, n):
    """Ours against numpy and the reference at each setting of REFERENCE_MS, forward and
    forward+backward, the two checked equal first."""
    rows = []
    for (nt, pt, rank), (ref_fwd, ref_fb) in REFERENCE_MS.items():
        factors = random_factors(rng, nt, pt, rank)
        words = rng.integers(0, N_WORDS, size=(batch, n))
        ours_f, ours_fb = make_steps(factors, nt, words, rank_space_inside, rank_space_outside)
        np_f, np_fb = make_steps(factors, nt, words, numpy_inside, numpy_outside)
        # the numpy recursion is the same computation: check before timing
        np.testing.assert_allclose(ours_f(), np_f(), rtol=1e-4)
        g_ours, g_np = ours_fb(), np_fb()
        for key in g_ours:
            np.testing.assert_allclose(g_ours[key], g_np[key], rtol=2e-3, atol=1e-3 * np.abs(g_ours[key]).max())
        repeats = 7 if rank < 300 else 3
        t = {name: median_seconds(fn, repeats) for name, fn in
             (("of", ours_f), ("ofb", ours_fb), ("nf", np_f), ("nfb", np_fb))}
        rows.append(
            (
                f"{nt}/{pt}, r {rank}",
                f"{fmt(t['of'][1])} ({fmt(t['of'][0])})",
                f"{fmt(t['nf'][1])} ({fmt(t['nf'][0])})",
                f"{t['nf'][1] / t['of'][1]:.1f}x",
                f"{ref_fwd} ms",
                f"{fmt(t['ofb'][1])} ({fmt(t['ofb'][0])})",
                f"{fmt(t['nfb'][1])} ({fmt(t['nfb'][0])})",
                f"{t['nfb'][1] / t['ofb'][1]:.1f}x",
                fmt(ref_fb / 1000),
            )
        )
        print(rows[-1], flush=True)
    return rows


def symbol_rows(rng, batch, n, rank):
    """Rank space against TD-PCFG as the number of symbols grows, at one rank."""
    m_rows = []
    for nt in (30, 250, 1000):
        pt = 2 * nt
        factors = random_factors(rng, nt, pt, rank)
        words = rng.integers(0, N_WORDS, size=(batch, n))
        rank_forward = make_steps(factors, nt, words, rank_space_inside, rank_space_outside)[0]
        inputs = pcfg_kernel_inputs(factors, nt, words, np.float32)
        U, V, W = (np.ascontiguousarray(factors[k], dtype=np.float32) for k in ("U", "V", "W"))
        VN, WN = np.ascontiguousarray(V[:nt]), np.ascontiguousarray(W[:nt])
        root = np.ascontiguousarray(factors["root"], dtype=np.float32)
        leaves = rank_space_leaves(*inputs[:3])[:3]

        def rank_recursion():
            return rank_space_recursion(*leaves, *inputs[3:])[0]

        def td_recursion():
            return td_pcfg_recursion(*leaves, U, VN, WN, root)

        def td_forward():
            inputs = pcfg_kernel_inputs(factors, nt, words, np.float32)
            return td_pcfg_recursion(*rank_space_leaves(*inputs[:3])[:3], U, VN, WN, root)

        np.testing.assert_allclose(rank_recursion(), td_recursion(), rtol=1e-4)
        np.testing.assert_allclose(rank_forward(), td_forward(), rtol=1e-4)
        t = [median_seconds(fn, 7)[1] for fn in (rank_recursion, td_recursion, rank_forward, td_forward)]
        m_rows.append(
            (nt + pt, f"{nt}/{pt}", fmt(t[0]), fmt(t[1]), f"{t[1] / t[0]:.1f}x", fmt(t[2]), fmt(t[3]), f"{t[3] / t[2]:.1f}x")
        )
        print(m_rows[-1], flush=True)
    return m_rows


def main(argv=None):
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args(argv)
    # one thread, numba's and BLAS's: set here, not at import, so that importing the
    # module (as the benchmark check does) leaves the process's threads alone
    set_num_threads(1)
    threadpool_limits(1)
    load = os.getloadavg()[0]
    rng = np.random.default_rng(0)
    batch, n, rank = 16, 20, 100
    rows = setting_rows(rng, batch, n)
    m_rows = symbol_rows(rng, batch, n, rank)

    body = (
        f"float32, one thread (NUMBA_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1), batch {batch} sentences of "
        f"{n} words, vocabulary {N_WORDS}, random normalised grammars; medians after a warm-up; each timing "
        "includes the per-batch precomputation (U^T V_N, U^T W_N, s^T U, emission gather) and, for "
        "forward+backward, the chain back to root, U, V, W and the emissions. numpy = the same scaled "
        "recursion in plain numpy, vectorised over the spans of a width (checked equal to the kernels "
        "before timing). Cells give CPU time of the single thread, then wall-clock time in brackets: with "
        f"a load average of {load:.1f} at start on a 2-core machine shared by 8 engineers the wall clock "
        "mostly measures waiting for a core. Reference = the authors' PyTorch code, one thread, wall "
        "clock on this kind of machine at load 7-8, as quoted with the task; ratios to numpy are measured "
        "in the same run.\n\n"
        + markdown_table(
            ["NT/PT, rank", "ours fwd", "numpy fwd", "speed-up", "reference fwd",
             "ours fwd+bwd", "numpy fwd+bwd", "speed-up", "reference fwd+bwd"],
            rows,
        )
        + f"\n\nInside (forward) CPU time against the number of symbols m at rank {rank}, batch {batch}, n {n}. "
        "*Recursion*: the span loop from the leaf vectors, O(n^3 r + n^2 r^2) for rank space and "
        "O(n^3 r + n^2 m r) for TD-PCFG. *Whole pass*: also the per-batch work that grows with m "
        "for both, the O(m r^2) matrices and the O(n PT r) projection of the emissions onto the rank "
        "(the paper counts both with the one-time precomputation).\n\n"
        + markdown_table(
            ["m", "NT/PT", "rank-space recursion", "TD-PCFG recursion", "TD / rank",
             "rank-space whole pass", "TD-PCFG whole pass", "TD / rank"],
            m_rows,
        )
    )
    write_section("rank_space_speed", "Rank-space inference kernels: speed", body)

