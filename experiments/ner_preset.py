"""Choose the ``ner`` preset on CoNLL-2002 Dutch: train each candidate template set on ned.train with
the default perceptron (``Tagger(templates=..., seed=s)``, no other option: the rule's default epochs,
averaged, the constraint chosen from the data, i.e. ``bio``) and score entity F1 on ned.testa, the
development set. ned.testb is never read here.

A candidate's score is its mean F1 over the seeds 0, 1 and 2 (the order in which the perceptron visits
the sentences; one seed moves F1 by about half a point), with seed 0 (what a user gets) beside it.
The first rows grow from a plain window set (``BASE``) one group of templates at a time up to
``NER_CANDIDATE``; each of the rows after them changes that candidate in one way. A change is kept only
when it raises the mean by more than ``KEEP_MARGIN``: smaller wins are within the seeds' noise. The
preset ``ner`` (``structperc.features.templates.PRESETS``) is ``NER_CANDIDATE``; the script checks that
the two agree and marks its row.

    python experiments/ner_preset.py [--corpus corpora/conll2002_nl]

Writes experiments/results/ner_preset.md.
"""
import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from structperc.estimator.tagger import Tagger  # noqa: E402
from structperc.features.templates import PRESETS  # noqa: E402
from structperc.train import TRAINERS  # noqa: E402

OUTPUT = ROOT / "experiments" / "results" / "ner_preset.md"
SEEDS = (0, 1, 2)
KEEP_MARGIN = 0.2  # F1 points of the 3-seed mean a change must add to be kept


def window(field, lo, hi):
    return [f"{field}[{o}]" for o in range(lo, hi + 1)]


def without(templates, dropped):
    missing = [t for t in dropped if t not in templates]
    assert not missing, missing
    return [t for t in templates if t not in dropped]


# a plain window: words, lower case, bigrams, affixes, shapes, POS, two spelling flags
BASE = (window("w", -2, 2) + window("lower", -2, 2) + ["w[-1]|w[0]", "w[0]|w[1]"]
        + [f"prefix{k}[0]" for k in range(1, 5)] + [f"suffix{k}[0]" for k in range(1, 5)]
        + window("shape", -1, 1) + ["shape[-1]|shape[0]", "shape[0]|shape[1]", "shape[-1]|shape[0]|shape[1]"]
        + window("pos", -1, 1) + ["pos[-1]|pos[0]", "pos[0]|pos[1]", "has_digit[0]", "has_hyphen[0]", "bias"])
