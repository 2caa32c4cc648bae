"""A first result from a fresh clone: `make demo` against python-crfsuite training the same chunker.

    python benchmarks/bench_first_run.py [--rounds 3]

Each round clones this repository (its committed HEAD) into a new temporary folder, with
`../shared` beside the clone pointing at the corpus mirror, as CI lays it out, and times
`make demo` there as a whole process: venv, install, fetch CoNLL-2000, train the NP chunker
(10 epochs), evaluate, with a cold numba cache and an empty user cache (XDG_CACHE_HOME a new
folder: no named model is built before, and the demo builds none). In the same round python-crfsuite trains the same
NP chunker (averaged perceptron, 10 iterations, CRFsuite's chunking features extracted in Python:
`crfsuite_job.py`) as a whole process, so a drift of the machine's speed touches both alike.
Writes benchmarks/first_run.md: medians and the median of the per-round ratios. Target: 6x.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from process import run_process  # benchmarks/process.py (the script's folder is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
MIRROR = Path(os.environ.get("STRUCTPERC_MIRROR") or ROOT.parent / "shared" / "corpora")
USER_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
PIP_CACHE = os.environ.get("PIP_CACHE_DIR") or str(USER_CACHE / "pip")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", type=Path, default=ROOT / "benchmarks" / "first_run.md")
    args = parser.parse_args()
    commit = subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%h"], check=True, capture_output=True,
                            text=True).stdout.strip()
    # the clone's make runs with the user's environment, less what would point it at this checkout
    skipped = ("PYTHONPATH", "NUMBA_", "STRUCTPERC_", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skipped)}
    demo, warm, crfsuite = [], [], []
    for _ in range(args.rounds):
        folder = Path(tempfile.mkdtemp(prefix="structperc-first-run-"))
        try:
            clone = folder / "structperc"
            subprocess.run(["git", "clone", "--quiet", ROOT, clone], check=True)
            (folder / "shared").symlink_to(MIRROR.parent)
            # no model cache, as on a new machine; pip keeps the cache it had (not a download benchmark)
            fresh = {**env, "XDG_CACHE_HOME": str(folder / "cache"), "PIP_CACHE_DIR": PIP_CACHE}
            demo.append(run_process(["make", "-C", clone, "demo"], fresh).seconds)
            warm.append(run_process(["make", "-C", clone, "demo"], fresh).seconds)
            train = clone / "corpora" / "conll2000" / "train.txt"
            crfsuite.append(run_process([sys.executable, ROOT / "benchmarks" / "crfsuite_job.py", "train", train,
                                         folder / "np.crfsuite", "ap", "10", "-", "NP"]).seconds)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    ratio = statistics.median(a / b for a, b in zip(demo, crfsuite))

    def cell(runs):
        return f"{statistics.median(runs):.1f} ({min(runs):.1f}-{max(runs):.1f})"

    text = "\n".join([
        f"# First run (`python benchmarks/bench_first_run.py --rounds {args.rounds}`, commit {commit})", "",
        f"{args.rounds} rounds; each clones the repository afresh (`../shared` beside it) and runs the jobs one after "
        f"the other as whole processes; wall seconds, median (min-max); load average {os.getloadavg()[0]:.2f} "
        "at the end.",
        "",
        "| job | seconds |",
        "|---|---|",
        "| `make demo` in a fresh clone (venv, install, fetch, train, eval; kernels compiled on first use) | "
        f"{cell(demo)} |",
        f"| `make demo` again in the same clone (installed, kernels cached) | {cell(warm)} |",
        f"| python-crfsuite: the same NP chunker, 10 AP iterations, features extracted in Python | {cell(crfsuite)} |",
        "",
        f"Fresh `make demo` / python-crfsuite: median of the per-round ratios **{ratio:.1f}** (target: at most 6).",
        "",
    ])
    args.output.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
