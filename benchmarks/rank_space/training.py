"""Rank-space PCFG and HMM on the Penn Treebank.

``--part pcfg``: train RankSpacePCFG on the PTB language-model training text
(sentences of the evaluation sample removed), select on validation
likelihood, and report sentence-level F1 of MBR trees on the WSJ sample's gold
trees against right-branching, left-branching and random trees.

``--part pcfg-sizes``: F1 and perplexity against the number of symbols (the
shape of the paper's Figure 6), each size on the same budget.

``--part hmm``: RankSpaceHMM test perplexity against the number of states at
fixed rank, and hmmlearn's CategoricalHMM (full state space, EM) as an outside
reference when it is installed.

``--converge`` with ``--part hmm`` or ``--part pcfg-sizes``: train each size
to its best validation likelihood within ``--budget`` minutes (early stopping
after ``--patience`` epochs without a better one, the learning rate halved
after ``--lr-patience``), one epoch at a time, saving a checkpoint after every
epoch (the estimator with its parameters, Adam state, learning rate and
history, plus the minutes spent) under ``--state-dir``, outside the
repository. The budget counts CPU minutes of the one training thread, so
that other work on a shared machine does not eat into it (sizes trained
before checkpoints kept CPU minutes counted wall minutes, which can only be more). Run the same
command again to resume: finished sizes are
skipped, an interrupted one continues from its last finished epoch (a
killed process loses at most the epoch it was in, and its minutes are not
counted). Each finished size is evaluated (the epoch with the best
validation likelihood) and its row (size and rank) is put into the
``<part>_converge`` section of RESULTS.md, beside the rows of other runs.

Every run writes its section of RESULTS.md as soon as a model is done, so a
run cut short still leaves its finished figures. Needs SKLEARN_STRUCTURED_DATA.
"""

import argparse
import json
import os
import pickle
import re
import time
from pathlib import Path

import numpy as np


from sklearn_structured.datasets import load_ptb_lm, load_ptb_wsj_sample
from sklearn_structured.metrics import bracket_f1
from sklearn_structured.rank_space import (
    RankSpaceHMM,
    RankSpacePCFG,
    left_branching_spans,
    random_binary_spans,
    right_branching_spans,
)

from benchmarks.base import SETTINGS, data_home, markdown_table, write_rows, write_section

NUMBER = re.compile(r"[0-9]{1,}([,.]?[0-9]*)*")


def evaluation_sample(train_vocabulary):
    """WSJ sample as in the reference protocol: no punctuation or empty elements,
    lowercased, numbers to N, words outside the training vocabulary to <unk>,
    sentences of one word dropped."""
    sentences, spans = load_ptb_wsj_sample(remove_punctuation=True, lowercase=True)
    out_x, out_spans = [], []
    for words, gold in zip(sentences, spans):
        if len(words) < 2:
            continue
        words = [NUMBER.sub("N", w) for w in words]
        out_x.append([w if w in train_vocabulary else "<unk>" for w in words])
        out_spans.append(gold)
    return out_x, out_spans


def pcfg_data(max_train=None):
    train = load_ptb_lm("train")
    vocabulary = {w for s in train for w in s}
    eval_x, eval_spans = evaluation_sample(vocabulary)
    held_out = {tuple(s) for s in eval_x}
    kept = [s for s in train if tuple(s) not in held_out]
    removed = len(train) - len(kept)
    if max_train is not None:
        kept = kept[:max_train]
    valid = [s for s in load_ptb_lm("valid") if 2 <= len(s) <= 40][:1000]
    return kept, removed, valid, eval_x, eval_spans


def baselines(eval_x, eval_spans):
    rng = np.random.default_rng(0)
    rows = []
    for name, make in (
        ("right-branching", right_branching_spans),
        ("left-branching", left_branching_spans),
        ("random trees (seed 0)", lambda n: random_binary_spans(n, rng)),
    ):
        pred = [make(len(s)) for s in eval_x]
        rows.append((name, 100 * bracket_f1(eval_spans, pred), 100 * bracket_f1(eval_spans, pred, average="corpus")))
    return rows


def evaluate_pcfg(model, eval_x, eval_spans, valid):
    pred = model.predict(eval_x)
    s_f1 = 100 * bracket_f1(eval_spans, pred)
    c_f1 = 100 * bracket_f1(eval_spans, pred, average="corpus")
    log_p = model.score_samples(valid)
    # perplexity over words plus one per sentence, the convention of the reference
    ppl = float(np.exp(-log_p.sum() / sum(len(s) + 1 for s in valid)))
    return s_f1, c_f1, ppl


