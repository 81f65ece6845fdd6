"""SpectralTreeScorer and NBestReranker: the bars of issue 6.

Parts (each caches its figures as JSON in ``--cache-dir``; the ``spectral``
section of benchmarks/RESULTS.md is rewritten from every part cached so far):

``consistency``
    Bar 1 (Theorem 3.1 of Dhillon et al. 2012). Synthetic corpora from the
    model with k = 3, 4, 5 hidden states and 300 words; the scorer (with
    ``n_components`` = k) is fitted on the first N sentences and evaluated on
    1,000 held-out (sentence, tree) pairs against the exact log-probability:
    mean and median |p_hat / p - 1| (estimates floored as ``score_samples``
    floors them), the share of floored estimates, Spearman correlation of
    log p_hat and log p.
``speed``
    Bar 3. Estimation on all UD English EWT training trees, and scoring speed
    in trees per second on the EWT test trees (warm kernels), against the
    exact inside algorithm over k states as a reference measured in the same
    run.
``rerank``
    Bar 2. LowRankTensorParser (first order, projective 50-best) on EWT:
    test UAS of the base parser, the reranker with the two baseline POS
    templates, the reranker with those plus the spectral log-probability,
    and the oracle UAS of the 50-best lists. The training lists are
    cross-fitted once (3 folds) and shared by both rerankers, which are
    trained with several seeds. ``--parser-gamma 1`` uses the tensor-free
    NT-1st parser instead, the analogue of the paper's MSTParser.
``diagnose``
    Why the spectral feature does or does not help: on the EWT test lists
    of the ``rerank`` part, the UAS of picking by the spectral log p alone
    against picking uniformly at random, how often candidates outscore the
    gold tree, the share of floored estimates, and the eigenvalues of the
    leaf normaliser sum_x M_d(phi(x)), which is the identity in the
    population of the model.

    NUMBA_NUM_THREADS=1 SKLEARN_STRUCTURED_DATA=/path/to/data \\
        python benchmarks/bench_spectral.py --parts consistency speed rerank diagnose
"""

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _results import markdown_table, write_section  # noqa: E402


def consistency(sizes, states, vocabulary_size, n_test):
    from scipy.stats import spearmanr

    from sklearn_structured.datasets import make_latent_tree_corpus
    from sklearn_structured.spectral import SpectralTreeScorer

    rows = []
    for k in states:
        X, y, log_prob = make_latent_tree_corpus(max(sizes) + n_test, k, vocabulary_size,
                                                 random_state=k)
        X_test, y_test, truth = X[-n_test:], y[-n_test:], log_prob[-n_test:]
        for n in sizes:
            tic = time.perf_counter()
            est = SpectralTreeScorer(n_components=k, min_count=1, random_state=0).fit(X[:n], y[:n])
            seconds = time.perf_counter() - tic
            estimate, floored = est.score_samples(X_test, y_test, return_flags=True)
            error = np.abs(np.exp(estimate - truth) - 1)
            rows.append(dict(k=k, n=n, mean_error=float(error.mean()),
                             median_error=float(np.median(error)),
                             floored=float(floored.mean()),
                             spearman=float(spearmanr(estimate, truth)[0]), fit_seconds=seconds))
            print(rows[-1], flush=True)
    return dict(rows=rows, vocabulary_size=vocabulary_size, n_test=n_test)


def speed(n_components, repeats):
    from sklearn_structured.datasets import load_ud_treebank
    from sklearn_structured.spectral import SpectralTreeScorer
    from sklearn_structured.kernels.latent_tree import exact_log_probs
    from sklearn_structured.spectral._kernels import spectral_log_probs
    from sklearn_structured.spectral._scorer import _words
    from sklearn_structured.utils import pack_ragged

    X, y = load_ud_treebank("en_ewt", "train")
    X_test, y_test = load_ud_treebank("en_ewt", "test")
    SpectralTreeScorer(n_components=n_components, random_state=0).fit(X[:200], y[:200])  # compile
    fit_seconds = []
    for _ in range(repeats):
        tic = time.perf_counter()
        est = SpectralTreeScorer(n_components=n_components, random_state=0).fit(X, y)
        fit_seconds.append(time.perf_counter() - tic)
    ids, offsets = pack_ragged([est.vocabulary_.encode(_words(s, "form")) for s in X_test])
    heads, _ = pack_ragged(y_test)
    k = n_components
    rng = np.random.default_rng(0)
    start = rng.dirichlet(np.ones(k))
    transitions = rng.dirichlet(np.ones(k), size=(2, k)).transpose(0, 2, 1).copy()
    emissions = rng.dirichlet(np.ones(len(est.vocabulary_)), size=k).T.copy()

    def best_time(fn):
        fn()
        times = []
        for _ in range(repeats):
            tic = time.perf_counter()
            fn()
            times.append(time.perf_counter() - tic)
        return min(times)

    kernel = best_time(lambda: spectral_log_probs(ids, heads, offsets, est.embedding_,
                                                  est.root_vector_, est.operators_))
    exact = best_time(lambda: exact_log_probs(ids, heads, offsets, start, transitions, emissions))
    end_to_end = best_time(lambda: est.score_samples(X_test, y_test))
    return dict(
        n_train_trees=len(X), n_train_tokens=int(sum(map(len, X))), n_components=k,
        fit_seconds=min(fit_seconds), n_test_trees=len(X_test),
        kernel_trees_per_second=len(X_test) / kernel,
        score_samples_trees_per_second=len(X_test) / end_to_end,
        exact_trees_per_second=len(X_test) / exact,
    )


