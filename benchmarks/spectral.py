"""SpectralTreeScorer and NBestReranker: accuracy, fit and scoring speed.

Parts (each caches its figures as JSON in ``--cache-dir``; the ``spectral``
section of benchmarks/RESULTS.md is rewritten from every part cached so far):

``synthetic``
    Bars 2 and 3. Words drawn from a random hidden-state model (k = 10,
    5,000 words) laid on the UD English EWT training and dev trees. Bar 2:
    on (gold dev tree, one-word reattachment) pairs, how often each
    estimator's log-probability difference has the true model's sign, the
    correlation of the differences, and the spectral estimator's
    non-positive estimates by sentence length. Bar 3: "spectral+em" against
    "em" from a random start, iterations and time to reach the held-out
    likelihood "em" converges to, five seeds.
``span``
    Share of the emission matrix outside the span of the "svd" and "cca"
    embeddings on the same synthetic model.
``ewt_fit``
    Bar 4. Fit time of each estimator on all EWT training trees, with the
    rank kept, the non-positive share, EM iterations and dev log-likelihood.
``speed``
    Scoring speed on the EWT test trees, ``score_samples`` end to end: the
    spectral operators against the exact inside algorithm (what the EM
    estimators score with).
``rerank``
    Bar 1. LowRankTensorParser (first order, projective 50-best) on EWT. The
    scorer's estimator is chosen on held-out training lists (rerankers
    trained on 2/3 of the cross-fitted training lists, scored on the other
    third; best mean over ``--selection-seeds``, a lead over the scorer's
    default within one paired standard error counting as a tie that goes to
    the default); then the test UAS of the
    base parser, the reranker with the two baseline POS templates, the
    reranker with those plus the default
    SpectralTreeScorer, over several seeds, with a paired bootstrap CI of
    the gain over test sentences. ``--parser-gamma 1`` uses the tensor-free
    NT-1st parser instead, the analogue of the paper's MSTParser;
    ``--spectral-strip-punctuation`` fits and scores the trees without
    punctuation, as the paper did (the parser still parses it, and UAS still
    leaves it out). Runs with other scorer settings reuse the same n-best
    lists and seeds, and are cached (and shown) side by side.
``diagnose``
    Each estimator alone as a reranker on the test lists of ``rerank``: the
    UAS of the candidate with the highest log p against a uniform pick.

    NUMBA_NUM_THREADS=1 SKLEARN_STRUCTURED_DATA=/path/to/data \\
        python -m benchmarks spectral --parts synthetic ewt_fit speed rerank diagnose

Every part uses the library's public API only.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.base import (SETTINGS, code_description, data_home, load_treebank, markdown_table,
                             timed, write_section)


LENGTH_BINS = [(1, 5), (6, 10), (11, 20), (21, 30), (31, 50), (51, 10**6)]


def synthetic(n_states, vocabulary_size, seeds, max_iter):
    """Bars 2 and 3 on words drawn from a known model laid on EWT's own trees."""
    from sklearn_structured.datasets import make_latent_tree_corpus
    from sklearn_structured.kernels.latent_tree import exact_log_probs
    from sklearn_structured.spectral import SpectralTreeScorer, reattach_one_word
    from sklearn_structured.utils import pack_ragged

    _, y = load_treebank("en_ewt", "train")
    _, y_dev = load_treebank("en_ewt", "dev")
    X_all, y_all, _, model = make_latent_tree_corpus(
        len(y) + len(y_dev), n_states, vocabulary_size, trees=list(y) + list(y_dev),
        random_state=0, return_model=True)
    X, X_dev = X_all[:len(y)], X_all[len(y):]
    rng = np.random.default_rng(0)
    moved = [reattach_one_word(h, rng, max_tries=200) for h in y_dev]
    keep = [i for i, t in enumerate(moved) if t is not None]
    pair_X = [X_dev[i] for i in keep]

    def true_log_probs(sentences, trees):
        words, offsets = pack_ragged([[int(w[1:]) for w in s] for s in sentences])
        return exact_log_probs(words, pack_ragged(trees)[0], offsets, model["start_probs"],
                               model["transitions"], model["emissions"])

    true_diff = (true_log_probs(pair_X, [y_dev[i] for i in keep])
                 - true_log_probs(pair_X, [moved[i] for i in keep]))
    decided = true_diff != 0

    def agreement(est):
        """Share of the pairs whose estimated difference has the true sign, and correlation."""
        diff = (est.score_samples(pair_X, [y_dev[i] for i in keep])
                - est.score_samples(pair_X, [moved[i] for i in keep]))
        return dict(agreement=float(np.mean(np.sign(diff[decided]) == np.sign(true_diff[decided]))),
                    correlation=float(np.corrcoef(diff, true_diff)[0, 1]))

    dev_tokens = sum(map(len, X_dev))
    true_dev = float(true_log_probs(X_dev, y_dev).sum() / dev_tokens)
    figures = dict(n_states=n_states, vocabulary_size=vocabulary_size, n_train=len(X),
                   n_train_tokens=int(sum(map(len, X))), n_pairs=len(keep),
                   true_dev_log_likelihood=true_dev, seeds=list(seeds), max_iter=max_iter,
                   estimators={}, runs=[], clock="cpu")
    for estimator in ("spectral", "em", "spectral+em"):
        for seed in seeds:
            tic = time.process_time()
            # one EM run per fit: bar 3 compares the two starts
            est = SpectralTreeScorer(n_components=n_states, method=estimator, n_epochs=max_iter,
                                     n_init=1, random_state=seed).fit(X, y, X_val=X_dev, y_val=y_dev)
            seconds = time.process_time() - tic
            run = dict(estimator=estimator, seed=seed, fit_seconds=seconds,
                       dev_log_likelihood=est.score(X_dev, y_dev))
            if estimator != "spectral":
                run.update(n_iter=est.n_iter_, converged=bool(est.converged_),
                           validation_curve=[h["validation_score"] for h in est.history_])
            if estimator != "em":
                run.update(rank=est.rank_.tolist(), nonpositive_train=est.nonpositive_share_)
            figures["runs"].append(run)
            print({k: v for k, v in run.items() if k != "validation_curve"}, flush=True)
            # bar 2 with every seed's fit
            row = figures["estimators"].setdefault(estimator, dict(agreement=[], correlation=[]))
            for key, value in agreement(est).items():
                row[key].append(value)
            if estimator == "spectral" and seed == seeds[0]:
                row["nonpositive_by_length"], row["nonpositive_dev"] = nonpositive_by_length(
                    est, X_dev, y_dev)
            print(estimator, seed, row["agreement"][-1], row["correlation"][-1], flush=True)
    figures["default"] = default_scorer_agreement(n_states, max_iter, seeds, X, y, agreement)
    return figures


