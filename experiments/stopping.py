"""Choose how many epochs the default training runs, by a rule that reads the data, on several
development tasks and on simulated unseen corpora.

For each task, trainer (perceptron, crf: the defaults, nothing else but the preset where named) and
seed, two runs of ``--max-epochs`` epochs record, after every epoch, the score of the weights reached:

- run "slice": trained on the training sentences without every tenth one (the held-out slice),
  scored on the slice and on the development data;
- run "full": trained on every training sentence, scored on the development data, with the epoch's
  training figures (the perceptron's mistakes, the crf's objective).

The weights after epoch e of a longer run are those of an e-epoch run (the visit orders, the
averaging and the learning-rate schedule depend on the epochs done, not on the epochs to come), so
every stopping rule is evaluated on these curves without training again: a fixed number of epochs;
stop when the held-out slice's score has not improved for ``patience`` epochs and keep the best
epoch (trained without the slice) or train again on everything for the best epoch's count; stop
when the training objective or mistakes stop falling; a fixed number of sentence visits.

The tasks, all scored on development data only (no test file is read):

- ``np``, ``chunk``: CoNLL-2000 NP chunking and all chunk types, the first 90 % of train.txt, scored
  (chunk F1) on its last 10 %;
- ``ewt``, ``ewt xpos``: UD English EWT, UPOS and the PTB tags (XPOS), scored on dev (accuracy);
- ``ner``: CoNLL-2002 Dutch, ned.train on ned.testa with the ``ner`` preset (entity F1);
- ``ner dicts``: the same with the feature dicts of sklearn-crfsuite's tutorial;
- ``ner dicts x3``: the same, every three consecutive sentences (train and dev) joined into one: a
  corpus of fewer, longer sentences (the Spanish one of CoNLL-2002 has 8,323 training sentences of
  32 tokens on average, the Dutch one 15,806 of 13);
- ``... /4``: other sizes: a quarter of the training sentences (every fourth), same dev data.

    python experiments/stopping.py [--corpora corpora] [--trainers perceptron crf] [--seeds 0]
    python experiments/stopping.py --analyse     # the rules on the curves already recorded

Writes experiments/results/stopping.json (the curves) and experiments/results/stopping.md.
"""
import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
import structperc.train.base as base  # noqa: E402
import structperc.train.sgd as sgd  # noqa: E402
from bench_dicts import read_conll2002, sent2features  # noqa: E402
from structperc.chunks import is_bio  # noqa: E402
from structperc.estimator.tagger import Tagger  # noqa: E402
from structperc.evaluate.metrics import evaluate_labels  # noqa: E402
from structperc.readers import read_corpus  # noqa: E402

RESULTS = ROOT / "experiments" / "results"
CURVES, OUTPUT = RESULTS / "stopping.json", RESULTS / "stopping.md"
SLICE = 10  # every SLICE-th training sentence is held out in the "slice" run
# the former defaults, chosen on Dutch (epochs.md, sgd_defaults.md): the perceptron's 15 epochs, the crf's
# 10 epochs at twice the calibrated rate
CURRENT = {"perceptron": ("perceptron", 15), "crf": ("crf AVERAGED_RATE_FACTOR=2", 10)}
FACTOR = "AVERAGED_RATE_FACTOR"  # the constant of structperc.train.sgd: the rate factor when averaged


# ---------------------------------------------------------------------------------------- the tasks
def file_data(train, dev, **reader_options):
    return read_corpus(train, **reader_options), None, read_corpus(dev, **reader_options), None


def dicts_data(corpus, join=1):
    """The tutorial's dicts of ned.train and ned.testa; join > 1 makes one sentence of every ``join``
    consecutive ones (fewer, longer sentences, as in the Spanish corpus of CoNLL-2002)."""
    train, dev = read_conll2002(corpus / "ned.train"), read_conll2002(corpus / "ned.testa")
    if join > 1:
        train, dev = ([sum(part[i: i + join], []) for i in range(0, len(part), join)] for part in (train, dev))
    return ([sent2features(s) for s in train], [[t[-1] for t in s] for s in train],
            [sent2features(s) for s in dev], [[t[-1] for t in s] for s in dev])


def split_conll2000(train, folder):
    blocks = Path(train).read_text(encoding="utf-8").strip().split("\n\n")
    cut = int(len(blocks) * 0.9)
    paths = []
    for name, part in (("train", blocks[:cut]), ("dev", blocks[cut:])):
        path = Path(folder) / f"chunk.{name}"
        path.write_text("\n\n".join(part) + "\n\n", encoding="utf-8")
        paths.append(path)
    return paths


