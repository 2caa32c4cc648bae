"""Start-up: tagging a 2-sentence file as a whole process, against `python -c "import numpy, numba"`.

    python benchmarks/bench_startup.py [--corpus corpora/conll2000] [--rounds 10]

A small model is trained once (1 epoch, `chunk` templates; not timed). Then each round runs the two
commands one after the other, each a whole process timed from outside (wall clock around wait4), so
that a drift of the machine's speed touches both alike. A third command, a bare script that imports
numpy and numba and loads numba's compiler registries (what any numba program pays before its
first compiled call), shows how much of the gap is numba's own. Reports the medians and the median of
the per-round ratios; writes benchmarks/startup.md and refreshes the figures blocks that quote it.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from process import run_process  # benchmarks/process.py (the script's folder is on sys.path)
from sections import refresh_figures  # benchmarks/sections.py (the script's folder is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
REGISTRIES = ("import sys, numpy, numba\n"
              "from numba.core.registry import cpu_target\n"
              "sys.modules['scipy.linalg.cython_blas'] = None\n"
              "cpu_target.target_context.refresh()\n"
              "cpu_target.typing_context.refresh()\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "corpora" / "conll2000")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--output", type=Path, default=ROOT / "benchmarks" / "startup.md")
    args = parser.parse_args()
    structperc = Path(sys.executable).parent / "structperc"
    with tempfile.TemporaryDirectory(prefix="structperc-startup-") as tmp:
        tmp = Path(tmp)
        sentences = (args.corpus / "test.txt").read_text(encoding="utf-8").split("\n\n")[:2]
        two = tmp / "two.txt"
        two.write_text("\n\n".join(sentences) + "\n\n", encoding="utf-8")
        model = tmp / "m.npz"
        subprocess.run([structperc, "train", args.corpus / "train.txt", "--model", model, "--columns",
                        "word,pos,chunk", "--epochs", "1", "--quiet"], check=True)
        commands = {
            "structperc tag, 2 sentences": [structperc, "tag", two, "--model", model, "--output", tmp / "out.txt",
                                            "--quiet"],
            "python -c 'import numpy, numba'": [sys.executable, "-c", "import numpy, numba"],
            "import numpy, numba + numba's registries": [sys.executable, "-c", REGISTRIES],
        }
        for cmd in commands.values():
            run_process(cmd)  # warm the file cache and numba's cache, not counted
        runs = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, cmd in commands.items():
                runs[name].append(run_process(cmd).seconds)
    base = "python -c 'import numpy, numba'"
    lines = [f"# Start-up (`python benchmarks/bench_startup.py --rounds {args.rounds}`)", "",
             f"{args.rounds} rounds, each running the commands one after the other; whole processes, wall "
             f"seconds; load average {os.getloadavg()[0]:.2f} at the end.", "",
             "| command | median s (min-max) | median of per-round ratios to `import numpy, numba` |",
             "|---|---|---|"]
    for name, seconds in runs.items():
        ratio = statistics.median(a / b for a, b in zip(seconds, runs[base]))
        lines.append(f"| {name} | {statistics.median(seconds):.3f} ({min(seconds):.3f}-{max(seconds):.3f}) | "
                     f"{ratio:.2f} |")
    text = "\n".join(lines) + "\n\nTarget: tagging at most 2 × `import numpy, numba`.\n"
    args.output.write_text(text, encoding="utf-8")
    refresh_figures()  # README.md and docs/ quote the results file between figures markers
    print(text)


if __name__ == "__main__":
    main()
