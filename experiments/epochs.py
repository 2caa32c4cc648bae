"""Choose the perceptron's default number of epochs on development data.

Each variant trains the default perceptron (``Tagger(epochs=E, seed=s)``, the preset where named and
nothing else) and scores it on development data only, for the seeds 0, 1 and 2 (the order in which
the sentences are visited). The tasks are those of ``sgd_defaults.py``:

- ``np``, ``chunk``: CoNLL-2000 NP chunking and all chunk types, trained on the first 90 % of
  train.txt's sentences and scored (chunk F1) on the last 10 %;
- ``ewt``: UD English EWT UPOS, train on dev (accuracy);
- ``ner``: CoNLL-2002 Dutch, ned.train on ned.testa with the ``ner`` preset (entity F1);
- ``ner dicts``: the same with the feature dicts of sklearn-crfsuite's tutorial (``benchmarks/bench_dicts.py``).

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
from bench_dicts import entity_f1, read_conll2002, sent2features  # noqa: E402
from sgd_defaults import split_conll2000  # noqa: E402
from structperc.estimator.core import TaggerCore  # noqa: E402
from structperc.train import TRAINERS  # noqa: E402

OUTPUT = ROOT / "experiments" / "results" / "epochs.md"
EPOCHS = (10, 15, 20)
SEEDS = (0, 1, 2)
WITHIN = 0.1  # the fewest epochs whose mean change is within this of the best: every epoch costs time


def file_task(train, dev, reader_options, **tagger_options):
    def run(epochs, seed):
        tagger = TaggerCore(epochs=epochs, seed=seed, **tagger_options).fit_file(train, **reader_options)
        result = tagger.evaluate_file(dev)
        return result.get("f1", result.get("accuracy"))
    return run


def dicts_task(corpus):
    train, dev = read_conll2002(corpus / "ned.train"), read_conll2002(corpus / "ned.testa")
    X, y = [sent2features(s) for s in train], [[t[-1] for t in s] for s in train]
    X_dev, y_dev = [sent2features(s) for s in dev], [[t[-1] for t in s] for s in dev]

    def run(epochs, seed):
        return entity_f1(y_dev, TaggerCore(epochs=epochs, seed=seed).fit(X, y).predict(X_dev))
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default=str(ROOT / "corpora"))
    args = parser.parse_args()
    corpora = Path(args.corpora)
    with tempfile.TemporaryDirectory() as folder:
        chunk_train, chunk_dev = split_conll2000(corpora / "conll2000" / "train.txt", folder)
        ewt, ned = corpora / "ud_english_ewt", corpora / "conll2002_nl"
        chunk_columns = {"columns": ["word", "pos", "chunk"]}
        tasks = {
            "np": file_task(chunk_train, chunk_dev, dict(chunk_columns, only_types=["NP"])),
            "chunk": file_task(chunk_train, chunk_dev, chunk_columns),
            "ewt": file_task(ewt / "en_ewt-ud-train.conllu", ewt / "en_ewt-ud-dev.conllu", {"label": "upos"}),
            "ner": file_task(ned / "ned.train", ned / "ned.testa", {"columns": ["word", "pos", "ner"]},
                             templates="ner"),
            "ner dicts": dicts_task(ned),
        }
        scores, seconds = {}, {}
        for epochs in EPOCHS:
            for task, run in tasks.items():
                runs = []
                for seed in SEEDS:
                    start = time.perf_counter()
                    runs.append(run(epochs, seed))
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
        mark = " **(chosen)**" if epochs == chosen else ""
        cells = " | ".join(f"{scores[t, epochs]:.2f}" for t in tasks)
        lines.append(f"| {epochs}{mark} | {cells} | {change[epochs]:+.2f} | {total:.1f} |")
    others = ", ".join(f"{name} {rule.epochs}" for name, rule in TRAINERS.items() if name != "perceptron")
    lines += ["", f"The rule: the fewest epochs whose mean change is within {WITHIN} of the best, since every "
              f"epoch costs training time; it picks {rule_choice}. The default in `structperc/train/perceptron.py`: "
              f"{chosen} epochs (the other rules: {others})"
              + ("." if rule_choice == chosen else ", which is NOT the rule's choice.")]
    OUTPUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