def tasks(corpora, folder):
    """name -> (function returning (X, y, X_dev, y_dev), Tagger options besides the trainer)."""
    chunk_train, chunk_dev = split_conll2000(corpora / "conll2000" / "train.txt", folder)
    ewt, ned = corpora / "ud_english_ewt", corpora / "conll2002_nl"
    chunk = {"columns": ["word", "pos", "chunk"]}
    ewt_files = (ewt / "en_ewt-ud-train.conllu", ewt / "en_ewt-ud-dev.conllu")
    return {  # the most telling first
        "ner dicts": (lambda: dicts_data(ned), {}),
        "ner dicts x3": (lambda: dicts_data(ned, 3), {}),
        "np": (lambda: file_data(chunk_train, chunk_dev, **chunk, only_types=["NP"]), {}),
        "ewt": (lambda: file_data(*ewt_files, label="upos"), {}),
        "ner": (lambda: file_data(ned / "ned.train", ned / "ned.testa", columns=["word", "pos", "ner"]),
                {"templates": "ner"}),
        "chunk": (lambda: file_data(chunk_train, chunk_dev, **chunk), {}),
        "ewt xpos": (lambda: file_data(*ewt_files, label="xpos"), {}),
    }


def take(X, y, indices):
    """The sentences ``indices`` of a Corpus (y None) or of dict lists."""
    if y is None:
        return X.subset(indices), None
    return [X[i] for i in indices], [y[i] for i in indices]


def n_sentences(X):
    return X.n_sentences if hasattr(X, "n_sentences") else len(X)


# ------------------------------------------------------------------------------------- the curves
class Recorder:
    """Wraps ``base.run_epochs``: after every epoch, scores the weights reached on ``sets`` (name ->
    (X, y)) and keeps the epoch's training figures."""

    def __init__(self):
        self.original = base.run_epochs
        base.run_epochs = self.run_epochs
        self.tagger, self.sets, self.rows = None, {}, []

    def run_epochs(self, engine, epochs, dev_score=None, callback=None, checkpoint=None, *args, **kwargs):
        model = engine.problem.model
        encoded = {name: self.tagger.encode(X, y) for name, (X, y) in self.sets.items()}
        chunks = is_bio(model.labels)

        def hook(state):
            weights = state.weights()
            row = {"epoch": state.epoch, "stats": {k: float(v) for k, v in state.history[-1].stats.items()
                                                   if isinstance(v, (int, float))},
                   "seconds": state.history[-1].seconds}
            for name, (enc, gold) in encoded.items():
                predicted, _ = model.decode(enc, weights)
                result = evaluate_labels(gold, model.label_names(predicted), enc.sentence_offsets, chunks)
                row[name] = result["f1"] if chunks else result["accuracy"]
            self.rows.append(row)

        return self.original(engine, epochs, dev_score, callback, hook, *args, **kwargs)

    def curve(self, tagger, X, y, sets):
        self.tagger, self.sets, self.rows = tagger, sets, []
        start = time.perf_counter()
        tagger.fit(X, y)
        return {"rows": self.rows, "seconds": time.perf_counter() - start}


def record(corpora, folder, names, trainers, seeds, max_epochs, sizes, path, variant=None, runs=("slice", "full")):
    curves = json.loads(path.read_text()) if path.exists() else {}
    recorder = Recorder()
    for name, (load, options) in tasks(corpora, folder).items():
        if names and name not in names:
            continue
        X_all, y_all, X_dev, y_dev = load()
        for size in sizes:
            every = int(size)
            X, y = take(X_all, y_all, range(0, n_sentences(X_all), every)) if every > 1 else (X_all, y_all)
            n = n_sentences(X)
            held = list(range(SLICE - 1, n, SLICE))
            kept = [i for i in range(n) if (i + 1) % SLICE]
            X_fit, y_fit = take(X, y, kept)
            X_held, y_held = take(X, y, held)
            task = name if every == 1 else f"{name} /{every}"
            for trainer in trainers:
                for seed in seeds:
                    label = variant or (f"{FACTOR}={getattr(sgd, FACTOR):g}" if trainer != "perceptron" else "")
                    key = f"{task}|{trainer}{' ' + label if label else ''}|{seed}"
                    if key in curves:
                        continue
                    out = {"sentences": n}
                    for run, (Xr, yr, sets) in {
                        "slice": (X_fit, y_fit, {"heldout": (X_held, y_held), "dev": (X_dev, y_dev)}),
                        "full": (X, y, {"dev": (X_dev, y_dev)}),
                    }.items():
                        if run not in runs:
                            continue
                        tagger = Tagger(trainer=trainer, epochs=max_epochs[trainer], seed=seed, **options)
                        out[run] = recorder.curve(tagger, Xr, yr, sets)
                    curves[key] = out
                    full = [round(r["dev"], 2) for r in out["full"]["rows"]]
                    print(f"{key}: {out['full']['seconds']:.1f}s full dev {full}",
                          flush=True)
                    path.write_text(json.dumps(curves))
    return curves


