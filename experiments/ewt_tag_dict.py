"""Choose the tag dictionary of the named model ``en-ewt-upos`` on UD English EWT dev.

Each row trains the recipe as ``structperc models build`` trains it (``models.build.train``: the
``pos-ud`` templates, label order 2, 10 epochs) with one value of ``tag_dict``, for the seeds 0, 1
and 2 (the order in which the perceptron visits the sentences), and scores UPOS accuracy on the dev
file's gold tokens. ``tag_dict = k`` lets a word seen at least k times in training take only the
tags seen with it, both when training and when tagging; an unseen or rarer word may take every tag.

The second-order decoder scores |C(t-2)| |C(t-1)| |C(t)| label triples at token t, C(t) the labels a
token may take: the "triples per token" column is their mean over the dev tokens (at most 17^3 =
4913; fewer at a sentence's first two tokens, whose history is the start symbol). It counts work; it
is not a timing.

The row with the highest mean dev accuracy is the recipe's (``models.recipes``); the script checks
that the two agree and marks its row. The test file is never read.

    python experiments/ewt_tag_dict.py [--mirror ../shared/corpora]

Writes experiments/results/ewt_tag_dict.md.
"""
import argparse
import dataclasses
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from structperc.models.build import corpus_folder, train  # noqa: E402
from structperc.models.recipes import recipe_of  # noqa: E402

OUTPUT = ROOT / "experiments" / "results" / "ewt_tag_dict.md"
NAME = "en-ewt-upos"
SEEDS = (0, 1, 2)
VALUES = (None, 20, 50, 100, 200, 500, 1000)


def log(message):
    print(message, file=sys.stderr, flush=True)


def triples_per_token(tagger, path):
    """Mean |C(t-2)| |C(t-1)| |C(t)| over the tokens of the file (the start symbol counts 1)."""
    model = tagger.model_
    data = model.data(tagger.encode_input(tagger.read(path)), None)
    n_labels = len(model.labels)
    offsets, cand = data.sentence_offsets, data.cand_offsets
    sizes = np.full(offsets[-1], n_labels, dtype=np.int64)
    if cand.shape[0] > 0:
        counts = np.diff(cand)
        sizes[counts > 0] = counts[counts > 0]
    total = 0
    for a, b in zip(offsets[:-1], offsets[1:]):
        s = np.concatenate([[1, 1], sizes[a:b]])
        total += int((s[:-2] * s[1:-1] * s[2:]).sum())
    return total / offsets[-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", default=None, help="a mirror of the corpora (default: $STRUCTPERC_MIRROR)")
    args = parser.parse_args()
    start = time.perf_counter()
    base = recipe_of(NAME)
    folder = corpus_folder(base, args.mirror, log)
    dev = folder / base.dev
    rows = []
    for value in VALUES:
        options = {key: v for key, v in base.options.items() if key != "tag_dict"}
        if value is not None:
            options["tag_dict"] = value
        scores, triples = [], None
        for seed in SEEDS:
            recipe = dataclasses.replace(base, options=options, seed=seed)
            tagger = train(recipe, folder)
            scores.append(float(tagger.evaluate_file(dev)["accuracy"]))
            if triples is None:
                triples = triples_per_token(tagger, dev)
            log(f"tag_dict={value} seed={seed}: dev accuracy {scores[-1]:.3f}")
        rows.append((value, scores, triples))
    best = max(rows, key=lambda row: statistics.mean(row[1]))[0]
    chosen = base.options.get("tag_dict")
    lines = [
        f"# The tag dictionary of `{NAME}`, chosen on UD English EWT dev",
        "",
        f"Produced by `experiments/ewt_tag_dict.py` (`make ewt-tag-dict`) on {platform.machine()}; wall time "
        f"{(time.perf_counter() - start) / 60:.1f} min.",
        "",
        __doc__.split("\n\n")[1].replace("\n", " "),
        "",
        __doc__.split("\n\n")[2].replace("\n", " "),
        "",
        "| tag_dict | dev accuracy, mean of seeds 0-2 | seed 0 | seed 1 | seed 2 | triples per token |",
        "|---|---|---|---|---|---|",
    ]
    for value, scores, triples in rows:
        mark = " (the recipe's)" if value == chosen else ""
        label = "none" if value is None else f"k = {value}"
        lines.append(f"| {label}{mark} | {statistics.mean(scores):.3f} | "
                     + " | ".join(f"{s:.3f}" for s in scores) + f" | {triples:,.0f} |")
    agree = "agrees" if best == chosen else f"does NOT agree: the best row is {best}"
    lines += ["", f"Highest mean: {'none' if best is None else f'k = {best}'}; the recipe ({chosen}) {agree}.", ""]
    OUTPUT.write_text("\n".join(lines), encoding="utf-8")
    log(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
