"""The results of a run as text and pictures: collins2002.md and one PNG of dev curves per dataset."""
import math
from pathlib import Path

import numpy as np

from .checks import HEADLINE, NEAR_BEST, near_best_epoch
from .settings import PUBLISHED_WSJ_TEST_ACCURACY


def plot_dev_curves(entry, path):
    """Dev score after each epoch for every row that ran; returns the file name, or a note string
    starting with "skipped" when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        return "skipped: matplotlib is not installed (pip install structperc[plot])"
    rows = [r for r in entry["rows"] if r.get("status") == "ok"]
    if not rows:
        return "skipped: no row ran"
    task = entry["task"]
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    styles = {"perc_avg": "-", "perc_noavg": "--", "me": ":"}
    colors = {0: "tab:blue", 5: "tab:orange"}
    for r in rows:
        epochs = np.arange(1, len(r["dev_curve"]) + 1)
        style = styles[r["key"].rsplit("_cc", 1)[0]]
        color = colors[r["min_count"]] if r["trainer"] == "perceptron" else (
            "tab:green" if r["min_count"] == 0 else "tab:red")
        line, = ax.plot(epochs, r["dev_curve"], style, color=color, label=r["method"], linewidth=1.6)
        ax.plot([r["best_epoch"]], [r["dev_score"]], "o", color=line.get_color())
    ax.set_xlabel("epoch")
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_ylabel("dev F1 (NP chunks)" if task == "np" else "dev error %")
    if task == "pos":
        best = min(min(r["dev_curve"]) for r in rows)
        worst = max(r["dev_score"] for r in rows)
        ax.set_ylim(best - 0.3, worst + 2.0)
    else:
        best = max(max(r["dev_curve"]) for r in rows)
        worst = min(r["dev_score"] for r in rows)
        ax.set_ylim(worst - 2.0, best + 0.3)
    ax.set_title(f"{entry['title']}: dev score per epoch (dot: kept epoch)")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path).name


def _fmt(value, digits=2):
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def render_markdown(results):
    """The results file: one table per dataset beside Collins' numbers, tests, patterns, notes."""
    quick = results["quick"]
    lines = [
        "# Collins (2002) reproduced" + (" — QUICK run (reduced data and epochs, not comparable)" if quick else ""),
        "",
        f"Paper: {results['paper']}.",
        "",
        "Collins' tables report the development-set score at Numits, the iteration with the best "
        "development score. Here each row is one `Tagger.fit(train, dev=dev)` (the kept weights are "
        "those of the best dev epoch = our Numits), then one evaluation of those weights on the test "
        "part. Seed " f"{results['settings']['seed']}" " for the per-epoch shuffles.",
        "",
        f"Total wall time: {results['total_seconds'] / 60:.1f} min on {results['machine']['cpus']} CPUs "
        f"(load average at start {results['machine']['load_average_at_start'][0]:.2f}; the machine was "
        "shared, so times may be inflated).",
        "",
    ]
    for name, entry in results["datasets"].items():
        lines += _dataset_section(name, entry, results)
    lines += _notes(results)
    return "\n".join(lines) + "\n"


