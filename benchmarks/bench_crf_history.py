"""The CRF's time at several commits, measured in one run: was the 0.270-0.511 range a slowdown?

    python benchmarks/bench_crf_history.py [--corpus corpora/conll2000] [--rounds 3] [COMMIT ...]

Each commit's package is exported with ``git archive`` into a temporary folder (the repository is
not touched) and trains the NP chunker of ``bench_conll2000.py``'s CRF row (``chunk`` templates,
20 epochs, ``--constrain bio``) as a whole process. Each commit first runs once to compile its
kernels (not timed); then every round runs every commit once, so a drift of the machine's speed
touches all alike. Writes benchmarks/crf_history.md: median (min-max) seconds per commit and the
median of the per-round ratios to the first commit.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from process import run_process  # benchmarks/process.py (the script's folder is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
# b949361: the 0.270 run; 9b0f863: the 0.469 run; 2da8b49 and 93bea14: the emission kernel rewrites
# before the 0.470-0.511 runs; HEAD: now
DEFAULT_COMMITS = ["b949361", "9b0f863", "2da8b49^", "93bea14", "HEAD"]


def export(commit, folder):
    """The package of ``commit`` into ``folder``; returns its full hash and one-line subject."""
    archive = subprocess.run(["git", "-C", ROOT, "archive", commit, "structperc"], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%h %ad", "--date=short", commit],
                          check=True, capture_output=True, text=True).stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commits", nargs="*", default=DEFAULT_COMMITS)
    parser.add_argument("--corpus", type=Path, default=ROOT / "corpora" / "conll2000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", type=Path, default=ROOT / "benchmarks" / "crf_history.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="structperc-crf-history-") as tmp:
        tmp = Path(tmp)
        jobs = {}
        for i, commit in enumerate(args.commits):
            folder = tmp / f"c{i}"
            folder.mkdir()
            label = export(commit, folder)
            env = dict(os.environ, PYTHONPATH=str(folder), NUMBA_CACHE_DIR=str(folder / "numba-cache"))
            cmd = [sys.executable, "-m", "structperc", "train", args.corpus / "train.txt", "--model",
                   folder / "crf.npz", "--columns", "word,pos,chunk", "--templates", "chunk", "--epochs", "20",
                   "--constrain", "bio", "--trainer", "crf", "--only-types", "NP", "--quiet"]
            run_process(cmd, env)  # compiles the kernels; not timed
            jobs[f"`{commit}` ({label})"] = (cmd, env)
        runs = {name: [] for name in jobs}
        for _ in range(args.rounds):
            for name, (cmd, env) in jobs.items():
                runs[name].append(run_process(cmd, env).seconds)
    first = next(iter(runs))
    lines = [f"# The CRF at several commits (`python benchmarks/bench_crf_history.py --rounds {args.rounds}`)", "",
             "CoNLL-2000 NP, `chunk` templates, CRF by SGD, 20 epochs, as a whole process (start, read, train, "
             f"save); {args.rounds} rounds, each running every commit once; load average "
             f"{os.getloadavg()[0]:.2f} at the end.", "",
             f"| commit | seconds, median (min-max) | median of per-round ratios to {first.split()[0]} |",
             "|---|---|---:|"]
    for name, seconds in runs.items():
        ratio = statistics.median(a / b for a, b in zip(seconds, runs[first]))
        lines.append(f"| {name} | {statistics.median(seconds):.2f} ({min(seconds):.2f}-{max(seconds):.2f}) | "
                     f"{ratio:.2f} |")
    text = "\n".join(lines) + "\n"
    args.output.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
