"""One step of a public path of benchmarks/compile.py, run as a whole process, recording what numba
compiles in it.

    python benchmarks/compile_probe.py STEP WORKDIR RECORD.json

STEP is one of ``STEPS``; WORKDIR holds the step's inputs (written by compile.py) and outputs. Every
compilation of a kernel (numba's "numba:compile" event) is timed; a kernel's own seconds exclude
the kernels it compiles inside it (its callees). RECORD.json gets, per kernel ("module.function"
under structperc._kernels), its own seconds and its specialisations (argument types).
"""
import json
import os
import sys
import time
from pathlib import Path

from numba.core import event

STEPS = ("chunker-train", "chunker-eval", "tagger", "crf", "crf-sgd", "nbest", "tag", "prepare", "serve")


class CompileTimes(event.Listener):
    """Own (exclusive) seconds and signatures of every kernel numba compiles."""

    def __init__(self):
        self.stack, self.kernels = [], {}

    def on_start(self, ev):
        self.stack.append([time.perf_counter(), 0.0])

    def on_end(self, ev):
        start, nested = self.stack.pop()
        elapsed = time.perf_counter() - start
        if self.stack:
            self.stack[-1][1] += elapsed
        dispatcher = ev.data["dispatcher"]
        module = dispatcher.py_func.__module__.removeprefix("structperc._kernels.")
        entry = self.kernels.setdefault(f"{module}.{dispatcher.py_func.__name__}", {"seconds": 0.0, "signatures": []})
        entry["seconds"] += elapsed - nested
        entry["signatures"].append(", ".join(str(a) for a in ev.data["args"]))


def cli(*args):
    """The ``structperc`` program, in this process, as its console script runs it."""
    from structperc.cli.main import main

    def leave(code):  # the quick exit of `tag` and `eval` (os._exit): the record is written first
        raise SystemExit(code)

    sys.argv = ["structperc", *map(str, args)]
    os._exit, quick_exit = leave, os._exit
    try:
        main()
    except SystemExit as exit_:
        if exit_.code:
            raise
    finally:
        os._exit = quick_exit


def read_columns(path):
    """(X, y) of a CoNLL-2000 file: per sentence the (word, POS) pairs and the chunk labels."""
    X, y = [[]], [[]]
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            word, pos, chunk = line.split()
            X[-1].append((word, pos))
            y[-1].append(chunk)
        elif X[-1]:
            X.append([])
            y.append([])
    return (X[:-1], y[:-1]) if not X[-1] else (X, y)


def run(step, work):
    data = Path(work)
    if step == "chunker-train":
        cli("train", data / "train2000.txt", "--model", data / "np.npz", "--columns", "word,pos,chunk",
            "--only-types", "NP", "--templates", "chunk", "--epochs", "3", "--constrain", "bio", "--quiet")
    elif step == "chunker-eval":
        cli("eval", data / "test.txt", "--model", data / "np.npz")
    elif step == "nbest":
        cli("nbest", data / "test.txt", "--model", data / "model.npz", "-k", "5", "--output", data / "test.nbest",
            "--quiet")
    elif step == "tag":
        cli("tag", data / "test.txt", "--model", data / "model.npz", "--output", data / "test.tagged", "--quiet")
    elif step == "prepare":  # the model of nbest and tag, trained with a cache of its own
        cli("train", data / "train2000.txt", "--model", data / "model.npz", "--columns", "word,pos,chunk",
            "--only-types", "NP", "--templates", "chunk", "--epochs", "3", "--constrain", "bio", "--quiet")
    elif step == "tagger":
        from structperc import Tagger

        X, y = read_columns(data / "train2000.txt")
        test, _ = read_columns(data / "test.txt")
        Tagger(templates="chunk").fit(X, y).predict(test)
    elif step in ("crf", "crf-sgd"):
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_dicts import read_conll2002, sent2features

        import structperc

        sentences = read_conll2002(data / "ned.train20")
        X = [sent2features(s) for s in sentences]
        y = [[label for *_, label in s] for s in sentences]
        if step == "crf":
            crf = structperc.CRF(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=100, all_possible_transitions=True)
        else:  # the crf rule's own solver, SGD
            crf = structperc.Tagger(trainer="crf")
        crf.fit(X, y)
        crf.predict(X)
    elif step == "serve":  # the master's warm-up of `structperc serve en-ewt-upos nl-conll2002-ner`, in-process
        from structperc.serve.served import load_served

        for model in ("en-ewt-upos", "nl-conll2002-ner"):  # named models built beforehand (WORKDIR unused)
            load_served(model)
    else:
        raise SystemExit(f"unknown step {step!r}: one of {', '.join(STEPS)}")


def main():
    step, work, record = sys.argv[1:4]
    times = CompileTimes()
    event.register("numba:compile", times)
    start = time.perf_counter()
    run(step, work)
    seconds = time.perf_counter() - start
    Path(record).write_text(json.dumps({"step": step, "seconds": seconds, "kernels": times.kernels}))


if __name__ == "__main__":
    main()