def _dataset_section(name, entry, results):
    task = entry["task"]
    published = results["published"][task]
    metric = "F" if task == "np" else "error %"
    sizes = entry["sizes"]
    out = [
        f"## {entry['title']}",
        "",
        entry["description"],
        "",
        "Sizes: " + ", ".join(f"{p} {s['sentences']:,} sentences / {s['tokens']:,} tokens" for p, s in sizes.items()) + ".",
        "",
        f"| Method | Collins {metric} (Numits) | ours dev {metric} | ours Numits (cap) | within {NEAR_BEST} of best from | ours test {metric} | features (nonzero) | time |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in entry["rows"]:
        paper_score, paper_iters = published.get(r["key"], (None, None))
        paper = f"{paper_score:.2f} ({paper_iters})" if paper_score is not None else "not in the paper"
        if r["status"] != "ok":
            out.append(f"| {r['method']} | {paper} | — | — | — | — | — | skipped |")
            continue
        cap = f"{r['best_epoch']} ({r['epochs_cap']}){' **cap**' if r['capped'] else ''}"
        out.append(f"| {r['method']} | {paper} | {_fmt(r['dev_score'])} | {cap} | {near_best_epoch(r['dev_curve'], task)} | {_fmt(r['test_score'])} | "
                   f"{r.get('features_seen', r['features']):,} ({r['features']:,}) | {r['seconds']:.0f} s |")
    out.append("")
    out.append(f"Time for this dataset (reading included): {entry['seconds']:.0f} s.")
    ran = [r for r in entry["rows"] if r["status"] == "ok"]
    if ran:
        gaps = [(r["dev_score"] - r["test_score"]) * (1 if task == "np" else -1) for r in ran]
        out.append(f"Dev minus test {metric} (positive: dev is better), mean over rows: {np.mean(gaps):+.2f} "
                   f"(range {min(gaps):+.2f} to {max(gaps):+.2f}); the dev score is the maximum over epochs, "
                   "so it is optimistic.")
    if ran and all("refit_test_score" in r for r in ran):
        out.append(f"Test {metric} after training again on the train and dev sentences together for Numits "
                   "epochs: " + "; ".join(f"{r['method']} {r['refit_test_score']:.2f}" for r in ran) + ".")
    if task == "np":
        out.append("Precision/recall (test): " + "; ".join(
            f"{r['method']} {r['test_precision']:.2f}/{r['test_recall']:.2f}" for r in entry["rows"] if r["status"] == "ok") + ".")
    capped = [r["method"] for r in entry["rows"] if r.get("capped")]
    if capped:
        out.append(f"Best epoch at the cap (Numits is a lower bound; the row might improve with more epochs): "
                   f"{', '.join(capped)}.")
    for r in entry["rows"]:
        if r.get("note"):
            out.append(f"{r['method']}: {r['note']}.")
    out.append("")
    headline = entry.get("headline_test")
    out.append("**Significance of Perc avg cc=0 vs ME cc=0 on test:** " + (_describe_test(headline, task) if headline else
               "not computed (a row did not run)."))
    others = [t for t in entry.get("significance", []) if (t["a"], t["b"]) != HEADLINE]
    if others:
        out.append("")
        out.append("Other pairs on test: " + "; ".join(f"{t['a']} vs {t['b']}: p = {t['p_value']:.3g}" for t in others) + ".")
    out += ["", "**Collins' pattern on this dataset** (checked on test; dev in the detail):", ""]
    for check in entry["patterns"]:
        verdict = {True: "holds", False: "**does not hold**", None: "not decided"}[check["holds"]]
        out.append(f"- {check['claim']} ({check['a']} vs {check['b']}): {verdict} — {check['detail']}.")
    plot = entry.get("plot")
    out.append("")
    if plot and not str(plot).startswith("skipped"):
        out.append(f"![dev curves, {name}]({plot})")
    elif plot:
        out.append(f"Plot {plot}.")
    out.append("")
    return out


def _describe_test(test, task):
    if test["test"] == "mcnemar":
        return (f"McNemar on token decisions: {test['a_only']:,} tokens right only with Perc avg, "
                f"{test['b_only']:,} right only with ME; p = {test['p_value']:.3g}.")
    return (f"paired bootstrap over test sentences ({test['samples']:,} samples) on chunk F1: "
            f"{test['f1_a']:.2f} vs {test['f1_b']:.2f} (Δ {test['delta']:+.2f}); p = {test['p_value']:.3g}.")


def _notes(results):
    settings = results["settings"]
    caps = settings["epoch_caps"]
    return [
        "## Differences from the paper's setup",
        "",
        "- **cc counts something else.** Collins' cut-off keeps a feature when the (feature, tag) pair "
        "was seen at least cc times in training. `min_count` here counts occurrences of the attribute "
        "(the template instance, e.g. `w[0]=bank`) regardless of the tag, and then all its label "
        "weights exist. So cc=5 keeps more features here than in the paper.",
        "- **ME is not Collins' ME.** Collins' ME taggers were trained by iterative scaling for up to "
        "hundreds of iterations (Numits 100-900). The ME rows here use `trainer=\"memm\"` (on-line "
        f"training, capped at {caps['np']['memm']} epochs for NP and {caps['pos']['memm']} for POS, "
        "not averaged, L2 at c2 = 1 (λ = 2/N) and calibrated learning rate); where its best epoch is the cap the "
        "table says so. On POS the ME rows are trigram MEMMs, P(y_t | y_t-2, y_t-1, x), with the "
        "perceptron rows' templates and tag dictionary, as Ratnaparkhi's tagger had tag-bigram and "
        "tag-trigram features. When `memm` is not registered in "
        "`structperc.train.TRAINERS`, the ME rows are skipped and the perceptron-vs-ME checks are "
        "not made.",
        f"- **Epoch caps.** Perceptron rows stop after {caps['np']['perceptron']} epochs (NP) and "
        f"{caps['pos']['perceptron']} (POS), chosen so the default run fits in 30 minutes on 2 cores; "
        "Collins' largest perceptron Numits is 39.",
        "- **NP dev set.** Collins tuned Numits on WSJ section 21, which CoNLL-2000 does not contain; "
        f"here the last {settings['np_dev_sentences']:,} sentences of train.txt are held out as dev and "
        "not trained on, so NP models see ~11% less training data than Collins'.",
        f"- **POS tagger.** Templates `pos` (Ratnaparkhi's features as in Collins), a trigram (order "
        f"{settings['pos_order']}) model, and a tag dictionary: words seen at least {settings['tag_dict']} "
        "times may only take the tags they were seen with (Collins does not say he used one; "
        "without it order-2 training is ~20x slower). Collins' POS data is WSJ 0-18/19-21/22-24; "
        "that split is only run with `--ptb-root`. EWT and the WSJ sample are stand-ins, and their "
        f"error rates are not comparable to the paper's (the averaged perceptron scored "
        f"{PUBLISHED_WSJ_TEST_ACCURACY}% on WSJ 22-24 in the paper). Richer templates on EWT "
        "(`pos-rich`, `pos-ud`) are compared in `ewt_features.md` (`make ewt-features`).",
        "- **Significance.** POS: McNemar's test on test-token decisions; NP: paired bootstrap over test "
        "sentences on chunk F1 (p = share of resamples where the advantage is at least twice the "
        "observed one). The other pairs in the pattern checks use the same tests.",
        "",
    ]
