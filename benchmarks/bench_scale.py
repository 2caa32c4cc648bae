"""How training scales: time per epoch and peak RSS against corpus size, parameter mixing on two
workers against one, and one run on a real multi-process dask cluster.

    python benchmarks/bench_scale.py [--corpus corpora/conll2000] [--sizes 1 2 4 8 16 32] [--runs 3]

Every figure is one whole `structperc train` process (CoNLL-2000 all types, `chunk` templates,
averaged perceptron, seed 0), timed from outside and measured with wait4 (peak RSS of the training
process itself; worker processes of a cluster are not included). The corpora are CoNLL-2000 train
replicated k times. Writes benchmarks/scale.md and benchmarks/scale.png (needs matplotlib).
"""
import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from process import run_process  # benchmarks/process.py (the script's folder is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
EPOCH_LINE = re.compile(r"^epoch\s+(\d+)\s+([0-9.]+)s", re.M)


def run_timed(args):
    """The ``process.Run`` of ``structperc args`` as a whole process."""
    return run_process([sys.executable, "-m", "structperc", *args], {**os.environ, "PYTHONPATH": str(ROOT)})


def replicate(source, k, folder):
    path = folder / f"train_x{k}.txt"
    if not path.exists():
        text = source.read_text().strip() + "\n\n"
        with open(path, "w") as handle:
            for _ in range(k):
                handle.write(text)
    return path


