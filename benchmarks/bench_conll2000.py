"""structperc beside python-crfsuite on CoNLL-2000, same data, same `chunk` templates.

The rows that face a python-crfsuite row (``*_peer``) train with its settings: no transition
constraint (CRFsuite has none), the same epochs, and for the CRF by SGD the same c2 and no
averaging (CRFsuite's l2sgd has none). The results file records each job's settings in a table that
``headline.py`` reads.

Every job is a separate process, timed as a whole (start, read, extract, train, save; or start,
read, extract, tag, write) with its peak RSS from wait4, for both systems alike. Each job runs
REPEATS times, in rounds (each round runs every job once, both systems), so that a drift of
the machine's speed touches every job alike; the table gives the median with the minimum and
maximum of that one run of the script, never a kept fast run, and each ratio also as the median
of its per-round ratios. structperc's cold time is measured with an empty numba cache each
time, its warm time with the cache the cold runs filled.

Writes benchmarks/results.md and refreshes the figures blocks of README.md and docs/ that quote it.

usage: python benchmarks/bench_conll2000.py [--corpus corpora/conll2000] [--skip-crfsuite] [--repeats 3]
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from process import run_process  # benchmarks/process.py (the script's folder is on sys.path)
from sections import refresh_figures, write_section  # benchmarks/sections.py (the script's folder is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
CRFSUITE_JOB = ROOT / "benchmarks" / "crfsuite_job.py"
SECTION = "bench-conll2000"  # the marked section of README.md and of the results file
TRAIN_TOKENS, TEST_TOKENS = 211727, 47377


def summary(runs):
    """Median, minimum and maximum seconds, median peak RSS and the last stdout of ``process.Run`` runs."""
    seconds = [r.seconds for r in runs]
    return {"seconds": statistics.median(seconds), "min": min(seconds), "max": max(seconds),
            "rss_mb": statistics.median(r.rss_mb for r in runs), "stdout": runs[-1].stdout, "runs": seconds}


def measure(cmd, repeats, env=None, before=None):
    """Run ``cmd`` ``repeats`` times (calling ``before()`` ahead of each run); ``summary`` of the runs."""
    runs = []
    for _ in range(repeats):
        if before is not None:
            before()
        runs.append(run_process(cmd, env))
    return summary(runs)


# structperc's CRF default: L2 with CRFsuite's c2 = 0.1 (``--l2`` 0.2 / N); python-crfsuite's l2sgd runs with it too
CRF_C2 = 0.1


def job_settings(system, algorithm, averaged, c2, constraint, epochs, np_only):
    """The settings row of one training job, as the results file records them (``headline.py`` reads them)."""
    return {"system": system, "algorithm": algorithm, "averaged": "yes" if averaged else "no",
            "c2": "-" if c2 is None else f"{c2:g}", "constraint": constraint, "epochs": str(epochs),
            "templates": "chunk", "types": "NP" if np_only else "all"}


def job_label(settings, suffix="train"):
    """A job's label from its settings: every setting that tells two rows apart is in it."""
    c2 = "" if settings["c2"] == "-" else f", c2 {settings['c2']}"
    return (f"{settings['system']} {settings['algorithm']} {'avg' if settings['averaged'] == 'yes' else 'noavg'}{c2}, "
            f"{settings['epochs']} epochs, {'NP' if settings['types'] == 'NP' else 'all types'}, "
            f"{'no' if settings['constraint'] == 'none' else settings['constraint']} constraint ({suffix})")


def structperc_train(corpus, model, trainer="perceptron", epochs=10, np_only=False, extra=(), constrain="bio"):
    return [BIN / "structperc", "train", corpus / "train.txt", "--model", model, "--columns", "word,pos,chunk",
            "--templates", "chunk", "--epochs", str(epochs), "--constrain", constrain, "--trainer", trainer,
            "--quiet", *(["--only-types", "NP"] if np_only else []), *extra]