def train_with_budget(model, train, valid, minutes, max_epochs, after_epoch):
    """One epoch per ``fit`` call (warm start) until the epochs or the minutes run out.

    ``after_epoch(model, seconds)`` runs after every epoch (evaluation, writing results).
    """
    model.set_params(warm_start=True, n_epochs=1)
    seconds = 0.0
    for _ in range(max_epochs):
        t = time.perf_counter()
        model.fit(train, X_val=valid)
        seconds += time.perf_counter() - t
        after_epoch(model, seconds)
        per_epoch = seconds / model.n_iter_
        if seconds + per_epoch > 60 * minutes:
            break
    return seconds


def shared_settings(args):
    """The settings every model of a run shares, the seed fixed."""
    return dict(rank=args.rank, embedding_dim=args.dim, random_state=0, verbose=1)


def run_pcfg(args):
    start_load = os.getloadavg()[0]
    train, removed, valid, eval_x, eval_spans = pcfg_data(args.max_train)
    base = baselines(eval_x, eval_spans)
    right = base[0][1]
    model = RankSpacePCFG(n_nonterminals=args.nt, n_preterminals=args.pt, batch_size=args.batch_size,
                          **shared_settings(args))
    curve = []

    def after_epoch(model, seconds):
        s_f1, c_f1, ppl = evaluate_pcfg(model, eval_x, eval_spans, valid)
        h = model.history_[-1]
        curve.append((h["epoch"], seconds / 60, -h["loss"], ppl, s_f1, c_f1))
        print(f"epoch {h['epoch']}: S-F1 {s_f1:.1f} corpus F1 {c_f1:.1f} validation PPL {ppl:.1f}", flush=True)
        # model selection on validation likelihood, as the reference does
        best = min(curve, key=lambda row: row[3])
        rows = [(name, f"{s:.1f}", f"{c:.1f}", "-", "-") for name, s, c in base]
        rows.append(
            (
                f"RankSpacePCFG NT {args.nt} / PT {args.pt}, r {args.rank}, neural (d {args.dim}), "
                f"epoch {best[0]} (best validation likelihood)",
                f"{best[4]:.1f}",
                f"{best[5]:.1f}",
                f"{best[3]:.1f}",
                f"{best[1]:.0f} min",
            )
        )
        body = (
            f"Training: PTB LM train ({len(train)} sentences kept, {removed} removed because they occur in the "
            f"evaluation sample; sentences of 2-40 words used), batches of {args.batch_size} equal-length "
            "sentences, Adam 2e-3 (0.75, 0.999), clip 3, model selected on the likelihood of "
            f"{len(valid)} PTB LM validation sentences (2-40 words). Evaluation: {len(eval_x)} WSJ-sample "
            "sentences (punctuation and empty elements removed, lowercased, numbers to N, out-of-vocabulary "
            "words to <unk>, length-1 dropped), MBR trees; S-F1 = sentence-level F1 without single-word and "
            f"whole-sentence spans. Load average at start {start_load:.1f} (machine shared by 8 engineers).\n\n"
            + markdown_table(["model", "S-F1", "corpus F1", "validation PPL", "training"], rows)
            + f"\n\nBar: right-branching + 5 = {right + 5:.1f}; gap {best[4] - right - 5:+.1f} points. "
            f"{seconds / 60:.0f} minutes of training in total, {len(curve)} epoch(s), on one core of a shared "
            f"machine (budget {args.minutes} min; two hours at most), with NT {args.nt} / "
            f"PT {args.pt} instead of the paper's NT 9000 / PT 4500 (S-F1 64.1 on the full PTB test set).\n\n"
            "Per epoch:\n\n"
            + markdown_table(
                ["epoch", "minutes", "train log-lik / word", "validation PPL", "S-F1", "corpus F1"],
                [(e, f"{m:.1f}", f"{t:.3f}", f"{p:.1f}", f"{s:.1f}", f"{c:.1f}") for e, m, t, p, s, c in curve],
            )
        )
        write_section("rank_space_pcfg", "RankSpacePCFG: unsupervised parsing (PTB LM text -> WSJ sample)", body)

    train_with_budget(model, train, valid, args.minutes, args.epochs, after_epoch)