def nonpositive_by_length(est, X, y):
    """``[lo, hi, trees, share]`` of the trees of each length bin whose estimate is not
    positive, and the share over all the trees."""
    lengths = np.array([len(s) for s in X])
    _, flags = est.score_samples(X, y, return_flags=True)
    by_length = [[lo, hi, int(np.count_nonzero((lengths >= lo) & (lengths <= hi))),
                  float(flags[(lengths >= lo) & (lengths <= hi)].mean())]
                 for lo, hi in LENGTH_BINS if np.any((lengths >= lo) & (lengths <= hi))]
    return by_length, float(flags.mean())


def default_scorer_agreement(n_states, max_iter, seeds, X, y, agreement):
    """Bar 2 for the default scorer (its estimator with its n_init runs), every seed."""
    from sklearn_structured.spectral import SpectralTreeScorer

    figures = dict(agreement=[], correlation=[])
    for seed in seeds:
        default = SpectralTreeScorer(n_components=n_states, n_epochs=max_iter, random_state=seed).fit(X, y)
        for key, value in agreement(default).items():
            figures[key].append(value)
        print("default", seed, figures["agreement"][-1], flush=True)
    figures.update(estimator=default.method, n_init=default.n_init, combine_runs=default.combine_runs)
    return figures


def _true_emission_rows(est, model):
    """The true emission matrix in the estimator's word order (row 0, the unknown
    word, holds the words not kept)."""
    kept = np.array([int(w[1:]) for w in est.vocabulary_.itos[1:]])
    O = np.zeros((len(est.vocabulary_), model["emissions"].shape[1]))
    O[1:] = model["emissions"][kept]
    O[0] = model["emissions"].sum(axis=0) - O[1:].sum(axis=0)
    return O


def speed(n_components, repeats):
    """Scoring speed on the EWT test trees, end to end: a spectral scorer against one fitted
    by EM, which scores with the exact inside algorithm over the same number of states."""
    from sklearn_structured.spectral import SpectralTreeScorer

    X, y = load_treebank("en_ewt", "train")
    X_test, y_test = load_treebank("en_ewt", "test")
    spectral = SpectralTreeScorer(n_components=n_components, method="spectral",
                                  random_state=0).fit(X, y)
    # the time of scoring does not depend on how well EM converged: one iteration will do
    exact = SpectralTreeScorer(n_components=n_components, method="em", n_init=1, n_epochs=1,
                               random_state=0).fit(X, y)

    def cpu_seconds(scorer):
        scorer.score_samples(X_test[:1], y_test[:1])  # compile before timing
        return timed(lambda: scorer.score_samples(X_test, y_test), repeats).cpu

    return dict(
        clock="cpu", timing="median of the repeats", n_train_trees=len(X), n_components=n_components,
        n_test_trees=len(X_test), score_samples_trees_per_second=len(X_test) / cpu_seconds(spectral),
        exact_score_samples_trees_per_second=len(X_test) / cpu_seconds(exact),
    )


def span(n_states, vocabulary_size, sizes):
    """Share of the emission matrix's norm outside span(U) for each embedding,
    on the synthetic model of ``synthetic`` laid on the first N EWT training trees."""
    from sklearn_structured.datasets import make_latent_tree_corpus
    from sklearn_structured.spectral import SpectralTreeScorer

    _, y = load_treebank("en_ewt", "train")
    X, _, _, model = make_latent_tree_corpus(len(y), n_states, vocabulary_size, trees=list(y),
                                             random_state=0, return_model=True)
    rows = []
    for n in sizes:
        for embedding in ("svd", "cca"):
            est = SpectralTreeScorer(n_components=n_states, method="spectral", embedding=embedding,
                                     random_state=0).fit(X[:n], y[:n])
            O = _true_emission_rows(est, model)
            O[0] = 0.0  # the unknown word is not in the population span
            U = est.embedding_
            rows.append(dict(n=n, embedding=embedding,
                             missed=float(np.linalg.norm(O - U @ (U.T @ O)) / np.linalg.norm(O))))
            print(rows[-1], flush=True)
    return dict(n_states=n_states, vocabulary_size=vocabulary_size, rows=rows)


