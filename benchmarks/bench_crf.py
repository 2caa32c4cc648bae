"""``structperc.CRF`` against sklearn-crfsuite's ``CRF``, same arguments, same tutorial features, from 500
training sentences to the full ned.train.

    python benchmarks/bench_crf.py [--corpus ../shared/corpora/conll2002_nl] [--runs 3] [--quick]

Both get sklearn-crfsuite's tutorial arguments, CRF(algorithm="lbfgs", c1=0.1, c2=0.1,
max_iterations=100, all_possible_transitions=True), and the dicts of its tutorial's feature function
(``bench_dicts.sent2features``) on CoNLL-2002 Dutch: trained on the first 500, 1,000 and 3,000
sentences of ned.train and on all of it, scored on ned.testb by entity F1. Each run is a whole
process (``process.py``: import, read, extract, fit, predict, score); the process reports its
in-process fit time, its iterations and its objective evaluations (CRFsuite's: one at the start and
one per line-search trial), and the tables give fit and process time, medians of ``--runs`` rounds
with the ratio to sklearn-crfsuite's medians of the same run. The systems alternate within a round,
so that a drift of the machine's speed touches both alike.

Beside the warm sweep (numba's cache loaded by an untimed process first):
- cold: structperc's whole process on 1,000 sentences with an empty numba cache (a new folder in
  NUMBA_CACHE_DIR each run), against the warm one: the difference is the compiling;
- busy: the full ned.train with one busy process (a Python loop) running beside each system;
- cross_val_score(CRF(...), X, y, cv=5) on 1,000 sentences, each system a whole process.

Writes benchmarks/crf.md and refreshes the figures blocks of README.md and docs/ that quote it.
``--quick`` (500 and 1,000 sentences, one round, cross_val_score on 500, no cold or busy runs) prints
its tables and writes nothing unless ``--output`` is given.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from process import run_process  # benchmarks/process.py (the script's folder is on sys.path)
from sections import refresh_figures  # benchmarks/sections.py

ROOT = Path(__file__).resolve().parent.parent
ARGUMENTS = {"algorithm": "lbfgs", "c1": 0.1, "c2": 0.1, "max_iterations": 100, "all_possible_transitions": True}
SYSTEMS = ("sklearn-crfsuite", "structperc")
SIZES = (500, 1000, 3000, None)  # None: the full ned.train
CV_SENTENCES = 1000
COLD_SENTENCES = 1000


def _read(corpus, sentences):
    from bench_dicts import read_conll2002, sent2features

    train = read_conll2002(Path(corpus) / "ned.train")[:sentences]
    return [sent2features(s) for s in train], [[t[-1] for t in s] for s in train]


def _crf(system):
    if system == "structperc":
        from structperc import CRF
    else:
        from sklearn_crfsuite import CRF
    return CRF(**ARGUMENTS)


def _evaluations(system, crf):
    """(iterations, objective evaluations) of a fit."""
    log = crf.training_log_.iterations
    if system == "structperc":
        return len(log), 1 + sum(entry.get("evaluations", 0) for entry in log)
    return len(log), 1 + sum(entry.get("linesearch_trials", 0) for entry in log)


def fit_job(system, corpus, sentences):
    """One whole run of ``system``: prints a JSON line with its fit seconds, F1, iterations, evaluations."""
    from bench_dicts import entity_f1, read_conll2002, sent2features

    X_train, y_train = _read(corpus, sentences)
    test = read_conll2002(Path(corpus) / "ned.testb")
    X_test, y_test = [sent2features(s) for s in test], [[t[-1] for t in s] for s in test]
    crf = _crf(system)
    start = time.perf_counter()
    crf.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start
    predicted = [list(s) for s in crf.predict(X_test)]
    iterations, evaluations = _evaluations(system, crf)
    print(json.dumps({"fit": fit_seconds, "f1": entity_f1(y_test, predicted), "iterations": iterations,
                      "evaluations": evaluations}))


def cv_job(system, corpus, sentences):
    """cross_val_score(CRF(...), X, y, cv=5) in one process: prints the mean score."""
    from sklearn.model_selection import cross_val_score

    X, y = _read(corpus, sentences)
    scores = cross_val_score(_crf(system), X, y, cv=5)
    print(json.dumps({"score": float(scores.mean())}))


def median(runs, key):
    return statistics.median(run[key] for run in runs)


def size_name(sentences, n_full):
    return f"{sentences:,}" if sentences else f"all ({n_full:,})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpora" / "conll2002_nl"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="500 and 1,000 sentences, one round, no cold or busy")
    parser.add_argument("--output", default=None, help="default benchmarks/crf.md (none with --quick)")
    parser.add_argument("--job", choices=("fit", "cv"), help=argparse.SUPPRESS)
    parser.add_argument("--system", choices=SYSTEMS, help=argparse.SUPPRESS)
    parser.add_argument("--sentences", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.job == "fit":
        return fit_job(args.system, args.corpus, args.sentences)
    if args.job == "cv":
        return cv_job(args.system, args.corpus, args.sentences)
    runs = 1 if args.quick else args.runs
    sizes = (500, 1000) if args.quick else SIZES
    cv_sentences = 500 if args.quick else CV_SENTENCES
    output = args.output or (None if args.quick else str(ROOT / "benchmarks" / "crf.md"))
    base_env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "benchmarks"), str(ROOT),
                                                              os.environ.get("PYTHONPATH", "")])}

    def command(job, system, sentences):
        extra = ["--sentences", str(sentences)] if sentences else []
        return [sys.executable, __file__, "--job", job, "--system", system, "--corpus", args.corpus, *extra]

    def measure(job, system, sentences, env=base_env):
        run = run_process(command(job, system, sentences), env)
        result = {**json.loads(run.stdout.strip().splitlines()[-1]), "process": run.seconds, "rss": run.rss_mb}
        print(f"{job} {system} {sentences or 'all'}: {result}", flush=True)
        return result

    from bench_dicts import read_conll2002

    n_full = len(read_conll2002(Path(args.corpus) / "ned.train"))
    load = [os.getloadavg()[0]]
    run_process(command("fit", "structperc", 50), base_env)  # numba's cache loaded (compiled if cold), untimed
    sweep = {size: {system: [] for system in SYSTEMS} for size in sizes}
    cv = {system: [] for system in SYSTEMS}
    for _ in range(runs):
        for size in sizes:
            for system in SYSTEMS:
                sweep[size][system].append(measure("fit", system, size))
        for system in SYSTEMS:
            cv[system].append(measure("cv", system, cv_sentences))
    busy, cold = {system: [] for system in SYSTEMS}, []
    if not args.quick:
        for _ in range(runs):
            for system in SYSTEMS:
                loop = subprocess.Popen([sys.executable, "-c", "while True: pass"])
                try:
                    busy[system].append(measure("fit", system, None))
                finally:
                    loop.kill()
                    loop.wait()
        for _ in range(runs):
            folder = tempfile.mkdtemp(prefix="numba-cold-")
            try:
                cold.append(measure("fit", "structperc", COLD_SENTENCES, {**base_env, "NUMBA_CACHE_DIR": folder}))
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    load.append(os.getloadavg()[0])

    arguments = ", ".join(f"{k}={v!r}" for k, v in ARGUMENTS.items())
    lines = [
        "# structperc.CRF vs sklearn-crfsuite's CRF: the same arguments on CoNLL-2002 Dutch",
        "",
        f"`python benchmarks/bench_crf.py --runs {runs}{' --quick' if args.quick else ''}`: `CRF({arguments})` "
        "from each library on the dicts of sklearn-crfsuite's tutorial feature function, trained on the first "
        "sentences of ned.train (or all of them), entity F1 (seqeval) on ned.testb. Each run is a whole process "
        "(import, read, extract features, fit, predict); `fit` is its in-process fit time, `process` its wall "
        "time; evaluations count the objective at the start and at each line-search trial. "
        f"Medians of {runs} rounds; ratios to sklearn-crfsuite's medians in this run.",
        f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}; load average "
        f"{load[0]:.2f} before the runs and {load[1]:.2f} after.",
        "",
        "## By training size (warm)",
        "",
        "| training sentences | F1 structperc / sklearn-crfsuite | iterations, evaluations structperc "
        "| iterations, evaluations sklearn-crfsuite | fit (s) structperc / sklearn-crfsuite | fit ratio "
        "| process (s) structperc / sklearn-crfsuite | process ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size in sizes:
        ours, peer = sweep[size]["structperc"], sweep[size]["sklearn-crfsuite"]
        lines.append(
            f"| {size_name(size, n_full)} | {median(ours, 'f1'):.2f} / {median(peer, 'f1'):.2f} "
            f"| {median(ours, 'iterations'):.0f}, {median(ours, 'evaluations'):.0f} "
            f"| {median(peer, 'iterations'):.0f}, {median(peer, 'evaluations'):.0f} "
            f"| {median(ours, 'fit'):.2f} / {median(peer, 'fit'):.2f} "
            f"| {median(ours, 'fit') / median(peer, 'fit'):.3f} "
            f"| {median(ours, 'process'):.2f} / {median(peer, 'process'):.2f} "
            f"| {median(ours, 'process') / median(peer, 'process'):.3f} |")
    if None in sizes:
        full = sweep[None]
        reference = {key: median(full["sklearn-crfsuite"], key) for key in ("fit", "process")}
        lines += ["", "## The full ned.train", "",
                  "| system | F1 | iterations | fit (s) | fit / sklearn-crfsuite | process (s) "
                  "| process / sklearn-crfsuite | peak RSS (MB) |",
                  "|---|---|---|---|---|---|---|---|"]
        lines += [f"| {system} | {median(full[system], 'f1'):.2f} | {median(full[system], 'iterations'):.0f} "
                  f"| {median(full[system], 'fit'):.2f} | {median(full[system], 'fit') / reference['fit']:.3f} "
                  f"| {median(full[system], 'process'):.2f} "
                  f"| {median(full[system], 'process') / reference['process']:.3f} "
                  f"| {median(full[system], 'rss'):.0f} |" for system in SYSTEMS]
    if busy["structperc"]:
        reference = {key: median(busy["sklearn-crfsuite"], key) for key in ("fit", "process")}
        lines += ["", "## The full ned.train with one busy process beside", "",
                  "A Python loop (`while True: pass`) runs beside each system's process for its whole run.", "",
                  "| system, one busy process beside | fit (s) | fit / sklearn-crfsuite | process (s) "
                  "| process / sklearn-crfsuite |",
                  "|---|---|---|---|---|"]
        lines += [f"| {system}, busy | {median(busy[system], 'fit'):.2f} "
                  f"| {median(busy[system], 'fit') / reference['fit']:.3f} | {median(busy[system], 'process'):.2f} "
                  f"| {median(busy[system], 'process') / reference['process']:.3f} |" for system in SYSTEMS]
    reference = median(cv["sklearn-crfsuite"], "process")
    lines += ["", f"## cross_val_score(CRF(...), X, y, cv=5) on {cv_sentences:,} sentences", "",
              "One whole process each: import, read, extract, five fits and scores (token accuracy, each "
              "estimator's `score`).", "",
              "| system, cross_val_score | mean score | process (s) | process / sklearn-crfsuite |",
              "|---|---|---|---|"]
    lines += [f"| {system}, cv=5 | {median(cv[system], 'score'):.4f} | {median(cv[system], 'process'):.2f} "
              f"| {median(cv[system], 'process') / reference:.3f} |" for system in SYSTEMS]
    if cold:
        warm = sweep[COLD_SENTENCES]["structperc"]
        lines += ["", f"## Cold: an empty numba cache, {COLD_SENTENCES:,} sentences", "",
                  "structperc's whole process with NUMBA_CACHE_DIR a new empty folder, against the warm runs "
                  "above; the difference is the compiling.", "",
                  "| structperc, 1,000 sentences | fit (s) | process (s) |", "|---|---|---|",
                  f"| cold | {median(cold, 'fit'):.2f} | {median(cold, 'process'):.2f} |",
                  f"| warm | {median(warm, 'fit'):.2f} | {median(warm, 'process'):.2f} |",
                  f"| cold - warm | {median(cold, 'fit') - median(warm, 'fit'):.2f} "
                  f"| {median(cold, 'process') - median(warm, 'process'):.2f} |"]
    text = "\n".join(lines) + "\n"
    if output:
        Path(output).write_text(text, encoding="utf-8")
        if Path(output).resolve() == (ROOT / "benchmarks" / "crf.md").resolve():
            refresh_figures()
    print(text)


if __name__ == "__main__":
    main()