def run_pcfg_sizes(args):
    train, removed, valid, eval_x, eval_spans = pcfg_data(args.max_train)
    rows = []
    for nt in args.sizes:
        model = RankSpacePCFG(n_nonterminals=nt, n_preterminals=2 * nt, batch_size=args.batch_size,
                              n_epochs=args.epochs, **shared_settings(args))
        t = time.perf_counter()
        model.fit(train)
        minutes = (time.perf_counter() - t) / 60
        s_f1, c_f1, ppl = evaluate_pcfg(model, eval_x, eval_spans, valid)
        rows.append((nt, 2 * nt, args.rank, f"{s_f1:.1f}", f"{c_f1:.1f}", f"{ppl:.1f}", f"{minutes:.1f}"))
        body = (
            f"Each size: {len(train)} PTB LM training sentences, {args.epochs} epoch(s), batch {args.batch_size}, "
            f"neural parameterisation (d {args.dim}), random_state 0; S-F1 on the WSJ sample as in the "
            "section above; perplexity on PTB LM validation sentences of 2-40 words (words + 1 per sentence)"
            + (", with the vocabulary of the training subset (other words are <unk>), so perplexities compare "
               "only within this table. " if args.max_train else ". ")
            + f"Every size gets the same {args.epochs} epoch(s), far from convergence (the section above "
            "trains NT 30 / PT 60 for longer), so the curve shows early training.\n\n"
            + markdown_table(["NT", "PT", "rank", "S-F1", "corpus F1", "validation PPL", "minutes"], rows)
        )
        write_section("rank_space_pcfg_sizes", "RankSpacePCFG: F1 and perplexity against the number of symbols", body)


def run_hmm(args):
    start_load = os.getloadavg()[0]
    train = load_ptb_lm("train")
    n_train_all = len(train)
    train = train[: args.max_train]
    valid = load_ptb_lm("valid")[:1000]
    test = load_ptb_lm("test")
    n_test_tokens = sum(len(s) + 1 for s in test)
    rows = []

    if len(train) < n_train_all:
        data = (f"the first {len(train)} of the {n_train_all} training sentences; the vocabulary is theirs "
                "(test words outside it are <unk>, for every model in the table alike), so these perplexities "
                "are not comparable with full-vocabulary figures from the literature")
    else:
        data = (f"all {n_train_all} training sentences, so the vocabulary is the corpus's own (9,999 words and <eos>) "
                "as in the literature")
    data += (f"; test {len(test)} sentences / {n_test_tokens} tokens including one <eos> per sentence, "
             "every sentence an independent sequence. ")

    def write():
        body = (
            f"PTB LM (Mikolov): {data}Perplexity = "
            "exp(-sum log p / tokens incl. <eos>). RankSpaceHMM: neural parameterisation "
            f"(d {args.dim}), batches of {args.batch_size} equal-length sentences, Adam {args.hmm_lr} "
            f"(0.9, 0.999), clip 5, up to {args.epochs} epoch(s) within an equal share of a {args.minutes}-minute "
            "budget, the epoch with the best likelihood on 1000 validation sentences kept. "
            f"Load average at start {start_load:.1f} (shared machine). The paper reaches 126.4 with 2^15 states "
            "and rank 4096 on a GPU; each model here trains on one CPU core within its share of the budget "
            "(two hours at most).\n\n"
            + markdown_table(["model", "states", "rank", "test PPL", "training minutes"], rows)
        )
        write_section("rank_space_hmm", "RankSpaceHMM: language modelling on PTB", body)

    for m in args.states:
        model = RankSpaceHMM(n_states=m, batch_size=args.batch_size, learning_rate=args.hmm_lr,
                             **shared_settings(args))
        curve = []

        def after_epoch(model, seconds):
            curve.append((model.history_[-1]["validation_score"], seconds, model.get_model()))

        train_with_budget(model, train, valid, args.minutes / (len(args.states) + 1), args.epochs, after_epoch)
        best = max(curve, key=lambda row: row[0])
        factors = best[2]
        vocabulary = factors.pop("vocabulary")
        selected = RankSpaceHMM.from_model(vocabulary=vocabulary, **factors)
        rows.append(
            (
                f"RankSpaceHMM, epoch {curve.index(best) + 1} of {len(curve)} (best validation)",
                m,
                args.rank,
                f"{selected.perplexity(test):.1f}",
                f"{curve[-1][1] / 60:.1f}",
            )
        )
        write()
    rows.append(hmmlearn_row(args, train, test))
    write()