def ewt_fit(n_components, seeds):
    """Bar 4: fit time on all EWT training trees of each estimator, with what
    it reports (rank kept, non-positive share, EM iterations) and its
    held-out (dev) log-likelihood per token."""
    from sklearn_structured.spectral import SpectralTreeScorer

    X, y = load_treebank("en_ewt", "train")
    X_dev, y_dev = load_treebank("en_ewt", "dev")
    SpectralTreeScorer(n_components=2, n_epochs=2, random_state=0).fit(X[:100], y[:100])  # compile
    runs = []
    for estimator in ("spectral", "em", "spectral+em"):
        for seed in seeds:
            tic = time.process_time()
            est = SpectralTreeScorer(n_components=n_components, method=estimator,
                                     random_state=seed).fit(X, y)
            run = dict(estimator=estimator, seed=seed, fit_seconds=time.process_time() - tic,
                       n_init=est.n_init)
            if estimator != "em":
                run.update(rank=est.rank_.tolist(), nonpositive_train=est.nonpositive_share_)
            if estimator != "spectral":
                run.update(n_iter=est.n_iter_, converged=bool(est.converged_))
            log_prob, flags = est.score_samples(X_dev, y_dev, return_flags=True)
            run.update(dev_log_likelihood=float(log_prob.sum() / sum(map(len, X_dev))),
                       nonpositive_dev=float(flags.mean()))
            runs.append(run)
            print(run, flush=True)
    return dict(n_train=len(X), n_components=n_components, runs=runs, clock="cpu")


def nbest_lists(X, y, X_test, parser_epochs, parser_gamma, n_best, lists_path):
    """The n-best lists of the training sentences (cross-fitted, 3 folds) and of the test
    sentences, from ``lists_path`` when an earlier run made them with the same settings
    (parsing is the costly part); and whether they were reused."""
    import pickle

    from sklearn_structured.lowrank import LowRankTensorParser
    from sklearn_structured.spectral import cross_val_nbest

    settings = (len(X), parser_epochs, parser_gamma, n_best)
    if lists_path.exists() and pickle.loads(lists_path.read_bytes())["settings"] == settings:
        return pickle.loads(lists_path.read_bytes()), True
    parser = LowRankTensorParser(n_epochs=parser_epochs, gamma=parser_gamma, decoder="eisner",
                                 random_state=0)
    tic = time.process_time()
    # the training lists, cross-fitted once and shared by both rerankers
    train_nbest = cross_val_nbest(parser, X, y, n_best=n_best, cv=3, random_state=0, verbose=1)
    final = parser.fit(X, y)
    stored = dict(settings=settings, train_nbest=train_nbest,
                  test_nbest=final.predict_nbest(X_test, n_best),
                  parse_seconds=time.process_time() - tic)
    lists_path.write_bytes(pickle.dumps(stored))
    return stored, False


def oracle_uas(X_test, y_test, test_nbest):
    """UAS (no punctuation) of the best candidate of every list."""
    from sklearn_structured.metrics import attachment_score

    correct = total = 0
    for sentence, gold, lst in zip(X_test, y_test, test_nbest):
        n_scored = sum(1 for t in sentence if t.get("upos") != "PUNCT")
        if n_scored == 0:
            continue
        best = max(attachment_score([gold], [h], X=[sentence]) for h, _ in lst)
        correct += best * n_scored
        total += n_scored
    return correct / total


def rerank(parser_epochs, parser_gamma, n_best, scorer_params, perceptron_epochs, seeds, train_limit,
           lists_path, selection_estimators, selection_seeds, n_bootstrap=2000):
    from sklearn_structured.metrics import attachment_score, is_punctuation
    from sklearn_structured.spectral import NBestReranker, SpectralTreeScorer

    X, y = load_treebank("en_ewt", "train")
    X_test, y_test = load_treebank("en_ewt", "test")
    if train_limit:
        X, y = X[:train_limit], y[:train_limit]
    stored, reused = nbest_lists(X, y, X_test, parser_epochs, parser_gamma, n_best, lists_path)
    train_nbest, test_nbest = stored["train_nbest"], stored["test_nbest"]
    base_uas = attachment_score(y_test, [lst[0][0] for lst in test_nbest], X=X_test)
    figures = dict(n_train=len(X), parser_epochs=parser_epochs, parser_gamma=parser_gamma, n_best=n_best,
                   perceptron_epochs=perceptron_epochs, scorer=scorer_params,
                   parse_seconds=stored["parse_seconds"], lists_reused=reused, base_uas=base_uas,
                   oracle_uas=oracle_uas(X_test, y_test, test_nbest), clock="cpu")

    def reranked(scorers, seed, X_fit, y_fit, lists_fit, X_eval, lists_eval):
        reranker = NBestReranker(parser=_ListsOnly(), scorers=scorers, n_best=n_best, cv="prefit",
                                 n_epochs=perceptron_epochs, random_state=seed)
        return reranker.fit(X_fit, y_fit, train_nbest=lists_fit).predict(X_eval, nbest=lists_eval)

    # choosing the estimator: rerankers trained on 2/3 of the training lists
    # (cross-fitted, so as noisy as test lists) and scored on the other third;
    # each seed draws its own split, scorer seeds and perceptron order, and
    # the choice goes by the mean over seeds
    pick = lambda items, part: [items[i] for i in part]  # noqa: E731
    figures["selection_seeds"] = list(selection_seeds)
    figures["selection"] = {e: dict(uas=[], seconds=[]) for e in selection_estimators}
    for seed in selection_seeds:
        order = np.random.default_rng(seed).permutation(len(X))
        fit_part, held_part = np.sort(order[len(X) // 3:]), np.sort(order[:len(X) // 3])
        for estimator in selection_estimators:
            scorers = () if estimator == "none" else (
                SpectralTreeScorer(**scorer_params, method=estimator),)
            tic = time.process_time()
            pred = reranked(scorers, seed, pick(X, fit_part), pick(y, fit_part),
                            pick(train_nbest, fit_part), pick(X, held_part), pick(train_nbest, held_part))
            row = figures["selection"][estimator]
            row["uas"].append(attachment_score(pick(y, held_part), pred, X=pick(X, held_part)))
            row["seconds"].append(time.process_time() - tic)
            print("selection", seed, estimator, row["uas"][-1], row["seconds"][-1], flush=True)

    figures["chosen"] = chosen = chosen_estimator(figures["selection"], len(selection_seeds))
    figures["scorer_seeds"] = "drawn from the reranker's seed"
    # the reranker's seed sets the folds of the cross-fitted scorers, the
    # scorers' own seeds (EM starts, whose local optima rerank differently)
    # and the perceptron's order, so each reranker is trained with several seeds
    figures["seeds"] = list(seeds)
    scored = [np.array([not is_punctuation(t) for t in s]) for s in X_test]
    correct = {}
    for name, scorers in (("baseline", ()),
                          ("spectral", (SpectralTreeScorer(**scorer_params, method=chosen),))):
        tic = time.process_time()
        figures[f"{name}_uas"] = []
        correct[name] = np.zeros(len(X_test))
        for seed in seeds:
            pred = reranked(scorers, seed, X, y, train_nbest, X_test, test_nbest)
            figures[f"{name}_uas"].append(attachment_score(y_test, pred, X=X_test))
            correct[name] += [np.count_nonzero((p == g) & m) for p, g, m in zip(pred, y_test, scored)]
            print(name, seed, figures[f"{name}_uas"][-1], flush=True)
        figures[f"{name}_seconds"] = (time.process_time() - tic) / len(seeds)
    figures["gain_ci"] = gain_interval(correct, scored, len(seeds), n_bootstrap)
    figures["n_bootstrap"] = n_bootstrap
    return figures


def chosen_estimator(selection, n_seeds):
    """The estimator that reranks the held-out training lists best on average, unless its
    lead over the scorer's default is within one paired standard error over the seeds:
    a tie, which goes to the default (``selection``: estimator -> its UAS per seed)."""
    from sklearn_structured.spectral import SpectralTreeScorer

    default = SpectralTreeScorer().method
    means = {e: np.mean(v["uas"]) for e, v in selection.items() if e != "none"}
    chosen = max(means, key=means.get, default=default)
    if default in means and chosen != default and n_seeds > 1:
        lead = np.subtract(selection[chosen]["uas"], selection[default]["uas"])
        if lead.mean() <= lead.std(ddof=1) / np.sqrt(len(lead)):
            chosen = default
    return chosen


def gain_interval(correct, scored, n_seeds, n_bootstrap):
    """95% interval of the seed-averaged UAS gain, by a paired bootstrap over test sentences
    (``correct``: words right per sentence, summed over seeds; ``scored``: words counted)."""
    gain = (correct["spectral"] - correct["baseline"]) / n_seeds
    n_scored = np.array([m.sum() for m in scored])
    samples = np.random.default_rng(0).integers(len(gain), size=(n_bootstrap, len(gain)))
    boot = gain[samples].sum(axis=1) / n_scored[samples].sum(axis=1)
    return [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))]


