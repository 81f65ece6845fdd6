"""Speed of the tree decoders against straightforward versions of the same algorithms.

For n in {10, 25, 50, 100} tokens, random N(0, 1) scores: sentences per
second of each numba kernel and of a plain numpy/Python implementation of the
same recursion written below (run on fewer sentences; a rate is a rate), and
for Chu-Liu-Edmonds of the compiled C++ in the ``ufal.chu_liu_edmonds`` PyPI
package when it is installed. Every rate is the median of several timed
repeats after a warm-up call that compiles (or loads) the kernels. The
references' answers are checked against ours on the timed sentences, so the
comparison is between implementations that agree.

Run from the repository root:

    NUMBA_NUM_THREADS=1 python -m benchmarks decoders

The figures go to the "decoders" section of benchmarks/RESULTS.md.
"""

import argparse
import heapq
import os

import numpy as np


from sklearn_structured.decoding import decode_batch
from sklearn_structured.kernels import (
    chu_liu_edmonds_argmax,
    eisner_argmax,
    eisner_inside_outside,
    eisner_kbest_kernel,
)

from benchmarks.base import markdown_table, timed, write_section

try:
    from ufal.chu_liu_edmonds import chu_liu_edmonds as ufal_chu_liu_edmonds
except ImportError:  # optional comparison
    ufal_chu_liu_edmonds = None

SIZES = (10, 25, 50, 100)
K = 50
CR, CL, IR, IL = 0, 1, 2, 3


# ---------------------------------------------------------------------------
# Straightforward references: Python loops over spans, numpy over split points


def reference_eisner_chart(scores):
    """Eisner chart with back-pointers; tokens 1..n, the root attached last."""
    n = len(scores) - 1
    chart = np.full((4, n + 1, n + 1), -np.inf)
    split = np.zeros((4, n + 1, n + 1), dtype=int)
    for s in range(1, n + 1):
        chart[CR, s, s] = chart[CL, s, s] = 0.0
    for width in range(1, n):
        for s in range(1, n + 1 - width):
            t = s + width
            values = chart[CR, s, s:t] + chart[CL, s + 1:t + 1, t]
            r = int(np.argmax(values))
            chart[IR, s, t] = values[r] + scores[s, t]
            chart[IL, s, t] = values[r] + scores[t, s]
            split[IR, s, t] = split[IL, s, t] = s + r
            values = chart[IR, s, s + 1:t + 1] + chart[CR, s + 1:t + 1, t]
            r = int(np.argmax(values))
            chart[CR, s, t], split[CR, s, t] = values[r], s + 1 + r
            values = chart[CL, s, s:t] + chart[IL, s:t, t]
            r = int(np.argmax(values))
            chart[CL, s, t], split[CL, s, t] = values[r], s + r
    return chart, split


def reference_tails(kind, s, t, r):
    if kind == CR:
        return (IR, s, r), (CR, r, t)
    if kind == CL:
        return (CL, s, r), (IL, r, t)
    return (CR, s, r), (CL, r + 1, t)


def reference_eisner(scores):
    n = len(scores) - 1
    chart, split = reference_eisner_chart(scores)
    root_values = scores[0, 1:] + chart[CL, 1, 1:] + chart[CR, 1:, n]
    root_child = 1 + int(np.argmax(root_values))
    heads = np.zeros(n, dtype=np.int64)

    def follow(kind, s, t):
        """Read the arcs of one chart item off its best split, recursively."""
        if s < t:
            if kind in (IR, IL):
                heads[(t if kind == IR else s) - 1] = s if kind == IR else t
            for tail in reference_tails(kind, s, t, split[kind, s, t]):
                follow(*tail)

    follow(CL, 1, root_child)
    follow(CR, root_child, n)
    return heads


def _logsumexp(values):
    high = values.max()
    if high == -np.inf:
        return -np.inf
    return high + np.log(np.exp(values - high).sum())