def rerank(parser_epochs, parser_gamma, n_best, scorer_params, perceptron_epochs, seeds, train_limit,
           lists_path):
    import pickle

    from sklearn_structured.datasets import load_ud_treebank
    from sklearn_structured.lowrank import LowRankTensorParser
    from sklearn_structured.metrics import attachment_score
    from sklearn_structured.spectral import NBestReranker, SpectralTreeScorer, cross_val_nbest

    X, y = load_ud_treebank("en_ewt", "train")
    X_test, y_test = load_ud_treebank("en_ewt", "test")
    if train_limit:
        X, y = X[:train_limit], y[:train_limit]
    settings = (len(X), parser_epochs, parser_gamma, n_best)
    reused = lists_path.exists() and pickle.loads(lists_path.read_bytes())["settings"] == settings
    if reused:
        # n-best lists of an earlier run with the same settings (parsing is the costly part)
        stored = pickle.loads(lists_path.read_bytes())
    else:
        parser = LowRankTensorParser(n_epochs=parser_epochs, gamma=parser_gamma, decoder="eisner",
                                     random_state=0)
        tic = time.perf_counter()
        # the training lists, cross-fitted once (3 folds) and shared by both rerankers
        train_nbest = cross_val_nbest(parser, X, y, n_best=n_best, cv=3, random_state=0, verbose=1)
        final = parser.fit(X, y)
        stored = dict(settings=settings, train_nbest=train_nbest,
                      test_nbest=final.predict_nbest(X_test, n_best),
                      parse_seconds=time.perf_counter() - tic)
        lists_path.write_bytes(pickle.dumps(stored))
    train_nbest, test_nbest = stored["train_nbest"], stored["test_nbest"]
    parse_seconds = stored["parse_seconds"]
    base_uas = attachment_score(y_test, [lst[0][0] for lst in test_nbest], X=X_test)
    oracle_correct = oracle_total = 0
    for sentence, gold, lst in zip(X_test, y_test, test_nbest):
        n_scored = sum(1 for t in sentence if t.get("upos") != "PUNCT")
        if n_scored == 0:
            continue
        best = max(attachment_score([gold], [h], X=[sentence]) for h, _ in lst)
        oracle_correct += best * n_scored
        oracle_total += n_scored
    figures = dict(n_train=len(X), parser_epochs=parser_epochs, parser_gamma=parser_gamma, n_best=n_best,
                   perceptron_epochs=perceptron_epochs, scorer=scorer_params,
                   parse_seconds=parse_seconds, lists_reused=reused, base_uas=base_uas,
                   oracle_uas=oracle_correct / oracle_total)
    # the reranker's seed sets the folds of the cross-fitted scorers and the
    # perceptron's order, so each reranker is trained with several seeds
    figures["seeds"] = list(seeds)
    scorer = SpectralTreeScorer(**scorer_params, random_state=0)
    for name, scorers in (("baseline", ()), ("spectral", (scorer,))):
        tic = time.perf_counter()
        figures[f"{name}_uas"] = []
        for seed in seeds:
            reranker = NBestReranker(_ListsOnly(), scorers=scorers, n_best=n_best, cv="prefit",
                                     n_epochs=perceptron_epochs, random_state=seed)
            reranker.fit(X, y, train_nbest=train_nbest)
            pred = reranker.predict(X_test, nbest=test_nbest)
            figures[f"{name}_uas"].append(attachment_score(y_test, pred, X=X_test))
            print(name, seed, figures[f"{name}_uas"][-1], flush=True)
        figures[f"{name}_seconds"] = (time.perf_counter() - tic) / len(seeds)
    return figures


