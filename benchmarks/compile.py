"""What compiling the numba kernels costs each public path, and each kernel: writes benchmarks/compile.md.

    python benchmarks/compile.py [--rounds 3] [--paths chunker,tagger,crf,crf-sgd,nbest,tag] [--before FILE ...]
    make compile-budget   (3 rounds, beside the stages of benchmarks/compile_stages/)

Each path runs as whole processes (``compile_probe.py``), first with an empty numba cache
(NUMBA_CACHE_DIR set to a new temporary folder), then again with the cache that run filled; cold
minus warm is what compiling cost the path. The paths, as a new user meets them:

- chunker: ``structperc train`` on the first 2,000 sentences of CoNLL-2000 (NP chunks, the chunk
  templates, 3 epochs, BIO constraint), then ``structperc eval`` on its test set: two processes;
- tagger: ``Tagger(templates="chunk").fit(X, y).predict(X_test)`` from Python, same data;
- crf: ``structperc.CRF`` with the sklearn-crfsuite tutorial's arguments (lbfgs, c1=c2=0.1, 100
  iterations, all possible transitions) fit and predict on its feature dicts of the first 20
  sentences of ned.train;
- crf-sgd: ``structperc.Tagger(trainer="crf")``, the crf rule with its own solver (SGD), fit and
  predict on the same feature dicts;
- nbest: ``structperc nbest -k 5`` on the CoNLL-2000 test set with a chunker trained beforehand
  (with a cache of its own);
- tag: ``structperc tag`` of the same file with the same model.

Each kernel's own compile seconds (numba's "numba:compile" events, less those of the kernels it
compiles inside it) come from the cold runs; a kernel's row gives the median over the paths and
rounds that compiled it, its specialisations (distinct argument types) and the paths that need it.
With ``--before`` (compile.json files of earlier commits: benchmarks/compile_stages/ holds those of
the commits before and after each cut of issue 31), they are shown side by side.
Also writes benchmarks/compile.json, the raw records.
"""
import argparse
import json
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
PROBE = Path(__file__).resolve().parent / "compile_probe.py"
PATHS = {"chunker": ("chunker-train", "chunker-eval"), "tagger": ("tagger",), "crf": ("crf",),
         "crf-sgd": ("crf-sgd",), "nbest": ("nbest",), "tag": ("tag",)}
DESCRIPTION = {"chunker": "NP chunker: `train` (2,000 sentences, 3 epochs) + `eval`",
               "tagger": '`Tagger(templates="chunk").fit(...).predict(...)`',
               "crf": "`CRF` (tutorial's arguments) fit + predict, 20 sentences of dicts",
               "crf-sgd": '`Tagger(trainer="crf")` (SGD) fit + predict, the same dicts',
               "nbest": "`nbest -k 5`", "tag": "`tag`"}
TARGET = 15.0  # seconds of compiling per path (issue 31)
# what each commit of benchmarks/compile_stages/ did to the compile cost (issue 31's levers)
STAGES = {
    "88bb74d": "before the cuts",
    "0aa3161": "decoding, k-best and marginals: serial kernels with nogil=True on Python threads instead of "
               "parallel=True (threads.py); the decoder chosen by the types of the layout's flags, so a kernel "
               "holds one decoder's code, not all four",
    "97bf1d6": "the thin decoder wrappers inlined by numba (inline=\"always\": no library of their own, whose "
               "callees LLVM optimized again); no reshape or slice assignment in the per-sentence kernels (their "
               "error messages compiled numba's string code)",
    "8694342": "the data's flags (tag dictionary, partial labels) chosen by type as well: a corpus without them "
               "compiles no candidate or partial-label code; the CRF objective in probability space, one parallel "
               "kernel",
    "5a43fed": "the probability-space CRF objective split: the blocks' forward-backward stays one parallel "
               "kernel (the index of its parallel loop made int64, since numba compiles the loop's body with an "
               "unsigned index and compiled the helper it calls twice; the sentence's recursion inlined into the "
               "block's kernel; the boundary tables in the tables record), the log-space fallback is compiled only "
               "when a sentence needs it (its forward-backward and numba's string code no longer compile on every "
               "path), the emission gradient is a serial nogil kernel on Python threads",
    "55bea1e": "the kernels borrow their arguments and buffers (numba counts no references on the rows they "
               "take); the objective's blocks run as a serial nogil kernel on Python threads, so the CRF path "
               "compiles no parallel kernel",
}
LATER = ("the partial-label flag of the data set for the CRF's likelihood alone (``records.with_partial_labels``): "
         "decoding and the other learners compile one version for labelled and partially labelled data; the "
         "CRF's step counts, sentence likelihood, chain marginals and scaled forward-backward inlined by numba (no "
         "library of their own); "
         "the SGD CRF's batch copies its counts by index, not by slice assignment (numba's string code)")