def diagnose(parser_epochs, parser_gamma, n_best, scorer_params, lists_path):
    """Each estimator on its own as a reranker: the UAS of the candidate with the
    highest log p on the EWT test lists, against a uniform pick."""
    import pickle

    from sklearn_structured.metrics import attachment_score
    from sklearn_structured.spectral import SpectralTreeScorer

    X, y = load_treebank("en_ewt", "train")
    X_test, y_test = load_treebank("en_ewt", "test")
    stored = pickle.loads(lists_path.read_bytes())
    if stored["settings"] != (len(X), parser_epochs, parser_gamma, n_best):
        raise SystemExit(f"{lists_path} holds lists of other settings: run the rerank part first")
    test_nbest = stored["test_nbest"]
    scored = [np.array([t.get("upos") != "PUNCT" for t in s]) for s in X_test]
    n_scored = sum(np.count_nonzero(m) for m in scored)
    uniform_correct = sum(np.mean([np.count_nonzero((h == gold) & m) for h, _ in lst])
                          for gold, m, lst in zip(y_test, scored, test_nbest))
    rows = []
    for estimator in ("spectral", "em", "spectral+em"):
        scorer = SpectralTreeScorer(**scorer_params, method=estimator, random_state=0).fit(X, y)
        picked, above_gold, floored, n_candidates = [], 0, 0, 0
        for sentence, gold, lst in zip(X_test, y_test, test_nbest):
            heads = [h for h, _ in lst]
            log_p, flags = scorer.score_samples([sentence] * len(heads), heads, return_flags=True)
            picked.append(heads[int(np.argmax(log_p))])
            above_gold += np.count_nonzero(log_p > scorer.score_samples([sentence], [gold])[0])
            floored += np.count_nonzero(flags)
            n_candidates += len(heads)
        rows.append(dict(estimator=estimator,
                         argmax_log_p_uas=attachment_score(y_test, picked, X=X_test),
                         above_gold=above_gold / n_candidates, floored=floored / n_candidates))
        print(rows[-1], flush=True)
    return dict(parser_gamma=parser_gamma, n_best=n_best, scorer=scorer_params, n_train=len(X),
                first_uas=attachment_score(y_test, [lst[0][0] for lst in test_nbest], X=X_test),
                uniform_uas=uniform_correct / n_scored, rows=rows)


class _ListsOnly:
    """Stands in for the fitted base parser: the rerankers get every list given."""

    def fit(self, X, y):
        """Nothing to learn: with ``cv="prefit"`` the reranker does not fit its parser."""
        return self

    def predict_nbest(self, X, k):
        raise RuntimeError("the benchmark passes the n-best lists explicitly")


def _clock(figures):
    """What a part's seconds measure: CPU time of the process (one thread), or wall
    clock in runs made before the benchmark switched (a nice-19 process on a shared
    machine can get a few percent of a core, which wall clock counts as its own)."""
    return "CPU seconds of the process" if figures.get("clock") == "cpu" else "wall-clock seconds"


def agreement_cells(row):
    """Bar 2 cells: sign agreement (mean ± sd, per seed) and correlation (mean ± sd);
    runs made before bar 2 went over seeds hold one figure."""
    share, corr = 100 * np.atleast_1d(row["agreement"]), np.atleast_1d(row["correlation"])
    return [f"{share.mean():.1f}% ± {share.std():.1f}", ", ".join(f"{a:.1f}%" for a in share),
            f"{corr.mean():.3f} ± {corr.std():.3f}"]


