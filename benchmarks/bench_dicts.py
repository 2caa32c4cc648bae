"""Feature dicts on CoNLL-2002 Dutch NER: structperc ``Tagger`` with its defaults against sklearn-crfsuite,
same features, each system timed as a whole process.

    python benchmarks/bench_dicts.py [--corpus ../shared/corpora/conll2002_nl] [--runs 3]
                                     [--trainers crf perceptron]

Both libraries get the same dicts from the feature function of sklearn-crfsuite's tutorial (the word
lower-cased, its 3- and 2-letter suffixes, isupper / istitle / isdigit, the POS tag and its 2-letter
prefix, the same for the words at -1 and +1, and BOS / EOS flags). sklearn-crfsuite trains with
the tutorial's arguments (L-BFGS, c1 = c2 = 0.1, 100 iterations, all possible transitions);
structperc with ``Tagger(trainer=...)`` and no other argument: what a user gets by default.
Training is ned.train, the score is entity-level F1 (exact chunk match, as conlleval) on ned.testb,
computed by the same function for both.

Each system runs in its own process (``--system NAME``, this script), which reads the corpus,
extracts the features, fits, predicts and scores; the process is timed whole from start to exit
(``process.run_process``), and it also reports its in-process ``fit`` and ``predict`` seconds. The
runs go in rounds (each system once per round) and the medians of ``--runs`` rounds are reported,
with the ratios to sklearn-crfsuite's medians of the same run. Writes benchmarks/dicts.md and the
table in the `bench-dicts` sections of README.md and benchmarks/results.md.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from process import run_process  # benchmarks/process.py (the script's folder is on sys.path)
from sections import refresh_figures, write_section  # benchmarks/sections.py

ROOT = Path(__file__).resolve().parent.parent
SECTION = "bench-dicts"  # the marked section of README.md and of benchmarks/results.md
RESULTS = ROOT / "benchmarks" / "results.md"


def read_conll2002(path):
    """Sentences of (word, pos, label) from a CoNLL-2002 file; -DOCSTART- lines are dropped."""
    sentences, current = [], []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if not parts:
            if current:
                sentences.append(current)
            current = []
        elif parts[0] != "-DOCSTART-":
            current.append(tuple(parts))
    if current:
        sentences.append(current)
    return sentences


def word2features(sent, i):
    """sklearn-crfsuite tutorial's feature function."""
    word, postag = sent[i][0], sent[i][1]
    features = {
        "bias": 1.0,
        "word.lower()": word.lower(),
        "word[-3:]": word[-3:],
        "word[-2:]": word[-2:],
        "word.isupper()": word.isupper(),
        "word.istitle()": word.istitle(),
        "word.isdigit()": word.isdigit(),
        "postag": postag,
        "postag[:2]": postag[:2],
    }
    if i > 0:
        word1, postag1 = sent[i - 1][0], sent[i - 1][1]
        features.update({
            "-1:word.lower()": word1.lower(),
            "-1:word.istitle()": word1.istitle(),
            "-1:word.isupper()": word1.isupper(),
            "-1:postag": postag1,
            "-1:postag[:2]": postag1[:2],
        })
    else:
        features["BOS"] = True
    if i < len(sent) - 1:
        word1, postag1 = sent[i + 1][0], sent[i + 1][1]
        features.update({
            "+1:word.lower()": word1.lower(),
            "+1:word.istitle()": word1.istitle(),
            "+1:word.isupper()": word1.isupper(),
            "+1:postag": postag1,
            "+1:postag[:2]": postag1[:2],
        })
    else:
        features["EOS"] = True
    return features


def sent2features(sent):
    return [word2features(sent, i) for i in range(len(sent))]


def entity_f1(gold, predicted):
    import numpy as np

    from structperc.evaluate.metrics import evaluate_labels

    lengths = [len(s) for s in gold]
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat_gold = [label for s in gold for label in s]
    flat_predicted = [label for s in predicted for label in s]
    return evaluate_labels(flat_gold, flat_predicted, offsets, True)["f1"]


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def bench_structperc(trainer, X_train, y_train, X_test, y_test):
    from structperc import Tagger

    tagger = Tagger(trainer=trainer)  # the defaults: nothing tuned
    fit_seconds, _ = timed(lambda: tagger.fit(X_train, y_train))
    predict_seconds, predicted = timed(lambda: tagger.predict(X_test))
    return fit_seconds, predict_seconds, entity_f1(y_test, predicted), len(tagger.history_)


def bench_crfsuite(X_train, y_train, X_test, y_test):
    import sklearn_crfsuite

    crf = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=100, all_possible_transitions=True)
    fit_seconds, _ = timed(lambda: crf.fit(X_train, y_train))
    predict_seconds, predicted = timed(lambda: crf.predict(X_test))
    return fit_seconds, predict_seconds, entity_f1(y_test, predicted)


def _features(corpus):
    train = read_conll2002(corpus / "ned.train")
    test = read_conll2002(corpus / "ned.testb")
    return train, test, [sent2features(s) for s in train], [sent2features(s) for s in test]