def sentences(path, count):
    """The first ``count`` blank-line separated sentences of ``path``, as text (-DOCSTART- dropped)."""
    blocks = [b for b in Path(path).read_text(encoding="utf-8").split("\n\n") if b.strip()]
    blocks = [b.strip("\n") for b in blocks if not b.lstrip().startswith("-DOCSTART-")]
    return "\n\n".join(blocks[:count]) + "\n\n"


def prepare(work):
    """The inputs of the paths in ``work``, and the model of nbest and tag."""
    conll = ROOT / "corpora" / "conll2000"
    if not (conll / "train.txt").is_file():
        subprocess.run([ROOT / ".venv" / "bin" / "structperc", "data", "fetch", "conll2000", "--mirror", MIRROR],
                       check=True, cwd=ROOT)
    (work / "train2000.txt").write_text(sentences(conll / "train.txt", 2000), encoding="utf-8")
    shutil.copy(conll / "test.txt", work / "test.txt")
    (work / "ned.train20").write_text(sentences(MIRROR / "conll2002_nl" / "ned.train", 20), encoding="utf-8")
    run_step("prepare", work, work / "prepare-cache")


def run_step(step, work, cache):
    """The probe's record of ``step`` with the numba cache folder ``cache``, plus its process's wall seconds."""
    record = work / f"{step}.json"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    done = run_process([sys.executable, PROBE, step, work, record], env)
    result = json.loads(record.read_text())
    result.update(process=done.seconds, cpu=done.cpu, stderr=done.stderr)
    return result


def run_path(name, work):
    """One round of path ``name``: its steps cold (an empty cache), then warm (the same cache)."""
    cache = Path(tempfile.mkdtemp(prefix="numba-cache-", dir=work))
    try:
        cold = [run_step(step, work, cache) for step in PATHS[name]]
        warm = [run_step(step, work, cache) for step in PATHS[name]]
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    kernels = {}
    for record in cold:
        for kernel, entry in record["kernels"].items():
            mine = kernels.setdefault(kernel, {"seconds": 0.0, "signatures": []})
            mine["seconds"] += entry["seconds"]
            mine["signatures"] += entry["signatures"]
    notices = [line for record in cold for line in record["stderr"].splitlines() if "compiling" in line]
    return {"cold": sum(r["process"] for r in cold), "warm": sum(r["process"] for r in warm),
            "cold_cpu": sum(r["cpu"] for r in cold), "warm_cpu": sum(r["cpu"] for r in warm),
            "kernels": kernels, "notices": notices,
            "warm_compiled": sorted(k for r in warm for k in r["kernels"])}


def summarize(rounds):
    """Per path: median cold, warm and cold - warm; per kernel: median seconds, signatures, paths."""
    paths, kernels = {}, {}
    for name in rounds[0]:
        runs = [r[name] for r in rounds]
        paths[name] = {"cold": statistics.median(r["cold"] for r in runs),
                       "warm": statistics.median(r["warm"] for r in runs),
                       "compile": statistics.median(r["cold"] - r["warm"] for r in runs),
                       "compile_cpu": statistics.median(r["cold_cpu"] - r["warm_cpu"] for r in runs),
                       "kernel_seconds": statistics.median(sum(k["seconds"] for k in r["kernels"].values())
                                                           for r in runs),
                       "warm_compiled": sorted({k for r in runs for k in r["warm_compiled"]})}
        for run in runs:
            for kernel, entry in run["kernels"].items():
                mine = kernels.setdefault(kernel, {"seconds": [], "signatures": set(), "paths": []})
                mine["seconds"].append(entry["seconds"])
                mine["signatures"].update(entry["signatures"])
                if name not in mine["paths"]:
                    mine["paths"].append(name)
    return paths, {k: {"seconds": statistics.median(v["seconds"]), "specialisations": len(v["signatures"]),
                       "paths": v["paths"]} for k, v in kernels.items()}


