"""How far richer features and the dev data take the averaged perceptron on UD English EWT (xpos).

Rows: templates `pos` (Ratnaparkhi's, as in the Collins 2002 reproduction), `pos-rich` and `pos-ud`
(`pos-rich` plus the spacing of the raw text), at label order 1 and 2, tag dictionary k = 5, cc = 0.
Each row picks its epoch on dev (cap 20), reports test accuracy overall and on words not seen in
training, then trains again on train + dev for that many epochs and reports test accuracy once
more. The last row is a diagnostic, not a tagger: `pos-ud` plus the gold tags of the next two
tokens as features, an upper bound on what right-context tags could add.

Writes experiments/results/ewt_features.md.  Run: ``make ewt-features``.
"""
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from collins2002.settings import TAG_DICT_K
from structperc.corpus import concatenate
from structperc.data.splits import load_ewt
from structperc.estimator.tagger import Tagger
from structperc.features.templates import PRESETS

ROOT = Path(__file__).resolve().parent.parent
RESULT = ROOT / "experiments" / "results" / "ewt_features.md"
EPOCHS = 20
SEED = 0
ROWS = [("pos", 1), ("pos", 2), ("pos-rich", 1), ("pos-rich", 2), ("pos-ud", 1), ("pos-ud", 2)]
GOLD_RIGHT = ["gold[1]", "w[0]|gold[1]", "gold[1]|gold[2]"]


def log(message):
    print(message, file=sys.stderr, flush=True)


def accuracy(tagger, test, mask):
    predicted, _ = tagger.predict_corpus(test)
    right = np.asarray(predicted, dtype=object) == np.asarray(test.labels(), dtype=object)
    return 100 * right.mean(), 100 * right[mask].mean()


def main():
    start = time.perf_counter()
    data = load_ewt(ROOT / "corpora")
    seen = set(data.train.columns["word"])
    unseen = np.array([w not in seen for w in data.test.columns["word"]])
    lines = [
        "# Averaged perceptron on UD English EWT: feature sets and the dev data",
        "",
        __doc__.split("\n\n")[1].replace("\n", " "),
        "",
        f"Test: {data.test.n_tokens:,} tokens, {unseen.mean():.2%} of them not seen in training.",
        "",
        "| templates | order | best dev epoch | dev acc. | test acc. | test acc., unseen words | "
        "test acc. after refit on train + dev | train time |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for part in (data.train, data.dev, data.test):
        part.columns["gold"] = part.labels()  # read only by the diagnostic row
    both = concatenate([data.train, data.dev])
    rows = [(f"`{name}`", name, order) for name, order in ROWS]
    rows.append(("`pos-ud` + gold tags of the next two tokens (diagnostic)",
                 list(PRESETS["pos-ud"]) + GOLD_RIGHT, 1))
    for name, templates, order in rows:
        settings = dict(templates=templates, order=order, tag_dict=TAG_DICT_K, seed=SEED)
        t = time.perf_counter()
        tagger = Tagger(epochs=EPOCHS, **settings).fit(data.train, dev=data.dev)
        seconds = time.perf_counter() - t
        best = tagger.n_iter_
        test_acc, unseen_acc = accuracy(tagger, data.test, unseen)
        refit_acc, _ = accuracy(Tagger(epochs=best, **settings).fit(both), data.test, unseen)
        dev_acc = tagger.history_[best - 1].dev["accuracy"]
        log(f"{name} order {order}: epoch {best}, dev {dev_acc:.2f}, test {test_acc:.2f} "
            f"(unseen {unseen_acc:.1f}), refit {refit_acc:.2f}, {seconds:.0f}s")
        lines.append(f"| {name} | {order} | {best} | {dev_acc:.2f} | {test_acc:.2f} | {unseen_acc:.1f} | "
                     f"{refit_acc:.2f} | {seconds:.0f} s |")
    lines += ["", f"Total wall time {(time.perf_counter() - start) / 60:.1f} min on {platform.machine()} "
              f"({len(os.sched_getaffinity(0))} CPUs)."]
    RESULT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    log(f"wrote {RESULT}")


if __name__ == "__main__":
    main()
