"""Choose the perceptron's default number of epochs on development data.

Each variant trains the default perceptron (``Tagger(epochs=E, seed=s)``, the preset where named and
nothing else) on the development tasks of ``sgd_defaults.py`` (CoNLL-2000 NP and all chunk types on a
held-out tenth of train, EWT UPOS dev, ned.testa with the ``ner`` preset and with the tutorial's
feature dicts; its docstring has the details), for the seeds 0, 1 and 2. No test file is read.

    python experiments/epochs.py [--corpora corpora]

Writes experiments/results/epochs.md.
"""
import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "experiments"))
from sgd_defaults import dev_tasks  # noqa: E402
from structperc.train import TRAINERS  # noqa: E402

OUTPUT = ROOT / "experiments" / "results" / "epochs.md"
EPOCHS = (10, 15, 20)
SEEDS = (0, 1, 2)
WITHIN = 0.1  # the fewest epochs whose mean change is within this of the best: every epoch costs time


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default=str(ROOT / "corpora"))
    args = parser.parse_args()
    corpora = Path(args.corpora)
    with tempfile.TemporaryDirectory() as folder:
        tasks = dev_tasks(corpora, folder)
        scores, seconds = {}, {}
        for epochs in EPOCHS:
            for task, run in tasks.items():
                runs = []
                for seed in SEEDS:
                    start = time.perf_counter()
                    runs.append(run(epochs=epochs, seed=seed)())
                    seconds[task, epochs, seed] = time.perf_counter() - start
                scores[task, epochs] = statistics.mean(runs)
                print(f"epochs {epochs:3d}  {task:10s} {scores[task, epochs]:6.2f}  {runs}", flush=True)
    change = {e: statistics.mean(scores[t, e] - scores[t, EPOCHS[0]] for t in tasks) for e in EPOCHS}
    rule_choice = min(e for e in EPOCHS if change[e] >= max(change.values()) - WITHIN)
    chosen = TRAINERS["perceptron"].epochs
    seeds = ", ".join(map(str, SEEDS))
    lines = [
        "# The perceptron's default number of epochs, chosen on development data",
        "",
        "`python experiments/epochs.py`: the default perceptron (averaged; the preset where named, nothing "
        f"else) with each number of epochs, scored on development data only and averaged over the seeds {seeds}: "
        "CoNLL-2000 NP chunking and all chunk types (first 90 % of train.txt / last 10 %; chunk F1), EWT UPOS "
        "(dev accuracy), CoNLL-2002 Dutch (ned.testa entity F1) with the `ner` preset and with the feature dicts "
        "of sklearn-crfsuite's tutorial. Fit + predict seconds: the median over the tasks' seeds, summed over the "
        f"tasks. Machine: x86_64, Python {platform.python_version()}.",
        "",
        "| epochs | " + " | ".join(tasks) + " | mean change | seconds (all tasks) |",
        "|" + "---|" * (len(tasks) + 3),
    ]
    for epochs in EPOCHS:
        total = sum(statistics.median(seconds[t, epochs, s] for s in SEEDS) for t in tasks)
        mark = ""
        cells = " | ".join(f"{scores[t, epochs]:.2f}" for t in tasks)
        lines.append(f"| {epochs}{mark} | {cells} | {change[epochs]:+.2f} | {total:.1f} |")
    others = ", ".join(f"{name} {'up to ' if rule.stopping else ''}{rule.epochs}" for name, rule in TRAINERS.items()
                       if name != "perceptron")
    lines += ["", f"The rule: the fewest epochs whose mean change is within {WITHIN} of the best, since every "
              f"epoch costs training time; it picks {rule_choice}. Superseded: without a number of epochs, "
              f"the perceptron now runs until its training mistakes stop falling, at most {chosen} epochs "
              "(`experiments/stopping.py`, results/stopping.md); the other rules' defaults: "
              f"{others}."]
    OUTPUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