def hmmlearn_row(args, train, test):
    """hmmlearn's CategoricalHMM (full state space, EM) within a model's share of the budget."""
    try:
        from hmmlearn.hmm import CategoricalHMM
    except ImportError:
        return ("hmmlearn CategoricalHMM", "-", "-", "not installed", "-")
    vocabulary = {w: i for i, w in enumerate(sorted({w for s in train for w in s} | {"<eos>"}))}

    def encode(sentences):
        seqs = [[vocabulary.get(w, vocabulary["<unk>"]) for w in s] + [vocabulary["<eos>"]] for s in sentences]
        return np.concatenate(seqs)[:, None], [len(s) for s in seqs]

    X_train, len_train = encode(train)
    X_test, len_test = encode(test)
    # one EM iteration per call (no re-initialisation after the first), within the same share of the budget
    hmm = CategoricalHMM(n_components=args.hmmlearn_states, n_iter=1, n_features=len(vocabulary), random_state=0)
    t = time.perf_counter()
    iterations = 0
    while iterations < args.hmmlearn_iter:
        hmm.fit(X_train, len_train)
        hmm.init_params = ""
        iterations += 1
        elapsed = time.perf_counter() - t
        if elapsed * (iterations + 1) / iterations > 60 * args.minutes / (len(args.states) + 1):
            break
    minutes = (time.perf_counter() - t) / 60
    # hmmlearn has no end-of-sequence model; <eos> is an ordinary emitted token, so the counts match ours
    log_p = hmm.score(X_test, len_test)
    return (f"hmmlearn CategoricalHMM (EM, {iterations} iterations)", args.hmmlearn_states, "full",
            f"{np.exp(-log_p / len(X_test)):.1f}", f"{minutes:.1f}")