def synthetic_parts(c):
    """Bars 2 and 3, and the start with the true span: the synthetic model's tables."""
    parts = []
    est = c["estimators"]
    parts.append(
        "### Bar 2: within-sentence discrimination on a known model laid on EWT's trees\n\n"
        f"Words drawn from a random hidden-state model (k = {c['n_states']}, "
        f"{c['vocabulary_size']:,} words) on the {c['n_train']:,} EWT training trees "
        f"({c['n_train_tokens']:,} tokens); each estimator (`n_components` = k, defaults "
        f"otherwise, random_state = each of the seeds {c['seeds']}) is fitted on them and "
        f"compared with the true model on "
        f"{c['n_pairs']:,} pairs (gold EWT dev tree, the same tree with one word "
        "reattached): the share of pairs where the estimated log-probability difference "
        "has the true one's sign (floored spectral estimates as `score_samples` floors "
        "them; ties count as wrong), and the Pearson correlation of the differences. "
        "Bar: >= 80% for the default estimator.\n\n"
        + markdown_table(["estimator", "same sign as the true model (mean ± sd)", "per seed",
                          "correlation of differences (mean ± sd)"],
                         [[name if name == "spectral" else f"{name}, one EM run", *agreement_cells(r)]
                          for name, r in est.items()]
                         + ([[f"default: {c['default']['estimator']}, n_init={c['default']['n_init']}, "
                              f"combine_runs={c['default']['combine_runs']!r}",
                              *agreement_cells(c["default"])]] if "default" in c else []))
        + "\n\nNon-positive spectral estimates on the dev gold trees by sentence length "
        f"(all lengths: {100 * est['spectral']['nonpositive_dev']:.1f}%):\n\n"
        + markdown_table(["length", "trees", "non-positive"],
                         [[f"{lo}-{hi}" if hi < 10**6 else f">= {lo}", n, f"{100 * share:.1f}%"]
                          for lo, hi, n, share in est["spectral"]["nonpositive_by_length"]]))
    target_rows = []
    for seed in c["seeds"]:
        em = next(r for r in c["runs"] if r["estimator"] == "em" and r["seed"] == seed)
        both = next(r for r in c["runs"] if r["estimator"] == "spectral+em" and r["seed"] == seed)
        target = em["validation_curve"][-1]
        reached = next((i + 1 for i, v in enumerate(both["validation_curve"]) if v >= target), None)
        # time to the target: the fit's time per iteration, the spectral step included once
        spectral = next(r for r in c["runs"] if r["estimator"] == "spectral" and r["seed"] == seed)
        per_iter = (both["fit_seconds"] - spectral["fit_seconds"]) / both["n_iter"]
        both_time = None if reached is None else spectral["fit_seconds"] + reached * per_iter
        target_rows.append([seed, f"{target:.4f}", em["n_iter"], f"{em['fit_seconds']:.0f}",
                            "not reached" if reached is None else reached,
                            "-" if both_time is None else f"{both_time:.0f}",
                            f"{both['validation_curve'][-1]:.4f}", both["n_iter"],
                            f"{both['fit_seconds']:.0f}"])
    parts.append(
        "### Bar 3: spectral start against a random start for EM (same synthetic data)\n\n"
        f"Held-out (dev) log-likelihood per token; the true model's: "
        f"{c['true_dev_log_likelihood']:.4f}. \"em\" runs to convergence "
        f"(`tol=1e-4`, at most {c['max_iter']} iterations); the target is its final held-out "
        "value, and \"spectral+em\" is timed to the first iteration that reaches it (its "
        "time = the spectral step + that many iterations at its mean time per iteration). "
        "Seeds are the scorers' `random_state` (EM start, randomized SVD).\n\n"
        + f"Times in {_clock(c)}.\n\n"
        + markdown_table(["seed", "em final (target)", "em iterations", "em s",
                          "spectral+em iterations to target", "spectral+em s to target",
                          "spectral+em final", "spectral+em iterations", "spectral+em s"],
                         target_rows))
    return parts


def span_parts(c):
    """How much of the emissions' span the embedding captures."""
    parts = []
    parts.append(
        "### Span of the emissions captured by the embedding\n\n"
        f"Same synthetic model (k = {c['n_states']}, {c['vocabulary_size']:,} words) on the "
        "first N EWT training trees; share of the norm of O (rows of the words kept, "
        "`min_count=2`) outside span(U), which is 0 in the population:\n\n"
        + markdown_table(["trees", "embedding", "norm of O outside span(U)"],
                         [[f"{r['n']:,}", r["embedding"], f"{100 * r['missed']:.0f}%"]
                          for r in c["rows"]]))
    return parts


def ewt_fit_parts(e):
    """Bar 4: fitting on all EWT training trees."""
    parts = []
    rows = []
    for r in e["runs"]:
        rows.append([r["estimator"], r["seed"], f"{r['fit_seconds']:.1f}",
                     r.get("n_iter", "-"), str(r.get("rank", "-")),
                     f"{100 * r['nonpositive_train']:.1f}%" if "nonpositive_train" in r else "-",
                     f"{r['dev_log_likelihood']:.4f}", f"{100 * r['nonpositive_dev']:.1f}%"])
    parts.append(
        f"### Bar 4: fitting on all {e['n_train']:,} EWT training trees (form field, k = "
        f"{e['n_components']})\n\n"
        + f"Times in {_clock(e)}.\n\n"
        + markdown_table(["estimator", "seed", "fit s", "EM iterations", "rank kept (L, R)",
                          "non-positive (train)", "dev log-lik per token",
                          "non-positive or floored (dev)"], rows))
    return parts


