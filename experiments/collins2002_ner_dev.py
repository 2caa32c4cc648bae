"""What moves the Collins (2002) row on ned.testa: the learners' spread over shuffle seeds at the
settings the table chose, and feature changes beside the chosen set.

The table (``collins2002_ner.py --quick``) chooses a feature set and each learner's settings on testa
and reports testb. This script reads the settings it chose (experiments/results/collins2002_ner_quick.json),
uses the same cached n-best lists, and scores on testa only; testb is never read.

- Seeds: the averaged and the voted perceptron at their chosen settings, with the per-epoch shuffle
  of the training groups seeded 0 to 5 (the table uses seed 0).
- Features, each a change of the chosen set, scored by the averaged perceptron's grid (best and mean
  over its settings) and the voted perceptron at its chosen setting:
  - ``corpus``: the set with the ``corpus`` family switched (on when the set lacks it, else off): the
    ``document`` counts over the whole file, for a training sentence over its jackknife fold;
  - ``around``: the set with the ``around`` family switched: the word before and the word after each
    entity, with its type (``entity_before1``, ``entity_after1``);
  - ``cutoff 2`` and ``cutoff 5``: the chosen set without the features that occur in fewer than 2 (5)
    training sentences.

Writes experiments/results/collins2002_ner_dev.md and .json. Run: ``make reproduce-ner-dev`` (after
``make reproduce-ner-quick``).
"""
import json
import multiprocessing
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import collins2002_ner as table  # noqa: E402

from structperc.rerank.context import featurize_in_context  # noqa: E402
from structperc.rerank.data import SCORE_FEATURE, RankingData  # noqa: E402
from structperc.rerank.pipeline import DualReranker, Reranker  # noqa: E402

SEEDS = range(6)
SWITCHED = ("corpus", "around")  # families switched on or off beside the chosen set
CUTOFFS = (2, 5)


def log(message):
    print(message, file=sys.stderr, flush=True)


def without_rare(data, counts, cutoff):
    """RankingData ``data`` without the features that ``counts`` (training sentences per id) puts
    below ``cutoff``; the score feature is kept."""
    ids = data.feature_ids
    keep = (ids < len(counts)) & (counts[np.minimum(ids, len(counts) - 1)] >= cutoff)
    keep |= ids == SCORE_FEATURE
    rows = np.repeat(np.arange(data.n_rows), np.diff(data.row_offsets))[keep]
    offsets = np.zeros(data.n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=data.n_rows), out=offsets[1:])
    return RankingData(data.group_offsets, offsets, ids[keep], data.values[keep], data.targets, data.qids,
                       data.comments)