def table(paths, kernels, earlier, rounds, commit, load):
    """The text of compile.md; ``earlier`` are the records (compile.json) of earlier commits, the
    first of them the "before" of the kernel table."""
    before = earlier[0] if earlier else None
    load = float("nan") if load is None else load
    old_kernels = before["kernels"] if before else {}

    def was(records, key, field):
        return f"{records[key][field]:.1f}" if field in records.get(key, {}) else "-"

    lines = [f"# Compiling the kernels (`python benchmarks/compile.py --rounds {rounds}`, commit {commit})", "",
             "Each path runs as whole processes, first with an empty numba cache (NUMBA_CACHE_DIR a new temporary "
             "folder), then again with the cache it filled: cold - warm is what compiling costs it. "
             f"Medians of {rounds} round(s); wall seconds"
             + (f"; load average {load:.2f} at the end." if load == load else ".")
             + (" Earlier commits, measured by this script on their source: "
                + ", ".join(f"{e['commit']} ({e['rounds']} round(s), load average {e.get('load', float('nan')):.2f})"
                            for e in earlier)
                + ". Under load the wall seconds (a kernel's seconds too) swell; CPU seconds compare across loads."
                if earlier else ""), "",
             "| path | cold | warm | **cold - warm** | CPU seconds: cold - warm | kernels' own compile seconds |"
             + "".join(f" {e['commit']}: cold - warm (CPU) |" for e in earlier),
             "|---|---|---|---|---|---|" + "---|" * len(earlier)]
    for name, p in paths.items():
        row = (f"| {DESCRIPTION[name]} | {p['cold']:.1f} | {p['warm']:.1f} | **{p['compile']:.1f}** "
               f"| {p['compile_cpu']:.1f} | {p['kernel_seconds']:.1f} |")
        for e in earlier:
            row += f" {was(e['paths'], name, 'compile')} ({was(e['paths'], name, 'compile_cpu')}) |"
        lines.append(row)
    lines += ["", f"Target: cold - warm at most {TARGET:.0f} s for each path. The CPU seconds (the processes' own, "
              "user + system) move less with the machine's load than wall seconds. A warm run that still compiled: "
              + (", ".join(f"{n} ({', '.join(p['warm_compiled'])})" for n, p in paths.items() if p["warm_compiled"])
                 or "none") + ".", "",
              "Every kernel compiled on these paths, most expensive first: its own compile seconds (median over "
              "the paths and rounds that compiled it; the kernels it calls are counted in their own rows), "
              "its specialisations (distinct argument types compiled) and the paths that need it.", "",
              "| kernel | seconds | specialisations | paths |" + (" before: seconds | before: specialisations |"
                                                                   if before else ""),
              "|---|---|---|---|" + ("---|---|" if before else "")]
    names = sorted(set(kernels) | set(old_kernels), key=lambda k: -kernels.get(k, {"seconds": 0})["seconds"])
    for kernel in names:
        k = kernels.get(kernel)
        row = (f"| `{kernel}` | {k['seconds']:.2f} | {k['specialisations']} | {', '.join(k['paths'])} |" if k
               else f"| `{kernel}` | - | - | - |")
        if before:
            o = old_kernels.get(kernel)
            row += f" {o['seconds']:.2f} | {o['specialisations']} |" if o else " - | - |"
        lines.append(row)
    if earlier:
        lines += ["", "The commits measured: " + "; ".join(f"{e['commit']}: {STAGES.get(e['commit'], '')}"
                                                       for e in earlier)
                  + f"; then, up to {commit}: {LATER}."]
    lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--paths", default=",".join(PATHS), help="comma separated, of: " + ", ".join(PATHS))
    parser.add_argument("--before", type=Path, nargs="*", default=[],
                        help="compile.json files of earlier commits, shown beside (the first in the kernel table)")
    parser.add_argument("--output", type=Path, default=ROOT / "benchmarks" / "compile.md")
    parser.add_argument("--table-only", action="store_true",
                        help="run nothing: write the .md from the .json beside it, as the last run left it")
    args = parser.parse_args()
    earlier = [json.loads(path.read_text()) for path in args.before]
    if args.table_only:
        raw = json.loads(args.output.with_suffix(".json").read_text())
        args.output.write_text(table(raw["paths"], raw["kernels"], earlier, raw["rounds"], raw["commit"],
                                     raw.get("load")), encoding="utf-8")
        return
    names = args.paths.split(",")
    unknown = sorted(set(names) - set(PATHS))
    if unknown:
        parser.error(f"unknown path(s) {', '.join(unknown)}: choose among {', '.join(PATHS)}")
    done = subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%h"], capture_output=True, text=True)
    commit = done.stdout.strip() if done.returncode == 0 else os.environ.get("COMMIT", "unknown")
    work = Path(tempfile.mkdtemp(prefix="structperc-compile-"))
    try:
        prepare(work)
        rounds = []
        for number in range(args.rounds):
            rounds.append({})
            for name in names:
                rounds[-1][name] = run_path(name, work)
                r = rounds[-1][name]
                print(f"round {number + 1} {name}: cold {r['cold']:.1f} s, warm {r['warm']:.1f} s, CPU cold "
                      f"{r['cold_cpu']:.1f} s, warm {r['warm_cpu']:.1f} s, kernels "
                      f"{sum(k['seconds'] for k in r['kernels'].values()):.1f} s; notices {r['notices']}",
                      file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    paths, kernels = summarize(rounds)
    raw = {"commit": commit, "rounds": args.rounds, "load": os.getloadavg()[0], "paths": paths, "kernels": kernels}
    args.output.with_suffix(".json").write_text(json.dumps(raw, indent=1) + "\n", encoding="utf-8")
    text = table(paths, kernels, earlier, args.rounds, commit, raw["load"])
    args.output.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