def reference_marginals(scores):
    """Inside-outside on the Eisner chart in log space, numpy over split points."""
    n = len(scores) - 1
    inside = np.full((4, n + 1, n + 1), -np.inf)
    for s in range(1, n + 1):
        inside[CR, s, s] = inside[CL, s, s] = 0.0
    for width in range(1, n):
        for s in range(1, n + 1 - width):
            t = s + width
            between = _logsumexp(inside[CR, s, s:t] + inside[CL, s + 1:t + 1, t])
            inside[IR, s, t] = between + scores[s, t]
            inside[IL, s, t] = between + scores[t, s]
            inside[CR, s, t] = _logsumexp(inside[IR, s, s + 1:t + 1] + inside[CR, s + 1:t + 1, t])
            inside[CL, s, t] = _logsumexp(inside[CL, s, s:t] + inside[IL, s:t, t])
    root_terms = scores[0, 1:] + inside[CL, 1, 1:] + inside[CR, 1:, n]
    log_z = _logsumexp(root_terms)
    outside = np.full((4, n + 1, n + 1), -np.inf)
    marginals = np.zeros((n + 1, n + 1))
    marginals[0, 1:] = np.exp(root_terms - log_z)
    outside[CL, 1, 1:] = scores[0, 1:] + inside[CR, 1:, n]
    outside[CR, 1:, n] = scores[0, 1:] + inside[CL, 1, 1:]
    for width in range(n - 1, 0, -1):
        for s in range(1, n + 1 - width):
            t = s + width
            out = outside[CR, s, t]
            outside[IR, s, s + 1:t + 1] = np.logaddexp(outside[IR, s, s + 1:t + 1], out + inside[CR, s + 1:t + 1, t])
            outside[CR, s + 1:t, t] = np.logaddexp(outside[CR, s + 1:t, t], out + inside[IR, s, s + 1:t])
            out = outside[CL, s, t]
            outside[IL, s:t, t] = np.logaddexp(outside[IL, s:t, t], out + inside[CL, s, s:t])
            outside[CL, s, s + 1:t] = np.logaddexp(outside[CL, s, s + 1:t], out + inside[IL, s + 1:t, t])
        for s in range(1, n + 1 - width):
            t = s + width
            marginals[s, t] = np.exp(inside[IR, s, t] + outside[IR, s, t] - log_z)
            marginals[t, s] = np.exp(inside[IL, s, t] + outside[IL, s, t] - log_z)
            out = np.logaddexp(outside[IR, s, t] + scores[s, t], outside[IL, s, t] + scores[t, s])
            outside[CR, s, s + 1:t] = np.logaddexp(outside[CR, s, s + 1:t], out + inside[CL, s + 2:t + 1, t])
            outside[CL, s + 1:t, t] = np.logaddexp(outside[CL, s + 1:t, t], out + inside[CR, s, s:t - 1])
    return marginals, log_z


def kbest_splits(node, n):
    """The split points of a chart node of an ``n``-word sentence (the goal: the root's child)."""
    kind, s, t = node
    if kind == "goal":
        return range(1, n + 1)
    return range(s + 1, t + 1) if kind == CR else range(s, t)


def kbest_edge(scores, node, r):
    """The two tail nodes and the arc weight of ``node`` split at ``r``."""
    kind, s, t = node
    if kind == "goal":
        return (CL, 1, r), (CR, r, len(scores) - 1), scores[0, r]
    weight = scores[s, t] if kind == IR else scores[t, s] if kind == IL else 0.0
    return (*reference_tails(kind, s, t, r), weight)