def atomic_dump(obj, path):
    """Pickle ``obj`` to ``path`` so that a kill at any moment leaves the old file or the new one."""
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as out:
        pickle.dump(obj, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def load(path):
    with open(path, "rb") as f:
        return pickle.load(f)


def link_best(checkpoint, best_path):
    """Make ``best_path`` a hard link to ``checkpoint`` (the best epoch so far), atomically."""
    link = best_path.with_suffix(".tmp")
    if link.exists():
        link.unlink()
    os.link(checkpoint, link)
    os.replace(link, best_path)


def stop_reason(state, args):
    """Why training of a size stops before another epoch, or None."""
    history = getattr(state["model"], "history_", [])
    if not history:
        return None
    if state["stop"] == "diverged":
        return state["stop"]
    scores = [h["validation_score"] for h in history]
    if len(history) - 1 - int(np.argmax(scores)) >= args.patience:
        return f"no better validation likelihood in {args.patience} epochs"
    if len(history) >= args.max_epochs:
        return f"{args.max_epochs} epochs"
    if state["minutes"] * (len(history) + 1) / len(history) > args.budget:
        return f"the next epoch would pass the {args.budget:g}-minute budget"
    return None


def converge_size(name, make_model, train, valid, args, log):
    """Train one size to its best validation likelihood within ``args.budget`` minutes,
    one epoch per ``fit`` call, checkpointed after every epoch; returns the run's state
    and the best model."""
    folder = Path(args.state_dir) / name
    folder.mkdir(parents=True, exist_ok=True)
    checkpoint, best_path = folder / "checkpoint.pkl", folder / "best.pkl"
    if checkpoint.exists():
        state = load(checkpoint)
        log(f"{name}: resumed after epoch {state['model'].n_iter_}, {state['minutes']:.1f} min so far")
        scores = [h["validation_score"] for h in state["model"].history_]
        # a kill between saving a best epoch's checkpoint and linking it left best.pkl behind
        if int(np.argmax(scores)) == len(scores) - 1 and (
                not best_path.exists() or load(best_path)["model"].n_iter_ != len(scores)):
            link_best(checkpoint, best_path)
    else:
        state = {"model": make_model(), "minutes": 0.0, "stop": None}
    model = state["model"]
    while True:
        # decided afresh in every sitting, so a rerun with a larger --budget continues
        state["stop"] = stop_reason(state, args)
        if state["stop"] is not None:
            atomic_dump(state, checkpoint)
            break
        # CPU rather than wall minutes: on a shared machine the wall clock counts other
        # people's work against the budget (training runs on one thread, n_jobs=1)
        tic = time.process_time()
        n_before = len(getattr(model, "history_", []))
        model.fit(train, X_val=valid)
        state["minutes"] += (time.process_time() - tic) / 60
        if len(model.history_) == n_before:
            # the epoch diverged and fit put back the last finite parameters (it warned)
            state["stop"] = "diverged"
            atomic_dump(state, checkpoint)
            break
        h = model.history_[-1]
        improved = h["validation_score"] >= max(x["validation_score"] for x in model.history_)
        atomic_dump(state, checkpoint)
        if improved:
            link_best(checkpoint, best_path)
        log(f"{name}: epoch {h['epoch']}, {h['seconds']:.0f} s, loss {h['loss']:.4f}, validation PPL "
            f"{np.exp(-h['validation_score']):.1f}, lr {h['learning_rate']:.2g}, "
            f"{state['minutes']:.1f} of {args.budget:g} min" + (", best so far" if improved else ""))
    log(f"{name}: stopped ({state['stop']})")
    return state, load(best_path)["model"]


def run_converge(args):
    state_dir = Path(args.state_dir)
    state_dir.mkdir(parents=True, exist_ok=True)
    log_file = open(state_dir / f"converge-{args.part}.log", "a")

    def log(line):
        line = time.strftime("%Y-%m-%d %H:%M:%S ") + line
        print(line, flush=True)
        log_file.write(line + "\n")
        log_file.flush()

    log("command: " + SETTINGS.command)
    if args.part == "hmm":
        train, valid, test = load_ptb_lm("train")[: args.max_train], load_ptb_lm("valid"), load_ptb_lm("test")
        sizes = args.states
    else:
        train, _, valid, eval_x, eval_spans = pcfg_data(args.max_train)
        # test perplexity on the PTB LM test sentences the grammar generates (2 words or more)
        test = [s for s in load_ptb_lm("test") if len(s) >= 2]
        sizes = args.sizes
    results = {}
    for size in sizes:
        common = dict(shared_settings(args), batch_tokens=args.batch_tokens, lr_decay=args.lr_decay,
                      lr_patience=args.lr_patience, n_epochs=1, warm_start=True, n_jobs=1)
        if args.part == "hmm":
            name = f"hmm-m{size}-r{args.rank}-d{args.dim}-b{args.batch_tokens}-lr{args.hmm_lr:g}"
            if args.dropout:
                name += f"-dropout{args.dropout:g}"
            make = lambda: RankSpaceHMM(n_states=size, learning_rate=args.hmm_lr,  # noqa: E731
                                        dropout=args.dropout, **common)
        else:
            name = f"pcfg-nt{size}-r{args.rank}-d{args.dim}-b{args.batch_tokens}"
            make = lambda: RankSpacePCFG(n_nonterminals=size, n_preterminals=2 * size, **common)  # noqa: E731
        state, best = converge_size(name, make, train, valid, args, log)
        if state.get("figures", {}).get("epochs") != len(state["model"].history_):
            history = best.history_
            figures = {"epochs": len(state["model"].history_), "best_epoch": len(history),
                       "minutes": state["minutes"], "stop": state["stop"],
                       "epoch_seconds": float(np.median([h["seconds"] for h in state["model"].history_])),
                       "validation_ppl": float(np.exp(-history[-1]["validation_score"]))}
            if args.part == "hmm":
                figures["test_ppl"] = float(best.perplexity(test))
            else:
                s_f1, c_f1, _ = evaluate_pcfg(best, eval_x, eval_spans, valid)
                figures.update(s_f1=s_f1, corpus_f1=c_f1,
                               test_ppl=float(np.exp(-best.score_samples(test).sum()
                                                     / sum(len(s) + 1 for s in test))))
            state["figures"] = figures
            atomic_dump(state, state_dir / name / "checkpoint.pkl")
            log(f"{name}: {json.dumps(figures)}")
        results[size] = state["figures"]
        write_converge_section(args, results, len(train), len(valid), len(test))


CONVERGE_NOTE = (
    "Neural parameterisation of dimension d, Adam, the learning rate multiplied after that many "
    "epochs without a better validation likelihood, stopped after that many such epochs or when the "
    "next epoch would pass the budget of a size (the settings column); the epoch with the best "
    "validation likelihood is evaluated. One thread (NUMBA_NUM_THREADS=1, one BLAS thread); minutes "
    "are the CPU minutes of finished epochs (wall minutes for a size trained before checkpoints kept "
    "CPU minutes, which under load are more), summed over sittings (the run is checkpointed every "
    "epoch and resumed). Other work ran on the machine throughout."
)
CONVERGE_NOTE_HMM = ("RankSpaceHMM, PTB LM (Mikolov): selection on the validation sentences, test perplexity "
                     "on the test sentences (tokens incl. <eos>). " + CONVERGE_NOTE)
CONVERGE_NOTE_PCFG = ("RankSpacePCFG, PTB LM training sentences of 2-40 words, selection on validation "
                      "sentences, test perplexity on the PTB LM test sentences of 2 words or more (words + 1 "
                      "per sentence), S-F1 / corpus F1 on the WSJ sample as in rank_space_pcfg. "
                      + CONVERGE_NOTE)


def write_converge_section(args, results, n_train, n_valid, n_test):
    """One row per size (and rank) in the ``<part>_converge`` section, other ranks' rows kept."""
    hmm = args.part == "hmm"
    size_columns = ["states"] if hmm else ["NT", "PT"]
    key_columns = size_columns + ["rank"] + (["dropout"] if hmm else [])
    header = key_columns + ["epochs (best)", "minutes", "s / epoch", "validation PPL", "test PPL"]
    if not hmm:
        header += ["S-F1", "corpus F1"]
    header += ["sentences (train / valid / test)", "settings"]
    settings = (f"d {args.dim}, up to {args.batch_tokens} tokens a batch, Adam {args.hmm_lr if hmm else 2e-3:g}, "
                f"learning rate x{args.lr_decay} after {args.lr_patience}, stop after {args.patience}, "
                f"{args.budget:g} min")
    rows = []
    for size, f in results.items():
        row = ([size, args.rank, f"{args.dropout:g}"] if hmm else [size, 2 * size, args.rank]) + [
            f"{f['epochs']} ({f['best_epoch']})", f"{f['minutes']:.0f}", f"{f['epoch_seconds']:.0f}",
            f"{f['validation_ppl']:.1f}", f"{f['test_ppl']:.1f}"]
        if not hmm:
            row += [f"{f['s_f1']:.1f}", f"{f['corpus_f1']:.1f}"]
        rows.append(row + [f"{n_train} / {n_valid} / {n_test}", settings])
    earlier = "rank_space_hmm" if hmm else "rank_space_pcfg_sizes"
    write_rows(f"{earlier}_converge", f"{'RankSpaceHMM' if hmm else 'RankSpacePCFG'}: each size trained "
               "to its best validation likelihood", header, rows, len(key_columns),
               note=CONVERGE_NOTE_HMM if hmm else CONVERGE_NOTE_PCFG)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["pcfg", "pcfg-sizes", "hmm"], required=True)
    parser.add_argument("--converge", action="store_true")
    parser.add_argument("--state-dir", default="/work/state/rank_space")
    parser.add_argument("--budget", type=float, default=120, help="--converge: minutes per size")
    parser.add_argument("--patience", type=int, default=5)
    parser.add_argument("--max-epochs", type=int, default=50)
    parser.add_argument("--batch-tokens", type=int, default=8192)
    parser.add_argument("--lr-decay", type=float, default=0.5)
    parser.add_argument("--lr-patience", type=int, default=2)
    parser.add_argument("--nt", type=int, default=30)
    parser.add_argument("--pt", type=int, default=60)
    parser.add_argument("--rank", type=int, default=100)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--max-train", type=int, default=None)
    parser.add_argument("--minutes", type=float, default=80, help="training budget of the part")
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 30, 120])
    parser.add_argument("--states", type=int, nargs="+", default=[128, 1024, 8192])
    parser.add_argument("--hmm-lr", type=float, default=3e-3)
    parser.add_argument("--dropout", type=float, default=0.0, help="--part hmm: RankSpaceHMM's dropout")
    parser.add_argument("--hmmlearn-states", type=int, default=128)
    parser.add_argument("--hmmlearn-iter", type=int, default=50)
    args = parser.parse_args(argv)
    data_home()
    if args.converge:
        if args.part == "pcfg":
            parser.error("--converge takes --part hmm or --part pcfg-sizes")
        run_converge(args)
    else:
        {"pcfg": run_pcfg, "pcfg-sizes": run_pcfg_sizes, "hmm": run_hmm}[args.part](args)

