"""``structperc.CRF`` against sklearn-crfsuite's ``CRF``, same arguments, same tutorial features.

    python benchmarks/bench_crf.py [--corpus ../shared/corpora/conll2002_nl] [--runs 3]

Both get sklearn-crfsuite's tutorial arguments, CRF(algorithm="lbfgs", c1=0.1, c2=0.1,
max_iterations=100, all_possible_transitions=True), and the dicts of its tutorial's feature function
(``bench_dicts.sent2features``) on CoNLL-2002 Dutch: train ned.train, score ned.testb by entity F1
(seqeval). Each fit runs as a whole process (``process.py``: read, extract, fit, predict, score); the
process reports its in-process fit time, and the table gives both, medians over the rounds, with the
ratio to sklearn-crfsuite's within the run. The systems alternate in rounds, so that a drift of the
machine's speed touches both alike. One untimed structperc process first loads numba's cache.
Writes benchmarks/crf.md.
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

ROOT = Path(__file__).resolve().parent.parent
ARGUMENTS = {"algorithm": "lbfgs", "c1": 0.1, "c2": 0.1, "max_iterations": 100, "all_possible_transitions": True}
SYSTEMS = ("sklearn-crfsuite", "structperc")


def job(system, corpus, sentences=None):
    """One whole run of ``system``: prints a JSON line with its fit seconds, F1 and iterations."""
    from seqeval.metrics import f1_score

    from bench_dicts import read_conll2002, sent2features

    train = read_conll2002(Path(corpus) / "ned.train")[:sentences]
    test = read_conll2002(Path(corpus) / "ned.testb")
    X_train, y_train = [sent2features(s) for s in train], [[t[-1] for t in s] for s in train]
    X_test, y_test = [sent2features(s) for s in test], [[t[-1] for t in s] for s in test]
    if system == "structperc":
        from structperc import CRF
    else:
        from sklearn_crfsuite import CRF
    crf = CRF(**ARGUMENTS)
    start = time.perf_counter()
    crf.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start
    predicted = [list(s) for s in crf.predict(X_test)]
    iterations = len(crf.training_log_.iterations)
    print(json.dumps({"fit": fit_seconds, "f1": 100 * f1_score(y_test, predicted), "iterations": iterations}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpora" / "conll2002_nl"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "crf.md"))
    parser.add_argument("--job", choices=SYSTEMS, help=argparse.SUPPRESS)
    parser.add_argument("--sentences", type=int, default=None, help=argparse.SUPPRESS)  # a quick check
    args = parser.parse_args()
    if args.job:
        return job(args.job, args.corpus, args.sentences)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}

    def command(system, sentences=None):
        extra = ["--sentences", str(sentences)] if sentences else []
        return [sys.executable, __file__, "--job", system, "--corpus", args.corpus, *extra]

    run_process(command("structperc", 50), env)  # numba's cache loaded (compiled if cold), untimed
    results = {system: [] for system in SYSTEMS}
    load = [os.getloadavg()[0]]
    for round_ in range(args.runs):
        for system in SYSTEMS:
            run = run_process(command(system), env)
            results[system].append({**json.loads(run.stdout.strip().splitlines()[-1]), "process": run.seconds,
                                    "rss": run.rss_mb})
            print(f"round {round_ + 1}: {system}: {results[system][-1]}", flush=True)
    load.append(os.getloadavg()[0])

    def median(system, key):
        return statistics.median(r[key] for r in results[system])

    reference = {key: median("sklearn-crfsuite", key) for key in ("fit", "process")}
    rows = [f"| {system} | {median(system, 'f1'):.2f} | {median(system, 'iterations'):.0f} "
            f"| {median(system, 'fit'):.2f} "
            f"| {median(system, 'fit') / reference['fit']:.3f} | {median(system, 'process'):.2f} "
            f"| {median(system, 'process') / reference['process']:.3f} | {median(system, 'rss'):.0f} |"
            for system in SYSTEMS]
    arguments = ", ".join(f"{k}={v!r}" for k, v in ARGUMENTS.items())
    text = "\n".join([
        "# structperc.CRF vs sklearn-crfsuite's CRF: the same arguments on CoNLL-2002 Dutch",
        "",
        f"`python benchmarks/bench_crf.py --runs {args.runs}`: `CRF({arguments})` from each library on the "
        "dicts of sklearn-crfsuite's tutorial feature function, trained on ned.train, entity F1 (seqeval) on "
        "ned.testb. Each run is a whole process (read, extract features, fit, predict); `fit` is its in-process "
        f"fit time, `process` its wall time. Medians of {args.runs} rounds; ratios to sklearn-crfsuite within "
        "this run.",
        f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}; load average "
        f"{load[0]:.2f} before the runs and {load[1]:.2f} after.",
        "",
        "| system | F1 | iterations | fit (s) | fit / sklearn-crfsuite | process (s) | process / sklearn-crfsuite "
        "| peak RSS (MB) |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
    ])
    Path(args.output).write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