def structperc_f1(corpus, model, env):
    out = run_process([BIN / "structperc", "eval", corpus / "test.txt", "--model", model, "--json"], env).stdout
    return json.loads(out)["f1"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT / "corpora" / "conll2000")
    parser.add_argument("--skip-crfsuite", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", type=Path, default=ROOT / "benchmarks" / "results.md")
    args = parser.parse_args()
    corpus, repeats = args.corpus, args.repeats
    work = Path(tempfile.mkdtemp(prefix="structperc-bench-"))
    cache = work / "numba-cache"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    rows = {}

    def add(key, label, result, tokens=None, f1=None, note=""):
        result.update(label=label, f1=f1, note=note)
        if tokens:
            result["tokens_per_second"] = tokens / result["seconds"]
        rows[key] = result
        print(f"{label}: median {result['seconds']:.2f} s", file=sys.stderr, flush=True)

    settings = {}  # key: the job's settings row

    # cold: an empty numba cache before every run, so every kernel compiles
    cold = structperc_train(corpus, work / "cold.npz")
    settings["cold"] = job_settings("structperc", "perceptron", True, None, "bio", 10, False)
    add("cold", job_label(settings["cold"], "train, cold numba cache"),
        measure(cold, repeats, env, before=lambda: shutil.rmtree(cache, ignore_errors=True)))
    # fill the cache for every kernel a later job calls (tagging included)
    run_process([BIN / "structperc", "tag", corpus / "test.txt", "--model", work / "cold.npz",
              "--output", work / "cold.txt", "--quiet"], env)

    # every warm job, structperc's and python-crfsuite's, runs once per round and the rounds repeat:
    # a drift of the machine's speed during the script then touches every job alike
    jobs = []  # (key, label, command, tokens, model file, kind)
    # the *_peer jobs train as python-crfsuite does: no constraint (CRFsuite has none) and, for the CRF,
    # no averaging (its l2sgd has none); the others with the BIO constraint the chunker is run with
    for key, trainer, epochs, np_only, average, constrain in (
            ("sp_all", "perceptron", 10, False, True, "bio"), ("sp_all_peer", "perceptron", 10, False, True, "none"),
            ("sp_np", "perceptron", 10, True, True, "bio"), ("sp_np_noavg", "perceptron", 10, True, False, "bio"),
            ("sp_crf", "crf", 20, True, True, "bio"), ("sp_crf_peer", "crf", 20, True, False, "none"),
            ("sp_hinge", "hinge", 10, True, True, "bio"), ("sp_hinge_noavg", "hinge", 10, True, False, "bio"),
            ("sp_memm", "memm", 10, True, True, "bio")):
        model = work / f"{key}.npz"
        settings[key] = job_settings("structperc", trainer, average, None if trainer == "perceptron" else CRF_C2,
                                     constrain, epochs, np_only)
        extra = () if average else ("--no-average",)
        jobs.append((key, job_label(settings[key]),
                     structperc_train(corpus, model, trainer, epochs, np_only, extra, constrain),
                     TRAIN_TOKENS * epochs, model, "sp"))
    jobs.append(("sp_tag", "structperc tag, all types, no constraint (the averaged perceptron's model)",
                 [BIN / "structperc", "tag", corpus / "test.txt", "--model", work / "sp_all_peer.npz", "--output",
                  work / "tagged.txt"], TEST_TOKENS, None, "sp"))
    if not args.skip_crfsuite:
        for key, algorithm, epochs, np_only in (("cs_all", "ap", 10, False), ("cs_np", "ap", 10, True),
                                                ("cs_sgd", "l2sgd", 20, True)):
            model = work / f"{key}.crfsuite"
            types = ["NP"] if np_only else []
            c2 = CRF_C2 if algorithm == "l2sgd" else None
            # ap: CRFsuite's averaged perceptron; l2sgd: plain SGD, no averaging
            settings[key] = job_settings("python-crfsuite", algorithm, algorithm == "ap", c2, "none", epochs, np_only)
            jobs.append((key, job_label(settings[key]),
                         [sys.executable, CRFSUITE_JOB, "train", corpus / "train.txt", model, algorithm, epochs,
                          "-" if c2 is None else c2, *types], TRAIN_TOKENS * epochs, model, "cs"))
            jobs.append((f"{key}_tag", f"python-crfsuite tag, {'NP' if np_only else 'all types'}, no constraint",
                         [sys.executable, CRFSUITE_JOB, "tag", corpus / "test.txt", model, work / f"{key}.txt",
                          *types], TEST_TOKENS, None, "cs"))
    for key, label, cmd, _, _, kind in jobs:
        if kind == "sp" and key != "sp_tag":
            run_process(cmd, env)  # not counted: compiles the kernels of the other learning rules into the cache
    runs = {key: [] for key, *_ in jobs}
    for round_ in range(repeats):
        for key, label, cmd, _, _, kind in jobs:
            runs[key].append(run_process(cmd, env if kind == "sp" else None))
            print(f"round {round_ + 1}/{repeats}: {label}: {runs[key][-1][0]:.2f} s", file=sys.stderr, flush=True)
    for key, label, cmd, tokens, model, kind in jobs:
        result = summary(runs[key])
        if key == "sp_tag":
            add(key, label, result, tokens)
        elif key == "cs_all_tag":
            add("cs_tag", label, result, tokens)
        elif key.endswith("_tag"):
            continue  # the NP taggings only give their F1 to the training rows
        elif kind == "sp":
            add(key, label, result, tokens, structperc_f1(corpus, model, env))
        else:
            split = json.loads(result["stdout"])
            f1 = json.loads(runs[f"{key}_tag"][-1].stdout)["f1"]
            add(key, label, result, tokens, f1,
                f"in process: extract {split['extract_seconds']:.2f} s + train {split['train_seconds']:.2f} s")
    shutil.rmtree(work, ignore_errors=True)

    lines = [f"Each job: {repeats} whole-process runs in one run of the script; median (min-max) seconds, "
             "median peak RSS.", "",
             "| job | seconds, median (min-max) | tokens/s | peak RSS MB | test F1 | note |",
             "|---|---:|---:|---:|---:|---|"]
    for r in rows.values():
        tps = f"{r['tokens_per_second']:,.0f}" if "tokens_per_second" in r else ""
        f1 = f"{r['f1']:.2f}" if r["f1"] is not None else ""
        lines.append(f"| {r['label']} | {r['seconds']:.2f} ({r['min']:.2f}-{r['max']:.2f}) | {tps} | "
                     f"{r['rss_mb']:.0f} | {f1} | {r['note']} |")
    columns = list(next(iter(settings.values())))
    lines += ["", "Settings of each training job (`headline.py` reads this table; a dash: the rule has no such "
              "setting; CRFsuite has no transition constraint, and its l2sgd no averaging):", "",
              "| job | id | " + " | ".join(columns) + " |", "|---|---|" + "---|" * len(columns)]
    lines += [f"| {rows[key]['label']} | {key} | " + " | ".join(row[c] for c in columns) + " |"
              for key, row in settings.items() if key in rows]
    lines.append("")

    def ratio(a, b, what):
        if a in rows and b in rows:
            x, y = rows[a]["seconds"], rows[b]["seconds"]
            paired = statistics.median(p / q for p, q in zip(rows[a]["runs"], rows[b]["runs"]))
            lines.append(f"- {what}: {x:.2f} / {y:.2f} = **{x / y:.3f}** (median of the per-round ratios "
                         f"{paired:.3f})")

    ratio("sp_all_peer", "cs_all", "training, all types, averaged perceptron, no constraint, "
          "structperc / python-crfsuite")
    ratio("sp_crf_peer", "cs_sgd", "CRF by SGD, not averaged, c2 0.1, no constraint, NP, 20 epochs, "
          "structperc / python-crfsuite")
    ratio("sp_tag", "cs_tag", "tagging the test file, no constraint, structperc / python-crfsuite")
    for a, b, what in (("sp_hinge", "sp_np", "averaged"), ("sp_hinge_noavg", "sp_np_noavg", "not averaged")):
        if a in rows and b in rows:
            lines.append(f"- hinge against perceptron, both {what}, NP F1: {rows[a]['f1']:.2f} against "
                         f"{rows[b]['f1']:.2f}")
    table = "\n".join(lines)
    header = f"# CoNLL-2000 benchmark\n\nMachine: {os.cpu_count()} cores; `make bench`.\n\n"
    write_section(args.output, SECTION, header + table)
    refresh_figures()  # README.md and docs/ quote the results file between figures markers
    print(header + table)


if __name__ == "__main__":
    main()
