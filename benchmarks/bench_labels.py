"""Big label sets: UD English EWT with UPOS+FEATS labels (the upos and feats columns joined with |),
structperc (`pos-rich` templates, order 1, averaged perceptron) with every feature-label pair and with
only the pairs seen in training, beside python-crfsuite's averaged perceptron with a comparable
feature function. Every training run is a whole process, timed with its peak RSS (wait4); test
accuracy comes from a separate tagging process.

With --big it times instead a 1M-token corpus of about 500 tags, one sentence per line: EWT train
repeated 5 times, each token tagged with its XPOS and its relation to its head (the universal part of
DEPREL): 519 tags; built under corpora/ (10 epochs, `pos` templates, defaults). EWT x 4 with
XPOS+FEATS labels has only 818,308 tokens and 335 tags.

usage: python benchmarks/bench_labels.py [--data corpora/ud_english_ewt] [--epochs 5] [--runs 3]
           [--out benchmarks/labels.md] [--only defaults,gold,dense,dense200,all,crfsuite]
       python benchmarks/bench_labels.py --big [--epochs 10] [--runs 3] [--out benchmarks/bigtags.md]
       python benchmarks/bench_labels.py --phases [--epochs 5] [--out benchmarks/bigtags_phases.md]
       python benchmarks/bench_labels.py crfsuite-train TRAIN MODEL EPOCHS
       python benchmarks/bench_labels.py crfsuite-tag TEST MODEL
       python benchmarks/bench_labels.py phases-run TRAIN EPOCHS

With --phases it breaks the defaults' peak RSS down by phase instead: one training process samples
its own resident set (VmRSS, every 2 ms, in a thread) and marks where each phase of ``fit_file``
ends; the sizes of the arrays that training holds are listed beside it.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from process import run_process  # benchmarks/process.py (the script's folder is on sys.path)
from sections import refresh_figures  # benchmarks/sections.py (the script's folder is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
SECTION = "bench-labels"  # README.md's copy of the table (with --out)


# ---------------------------------------------------------------- python-crfsuite side
def read_conllu(path):
    """[(words, labels)] with labels upos|feats; multiword ranges and empty nodes skipped."""
    sentences, words, labels = [], [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line:
                if words:
                    sentences.append((words, labels))
                    words, labels = [], []
                continue
            if line.startswith("#"):
                continue
            fields = line.split("\t")
            if "-" in fields[0] or "." in fields[0]:
                continue
            words.append(fields[1])
            labels.append(f"{fields[3]}|{fields[5]}")
    if words:
        sentences.append((words, labels))
    return sentences


def shape(word):
    out = []
    for ch in word:
        s = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch
        if not out or out[-1] != s:
            out.append(s)
    return "".join(out)


def build_big_corpus(train_path, path, copies=5):
    """EWT train as word/XPOS|DEPREL tokens (the relation without its subtype), one sentence per line,
    ``copies`` times over."""
    sentences = []
    with open(train_path, encoding="utf-8") as fh:
        tokens = []
        for line in fh:
            line = line.rstrip("\n")
            if not line:
                if tokens:
                    sentences.append(" ".join(tokens))
                    tokens = []
                continue
            fields = line.split("\t")
            if line.startswith("#") or "-" in fields[0] or "." in fields[0]:
                continue
            word = fields[1].replace(" ", "_")
            tokens.append(f"{word}/{fields[4]}|{fields[7].split(':')[0]}")
    if tokens:
        sentences.append(" ".join(tokens))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(sentences * copies) + "\n", encoding="utf-8")
    n_tokens = sum(len(s.split()) for s in sentences) * copies
    n_tags = len({t.rsplit("/", 1)[1] for s in sentences for t in s.split()})
    return n_tokens, n_tags


def big(args, env):
    """The --big run: defaults on the 1M-token corpus, whole processes, medians of the rounds."""
    corpus = ROOT / "corpora" / "ewt_x5_xpos_deprel.tagged"
    n_tokens, n_tags = build_big_corpus(Path(args.data) / "en_ewt-ud-train.conllu", corpus)
    cmd_base = [sys.executable, "-m", "structperc", "train", str(corpus), "--templates", "pos",
                "--epochs", str(args.epochs)]
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.runs):
            run = run_process(cmd_base + ["--model", str(Path(tmp) / "big.npz")], env)
            runs.append((run.seconds, run.rss_mb))
            print(f"big round {r + 1}: {run.seconds:.1f} s, {run.rss_mb:.0f} MB", file=sys.stderr, flush=True)
        layout = next((line for line in run.stderr.splitlines() if line.startswith("layout:")), "")
        epochs = [line for line in run.stderr.splitlines() if line.startswith("epoch")]
    seconds = [s for s, _ in runs]
    lines = [f"1M-token corpus: EWT train 5 times, XPOS|DEPREL labels, one sentence per line ({n_tokens:,} tokens, "
             f"{n_tags} tags); `structperc train --templates pos --epochs {args.epochs}` with no other option. "
             f"{args.runs} whole processes; median (min-max).", "",
             "| train seconds | peak RSS MB |", "|---|---|",
             f"| {statistics.median(seconds):.1f} ({min(seconds):.1f}-{max(seconds):.1f}) | "
             f"{statistics.median(m for _, m in runs):.0f} |", "",
             f"Chosen: `{layout}`", "", "Epoch lines of the last round:", "", "```", *epochs, "```"]
    return "\n".join(lines) + "\n"


def crfsuite_features(words):
    """The `pos-rich` templates as CRFsuite attribute strings (affixes on every word, not only rare ones)."""
    n = len(words)
    lower = [w.lower() for w in words]
    shapes = [shape(w) for w in words]

    def at(seq, j):
        return seq[j] if 0 <= j < n else ("__BOS__" if j < 0 else "__EOS__")

    out = []
    for i, w in enumerate(words):
        f = ["bias"]
        f += [f"w[{o}]={at(words, i + o)}" for o in range(-2, 3)]
        f += [f"p{k}={w[:k]}" for k in range(1, 5)] + [f"s{k}={w[-k:]}" for k in range(1, 5)]
        f += [f"digit={any(c.isdigit() for c in w)}", f"upper={any(c.isupper() for c in w)}", f"hyphen={'-' in w}"]
        f += [f"l[{o}]={at(lower, i + o)}" for o in range(-1, 2)]
        f += [f"shape={shapes[i]}", f"shape3={at(shapes, i - 1)}|{shapes[i]}|{at(shapes, i + 1)}"]
        f += [f"w[-1]|w[0]={at(words, i - 1)}|{w}", f"w[0]|w[1]={w}|{at(words, i + 1)}"]
        f += [f"s3[-1]={at(words, i - 1)[-3:]}", f"s3[1]={at(words, i + 1)[-3:]}"]
        out.append(f)
    return out


def crfsuite_train(train_path, model_path, epochs):
    import pycrfsuite

    trainer = pycrfsuite.Trainer(verbose=False)
    for words, labels in read_conllu(train_path):
        trainer.append(crfsuite_features(words), labels)
    trainer.select("ap")
    trainer.set_params({"max_iterations": int(epochs)})
    trainer.train(model_path)


def crfsuite_tag(test_path, model_path):
    import pycrfsuite

    tagger = pycrfsuite.Tagger()
    tagger.open(model_path)
    right = total = 0
    for words, labels in read_conllu(test_path):
        for p, g in zip(tagger.tag(crfsuite_features(words)), labels):
            right += p == g
            total += 1
    print(json.dumps({"accuracy": 100.0 * right / total}))


# ---------------------------------------------------------------- phases of the peak
PHASES = [  # (module, attribute path, the phase that ends when it returns)
    ("structperc.readers.parallel", "read_training_columns", "read the training file (string columns)"),
    ("structperc.features.encode", "FeatureEncoder._field_values", "value ids of every field"),
    ("structperc.features.encode", "FeatureEncoder.fit_transform", "feature ids (encoding)"),
    ("structperc.estimator.fitting", "new_model", "layout: tag dictionary, gold pairs, weights"),
    ("structperc.train.perceptron", "PerceptronRule.begin", "averaging buffer, data record"),
    ("structperc.train.base", "SerialEngine.epoch", "epoch"),
    ("structperc.model.linear_chain", "LinearChainModel.prune", "pruning"),
]


def _vm_kib(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def phases_run(train_path, epochs):
    """In this process: `structperc train` (the defaults' command of the table) with the RSS sampled
    and the phase ends marked; prints one JSON record per mark and the arrays that training holds."""
    import functools
    import importlib
    import threading
    import time

    samples, marks, sizes = [], [], {}
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            samples.append((time.perf_counter(), _vm_kib("VmRSS")))
            time.sleep(0.002)

    def mark(name):
        marks.append((time.perf_counter(), name, _vm_kib("VmRSS")))

    threading.Thread(target=sample, daemon=True).start()
    mark("interpreter")
    import numba  # noqa: F401
    import numpy as np

    mark("import numpy, numba")
    from structperc.cli import main as cli

    mark("import structperc's command line")
    epoch_count = [0]
    for module_name, attribute, phase in PHASES:
        owner = importlib.import_module(module_name)
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part)
        original = getattr(owner, name)

        def wrapped(*args, _original=original, _phase=phase, **kwargs):
            out = _original(*args, **kwargs)
            if _phase == "epoch":
                epoch_count[0] += 1
                mark(f"epoch {epoch_count[0]}")
            elif _phase == "averaging buffer, data record":
                rule, problem = args[0], args[1]
                sizes["weights w (float64)"] = rule.w.nbytes
                sizes["averaging sums u (float64)"] = rule.u.nbytes
                for field in problem.data._fields:
                    value = getattr(problem.data, field)
                    if isinstance(value, np.ndarray) and value.nbytes > 1 << 20:
                        sizes[f"data.{field} ({value.dtype})"] = value.nbytes
                for field in rule.layout._fields:
                    value = getattr(rule.layout, field)
                    if isinstance(value, np.ndarray) and value.nbytes > 1 << 20:
                        sizes[f"layout.{field} ({value.dtype})"] = value.nbytes
                mark(_phase)
            else:
                mark(_phase)
            return out

        setattr(owner, name, functools.wraps(original)(wrapped))
    # the training kernels are loaded at their first call, inside the phases above
    with tempfile.TemporaryDirectory() as tmp:
        sys.argv = ["structperc", "train", train_path, "--model", str(Path(tmp) / "phases.model"), "--label",
                    "upos+feats", "--templates", "pos-rich", "--epochs", str(epochs), "--quiet"]
        try:
            cli.main()
        except SystemExit as exit_:
            if exit_.code:
                raise
    mark("saved")
    stop.set()
    start = marks[0][0]
    previous = start
    for t, name, rss in marks:
        peak = max([kib for ts, kib in samples if previous <= ts <= t] + [rss])
        print(json.dumps({"phase": name, "seconds": t - start, "rss_mb": rss / 1024, "peak_mb": peak / 1024}))
        previous = t
    print(json.dumps({"hwm_mb": _vm_kib("VmHWM") / 1024, "sizes": sizes}))


def phases(args, env):
    """The --phases report: one sampled training process, as markdown."""
    train = Path(args.data) / "en_ewt-ud-train.conllu"
    run = run_process([sys.executable, __file__, "phases-run", str(train), str(args.epochs)], env)
    records = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    rows, total = records[:-1], records[-1]
    lines = [f"Where the peak RSS of the defaults' run comes from: `structperc train en_ewt-ud-train.conllu --label "
             f"upos+feats --templates pos-rich --epochs {args.epochs}`, one process sampling its own VmRSS every 2 ms "
             f"(`python benchmarks/bench_labels.py --phases`). Each row ends where the phase ends; peak: the "
             f"highest sample within the phase.", "",
             "| phase ends | seconds | RSS MB at end | peak MB in phase |", "|---|---|---|---|"]
    lines += [f"| {r['phase']} | {r['seconds']:.2f} | {r['rss_mb']:.0f} | {r['peak_mb']:.0f} |" for r in rows]
    lines += ["", f"Process peak (VmHWM): **{total['hwm_mb']:.0f} MB** (the whole-process figure of the table "
              "in bigtags.md is the kernel's ru_maxrss).", "", "Arrays that the epochs hold (1 MB or more):", "",
              "| array | MB |", "|---|---|"]
    lines += [f"| {name} | {size / 2**20:.1f} |" for name, size in total["sizes"].items()]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- driver
def main():
    if len(sys.argv) > 1 and sys.argv[1] == "crfsuite-train":
        return crfsuite_train(*sys.argv[2:5])
    if len(sys.argv) > 1 and sys.argv[1] == "crfsuite-tag":
        return crfsuite_tag(*sys.argv[2:4])
    if len(sys.argv) > 1 and sys.argv[1] == "phases-run":
        return phases_run(sys.argv[2], int(sys.argv[3]))
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(ROOT / "corpora" / "ud_english_ewt"))
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=None)
    parser.add_argument("--only", default=None, help="comma list of defaults,gold,dense,dense200,all,crfsuite")
    parser.add_argument("--big", action="store_true", help="the 1M-token, ~500-tag corpus instead")
    parser.add_argument("--phases", action="store_true", help="the defaults' peak RSS by phase instead")
    args = parser.parse_args()
    train = Path(args.data) / "en_ewt-ud-train.conllu"
    test = Path(args.data) / "en_ewt-ud-test.conllu"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    py = sys.executable
    if args.big or args.phases:
        text = big(args, env) if args.big else phases(args, env)
        print(text)
        if args.out:
            Path(args.out).write_text(text, encoding="utf-8")
        return
    systems = {
        # no layout option: the layout is chosen from the data (``structperc.model.layouts``)
        "structperc defaults": ("defaults", []),
        "structperc gold pairs": ("gold", ["--gold-pairs"]),
        # K = 50 chosen on en_ewt-ud-dev among 0, 50, 100, 200, 500, 1000, 2000, 5000 (seed 0), and
        # ahead of 100 and 200 in the mean over seeds 0-2 (92.55 against 92.45 and 92.48)
        "structperc gold pairs, --dense-count 50": ("dense", ["--gold-pairs", "--dense-count", "50"]),
        # the largest K of those three: fewer features get every label, less memory
        "structperc gold pairs, --dense-count 200": ("dense200", ["--gold-pairs", "--dense-count", "200"]),
        "structperc all pairs": ("all", ["--all-pairs"]),
        "python-crfsuite AP": ("crfsuite", None),
    }
    only = set(args.only.split(",")) if args.only else None
    systems = {name: v for name, v in systems.items() if not only or v[0] in only}
    runs = {name: [] for name in systems}
    with tempfile.TemporaryDirectory() as tmp:
        # rounds: each system once per round, so that a drift of the machine's speed touches all alike
        for r in range(args.runs):
            for name, (key, flags) in systems.items():
                model = Path(tmp) / f"{key}.model"
                if flags is None:
                    cmd = [py, __file__, "crfsuite-train", str(train), str(model), str(args.epochs)]
                else:
                    cmd = [py, "-m", "structperc", "train", str(train), "--model", str(model), "--label", "upos+feats",
                           "--templates", "pos-rich", "--epochs", str(args.epochs), "--quiet", *flags]
                seconds, _, peak, _, _ = run_process(cmd, env)
                runs[name].append((seconds, peak))
                print(f"{name} round {r + 1}: {seconds:.1f} s, {peak:.0f} MB", file=sys.stderr, flush=True)
        rows = []
        for name, (key, flags) in systems.items():
            model = Path(tmp) / f"{key}.model"
            if flags is None:
                out = run_process([py, __file__, "crfsuite-tag", str(test), str(model)], env).stdout
            else:
                out = run_process([py, "-m", "structperc", "eval", str(test), "--model", str(model), "--json"],
                                  env).stdout
            seconds = [t for t, _ in runs[name]]
            rows.append((name, statistics.median(seconds), min(seconds), max(seconds),
                         statistics.median(m for _, m in runs[name]), json.loads(out)["accuracy"]))
    lines = [f"{args.runs} whole-process training runs per system, in rounds; median (min-max).", "",
             "| system | train seconds | peak RSS MB | test accuracy % |", "|---|---|---|---|"]
    lines += [f"| {n} | {s:.1f} ({lo:.1f}-{hi:.1f}) | {m:.0f} | {a:.2f} |" for n, s, lo, hi, m, a in rows]
    crfsuite = next((r for r in rows if r[0] == "python-crfsuite AP"), None)
    if crfsuite is not None:
        lines.append("")
        lines += [f"- {n} / python-crfsuite AP, train seconds: **{s / crfsuite[1]:.2f}**"
                  for n, s, *_ in rows if n != crfsuite[0]]
    n_labels = len({label for _, labels in read_conllu(train) for label in labels})
    lines += ["", "Settings of each system (`headline.py` reads this table): labels: distinct UPOS+FEATS labels of "
              "the training file; both rules are averaged perceptrons.", "",
              "| system | labels | epochs | averaged | features |", "|---|---|---|---|---|"]
    lines += [f"| {name} | {n_labels} | {args.epochs} | yes | "
              + ("pos-rich as CRFsuite attributes, affixes of every word" if flags is None
                 else "pos-rich templates, affixes of rare words") + " |"
              for name, (_, flags) in systems.items()]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        refresh_figures()  # README.md and docs/ quote the report between figures markers


if __name__ == "__main__":
    main()