def reference_kbest(scores, k):
    """Huang & Chiang's Algorithm 3 as written in the paper: recursion, dicts, heapq."""
    n = len(scores) - 1
    chart, _ = reference_eisner_chart(scores)
    goal = ("goal", 0, 0)
    derivations = {}  # node -> [(score, split, left rank, right rank)], best first
    candidates = {}
    seen = {}

    def rank_score(node, rank):
        return chart[node] if rank == 0 else derivations[node][rank][0]

    def kth(node, j):
        kind, s, t = node
        if kind in (CR, CL) and s == t:  # a single word: one empty derivation
            derivations[node] = [(0.0, -1, 0, 0)]
            return
        if node not in derivations:
            heap = [(-(chart[t1] + chart[t2] + w), r, 0, 0) for r in kbest_splits(node, n)
                    for t1, t2, w in [kbest_edge(scores, node, r)]]
            heapq.heapify(heap)
            derivations[node], candidates[node], seen[node] = [], heap, {(r, 0, 0) for _, r, _, _ in heap}
        found = derivations[node]
        while len(found) < j:
            if found:
                _, r, a, b = found[-1]
                t1, t2, weight = kbest_edge(scores, node, r)
                for a2, b2 in ((a + 1, b), (a, b + 1)):
                    if a2 >= k or b2 >= k or (r, a2, b2) in seen[node]:
                        continue
                    kth(t1, a2 + 1)
                    kth(t2, b2 + 1)
                    if len(derivations[t1]) > a2 and len(derivations[t2]) > b2:
                        seen[node].add((r, a2, b2))
                        value = rank_score(t1, a2) + rank_score(t2, b2) + weight
                        heapq.heappush(candidates[node], (-value, r, a2, b2))
            if not candidates[node]:
                break
            value, r, a, b = heapq.heappop(candidates[node])
            found.append((-value, r, a, b))

    kth(goal, k)
    trees = []
    for value, r, a, b in derivations[goal]:
        heads = np.zeros(n, dtype=np.int64)
        heads[r - 1] = 0
        todo = [((CL, 1, r), a), ((CR, r, n), b)]
        while todo:
            node, rank = todo.pop()
            kind, s, t = node
            if s == t:
                continue
            kth(node, rank + 1)
            _, split, a2, b2 = derivations[node][rank]
            if kind == IR:
                heads[t - 1] = s
            elif kind == IL:
                heads[s - 1] = t
            t1, t2, _ = kbest_edge(scores, node, split)
            todo += [(t1, a2), (t2, b2)]
        trees.append((heads, value))
    return trees


def reference_chu_liu_edmonds(scores):
    """Textbook recursive Chu-Liu-Edmonds (no root constraint), numpy per step."""
    n = len(scores)
    weight = scores.astype(float).copy()
    np.fill_diagonal(weight, -np.inf)
    weight[:, 0] = -np.inf
    heads = weight.argmax(axis=0)
    heads[0] = -1
    cycle = _find_cycle(heads)
    if cycle is None:
        return heads[1:].astype(np.int64)
    in_cycle = np.zeros(n, dtype=bool)
    in_cycle[cycle] = True
    outside_nodes = np.flatnonzero(~in_cycle)  # includes the root, first
    m = len(outside_nodes)
    contracted = np.full((m + 1, m + 1), -np.inf)
    contracted[:m, :m] = weight[np.ix_(outside_nodes, outside_nodes)]
    cycle_in = weight[heads[cycle], cycle]
    enter = weight[np.ix_(outside_nodes, cycle)] - cycle_in  # enter the cycle at each member
    enter_at = enter.argmax(axis=1)
    contracted[:m, m] = enter[np.arange(m), enter_at]
    leave = weight[np.ix_(cycle, outside_nodes)]
    leave_from = leave.argmax(axis=0)
    contracted[m, :m] = leave[leave_from, np.arange(m)]
    sub_heads = np.concatenate([[-1], reference_chu_liu_edmonds(contracted)])
    result = heads.copy()
    for i, node in enumerate(outside_nodes[1:], start=1):
        h = sub_heads[i]
        result[node] = cycle[leave_from[i]] if h == m else outside_nodes[h]
    h = outside_nodes[sub_heads[m]]
    entered = cycle[enter_at[sub_heads[m]]]
    result[entered] = h
    return result[1:].astype(np.int64)


def _find_cycle(heads):
    n = len(heads)
    color = np.zeros(n, dtype=int)  # 0 unseen, 1 on the current walk, 2 done
    color[0] = 2
    for start in range(1, n):
        walk = []
        v = start
        while color[v] == 0:
            color[v] = 1
            walk.append(v)
            v = heads[v]
        if color[v] == 1:
            return np.array(walk[walk.index(v):])
        color[walk] = 2
    return None


# ---------------------------------------------------------------------------
# timing


def sentences_per_second(decode, sentences, repeats, min_seconds=0.2):
    """Median rate over ``repeats`` timings, each long enough to average out scheduler noise."""
    decode(sentences[:1])  # compile or load from cache
    once = timed(lambda: decode(sentences)).wall
    passes = max(1, int(np.ceil(min_seconds / max(once, 1e-9))))
    seconds = timed(lambda: [decode(sentences) for _ in range(passes)], repeats).wall / passes
    return len(sentences) / seconds


