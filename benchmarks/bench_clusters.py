"""Time `structperc clusters` as a whole process (wall time, CPU time, peak RSS, merges/s).

Default input: the unlabelled English mirror plus the EWT training words, C = 256, min-count 3 (the
setting of the wcluster anchor). With --wcluster PATH, Liang's wcluster binary is timed on the same
words (written one sentence per line, tokens as the structperc readers and tokenizer give them) for
a side-by-side figure, in rounds (its encoded copy of the text removed before each run).

    PYTHONPATH=$PWD python benchmarks/bench_clusters.py --output /tmp/paths_c256.txt
    PYTHONPATH=$PWD python benchmarks/bench_clusters.py --runs 3 --clusters 100
    python benchmarks/bench_clusters.py --runs 3 --wcluster PATH --report benchmarks/clusters.md

With --report, the report is written there and every figures block of README.md and docs/ that quotes it is refreshed.

Timing on a shared machine is noisy: report the median of several runs and the spread.
"""
import argparse
import glob
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from process import run_process  # benchmarks/process.py (the script's folder is on sys.path)
from sections import refresh_figures  # benchmarks/sections.py (the script's folder is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
MIRROR = Path(os.environ.get("STRUCTPERC_MIRROR", "/work/shared/corpora"))
COMMAND = ("import sys\n"
           "from structperc.cli.main import main\n"
           "sys.argv[1:1] = ['clusters']\n"
           "main()\n")


def default_inputs():
    files = sorted(glob.glob(str(MIRROR / "unlabeled_en" / "*.txt")))
    ewt = ROOT / "corpora" / "ud_english_ewt" / "en_ewt-ud-train.conllu"
    return files + [str(ewt)]


def write_wcluster_text(inputs, path):
    from structperc.clusters.brown import read_sentences

    with open(path, "w", encoding="utf-8") as out:
        for name in inputs:
            for sentence in read_sentences(name):
                out.write(" ".join(sentence) + "\n")


def _row(name, runs):
    def cell(values, fmt):
        return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}-{max(values):{fmt}})"
    return (f"| {name} | {cell([r[0] for r in runs], '.1f')} | {cell([r[1] for r in runs], '.1f')} | "
            f"{cell([r[2] for r in runs], '.0f')} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="*", help="input files (default: unlabeled_en + EWT train)")
    parser.add_argument("--clusters", type=int, default=256)
    parser.add_argument("--min-count", type=int, default=3)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--output", default=None, help="keep the paths file here")
    parser.add_argument("--wcluster", default=None, help="path of Liang's wcluster binary, to time it too")
    parser.add_argument("--report", default=None, help="write the table (markdown) here")
    args = parser.parse_args()
    inputs = args.inputs or default_inputs()
    output = args.output or tempfile.mktemp(suffix=".paths")
    argv = [sys.executable, "-c", COMMAND, *inputs, "--n-clusters", str(args.clusters),
            "--min-count", str(args.min_count), "--output", output, "--json", "--quiet"]
    folder = tempfile.TemporaryDirectory(prefix="structperc-wcluster-") if args.wcluster else None
    if args.wcluster:
        text = Path(folder.name) / "text.txt"
        write_wcluster_text(inputs, text)  # the same words, tokenized once (not timed)
        wargv = [args.wcluster, "--text", str(text), "--c", str(args.clusters),
                 "--min-occur", str(args.min_count), "--threads", "1", "--output_dir", str(Path(folder.name) / "out")]
    runs, wruns = [], []
    for run in range(args.runs):  # rounds: structperc, then wcluster, so a drift touches both
        wall, cpu, rss, stdout, _ = run_process(argv)
        summary = json.loads(stdout)
        runs.append((wall, cpu, rss, summary))
        print(f"run {run + 1}: {wall:.1f}s wall, {cpu:.1f}s cpu, peak RSS {rss:.0f} MiB, "
              f"{summary['words']:,} words, {summary['tokens']:,} tokens, "
              f"{summary['merges']:,} merges, {summary['merges_per_second']:,.0f} merges/s "
              f"(clustering only), AMI {summary['ami']:.4f}", flush=True)
        if args.wcluster:
            for cached in (text.with_name("text.txt.int"), text.with_name("text.txt.strdb")):
                cached.unlink(missing_ok=True)  # wcluster would reuse its encoded copy of the text
            wall, cpu, rss, _, _ = run_process(wargv)
            wruns.append((wall, cpu, rss))
            print(f"run {run + 1}: wcluster {wall:.1f}s wall, {cpu:.1f}s cpu, peak RSS {rss:.0f} MiB", flush=True)
    walls = [r[0] for r in runs]
    lines = [f"# Brown clustering (`python benchmarks/bench_clusters.py --runs {args.runs}"
             f"{' --wcluster PATH' if args.wcluster else ''}`)", "",
             f"C = {args.clusters}, min count {args.min_count}, {runs[0][3]['tokens']:,} tokens, "
             f"{runs[0][3]['words']:,} words; whole processes, {len(walls)} round(s); medians (min-max).", "",
             "| program | wall s | CPU s | peak RSS MiB |", "|---|---|---|---|",
             _row("structperc clusters", runs)]
    if wruns:
        lines.append(_row("wcluster (one thread, text tokenized beforehand)", wruns))
        ratio = statistics.median(a[0] / b[0] for a, b in zip(runs, wruns))
        lines += ["", f"structperc / wcluster, wall: median of the per-round ratios **{ratio:.2f}** "
                  "(target: at most 1.5)."]
    text_out = "\n".join(lines) + "\n"
    print(text_out)
    if args.report:
        Path(args.report).write_text(text_out, encoding="utf-8")
        refresh_figures()  # README.md and docs/ quote the report between figures markers
    if folder is not None:
        folder.cleanup()
    if args.output is None:
        os.unlink(output)


if __name__ == "__main__":
    main()
