"""Partial labels and forced decoding on CoNLL-2000.

1. Partial labels, all chunk types: 50 % of the training tokens, chosen at random (seed 0), get the
   missing label "?"; the `chunk` templates with the BIO constraint, 10 epochs, trained on the full
   and on the partial file; test F1.
2. Forced decoding, NP chunks: 20 % of the test tokens (seed 0) are forced to their gold label
   (``model.decode(..., forced=...)``, as ``structperc tag --force-column`` runs it); test F1 with and
   without forcing.

Writes the partial training file to corpora/conll2000/train.partial50.txt and the table to
experiments/results/partial_labels.md.

usage: python experiments/partial_labels.py [--trainers perceptron,crf]
"""
import argparse
import sys
from pathlib import Path

import numpy as np

from structperc.chunks import is_bio
from structperc.evaluate.metrics import evaluate_labels
from structperc.estimator.tagger import Tagger, check_forced, forced_label_ids

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpora" / "conll2000"
RESULT = ROOT / "experiments" / "results" / "partial_labels.md"
MISSING = "?"


def hide_labels(source, target, fraction, seed):
    """Copy a CoNLL file, replacing the last column of a random ``fraction`` of the tokens by '?'."""
    rng = np.random.default_rng(seed)
    lines = source.read_text(encoding="utf-8").splitlines()
    tokens = [i for i, line in enumerate(lines) if line.strip()]
    for i in np.asarray(tokens)[rng.random(len(tokens)) < fraction]:
        fields = lines[i].split()
        lines[i] = " ".join(fields[:-1] + [MISSING])
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def f1(tagger, corpus, forced=None):
    ids, _ = tagger.model_.decode(tagger.model_.encoder.transform(corpus, with_labels=False), forced=forced)
    predicted = np.asarray(tagger.model_.labels, dtype=object)[ids]
    gold = corpus.columns[corpus.label]
    result = evaluate_labels(gold, list(predicted), corpus.sentence_offsets, is_bio(tagger.model_.labels))
    if forced is not None:
        kept = forced >= 0
        assert (ids[kept] == forced[kept]).all()
    return result["f1"]


def train(path, trainer, missing_label=None, only_types=None):
    options = dict(templates="chunk", trainer=trainer, epochs=10, constrain="bio", seed=0, missing_label=missing_label)
    reader = dict(columns=["word", "pos", "chunk"], only_types=only_types)
    return Tagger(**options).fit_file(path, **reader)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trainers", default="perceptron")
    args = parser.parse_args()
    partial = hide_labels(CORPUS / "train.txt", CORPUS / "train.partial50.txt", 0.5, seed=0)
    rows = ["# Partial labels and forced decoding on CoNLL-2000", "", __doc__.split("\n\n")[1], "",
            "| experiment | trainer | F1 |", "|---|---|---:|"]

    def add(name, trainer, value):
        row = f"| {name} | {trainer} | {value:.2f} |"
        print(row, file=sys.stderr, flush=True)
        rows.append(row)

    for trainer in args.trainers.split(","):
        for name, path, missing in (("all types, full labels", CORPUS / "train.txt", None),
                                    ("all types, 50 % of training labels '?'", partial, MISSING)):
            tagger = train(path, trainer, missing)
            add(name, trainer, f1(tagger, tagger.read(CORPUS / "test.txt")))
    tagger = train(CORPUS / "train.txt", "perceptron", only_types=["NP"])
    test = tagger.read(CORPUS / "test.txt")
    gold = test.columns[test.label]
    rng = np.random.default_rng(0)
    column = [label if rng.random() < 0.2 else MISSING for label in gold]
    forced = forced_label_ids(tagger.model_, column, MISSING)
    check_forced(tagger.model_, forced, test.sentence_offsets)
    add("NP, no forcing", "perceptron", f1(tagger, test))
    add(f"NP, {100 * np.mean(forced >= 0):.1f} % of test tokens forced to gold", "perceptron", f1(tagger, test, forced))
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    RESULT.write_text("\n".join(rows) + "\n", encoding="utf-8")
    print(f"wrote {RESULT}", file=sys.stderr)


if __name__ == "__main__":
    main()