def test_f1(model, test):
    stdout = run_timed(["eval", test, "--model", model, "--json"]).stdout
    return json.loads(stdout)["f1"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster_run(train, test, model, epochs):
    """Start `dask scheduler` and two `dask worker` processes on 127.0.0.1, train with --scheduler,
    stop them (always)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = []
    try:
        procs.append(subprocess.Popen([*dask, "--host", "127.0.0.1", "--port", str(port), "--dashboard-address",
                                       ":0", "--no-show"], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
        for _ in range(2):
            procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address,
                                           "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"],
                                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for_workers(address, 2)
        seconds, _, rss, _, _ = run_timed(["train", train, "--model", model, "--epochs", epochs, "--scheduler",
                                        address, "-q"])
        return seconds, rss, test_f1(model, test)
    finally:
        for proc in reversed(procs):
            proc.send_signal(signal.SIGINT)
        for proc in reversed(procs):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_for_workers(address, n, timeout=60):
    from dask.distributed import Client

    deadline = time.monotonic() + timeout
    while True:
        try:
            with Client(address, timeout="5s") as client:
                client.wait_for_workers(n, timeout=max(deadline - time.monotonic(), 1))
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tokens = [r["tokens"] / 1e6 for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(tokens, [r["epoch_seconds"] for r in rows], "o-")
    left.set_xlabel("training tokens (millions)")
    left.set_ylabel("seconds per epoch")
    left.set_title("Time per epoch")
    right.plot(tokens, [r["rss_mb"] for r in rows], "o-", color="C1")
    right.set_xlabel("training tokens (millions)")
    right.set_ylabel("peak RSS (MB)")
    right.set_title("Peak RSS, 1 epoch, whole process")
    for ax in (left, right):
        ax.grid(alpha=0.3)
    copies = f"{rows[0]['copies']}..{rows[-1]['copies']}"
    fig.suptitle(f"structperc on CoNLL-2000 train replicated {copies} times (averaged perceptron, chunk templates)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="corpora/conll2000")
    parser.add_argument("--sizes", type=int, nargs="*", default=[1, 2, 4, 8, 16, 32])
    parser.add_argument("--runs", type=int, default=3, help="whole-process runs per size and per mixing setting")
    parser.add_argument("--mixing-copies", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=10, help="epochs of the workers 1 against 2 runs")
    parser.add_argument("--out", default=str(ROOT / "benchmarks"))
    args = parser.parse_args(argv)
    corpus = Path(args.corpus)
    test = corpus / "test.txt"
    out = Path(args.out)
    with tempfile.TemporaryDirectory(prefix="structperc-scale-") as tmp:
        tmp = Path(tmp)
        model = tmp / "m.npz"
        rows = []
        for k in args.sizes:
            train = replicate(corpus / "train.txt", k, tmp)
            runs = []
            for _ in range(args.runs):
                seconds, _, rss, _, stderr = run_timed(["train", train, "--model", model, "--epochs", 1])
                epoch = float(EPOCH_LINE.search(stderr).group(2))
                runs.append((seconds, rss, epoch))
            tokens = json.loads(run_timed(["info", model, "--json", "--top", "0"]).stdout)["training"]["n_tokens"]
            row = {"copies": k, "tokens": tokens, "runs": len(runs),
                   "seconds": statistics.median(r[0] for r in runs), "rss_mb": statistics.median(r[1] for r in runs),
                   "epoch_seconds": statistics.median(r[2] for r in runs)}
            rows.append(row)
            print(json.dumps(row), flush=True)
            if k > 1 and k != args.mixing_copies:
                (tmp / f"train_x{k}.txt").unlink()

        train = replicate(corpus / "train.txt", args.mixing_copies, tmp)
        # --workers 1 and 2 alternate, args.runs rounds: a drift of the machine's speed touches both
        timings = {1: [], 2: []}
        mixing = {}
        for _ in range(args.runs):
            for workers in (1, 2):
                seconds, _, rss, _, _ = run_timed(["train", train, "--model", model, "--epochs", args.epochs,
                                                "--workers", workers, "-q"])
                timings[workers].append((seconds, rss))
                mixing[workers] = {"f1": test_f1(model, test)}
                print(json.dumps({"workers": workers, "seconds": seconds, "rss_mb": rss}), flush=True)
        for workers, runs in timings.items():
            mixing[workers].update(seconds=statistics.median(r[0] for r in runs),
                                   rss_mb=statistics.median(r[1] for r in runs), runs=[r[0] for r in runs])
        mixing["paired"] = statistics.median(b[0] / a[0] for a, b in zip(timings[1], timings[2]))
        cluster = cluster_run(train, test, model, args.epochs)
        print(json.dumps({"scheduler": cluster}), flush=True)

    write_report(rows, mixing, cluster, args, out)
    try:
        plot(rows, out / "scale.png")
    except ImportError:
        print("matplotlib is not installed: no scale.png", file=sys.stderr)
    return 0


def _slope(xs, ys):
    """Least-squares slope of ys against xs."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def write_report(rows, mixing, cluster, args, out):
    base = rows[0]
    lines = [
        "# Scaling (`make bench-scale`)",
        "",
        (f"Settings of this run: sizes {' '.join(map(str, args.sizes))}, {args.runs} run(s) per size "
         f"and per mixing setting, mixing on CoNLL-2000 × {args.mixing_copies}, {args.epochs} epochs; load average "
         f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores when the report was written."),
        "",
        ("CoNLL-2000 train (all chunk types, `chunk` templates, averaged perceptron, seed 0) replicated k times; "
         "each figure is one whole `structperc train` process (median of the runs), peak RSS by wait4 of that "
         "process. Time per epoch is the epoch line the trainer prints; seconds are the whole process "
         "(reading, encoding, one epoch, pruning, saving)."),
        "",
        "| copies | tokens | runs | seconds per epoch | ×1 | whole process s | peak RSS MB | bytes per token over 1× |",
        "|---|---|---|---|---|---|---|---|",
    ]
    slope = _slope([r["tokens"] for r in rows], [r["rss_mb"] * 2**20 for r in rows])
    for r in rows:
        grow = ((r["rss_mb"] - base["rss_mb"]) * 2**20 / (r["tokens"] - base["tokens"])
                if r["tokens"] > base["tokens"] else float("nan"))
        lines.append(f"| {r['copies']} | {r['tokens']:,} | {r['runs']} | {r['epoch_seconds']:.2f} | "
                     f"{r['epoch_seconds'] / base['epoch_seconds']:.1f} | {r['seconds']:.2f} | {r['rss_mb']:.0f} | "
                     f"{'' if grow != grow else f'{grow:.0f}'} |")
    one, two = mixing[1], mixing[2]
    lines += [
        "",
        f"Peak RSS against tokens, least-squares slope over all sizes: **{slope:.0f} bytes per token**.",
        "",
        (f"## Parameter mixing: CoNLL-2000 × {args.mixing_copies}, {args.epochs} epochs, whole process "
         "(`--workers 2`: a LocalCluster of two single-threaded workers, uniform mixing)"),
        "",
        "| run | seconds | × workers 1 | peak RSS MB (training process) | test F1 |",
        "|---|---|---|---|---|",
        f"| `--workers 1` (serial) | {one['seconds']:.1f} | 1.00 | {one['rss_mb']:.0f} | {one['f1']:.2f} |",
        (f"| `--workers 2` | {two['seconds']:.1f} | {two['seconds'] / one['seconds']:.2f} | {two['rss_mb']:.0f} | "
         f"{two['f1']:.2f} |"),
        ((f"| `--scheduler` (a `dask scheduler` and two `dask worker` processes on 127.0.0.1) | {cluster[0]:.1f} | "
          f"{cluster[0] / one['seconds']:.2f} | {cluster[1]:.0f} | {cluster[2]:.2f} |") if cluster else
         "| `--scheduler` (a `dask scheduler` and two `dask worker` processes on 127.0.0.1) | not finished | | | |"),
        "",
        (f"Each mixing row: median of {args.runs} whole-process runs, the two settings alternating; the median "
         f"of the per-round ratios (workers 2 / workers 1) is {mixing['paired']:.2f}."),
        "",
        "Targets: `--workers 2` at ≤ 0.62 × the time of `--workers 1`, test F1 within 0.2.",
        "",
    ]
    (out / "scale.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