# -------------------------------------------------------------------------------------- the rules
def held_out_stop(rows, patience, least):
    """(best epoch, epochs run): stop once the held-out score has not improved for ``patience``
    epochs (not before ``least`` epochs), or at the last row; the first best epoch on ties."""
    best, best_epoch = -1.0, 0
    for row in rows:
        if row["heldout"] > best:
            best, best_epoch = row["heldout"], row["epoch"]
        if row["epoch"] >= least and row["epoch"] - best_epoch >= patience:
            return best_epoch, row["epoch"]
    return best_epoch, rows[-1]["epoch"]


def relative_stop(rows, key, threshold, least, sign):
    """The first epoch (>= least) whose training figure ``key`` improved by less than ``threshold``
    relative to the previous epoch's (sign +1: higher is better, -1: lower is better)."""
    for previous, row in zip(rows, rows[1:]):
        a, b = previous["stats"][key], row["stats"][key]
        gain = sign * (b - a) / max(abs(a), 1e-12)
        if row["epoch"] >= least and gain < threshold:
            return row["epoch"]
    return rows[-1]["epoch"]


def plateau_stop(rows, key, threshold, least, sign, patience, most):
    """The epoch (least..most) after which the training figure ``key`` has not reached a new best by
    more than ``threshold`` (relative) for ``patience`` epochs (sign +1: higher is better)."""
    best, since = None, 0
    for row in rows:
        value = sign * row["stats"][key]
        if best is None or value > best + threshold * abs(best):
            best, since = value, 0
        else:
            since += 1
        if row["epoch"] >= most or (row["epoch"] >= least and since >= patience):
            return row["epoch"]
    return rows[-1]["epoch"]


