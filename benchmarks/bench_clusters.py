"""Time `structperc clusters` as a whole process (wall time, CPU time, peak RSS, merges/s).

Default input: the unlabelled English mirror plus the EWT training words, C = 256, min-count 3 (the
setting of the wcluster anchor). With --wcluster PATH, Liang's wcluster binary is timed on the same
words (written one sentence per line, tokens as the structperc readers and tokenizer give them) for
a side-by-side figure.

    PYTHONPATH=$PWD python benchmarks/bench_clusters.py --output /tmp/paths_c256.txt
    PYTHONPATH=$PWD python benchmarks/bench_clusters.py --runs 3 --clusters 100

Timing on a shared machine is noisy: report the median of several runs and the spread.
"""
import argparse
import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIRROR = Path(os.environ.get("STRUCTPERC_MIRROR", "/work/shared/corpora"))
COMMAND = ("import typer\n"
           "from structperc.cli import handles_errors\n"
           "from structperc.cli_clusters import clusters\n"
           "typer.run(handles_errors(clusters))\n")


def default_inputs():
    files = sorted(glob.glob(str(MIRROR / "unlabeled_en" / "*.txt")))
    ewt = ROOT / "corpora" / "ud_english_ewt" / "en_ewt-ud-train.conllu"
    return files + [str(ewt)]


def timed(argv):
    """Run argv; return (wall seconds, child CPU seconds, peak RSS MiB of the child, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(argv[:3])} ...\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024, done.stdout


def write_wcluster_text(inputs, path):
    from structperc.clusters import read_sentences

    with open(path, "w", encoding="utf-8") as out:
        for name in inputs:
            for sentence in read_sentences(name):
                out.write(" ".join(sentence) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="*", help="input files (default: unlabeled_en + EWT train)")
    parser.add_argument("--clusters", type=int, default=256)
    parser.add_argument("--min-count", type=int, default=3)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--output", default=None, help="keep the paths file here")
    parser.add_argument("--wcluster", default=None, help="path of Liang's wcluster binary, to time it too")
    args = parser.parse_args()
    inputs = args.inputs or default_inputs()
    output = args.output or tempfile.mktemp(suffix=".paths")
    argv = [sys.executable, "-c", COMMAND, *inputs, "--clusters", str(args.clusters),
            "--min-count", str(args.min_count), "--output", output, "--json", "--quiet"]
    env_note = "PYTHONPATH=" + os.environ.get("PYTHONPATH", "")
    runs = []
    for run in range(args.runs):
        wall, cpu, rss, stdout = timed(argv)
        summary = json.loads(stdout)
        runs.append((wall, cpu, rss, summary))
        print(f"run {run + 1}: {wall:.1f}s wall, {cpu:.1f}s cpu, peak RSS {rss:.0f} MiB, "
              f"{summary['words']:,} words, {summary['tokens']:,} tokens, "
              f"{summary['merges']:,} merges, {summary['merges_per_second']:,.0f} merges/s "
              f"(clustering only), AMI {summary['ami']:.4f}", flush=True)
    walls = [r[0] for r in runs]
    print(f"structperc clusters C={args.clusters} min-count={args.min_count}: median {statistics.median(walls):.1f}s "
          f"({min(walls):.1f}-{max(walls):.1f}) over {len(walls)} run(s); {env_note}")
    if args.wcluster:
        with tempfile.TemporaryDirectory() as folder:
            text = Path(folder) / "text.txt"
            write_wcluster_text(inputs, text)
            wargv = [args.wcluster, "--text", str(text), "--c", str(args.clusters),
                     "--min-occur", str(args.min_count), "--output_dir", str(Path(folder) / "out")]
            wall, cpu, rss, _ = timed(wargv)
            print(f"wcluster: {wall:.1f}s wall, {cpu:.1f}s cpu, peak RSS {rss:.0f} MiB")
    if args.output is None:
        os.unlink(output)


if __name__ == "__main__":
    main()