def run_system(system, corpus):
    """One system's whole job in this process; prints its fit, predict and extraction seconds and F1 as JSON."""
    extract_seconds, (train, test, X_train, X_test) = timed(lambda: _features(corpus))
    y_train = [[t[-1] for t in s] for s in train]
    y_test = [[t[-1] for t in s] for s in test]
    epochs = None
    if system == "sklearn-crfsuite":
        fit, predict, f1 = bench_crfsuite(X_train, y_train, X_test, y_test)
    else:
        fit, predict, f1, epochs = bench_structperc(system.split()[-1], X_train, y_train, X_test, y_test)
    print(json.dumps({"fit": fit, "predict": predict, "f1": f1, "extract": extract_seconds, "epochs": epochs,
                      "sentences": len(train), "tokens": sum(len(s) for s in train), "test_sentences": len(test)}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpora" / "conll2002_nl"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--trainers", nargs="+", default=["crf", "perceptron"])
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "dicts.md"))
    parser.add_argument("--system", help=argparse.SUPPRESS)  # one system's process (run by the rounds)
    args = parser.parse_args()
    corpus = Path(args.corpus)
    if args.system is not None:
        return run_system(args.system, corpus)
    systems = [f"structperc {t}" for t in args.trainers] + ["sklearn-crfsuite"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    # a first structperc process loads (or compiles) the kernels into numba's cache outside the rounds
    warm = ("from structperc import Tagger; X = [[{'a': 'x'}, {'a': 'y'}]]; y = [['B-A', 'O']]\n"
            "for t in ('crf', 'perceptron'): Tagger(trainer=t, epochs=1).fit(X, y).predict(X)")
    run_process([sys.executable, "-c", warm], env=env)
    results = {name: [] for name in systems}
    load = [os.getloadavg()[0]]
    for run in range(args.runs):
        for name in systems:
            done = run_process([sys.executable, __file__, "--corpus", corpus, "--system", name], env=env)
            results[name].append((done.seconds, json.loads(done.stdout.strip().splitlines()[-1])))
            print(f"round {run + 1}: {name}: {done.seconds:.2f} s, {results[name][-1][1]}", flush=True)
    load.append(os.getloadavg()[0])

    def median(name, key):
        return statistics.median(r[0] if key == "process" else r[1][key] for r in results[name])

    ref_process, ref_fit = median("sklearn-crfsuite", "process"), median("sklearn-crfsuite", "fit")
    rows = []
    for name in systems:
        process, fit = median(name, "process"), median(name, "fit")
        rows.append(f"| {name} | {median(name, 'f1'):.2f} | {process:.2f} | {process / ref_process:.3f} | "
                    f"{fit:.2f} | {fit / ref_fit:.3f} | {median(name, 'predict'):.2f} |")
    from structperc.train import TRAINERS

    first = results[systems[0]][0][1]
    epochs_run = ", ".join(f"{name.split()[-1]} {'/'.join(str(r[1]['epochs']) for r in results[name])}"
                           for name in systems if name != "sklearn-crfsuite")
    header = ["| system | F1 | process (s) | process / sklearn-crfsuite's | fit (s) | fit / sklearn-crfsuite's "
              "| predict (s) |", "|---|---|---|---|---|---|---|"]
    text = "\n".join([
        "# Feature dicts: CoNLL-2002 Dutch NER, structperc's defaults vs sklearn-crfsuite",
        "",
        (f"`python benchmarks/bench_dicts.py --runs {args.runs}`: train ned.train ({first['sentences']:,} "
         f"sentences, {first['tokens']:,} tokens), test ned.testb ({first['test_sentences']:,} sentences); the "
         "feature function of sklearn-crfsuite's tutorial for both "
         f"({first['extract']:.1f} s to read and extract train + test in each process)."),
        ("sklearn-crfsuite: the tutorial's L-BFGS, c1 = c2 = 0.1, 100 iterations, all possible transitions. "
         "structperc: `Tagger(trainer=...)` with no other argument (the defaults: epochs until the rule's "
         f"training figures stop improving, at most perceptron {TRAINERS['perceptron'].epochs}, crf "
         f"{TRAINERS['crf'].epochs}; epochs run: {epochs_run}; the "
         "constraint chosen from the data, none for feature dicts; crf: averaged SGD starting at "
         "twice the calibrated learning rate, L2 c2 = 0.1; perceptron: averaged)."),
        ("F1: entity level (exact span and type) on ned.testb. process: the whole process (start-up, "
         "reading, feature extraction, fit, predict, scoring), wall clock; fit and predict: in-process "
         f"wall clock of `fit` and `predict` alone. Medians of {args.runs} rounds, each system once per "
         "round; ratios to sklearn-crfsuite's medians of the same run."),
        (f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}; load "
         f"average {load[0]:.2f} before the runs and {load[1]:.2f} after (the machine is shared)."),
        "",
        *header,
        *rows,
        "",
    ])
    Path(args.output).write_text(text, encoding="utf-8")
    write_section(RESULTS, SECTION, text.replace("# Feature dicts:", "## Feature dicts:", 1))
    refresh_figures()  # README.md and docs/ quote the results files between figures markers
    print(text)


if __name__ == "__main__":
    main()
