"""What the stopping rules cost in fit time against the former fixed epochs, measured in one process
so that both see the same load: ``Tagger(trainer=...)`` with epochs=None (the rules) and with the
former counts (crf 10, perceptron 15) on the tutorial's feature dicts of ned.train, interleaved,
medians of ``--rounds`` rounds.

    python experiments/stopping_cost.py [--corpus ../shared/corpora/conll2002_nl] [--rounds 3]

Writes experiments/results/stopping_cost.md.
"""
import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_dicts import read_conll2002, sent2features  # noqa: E402
from structperc import Tagger  # noqa: E402

OUTPUT = ROOT / "experiments" / "results" / "stopping_cost.md"
FORMER = {"crf": 10, "perceptron": 15}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpora" / "conll2002_nl"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    train = read_conll2002(Path(args.corpus) / "ned.train")
    X, y = [sent2features(s) for s in train], [[t[-1] for t in s] for s in train]
    for trainer in FORMER:  # compile (or load) the kernels outside the rounds
        Tagger(trainer=trainer, epochs=1).fit(X[:50], y[:50])
    seconds, epochs = {}, {}
    load = [os.getloadavg()[0]]
    for _ in range(args.rounds):
        for trainer, former in FORMER.items():
            for name, given in (("former", former), ("rule", None)):
                start = time.perf_counter()
                tagger = Tagger(trainer=trainer, epochs=given).fit(X, y)
                seconds.setdefault((trainer, name), []).append(time.perf_counter() - start)
                epochs[trainer, name] = len(tagger.history_)
    load.append(os.getloadavg()[0])
    lines = [
        "# What the stopping rules cost, against the former fixed epochs",
        "",
        f"`python experiments/stopping_cost.py`: `Tagger(trainer=...).fit` on the tutorial's feature dicts of "
        f"ned.train ({len(X):,} sentences), with the former epochs and with the stopping rule, interleaved in one "
        f"process; medians of {args.rounds} rounds. Machine: {os.cpu_count()} cores, {platform.machine()}, Python "
        f"{platform.python_version()}; load average {load[0]:.2f} before and {load[1]:.2f} after (shared).",
        "",
        "| trainer | former: epochs | fit (s) | rule: epochs | fit (s) | rule / former |",
        "|---|---|---|---|---|---|",
    ]
    for trainer in FORMER:
        a, b = (statistics.median(seconds[trainer, n]) for n in ("former", "rule"))
        lines.append(f"| {trainer} | {epochs[trainer, 'former']} | {a:.2f} | {epochs[trainer, 'rule']} | {b:.2f} "
                     f"| {b / a:.2f} |")
    OUTPUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
