"""structperc beside python-crfsuite on CoNLL-2000, same data, same `chunk` templates.

Every job is a separate process, timed as a whole (start, read, extract, train, save) with its
peak RSS from wait4. structperc's cold time is measured with an empty numba cache, the warm time
with the cache that run filled. Writes benchmarks/results.md and prints the table.

usage: python benchmarks/bench_conll2000.py [--corpus corpora/conll2000] [--skip-crfsuite]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def run_measured(cmd, env=None):
    """Like run, but also the peak RSS (MB) of the process, from os.wait4."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([str(c) for c in cmd], stdout=out, stderr=err, env=env, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(map(str, cmd))}\n{stderr}")
    return seconds, usage.ru_maxrss / 1024, stdout, stderr


def structperc_jobs(corpus, work, env, rows, trainer="perceptron", epochs=10, np_only=False, extra=()):
    averaged = "--no-average" not in extra
    kind = (" avg" if averaged else " noavg") if trainer == "perceptron" else ""
    name = f"structperc {trainer}{kind}, {epochs} epochs, {'NP' if np_only else 'all types'}"
    model = work / f"{trainer}{kind.strip()}-{'np' if np_only else 'all'}.npz"
    cmd = [BIN / "structperc", "train", corpus / "train.txt", "--model", model, "--columns", "word,pos,chunk",
           "--templates", "chunk", "--epochs", str(epochs), "--constrain", "bio", "--trainer", trainer,
           "--quiet", *(["--only-types", "NP"] if np_only else []), *extra]
    seconds, rss, _, _ = run_measured(cmd, env)
    seconds2, rss2, _, _ = run_measured(cmd, env)
    seconds, rss = min(seconds, seconds2), max(rss, rss2)
    _, _, out, _ = run_measured([BIN / "structperc", "eval", corpus / "test.txt", "--model", model, "--json"], env)
    f1 = json.loads(out)["f1"]
    rows.append({"job": name + " (train, whole process)", "seconds": seconds, "rss_mb": rss, "f1": f1,
                 "tokens_per_second": 211727 * epochs / seconds})
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT / "corpora" / "conll2000")
    parser.add_argument("--skip-crfsuite", action="store_true")
    parser.add_argument("--output", type=Path, default=ROOT / "benchmarks" / "results.md")
    args = parser.parse_args()
    corpus = args.corpus
    work = Path(tempfile.mkdtemp(prefix="structperc-bench-"))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(work / "numba-cache"))
    rows, notes = [], []
    from structperc.train import TRAINERS

    # cold: empty numba cache, so every kernel compiles
    cold_cmd = [BIN / "structperc", "train", corpus / "train.txt", "--model", work / "cold.npz", "--columns",
                "word,pos,chunk", "--templates", "chunk", "--epochs", "10", "--constrain", "bio", "--quiet"]
    cold_seconds, cold_rss, _, _ = run_measured(cold_cmd, env)
    _, _, _, _ = run_measured([BIN / "structperc", "tag", corpus / "test.txt", "--model", work / "cold.npz",
                               "--output", work / "cold.txt", "--quiet"], env)
    rows.append({"job": "structperc perceptron avg, 10 epochs, all types (train, cold numba cache)",
                 "seconds": cold_seconds, "rss_mb": cold_rss})

    model_all = structperc_jobs(corpus, work, env, rows)
    structperc_jobs(corpus, work, env, rows, np_only=True)
    structperc_jobs(corpus, work, env, rows, np_only=True, extra=("--no-average",))
    for trainer, epochs in (("crf", 20), ("hinge", 10), ("memm", 10)):
        if trainer in TRAINERS:
            structperc_jobs(corpus, work, env, rows, trainer=trainer, epochs=epochs, np_only=True)

    # tagging: timed inside the process (open input .. last output line) and as a whole process
    tag_cmd = [BIN / "structperc", "tag", corpus / "test.txt", "--model", model_all, "--output", work / "tagged.txt"]
    best = None
    for _ in range(3):
        seconds, rss, _, err = run_measured(tag_cmd, env)
        m = re.search(r"in ([0-9.]+)s \(([0-9,]+) tokens/s\)", err)
        inner = float(m.group(1))
        if best is None or inner < best[1]:
            best = (seconds, inner, rss)
    tokens = 47377
    rows.append({"job": "structperc tag, all types (inside the process: open input .. last line)",
                 "seconds": best[1], "tokens_per_second": tokens / best[1], "rss_mb": best[2]})
    rows.append({"job": "structperc tag, all types (whole process)", "seconds": best[0],
                 "tokens_per_second": tokens / best[0], "rss_mb": best[2]})

    if not args.skip_crfsuite:
        job = ROOT / "benchmarks" / "crfsuite_job.py"
        for algorithm, epochs, np_only in (("ap", 10, False), ("ap", 10, True), ("l2sgd", 20, True)):
            cmd = [sys.executable, job, corpus / "train.txt", corpus / "test.txt", algorithm, str(epochs)]
            cmd += ["NP"] if np_only else []
            seconds, rss, out, _ = run_measured(cmd)
            r = json.loads(out)
            label = f"python-crfsuite {algorithm}, {epochs} epochs, {'NP' if np_only else 'all types'}"
            rows.append({"job": label + " (extract + train)", "seconds": r["extract_seconds"] + r["train_seconds"],
                         "rss_mb": rss, "f1": r["f1"],
                         "detail": f"extract {r['extract_seconds']:.2f}s + train {r['train_seconds']:.2f}s"})
            rows.append({"job": label + " (tag: extract + tag)", "seconds": r["tag_seconds"],
                         "tokens_per_second": r["test_tokens"] / r["tag_seconds"]})
    shutil.rmtree(work, ignore_errors=True)

    lines = ["| job | seconds | tokens/s | peak RSS MB | F1 | note |", "|---|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append("| {job} | {s} | {tps} | {rss} | {f1} | {note} |".format(
            job=r["job"], s=f"{r['seconds']:.2f}", tps=f"{r['tokens_per_second']:,.0f}" if "tokens_per_second" in r else "",
            rss=f"{r['rss_mb']:.0f}" if "rss_mb" in r else "", f1=f"{r['f1']:.2f}" if "f1" in r else "",
            note=r.get("detail", "")))
    ratios = []
    by_job = {r["job"]: r for r in rows}
    sp = by_job.get("structperc perceptron avg, 10 epochs, all types (train, whole process)")
    cs = by_job.get("python-crfsuite ap, 10 epochs, all types (extract + train)")
    if sp and cs:
        ratios.append(f"- training, all types, averaged perceptron: structperc / python-crfsuite = "
                      f"{sp['seconds']:.2f} / {cs['seconds']:.2f} = {sp['seconds'] / cs['seconds']:.3f} (target <= 0.333)")
    sp = by_job.get("structperc crf, 20 epochs, NP (train, whole process)")
    cs = by_job.get("python-crfsuite l2sgd, 20 epochs, NP (extract + train)")
    if sp and cs:
        ratios.append(f"- CRF SGD, NP, 20 epochs: structperc / python-crfsuite = {sp['seconds']:.2f} / "
                      f"{cs['seconds']:.2f} = {sp['seconds'] / cs['seconds']:.3f} (target <= 0.5)")
    text = "\n".join(["# CoNLL-2000 benchmark", "", f"Machine: {os.cpu_count()} cores; `make bench`.", "",
                      *lines, "", *ratios, ""])
    args.output.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