def diagnose(parser_epochs, parser_gamma, n_best, scorer_params, lists_path, rconds):
    import pickle

    from sklearn_structured.datasets import load_ud_treebank
    from sklearn_structured.metrics import attachment_score
    from sklearn_structured.spectral import SpectralTreeScorer

    X, y = load_ud_treebank("en_ewt", "train")
    X_test, y_test = load_ud_treebank("en_ewt", "test")
    stored = pickle.loads(lists_path.read_bytes())
    if stored["settings"] != (len(X), parser_epochs, parser_gamma, n_best):
        raise SystemExit(f"{lists_path} holds lists of other settings: run the rerank part first")
    test_nbest = stored["test_nbest"]
    scored = [np.array([t.get("upos") != "PUNCT" for t in s]) for s in X_test]
    n_scored = sum(np.count_nonzero(m) for m in scored)
    uniform_correct = sum(np.mean([np.count_nonzero((h == gold) & m) for h, _ in lst])
                          for gold, m, lst in zip(y_test, scored, test_nbest))
    rows = []
    for rcond in rconds:
        scorer = SpectralTreeScorer(**{**scorer_params, "rcond": rcond}, random_state=0).fit(X, y)
        picked, above_gold, floored, n_candidates = [], 0, 0, 0
        for sentence, gold, lst in zip(X_test, y_test, test_nbest):
            heads = [h for h, _ in lst]
            log_p, flags = scorer.score_samples([sentence] * len(heads), heads, return_flags=True)
            picked.append(heads[int(np.argmax(log_p))])
            above_gold += np.count_nonzero(log_p > scorer.score_samples([sentence], [gold])[0])
            floored += np.count_nonzero(flags)
            n_candidates += len(heads)
        embedding_sum = scorer.embedding_.sum(axis=0)
        eigenvalues = [
            sorted(np.linalg.eigvals(np.einsum("a,abc->bc", embedding_sum, scorer.operators_[d])).real.tolist(),
                   reverse=True)
            for d in range(2)
        ]
        rows.append(dict(rcond=rcond, argmax_log_p_uas=attachment_score(y_test, picked, X=X_test),
                         above_gold=above_gold / n_candidates, floored=floored / n_candidates,
                         floored_train=scorer.nonpositive_share_,
                         leaf_normaliser_eigenvalues=eigenvalues))
    return dict(parser_gamma=parser_gamma, n_best=n_best, scorer=scorer_params, n_train=len(X),
                first_uas=attachment_score(y_test, [lst[0][0] for lst in test_nbest], X=X_test),
                uniform_uas=uniform_correct / n_scored, rows=rows)


class _ListsOnly:
    """Stands in for the fitted base parser: the rerankers get every list given."""

    def predict_nbest(self, X, k):
        raise RuntimeError("the benchmark passes the n-best lists explicitly")