def cores_used(decode, sentences):
    """Process CPU time over wall time for one call: the cores the machine actually gave us."""
    _, wall, cpu = timed(lambda: decode(sentences))
    return cpu / wall


def tree_score(scores, heads):
    return float(scores[heads, np.arange(1, len(heads) + 1)].sum())


def check_same_scores(ours, theirs, scores_list, what):
    for scores, a, b in zip(scores_list, ours, theirs):
        if abs(tree_score(scores, a) - tree_score(scores, b)) > 1e-8:
            raise AssertionError(f"{what}: the reference disagrees with the kernel")


def length_rows(n, args, rng):
    """The kernels against their references at sentence length ``n``; at n = 50 also the
    batch entry point with 1 and 2 threads. Returns the rows of both tables."""
    rows, batch_rows = [], []
    count = args.sentences if n <= 50 else args.sentences // 2
    sentences = [rng.normal(size=(n + 1, n + 1)) for _ in range(count)]
    # the Python references get fewer sentences: their rate is what matters
    few = sentences[: max(2, {10: 100, 25: 30, 50: 8, 100: 3}[n])]
    very_few = sentences[: {10: 20, 25: 4, 50: 2, 100: 1}[n]]
    ref_repeats = 3

    def loop(function):
        return lambda batch: [function(s) for s in batch]

    ours = sentences_per_second(loop(eisner_argmax), sentences, args.repeats)
    ref = sentences_per_second(loop(reference_eisner), few, ref_repeats)
    check_same_scores(loop(eisner_argmax)(few), loop(reference_eisner)(few), few, "eisner")
    rows.append(("Eisner argmax", n, ours, ref, "numpy reference"))

    ours = sentences_per_second(loop(eisner_inside_outside), sentences, args.repeats)
    ref = sentences_per_second(loop(reference_marginals), few, ref_repeats)
    for s in few[:2]:
        np.testing.assert_allclose(eisner_inside_outside(s)[0], reference_marginals(s)[0], atol=1e-9)
    rows.append(("Eisner marginals", n, ours, ref, "numpy reference"))

    kbest_sentences = sentences[: max(20, count // 4)]
    ours = sentences_per_second(loop(lambda s: eisner_kbest_kernel(s, K)), kbest_sentences, args.repeats)
    ref = sentences_per_second(loop(lambda s: reference_kbest(s, K)), very_few, 1)
    for s in very_few:
        expected = [value for _, value in reference_kbest(s, K)]
        np.testing.assert_allclose(eisner_kbest_kernel(s, K)[1], expected, atol=1e-9)
    rows.append((f"Eisner {K}-best", n, ours, ref, "Python reference"))

    ours = sentences_per_second(loop(lambda s: chu_liu_edmonds_argmax(s, False)), sentences, args.repeats)
    ref = sentences_per_second(loop(reference_chu_liu_edmonds), few, ref_repeats)
    check_same_scores(
        loop(lambda s: chu_liu_edmonds_argmax(s, False))(few), loop(reference_chu_liu_edmonds)(few), few, "CLE"
    )
    rows.append(("Chu-Liu-Edmonds, any root", n, ours, ref, "numpy reference"))
    if ufal_chu_liu_edmonds is not None:
        # ufal reads score[m, h] (transposed) and returns heads with -1 for the root
        transposed = [np.ascontiguousarray(s.T) for s in sentences]
        ufal = sentences_per_second(loop(ufal_chu_liu_edmonds), transposed, args.repeats)
        theirs = [np.array(ufal_chu_liu_edmonds(t)[0][1:]) for t in transposed[:50]]
        check_same_scores(
            loop(lambda s: chu_liu_edmonds_argmax(s, False))(sentences[:50]), theirs, sentences[:50], "ufal"
        )
        rows.append(("Chu-Liu-Edmonds, any root", n, ours, ufal, "ufal C++"))
    ours_single = sentences_per_second(loop(lambda s: chu_liu_edmonds_argmax(s, True)), sentences, args.repeats)
    rows.append(("Chu-Liu-Edmonds, single root", n, ours_single, None, ""))

    if n == 50:
        for algorithm in ("eisner", "chu_liu_edmonds"):
            cells = []
            for n_jobs in (1, 2):
                decode = lambda b, n_jobs=n_jobs: decode_batch(b, algorithm, n_jobs=n_jobs)  # noqa: E731
                cells.append(sentences_per_second(decode, sentences, args.repeats))
                cells.append(cores_used(decode, sentences))
            batch_rows.append((
                algorithm, n, len(sentences), f"{cells[0]:,.0f}", f"{cells[1]:.2f}",
                f"{cells[2]:,.0f}", f"{cells[3]:.2f}", f"**{cells[2] / cells[0]:.2f}x**",
            ))
    return rows, batch_rows


def report(rows, batch_rows, args, load_start, ufal_note):
    """The section's text: the headline ratios, how it was measured, both tables."""
    table = markdown_table(
        ["decoder", "n", "ours (sent/s)", "reference (sent/s)", "reference", "speed-up"],
        [
            (name, n, f"{ours:,.0f}", "" if ref is None else f"{ref:,.1f}", what,
             "" if ref is None else f"**{ours / ref:,.1f}x**")
            for name, n, ours, ref, what in rows
        ],
    )
    batch_table = markdown_table(
        ["algorithm", "n", "sentences", "1 thread (sent/s)", "cores used", "2 threads (sent/s)", "cores used",
         "speed-up"],
        batch_rows,
    )
    eisner50 = [ours / ref for name, n, ours, ref, _ in rows if name == "Eisner argmax" and n == 50]
    ufal_ratios = [ours / ref for name, n, ours, ref, what in rows if what == "ufal C++"]
    headline = [f"- Eisner argmax at n=50: **{ratio:,.0f}x** the numpy reference (target: at least 50x)."
                for ratio in eisner50]
    if ufal_ratios:
        worst = min(ufal_ratios)
        headline.append(
            f"- Chu-Liu-Edmonds vs ufal's C++: ours runs at {', '.join(f'{r:.2f}x' for r in ufal_ratios)} "
            f"its speed for n = {', '.join(map(str, args.sizes))} (target: within 3x, i.e. at least 0.33x; "
            f"worst {worst:.2f}x)."
        )
    load_end = os.getloadavg()
    body = "\n".join(
        [
            *headline,
            f"- Load average (1/5/15 min) at start {load_start[0]:.2f}/{load_start[1]:.2f}/{load_start[2]:.2f}, "
            f"at end {load_end[0]:.2f}/{load_end[1]:.2f}/{load_end[2]:.2f}, on a 2-core machine shared "
            "with other jobs: absolute rates are noisy, ratios measured in the same run are the figures to read.",
            f"- Random N(0, 1) scores; {args.sentences} sentences per length for n <= 50 and half that for "
            f"n = 100, k-best on a quarter of them; rates are medians of {args.repeats} timings of at "
            "least 0.2 s each (the batch decoded several times over when it is quick) after a warm-up "
            "call. The references are the same recursions written in benchmarks/decoders.py "
            "(Python loops over spans, numpy over split points; k-best in plain Python) and run on fewer "
            "sentences; their answers are checked against the kernels'.",
            f"- Chu-Liu-Edmonds comparison: {ufal_note}, which takes `score[m, h]` (the transpose of our "
            "convention) and has no single-root option, so both solve the unconstrained problem; the "
            "single-root rows are our penalty-constrained variant alone.",
            "",
            table,
            "",
            "Batch entry point (`decode_batch`, one kernel call per thread over a packed buffer), "
            "1 vs 2 joblib threads. \"cores used\" is process CPU time over wall time during one call: "
            "the kernels release the GIL, so 2 threads can only gain where the shared machine lets this "
            "process use more than one core:",
            "",
            batch_table,
        ]
    )
    return body


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=400, help="sentences per length for the kernels")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), choices=SIZES,
                        help="sentence lengths")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    load_start = os.getloadavg()
    rows, batch_rows = [], []
    ufal_note = "not installed"
    if ufal_chu_liu_edmonds is not None:
        from importlib.metadata import version

        ufal_note = f"ufal.chu_liu_edmonds {version('ufal.chu_liu_edmonds')}"

    for n in args.sizes:
        length, batch = length_rows(n, args, rng)
        rows += length
        batch_rows += batch
        print(f"n={n} done", flush=True)
    body = report(rows, batch_rows, args, load_start, ufal_note)
    write_section("decoders", "Tree decoders", body)
    print(body)