def speed_parts(s):
    """The speed of scoring."""
    return [
        f"### Speed of scoring ({_clock(s)}, {s['timing']})\n\n"
        f"`score_samples` end to end (encoding included) on the {s['n_test_trees']:,} EWT test "
        f"trees, k = {s['n_components']} states: {s['score_samples_trees_per_second']:,.0f} trees/s "
        "with the spectral operators, against "
        f"{s['exact_score_samples_trees_per_second']:,.0f} trees/s with the exact inside "
        "algorithm (a scorer fitted by EM), same run"]


def diagnose_parts(d):
    """Each estimator alone as a reranker."""
    parts = []
    parts.append(
        "### Each estimator alone as a reranker\n\n"
        f"Fitted on all {d['n_train']:,} training trees ({d['scorer']}), applied to the "
        f"{d['n_best']}-best test lists of the gamma={d['parser_gamma']:g} parser. Test UAS (no "
        f"punctuation) of the parser's best candidate: {100 * d['first_uas']:.2f}; of a "
        f"candidate drawn uniformly from each list (expected): {100 * d['uniform_uas']:.2f}.\n\n"
        + markdown_table(
            ["estimator", "UAS of the candidate with the highest log p",
             "candidates scored above the gold tree", "floored candidates"],
            [[r["estimator"], f"{100 * r['argmax_log_p_uas']:.2f}", f"{100 * r['above_gold']:.1f}%",
              f"{100 * r['floored']:.1f}%"] for r in d["rows"]]))
    return parts


def rerank_parts(cache):
    """The rerank runs: those on the strongest lists in full, the earlier ones in a sentence."""
    from sklearn_structured.spectral import SpectralTreeScorer

    parts = []
    reranks = {k: cache[k] for k in sorted(cache) if k.startswith("rerank")}
    strongest = max((r["parser_epochs"] for r in reranks.values()), default=None)
    # runs on the strongest lists in full, the scorer's default k first
    default_k = SpectralTreeScorer().n_components
    for r in sorted(reranks.values(), key=lambda r: r["scorer"]["n_components"] != default_k):
        if r["parser_epochs"] == strongest:
            parts.append(rerank_tables(r))
    weaker = [r for r in reranks.values() if r["parser_epochs"] != strongest]
    if weaker:
        parts.append("Earlier runs on n-best lists from a weaker base parser: " + " ".join(
            f"LowRankTensorParser(n_epochs={r['parser_epochs']}, gamma={r['parser_gamma']:g}) "
            f"lists (test UAS {100 * r['base_uas']:.2f}), SpectralTreeScorer(method={r['chosen']!r}, "
            f"n_components={r['scorer']['n_components']}"
            + (", strip_punctuation=True" if r["scorer"].get("strip_punctuation") else "")
            + f"): gain {100 * (np.mean(r['spectral_uas']) - np.mean(r['baseline_uas'])):+.2f} on the "
            f"mean of {len(r['seeds'])} seeds, 95% CI [{100 * r['gain_ci'][0]:+.2f}, "
            f"{100 * r['gain_ci'][1]:+.2f}]." for r in weaker))
    return parts


def render(cache):
    parts = []
    for name, part in (("synthetic", synthetic_parts), ("span", span_parts), ("ewt_fit", ewt_fit_parts),
                       ("speed", speed_parts)):
        if name in cache:
            parts += part(cache[name])
    parts += rerank_parts(cache)
    if "diagnose" in cache:
        parts += diagnose_parts(cache["diagnose"])
    if "synthetic" in cache and "ewt_fit" in cache:
        parts.append(diagnosis(cache))
    return "\n\n".join(parts)


def rerank_tables(r):
    """The bar 1 tables of one rerank part: the choice of the estimator and the test."""
    gamma = r["parser_gamma"]
    base_name = f"LowRankTensorParser, gamma={gamma:g}" + (" (NT-1st)" if gamma == 1 else "")

    def mean_sd(values):
        return f"{100 * np.mean(values):.2f} ± {100 * np.std(values):.2f}"

    gains = 100 * (np.array(r["spectral_uas"]) - np.array(r["baseline_uas"]))
    rows = [[f"{base_name} (no reranking)", f"{100 * r['base_uas']:.2f}"],
            ["reranker, baseline POS features", mean_sd(r["baseline_uas"])],
            [f"reranker, baseline + SpectralTreeScorer(method={r['chosen']!r}) log p",
             mean_sd(r["spectral_uas"])],
            [f"oracle of the {r['n_best']}-best lists", f"{100 * r['oracle_uas']:.2f}"]]
    # runs before the choice went over several seeds stored one figure per estimator
    seeds = r.get("selection_seeds", [0])
    selection = markdown_table(
        ["scorer estimator", "UAS on the held-out third (mean ± sd)", "per seed", "s per seed (mean)"],
        [[name, mean_sd(np.atleast_1d(v["uas"])),
          ", ".join(f"{100 * u:.2f}" for u in np.atleast_1d(v["uas"])),
          f"{np.mean(v['seconds']):.0f}"] for name, v in r["selection"].items()])
    return (
        f"### Bar 1: reranking on UD English EWT, base parser {base_name}, "
        f"k={r['scorer']['n_components']}, {r['scorer']['token_field']} field"
        + (", punctuation stripped" if r["scorer"].get("strip_punctuation") else "")
        + (f", n_init={r['scorer']['n_init']}" if "n_init" in r["scorer"] else "")
        + " (test, UAS without punctuation)\n\n"
        + f"Times in {_clock(r)}.\n\n"
        + (f"Choosing the estimator (seeds {seeds}: each seed draws its own split of the "
           "cross-fitted training lists into 2/3 to train the reranker and 1/3 to score it, the "
           "scorers' random_state and the perceptron's order; the estimator with the best mean is "
           "tested, unless it leads the scorer's default by no more than one paired standard "
           "error over the seeds; `none` = no scorer):\n\n" + selection + "\n\n" if r["selection"] else "")
        + "Test:\n\n"
        + markdown_table(["system", f"UAS (rerankers: mean ± sd over seeds {r['seeds']})"], rows)
        + "\n\nGain of the scorer, per seed: "
        + ", ".join(f"{g:+.2f}" for g in gains)
        + f" (mean {gains.mean():+.2f}; paired bootstrap 95% CI over test sentences of the "
        f"seed-averaged gain, {r['n_bootstrap']} resamples: [{100 * r['gain_ci'][0]:+.2f}, "
        f"{100 * r['gain_ci'][1]:+.2f}]). Bar: >= +0.2 with the CI above zero."
        + (f" Training and applying one reranker (mean over seeds): {r['baseline_seconds']:.0f} s "
           f"without the scorer, {r['spectral_seconds']:.0f} s with it (3 cross-fitted scorers "
           "and the final one)." if "baseline_seconds" in r else "")
        + f"\n\nSettings: {r['n_train']:,} training sentences; base parser "
        f"LowRankTensorParser(n_epochs={r['parser_epochs']}, gamma={gamma:g}, decoder='eisner'), "
        f"projective {r['n_best']}-best; training lists "
        "cross-fitted with 3 folds and shared by every reranker; averaged perceptron "
        f"{r['perceptron_epochs']} epochs; scorer SpectralTreeScorer({r['scorer']}) "
        f"cross-fitted on the reranker's folds, its random_state "
        f"{r.get('scorer_seeds', '0 in every seed')}. Parsing (3 cross-fitted parsers, the final one, "
        f"all n-best lists) took {r['parse_seconds']:.0f} s"
        + (" in an earlier run with the same settings, whose lists this run reused"
           if r.get("lists_reused") else "")
        + ". The paper (PTB, MSTParser 1st order): 90.8 -> 91.3 -> 91.7.")


