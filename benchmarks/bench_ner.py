"""The `ner` preset on CoNLL-2002 Dutch NER from the command line, against sklearn-crfsuite's tutorial, each
job timed as whole processes.

    python benchmarks/bench_ner.py [--corpus ../shared/corpora/conll2002_nl] [--runs 3]

structperc: ``structperc train ned.train --columns word,pos,ner --templates ner -m MODEL`` (no other
option: the default averaged perceptron and its epochs, the ``bio`` constraint chosen from the labels),
then ``structperc eval MODEL ned.testb --json``; the two processes are one job, timed as the sum of
their wall clocks. sklearn-crfsuite: the tutorial's feature function and arguments (L-BFGS,
c1 = c2 = 0.1, 100 iterations, all possible transitions) on the same files, run as
``bench_dicts.py --system sklearn-crfsuite`` (read, extract, fit, predict, score), timed whole.
Both F1 are entity level (exact span and type, as conlleval) on ned.testb. The jobs alternate in
rounds; medians of ``--runs`` rounds, with the ratio to sklearn-crfsuite's median of the same run.
Writes benchmarks/ner.md, which README.md and docs/benchmarks.md quote between figures markers.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

from process import run_process  # benchmarks/process.py (the script's folder is on sys.path)
from sections import refresh_figures  # benchmarks/sections.py

ROOT = Path(__file__).resolve().parent.parent
BENCH_DICTS = ROOT / "benchmarks" / "bench_dicts.py"
PRESET, PEER = "structperc `--templates ner`", "sklearn-crfsuite, the tutorial's features"


def structperc_job(corpus, model, env):
    """Train the preset and score ned.testb, each a whole CLI process: (seconds of both, F1)."""
    train = run_process([sys.executable, "-m", "structperc", "train", corpus / "ned.train",
                         "--columns", "word,pos,ner", "--templates", "ner", "-m", model], env=env)
    scored = run_process([sys.executable, "-m", "structperc", "eval", corpus / "ned.testb", "-m", model,
                          "--json"], env=env)
    return train.seconds + scored.seconds, json.loads(scored.stdout.strip().splitlines()[-1])["f1"]


def crfsuite_job(corpus, env):
    """sklearn-crfsuite's tutorial, read to score, as one whole process: (seconds, F1)."""
    done = run_process([sys.executable, BENCH_DICTS, "--corpus", corpus, "--system", "sklearn-crfsuite"], env=env)
    return done.seconds, json.loads(done.stdout.strip().splitlines()[-1])["f1"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpora" / "conll2002_nl"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "ner.md"))
    args = parser.parse_args()
    corpus = Path(args.corpus)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    results = {PRESET: [], PEER: []}
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "ner.npz"
        # an untimed first job loads (or compiles) the kernels into numba's cache outside the rounds
        structperc_job(corpus, model, env)
        for run in range(args.runs):
            results[PRESET].append(structperc_job(corpus, model, env))
            results[PEER].append(crfsuite_job(corpus, env))
            for name in results:
                print(f"round {run + 1}: {name}: {results[name][-1][0]:.2f} s, F1 {results[name][-1][1]:.2f}",
                      flush=True)
    load.append(os.getloadavg()[0])
    seconds = {name: statistics.median(s for s, _ in runs) for name, runs in results.items()}
    f1 = {name: statistics.median(f for _, f in runs) for name, runs in results.items()}
    text = "\n".join([
        "CoNLL-2002 Dutch NER from its CoNLL files (`python benchmarks/bench_ner.py`): "
        "`structperc train ned.train --columns word,pos,ner --templates ner` with no other option, then "
        "`structperc eval` on ned.testb, against sklearn-crfsuite with its tutorial's features and "
        "arguments. Entity F1 on ned.testb; seconds: whole processes (train + eval; sklearn-crfsuite: "
        f"read, extract, fit, predict), medians of {args.runs} rounds, ratio to sklearn-crfsuite's in the same "
        f"run; {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}, load "
        f"average {load[0]:.2f} before and {load[1]:.2f} after (a shared machine).",
        "",
        "| system | F1 (ned.testb) | process s | / sklearn-crfsuite |",
        "|---|---:|---:|---:|",
        *[f"| {name} | {f1[name]:.2f} | {seconds[name]:.2f} | {seconds[name] / seconds[PEER]:.3f} |"
          for name in results],
        "",
    ])
    Path(args.output).write_text(text, encoding="utf-8")
    refresh_figures()  # README.md and docs/benchmarks.md quote benchmarks/ner.md between figures markers
    print(text)


if __name__ == "__main__":
    main()