def render(cache):
    parts = []
    if "consistency" in cache:
        c = cache["consistency"]
        rows = [[r["k"], f"{r['n']:,}", f"{r['mean_error']:.3f}", f"{r['median_error']:.3f}",
                 f"{100 * r['floored']:.1f}%", f"{r['spearman']:.4f}", f"{r['fit_seconds']:.2f}"]
                for r in c["rows"]]
        verdicts = []
        for k in sorted({r["k"] for r in c["rows"]}):
            mine = sorted((r for r in c["rows"] if r["k"] == k), key=lambda r: r["n"])
            first, last = mine[0], mine[-1]
            ratio = first["mean_error"] / last["mean_error"]
            verdicts.append(
                f"k={k}: mean error {first['mean_error']:.3f} -> {last['mean_error']:.3f} "
                f"({ratio:.1f}x smaller; bar: at least 2x), Spearman at "
                f"{last['n']:,} = {last['spearman']:.4f} (bar: > 0.9)")
        parts.append(
            "### Bar 1: consistency on synthetic data from the model\n\n"
            f"Vocabulary {c['vocabulary_size']} words, {c['n_test']} held-out pairs, "
            "`n_components` = k, `rcond=0.01`, CCA embedding. Error = |p_hat/p - 1| with "
            "floored estimates as returned by `score_samples`.\n\n"
            + markdown_table(["k", "train sentences", "mean error", "median error", "floored",
                              "Spearman", "fit s"], rows)
            + "\n\n" + "\n".join(f"- {v}" for v in verdicts))
    if "speed" in cache:
        s = cache["speed"]
        parts.append(
            "### Bar 3: speed\n\n"
            f"- estimation on all {s['n_train_trees']:,} EWT training trees "
            f"({s['n_train_tokens']:,} tokens), k = {s['n_components']} (vocabulary, CCA "
            f"embedding, counting, operators): {s['fit_seconds']:.2f} s (best of runs)\n"
            f"- scoring the {s['n_test_trees']:,} EWT test trees: kernel "
            f"{s['kernel_trees_per_second']:,.0f} trees/s, `score_samples` end to end "
            f"(encoding included) {s['score_samples_trees_per_second']:,.0f} trees/s\n"
            f"- reference in the same run: the exact inside algorithm over k = "
            f"{s['n_components']} states, {s['exact_trees_per_second']:,.0f} trees/s "
            f"(spectral kernel / exact = "
            f"{s['kernel_trees_per_second'] / s['exact_trees_per_second']:.2f})")
    for key in sorted(k for k in cache if k.startswith("rerank")):
        r = cache[key]
        gamma = r["parser_gamma"]
        base_name = f"LowRankTensorParser, gamma={gamma:g}" + (" (NT-1st)" if gamma == 1 else "")

        def mean_sd(values):
            return f"{100 * np.mean(values):.2f} ± {100 * np.std(values):.2f}"

        gains = 100 * (np.array(r["spectral_uas"]) - np.array(r["baseline_uas"]))
        rows = [[f"{base_name} (no reranking)", f"{100 * r['base_uas']:.2f}"],
                ["reranker, baseline POS features", mean_sd(r["baseline_uas"])],
                ["reranker, baseline + spectral log p", mean_sd(r["spectral_uas"])],
                [f"oracle of the {r['n_best']}-best lists", f"{100 * r['oracle_uas']:.2f}"]]
        parts.append(
            f"### Bar 2: reranking on UD English EWT, base parser {base_name}, spectral model of the "
            f"{r['scorer']['token_field']} field (test, UAS without punctuation)\n\n"
            + markdown_table(["system", f"UAS (rerankers: mean ± sd over seeds {r['seeds']})"], rows)
            + f"\n\nGain of the spectral feature, per seed: "
            + ", ".join(f"{g:+.2f}" for g in gains)
            + f" (mean {gains.mean():+.2f}).\n\nSettings: {r['n_train']:,} training sentences; base parser "
            f"LowRankTensorParser(n_epochs={r['parser_epochs']}, gamma={gamma:g}, decoder='eisner') (fewer "
            "epochs than its default 10, to fit 3 cross-fitted parsers and the final one on "
            f"a shared 2-core machine), projective {r['n_best']}-best; training lists "
            "cross-fitted with 3 folds and shared by both rerankers; averaged perceptron "
            f"{r['perceptron_epochs']} epochs; scorer SpectralTreeScorer({r['scorer']}) "
            f"cross-fitted on the reranker's folds. Parsing (3 cross-fitted parsers, the final one, "
            f"all n-best lists) took {r['parse_seconds']:.0f} s"
            + (" in an earlier run with the same settings, whose lists this run reused"
               if r.get("lists_reused") else "")
            + ". The "
            "paper (PTB, MSTParser 1st order): 90.8 -> 91.3 -> 91.7.")
    if "diagnose" in cache:
        d = cache["diagnose"]

        def eigenvalues(row):
            return "; ".join(f"{side} " + ", ".join(f"{v:.2f}" for v in row["leaf_normaliser_eigenvalues"][i])
                             for i, side in enumerate(("L", "R")))

        parts.append(
            "### Why the spectral feature does not help on EWT\n\n"
            f"Scorer fitted on all {d['n_train']:,} training trees ({d['scorer']}, `rcond` varied), "
            f"applied to the {d['n_best']}-best test lists of the gamma={d['parser_gamma']:g} parser "
            f"above. Test UAS (no punctuation) of the parser's best candidate: {100 * d['first_uas']:.2f}; "
            f"of a candidate drawn uniformly from each list (expected): {100 * d['uniform_uas']:.2f}.\n\n"
            + markdown_table(
                ["rcond", "UAS of the candidate with the highest spectral log p",
                 "candidates scored above the gold tree", "floored candidates", "floored training trees",
                 "eigenvalues of the leaf normaliser sum_x M_d(phi(x))"],
                [[f"{r['rcond']:g}", f"{100 * r['argmax_log_p_uas']:.2f}", f"{100 * r['above_gold']:.1f}%",
                  f"{100 * r['floored']:.1f}%", f"{100 * r['floored_train']:.1f}%", eigenvalues(r)]
                 for r in d["rows"]])
            + "\n\nIn the population of the model the leaf normaliser is the identity (every "
            "eigenvalue 1). On EWT, after the `rcond` cut of the pair matrices, the operators keep "
            "one or two directions, so the estimate hardly depends on where a word attaches; a "
            "smaller `rcond` keeps more directions, and then many estimates are non-positive. "
            "Either way the spectral log p ranks the candidates no better than chance.")
    return "\n\n".join(parts)


