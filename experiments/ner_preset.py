"""Choose the ``ner`` preset on CoNLL-2002 Dutch: train each candidate template set on ned.train with
the default perceptron (``Tagger(templates=...)``, no other option: 10 epochs, averaged, the
constraint chosen from the data, i.e. ``bio``) and score entity F1 on ned.testa, the development set.
ned.testb is never read here.

The candidates grow from a plain window set (``BASE``) one group of templates at a time; each row
says what it adds. The preset ``ner`` (``structperc.features.templates.PRESETS``) is the candidate
``NER_CANDIDATE``; the script checks that the two agree and marks the best row.

    python experiments/ner_preset.py [--corpus corpora/conll2002_nl]

Writes experiments/results/ner_preset.md.
"""
import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from structperc.estimator.tagger import Tagger  # noqa: E402
from structperc.features.templates import PRESETS  # noqa: E402

OUTPUT = ROOT / "experiments" / "results" / "ner_preset.md"


def window(field, lo, hi):
    return [f"{field}[{o}]" for o in range(lo, hi + 1)]


# a plain window: words, lower case, bigrams, affixes, shapes, POS, two spelling flags
BASE = (window("w", -2, 2) + window("lower", -2, 2) + ["w[-1]|w[0]", "w[0]|w[1]"]
        + [f"prefix{k}[0]" for k in range(1, 5)] + [f"suffix{k}[0]" for k in range(1, 5)]
        + window("shape", -1, 1) + ["shape[-1]|shape[0]", "shape[0]|shape[1]", "shape[-1]|shape[0]|shape[1]"]
        + window("pos", -1, 1) + ["pos[-1]|pos[0]", "pos[0]|pos[1]", "has_digit[0]", "has_hyphen[0]", "bias"])
WIDER = ["lower[-3]", "lower[3]", "lower[-2]|lower[-1]", "lower[1]|lower[2]"]
PAIR_CAP = ["pair:cap[0]", "pair:cap[-1]|cap[0]"]
MORE_POS = ["w[0]|pos[0]", "pos[-2]", "pos[2]", "pos[-1]|pos[0]|pos[1]"]
CAP = ["cap[-1]|cap[0]|cap[1]", "cap[-1]|cap[0]", "cap[0]|cap[1]", "cap[0]|lower[-1]", "cap[0]|lower[1]"]
CANDIDATES = {
    "plain window (BASE)": BASE,
    "+ lower-case words at ±3 and lower-case bigrams at -2..-1, 1..2": BASE + WIDER,
    "+ pair: cap[0], cap[-1]|cap[0] (capitalisation conditions the transition)": BASE + WIDER + PAIR_CAP,
    "+ w[0]|pos[0], pos[±2], POS trigram": BASE + WIDER + PAIR_CAP + MORE_POS,
    "+ lower-case words at ±4": BASE + WIDER + PAIR_CAP + MORE_POS + ["lower[-4]", "lower[4]"],
    "+ capitalisation patterns on y[i] (cap windows, cap with the neighbour words)":
        BASE + WIDER + PAIR_CAP + MORE_POS + CAP,
    "+ pair: shape[0]": BASE + WIDER + PAIR_CAP + MORE_POS + ["pair:shape[0]"],
}
NER_CANDIDATE = "+ w[0]|pos[0], pos[±2], POS trigram"


def cell(text):
    """Text for a markdown table cell: its '|' escaped."""
    return text.replace("|", "\\|")


def same_templates(a, b):
    return sorted(t.rstrip("?") for t in a) == sorted(t.rstrip("?") for t in b)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(ROOT / "corpora" / "conll2002_nl"))
    args = parser.parse_args()
    corpus = Path(args.corpus)
    rows = []
    for name, templates in CANDIDATES.items():
        start = time.perf_counter()
        tagger = Tagger(templates=templates).fit_file(corpus / "ned.train", columns=["word", "pos", "ner"])
        seconds = time.perf_counter() - start
        f1 = tagger.evaluate_file(corpus / "ned.testa")["f1"]
        rows.append((name, len(templates), f1, seconds, tagger.constrain_))
        print(f"{f1:6.2f}  {seconds:6.1f}s  {name}", flush=True)
    best = max(rows, key=lambda r: r[2])
    chosen = next(r for r in rows if r[0] == NER_CANDIDATE)
    agrees = same_templates(PRESETS["ner"], CANDIDATES[NER_CANDIDATE])
    lines = [
        "# The `ner` preset, chosen on CoNLL-2002 Dutch testa",
        "",
        "`python experiments/ner_preset.py`: each candidate trained on ned.train (word, POS, entity "
        "columns) with `Tagger(templates=candidate)` and nothing else (the default perceptron: 10 "
        f"epochs, averaged, seed 0; the constraint chosen from the data: `{rows[0][4]}`), scored on "
        "ned.testa (entity F1, conlleval's). Each row adds to the one above it, except the last three, "
        "which each add one group to the fourth. Fit times: in-process wall clock of `fit_file`, on a "
        f"shared machine ({platform.machine()}, Python {platform.python_version()}).",
        "",
        "| candidate | templates | dev F1 | fit (s) |",
        "|---|---|---|---|",
        *[f"| {cell(name)}{' **(ner)**' if name == NER_CANDIDATE else ''} | {n} | {f1:.2f} | {s:.1f} |"
          for name, n, f1, s, _ in rows],
        "",
        f"Best dev F1: {best[2]:.2f} ({best[0]}). The preset `ner` is the row marked (ner), dev F1 "
        f"{chosen[2]:.2f}; `PRESETS['ner']` {'is' if agrees else 'is NOT'} that candidate "
        "(its POS templates marked optional).",
        "",
    ]
    OUTPUT.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