def sentences_per_feature(data):
    """int64 (n_features,): the number of groups (training sentences) in which each id occurs."""
    row_group = np.repeat(np.arange(data.n_groups), np.diff(data.group_offsets))
    entry_group = np.repeat(row_group, np.diff(data.row_offsets))
    pairs = np.unique(data.feature_ids * (data.n_groups + 1) + entry_group)
    return np.bincount(pairs // (data.n_groups + 1), minlength=data.n_features)


SEED_INPUTS = {}  # what the forked workers of the seeds' voted perceptrons read


def voted_f1(nb, settings, train, dev, vocabulary, seed=table.SEED):
    """testa F1 of the voted perceptron at ``settings`` with shuffle seed ``seed``."""
    model = DualReranker(kernel="linear", vote="voted", seed=seed, **settings).fit_ranking(train, vocabulary)
    return nb.corpus_score(table.choice_of(nb, dev, model.choose(dev)))


def voted_at_seed(seed):
    """``voted_f1`` of the forked workers' inputs at shuffle seed ``seed`` (a worker's task)."""
    return voted_f1(seed=seed, **SEED_INPUTS)


def main():
    start = time.perf_counter()
    chosen = json.loads((table.RESULTS / "collins2002_ner_quick.json").read_text())
    families = chosen["settings"]["features"]
    settings = {name: chosen["rows"][name]["settings"] for name in ("averaged", "voted")}
    parts, lists = table.build_lists(held=("testa",))
    nb = lists["testa"]
    contexts = table.contexts(parts, lists)
    train, vocabulary = featurize_in_context(lists["train"], families, contexts["train"], {}, grow=True)
    dev, _ = featurize_in_context(nb, families, contexts["testa"], vocabulary)

    def dev_f1(model, data):
        return nb.corpus_score(table.choice_of(nb, data, model.choose(data)))

    def averaged(data, vocab, seed=table.SEED, **params):
        return dev_f1(Reranker(seed=seed, **params).fit_ranking(data[0], vocab), data[1])

    def voted(data, vocab):
        return voted_f1(nb, settings["voted"], data[0], data[1], vocab)

    result = {"families": families, "settings": settings, "seeds": {}, "features": {}}
    # the voted perceptron's dev votes, the costly part, in one forked process per core
    SEED_INPUTS.update(settings=settings["voted"], train=train, dev=dev, vocabulary=vocabulary, nb=nb)
    with multiprocessing.get_context("fork").Pool(min(len(SEEDS), os.cpu_count() or 1)) as pool:
        voted_f1 = pool.map(voted_at_seed, SEEDS)
    for seed, f1 in zip(SEEDS, voted_f1):
        result["seeds"][seed] = {"averaged": averaged((train, dev), vocabulary, seed, **settings["averaged"]),
                                 "voted": f1}
        log(f"seed {seed}: {result['seeds'][seed]}")

    def switched(family):
        """The chosen set with ``family`` switched (off when the set has it, else on), featurized."""
        more = [f for f in families if f != family] if family in families else [*families, family]
        more_train, more_vocabulary = featurize_in_context(lists["train"], more, contexts["train"], {}, grow=True)
        more_dev, _ = featurize_in_context(nb, more, contexts["testa"], more_vocabulary)
        return (more_train, more_dev), more_vocabulary

    variants = {"chosen set": lambda: ((train, dev), vocabulary)}
    for family in SWITCHED:
        variants[("- " if family in families else "+ ") + family] = lambda f=family: switched(f)
    counts = sentences_per_feature(train)
    for cutoff in CUTOFFS:
        variants[f"cutoff {cutoff}"] = lambda c=cutoff: ((without_rare(train, counts, c), without_rare(dev, counts, c)),
                                                         vocabulary)
    for name, make in variants.items():
        data, vocab = make()
        grid = [averaged(data, vocab, **params) for params in table.AVERAGED_GRID]
        n_features = len(np.unique(data[0].feature_ids)) - 1
        result["features"][name] = {"averaged_best": max(grid), "averaged_mean": float(np.mean(grid)),
                                    "voted": voted(data, vocab), "n_features": n_features}
        log(f"{name}: {result['features'][name]}")
    result["wall_seconds"] = time.perf_counter() - start
    result["machine"] = platform.machine()
    (table.RESULTS / "collins2002_ner_dev.json").write_text(json.dumps(result, indent=1) + "\n")
    (table.RESULTS / "collins2002_ner_dev.md").write_text(render(result))
    print(render(result))


def render(result):
    seeds = result["seeds"]
    lines = [
        "# What moves the Collins (2002) row on ned.testa",
        "",
        f"Produced by `experiments/collins2002_ner_dev.py` (`make reproduce-ner-dev`) on {result['machine']}; "
        f"wall time {result['wall_seconds'] / 60:.1f} min. Dev (testa) F1 only; testb is not read. The lists, "
        f"the feature set ({', '.join(result['families'])}) and the settings (averaged: "
        f"{json.dumps(result['settings']['averaged'])}; voted: {json.dumps(result['settings']['voted'])}) are "
        "those of `collins2002_ner_quick.md`, which chose them on testa with seed 0.",
        "",
        "## The learners over shuffle seeds, at the chosen settings",
        "",
        "| seed | averaged | voted |",
        "|---|---|---|",
    ]
    for seed, row in seeds.items():
        lines.append(f"| {seed} | {row['averaged']:.2f} | {row['voted']:.2f} |")
    lines += ["", "| learner | mean | sd | lowest | highest |", "|---|---|---|---|---|"]
    for name in ("averaged", "voted"):
        values = np.array([row[name] for row in seeds.values()])
        lines.append(f"| {name} | {values.mean():.2f} | {values.std(ddof=1):.2f} | {values.min():.2f} | "
                     f"{values.max():.2f} |")
    lines += [
        "",
        "## Feature changes beside the chosen set (seed 0)",
        "",
        "`+ corpus` / `- corpus`: the chosen set with the `corpus` family switched on / off (the document "
        "counts over the whole file, a training sentence's over its jackknife fold); `+ around` / `- around`: "
        "the same with the `around` family, the words just before and after each entity, with its type; "
        "`cutoff n`: without the "
        "features found in fewer than n training sentences. Averaged: the best and the mean dev F1 over "
        "the table's grid of epochs and score weights; voted: at its chosen setting.",
        "",
        "| features | ids in the training lists | averaged, best | averaged, mean | voted |",
        "|---|---|---|---|---|",
    ]
    for name, row in result["features"].items():
        lines.append(f"| {name} | {row['n_features']:,} | {row['averaged_best']:.2f} | {row['averaged_mean']:.2f} | "
                     f"{row['voted']:.2f} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
