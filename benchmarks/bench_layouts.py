"""Where the layout for many labels starts to pay: UD English EWT tagged with label sets of growing
size (UPOS 17, XPOS ~50, UPOS+FEATS 321), each trained with every pair and no tag dictionary (the
layout of small label sets) and with the layout ``structperc.model.layouts`` takes for many labels
(gold pairs, dense count 50, tag dictionary 1). 5 epochs, `pos-rich`, averaged perceptron; whole
training processes (seconds, peak RSS), accuracy on en_ewt-ud-dev (never test). The rows decide
``MANY_LABELS``: the smallest label count where the layout for many labels is no less accurate.

usage: python benchmarks/bench_layouts.py [--data corpora/ud_english_ewt] [--epochs 5] [--runs 1]
           [--out benchmarks/layouts.md]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from process import run_process  # benchmarks/process.py (the script's folder is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
LAYOUTS = {"every pair, no tag dict": ["--all-pairs", "--tag-dict", "0"],
           "gold pairs, dense count 50, tag dict 1": ["--gold-pairs", "--dense-count", "50", "--tag-dict", "1"]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(ROOT / "corpora" / "ud_english_ewt"))
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--labels", default="upos,xpos,upos+feats")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    train = Path(args.data) / "en_ewt-ud-train.conllu"
    dev = Path(args.data) / "en_ewt-ud-dev.conllu"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label in args.labels.split(","):
            for name, flags in LAYOUTS.items():
                model = Path(tmp) / "m.npz"
                cmd = [sys.executable, "-m", "structperc", "train", str(train), "--model", str(model), "--label",
                       label, "--templates", "pos-rich", "--epochs", str(args.epochs), "--quiet", *flags]
                runs = [run_process(cmd, env) for _ in range(args.runs)]
                out = run_process([sys.executable, "-m", "structperc", "eval", str(dev), "--model", str(model),
                                   "--json"], env).stdout
                info = json.loads(run_process([sys.executable, "-m", "structperc", "info", str(model), "--json",
                                               "--top", "0"], env).stdout)
                rows.append((label, len(info["labels"]), name, statistics.median(r.seconds for r in runs),
                             statistics.median(r.rss_mb for r in runs), json.loads(out)["accuracy"]))
                print(rows[-1], file=sys.stderr, flush=True)
    lines = [f"EWT train, `pos-rich`, {args.epochs} epochs; {args.runs} whole training process(es) per row "
             "(median); accuracy on en_ewt-ud-dev.", "",
             "| label | labels | layout | train seconds | peak RSS MB | dev accuracy % |", "|---|---|---|---|---|---|"]
    lines += [f"| {a} | {n} | {b} | {s:.1f} | {m:.0f} | {acc:.2f} |" for a, n, b, s, m, acc in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