def diagnosis(cache):
    """The reading of the figures above, with the figures it rests on."""
    c, e = cache["synthetic"], cache["ewt_fit"]
    est = c["estimators"]
    first = {r["estimator"]: r for r in e["runs"] if r["seed"] == e["runs"][0]["seed"]}
    by_length = est["spectral"]["nonpositive_by_length"]
    curves = [r for r in c["runs"] if r["estimator"] != "spectral"]
    final = {name: np.mean([r["validation_curve"][-1] for r in curves if r["estimator"] == name])
             for name in ("em", "spectral+em")}
    reached = sum(
        max(r["validation_curve"]) >= next(q["validation_curve"][-1] for q in curves
                                           if q["estimator"] == "em" and q["seed"] == r["seed"])
        for r in curves if r["estimator"] == "spectral+em")
    text = (
        "### Why the spectral estimate does not help alone, and what it is good for\n\n"
        f"- Even when the data come from the model, the method-of-moments estimate at EWT size "
        f"does not tell a tree from its one-word reattachments: on the synthetic corpus above it "
        f"has the true model's sign on {100 * np.mean(est['spectral']['agreement']):.0f}% of the pairs "
        f"(correlation {np.mean(est['spectral']['correlation']):.2f}), while EM from a random start "
        f"gets {100 * np.mean(est['em']['agreement']):.0f}% (correlation "
        f"{np.mean(est['em']['correlation']):.2f}; means over the seeds). The "
        f"whitened pair matrices keep every direction (rank {first['spectral']['rank']}), so it is "
        "not the old rank-1 artefact; the estimate is noisy, and a tree's estimate is a product of "
        f"one operator per word: non-positive estimates rise from {100 * by_length[0][3]:.0f}% of "
        f"the dev trees of {by_length[0][0]}-{by_length[0][1]} words to "
        f"{100 * by_length[3][3]:.0f}% at {by_length[3][0]}-{by_length[3][1]} words."
        + ("" if "span" not in cache else
           " Most of the noise is the embedding: on all the training trees it leaves "
           + ", ".join(f"{100 * r['missed']:.0f}% ({r['embedding']})" for r in cache["span"]["rows"]
                       if r["n"] == max(q["n"] for q in cache["span"]["rows"]))
           + " of the norm of O outside span(U)")
        + ".\n"
        f"- On real EWT trees the share of non-positive estimates is "
        f"{100 * first['spectral']['nonpositive_train']:.0f}% of the training trees and "
        f"{100 * first['spectral']['nonpositive_dev']:.0f}% of the dev trees; fitted by EM, the "
        f"same model gives a held-out log-likelihood of {first['em']['dev_log_likelihood']:.2f} "
        "nats per token, and every probability is positive.\n"
        f"- As a start for EM (its emissions read off the operators, flat pi and T), the spectral "
        f"estimate leads EM to a held-out log-likelihood of {final['spectral+em']:.3f} on average "
        f"over the seeds, against {final['em']:.3f} from random starts (true model: "
        f"{c['true_dev_log_likelihood']:.3f}); it reaches the random start's final value in "
        f"{reached} of {len(c['seeds'])} seeds."
    )
    return text + "".join(rerank_reading(cache[key]) for key in sorted(cache)
                          if key.startswith("rerank_gamma0.3"))


def rerank_reading(r):
    gains = 100 * (np.array(r["spectral_uas"]) - np.array(r["baseline_uas"]))
    sel = {name: np.mean(v["uas"]) for name, v in r["selection"].items()}
    scorer = ", ".join(f"{k}={v!r}" for k, v in r["scorer"].items())
    return (
        "\n- "
        + ("" if not {"none", "spectral", "em", "spectral+em"} <= set(sel) else
           "In the reranker, on held-out training lists (mean over seeds), the spectral log p adds "
           f"{100 * (sel['spectral'] - sel['none']):+.2f} UAS, the EM-fitted model "
           f"{100 * (sel['em'] - sel['none']):+.2f} (random start) and "
           f"{100 * (sel['spectral+em'] - sel['none']):+.2f} (spectral start). ")
        + f"On the test lists, SpectralTreeScorer(method={r['chosen']!r}, {scorer}) with its "
        f"random_state {r.get('scorer_seeds', '0 in every seed')} adds {gains.mean():+.2f} on the "
        f"mean of {len(gains)} seeds (per seed " + ", ".join(f"{g:+.2f}" for g in gains)
        + f"; 95% CI [{100 * r['gain_ci'][0]:+.2f}, {100 * r['gain_ci'][1]:+.2f}]).")