def rules(trainer, max_epoch, held_out=True):
    """name -> function(curve) -> (dev score, epochs of training time in full-data epochs)."""
    def fixed(e):
        return lambda c: (c["full"]["rows"][e - 1]["dev"], e)

    def keep(p, least):
        def rule(c):
            best, run = held_out_stop(c["slice"]["rows"], p, least)
            return c["slice"]["rows"][best - 1]["dev"], 0.9 * run
        return rule

    def refit(p, least):
        def rule(c):
            best, run = held_out_stop(c["slice"]["rows"], p, least)
            return c["full"]["rows"][best - 1]["dev"], 0.9 * run + best
        return rule

    def relative(key, threshold, least, sign):
        def rule(c):
            e = relative_stop(c["full"]["rows"], key, threshold, least, sign)
            return c["full"]["rows"][e - 1]["dev"], e
        return rule

    def visits(v, least, most):
        def rule(c):
            e = max(least, min(most, -(-v // c["sentences"])))
            return c["full"]["rows"][e - 1]["dev"], e
        return rule

    out = {f"fixed {e}": fixed(e) for e in (5, 10, 15, 20, 25, 30) if e <= max_epoch}
    for p in (1, 2, 3) if held_out else ():
        for least in (3, 5):
            out[f"held-out, patience {p}, at least {least}, keep best"] = keep(p, least)
            out[f"held-out, patience {p}, at least {least}, refit"] = refit(p, least)
    def plateau(key, threshold, sign, patience, most):
        def rule(c):
            e = plateau_stop(c["full"]["rows"], key, threshold, 5, sign, patience, most)
            return c["full"]["rows"][e - 1]["dev"], e
        return rule

    key, sign, what = ("objective", +1, "objective") if trainer.startswith("crf") else ("sentence_errors", -1, "mistakes")
    for t in (0.01, 0.003, 0.001) if sign > 0 else (0.05, 0.02):
        out[f"{what} gain < {t:g}"] = relative(key, t, 3, sign)
    grid = ((0.03, 0.01), (2, 3), (12, 15, 20)) if sign > 0 else ((0.0,), (2, 3, 4), (20, 25))
    for t in grid[0]:
        for p in grid[1]:
            for most in sorted(set(grid[2]) | {max_epoch}):
                if most <= max_epoch:
                    by = f" by {t:g}" if t else ""
                    out[f"{what}: no new best{by} for {p}, 5..{most}"] = plateau(key, t, sign, p, most)
    for v in (150_000, 300_000):
        out[f"{v:,} visits, 5..{max_epoch} epochs"] = visits(v, 5, max_epoch)
    return out


def chosen_epoch(rule_class, rows):
    """The epoch at which the default run of ``rule_class`` stops on the recorded ``rows``: its
    ``stopping`` rule (``structperc.train.base.Plateau``) read after each epoch, at most its ``epochs``."""
    class Record:
        def __init__(self, row):
            self.stats = row["stats"]

    history = [Record(row) for row in rows[:rule_class.epochs]]
    for epoch in range(1, len(history) + 1):
        if rule_class.stopping is not None and rule_class.stopping(history[:epoch]):
            return epoch
    return len(history)


def chosen_section(by_trainer):
    """The defaults now in the code against the former ones, task by task."""
    from structperc.train import TRAINERS

    lines = []
    for name in ("perceptron", "crf"):
        rule_class = TRAINERS[name]
        former, former_epochs = CURRENT[name]
        now = name if name == "perceptron" else f"crf {FACTOR}={getattr(sgd, FACTOR):g}"
        if former not in by_trainer or now not in by_trainer:
            continue
        names = sorted(set(by_trainer[former]) & set(by_trainer[now]))
        lines += ["", f"### {name}: {rule_class.stopping}, at most {rule_class.epochs} epochs"
                  + ("" if name == "perceptron" else f"; rate factor {getattr(sgd, FACTOR):g}"), "",
                  "| task | former default | epochs | now | epochs | change |", "|---|---|---|---|---|---|"]
        diffs, spent, spent_before = [], [], []
        for task in names:
            before = statistics.mean(c["full"]["rows"][former_epochs - 1]["dev"] for c in by_trainer[former][task])
            stops = [chosen_epoch(rule_class, c["full"]["rows"]) for c in by_trainer[now][task]]
            after = statistics.mean(c["full"]["rows"][e - 1]["dev"] for c, e in zip(by_trainer[now][task], stops))
            diffs.append(after - before)
            spent.append(statistics.mean(stops))
            spent_before.append(former_epochs)
            lines.append(f"| {task} | {before:.2f} | {former_epochs} | {after:.2f} | {statistics.mean(stops):.1f} "
                         f"| {after - before:+.2f} |")
        lines.append(f"| **mean** | | {statistics.mean(spent_before):.1f} | | {statistics.mean(spent):.1f} "
                     f"| **{statistics.mean(diffs):+.2f}** |")
    return lines


def step_section(by_trainer, epochs=(10, 12, 15)):
    """The crf's rate factor 4 against 2 (the default) at a few epoch counts, on the tasks recorded with both."""
    two, four = by_trainer.get(f"crf {FACTOR}=2", {}), by_trainer.get(f"crf {FACTOR}=4", {})
    names = sorted(set(two) & set(four))
    if not names:
        return []
    lines = ["", "### The crf's step: four times the calibrated rate against twice (the default)", "",
             "| epochs | " + " | ".join(names) + " | mean change |", "|" + "---|" * (len(names) + 2)]
    for e in epochs:
        diffs = [statistics.mean(c["full"]["rows"][e - 1]["dev"] for c in four[t])
                 - statistics.mean(c["full"]["rows"][e - 1]["dev"] for c in two[t]) for t in names]
        lines.append(f"| {e} | " + " | ".join(f"{d:+.2f}" for d in diffs) + f" | {statistics.mean(diffs):+.2f} |")
    return lines


def analyse(curves):
    lines = [
        "# Stopping rules for the default training, chosen on development data",
        "",
        "`python experiments/stopping.py` (the module's docstring has the tasks and runs). Each cell: the "
        "development score (chunk or entity F1, tag accuracy) of the weights the rule keeps, averaged over "
        "the seeds recorded. `/4`: a quarter of the training sentences; `x3`: every three sentences joined. "
        f"Machine: x86_64, Python {platform.python_version()}.",
        "",
        "## The defaults now, against the former ones (perceptron 15 epochs; crf 10 epochs at twice the "
        "calibrated rate; both chosen on Dutch)",
    ]
    by_trainer = {}
    for key, curve in curves.items():
        task, trainer, seed = key.split("|")
        if trainer == "crf":  # recorded before the rate factor was part of the key: the former default, 2
            trainer = f"crf {FACTOR}=2"
        by_trainer.setdefault(trainer, {}).setdefault(task, []).append(curve)
    lines += chosen_section(by_trainer)
    lines += step_section(by_trainer)
    lines += ["", "## Every rule tried", "",
              "*change*: the mean over the tasks of the difference to the fixed epochs of the former default "
              "(same trainer and rate); *worst*: the task where the rule loses most against it; *epochs*: "
              "the mean training time in epochs over all the data (a held-out rule's epochs on 90 % count "
              "0.9 each, a refit adds its epochs)."]
    summary = {}
    for trainer, task_curves in by_trainer.items():
        max_epoch = min(len(c["full"]["rows"]) for cs in task_curves.values() for c in cs)
        held_out = all("slice" in c for cs in task_curves.values() for c in cs)
        candidates = rules(trainer, max_epoch, held_out)
        names = sorted(task_curves)
        table = {}
        for rule_name, rule in candidates.items():
            cells = {t: [rule(c) for c in task_curves[t]] for t in names}
            table[rule_name] = {t: (statistics.mean(s for s, _ in v), statistics.mean(e for _, e in v))
                                for t, v in cells.items()}
        base_name = f"fixed {CURRENT[trainer.split()[0]][1]}"
        counts = sorted({len(cs) for cs in task_curves.values()})
        seeds = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}-{counts[-1]} per task"
        lines += ["", f"### {trainer} (seeds: {seeds}; up to {max_epoch} epochs)", "",
                  "| rule | " + " | ".join(names) + " | change | worst | epochs |",
                  "|" + "---|" * (len(names) + 4)]
        for rule_name, cells in table.items():
            diffs = {t: cells[t][0] - table[base_name][t][0] for t in names}
            worst = min(diffs, key=diffs.get)
            change = statistics.mean(diffs.values())
            epochs = statistics.mean(cells[t][1] for t in names)
            summary[trainer, rule_name] = (change, diffs[worst], epochs)
            lines.append(f"| {rule_name} | " + " | ".join(f"{cells[t][0]:.2f}" for t in names)
                         + f" | {change:+.2f} | {worst} {diffs[worst]:+.2f} | {epochs:.1f} |")
        if held_out:
            stops = {t: statistics.mean(held_out_stop(c["slice"]["rows"], 2, 5)[1] for c in task_curves[t])
                     for t in names}
            lines += ["", "Epochs run by the held-out rule (patience 2, at least 5) per task: "
                      + ", ".join(f"{t} {e:.1f}" for t, e in stops.items()) + "."]
    OUTPUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default=str(ROOT / "corpora"))
    parser.add_argument("--tasks", nargs="*", default=[])
    parser.add_argument("--trainers", nargs="+", default=["perceptron", "crf"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[1, 4], help="keep every k-th training sentence")
    parser.add_argument("--max-epochs", nargs=2, type=int, default=[30, 25], metavar=("PERCEPTRON", "CRF"))
    parser.add_argument("--curves", default=str(CURVES), help="where to add the curves (stopping*.json are read)")
    parser.add_argument("--variant", help="NAME=VALUE: a module constant of structperc.train.sgd to set")
    parser.add_argument("--runs", nargs="+", default=["slice", "full"], choices=["slice", "full"])
    parser.add_argument("--analyse", action="store_true", help="only evaluate the rules on the recorded curves")
    args = parser.parse_args()
    if args.variant:
        import structperc.train.sgd as sgd

        name, value = args.variant.split("=")
        setattr(sgd, name, type(getattr(sgd, name))(value))
    if not args.analyse:
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            record(Path(args.corpora), folder, args.tasks, args.trainers, args.seeds,
                   {"perceptron": args.max_epochs[0], "crf": args.max_epochs[1]}, args.sizes, Path(args.curves),
                   args.variant, args.runs)
    curves = {}
    for path in sorted(RESULTS.glob("stopping*.json")):
        curves.update(json.loads(path.read_text()))
    analyse(curves)


if __name__ == "__main__":
    main()