WIDER = ["lower[-3]", "lower[3]", "lower[-2]|lower[-1]", "lower[1]|lower[2]"]
PAIR_CAP = ["pair:cap[0]", "pair:cap[-1]|cap[0]"]
MORE_POS = ["w[0]|pos[0]", "pos[-2]", "pos[2]", "pos[-1]|pos[0]|pos[1]"]
NER_CANDIDATE = "+ w[0]|pos[0], pos[±2], POS trigram"
CHOSEN = BASE + WIDER + PAIR_CAP + MORE_POS
CANDIDATES = {
    "plain window (BASE)": BASE,
    "+ lower-case words at ±3 and lower-case bigrams at -2..-1, 1..2": BASE + WIDER,
    "+ pair: cap[0], cap[-1]|cap[0] (capitalisation conditions the transition)": BASE + WIDER + PAIR_CAP,
    NER_CANDIDATE: CHOSEN,
    # one change each to the candidate above
    "− w[0]|pos[0]": without(CHOSEN, ["w[0]|pos[0]"]),
    "− w[±2]": without(CHOSEN, ["w[-2]", "w[2]"]),
    "− lower[±3]": without(CHOSEN, ["lower[-3]", "lower[3]"]),
    "− the lower-case bigrams": without(CHOSEN, ["lower[-2]|lower[-1]", "lower[1]|lower[2]"]),
    "− the word bigrams": without(CHOSEN, ["w[-1]|w[0]", "w[0]|w[1]"]),
    "− prefix1, suffix1": without(CHOSEN, ["prefix1[0]", "suffix1[0]"]),
    "− the shape bigrams and trigram": without(CHOSEN, ["shape[-1]|shape[0]", "shape[0]|shape[1]",
                                                       "shape[-1]|shape[0]|shape[1]"]),
    "affixes on rare words only (@rare)": [t + "@rare" if t.startswith(("prefix", "suffix")) else t for t in CHOSEN],
    "capitalisation on y[i] instead of the label pair":
        without(CHOSEN, PAIR_CAP) + ["cap[0]", "cap[-1]|cap[0]"],
    "+ cap[0] on y[i] too": CHOSEN + ["cap[0]"],
    "+ pair: pos[0]": CHOSEN + ["pair:pos[0]"],
    "+ pair: shape[0]": CHOSEN + ["pair:shape[0]"],
    "+ pair: lower[-1]": CHOSEN + ["pair:lower[-1]"],
    "+ pair: cap[0]|cap[1]": CHOSEN + ["pair:cap[0]|cap[1]"],
    "+ the neighbours' 3-letter prefixes and suffixes": CHOSEN + ["suffix3[-1]", "suffix3[1]", "prefix3[-1]",
                                                                  "prefix3[1]"],
    "+ shape[±2]": CHOSEN + ["shape[-2]", "shape[2]"],
    "+ lower-case skip bigram and trigram around the word":
        CHOSEN + ["lower[-1]|lower[1]", "lower[-1]|lower[0]|lower[1]"],
    "+ cap trigram, cap[0] with the neighbour words": CHOSEN + ["cap[-1]|cap[0]|cap[1]", "cap[0]|lower[-1]",
                                                                "cap[0]|lower[1]"],
    "+ pos[0]|cap[0]": CHOSEN + ["pos[0]|cap[0]"],
}


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
        scores, seconds = [], []
        for seed in SEEDS:
            start = time.perf_counter()
            tagger = Tagger(templates=templates, seed=seed).fit_file(corpus / "ned.train",
                                                                     columns=["word", "pos", "ner"])
            seconds.append(time.perf_counter() - start)
            scores.append(tagger.evaluate_file(corpus / "ned.testa")["f1"])
        rows.append((name, len(templates), statistics.mean(scores), scores[0], statistics.median(seconds),
                     tagger.constrain_))
        print(f"{rows[-1][2]:6.2f}  {scores}  {rows[-1][4]:6.1f}s  {name}", flush=True)
    chosen = next(r for r in rows if r[0] == NER_CANDIDATE)
    best = max(rows, key=lambda r: r[2])
    agrees = same_templates(PRESETS["ner"], CANDIDATES[NER_CANDIDATE])
    seeds = ", ".join(map(str, SEEDS))
    lines = [
        "# The `ner` preset, chosen on CoNLL-2002 Dutch testa",
        "",
        "`python experiments/ner_preset.py`: each candidate trained on ned.train (word, POS, entity "
        "columns) with `Tagger(templates=candidate, seed=s)` and nothing else (the default perceptron: "
        f"{TRAINERS['perceptron'].epochs} epochs, averaged; the constraint chosen from the data: `{rows[0][5]}`), scored on ned.testa "
        f"(entity F1, conlleval's): the mean over the seeds {seeds}, and seed 0 (the default). The first "
        "rows each add to the one above, up to the row marked (ner); each row after it makes one change to "
        f"that row. A change is kept only if it raises the mean by more than {KEEP_MARGIN}. Fit: median "
        "over the seeds of the in-process wall clock of `fit_file`, on a shared machine "
        f"({platform.machine()}, Python {platform.python_version()}).",
        "",
        f"| candidate | templates | dev F1, mean of seeds {seeds} | dev F1, seed 0 | fit (s) |",
        "|---|---|---|---|---|",
        *[f"| {cell(name)}{' **(ner)**' if name == NER_CANDIDATE else ''} | {n} | {mean:.2f} | {f1:.2f} | "
          f"{s:.1f} |" for name, n, mean, f1, s, _ in rows],
        "",
        f"Best mean dev F1: {best[2]:.2f} ({cell(best[0])}); the row marked (ner): {chosen[2]:.2f}. "
        f"{'No' if best[2] <= chosen[2] + KEEP_MARGIN else 'A'} change raises it by more than {KEEP_MARGIN}. "
        f"`PRESETS['ner']` {'is' if agrees else 'is NOT'} the row marked (ner) (its POS templates marked "
        "optional).",
        "",
    ]
    OUTPUT.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