def private_directory(path):
    """Create ``path`` (mode 0700) or check an existing one: the cache is unpickled, so a
    folder others can write to (such as a fixed name under /tmp) would let them run code."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    status = path.stat()
    if status.st_uid != os.getuid() or status.st_mode & 0o022:
        sys.exit(f"{path} must belong to you and not be writable by others: it holds pickles")
    return path


def arguments(argv):
    """The command line of this measure."""
    from sklearn_structured.spectral import SpectralTreeScorer

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", nargs="*", default=["synthetic", "span", "ewt_fit", "speed", "rerank"],
                        choices=["synthetic", "span", "ewt_fit", "speed", "rerank", "diagnose"])
    parser.add_argument(
        "--cache-dir", default=str(Path.home() / ".cache" / "sklearn-structured-bench" / "spectral"),
        help="private folder for the cached figures and n-best lists (it holds pickles, which "
        "are loaded back: it must belong to you and be writable by nobody else)")
    parser.add_argument("--synthetic-states", type=int, default=10)
    parser.add_argument("--synthetic-vocabulary", type=int, default=5000)
    parser.add_argument("--em-seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--max-iter", type=int, default=100)
    parser.add_argument("--parser-epochs", type=int, default=10,
                        help="epochs of the base parser (10, its default, is its full strength)")
    parser.add_argument("--parser-gamma", type=float, default=0.3,
                        help="gamma of the base parser (1 = NT-1st, the MSTParser-like parser of the paper)")
    parser.add_argument("--n-best", type=int, default=50)
    parser.add_argument("--rerank-seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--perceptron-epochs", type=int, default=10)
    parser.add_argument("--train-limit", type=int, default=0)
    parser.add_argument("--spectral-components", type=int, default=SpectralTreeScorer().n_components)
    parser.add_argument("--spectral-n-init", type=int, default=SpectralTreeScorer().n_init)
    parser.add_argument("--selection-estimators", nargs="*",
                        default=["none", "spectral", "em", "spectral+em"])
    parser.add_argument("--selection-seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--spectral-token-field", default="form")
    parser.add_argument("--spectral-strip-punctuation", action="store_true",
                        help="the scorer models the trees without punctuation (as the paper)")
    parser.add_argument("--results-section", default="spectral",
                        help="section of RESULTS.md written from the cached parts (another name "
                        "keeps the figures of an older cache in their own section)")
    parser.add_argument("--repeats", type=int, default=3)
    return parser.parse_args(argv)


def main(argv=None):
    args = arguments(argv)
    data_home()
    cache_dir = private_directory(Path(args.cache_dir))
    scorer_params = dict(n_components=args.spectral_components, token_field=args.spectral_token_field,
                         n_init=args.spectral_n_init,
                         strip_punctuation=args.spectral_strip_punctuation)
    for part in args.parts:
        if part == "synthetic":
            figures = synthetic(args.synthetic_states, args.synthetic_vocabulary, args.em_seeds,
                                args.max_iter)
        elif part == "speed":
            figures = speed(10, args.repeats)
        elif part == "span":
            figures = span(args.synthetic_states, args.synthetic_vocabulary, [3000, 12544])
        elif part == "ewt_fit":
            figures = ewt_fit(args.spectral_components, [0])
        elif part == "diagnose":
            figures = diagnose(args.parser_epochs, args.parser_gamma, args.n_best, scorer_params,
                               cache_dir / f"rerank_lists_gamma{args.parser_gamma:g}.pkl")
        else:
            figures = rerank(args.parser_epochs, args.parser_gamma, args.n_best, scorer_params,
                             args.perceptron_epochs, args.rerank_seeds, args.train_limit,
                             cache_dir / f"rerank_lists_gamma{args.parser_gamma:g}.pkl",
                             args.selection_estimators, args.selection_seeds)
            part = f"rerank_gamma{args.parser_gamma:g}_epochs{args.parser_epochs}_k{args.spectral_components}" + (
                "" if args.spectral_token_field == "form" else f"_{args.spectral_token_field}") + (
                "" if args.spectral_n_init == 1 else f"_ninit{args.spectral_n_init}") + (
                "_strip" if args.spectral_strip_punctuation else "")
        figures["load_average"] = os.getloadavg()[0]
        figures["command"] = SETTINGS.command
        figures["commit"] = code_description()
        (cache_dir / f"{part}.json").write_text(json.dumps(figures, indent=1))
    cache = {p.stem: json.loads(p.read_text()) for p in cache_dir.glob("*.json")}
    body = render(cache)
    loads = ", ".join(f"{name} {fig['load_average']:.1f}" for name, fig in sorted(cache.items()))
    body += f"\n\nLoad average (1 min) at the end of each part: {loads} (shared machine)."
    body += ("\n\nCommands of the parts and the code they measured (the header names the last "
             "run):\n\n") + "\n".join(
        f"- {name}: `{fig.get('command', 'python -m benchmarks spectral --parts ' + name)}` "
        f"(code {fig.get('commit', 'not recorded')})"
        for name, fig in sorted(cache.items()))
    title = "SpectralTreeScorer and NBestReranker (Dhillon et al. 2012)"
    if args.results_section != "spectral":
        title += f": {args.results_section}"
    write_section(args.results_section, title, body)