def private_directory(path):
    """Create ``path`` (mode 0700) or check an existing one: the cache is unpickled, so a
    folder others can write to (such as a fixed name under /tmp) would let them run code."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    status = path.stat()
    if status.st_uid != os.getuid() or status.st_mode & 0o022:
        sys.exit(f"{path} must belong to you and not be writable by others: it holds pickles")
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", nargs="+", default=["consistency", "speed", "rerank"],
                        choices=["consistency", "speed", "rerank", "diagnose"])
    parser.add_argument(
        "--cache-dir", default=str(Path.home() / ".cache" / "sklearn-structured-bench" / "spectral"),
        help="private folder for the cached figures and n-best lists (it holds pickles, which "
        "are loaded back: it must belong to you and be writable by nobody else)")
    parser.add_argument("--sizes", nargs="+", type=int, default=[1000, 3000, 10000, 30000, 100000])
    parser.add_argument("--states", nargs="+", type=int, default=[3, 4, 5])
    parser.add_argument("--parser-epochs", type=int, default=2)
    parser.add_argument("--parser-gamma", type=float, default=0.3,
                        help="gamma of the base parser (1 = NT-1st, the MSTParser-like parser of the paper)")
    parser.add_argument("--n-best", type=int, default=50)
    parser.add_argument("--rerank-seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--perceptron-epochs", type=int, default=10)
    parser.add_argument("--train-limit", type=int, default=0)
    parser.add_argument("--spectral-components", type=int, default=10)
    parser.add_argument("--spectral-rcond", type=float, default=0.03)
    parser.add_argument("--spectral-token-field", default="form")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    cache_dir = private_directory(Path(args.cache_dir))
    if not os.environ.get("SKLEARN_STRUCTURED_DATA") and {"speed", "rerank"} & set(args.parts):
        sys.exit("set SKLEARN_STRUCTURED_DATA to the folder holding ud/ (UD English EWT)")
    for part in args.parts:
        if part == "consistency":
            figures = consistency(args.sizes, args.states, 300, 1000)
        elif part == "speed":
            figures = speed(10, args.repeats)
        elif part == "diagnose":
            figures = diagnose(args.parser_epochs, args.parser_gamma, args.n_best,
                               dict(n_components=args.spectral_components, rcond=args.spectral_rcond,
                                    token_field=args.spectral_token_field),
                               cache_dir / f"rerank_lists_gamma{args.parser_gamma:g}.pkl",
                               [args.spectral_rcond, 1e-3])
        else:
            figures = rerank(args.parser_epochs, args.parser_gamma, args.n_best,
                             dict(n_components=args.spectral_components, rcond=args.spectral_rcond,
                                  token_field=args.spectral_token_field),
                             args.perceptron_epochs, args.rerank_seeds, args.train_limit,
                             cache_dir / f"rerank_lists_gamma{args.parser_gamma:g}.pkl")
            part = f"rerank_gamma{args.parser_gamma:g}" + (
                "" if args.spectral_token_field == "form" else f"_{args.spectral_token_field}")
        figures["load_average"] = os.getloadavg()[0]
        figures["command"] = "python " + shlex.join(sys.argv)
        (cache_dir / f"{part}.json").write_text(json.dumps(figures, indent=1))
    cache = {p.stem: json.loads(p.read_text()) for p in cache_dir.glob("*.json")}
    body = render(cache)
    loads = ", ".join(f"{name} {fig['load_average']:.1f}" for name, fig in sorted(cache.items()))
    body += f"\n\nLoad average (1 min) at the end of each part: {loads} (shared machine)."
    body += "\n\nCommands of the parts (the header names the last run):\n\n" + "\n".join(
        f"- {name}: `{fig.get('command', 'python benchmarks/bench_spectral.py --parts ' + name)}`"
        for name, fig in sorted(cache.items()))
    write_section("spectral", "SpectralTreeScorer and NBestReranker (Dhillon et al. 2012)", body)


if __name__ == "__main__":
    main()
