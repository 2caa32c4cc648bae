"""Choose the SGD rules' defaults on development data: the L2 strength (c2, CRFsuite's units) and the factor
on the calibrated initial learning rate when the weights are averaged.

Each variant sets the two module constants the defaults read (``structperc.train.sgd.DEFAULT_C2`` and
``AVERAGED_RATE_FACTOR``) and trains with no other option than the rule (and the preset where named).
The tasks, all scored on development data only (no test file is read):

- ``np``, ``chunk``: CoNLL-2000 NP chunking and all chunk types, trained on the first 90 % of train.txt's
  sentences and scored (chunk F1) on the last 10 %;
- ``ewt``: UD English EWT UPOS, train on dev (accuracy);
- ``ner``: CoNLL-2002 Dutch, ned.train on ned.testa with the ``ner`` preset (entity F1);
- ``ner dicts``: the same with the feature dicts of sklearn-crfsuite's tutorial (``benchmarks/bench_dicts.py``).

    python experiments/sgd_defaults.py [--corpora corpora]

Writes experiments/results/sgd_defaults.md.
"""
import argparse
import functools
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
import structperc.train.sgd as sgd  # noqa: E402
from bench_dicts import entity_f1, read_conll2002, sent2features  # noqa: E402
from structperc.estimator.tagger import Tagger  # noqa: E402

OUTPUT = ROOT / "experiments" / "results" / "sgd_defaults.md"
# (c2, rate factor): CRFsuite's l2sgd (the former defaults), each change alone, both, and a larger factor
VARIANTS = [(1.0, 1.0), (0.1, 1.0), (1.0, 2.0), (0.1, 2.0), (0.1, 4.0)]
CHOSEN = (sgd.DEFAULT_C2, sgd.AVERAGED_RATE_FACTOR)


def split_conll2000(train, folder):
    """The first 90 % of the sentences of ``train`` and the last 10 %, as two files in ``folder``."""
    blocks = Path(train).read_text(encoding="utf-8").strip().split("\n\n")
    cut = int(len(blocks) * 0.9)
    paths = []
    for name, part in (("train", blocks[:cut]), ("dev", blocks[cut:])):
        path = Path(folder) / f"chunk.{name}"
        path.write_text("\n\n".join(part) + "\n\n", encoding="utf-8")
        paths.append(path)
    return paths


def file_task(train, dev, reader_options, **tagger_options):
    def run():
        tagger = Tagger(**tagger_options).fit_file(train, **reader_options)
        result = tagger.evaluate_file(dev)
        return result.get("f1", result.get("accuracy"))
    return run


@functools.lru_cache(maxsize=1)
def dicts_data(corpus):
    """(X, y, X_dev, y_dev): the tutorial's feature dicts of ned.train and ned.testa."""
    train, dev = read_conll2002(corpus / "ned.train"), read_conll2002(corpus / "ned.testa")
    X, y = [sent2features(s) for s in train], [[t[-1] for t in s] for s in train]
    X_dev, y_dev = [sent2features(s) for s in dev], [[t[-1] for t in s] for s in dev]
    return X, y, X_dev, y_dev


def dicts_task(corpus, **tagger_options):
    X, y, X_dev, y_dev = dicts_data(corpus)

    def run():
        return entity_f1(y_dev, Tagger(**tagger_options).fit(X, y).predict(X_dev))
    return run


def dev_tasks(corpora, folder):
    """The development tasks (the module's docstring), each a function of Tagger options to a run of
    the task with them: a call without arguments that trains and returns the dev score. ``folder``
    holds the CoNLL-2000 split."""
    chunk_train, chunk_dev = split_conll2000(corpora / "conll2000" / "train.txt", folder)
    ewt, ned = corpora / "ud_english_ewt", corpora / "conll2002_nl"
    chunk_columns = {"columns": ["word", "pos", "chunk"]}
    np_columns = dict(chunk_columns, only_types=["NP"])  # every chunk but NP read as O, dev too
    return {
        "np": lambda **o: file_task(chunk_train, chunk_dev, np_columns, **o),
        "chunk": lambda **o: file_task(chunk_train, chunk_dev, chunk_columns, **o),
        "ewt": lambda **o: file_task(ewt / "en_ewt-ud-train.conllu", ewt / "en_ewt-ud-dev.conllu",
                                     {"label": "upos"}, **o),
        "ner": lambda **o: file_task(ned / "ned.train", ned / "ned.testa", {"columns": ["word", "pos", "ner"]},
                                     templates="ner", **o),
        "ner dicts": lambda **o: dicts_task(ned, **o),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default=str(ROOT / "corpora"))
    args = parser.parse_args()
    corpora = Path(args.corpora)
    with tempfile.TemporaryDirectory() as folder:
        dev = dev_tasks(corpora, folder)
        tasks = {
            **{f"crf, {name}": make(trainer="crf") for name, make in dev.items()},
            "memm, np": dev["np"](trainer="memm"),
            "hinge, np": dev["np"](trainer="hinge"),
        }
        scores, seconds = {}, {}
        for c2, factor in VARIANTS:
            sgd.DEFAULT_C2, sgd.AVERAGED_RATE_FACTOR = c2, factor
            for task, run in tasks.items():
                start = time.perf_counter()
                scores[task, c2, factor] = run()
                seconds[task, c2, factor] = time.perf_counter() - start
                print(f"c2 {c2:g} factor {factor:g}  {task:16s} {scores[task, c2, factor]:6.2f}  "
                      f"{seconds[task, c2, factor]:5.1f}s", flush=True)
        sgd.DEFAULT_C2, sgd.AVERAGED_RATE_FACTOR = CHOSEN

    header = "| c2 | rate factor | " + " | ".join(tasks) + " | mean change |"
    lines = [
        "# The SGD rules' defaults, chosen on development data",
        "",
        f"`python experiments/sgd_defaults.py`: each rule with no option but the preset named (10 epochs, "
        "averaged, seed 0), trained on the training part and scored on development data only: CoNLL-2000 "
        "NP chunking and all chunk types (first 90 % of train.txt / last 10 %; chunk F1), EWT UPOS (dev "
        "accuracy), CoNLL-2002 Dutch (ned.testa entity F1) with the `ner` preset and with the feature dicts "
        "of sklearn-crfsuite's tutorial. c2 in CRFsuite's units (λ = 2 c2 / N per example); the rate factor "
        "multiplies the calibrated η₀ when the weights are averaged. The first row is CRFsuite's l2sgd "
        f"(the former defaults). Machine: x86_64, Python {platform.python_version()}.",
        "",
        header,
        "|" + "---|" * (len(tasks) + 3),
    ]
    base = VARIANTS[0]
    for c2, factor in VARIANTS:
        change = sum(scores[t, c2, factor] - scores[(t,) + base] for t in tasks) / len(tasks)
        mark = " **(chosen)**" if (c2, factor) == CHOSEN else ""
        cells = " | ".join(f"{scores[t, c2, factor]:.2f}" for t in tasks)
        lines.append(f"| {c2:g}{mark} | {factor:g} | {cells} | {change:+.2f} |")
    lines += ["", f"The defaults in `structperc/train/sgd.py`: c2 = {CHOSEN[0]:g}, rate factor {CHOSEN[1]:g}."]
    OUTPUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
